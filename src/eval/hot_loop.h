#pragma once
/// eval: the assembly of a built kernel's hottest loop, for the agents: what
/// the compiler made of the loop that matters (its vector width, its loads
/// and FMAs, its spills), which neither the source nor the vectorizer's
/// remarks show. Without hardware counters "hottest" is judged from the code:
/// the innermost loop with the widest and most vector work.

#include <string>

namespace accelopt::eval {

/// From `objdump -d --no-show-raw-insn` output: the chosen loop as
/// "in <function>, a loop of N instructions at +0x30..+0x49:" followed by its
/// instructions, at most `max_lines` of them; "" when the text has no loop.
/// Innermost loops only (a backward jump with no other loop inside its
/// range); ranked by vector work (zmm 4, ymm 2, packed xmm 1 per
/// instruction), then scalar floating point instructions, then length.
std::string HotLoopFromDisassembly(const std::string& objdump, size_t max_lines = 48);

/// Disassembles `library` (objdump, at most 10 s and 4 MiB of output) and
/// picks its hottest loop; "" when objdump is missing or the code has no loop.
std::string HotLoop(const std::string& library, size_t max_lines = 48);

}  // namespace accelopt::eval
