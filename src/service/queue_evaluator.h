#pragma once
/// service: the evaluator that speaks to workers through the job queue.

#include <functional>
#include <memory>
#include <string>

#include "service/evaluator.h"
#include "service/job_queue.h"

namespace accelopt::service {

struct QueueEvaluatorOptions {
  double poll_seconds = 0.02;           ///< how often the queue is asked about pending jobs
  double alive_within_seconds = 30;     ///< a worker seen this recently is alive
  double notice_every_seconds = 30;     ///< say what it waits for when nothing finished for this long
  std::string worker_hint = "--db accelopt.db";  ///< the arguments a worker needs, shown when none is alive
  std::function<void(const std::string&)> say;   ///< progress for the user
};

/// Enqueues each submitted job (a job the queue holds already is not queued
/// again) and fulfils its future when a worker completes it, or with an Error
/// when it failed. `queue` must outlive the evaluator.
std::unique_ptr<Evaluator> MakeQueueEvaluator(JobQueue& queue, QueueEvaluatorOptions options);

}  // namespace accelopt::service
