#pragma once
/// service: a worker owns one device and completes the queue's jobs on it
/// (`accelopt worker`; FlashInfer-Bench's one persistent worker per GPU).

#include <atomic>
#include <functional>
#include <string>

#include "service/evaluator.h"
#include "service/job_queue.h"

namespace accelopt::service {

struct WorkerOptions {
  WorkerInfo info;                ///< its name, the device it owns, the machine class it serves
  double heartbeat_seconds = 5;   ///< renews its lease this often while it measures (well inside the lease)
  double poll_seconds = 0.05;     ///< waits this long before asking again when the queue had nothing
  double idle_exit_seconds = 0;   ///< stops after this long without a job; 0: never
  int max_jobs = 0;               ///< stops after this many jobs; 0: no limit
  LocalEvaluatorOptions local;    ///< how it measures (its device is info.device)
  std::function<void(const std::string&)> say;  ///< one line per job, for its log
};

/// What a worker did.
struct WorkerSummary {
  int completed = 0;  ///< jobs whose outcome it recorded
  int failed = 0;     ///< jobs it could not measure (reported to the queue)
  int lost = 0;       ///< jobs whose lease lapsed before it reported (another worker has them)
};

/// Claims jobs for `options.info` and measures each under its device's lock,
/// renewing the lease meanwhile, until `stop` is set, it has been idle for
/// idle_exit_seconds, or it did max_jobs. Blocks. An Error when the queue
/// itself fails (the store cannot be read or written).
Result<WorkerSummary> RunWorker(JobQueue& queue, const WorkerOptions& options, const std::atomic<bool>& stop);

}  // namespace accelopt::service
