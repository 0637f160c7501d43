#include "eval/hot_loop.h"

#include <re2/re2.h>
#include <stdio.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <vector>

namespace accelopt::eval {
namespace {

struct Instruction {
  uint64_t address = 0;
  std::string text;  // mnemonic and operands
};

struct Function {
  std::string name;
  uint64_t start = 0;
  std::vector<Instruction> code;
};

struct Loop {
  const Function* function = nullptr;
  size_t first = 0, last = 0;  // indices into function->code, inclusive
  int vector_work = 0, scalar_fp = 0;
};

std::vector<Function> Parse(const std::string& objdump) {
  static const RE2 kFunction("^([0-9a-f]+) <([^>]+)>:$");
  static const RE2 kInstruction("^ +([0-9a-f]+):\\t(.*)$");
  std::vector<Function> out;
  std::istringstream in(objdump);
  for (std::string line; std::getline(in, line);) {
    std::string address, rest;
    if (RE2::FullMatch(line, kFunction, &address, &rest)) {
      out.push_back({rest, std::stoull(address, nullptr, 16), {}});
    } else if (!out.empty() && RE2::FullMatch(line, kInstruction, &address, &rest)) {
      // Comments ("# 2000 <_fini+0xe84>") say nothing about the loop.
      if (size_t hash = rest.find(" #"); hash != std::string::npos) rest.erase(hash);
      while (!rest.empty() && rest.back() == ' ') rest.pop_back();
      out.back().code.push_back({std::stoull(address, nullptr, 16), rest});
    }
  }
  return out;
}

// The target of a jump ("jne    1130 <kernel+0x30>"), when the instruction is one.
bool JumpTarget(const std::string& text, uint64_t* target) {
  static const RE2 kJump("^j[a-z]+ +([0-9a-f]+) <");
  std::string hex;
  if (!RE2::PartialMatch(text, kJump, &hex)) return false;
  *target = std::stoull(hex, nullptr, 16);
  return true;
}

int VectorWork(const std::string& text) {
  if (text.find("%zmm") != std::string::npos) return 4;
  if (text.find("%ymm") != std::string::npos) return 2;
  if (text.find("%xmm") != std::string::npos) {
    static const RE2 kScalar("(ss|sd|si2ss|si2sd)\\b");
    return RE2::PartialMatch(text.substr(0, text.find(' ')), kScalar) ? 0 : 1;
  }
  return 0;
}

bool ScalarFloatingPoint(const std::string& text) {
  const std::string mnemonic = text.substr(0, text.find(' '));
  return (mnemonic.size() > 2 && (mnemonic.ends_with("ss") || mnemonic.ends_with("sd"))) || mnemonic[0] == 'f';
}

std::string Hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string HotLoopFromDisassembly(const std::string& objdump, size_t max_lines) {
  const std::vector<Function> functions = Parse(objdump);
  std::vector<Loop> loops;
  for (const Function& f : functions) {
    for (size_t j = 0; j < f.code.size(); ++j) {
      uint64_t target = 0;
      if (!JumpTarget(f.code[j].text, &target) || target > f.code[j].address) continue;
      auto first = std::find_if(f.code.begin(), f.code.end(), [&](const Instruction& i) { return i.address == target; });
      if (first == f.code.end()) continue;
      loops.push_back({&f, static_cast<size_t>(first - f.code.begin()), j});
    }
  }
  // Innermost: no other loop lies wholly inside.
  std::vector<Loop> innermost;
  for (const Loop& l : loops) {
    bool inner = true;
    for (const Loop& o : loops)
      if (&o != &l && o.function == l.function && o.first >= l.first && o.last <= l.last &&
          (o.first != l.first || o.last != l.last))
        inner = false;
    if (!inner) continue;
    Loop scored = l;
    for (size_t i = l.first; i <= l.last; ++i) {
      scored.vector_work += VectorWork(l.function->code[i].text);
      scored.scalar_fp += ScalarFloatingPoint(l.function->code[i].text);
    }
    innermost.push_back(scored);
  }
  if (innermost.empty()) return "";
  const Loop& best = *std::max_element(innermost.begin(), innermost.end(), [](const Loop& a, const Loop& b) {
    if (a.vector_work != b.vector_work) return a.vector_work < b.vector_work;
    if (a.scalar_fp != b.scalar_fp) return a.scalar_fp < b.scalar_fp;
    return a.last - a.first < b.last - b.first;
  });
  const Function& f = *best.function;
  const size_t count = best.last - best.first + 1;
  std::string out = "in " + f.name + ", a loop of " + std::to_string(count) + " instructions at +" +
                    Hex(f.code[best.first].address - f.start) + "..+" + Hex(f.code[best.last].address - f.start) +
                    ":\n";
  for (size_t i = best.first, shown = 0; i <= best.last; ++i, ++shown) {
    if (shown == max_lines) {
      out += "  ... " + std::to_string(best.last - i + 1) + " more\n";
      break;
    }
    out += "  +" + Hex(f.code[i].address - f.start) + "  " + f.code[i].text + "\n";
  }
  return out;
}

std::string HotLoop(const std::string& library, size_t max_lines) {
  // The library was built from untrusted source: objdump only reads it, with a time limit.
  const std::string command = "timeout 10 objdump -d --no-show-raw-insn -C '" + library + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "";
  std::string text;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;)
    if (text.size() < (4u << 20)) text.append(buf, n);
  pclose(pipe);
  return HotLoopFromDisassembly(text, max_lines);
}

}  // namespace accelopt::eval
