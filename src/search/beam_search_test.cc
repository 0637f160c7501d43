// The beam search with the real prompt templates, a model that answers from
// rules and an evaluator that reads each kernel's latency from its code: what
// the agents are shown and which pairs become lessons.

#include "search/beam_search.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>

#include <re2/re2.h>

#include "search/tuning.h"

namespace accelopt::search {
namespace {

struct Call {
  std::string role, prompt, key;
};

// Answers each call with `answer(role, prompt, key)`, and records it.
class RuleModel : public agents::ModelPort {
 public:
  using Rule = std::function<std::string(const std::string&, const std::string&, const std::string&)>;
  explicit RuleModel(Rule answer) : answer_(std::move(answer)) {}
  Result<std::string> Ask(const std::string& role, const std::string& prompt, const std::string& key) override {
    std::lock_guard lock(mu_);
    calls.push_back({role, prompt, key});
    return answer_(role, prompt, key);
  }
  std::vector<Call> Of(const std::string& role) const {
    std::vector<Call> out;
    for (const auto& c : calls)
      if (c.role == role) out.push_back(c);
    return out;
  }
  std::vector<Call> calls;

 private:
  Rule answer_;
  std::mutex mu_;
};

// A kernel's code is "ms N;" (or "... ms = N;") plus a body: ok, with a median of N ms, memory-bound.
class CodeTimedEvaluator : public CandidateEvaluator {
 public:
  std::vector<Result<Profile>> Evaluate(const std::vector<std::string>& codes) override {
    std::vector<Result<Profile>> out;
    for (const auto& code : codes) {
      std::string ms;
      Profile p;
      p.task = "t";
      p.bound = "memory";
      if (RE2::PartialMatch(code, RE2("ms (?:= )?([0-9.]+);"), &ms)) {
        p.status = Verdict::kOk;
        p.latency = LatencyStats{};
        p.latency->median_s = p.latency->min_s = p.latency->max_s = std::stod(ms) * 1e-3;
        p.latency->calls = 10;
      } else {
        p.status = Verdict::kCompileError;
      }
      out.push_back(p);
    }
    return out;
  }
};

class Lessons : public SearchListener {
 public:
  void OnLesson(Lesson& lesson, const Candidate& slow, const Candidate& fast) override {
    pairs.push_back({slow.hash, fast.parent_hash});
    lessons.push_back(lesson);
  }
  std::vector<std::pair<std::string, std::string>> pairs;  // (slow's hash, fast's parent hash)
  std::vector<Lesson> lessons;
};

std::string Fenced(const std::string& code) { return "```cpp\n" + code + "```\n"; }

class BeamSearchTest : public ::testing::Test {
 protected:
  BeamSearchTest() {
    auto templates = agents::PromptTemplates::Load(std::string(ACCELOPT_SOURCE_DIR) + "/prompts/cpu");
    EXPECT_TRUE(templates.ok()) << templates.error().message;
    templates_ = *templates;
    options_.iterations = 1;
    options_.plans = 3;
    options_.beam = 2;
    options_.samples = 1;
    options_.fix_rounds = 0;
    options_.llm_parallelism = 4;
    options_.proposals = ProposalMode::kSequential;  // the rules below answer one plan per call
    options_.scope = {"t", "elementwise", "", "host", "c++", {}};
  }

  SearchState Start() {
    SearchState state;
    CodeTimedEvaluator evaluator;
    Candidate baseline;
    baseline.code = "ms 8;\n";
    baseline.hash = agents::CodeHash(baseline.code, "c++");
    baseline.profile = *evaluator.Evaluate({baseline.code}).front();
    state.baseline = state.best = baseline;
    state.beam = state.known = {baseline};
    return state;
  }

  SearchState Run(RuleModel& model, SearchState state, SearchListener& listener) {
    agents::Agents agents(model, templates_, agents::TaskBrief{"t", "out = 2x", "const float* x, float* out"});
    CodeTimedEvaluator evaluator;
    return RunBeamSearch(agents, evaluator, std::move(state), options_, listener, "run1/t");
  }

