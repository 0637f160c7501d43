#include "memory/memory.h"

#include <cstdio>

namespace accelopt::memory {

OptimizationMemory::OptimizationMemory(size_t capacity, std::vector<MemoryLesson> initial)
    : capacity_(capacity), lessons_(std::move(initial)) {
  if (lessons_.size() > capacity_) lessons_.resize(capacity_);
}

void OptimizationMemory::Update(const std::vector<MemoryLesson>& newest) {
  std::vector<MemoryLesson> next;
  for (const auto& l : newest)
    if (next.size() < capacity_) next.push_back(l);
  for (const auto& l : lessons_)
    if (next.size() < capacity_) next.push_back(l);
  lessons_ = std::move(next);
}

std::string OptimizationMemory::Render() const {
  std::string out;
  int n = 0;
  for (const auto& l : lessons_) {
    char head[96];
    std::snprintf(head, sizeof head, "Lesson %d (%s, %s):\n", ++n, l.task.c_str(),
                  l.speedup >= 1 ? "made a kernel faster" : "made a kernel slower: avoid");
    out += head + l.text + "\n\n";
  }
  return out;
}

}  // namespace accelopt::memory
