// A kernel reads no file at compile time but system headers: every form of
// naming another file is refused before the compiler runs, with its line.

#include "eval/includes.h"

#include <gtest/gtest.h>

namespace accelopt::eval {
namespace {

std::string Refusal(const std::string& source) {
  auto why = ForbiddenFileAccess(source);
  return why ? *why : "";
}

TEST(ForbiddenFileAccess, EveryFormOfIncludingAnotherFileIsRefused) {
  const char* forms[] = {
      "#include \"/etc/passwd\"\n",
      "#include \"helpers.h\"\n",
      "#include </etc/passwd>\n",
      "#include <../../etc/passwd>\n",
      "#include <bits/../../../../etc/passwd>\n",
      "#define F \"/etc/passwd\"\n#include F\n",            // through a macro
      "#define F(x) #x\n#include F(/etc/passwd)\n",          // a macro that makes the string
      "  #  /* spaced */  include \"/etc/passwd\"\n",        // blanks and a comment inside
      "%:include \"/etc/passwd\"\n",                          // the digraph of '#'
      "#inc\\\nlude \"/etc/passwd\"\n",                       // a line joined by a backslash
      "#include_next \"/etc/passwd\"\n",
      "#import \"/etc/passwd\"\n",
      "#embed \"/etc/passwd\"\n",
      "#embed </etc/passwd>\n",
  };
  for (const char* source : forms) {
    const std::string why = Refusal(std::string("#include <immintrin.h>\n") + source);
    EXPECT_EQ(why.rfind("line ", 0), 0u) << source << " -> " << why;  // the line of the directive
    EXPECT_NE(why.find(": #"), std::string::npos) << source << " -> " << why;
    EXPECT_NE(why.find("only system headers"), std::string::npos) << why;
  }
}

TEST(ForbiddenFileAccess, AskingWhetherAFileExistsIsRefused) {
  for (const char* source : {"#if __has_include(\"/etc/passwd\")\n#endif\n", "#if __has_include(</etc/shadow>)\n#endif\n",
                             "#if __has_include_next(<../x.h>)\n#endif\n", "#if __has_embed(\"/etc/passwd\")\n#endif\n"}) {
    const std::string why = Refusal(source);
    EXPECT_NE(why.find("line 1: __has_"), std::string::npos) << source << " -> " << why;
  }
}

TEST(ForbiddenFileAccess, TheAssemblersFileDirectivesAreRefused) {
  for (const char* source : {"asm(\".incbin \\\"/etc/passwd\\\"\");\n", "__asm__(\".section .rodata\\n.INCLUDE \\\"/etc/passwd\\\"\");\n"}) {
    const std::string why = Refusal(std::string("\n") + source);
    EXPECT_NE(why.find("line 2: the assembler's ."), std::string::npos) << source << " -> " << why;
  }
}

// A raw string is one token: a comment opener in it opens nothing (so the
// directive after it is seen), and a directive-like line in it is text.
TEST(ForbiddenFileAccess, RawStringsAreReadAsTheCompilerReadsThem) {
  EXPECT_NE(Refusal("const char* s = R\"x(\"/*)x\";\n#include \"/etc/passwd\"\n// */\n"), "");
  EXPECT_EQ(Refusal("const char* s = R\"(\n#include \"/etc/passwd\"\n)\";\n#include <cmath>\n"), "");
  // FOOR"..." is a name and a plain literal, not a raw string.
  EXPECT_NE(Refusal("#define FOOR\nconst char* s = FOOR\"(\";\n#include \"/etc/passwd\"\n// )\"\n"), "");
}

TEST(ForbiddenFileAccess, SystemHeadersCommentsAndStringsPass) {
  EXPECT_EQ(Refusal("#include <immintrin.h>\n#include <omp.h>\n# include <c++/12/vector>  // fine\n"
                    "#if __has_include(<cblas.h>)\n#endif\n#if defined(__has_include)\n#endif\n#ifdef __has_include\n#endif\n"
                    "// #include \"/etc/passwd\" in a comment\n/* #include \"x.h\"\n#embed \"y\" */\n"
                    "const char* s = \"#include \\\"/etc/passwd\\\"\";\n"
                    "extern \"C\" void kernel(const float* x, float* out) { out[0] = x[0]; }\n"),
            "");
}

}  // namespace
}  // namespace accelopt::eval
