// The queue evaluator: jobs go into the queue, workers complete them, and a
// poller fulfils each job's future when the queue says it is done.

#include <fmt/core.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "service/queue_evaluator.h"

namespace accelopt::service {
namespace {

class QueueEvaluator : public Evaluator {
 public:
  QueueEvaluator(JobQueue& queue, QueueEvaluatorOptions options) : queue_(queue), options_(std::move(options)) {
    thread_ = std::thread([this] { Loop(); });
  }

  ~QueueEvaluator() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    for (auto& [id, promises] : pending_)
      for (auto& p : promises) p.set_value(Error{"stopped waiting for job " + std::to_string(id)});
  }

  std::vector<OutcomeFuture> Submit(std::vector<EvalJob> jobs) override {
    std::vector<OutcomeFuture> futures;
    for (const EvalJob& job : jobs) {
      std::promise<Result<EvalOutcome>> promise;
      futures.push_back(promise.get_future());
      auto id = queue_.Enqueue(job);
      if (!id) {
        promise.set_value(id.error());
        continue;
      }
      std::lock_guard lock(mu_);
      pending_[*id].push_back(std::move(promise));
      if (machine_class_.empty()) machine_class_ = job.machine_class;
    }
    cv_.notify_all();
    return futures;
  }

  std::string Waiting() const override {
    std::lock_guard lock(mu_);
    return waiting_;
  }

 private:
  void Loop() {
    auto last_change = std::chrono::steady_clock::now();
    auto last_notice = last_change;
    // The queue at a glance serves only Waiting() and the notice: asked once a
    // second, not on every poll for the pending jobs.
    auto last_counts = last_change - std::chrono::seconds(1);
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::duration<double>(options_.poll_seconds));
      if (stop_ || pending_.empty()) continue;
      std::vector<int64_t> ids;
      for (const auto& [id, promises] : pending_) ids.push_back(id);
      lock.unlock();
      auto statuses = queue_.Poll(ids);
      std::optional<Result<QueueCounts>> counts;
      if (std::chrono::steady_clock::now() - last_counts >= std::chrono::seconds(1)) {
        counts = queue_.Counts(options_.alive_within_seconds);
        last_counts = std::chrono::steady_clock::now();
      }
      lock.lock();
      if (!statuses) {
        FailAll(statuses.error());
        continue;
      }
      bool changed = false;
      for (const JobStatus& s : *statuses) {
        if (s.state != JobState::kDone && s.state != JobState::kFailed) continue;
        Result<EvalOutcome> result = Error{"job " + std::to_string(s.id) + " (" + s.key + ") failed: " + s.error};
        if (s.state == JobState::kDone) {
          auto outcome = EvalOutcome::FromJson(s.outcome);
          result = outcome ? std::move(outcome) : Result<EvalOutcome>(Error{"job " + std::to_string(s.id) + ": " +
                                                                            outcome.error().message});
        }
        for (auto& p : pending_[s.id]) p.set_value(result);
        pending_.erase(s.id);
        changed = true;
      }
      const auto now = std::chrono::steady_clock::now();
      if (changed) last_change = now;
      if (counts) waiting_ = *counts ? Describe(**counts) : "the queue: " + counts->error().message;
      const double quiet = std::chrono::duration<double>(now - last_change).count();
      if (!pending_.empty() && quiet >= options_.notice_every_seconds &&
          std::chrono::duration<double>(now - last_notice).count() >= options_.notice_every_seconds) {
        last_notice = now;
        if (options_.say) options_.say(fmt::format("waiting {:.0f} s for {}", quiet, waiting_));
      }
    }
  }

  // What the run waits for, in words; mu_ is held.
  std::string Describe(const QueueCounts& counts) const {
    std::string workers;
    for (const WorkerInfo& w : counts.live_workers)
      if (w.machine_class == machine_class_) workers += (workers.empty() ? "" : ", ") + w.name + " (" + w.device + ")";
    std::string text = fmt::format("workers: {} job(s) of this run in the queue ({} queued, {} running in all)",
                                   pending_.size(), counts.queued, counts.running);
    if (workers.empty())
      return text + "; no worker of machine class " + machine_class_ + " is alive: start one with `accelopt worker " +
             options_.worker_hint + "`";
    return text + " on " + workers;
  }

  void FailAll(const Error& e) {
    for (auto& [id, promises] : pending_)
      for (auto& p : promises) p.set_value(e);
    pending_.clear();
  }

  JobQueue& queue_;
  QueueEvaluatorOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, std::vector<std::promise<Result<EvalOutcome>>>> pending_;
  std::string machine_class_;
  std::string waiting_;
  bool stop_ = false;
  std::thread thread_;  // last: started when everything it uses exists
};

}  // namespace

std::unique_ptr<Evaluator> MakeQueueEvaluator(JobQueue& queue, QueueEvaluatorOptions options) {
  return std::make_unique<QueueEvaluator>(queue, std::move(options));
}

}  // namespace accelopt::service
