#include "run/progress.h"

#include <fmt/core.h>

#include <cmath>
#include <utility>

namespace accelopt::run {
namespace {

// Written at least this often while nothing else changes, so that a reader
// sees the elapsed time move and can tell a live run from a dead one.
constexpr double kHeartbeatS = 5;

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

LiveProgress::LiveProgress(store::Store& store, int64_t run_id, LiveProgressOptions options)
    : store_(store), run_id_(run_id), options_(std::move(options)), writer_([this] { WriterLoop(); }) {}

LiveProgress::~LiveProgress() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  writer_.join();
}

void LiveProgress::StartTask(const std::string& task, int iterations) {
  {
    std::lock_guard lock(mu_);
    task_ = task;
    iterations_ = iterations;
    iteration_ = evaluated_ = total_ = 0;
    best_percent_ = -1;
    eta_s_ = -1;
    ++version_;
  }
  changed_.notify_all();
}

void LiveProgress::Report(int iteration, int evaluated, int total, double best_percent, double eta_s) {
  {
    std::lock_guard lock(mu_);
    iteration_ = iteration;
    evaluated_ = evaluated;
    total_ = total;
    best_percent_ = std::isfinite(best_percent) ? best_percent : -1;
    eta_s_ = eta_s;
    eta_at_ = std::chrono::steady_clock::now();
    ++version_;
  }
  changed_.notify_all();
}

void LiveProgress::ReportBest(double best_percent) {
  {
    std::lock_guard lock(mu_);
    best_percent_ = std::isfinite(best_percent) ? best_percent : -1;
    eta_s_ = 0;
    eta_at_ = std::chrono::steady_clock::now();
    ++version_;
  }
  changed_.notify_all();
}

LiveProgress::Wait LiveProgress::Waiting(std::string what, std::function<std::string()> detail) {
  int64_t id;
  {
    std::lock_guard lock(mu_);
    id = next_wait_++;
    waits_[id] = {std::move(what), std::move(detail)};
    ++version_;
  }
  changed_.notify_all();
  return Wait(this, id);
}

LiveProgress::Wait::~Wait() {
  if (owner_) owner_->EndWait(id_);
}

void LiveProgress::EndWait(int64_t id) {
  {
    std::lock_guard lock(mu_);
    waits_.erase(id);
    ++version_;
  }
  changed_.notify_all();
}

Json LiveProgress::Snapshot() {
  std::lock_guard lock(mu_);
  return SnapshotLocked(std::chrono::steady_clock::now());
}

// Several waits at once (agents asking the model in parallel) read as one
// line: each distinct thing once, with how many wait for it.
Json LiveProgress::SnapshotLocked(std::chrono::steady_clock::time_point now) {
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (const auto& [id, w] : waits_) {
    std::string text = w.detail ? w.detail() : "";
    if (text.empty()) text = w.what;
    if (counts[text]++ == 0) order.push_back(text);
  }
  std::string waiting;
  for (const std::string& text : order)
    waiting += (waiting.empty() ? "" : "; ") + text + (counts[text] > 1 ? fmt::format(" (x{})", counts[text]) : "");
  // The estimate counts down from when it was made; once run out it is no
  // estimate at all (null), never "0 s left" for work still going.
  Json eta = nullptr;
  if (const double left = eta_s_ - Seconds(now - eta_at_); eta_s_ >= 0 && left > 0) eta = left;
  return {{"task", task_},
          {"iteration", iteration_},
          {"iterations", iterations_},
          {"candidates_evaluated", evaluated_},
          {"candidates_total", total_},
          {"best_percent_of_peak", best_percent_ >= 0 ? Json(best_percent_) : Json(nullptr)},
          {"waiting_for", waiting},
          {"elapsed_s", Seconds(now - started_)},
          {"eta_s", eta},
          {"running", !stopping_}};
}

void LiveProgress::WriterLoop() {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(options_.min_interval_s));
  std::unique_lock lock(mu_);
  std::string last_text;  // what was written, less the clock's fields
  auto last_write = std::chrono::steady_clock::time_point{};
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (!stopping_ && now - last_write < interval) {
      // Changes coming in a burst are written together, once per interval.
      changed_.wait_for(lock, interval - (now - last_write), [&] { return stopping_; });
      continue;
    }
    const bool stopping = stopping_;
    Json document = SnapshotLocked(now);
    Json compared = document;
    compared.erase("elapsed_s");
    compared.erase("eta_s");
    std::string text = DumpJson(compared);
    if (stopping || text != last_text || Seconds(now - last_write) >= kHeartbeatS) {
      last_text = std::move(text);
      last_write = now;
      lock.unlock();  // a write may wait for the disk: the run's threads go on meanwhile
      Write(document);
      lock.lock();
    }
    if (stopping) return;
    // Waits whose detail changes without telling (the queue, the device's
    // holder) are polled at the same pace.
    const uint64_t seen = version_;
    changed_.wait_for(lock, interval, [&] { return stopping_ || version_ != seen; });
  }
}

void LiveProgress::Write(const Json& document) {
  Status s = store_.PutRunProgress(run_id_, document);
  if (s || warned_) return;
  warned_ = true;  // only the writer's thread reads and sets it
  const std::string message =
      "could not record the run's progress (the run goes on; `serve` shows it without): " + s.error().message;
  if (options_.warn)
    options_.warn(message);
  else
    fmt::print(stderr, "warning: {}\n", message);
}

}  // namespace accelopt::run
