#pragma once
/// Scratch folders that never outlive their process for long: removed when
/// dropped, removed by the interrupt handler (RemoveLiveScratchDirs), and,
/// when the process was killed outright, swept by the next one
/// (SweepStaleScratchDirs).
///
/// Each folder holds a lock file (`.owner`) that its process keeps locked
/// (flock) while it lives: a folder whose lock can be taken belongs to no one.

#include <filesystem>
#include <memory>
#include <string>

#include "core/result.h"

namespace accelopt {

class ScratchDir {
 public:
  /// A fresh folder under `parent` named `<pid>.<n>.<random>-<label>`.
  static Result<std::unique_ptr<ScratchDir>> Create(const std::filesystem::path& parent, const std::string& label,
                                                    bool keep);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  ScratchDir(std::filesystem::path path, int lock_fd, bool keep);
  std::filesystem::path path_;
  int lock_fd_;
  bool keep_;
};

/// Removes every scratch folder of this process that is not to be kept.
/// Async-signal-unsafe: call it from a thread, not from a signal handler.
void RemoveLiveScratchDirs();

/// Removes the folders under `parent` whose process is gone. Returns how many.
int SweepStaleScratchDirs(const std::filesystem::path& parent);

}  // namespace accelopt
