// The job queue's own cost, measured on this machine (issue: evaluation as a
// service of jobs):
//   1. overhead per job: J jobs that take no time, submitted at once to the
//      queue and measured by one worker, against the same jobs run by a local
//      evaluator in this process, side by side in one run, alternating;
//   2. throughput with W = 1, 2, 4, 8, 16 workers, each owning a device of its
//      own, on a synthetic job of fixed duration that needs no core (a sleep):
//      the speedup over one worker's serial time, against the ideal W.
// Workers are threads of this process, each with its own connection to the
// queue's SQLite file, as worker processes have; the engine's side is the
// queue evaluator, as `accelopt optimize --workers` uses it.
//
//   build/queue_bench [--jobs J] [--seconds D] [--rounds R] [--json]

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "eval/machine_load.h"
#include "service/queue_evaluator.h"
#include "service/worker.h"
#include "testing/scoped_env.h"
#include "testing/sleep_target.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using Clock = std::chrono::steady_clock;

const std::string kScaleTask = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";

struct Bench {
  service::TaskSpec spec;
  testing::SleepTarget target;
  int serial = 0;  // makes every job's key new
};

std::vector<service::EvalJob> Jobs(Bench& b, int n, double seconds, const std::string& machine_class) {
  std::vector<service::EvalJob> jobs;
  for (int i = 0; i < n; ++i) {
    service::EvalJob job;
    job.task = b.spec;
    job.target = "sleep";
    job.machine_class = machine_class;
    const std::string source = fmt::format("sleep {}", seconds);
    job.sources = {{"candidate", source, fmt::format("job-{}", ++b.serial), {}}};
    jobs.push_back(std::move(job));
  }
  return jobs;
}

double Wait(std::vector<service::OutcomeFuture>& futures) {
  for (auto& f : futures) {
    auto outcome = f.get();
    if (!outcome) {
      fmt::print(stderr, "queue_bench: a job failed: {}\n", outcome.error().message);
      std::exit(1);
    }
  }
  return 0;
}

// Runs `jobs` through the queue in `db` with `workers` worker threads; wall seconds from submission to the last result.
double ThroughQueue(Bench& b, const std::string& db, int workers, std::vector<service::EvalJob> jobs) {
  const std::string machine_class = jobs.front().machine_class;
  service::SqliteQueueOptions qo;
  qo.path = db;
  auto engine_queue = service::OpenSqliteJobQueue(qo);
  if (!engine_queue) {
    fmt::print(stderr, "queue_bench: {}\n", engine_queue.error().message);
    std::exit(1);
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      auto queue = service::OpenSqliteJobQueue(qo);
      if (!queue) return;
      service::WorkerOptions options;
      options.info = {fmt::format("bench-worker-{}", w), fmt::format("bench-device-{}", w), machine_class};
      options.local.target = &b.target;
      auto summary = service::RunWorker(**queue, options, stop);
      if (!summary) fmt::print(stderr, "queue_bench: worker {}: {}\n", w, summary.error().message);
    });
  }
  service::QueueEvaluatorOptions eo;
  auto evaluator = service::MakeQueueEvaluator(**engine_queue, eo);
  const auto t0 = Clock::now();
  auto futures = evaluator->Submit(std::move(jobs));
  Wait(futures);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  stop = true;
  for (auto& t : threads) t.join();
  return seconds;
}

double Locally(Bench& b, std::vector<service::EvalJob> jobs) {
  service::LocalEvaluatorOptions options;
  options.target = &b.target;
  options.device = "bench-local-device";
  auto evaluator = service::MakeLocalEvaluator(options);
  const auto t0 = Clock::now();
  auto futures = evaluator->Submit(std::move(jobs));
  Wait(futures);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace
}  // namespace accelopt

int main(int argc, char** argv) {
  using namespace accelopt;
  int jobs = 200, rounds = 5;
  double seconds = 0.5;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) jobs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else {
      fmt::print(stderr, "usage: queue_bench [--jobs J] [--seconds D] [--rounds R] [--json]\n");
      return 2;
    }
  }
  testing::TempDir dir;
  testing::ScopedEnv locks("ACCELOPT_LOCK_DIR", dir.path());
  Bench b;
  auto task = suite::LoadTask(kScaleTask);
  auto spec = task ? service::TaskSpecOf(*task, "test") : Result<service::TaskSpec>(task.error());
  if (!spec) {
    fmt::print(stderr, "queue_bench: {}\n", spec.error().message);
    return 1;
  }
  b.spec = *spec;
  const eval::CpuSnapshot before = eval::TakeCpuSnapshot();

  // 1. Overhead per job: queue and local side by side, alternating, medians of the rounds.
  std::vector<double> queued, local;
  for (int r = 0; r < rounds; ++r) {
    queued.push_back(ThroughQueue(b, fmt::format("{}/overhead-{}.db", dir.path(), r), 1,
                                  Jobs(b, jobs, 0, "overhead")) / jobs);
    local.push_back(Locally(b, Jobs(b, jobs, 0, "overhead")) / jobs);
  }
  const double overhead_ms = (Median(queued) - Median(local)) * 1e3;

  // 2. Throughput with W workers on jobs of `seconds` each, 4 per worker.
  struct Row {
    int workers;
    int jobs;
    double wall, speedup, efficiency;
  };
  std::vector<Row> rows;
  for (int w : {1, 2, 4, 8, 16}) {
    const int n = 4 * w;
    const double wall = ThroughQueue(b, fmt::format("{}/throughput-{}.db", dir.path(), w), w, Jobs(b, n, seconds, "tp"));
    const double speedup = n * seconds / wall;
    rows.push_back({w, n, wall, speedup, speedup / w});
  }
  const double other_load = eval::LoadBetween(before, eval::TakeCpuSnapshot()).others;

  if (json) {
    Json out = {{"jobs", jobs},
                {"rounds", rounds},
                {"overhead_ms_per_job", overhead_ms},
                {"queue_ms_per_job", Median(queued) * 1e3},
                {"local_ms_per_job", Median(local) * 1e3},
                {"job_seconds", seconds},
                {"other_load", other_load},
                {"throughput", Json::array()}};
    for (const Row& r : rows)
      out["throughput"].push_back(
          {{"workers", r.workers}, {"jobs", r.jobs}, {"wall_s", r.wall}, {"speedup", r.speedup},
           {"efficiency", r.efficiency}});
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("queue overhead: {:.2f} ms per job ({} jobs that take no time, median of {} rounds: {:.2f} ms through "
             "the queue with one worker, {:.3f} ms in a local evaluator; goal <= 5 ms)\n",
             overhead_ms, jobs, rounds, Median(queued) * 1e3, Median(local) * 1e3);
  fmt::print("throughput on {} s jobs that need no core, 4 per worker (goal: speedup >= 0.9 W):\n", seconds);
  fmt::print("{:>8} {:>6} {:>9} {:>9} {:>11}\n", "workers", "jobs", "wall s", "speedup", "efficiency");
  for (const Row& r : rows)
    fmt::print("{:>8} {:>6} {:>9.3f} {:>8.2f}x {:>10.1f}%\n", r.workers, r.jobs, r.wall, r.speedup,
               100 * r.efficiency);
  fmt::print("other processes used {:.0f}% of the CPU meanwhile\n", 100 * other_load);
  return 0;
}
