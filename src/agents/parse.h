#pragma once
/// agents: the LLM roles (planner, executor, fixer, summarizer): prompt
/// rendering and answer parsing. This header: reading answers.

#include <optional>
#include <string>
#include <vector>

#include "core/lesson.h"
#include "core/plan.h"

namespace accelopt::agents {

/// The code-block tags of a C++ kernel: cpp, c++, cc, cxx, c.
const std::vector<std::string>& CppFenceTags();

/// The block ExtractKernel took, and a note saying which of several it was
/// and why ("" when the answer held one block), for the caller to log.
struct ExtractedCode {
  std::string code;
  std::string note;
};

/// The kernel in an answer. Among complete fenced code blocks, the last one
/// that defines `entry_point` (a C/C++/CUDA function definition, or a Python
/// `def`), those tagged with one of `tags` first (compared in lower case); a
/// usage example that only calls it, a declaration, a shell session or output
/// is passed over. When no block defines it: the last tagged block, else the
/// largest. nullopt when the answer has no complete block.
std::optional<ExtractedCode> ExtractKernel(const std::string& answer, const std::vector<std::string>& tags,
                                           const std::string& entry_point);
/// ExtractKernel's code for a C++ kernel whose entry point is `kernel`.
std::optional<std::string> ExtractCode(const std::string& answer,
                                       const std::vector<std::string>& tags = CppFenceTags());

/// nullopt for an empty answer.
std::optional<Plan> ParsePlan(const std::string& answer);
/// Every plan of an answer asked for several: each starts at a line whose
/// text, markdown list marks and emphasis aside, begins with `PLAN:` and runs
/// to the next. An answer without such a line is one plan (ParsePlan); an
/// empty one is none.
std::vector<Plan> ParsePlans(const std::string& answer);

/// The kinds of transformation a lesson is tagged with (its `STRATEGY:` line).
const std::vector<std::string>& Strategies();

/// The lesson a summarizer's answer states: its title (inside the first
/// **...**), its text (the whole answer without its STRATEGY: line) and the
/// strategies it names (tags.strategies; {"other"} when it names none of
/// Strategies()). nullopt for "no optimization found" or an answer without a
/// bold title. The caller tags it with the kernels it is about and the measured speedup.
std::optional<Lesson> ParseLesson(const std::string& answer);

/// Whether `language` ("c++", "python", ...) is written free-form with C
/// comments, so that comments and blank space never change what code does.
bool FoldsCommentsAndSpace(const std::string& language);
/// Code with what cannot change its meaning folded, so trivially different
/// copies hash alike: for C, C++ and CUDA, comments and runs of blank space
/// (string and character literals kept as they are); for any other language
/// (Python's indentation is meaning), only line endings.
std::string NormalizeCode(const std::string& code, const std::string& language);
/// Hex hash of the normalized code.
std::string CodeHash(const std::string& code, const std::string& language);

}  // namespace accelopt::agents
