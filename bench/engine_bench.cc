// Benchmarks of the evaluator itself (not of kernels):
//   1. compile time per candidate (cache off),
//   2. evaluator overhead per evaluation: wall time beyond the compile and the
//      kernel's own calls (correctness, warm-up, timed), for a fresh build, for
//      a cached one, and per candidate when N new candidates are evaluated as
//      one batch (as the search does: inputs and reference outputs shared),
//   3. spread of the median latency over repeated evaluations of one kernel,
//   4. the handshake between the engine and the kernel's process, and how a
//      kernel that spins for a known time (20 us, 200 us) is timed.
//
// Usage: engine_bench [--repeats N] [--json] [TASK...]   (default: silu adamw matmul)
// Uses the saved hardware profile when there is one (for percent of peak only).

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/clock.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "eval/stats.h"
#include "suite/task.h"
#include "targets/cpu/cpu_target.h"
#include "targets/cpu/hardware_store.h"

using namespace accelopt;

namespace {

struct TaskFigures {
  std::string task;
  std::vector<double> compile_s;                   // fresh builds
  std::vector<double> overhead_fresh_s;            // wall - compile - kernel calls, fresh build
  std::vector<double> overhead_cached_s;           // wall - kernel calls, build from the cache
  std::vector<double> wall_s, kernel_s, median_s;  // cached-build evaluations
  double median_spread = 0;                        // (max - min) / median of the per-evaluation medians
  double overhead_batch_s = 0;                     // per candidate, one batch of `repeats` fresh builds
  double beyond_calls_batch_s = 0;                 // the same, builds included: (wall - kernel calls) / repeats
};

double Median(const std::vector<double>& v) { return v.empty() ? 0 : eval::Quantile(v, 0.5); }

Result<Profile> EvaluateOnce(targets::Target& target, const suite::Task& task, const std::string& source) {
  targets::EvalRequest request{&task, "bench", {source, "baseline", {}}};
  auto result = target.Evaluate({&request, 1});
  if (!result[0]) return result[0].error();
  if (result[0]->status != Verdict::kOk)
    return Error{task.name + ": " + VerdictName(result[0]->status) + ": " + result[0]->message};
  return std::move(*result[0]);
}

Result<TaskFigures> Measure(const suite::Task& task, int repeats, const cpu::CpuTargetOptions& base) {
  auto source = ReadFile(task.baseline_path(cpu::kKernelExtension));
  if (!source) return source.error();
  TaskFigures f{task.name};
  // As in a search: every candidate is new, so it is compiled (cache off), and
  // the reference runs meanwhile.
  cpu::CpuTargetOptions uncached = base;
  uncached.kernel_compile.cache_dir = "";
  auto fresh = cpu::MakeCpuTarget(uncached);
  for (int i = 0; i < repeats; ++i) {
    auto p = EvaluateOnce(*fresh, task, *source);
    if (!p) return p.error();
    f.compile_s.push_back(p->compile_seconds);
    f.overhead_fresh_s.push_back(p->wall_seconds - p->compile_seconds - p->kernel_seconds);
    fmt::print(stderr, "  {} fresh build {}/{}: wall {:.3f} s, compile {:.3f} s, kernel {:.3f} s\n", task.name, i + 1,
               repeats, p->wall_seconds, p->compile_seconds, p->kernel_seconds);
  }
  // As many new candidates again, as one batch: variants of the baseline that
  // differ in a comment, so each is built.
  std::vector<std::string> variants;
  for (int i = 0; i < repeats; ++i)
    variants.push_back(*source + "\n// batch variant " + std::to_string(i) + " at " + std::to_string(NowSeconds()) +
                       "\n");
  std::vector<targets::EvalRequest> batch;
  for (const auto& v : variants) batch.push_back({&task, "bench", {v, "baseline", {}}});
  double batch_start = NowSeconds();
  auto batch_results = fresh->Evaluate(batch);
  double batch_wall = NowSeconds() - batch_start, inside = 0, calls = 0;
  for (const auto& p : batch_results) {
    if (!p) return p.error();
    if (p->status != Verdict::kOk) return Error{task.name + ": batch: " + p->message};
    inside += p->compile_seconds + p->kernel_seconds;
    calls += p->kernel_seconds;
  }
  f.overhead_batch_s = (batch_wall - inside) / repeats;
  // Builds that overlap are summed in `inside` beyond the wall time they took:
  // the whole batch beyond its kernels' calls, builds included, is the fair total.
  f.beyond_calls_batch_s = (batch_wall - calls) / repeats;
  fmt::print(stderr, "  {} batch of {}: wall {:.3f} s, compile + kernel {:.3f} s\n", task.name, repeats, batch_wall,
             inside);
  // The same kernel evaluated again and again (`accelopt eval` twice): build cached.
  auto cached = cpu::MakeCpuTarget(base);
  if (auto warm = EvaluateOnce(*cached, task, *source); !warm) return warm.error();  // fills the build cache
  for (int i = 0; i < repeats; ++i) {
    auto p = EvaluateOnce(*cached, task, *source);
    if (!p) return p.error();
    f.wall_s.push_back(p->wall_seconds);
    f.kernel_s.push_back(p->kernel_seconds);
    f.overhead_cached_s.push_back(p->wall_seconds - p->compile_seconds - p->kernel_seconds);
    f.median_s.push_back(p->latency->median_s);
    fmt::print(stderr, "  {} cached build {}/{}: wall {:.3f} s, kernel {:.3f} s, median {:.4f} ms\n", task.name, i + 1,
               repeats, p->wall_seconds, p->kernel_seconds, p->latency->median_s * 1e3);
  }
  auto [lo, hi] = std::minmax_element(f.median_s.begin(), f.median_s.end());
  f.median_spread = (*hi - *lo) / Median(f.median_s);
  return f;
}

// A kernel of the scale fixture that spins for `micros` microseconds by its own clock.
std::string SpinKernel(int micros) {
  return "#include <chrono>\n"
         "extern \"C\" void kernel(const float* x, float* out) {\n"
         "  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(" +
         std::to_string(micros) +
         ");\n"
         "  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];\n"
         "  while (std::chrono::steady_clock::now() < until) {\n  }\n"
         "}\n";
}

struct SpinFigures {
  int micros = 0;
  std::vector<double> handshake_s, median_s;
};

// The handshake's cost (the fastest empty call, included in every latency)
// and the median latency of a kernel known to take `micros`.
Result<SpinFigures> MeasureSpin(int micros, int repeats, const cpu::CpuTargetOptions& base) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale");
  if (!task) return task.error();
  auto target = cpu::MakeCpuTarget(base);
  SpinFigures f{micros};
  for (int i = 0; i < repeats; ++i) {
    auto p = EvaluateOnce(*target, *task, SpinKernel(micros));
    if (!p) return p.error();
    f.handshake_s.push_back(p->handshake_seconds);
    f.median_s.push_back(p->latency->median_s);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  bool json = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = std::max(2, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else
      names.push_back(argv[i]);
  }
  if (names.empty()) names = {"silu", "adamw", "matmul"};
  auto tasks = suite::LoadSuite(DefaultSuiteDir());
  if (!tasks) {
    fmt::print(stderr, "engine_bench: {}\n", tasks.error().message);
    return 1;
  }
  cpu::CpuTargetOptions options;
  options.kernel_compile.cache_dir = CacheDir() + "/build";
  auto machine = cpu::DetectMachine();
  if (auto saved = cpu::LoadHardwareProfile(DataDir() + "/hardware", machine.fingerprint); saved && saved->has_value())
    options.rates = cpu::RatesOf(**saved);

  Json out = Json::array();
  if (!json)
    fmt::print("{:<10} {:>12} {:>16} {:>17} {:>16} {:>18} {:>12} {:>16}\n", "task", "compile (s)", "overhead fresh",
               "overhead cached", "overhead batch", "batch with builds", "kernel (s)", "median spread");
  for (const auto& name : names) {
    auto task = std::find_if(tasks->begin(), tasks->end(), [&](const auto& t) { return t.name == name; });
    if (task == tasks->end()) {
      fmt::print(stderr, "engine_bench: unknown task '{}'\n", name);
      return 1;
    }
    auto f = Measure(*task, repeats, options);
    if (!f) {
      fmt::print(stderr, "engine_bench: {}\n", f.error().message);
      return 1;
    }
    if (json)
      out.push_back({{"task", f->task},
                     {"repeats", repeats},
                     {"compile_s", f->compile_s},
                     {"overhead_fresh_s", f->overhead_fresh_s},
                     {"overhead_cached_s", f->overhead_cached_s},
                     {"overhead_batch_s", f->overhead_batch_s},
                     {"beyond_calls_batch_s", f->beyond_calls_batch_s},
                     {"wall_s", f->wall_s},
                     {"kernel_s", f->kernel_s},
                     {"median_latency_s", f->median_s},
                     {"median_spread", f->median_spread}});
    else
      fmt::print("{:<10} {:>12.3f} {:>14.3f} s {:>15.3f} s {:>14.3f} s {:>16.3f} s {:>12.3f} {:>15.2f}%\n", f->task,
                 Median(f->compile_s), Median(f->overhead_fresh_s), Median(f->overhead_cached_s), f->overhead_batch_s,
                 f->beyond_calls_batch_s, Median(f->kernel_s), 100 * f->median_spread);
  }
  if (!json) fmt::print("\n{:<10} {:>16} {:>16} {:>12}\n", "spin", "handshake (us)", "median (us)", "error");
  for (int micros : {20, 200}) {
    auto f = MeasureSpin(micros, repeats, options);
    if (!f) {
      fmt::print(stderr, "engine_bench: {}\n", f.error().message);
      return 1;
    }
    const double handshake = Median(f->handshake_s), median = Median(f->median_s);
    const double error = median / (micros * 1e-6) - 1;
    if (json)
      out.push_back({{"spin_us", micros}, {"handshake_s", f->handshake_s}, {"median_latency_s", f->median_s}});
    else
      fmt::print("{:<10} {:>16.2f} {:>16.2f} {:>11.2f}%\n", std::to_string(micros) + " us", handshake * 1e6,
                 median * 1e6, 100 * error);
  }
  if (json)
    fmt::print("{}\n", DumpJson(out, 2));
  else
    fmt::print(
        "\nmedians over {} evaluations each. overhead = wall - compile - time inside kernel calls\n"
        "(correctness, warm-up, timed); fresh = new build (reference runs during the compile),\n"
        "cached = build from the cache, batch = per candidate when {} new candidates are evaluated\n"
        "together (inputs and reference shared); batch with builds = the batch's wall time beyond its\n"
        "kernels' calls, per candidate (builds that run in parallel counted once). median spread = (max - min) / "
        "median of the {}\n"
        "median latencies. spin: a kernel that spins for a known time, evaluated {} times;\n"
        "handshake = the fastest empty call (every latency includes it), medians over the\n"
        "evaluations; error = median latency against the time it spins.\n",
        repeats, repeats, repeats, repeats);
  return 0;
}