  agents::PromptTemplates templates_;
  SearchOptions options_;
};

// The plan's title names the code the executor writes: "ms N" in the title gives a kernel of N ms.
std::string ExecutorFromTitle(const std::string& prompt) {
  std::string title, ms;
  RE2::PartialMatch(prompt, RE2("Plan: ([^\n]*)"), &title);
  RE2::PartialMatch(title, RE2("ms ([0-9.]+)"), &ms);
  return Fenced("ms " + ms + ";\n// " + title + "\n");
}

// The accuracy rule as numbers, not "a small multiple of float32 rounding".
TEST_F(BeamSearchTest, ThePromptsSayTheAccuracyBoundAsNumbers) {
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string&) -> std::string {
    if (role == "planner") return "PLAN: idea ms 4\nDo it.";
    if (role == "executor") return ExecutorFromTitle(prompt);
    return "no optimization found";
  });
  SearchListener listener;
  Run(model, Start(), listener);
  auto plans = model.Of("planner");
  ASSERT_FALSE(plans.empty());
  const std::string& prompt = plans[0].prompt;
  EXPECT_NE(prompt.find("relative L2 error of 2e-05"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("within 16 × (|r32 − r| + 1.19e-7·|r| + RMS(r32 − r)) of r"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("small multiple"), std::string::npos) << prompt;
}

// What the machine and the compiled kernel tell an expert reaches the planner:
// the hottest loop as compiled, and the hardware counters, or plainly that the
// machine offers none (a VM without a PMU) instead of any figure.
TEST_F(BeamSearchTest, ThePlannerSeesTheHotLoopAndTheCountersOrThatThereAreNone) {
  auto planner_prompt = [&](const Profile& facts) {
    RuleModel model([&](const std::string& role, const std::string& prompt, const std::string&) -> std::string {
      if (role == "planner") return "PLAN: idea ms 4\nDo it.";
      if (role == "executor") return ExecutorFromTitle(prompt);
      return "no optimization found";
    });
    SearchState state = Start();
    for (Candidate* c : {&state.baseline, &state.best, &state.beam[0], &state.known[0]}) {
      c->profile.hot_loop = facts.hot_loop;
      c->profile.counters = facts.counters;
    }
    SearchListener listener;
    Run(model, std::move(state), listener);
    auto plans = model.Of("planner");
    return plans.empty() ? std::string() : plans[0].prompt;
  };
  Profile facts;
  facts.hot_loop = "in kernel, a loop of 3 instructions at +0x40..+0x4c:\n  vfmadd231ps (%rsi,%rax,4),%zmm1,%zmm0\n";
  facts.counters.unavailable_reason = "perf_event_open: No such file or directory";
  std::string prompt = planner_prompt(facts);
  EXPECT_NE(prompt.find("its hottest loop as compiled (the innermost loop with the widest and most vector work; "
                        "objdump):\nin kernel, a loop of 3 instructions at +0x40..+0x4c:\n  vfmadd231ps"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("hardware counters: none on this machine (perf_event_open: No such file or directory): no "
                        "cycle, instruction, cache-miss or TLB-miss counts exist for this kernel"),
            std::string::npos)
      << prompt;
  EXPECT_EQ(prompt.find(" cycles,"), std::string::npos) << prompt;

  facts.counters = CounterValues{.available = true, .cycles = 4e6, .instructions = 6e6, .cache_misses = 1.5e4};
  prompt = planner_prompt(facts);
  EXPECT_NE(prompt.find("hardware counters per call: 4e+06 cycles, 6e+06 instructions (1.50 per cycle), 1.5e+04 "
                        "cache misses\n"),
            std::string::npos)
      << prompt;
  // Where the PMU offers the data-TLB event too, its misses are told beside them.
  facts.counters.dtlb_load_misses = 2.5e3;
  prompt = planner_prompt(facts);
  EXPECT_NE(prompt.find("1.5e+04 cache misses, 2.5e+03 dTLB load misses\n"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("none on this machine"), std::string::npos) << prompt;
}

// No figure measured under load reaches a planner unmarked: a disturbed
// profile says so beside its latency, and a disturbed comparison in the
// history of attempts decides nothing and says why.
TEST(ProfileText, ADisturbedMeasurementIsMarkedWhereverItIsShown) {
  Profile p;
  p.status = Verdict::kOk;
  p.latency = LatencyStats{.median_s = 2e-3, .min_s = 1.9e-3, .max_s = 2.5e-3, .calls = 10, .series = 1};
  p.disturbed = true;
  p.other_load = 0.62;
  const std::string text = ProfileText(p);
  EXPECT_NE(text.find("measured disturbed: other processes used 62% of the machine's CPU"), std::string::npos) << text;
  p.disturbed = false;
  EXPECT_EQ(ProfileText(p).find("disturbed"), std::string::npos);
}

TEST(AttemptHistory, EveryPlanTriedOnTheLineageWithItsOutcomeNewestFirstWithinItsBound) {
  auto make = [](const std::string& hash, const std::string& parent, const std::string& plan, bool ok) {
    Candidate c;
    c.hash = hash;
    c.parent_hash = parent;
    c.plan = plan.empty() ? "" : plan + "\nwhy it should help";
    c.profile.status = ok ? Verdict::kOk : Verdict::kCompileError;
    c.profile.message = ok ? "" : "error: 'x' was not declared\nin this scope";
    if (ok) c.profile.latency = LatencyStats{.median_s = 1e-3};
    return c;
  };
  auto vs = [](double speedup, double low, double high, bool disturbed = false) {
    PairedSpeedup v;
    v.speedup = speedup, v.ci_low = low, v.ci_high = high, v.disturbed = disturbed, v.pairs = 30;
    return v;
  };
  SearchState state;
  Candidate base = make("b", "", "", true);
  Candidate a = make("a", "b", "tile by 64", true);
  a.vs_parent = vs(2.0, 1.9, 2.1);
  Candidate f = make("f", "b", "use AVX-512 gathers", false);
  Candidate n = make("n", "b", "unroll by 4", true);
  n.vs_parent = vs(1.01, 0.98, 1.04);
  Candidate d = make("d", "b", "prefetch rows", true);
  d.vs_parent = vs(1.5, 1.4, 1.6, /*disturbed=*/true);
  Candidate g = make("g", "a", "split K across threads", true);
  g.vs_parent = vs(0.8, 0.75, 0.85);
  Candidate other = make("o", "elsewhere", "not on this lineage", true);
  // Two variants of n's constants that the engine swept and did not keep: no attempts of their own.
  Candidate n1 = make("n1", "b", "unroll by 4", true), n2 = make("n2", "b", "unroll by 4", true);
  n1.plan += std::string("\n") + kTunedMark + "UNROLL=8)";
  n2.plan += std::string("\n") + kTunedMark + "UNROLL=2)";
  // g's variant g1 was kept and compared in its place: g1 is the attempt, g is not shown again.
  Candidate g_untuned = make("g0", "a", "split K across threads", true);
  g.plan += std::string("\n") + kTunedMark + "SPLITS=4)";
  state.known = {base, a, f, n, n1, n2, d, g_untuned, g, other};
  state.duplicates = {{"a", "tile by 64 again", 12}};

  const std::string history = AttemptHistory(a, state, 0.02);
  EXPECT_EQ(history,
            "- on this kernel: tile by 64 again: duplicate: its kernel was candidate 12's, already measured\n"
            "- on this kernel: split K across threads: slower: 0.80x, interval 0.75 to 0.85; its tunable constants "
            "swept by the engine: 1 variant, this one kept\n"
            "- on its parent: prefetch rows: not decided: measured while other processes loaded the machine (1.50x, "
            "interval 1.40 to 1.60)\n"
            "- on its parent: unroll by 4: neutral, no clear difference: 1.01x, interval 0.98 to 1.04; its tunable "
            "constants swept by the engine: 2 variants, none kept\n"
            "- on its parent: use AVX-512 gathers: failed: compile_error (error: 'x' was not declared in this scope)\n"
            "- on its parent: tile by 64: faster: 2.00x, interval 1.90 to 2.10 (taken: on this kernel's lineage)\n");
  // Within its bound: the newest lines, then how many older ones were left out.
  const std::string bounded = AttemptHistory(a, state, 0.02, 200);
  EXPECT_LE(bounded.size(), 200u + 40u);
  EXPECT_NE(bounded.find("- on this kernel: tile by 64 again"), std::string::npos) << bounded;
  EXPECT_NE(bounded.find("older attempts left out)"), std::string::npos) << bounded;
  EXPECT_EQ(AttemptHistory(base, SearchState{}, 0), "");
}

// The planner of the next iteration is shown what came of the last one's plans.
TEST_F(BeamSearchTest, PlannersSeeEveryAttemptOnTheLineage) {
  options_.iterations = 2;
  options_.plans = 2;
  options_.beam = 1;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string& key) -> std::string {
    if (role == "planner") {
      if (key.find("/it1/") != std::string::npos)
        return key.find("plan0") != std::string::npos ? "PLAN: fuse ms 4\nA." : "PLAN: broken idea\nB.";
      return "PLAN: vectorize ms 2\nC.";
    }
    if (role == "executor") {
      if (prompt.find("Plan: broken idea") != std::string::npos) return Fenced("does not compile\n");
      return ExecutorFromTitle(prompt);
    }
    return "no optimization found";
  });
  SearchListener listener;
  Run(model, Start(), listener);
  auto planners = model.Of("planner");
  ASSERT_GE(planners.size(), 3u);
  EXPECT_NE(planners[0].prompt.find("with what came of it"), std::string::npos) << planners[0].prompt;
  const std::string& later = planners.back().prompt;
  EXPECT_NE(later.find("- on its parent: broken idea: failed: compile_error"), std::string::npos) << later;
  EXPECT_NE(later.find("- on its parent: fuse ms 4: faster: 2.00x, the ratio of two medians (taken: on this "
                       "kernel's lineage)"),
            std::string::npos)
      << later;
}

TEST_F(BeamSearchTest, EachSequentialPlanSeesTheTitlesBeforeIt) {
  int n = 0;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string&) -> std::string {
    if (role == "planner") return "PLAN: idea " + std::to_string(++n) + " ms 4\nDo it.";
    if (role == "executor") return ExecutorFromTitle(prompt);
    return "no optimization found";
  });
  SearchListener listener;
  Run(model, Start(), listener);
  auto plans = model.Of("planner");
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_NE(plans[0].prompt.find("This is proposal 1 of 3"), std::string::npos);
  EXPECT_NE(plans[0].prompt.find("(none yet: this is the first)"), std::string::npos);
  EXPECT_NE(plans[1].prompt.find("This is proposal 2 of 3"), std::string::npos);
  EXPECT_NE(plans[1].prompt.find("- idea 1 ms 4\n"), std::string::npos) << plans[1].prompt;
  EXPECT_NE(plans[2].prompt.find("- idea 1 ms 4\n- idea 2 ms 4\n"), std::string::npos) << plans[2].prompt;
  EXPECT_EQ(model.Of("executor").size(), 3u);
}

