#pragma once
/// memory: the optimization memory, a bounded queue of lessons fed back to the
/// planner (DESIGN.md section 2). Persistence is the store's job; this is the
/// curation policy.

#include <cstdint>
#include <string>
#include <vector>

namespace accelopt::memory {

struct MemoryLesson {
  int64_t id = 0;  ///< the store's id, 0 until stored
  std::string task;
  double speedup = 0;  ///< fast/slow; below 1 for a negative lesson
  std::string title;
  std::string text;
};

class OptimizationMemory {
 public:
  /// `initial` newest first; only the first `capacity` are kept.
  OptimizationMemory(size_t capacity, std::vector<MemoryLesson> initial);

  /// The newest lessons first, then the previous memory's, capped at capacity.
  void Update(const std::vector<MemoryLesson>& newest);

  const std::vector<MemoryLesson>& lessons() const { return lessons_; }
  size_t capacity() const { return capacity_; }

  /// The lessons as the planner reads them; "" when empty.
  std::string Render() const;

 private:
  size_t capacity_;
  std::vector<MemoryLesson> lessons_;
};

}  // namespace accelopt::memory
