// The compile log a planner and a fixer see: the kernel's own diagnostics.

#include "eval/compiler.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace accelopt::eval {
namespace {

// As g++ 12 writes it for an AVX-512 kernel (-O3 -march=native -Wall).
const char* kLog =
    "kernel.cpp: In function 'void kernel(const float*, float*)':\n"
    "kernel.cpp:8:7: warning: unused variable 'unused' [-Wunused-variable]\n"
    "    8 |   int unused;\n"
    "      |       ^~~~~~\n"
    "In file included from /usr/lib/gcc/x86_64-linux-gnu/12/include/immintrin.h:49,\n"
    "                 from kernel.cpp:1:\n"
    "In function '__m512 _mm512_mask_loadu_ps(__m512, __mmask16, const void*)',\n"
    "    inlined from 'void kernel(const float*, float*)' at kernel.cpp:5:36:\n"
    "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h:6340:10: warning: '__Y' is used uninitialized "
    "[-Wuninitialized]\n"
    " 6340 |   return (__m512) __builtin_ia32_loadups512_mask ((const float *) __P,\n"
    "      |          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
    "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h: In function 'void kernel(const float*, float*)':\n"
    "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h:188:10: note: '__Y' was declared here\n"
    "  188 |   __m512 __Y = __Y;\n"
    "      |          ^~~\n"
    "kernel.cpp:9:3: error: 'y' was not declared in this scope\n"
    "    9 |   y = 1;\n"
    "      |   ^\n"
    "/usr/bin/ld: cannot find -lnosuch: No such file or directory\n"
    "collect2: error: ld returned 1 exit status\n";

TEST(KeepOwnDiagnostics, DropsSystemHeaderWarningsKeepsTheKernelsAndTheLinkers) {
  std::string kept = KeepOwnDiagnostics(kLog);
  EXPECT_NE(kept.find("kernel.cpp:8:7: warning: unused variable"), std::string::npos) << kept;
  EXPECT_NE(kept.find("    8 |   int unused;"), std::string::npos) << kept;
  EXPECT_NE(kept.find("kernel.cpp:9:3: error: 'y' was not declared"), std::string::npos) << kept;
  EXPECT_NE(kept.find("/usr/bin/ld: cannot find -lnosuch"), std::string::npos) << kept;
  EXPECT_NE(kept.find("collect2: error"), std::string::npos) << kept;
  EXPECT_EQ(kept.find("avx512fintrin.h"), std::string::npos) << kept;
  EXPECT_EQ(kept.find("In file included from"), std::string::npos) << kept;
  EXPECT_EQ(kept.find("inlined from"), std::string::npos) << kept;
  EXPECT_NE(kept.find("[1 warning located in system headers left out]"), std::string::npos) << kept;
}

// As gcc 12 writes -Wmaybe-uninitialized from the AVX-512 headers: header
// lines past 9999 have no leading space, and the note naming the variable
// follows an "In function" line. None of it is the kernel's.
TEST(KeepOwnDiagnostics, LongHeaderExcerptsAndTheirNotesGoWithTheirWarning) {
  const std::string header = "/usr/lib/gcc/x86_64-linux-gnu/12/include/avx512fintrin.h";
  std::string log =
      "In file included from /usr/lib/gcc/x86_64-linux-gnu/12/include/immintrin.h:49,\n"
      "                 from kernel.cpp:1:\n"
      "In function '__m512 _mm512_max_ps(__m512, __m512)',\n"
      "    inlined from 'void kernel(const float*, float*)' at kernel.cpp:20:30:\n" +
      header +
      ":13033:10: warning: '__Y' may be used uninitialized [-Wmaybe-uninitialized]\n"
      "13033 |   return (__m512) __builtin_ia32_maxps512_mask ((__v16sf) __A,\n"
      "      |          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n" +
      header + ": In function 'void kernel(const float*, float*)':\n" + header +
      ":188:10: note: '__Y' was declared here\n"
      "  188 |   __m512 __Y = __Y;\n"
      "      |          ^~~\n"
      "kernel.cpp:7:7: warning: unused variable 'k' [-Wunused-variable]\n"
      "    7 |   int k;\n"
      "      |       ^\n";
  std::string kept = KeepOwnDiagnostics(log);
  EXPECT_EQ(kept,
            "kernel.cpp:7:7: warning: unused variable 'k' [-Wunused-variable]\n"
            "    7 |   int k;\n"
            "      |       ^\n"
            "[1 warning located in system headers left out]\n");
}

TEST(KeepOwnDiagnostics, ErrorsInHeadersAreKept) {
  std::string log =
      "In file included from kernel.cpp:1:\n"
      "/usr/include/c++/12/vector:10:3: error: static assertion failed\n"
      "   10 |   static_assert(false);\n";
  EXPECT_EQ(KeepOwnDiagnostics(log), log);
}

// A diagnostic located in a file that is not the kernel's (one it should
// not have read) is left out whole, with the lines it quotes.
TEST(KeepOwnDiagnostics, DiagnosticsAboutOtherFilesAreLeftOutWithTheirLines) {
  const std::string log =
      "In file included from kernel.cpp:2:\n"
      "/etc/passwd:1:5: error: found ':' in nested-name-specifier, expected '::'\n"
      "    1 | root:x:0:0:root:/root:/bin/bash\n"
      "      |     ^\n"
      "/etc/passwd:1:1: note: 'root' does not name a type\n"
      "/usr/include/../../etc/shadow:1:1: error: 'secret' does not name a type\n"
      "    1 | secret\n"
      "kernel.cpp:3:1: error: expected declaration\n";
  const std::string kept = KeepOwnDiagnostics(log);
  EXPECT_EQ(kept.find("root"), std::string::npos) << kept;
  EXPECT_EQ(kept.find("secret"), std::string::npos) << kept;
  EXPECT_NE(kept.find("kernel.cpp:3:1: error: expected declaration"), std::string::npos) << kept;
  EXPECT_NE(kept.find("[2 diagnostics located in files other than the kernel's left out]"), std::string::npos) << kept;
}

// End to end with the compiler: a kernel that would read a file at compile
// time is refused, and nothing of the file reaches the log. The assembler's
// .incbin spelled so that no look at the source finds it (an escape, through
// a macro) is found in the compiler's assembly output, before it is assembled.
TEST(CompileKernel, AKernelThatWouldReadAFileIsRefusedNotCompiled) {
  testing::TempDir dir;
  const std::string secret = dir.path() + "/secret.txt";
  { std::ofstream(secret) << "the-secret-line\n"; }
  CompileOptions options;
  options.flags = {"-O1", "-std=c++20"};
  options.vectorization_report = false;
  const std::string kernel = "extern \"C\" void kernel(const float* x, float* out) { out[0] = x[0]; }\n";
  for (const std::string& source :
       {"#include \"" + secret + "\"\n" + kernel, "#define F \"" + secret + "\"\n#include F\n" + kernel,
        "#define DIRECTIVE \".\\x69ncbin \"\nasm(\".section .rodata\\n\" DIRECTIVE \"\\\"" + secret +
            "\\\"\\n.text\");\n" + kernel}) {
    auto built = CompileKernel(source, "#pragma once\n", options, dir.path());
    ASSERT_TRUE(built.ok()) << built.error().message;
    EXPECT_FALSE(built->ok) << source;
    EXPECT_NE(built->refused, "") << source << "\n" << built->log;
    EXPECT_EQ(built->log.find("the-secret-line"), std::string::npos) << built->log;
    EXPECT_NE(built->log.find("refused before compiling"), std::string::npos) << built->log;
  }
  // The same kernel without them builds, in two steps (assembly, then the library).
  auto built = CompileKernel("#include <cmath>\n" + kernel, "#pragma once\n", options, dir.path());
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_TRUE(built->ok) << built->log;
  EXPECT_EQ(built->refused, "");
}

// As gcc 12 writes -fopt-info-vec-all: the kernel's missed loops, each once
// with its reason; the noise (another file, "couldn't vectorize loop",
// clobbered statements, what was vectorized) left out.
TEST(NotVectorizedRemarks, TheKernelsOwnLoopsOnceEachWithTheReason) {
  const std::string remarks =
      "kernel.cpp:28:19: missed: couldn't vectorize loop\n"
      "kernel.cpp:28:19: missed: not vectorized: vectorization is not profitable.\n"
      "kernel.cpp:28:19: missed: not vectorized: vectorization is not profitable.\n"
      "kernel.cpp:26:9: missed: statement clobbers memory: __builtin_GOMP_parallel (kernel._omp_fn.0, 0, 0);\n"
      "kernel.cpp:10:21: missed: not vectorized: control flow in loop.\n"
      "kernel.cpp:44:5: optimized: loop vectorized using 64 byte vectors\n"
      "/usr/include/c++/12/cmath:47:3: missed: not vectorized: control flow in loop.\n";
  EXPECT_EQ(NotVectorizedRemarks(remarks),
            "kernel.cpp:28: vectorization is not profitable.\nkernel.cpp:10: control flow in loop.\n");
  EXPECT_EQ(NotVectorizedRemarks(remarks, 1), "kernel.cpp:28: vectorization is not profitable.\n[1 more]\n");
}

TEST(NameSourceInLog, NamesTheRealFile) {
  EXPECT_EQ(NameSourceInLog("kernel.cpp:2:3: error: x\nkernel.cpp: In function\n", "suite/silu/reference.cpp"),
            "suite/silu/reference.cpp:2:3: error: x\nsuite/silu/reference.cpp: In function\n");
}

}  // namespace
}  // namespace accelopt::eval
