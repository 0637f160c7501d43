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

/// Moves a finished build folder `dir` to its place `cached` in a build cache,
/// by one rename: a concurrent builder of the same key may have won the race,
/// and then its folder (which holds `file`) is used and `dir` removed. The
/// folder's new path; an Error naming `cached` when neither is there.
Result<std::filesystem::path> PublishBuild(const std::filesystem::path& dir, const std::filesystem::path& cached,
                                           const std::string& file);

}  // namespace accelopt
