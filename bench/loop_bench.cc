// Benchmarks of the optimization loop itself, with a zero-latency scripted model:
//   1. time the engine spends outside evaluations and LLM calls per iteration,
//      as a fraction of evaluation time (real evaluator, the `scale` test task);
//   2. the engine's peak memory over a 1,000-candidate run (evaluations stubbed
//      with synthetic profiles, so only the engine's own memory is measured).
//
// Usage: loop_bench [--json]

#include <fmt/core.h>
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <random>

#include "core/clock.h"
#include "core/paths.h"
#include "llm/config.h"
#include "run/optimize.h"
#include "targets/cpu/cpu_target.h"
#include "testing/temp_dir.h"

using namespace accelopt;

namespace {

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A distinct, correct kernel for out = 2 * x (a different constant expression per variant).
std::string Variant(int i) {
  return "Variant " + std::to_string(i) + ".\n```cpp\nextern \"C\" void kernel(const float* x, float* out) {\n" +
         "  const float two = 2.0f + 0.0f * " + std::to_string(i) + ".0f;\n" +
         "  for (long i = 0; i < M * N; ++i) out[i] = two * x[i];\n}\n```\n";
}

std::string WriteRecording(const std::string& dir, int variants) {
  std::string path = dir + "/recording.jsonl";
  std::ofstream out(path);
  out << "# Synthetic recording for the loop benchmark.\n";
  out << Json{{"role", "planner"},
              {"response", "PLAN: Try a variant\nA different constant expression."},
              {"repeat", true}}
             .dump()
      << "\n";
  for (int i = 0; i < variants; ++i) out << Json{{"role", "executor"}, {"response", Variant(i)}}.dump() << "\n";
  out << Json{{"role", "summarizer"},
              {"response", "**Constant folding**\nFold constants.\nbefore: a\nafter: b"},
              {"repeat", true}}
             .dump()
      << "\n";
  return path;
}

std::unique_ptr<llm::LlmClient> Client(const std::string& recording) {
  llm::LlmConfig config;
  config.backends["rec"] = llm::BackendConfig{"scripted"};
  config.backends["rec"].scripted.path = recording;
  config.backends["rec"].max_concurrency = 64;
  config.roles["default"] = llm::RoleSettings{"rec"};
  auto client = llm::BuildLlmClient(config);
  if (!client) {
    fmt::print(stderr, "loop_bench: {}\n", client.error().message);
    std::exit(1);
  }
  return std::move(*client);
}

// Times the evaluations that pass through it.
struct TimedTarget : targets::Target {
  explicit TimedTarget(std::unique_ptr<targets::Target> t) : inner(std::move(t)) {}
  std::string name() const override { return inner->name(); }
  targets::TargetInfo Describe() const override { return inner->Describe(); }
  std::string Machine() const override { return inner->Machine(); }
  bool Supports(const suite::Task& t) const override { return inner->Supports(t); }
  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> r) override {
    double start = NowSeconds();
    auto out = inner->Build(r);
    seconds += NowSeconds() - start;
    count += static_cast<int>(r.size());
    return out;
  }
  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    double start = NowSeconds();
    auto out = inner->Run(built, on_result);
    seconds += NowSeconds() - start;
    return out;
  }
  bool ComparesSideBySide() const override { return inner->ComparesSideBySide(); }
  Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override {
    double start = NowSeconds();
    auto out = inner->Compare(a, b);
    seconds += NowSeconds() - start;
    count += 2;
    return out;
  }
  std::unique_ptr<targets::Target> inner;
  double seconds = 0;
  int count = 0;
};

// Instant synthetic profiles: measures the engine, not the evaluator.
struct SyntheticTarget : targets::Target {
  std::string name() const override { return "synthetic"; }
  targets::TargetInfo Describe() const override {
    return {name(), "c++", ".cpp", {"cpp"}, "(not built: latencies are drawn)", "prompts/cpu"};
  }
  std::string Machine() const override { return "none"; }
  bool Supports(const suite::Task&) const override { return true; }
  // Built at once: the profile is drawn when it runs.
  struct Drawn : targets::Built {
    Profile profile;
    const Profile& BuildProfile() const override { return profile; }
  };
  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> r) override {
    std::vector<Result<std::unique_ptr<targets::Built>>> out;
    for (const auto& request : r) {
      auto built = std::make_unique<Drawn>();
      built->profile.task = request.task->name;
      built->profile.shape = request.shape;
      out.push_back(std::unique_ptr<targets::Built>(std::move(built)));
    }
    return out;
  }
  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    for (targets::Built* b : built) {
      Profile p = b->BuildProfile();
      p.message = "synthetic";
      p.errors = ErrorStats{};
      p.latency = LatencyStats{};
      p.latency->median_s = std::uniform_real_distribution<double>(1e-4, 1e-3)(rng);
      p.compile_log = std::string(2000, 'c');  // about what a real profile carries
      p.vectorization_report = std::string(2000, 'v');
      out.push_back(p);
      if (on_result) on_result(out.size() - 1, out.back());
    }
    return out;
  }
  std::mt19937 rng{7};
};

