#pragma once
/// A run's live progress, kept in the store for `accelopt serve` while the run
/// goes: the task and iteration, the candidates evaluated, the best so far,
/// the elapsed time and an estimate of what is left, and what the run waits
/// for now (the model, in which role; the device's lock; the job queue's
/// workers; an evaluation).
///
/// The pieces of the run that wait say so (StoreModelPort around a model call,
/// StoreEvaluator around its jobs) and the search's listener (RunRecorder)
/// reports the counts; a thread of its own writes the document
/// (Store::PutRunProgress) when it changed, at most once per
/// `min_interval_s`, so a wait that began just after a write is still shown
/// within that interval. A write that fails is said once on stderr and never
/// stops the run.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json_io.h"
#include "store/store.h"

namespace accelopt::run {

struct LiveProgressOptions {
  double min_interval_s = 0.25;  ///< at most one write per this many seconds (a few a second)
  /// Where a failed write is told, once (default: a warning on stderr).
  std::function<void(const std::string&)> warn;
};

/// Thread-safe. Owns a writer thread from construction to destruction; the
/// destructor writes the last state (waiting for nothing) before it returns.
class LiveProgress {
 public:
  LiveProgress(store::Store& store, int64_t run_id, LiveProgressOptions options = {});
  ~LiveProgress();
  LiveProgress(const LiveProgress&) = delete;
  LiveProgress& operator=(const LiveProgress&) = delete;

  /// The task now searched, and how many iterations its search has.
  void StartTask(const std::string& task, int iterations);
  /// After each evaluated batch: `evaluated` of `total` candidates of
  /// `iteration`; best_percent is the best's % of peak (NaN: unscored);
  /// eta_s < 0: no estimate yet.
  void Report(int iteration, int evaluated, int total, double best_percent, double eta_s);
  /// The task's best as the run chose it at the end (its comparisons come
  /// after the last Report): its % of peak (NaN: unscored), no time left.
  void ReportBest(double best_percent);

  /// One wait, shown while it lives. `detail`, when set, is asked on the
  /// writer's thread what the wait is about now (an evaluator's Waiting():
  /// the device's holder, the queue); its answer, when not empty, replaces
  /// `what`. It must stay callable while the Wait lives.
  class Wait {
   public:
    Wait(Wait&& other) noexcept : owner_(other.owner_), id_(other.id_) { other.owner_ = nullptr; }
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;
    ~Wait();

   private:
    friend class LiveProgress;
    Wait(LiveProgress* owner, int64_t id) : owner_(owner), id_(id) {}
    LiveProgress* owner_;
    int64_t id_;
  };
  Wait Waiting(std::string what, std::function<std::string()> detail = {});

  /// The document as it would be written now.
  Json Snapshot();

 private:
  struct Waited {
    std::string what;
    std::function<std::string()> detail;
  };
  void EndWait(int64_t id);
  void WriterLoop();
  Json SnapshotLocked(std::chrono::steady_clock::time_point now);  // mu_ held
  void Write(const Json& document);

  store::Store& store_;
  const int64_t run_id_;
  const LiveProgressOptions options_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

  std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;
  uint64_t version_ = 1;  ///< bumped on every change
  std::string task_;
  int iterations_ = 0, iteration_ = 0, evaluated_ = 0, total_ = 0;
  double best_percent_ = -1;
  double eta_s_ = -1;
  std::chrono::steady_clock::time_point eta_at_;
  std::map<int64_t, Waited> waits_;
  int64_t next_wait_ = 1;
  bool warned_ = false;
  std::thread writer_;  // last: started when everything above is ready
};

}  // namespace accelopt::run
