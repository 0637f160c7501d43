// The job queue's own cost, measured on this machine (issue: evaluation as a
// service of jobs):
//   1. overhead per job: J jobs that take no time, submitted at once to the
//      queue and measured by one worker, against the same jobs run by a local
//      evaluator in this process, side by side in one run, alternating;
//   2. throughput with W = 1, 2, 4, 8, 16 workers, each owning a device of its
//      own, on a synthetic job of fixed duration that needs no core (a sleep):
//      the speedup over one worker's serial time, against the ideal W.
//   3. claim latency: C claimers, each with its own connection, claiming
//      and completing queued jobs as fast as they can: the time one Claim
//      call takes (median and 95th percentile).
// Workers are threads of this process, each with its own connection to the
// queue (the SQLite file, or the PostgreSQL database), as worker processes
// have; the engine's side is the queue evaluator, as `accelopt optimize
// --workers` uses it.
//
//   build/queue_bench [--jobs J] [--seconds D] [--rounds R] [--json]
//                     [--postgres URI | --postgres-server]
// --postgres measures the queue in that database (it must be empty or an
// earlier queue_bench's); --postgres-server starts a throwaway PostgreSQL
// server on this machine for it (testing/postgres_server.h).

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "eval/machine_load.h"
#include "service/queue_evaluator.h"
#include "service/worker.h"
#include "testing/postgres_server.h"
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

std::unique_ptr<service::JobQueue> OpenOrExit(const std::string& location) {
  auto queue = service::OpenJobQueue(location);
  if (!queue) {
    fmt::print(stderr, "queue_bench: {}\n", queue.error().message);
    std::exit(1);
  }
  return std::move(*queue);
}

// Runs `jobs` through the queue at `location` with `workers` worker threads; wall seconds from submission to the last result.
double ThroughQueue(Bench& b, const std::string& location, int workers, std::vector<service::EvalJob> jobs) {
  const std::string machine_class = jobs.front().machine_class;
  auto engine_queue = OpenOrExit(location);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      auto queue = service::OpenJobQueue(location);
      if (!queue) return;
      service::WorkerOptions options;
      options.info = {fmt::format("bench-worker-{}", w), fmt::format("bench-device-{}", w), machine_class};
      options.local.target = &b.target;
      auto summary = service::RunWorker(**queue, options, stop);
      if (!summary) fmt::print(stderr, "queue_bench: worker {}: {}\n", w, summary.error().message);
    });
  }
  service::QueueEvaluatorOptions eo;
  auto evaluator = service::MakeQueueEvaluator(*engine_queue, eo);
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

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// `claimers` threads, each with its own connection, claim and complete
// `per_claimer` queued jobs each; the seconds every successful Claim took.
std::vector<double> ClaimLatencies(Bench& b, const std::string& location, int claimers, int per_claimer,
                                   const std::string& machine_class) {
  auto engine_queue = OpenOrExit(location);
  for (const auto& job : Jobs(b, claimers * per_claimer, 0, machine_class))
    if (auto id = engine_queue->Enqueue(job); !id) {
      fmt::print(stderr, "queue_bench: {}\n", id.error().message);
      std::exit(1);
    }
  std::vector<std::vector<double>> per(claimers);
  std::vector<std::thread> threads;
  for (int c = 0; c < claimers; ++c)
    threads.emplace_back([&, c] {
      auto queue = OpenOrExit(location);
      const service::WorkerInfo me{fmt::format("claimer-{}", c), fmt::format("claim-device-{}", c), machine_class};
      for (;;) {
        const auto t0 = Clock::now();
        auto claimed = queue->Claim(me);
        const double took = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!claimed || !*claimed) return;
        per[c].push_back(took);
        service::EvalOutcome outcome;
        outcome.worker = me.name;
        if (auto done = queue->Complete(**claimed, me, outcome); !done)
          fmt::print(stderr, "queue_bench: {}\n", done.error().message);
      }
    });
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (const auto& p : per) all.insert(all.end(), p.begin(), p.end());
  return all;
}

}  // namespace
}  // namespace accelopt