TEST_F(BeamSearchTest, OneCallAsksForAllPlansOfAKernelAtOnce) {
  EXPECT_EQ(SearchOptions{}.proposals, ProposalMode::kOneCall);  // the default
  options_.proposals = ProposalMode::kOneCall;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string&) -> std::string {
    if (role == "planner")
      return "PLAN: tile ms 4\nA.\n\nPLAN: unroll ms 5\nB.\n\nPLAN: thread ms 2\nC.\n\nPLAN: extra ms 1\nD.";
    if (role == "executor") return ExecutorFromTitle(prompt);
    return "no optimization found";
  });
  SearchListener listener;
  SearchState state = Run(model, Start(), listener);
  auto plans = model.Of("planner");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_NE(plans[0].prompt.find("Propose 3 DISTINCT optimization steps"), std::string::npos) << plans[0].prompt;
  EXPECT_EQ(model.Of("executor").size(), 3u);  // the fourth plan is beyond the three asked for
  EXPECT_EQ(state.best.latency(), 2e-3);
}

TEST_F(BeamSearchTest, AgentsSeeTheLineageAndTheSummarizerBothProfiles) {
  options_.iterations = 2;
  options_.plans = 1;
  options_.beam = 1;
  int iteration = 0;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string& key) -> std::string {
    if (role == "planner") {
      iteration = key.find("/it2/") != std::string::npos ? 2 : 1;
      return iteration == 1 ? "PLAN: fuse loops ms 4\nA." : "PLAN: vectorize ms 2\nB.";
    }
    if (role == "executor") return ExecutorFromTitle(prompt);
    return "**Lesson**\nIt helped.\nSTRATEGY: fusion\n";
  });
  Lessons listener;
  Run(model, Start(), listener);
  auto executors = model.Of("executor");
  ASSERT_EQ(executors.size(), 2u);
  EXPECT_NE(executors[0].prompt.find("(none: this is the baseline)"), std::string::npos);
  EXPECT_NE(executors[1].prompt.find("oldest first):\n1. fuse loops ms 4\n"), std::string::npos) << executors[1].prompt;
  auto summaries = model.Of("summarizer");
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_NE(summaries[0].prompt.find("latency: median 8 ms"), std::string::npos) << summaries[0].prompt;
  EXPECT_NE(summaries[0].prompt.find("latency: median 4 ms"), std::string::npos) << summaries[0].prompt;
  EXPECT_NE(summaries[0].prompt.find("speedup over the first is 2.00 (the ratio of the two median latencies)"),
            std::string::npos)
      << summaries[0].prompt;
  // The lessons carry the kernel's tags and the strategy the summarizer named.
  ASSERT_EQ(listener.lessons.size(), 2u);
  const Lesson& l = listener.lessons[0];
  EXPECT_EQ(l.tags, (LessonTags{"t", "elementwise", "memory", "host", "c++", {"fusion"}}));
  EXPECT_EQ(l.speedup, 2);
  // The second iteration's planner was given the first lesson.
  auto planners = model.Of("planner");
  EXPECT_NE(planners[1].prompt.find("Lesson 1 (from t, elementwise, memory-bound; fusion"), std::string::npos)
      << planners[1].prompt;
}

