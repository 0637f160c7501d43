#pragma once
/// code: a candidate of a code task as text. The files the agents may change
/// are one document, each file a `FILE: <path>` line and a fenced block; the
/// executor answers with whole files in the same form or with SEARCH/REPLACE
/// edits (docs/task-format.md, "Code tasks"), applied here to its parent's files.

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::code {

struct SourceFile {
  std::string path;  ///< relative to the code base's root, '/'-separated
  std::string text;
};

/// Whether `path` matches `glob`: `*` and `?` stay within one folder name,
/// `**` crosses folders (`src/**/*.cc` matches `src/a.cc` and `src/x/y/a.cc`).
bool GlobMatches(const std::string& glob, const std::string& path);
/// Whether any of `globs` matches `path`.
bool AnyGlobMatches(const std::vector<std::string>& globs, const std::string& path);

/// What is wrong with `path` as a file a candidate may change ("" when
/// nothing): not relative to the root, leaving it, or matching none of `globs`.
std::string PathProblem(const std::string& path, const std::vector<std::string>& globs);

/// The files as one document, sorted by path. Each block's fence is longer
/// than any run of backticks in its file, so any text survives the round trip.
std::string FormatFiles(std::vector<SourceFile> files);

/// The files of a document FormatFiles wrote. An Error when it holds none or
/// a block is not closed.
Result<std::vector<SourceFile>> ParseFiles(const std::string& document);

/// `document` with an answer's changes applied in order: `FILE: <path>` and a
/// fenced block replaces (or adds) the whole file; `EDIT: <path>` and
/// `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks replace text that
/// occurs exactly once in the file (trailing blanks aside). Every path must
/// match one of `globs`. An Error names what did not apply and why.
Result<std::string> ApplyAnswer(const std::string& answer, const std::string& document,
                                const std::vector<std::string>& globs);

/// The regular text files under `root` (not under .git; a file holding a NUL
/// byte is binary and left out) that match `globs`, sorted by path. An Error when none does, or they are too large for
/// a prompt.
Result<std::vector<SourceFile>> CollectFiles(const std::filesystem::path& root, const std::vector<std::string>& globs);

/// The most bytes the files of one candidate may come to (they are shown whole in prompts).
inline constexpr size_t kMaxDocumentBytes = 256 * 1024;

}  // namespace accelopt::code
