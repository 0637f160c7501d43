#include "service/worker.h"

#include <fmt/core.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace accelopt::service {
namespace {

using Clock = std::chrono::steady_clock;

// Renews a claim's lease every `every` seconds on its own thread until destroyed.
class LeaseKeeper {
 public:
  LeaseKeeper(JobQueue& queue, const ClaimedJob& claimed, const WorkerInfo& worker, double every)
      : thread_([&, every] {
          std::unique_lock lock(mu_);
          while (!done_) {
            if (cv_.wait_for(lock, std::chrono::duration<double>(every), [&] { return done_; })) break;
            lock.unlock();
            Status s = queue.Heartbeat(claimed, worker);
            lock.lock();
            if (!s) lost_ = s.error().message;
          }
        }) {}
  ~LeaseKeeper() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  std::string lost() {
    std::lock_guard lock(mu_);
    return lost_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string lost_;
  std::thread thread_;  // last: started when the rest exists
};

}  // namespace

Result<WorkerSummary> RunWorker(JobQueue& queue, const WorkerOptions& options, const std::atomic<bool>& stop) {
  auto say = [&](const std::string& text) {
    if (options.say) options.say(text);
  };
  LocalEvaluatorOptions local = options.local;
  local.device = options.info.device;
  local.worker = options.info.name;
  auto evaluator = MakeLocalEvaluator(std::move(local));
  WorkerSummary summary;
  auto idle_since = Clock::now();
  while (!stop) {
    if (options.max_jobs > 0 && summary.completed + summary.failed + summary.lost >= options.max_jobs) break;
    auto claimed = queue.Claim(options.info);
    if (!claimed) return claimed.error();
    if (!*claimed) {
      if (options.idle_exit_seconds > 0 &&
          std::chrono::duration<double>(Clock::now() - idle_since).count() >= options.idle_exit_seconds)
        break;
      std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_seconds));
      continue;
    }
    const ClaimedJob& job = **claimed;
    say(fmt::format("job {} attempt {}: {}", job.id, job.attempt, job.job.Key()));
    Result<EvalOutcome> outcome = Error{"not measured"};
    std::string lost;
    {
      LeaseKeeper lease(queue, job, options.info, options.heartbeat_seconds);
      outcome = std::move(evaluator->Submit({job.job}).front().get());
      lost = lease.lost();
    }
    Status reported = Ok{};
    if (outcome) {
      reported = queue.Complete(job, options.info, *outcome);
      if (reported) ++summary.completed;
    } else {
      // The engine's failure, never the kernel's verdict: another attempt, maybe on another worker, may succeed.
      reported = queue.Fail(job, options.info, {outcome.error().message, /*retryable=*/true});
      if (reported) ++summary.failed;
      say(fmt::format("job {}: could not measure: {}", job.id, outcome.error().message));
    }
    if (!reported) {
      ++summary.lost;
      say(fmt::format("job {}: not recorded: {}{}", job.id, reported.error().message, lost.empty() ? "" : " (" + lost + ")"));
    } else {
      say(fmt::format("job {}: {}", job.id, outcome ? "done" : "failed"));
    }
    idle_since = Clock::now();
  }
  return summary;
}

}  // namespace accelopt::service