TEST_F(BeamSearchTest, ADuplicateOfAnotherParentsChildTeachesNoLesson) {
  // Iteration 1: from the baseline, "a" (4 ms) and "b" (5 ms). Iteration 2:
  // from "a" and "b", every plan writes "c" (2 ms), first evaluated as a's
  // child; b's copy of it is a duplicate whose parent is a, not b.
  options_.iterations = 2;
  options_.plans = 2;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string& key) -> std::string {
    if (role == "planner") {
      if (key.find("/it1/") != std::string::npos)
        return key.find("plan0") != std::string::npos ? "PLAN: a ms 4\nA." : "PLAN: b ms 5\nB.";
      return "PLAN: c ms 2\nC.";
    }
    if (role == "executor") return ExecutorFromTitle(prompt);
    return "**Lesson**\nText.\n";
  });
  Lessons listener;
  SearchState state = Run(model, Start(), listener);
  ASSERT_FALSE(listener.pairs.empty());
  for (const auto& [slow, parent_of_fast] : listener.pairs) EXPECT_EQ(slow, parent_of_fast);
  // baseline->a, baseline->b, a->c: three lessons, none for b->c.
  EXPECT_EQ(listener.pairs.size(), 3u);
  EXPECT_EQ(state.best.latency(), 2e-3);
}