run::TaskSettings Settings(int iterations, int plans, int beam) {
  run::TaskSettings s;
  s.search.iterations = iterations;
  s.search.plans = plans;
  s.search.beam = beam;
  s.search.samples = 1;
  s.search.fix_rounds = 0;
  s.memory_name = "bench";
  s.shape = "test";
  s.prompts_dir = ProjectDataPath("prompts/cpu");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = argc > 1 && !std::strcmp(argv[1], "--json");
  auto task = suite::LoadTask(ProjectDataPath("tests/fixtures/scale"));
  if (!task) {
    fmt::print(stderr, "loop_bench: {}\n", task.error().message);
    return 1;
  }
  testing::TempDir dir;

  // 1. Overhead with the real evaluator: 2 iterations, beam 2, 4 plans = 16 candidates.
  auto db = store::OpenSqliteStore({dir.path() + "/overhead.db"});
  auto client = Client(WriteRecording(dir.path(), 64));
  cpu::CpuTargetOptions options;
  options.kernel_compile.cache_dir = dir.path() + "/build";
  options.work_dir = dir.path() + "/work";
  TimedTarget target(cpu::MakeCpuTarget(options));
  auto run = (*db)->CreateRun(Json::object());
  double start = NowSeconds();
  auto result = run::OptimizeTask(Settings(2, 4, 2), *task, *run, **db, *client, target);
  double wall = NowSeconds() - start;
  if (!result) {
    fmt::print(stderr, "loop_bench: {}\n", result.error().message);
    return 1;
  }
  double llm = 0;
  for (const auto& r : client->records()) llm += r.latency_seconds;  // retained in this part
  double engine = wall - target.seconds - llm;
  double per_iteration = engine / 2;

  // 2. Peak memory over 1,000 candidates: 11 iterations x beam 10 x 10 plans.
  long rss_before = PeakRssKb();
  auto db2 = store::OpenSqliteStore({dir.path() + "/memory.db"});
  auto client2 = Client(WriteRecording(dir.path(), 1100));
  SyntheticTarget synthetic;
  auto run2 = (*db2)->CreateRun(Json::object());
  double start2 = NowSeconds();
  client2->RetainRecords(false);
  auto result2 = run::OptimizeTask(Settings(11, 10, 10), *task, *run2, **db2, *client2, synthetic);
  double wall2 = NowSeconds() - start2;
  if (!result2) {
    fmt::print(stderr, "loop_bench: {}\n", result2.error().message);
    return 1;
  }
  auto candidates = (*db2)->ListCandidates(*run2, task->name);
  long rss_after = PeakRssKb();

  if (json) {
    fmt::print("{}\n", Json{{"evaluations", target.count},
                            {"wall_s", wall},
                            {"evaluation_s", target.seconds},
                            {"llm_s", llm},
                            {"engine_s_per_iteration", per_iteration},
                            {"engine_fraction_of_evaluation", engine / target.seconds},
                            {"candidates", candidates ? candidates->size() : 0},
                            {"thousand_run_wall_s", wall2},
                            {"peak_rss_mb_before", rss_before / 1024.0},
                            {"peak_rss_mb_after", rss_after / 1024.0}}
                           .dump(2));
    return 0;
  }
  fmt::print("overhead run: {} evaluations in {:.2f} s: evaluation {:.2f} s, LLM {:.3f} s, engine {:.3f} s\n",
             target.count, wall, target.seconds, llm, engine);
  fmt::print("  engine time per iteration {:.3f} s = {:.2f}% of evaluation time\n", per_iteration,
             100 * engine / target.seconds);
  fmt::print(
      "1,000-candidate run (synthetic evaluations): {} candidates in {:.2f} s, engine peak RSS {:.1f} MB "
      "(was {:.1f} MB before the run)\n",
      candidates ? candidates->size() : 0, wall2, rss_after / 1024.0, rss_before / 1024.0);
  return 0;
}
