#include "targets/code/files.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/json_io.h"
#include "core/scratch.h"

namespace accelopt::code {
namespace {

const std::vector<std::string> kGlobs = {"src/*.cc", "include/**/*.h"};

std::string TwoFiles() {
  return FormatFiles({{"src/b.cc", "int b() {\n  return 2;\n}\n"}, {"src/a.cc", "int a() { return 1; }\n"}});
}

TEST(CodeFiles, GlobsStayWithinAFolderUnlessDoubleStarred) {
  EXPECT_TRUE(GlobMatches("src/*.cc", "src/a.cc"));
  EXPECT_FALSE(GlobMatches("src/*.cc", "src/x/a.cc"));
  EXPECT_FALSE(GlobMatches("src/*.cc", "src/a.cch"));
  EXPECT_TRUE(GlobMatches("src/**/*.cc", "src/a.cc"));
  EXPECT_TRUE(GlobMatches("src/**/*.cc", "src/x/y/a.cc"));
  EXPECT_TRUE(GlobMatches("**", "any/thing"));
  EXPECT_TRUE(GlobMatches("a?.py", "ab.py"));
  EXPECT_FALSE(GlobMatches("a?.py", "a/.py"));
  EXPECT_FALSE(GlobMatches("src/*.cc", "tests/a.cc"));
}

TEST(CodeFiles, ADocumentReadsBackSortedByPath) {
  auto files = ParseFiles(TwoFiles());
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "src/a.cc");
  EXPECT_EQ((*files)[1].text, "int b() {\n  return 2;\n}\n");
}

TEST(CodeFiles, AFileHoldingFencesSurvivesTheRoundTrip) {
  const std::string text = "# Notes\n```cpp\nint x;\n```\n````\nFILE: not/a/header\n";
  auto files = ParseFiles(FormatFiles({{"docs/notes.md", text}}));
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].text, text);
}

TEST(CodeFiles, SearchReplaceEditsApplyInOrder) {
  const std::string answer =
      "Make b cheaper.\n\nEDIT: src/b.cc\n```cpp\n<<<<<<< SEARCH\n  return 2;\n=======\n  return 3;\n>>>>>>> "
      "REPLACE\n<<<<<<< SEARCH\nint b() {\n=======\nint b() noexcept {\n>>>>>>> REPLACE\n```\n";
  auto applied = ApplyAnswer(answer, TwoFiles(), kGlobs);
  ASSERT_TRUE(applied) << applied.error().message;
  auto files = ParseFiles(*applied);
  ASSERT_TRUE(files);
  EXPECT_EQ((*files)[1].text, "int b() noexcept {\n  return 3;\n}\n");
  EXPECT_EQ((*files)[0].text, "int a() { return 1; }\n");  // untouched
}

TEST(CodeFiles, TrailingBlanksDoNotStopAnEdit) {
  const std::string answer =
      "EDIT: src/a.cc\n<<<<<<< SEARCH\nint a() { return 1; }   \n=======\nint a() { return 4; }\n>>>>>>> REPLACE\n";
  auto applied = ApplyAnswer(answer, TwoFiles(), kGlobs);
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_NE(applied->find("return 4;"), std::string::npos);
}

// An edit whose lines lost or changed their indentation still applies when
// it matches one place, and the replacement takes the file's indentation.
TEST(CodeFiles, AnEditIndentedDifferentlyStillApplies) {
  const std::string nested = FormatFiles({{"src/f.cc", "void f() {\n  if (x) {\n    y();\n  }\n}\n"}});
  // Shifted as a whole: the replacement is shifted back.
  auto shifted = ApplyAnswer(
      "EDIT: src/f.cc\n<<<<<<< SEARCH\nif (x) {\n  y();\n}\n=======\nif (x) {\n  y();\n  z();\n}\n>>>>>>> REPLACE\n",
      nested, kGlobs);
  ASSERT_TRUE(shifted) << shifted.error().message;
  EXPECT_EQ((*ParseFiles(*shifted))[0].text, "void f() {\n  if (x) {\n    y();\n    z();\n  }\n}\n");
  // Indented unevenly: it still applies, as written.
  auto uneven = ApplyAnswer(
      "EDIT: src/b.cc\n<<<<<<< SEARCH\nreturn 2;\n}\n=======\nint two = 2;\nreturn two;\n}\n>>>>>>> REPLACE\n",
      TwoFiles(), kGlobs);
  ASSERT_TRUE(uneven) << uneven.error().message;
  EXPECT_EQ((*ParseFiles(*uneven))[1].text, "int b() {\nint two = 2;\nreturn two;\n}\n");
}

TEST(CodeFiles, WholeFilesReplaceOrAdd) {
  const std::string answer =
      "### FILE: `src/c.cc`\n```cpp\nint c() { return 5; }\n```\nFILE: src/a.cc\n```\n// gone\n```\n";
  auto applied = ApplyAnswer(answer, TwoFiles(), kGlobs);
  ASSERT_TRUE(applied) << applied.error().message;
  auto files = ParseFiles(*applied);
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].text, "// gone\n");
  EXPECT_EQ((*files)[2].path, "src/c.cc");
}