// Times two kernels "side by side" from the child's code: "paired X" is its
// speedup over the parent, "disturbed" marks the comparison as measured under load.
class PairedEvaluator : public CodeTimedEvaluator {
 public:
  Result<PairedSpeedup> Compare(const std::string&, const std::string& child) override {
    std::string ratio;
    if (!RE2::PartialMatch(child, RE2("paired ([0-9.]+)"), &ratio)) return Error{"no paired speedup in the code"};
    const double x = std::stod(ratio);
    PairedSpeedup s{x, x * 0.97, x * 1.03, 40};
    s.disturbed = child.find("disturbed") != std::string::npos;
    s.other_load = s.disturbed ? 0.6 : 0.01;
    return s;
  }
};

// A child faster by its own median but slower side by side, and one measured
// under load, decide nothing: the best, the beam and the lessons follow the
// undisturbed side-by-side evidence.
TEST_F(BeamSearchTest, TheSideBySideEvidenceUndisturbedDecidesTheBeamTheBestAndTheLessons) {
  options_.plans = 3;
  options_.beam = 3;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string& key) -> std::string {
    if (role == "planner") {
      if (key.find("plan0") != std::string::npos) return "PLAN: fast_alone ms 2 paired 0.9\nA.";
      if (key.find("plan1") != std::string::npos) return "PLAN: proven ms 3 paired 1.8\nB.";
      return "PLAN: loaded ms 1 paired 3 disturbed\nC.";
    }
    if (role == "executor") return ExecutorFromTitle(prompt);
    return "**Lesson**\nText.\n";
  });
  Lessons listener;
  agents::Agents agents(model, templates_, agents::TaskBrief{"t", "out = 2x", "const float* x, float* out"});
  PairedEvaluator evaluator;
  SearchState state = RunBeamSearch(agents, evaluator, Start(), options_, listener, "run1/t");
  EXPECT_EQ(state.best.latency(), 3e-3) << state.best.plan;
  ASSERT_EQ(state.beam.size(), 2u);  // the proven child and the baseline
  EXPECT_EQ(state.beam[0].latency(), 3e-3);
  EXPECT_EQ(state.beam[1].hash, state.baseline.hash);
  ASSERT_EQ(listener.lessons.size(), 1u);
  EXPECT_NEAR(listener.lessons[0].speedup, 1.8, 1e-12);
  // One figure decides, and the summarizer is told when the profiles' medians (8 ms and 3 ms) disagree with it.
  auto summaries = model.Of("summarizer");
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_NE(summaries[0].prompt.find("is 1.80 ("), std::string::npos) << summaries[0].prompt;
  EXPECT_NE(summaries[0].prompt.find("the medians in the two profiles below, each measured alone at another time, "
                                     "give 2.67: the side-by-side figure is the one to trust"),
            std::string::npos)
      << summaries[0].prompt;
  // Every kept child's comparison is on it, the disturbed one marked.
  int disturbed = 0;
  for (const auto& c : state.known)
    if (c.vs_parent && c.vs_parent->disturbed) ++disturbed;
  EXPECT_EQ(disturbed, 1);
}