int main(int argc, char** argv) {
  using namespace accelopt;
  int jobs = 200, rounds = 5;
  double seconds = 0.5;
  bool json = false, start_server = false;
  std::string postgres;
  testing::TempDir dir;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) jobs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--postgres") && i + 1 < argc) postgres = argv[++i];
    else if (!std::strcmp(argv[i], "--postgres-server")) start_server = true;
    else {
      fmt::print(stderr,
                 "usage: queue_bench [--jobs J] [--seconds D] [--rounds R] [--json] [--postgres URI | "
                 "--postgres-server]\n");
      return 2;
    }
  }
  std::unique_ptr<testing::PostgresServer> server;
  if (start_server) {
    auto started = testing::PostgresServer::Start();
    if (!started) {
      fmt::print(stderr, "queue_bench: {}\n", started.error().message);
      return 1;
    }
    server = std::move(*started);
    auto uri = server->CreateDatabase("queue_bench");
    if (!uri) {
      fmt::print(stderr, "queue_bench: {}\n", uri.error().message);
      return 1;
    }
    postgres = *uri;
  }
  // Each measurement its own queue: a fresh SQLite file, or its own machine class in the one database.
  int queues = 0;
  auto fresh = [&](const std::string& name) -> std::pair<std::string, std::string> {
    const std::string machine_class = fmt::format("{}-{}-{}", name, getpid(), ++queues);
    if (!postgres.empty()) return {postgres, machine_class};
    return {fmt::format("{}/{}.db", dir.path(), machine_class), machine_class};
  };
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
    const auto [at, machine_class] = fresh("overhead");
    queued.push_back(ThroughQueue(b, at, 1, Jobs(b, jobs, 0, machine_class)) / jobs);
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
    const auto [at, machine_class] = fresh("throughput");
    const double wall = ThroughQueue(b, at, w, Jobs(b, n, seconds, machine_class));
    const double speedup = n * seconds / wall;
    rows.push_back({w, n, wall, speedup, speedup / w});
  }
  // 3. Claim latency with 1 and 8 claimers, 50 jobs each.
  struct Claims {
    int claimers;
    double median_ms, p95_ms;
  };
  std::vector<Claims> claims;
  for (int c : {1, 8}) {
    const auto [at, machine_class] = fresh("claims");
    const std::vector<double> took = ClaimLatencies(b, at, c, 50, machine_class);
    claims.push_back({c, Median(took) * 1e3, Percentile(took, 0.95) * 1e3});
  }
  const double other_load = eval::LoadBetween(before, eval::TakeCpuSnapshot()).others;
  const std::string backend = postgres.empty() ? "SQLite" : "PostgreSQL " + service::RedactUri(postgres);

  if (json) {
    Json out = {{"jobs", jobs},
                {"rounds", rounds},
                {"overhead_ms_per_job", overhead_ms},
                {"queue_ms_per_job", Median(queued) * 1e3},
                {"local_ms_per_job", Median(local) * 1e3},
                {"job_seconds", seconds},
                {"other_load", other_load},
                {"queue", backend},
                {"claims", Json::array()},
                {"throughput", Json::array()}};
    for (const Claims& c : claims)
      out["claims"].push_back({{"claimers", c.claimers}, {"median_ms", c.median_ms}, {"p95_ms", c.p95_ms}});
    for (const Row& r : rows)
      out["throughput"].push_back(
          {{"workers", r.workers}, {"jobs", r.jobs}, {"wall_s", r.wall}, {"speedup", r.speedup},
           {"efficiency", r.efficiency}});
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("queue: {}\n", backend);
  fmt::print("queue overhead: {:.2f} ms per job ({} jobs that take no time, median of {} rounds: {:.2f} ms through "
             "the queue with one worker, {:.3f} ms in a local evaluator; goal <= 5 ms)\n",
             overhead_ms, jobs, rounds, Median(queued) * 1e3, Median(local) * 1e3);
  fmt::print("throughput on {} s jobs that need no core, 4 per worker (goal: speedup >= 0.9 W):\n", seconds);
  fmt::print("{:>8} {:>6} {:>9} {:>9} {:>11}\n", "workers", "jobs", "wall s", "speedup", "efficiency");
  for (const Row& r : rows)
    fmt::print("{:>8} {:>6} {:>9.3f} {:>8.2f}x {:>10.1f}%\n", r.workers, r.jobs, r.wall, r.speedup,
               100 * r.efficiency);
  for (const Claims& c : claims)
    fmt::print("claim latency with {} claimer(s): median {:.2f} ms, 95th percentile {:.2f} ms (goal <= 20 ms)\n",
               c.claimers, c.median_ms, c.p95_ms);
  fmt::print("other processes used {:.0f}% of the CPU meanwhile\n", 100 * other_load);
  return 0;
}