// Without FILE:/EDIT: lines, a fenced block named by the line before it or by
// its info string is still read: whole files, or SEARCH/REPLACE edits.
TEST(CodeFiles, BlocksNamedAnotherWayAreReadToo) {
  auto before =
      ApplyAnswer("Here is the change.\n\n**`src/a.cc`**:\n```cpp\nint a() { return 7; }\n```\n", TwoFiles(), kGlobs);
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_NE(before->find("return 7;"), std::string::npos);
  auto info = ApplyAnswer("```cpp title=\"src/c.cc\"\nint c();\n```\n", TwoFiles(), kGlobs);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_NE(info->find("FILE: src/c.cc"), std::string::npos);
  auto edit = ApplyAnswer("src/b.cc\n```\n<<<<<<< SEARCH\n  return 2;\n=======\n  return 9;\n>>>>>>> REPLACE\n```\n",
                          TwoFiles(), kGlobs);
  ASSERT_TRUE(edit) << edit.error().message;
  EXPECT_NE(edit->find("return 9;"), std::string::npos);
  EXPECT_NE(edit->find("int b() {"), std::string::npos);  // an edit, not the whole file
  // A named block whose SEARCH block is not finished is an error, not a whole file holding the markers.
  auto unfinished = ApplyAnswer("src/b.cc\n```\n<<<<<<< SEARCH\n  return 2;\n```\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(unfinished);
  EXPECT_NE(unfinished.error().message.find("src/b.cc: a SEARCH block has no '=======' line"), std::string::npos)
      << unfinished.error().message;
  // A block named by nothing is not a change; a prose line is not a name.
  EXPECT_FALSE(ApplyAnswer("Use a table.\n```cpp\nint a;\n```\n", TwoFiles(), kGlobs));
  EXPECT_FALSE(ApplyAnswer("Edit it like this:\n```cpp\nint a;\n```\n", TwoFiles(), kGlobs));
}

TEST(CodeFiles, AnAnswerThatDoesNotApplySaysWhy) {
  auto missing =
      ApplyAnswer("EDIT: src/a.cc\n<<<<<<< SEARCH\nint z;\n=======\nint y;\n>>>>>>> REPLACE\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("is not in the file"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("src/a.cc"), std::string::npos);

  const std::string twice = FormatFiles({{"src/a.cc", "x;\nx;\n"}});
  auto ambiguous = ApplyAnswer("EDIT: src/a.cc\n<<<<<<< SEARCH\nx;\n=======\ny;\n>>>>>>> REPLACE\n", twice, kGlobs);
  ASSERT_FALSE(ambiguous);
  EXPECT_NE(ambiguous.error().message.find("occurs 2 times"), std::string::npos) << ambiguous.error().message;

  auto outside = ApplyAnswer("FILE: tests/a_test.cc\n```\nint main() {}\n```\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().message.find("not among the files the agents may change"), std::string::npos);

  auto escape = ApplyAnswer("FILE: src/../../etc/x.cc\n```\n\n```\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(escape);
  EXPECT_NE(escape.error().message.find("not a path relative"), std::string::npos);

  auto nothing = ApplyAnswer("I would use a hash map.", TwoFiles(), kGlobs);
  ASSERT_FALSE(nothing);
  EXPECT_NE(nothing.error().message.find("no change"), std::string::npos);

  auto unclosed = ApplyAnswer("FILE: src/a.cc\n```cpp\nint a;\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(unclosed);
  EXPECT_NE(unclosed.error().message.find("not closed"), std::string::npos);

  auto no_marker = ApplyAnswer("EDIT: src/a.cc\n<<<<<<< SEARCH\nint a;\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(no_marker);
  EXPECT_NE(no_marker.error().message.find("'======='"), std::string::npos);

  auto unknown = ApplyAnswer("EDIT: src/z.cc\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", TwoFiles(), kGlobs);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("no such file"), std::string::npos);
}

TEST(CodeFiles, CollectsTheMatchingFilesOfACodeBase) {
  auto dir = ScratchDir::Create(std::filesystem::temp_directory_path(), "files-test", false);
  ASSERT_TRUE(dir);
  const auto root = (*dir)->path();
  std::filesystem::create_directories(root / "src");
  std::filesystem::create_directories(root / "tests");
  std::filesystem::create_directories(root / ".git");
  ASSERT_TRUE(WriteFile((root / "src/a.cc").string(), "a\n"));
  ASSERT_TRUE(WriteFile((root / "tests/a_test.cc").string(), "t\n"));
  ASSERT_TRUE(WriteFile((root / ".git/src.cc").string(), "g\n"));
  auto files = CollectFiles(root, kGlobs);
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path, "src/a.cc");
  auto none = CollectFiles(root, {"lib/*.py"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no file"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::code