class Tunings : public SearchListener {
 public:
  void OnTuning(const Candidate&, const std::string& what) override { said.push_back(what); }
  std::vector<std::string> said;
};

TEST_F(BeamSearchTest, TheEngineSweepsDeclaredConstantsAndKeepsAFasterVariant) {
  options_.plans = 2;
  options_.tune_budget = 8;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string& key) -> std::string {
    if (role == "planner") return key.find("plan0") != std::string::npos ? "PLAN: tunable\nA." : "PLAN: badly\nB.";
    if (role == "executor")
      return prompt.find("Plan: tunable") != std::string::npos
                 ? Fenced("constexpr double ms = 6;  // accelopt:tune ms 16 3 4\n")
                 : Fenced("double ms = 5;  // accelopt:tune ms 1 2\nms 5;\n");
    return "no optimization found";
  });
  Tunings listener;
  SearchState state = Run(model, Start(), listener);
  EXPECT_EQ(state.best.latency(), 3e-3);
  EXPECT_NE(state.best.plan.find("tunable\nA.\n(constants tuned by the engine: ms=3)"), std::string::npos)
      << state.best.plan;
  EXPECT_EQ(state.best.parent_hash, state.baseline.hash);  // the variant is the beam parent's child, as recorded
  EXPECT_EQ(state.beam.front().hash, state.best.hash);
  ASSERT_EQ(listener.said.size(), 2u);
  EXPECT_NE(listener.said[0].find("ms: no `constexpr"), std::string::npos) << listener.said[0];
  EXPECT_NE(listener.said[1].find("3 variants; the fastest, (constants tuned by the engine: ms=3), 2.00"),
            std::string::npos)
      << listener.said[1];
  EXPECT_NE(listener.said[1].find(": kept"), std::string::npos) << listener.said[1];
  // 1 baseline + 2 samples + 3 variants, each evaluated once.
  EXPECT_EQ(state.known.size(), 6u);

  options_.tune_budget = 0;
  Tunings off;
  EXPECT_EQ(Run(model, Start(), off).known.size(), 3u);
  EXPECT_TRUE(off.said.empty());
}

TEST_F(BeamSearchTest, AVariantThatIsAnotherPlansKernelIsNotTakenAsTheSweepsOwn) {
  // Plan "slow" writes ms = 6, plan "fast" the same source with ms = 3: the
  // sweep of the first reaches the second's kernel, which stays that plan's.
  options_.plans = 2;
  options_.tune_budget = 8;
  RuleModel model([&](const std::string& role, const std::string& prompt, const std::string& key) -> std::string {
    if (role == "planner") return key.find("plan0") != std::string::npos ? "PLAN: slow\nA." : "PLAN: fast\nB.";
    if (role == "executor")
      return Fenced("constexpr double ms = " + std::string(prompt.find("Plan: slow") != std::string::npos ? "6" : "3") +
                    ";  // accelopt:tune ms 3 6\n");
    return "no optimization found";
  });
  Tunings listener;
  SearchState state = Run(model, Start(), listener);
  EXPECT_EQ(state.best.latency(), 3e-3);
  EXPECT_EQ(state.best.plan, "fast\nB.");
  ASSERT_EQ(listener.said.size(), 2u);
  EXPECT_EQ(listener.said[0], "1 variants, none faster");  // its one variant is plan "fast"'s kernel
  EXPECT_EQ(listener.said[1], "1 variants, none faster");
}

TEST(ProfileText, ShowsOwnWarningsAndWhatDidNotVectorizeNotWhatDid) {
  Profile p;
  p.status = Verdict::kOk;
  p.latency = LatencyStats{};
  p.latency->median_s = 1e-3;
  p.compile_log = "kernel.cpp:3:7: warning: unused variable 'x'\n";
  p.vectorization_report = "kernel.cpp:5:3: optimized: loop vectorized using 64 byte vectors\n";
  p.not_vectorized = "kernel.cpp:9: control flow in loop\n";
  std::string text = ProfileText(p);
  EXPECT_NE(text.find("compiler warnings on the kernel's own lines:\nkernel.cpp:3:7: warning: unused"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kernel.cpp:9: control flow in loop"), std::string::npos) << text;
  EXPECT_EQ(text.find("loop vectorized"), std::string::npos) << text;
}

TEST(Lineage, FollowsParentHashesOldestFirst) {
  Candidate base{.plan = "", .hash = "h0"};
  Candidate a{.parent_hash = "h0", .plan = "tile\ndetails", .hash = "h1"};
  Candidate b{.parent_hash = "h1", .plan = "unroll", .hash = "h2"};
  EXPECT_EQ(Lineage(b, {base, a, b}), "1. tile\n2. unroll\n");
  EXPECT_EQ(Lineage(base, {base, a, b}), "");
  Candidate loop{.parent_hash = "h3", .plan = "x", .hash = "h3"};  // a corrupt record pointing at itself
  EXPECT_EQ(Lineage(loop, {loop}), "1. x\n");
}

}  // namespace
}  // namespace accelopt::search
