#include "search/beam_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <map>
#include <set>

#include "core/profile.h"
#include "core/text.h"
#include "search/selection.h"
#include "search/tuning.h"

namespace accelopt::search {

namespace {

// A duration in the unit that reads best: "812 us", "1.59 ms".
std::string Duration(double seconds) {
  char text[32];
  if (seconds <= 0) return "0";
  if (seconds < 1e-6)
    std::snprintf(text, sizeof text, "%.3g ns", seconds * 1e9);
  else if (seconds < 1e-3)
    std::snprintf(text, sizeof text, "%.3g us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.3g s", seconds);
  return text;
}

}  // namespace

std::string ProfileText(const Profile& p) {
  char line[512];
  std::string out =
      std::string("status: ") + VerdictName(p.status) + (p.message.empty() ? "" : " (" + p.message + ")") + "\n";
  if (p.latency && p.metric) {
    const MetricFigures& m = *p.metric;
    const std::string unit = m.unit.empty() ? "" : " " + m.unit;
    std::snprintf(line, sizeof line,
                  "%s (%s is better): median %.4g%s, best %.4g%s, worst %.4g%s, spread %.1f%% (%d runs)\n",
                  m.name.c_str(), m.higher_is_better ? "higher" : "lower", m.median, unit.c_str(), m.best, unit.c_str(),
                  m.worst, unit.c_str(), 100 * p.latency->spread, m.runs);
    out += line;
  } else if (p.latency) {
    // The minimum beside the median tells a one-time cost (a thread pool waking
    // up, page faults) from the steady cost of the work.
    const LatencyStats& l = *p.latency;
    std::snprintf(line, sizeof line, "latency: median %s, min %s, max %s, spread %.1f%% (%d timed calls)\n",
                  Duration(l.median_s).c_str(), Duration(l.min_s).c_str(), Duration(l.max_s).c_str(), 100 * l.spread,
                  l.calls);
    out += line;
    std::snprintf(line, sizeof line,
                  "percent of peak: %.2f%% (%s-bound; roofline time %s)\n"
                  "roofline components: memory %s, matmul (FMA) %s, other vector %s\n"
                  "achieved: %.2f GB/s, %.2f GFLOP/s\n",
                  p.percent_of_peak, p.bound.c_str(), Duration(p.roofline_seconds).c_str(),
                  Duration(p.roofline_memory_seconds).c_str(), Duration(p.roofline_mm_seconds).c_str(),
                  Duration(p.roofline_vec_seconds).c_str(), p.achieved_gbs, p.achieved_gflops);
    out += line;
  }
  if (p.disturbed) {
    std::snprintf(line, sizeof line,
                  "measured disturbed: other processes used %.0f%% of the machine's CPU through every series, so "
                  "these figures are uncertain\n",
                  100 * p.other_load);
    out += line;
  }
  if (!p.conditions.empty()) out += "each timed call: " + p.conditions + "\n";
  if (p.counters.available) {
    out += "hardware counters per call: " + CountsText(p.counters) + "\n";
  } else if (p.latency && !p.counters.unavailable_reason.empty()) {
    // Said plainly, so that no figure is guessed in their place.
    out += "hardware counters: none on this machine (" + p.counters.unavailable_reason +
           "): no cycle, instruction, cache-miss or TLB-miss counts exist for this kernel\n";
  }
  // The loops that did vectorize are left out: for a kernel written with
  // intrinsics they are noise, and what a planner acts on is what did not.
  if (p.status == Verdict::kOk && !p.compile_log.empty())
    out += std::string(p.metric ? "warnings of the build:\n" : "compiler warnings on the kernel's own lines:\n") +
           p.compile_log.substr(0, 1500) + "\n";
  if (!p.not_vectorized.empty())
    out += "loops of the kernel the compiler did not vectorize, and why:\n" + p.not_vectorized.substr(0, 2000);
  if (p.status == Verdict::kOk && !p.hot_loop.empty())
    out += "its hottest loop as compiled (the innermost loop with the widest and most vector work; objdump):\n" +
           p.hot_loop.substr(0, 3000);
  if (p.status == Verdict::kOk && !p.time_profile.empty()) {
    out += "where the benchmark's time goes: " + p.time_profile.substr(0, 5000);  // bounded by the target too
    if (out.back() != '\n') out += '\n';
  }
  if (!p.register_report.empty())
    out += "registers, spills and shared memory per function (ptxas):\n" + p.register_report.substr(0, 2000);
  return out;
}

const char* ProposalModeName(ProposalMode mode) { return mode == ProposalMode::kOneCall ? "one-call" : "sequential"; }

std::optional<ProposalMode> ProposalModeFromName(const std::string& name) {
  if (name == "sequential") return ProposalMode::kSequential;
  if (name == "one-call") return ProposalMode::kOneCall;
  return std::nullopt;
}

namespace {

// `c` and its ancestors, nearest first, following parent hashes through
// `known`; a corrupt record (a cycle) ends the walk instead of looping.
std::vector<const Candidate*> Ancestry(const Candidate& c, const std::vector<Candidate>& known) {
  std::map<std::string, const Candidate*> by_hash;
  for (const auto& k : known) by_hash.emplace(k.hash, &k);
  std::vector<const Candidate*> out;
  std::set<std::string> visited;
  for (const Candidate* at = &c; at && visited.insert(at->hash).second;) {
    out.push_back(at);
    auto parent = by_hash.find(at->parent_hash);
    at = parent == by_hash.end() ? nullptr : parent->second;
  }
  return out;
}

}  // namespace

std::string Lineage(const Candidate& c, const std::vector<Candidate>& known) {
  std::vector<std::string> titles;
  for (const Candidate* at : Ancestry(c, known)) {
    if (at->plan.empty()) break;  // the baseline
    titles.push_back(FirstLine(at->plan));
  }
  std::string out;
  for (size_t i = titles.size(); i-- > 0;) out += std::to_string(titles.size() - i) + ". " + titles[i] + "\n";
  return out;
}

namespace {

// One attempt's outcome as its side-by-side comparison with its parent, or its verdict, says it.
std::string Outcome(const Candidate& k, double margin) {
  if (!k.ok()) {
    std::string message = k.profile.message.substr(0, 100);
    for (char& ch : message)
      if (ch == '\n') ch = ' ';
    return "failed: " + std::string(VerdictName(k.profile.status)) + (message.empty() ? "" : " (" + message + ")");
  }
  if (!k.vs_parent) return "not compared with its parent side by side";
  const PairedSpeedup& v = *k.vs_parent;
  char interval[96];
  if (v.pairs == 0)  // its target cannot time two kernels side by side
    std::snprintf(interval, sizeof interval, "%.2fx, the ratio of two medians", v.speedup);
  else
    std::snprintf(interval, sizeof interval, "%.2fx, interval %.2f to %.2f", v.speedup, v.ci_low, v.ci_high);
  if (v.disturbed) return std::string("not decided: measured while other processes loaded the machine (") + interval + ")";
  if (v.ci_low > 1 + margin) return std::string("faster: ") + interval;
  if (v.ci_high < 1 / (1 + margin)) return std::string("slower: ") + interval;
  return std::string("neutral, no clear difference: ") + interval;
}

}  // namespace

std::string AttemptHistory(const Candidate& c, const SearchState& state, double margin, size_t max_bytes) {
  // The kernel and its ancestors, by how the planner knows each.
  std::map<std::string, std::string> on;
  const std::vector<const Candidate*> ancestry = Ancestry(c, state.known);
  for (size_t steps = 0; steps < ancestry.size(); ++steps)
    on[ancestry[steps]->hash] = steps == 0   ? "this kernel"
                                : steps == 1 ? "its parent"
                                             : "an ancestor " + std::to_string(steps) + " steps back";
  // The engine's sweep of a kernel's tunable constants is not a plan of its
  // own: one line per plan says how many variants were swept. Where a variant
  // was kept, it is the plan's attempt (compared with its parent like any
  // child) and the kernel it was tuned from is not shown again.
  auto variant = [](const Candidate& k) { return k.plan.find(kTunedMark) != std::string::npos; };
  using Attempt = std::pair<std::string, std::string>;  // (parent, plan title)
  std::map<Attempt, int> swept;                         // variants timed, kept or not
  std::set<Attempt> kept_variant;
  for (const auto& k : state.known) {
    if (!variant(k) || !on.count(k.parent_hash)) continue;
    const Attempt attempt{k.parent_hash, FirstLine(k.plan)};
    ++swept[attempt];
    if (k.vs_parent || on.count(k.hash)) kept_variant.insert(attempt);
  }
  std::vector<std::string> lines;  // oldest first
  for (const auto& k : state.known) {
    if (k.plan.empty() || !on.count(k.parent_hash)) continue;
    const bool kept = on.count(k.hash) > 0;
    const Attempt attempt{k.parent_hash, FirstLine(k.plan)};
    if (variant(k) ? !k.vs_parent && !kept : kept_variant.count(attempt) > 0) continue;
    std::string line = "- on " + on[k.parent_hash] + ": " + attempt.second + ": " + Outcome(k, margin) +
                       (kept ? " (taken: on this kernel's lineage)" : "");
    if (auto sweep = swept.find(attempt); sweep != swept.end())
      line += "; its tunable constants swept by the engine: " + std::to_string(sweep->second) + " variant" +
              (sweep->second == 1 ? "" : "s") + (variant(k) ? ", this one kept" : ", none kept");
    lines.push_back(line);
  }
  for (const auto& d : state.duplicates) {
    if (!on.count(d.parent_hash)) continue;
    lines.push_back("- on " + on[d.parent_hash] + ": " + d.title + ": duplicate: its kernel was candidate " +
                    std::to_string(d.of) + "'s, already measured");
  }
  std::string out;
  size_t shown = 0;
  for (size_t i = lines.size(); i-- > 0;) {
    if (out.size() + lines[i].size() + 1 > max_bytes) break;
    out += lines[i] + "\n";
    ++shown;
  }
  if (shown < lines.size()) out += "(" + std::to_string(lines.size() - shown) + " older attempts left out)\n";
  return out;
}

namespace {

std::string SpeedupText(const Speedup& s) {
  char text[160];
  if (s.low == s.high)
    std::snprintf(text, sizeof text, "%.2f (the ratio of the two median latencies)", s.estimate);
  else
    std::snprintf(text, sizeof text, "%.2f (%s %.2f to %.2f, timed side by side)", s.estimate,
                  IntervalName(s.coverage).c_str(), s.low, s.high);
  return std::string(text) + (s.disturbed ? ", measured while other processes loaded the machine" : "");
}

// A pair's speedup as the summarizer reads it beside the two profiles: one
// figure decides, and where the profiles' own medians (each measured alone,
// at another time, perhaps under another load) tell a different story, the
// prompt says so rather than leave two figures to contradict each other.
std::string PairSpeedupText(const Speedup& s, const Candidate& slow, const Candidate& fast) {
  std::string text = SpeedupText(s);
  if (s.low == s.high || !slow.ok() || !fast.ok()) return text;  // the medians' ratio is the figure itself
  const double apart = slow.latency() / fast.latency();
  if (std::fabs(std::log(apart / s.estimate)) <= std::log(1.25)) return text;
  char note[200];
  std::snprintf(note, sizeof note,
                "; the medians in the two profiles below, each measured alone at another time, give %.2f: the "
                "side-by-side figure is the one to trust",
                apart);
  return text + note;
}

// Runs fn(i) for i in [0, n) with at most `parallel` in flight, in order of i.
template <typename Fn>
void ParallelFor(size_t n, int parallel, Fn fn) {
  std::vector<std::future<void>> running;
  for (size_t i = 0; i < n; ++i) {
    if (running.size() >= static_cast<size_t>(std::max(1, parallel))) {
      running.front().get();
      running.erase(running.begin());
    }
    running.push_back(std::async(std::launch::async, fn, i));
  }
  for (auto& f : running) f.get();
}

// One (beam kernel, plan) of an iteration and its samples.
struct Proposal {
  size_t parent;  // index into the beam
  size_t number;  // of the parent's plans in this iteration
  Plan plan;
  std::vector<Candidate> samples;
};

// Where two kernels cannot be timed side by side: the ratio of their medians
// (an interval of one point, no pairs), disturbed when either median was.
PairedSpeedup MediansRatio(const Profile& slow, const Profile& fast) {
  PairedSpeedup s;
  s.speedup = s.ci_low = s.ci_high = slow.latency->median_s / fast.latency->median_s;
  s.other_load = std::max(slow.other_load, fast.other_load);
  s.disturbed = slow.disturbed || fast.disturbed;
  return s;
}

bool Failing(const Candidate& c) {
  return c.profile.status == Verdict::kCompileError || c.profile.status == Verdict::kRuntimeError ||
         c.profile.status == Verdict::kWrongAnswer;
}

std::string FailureLog(const Candidate& c) {
  std::string log = c.profile.message + "\n";
  if (c.profile.status == Verdict::kCompileError)
    log += c.profile.compile_log;
  else
    log += "phase: " + c.profile.phase + "\n" + c.profile.run_log;
  return log;
}

class Iteration {
 public:
  Iteration(agents::Agents& agents, CandidateEvaluator& evaluator, const SearchOptions& options,
            SearchListener& listener, const std::string& key, int number, SearchState& state,
            memory::OptimizationMemory& memory)
      : agents_(agents),
        evaluator_(evaluator),
        options_(options),
        listener_(listener),
        key_(key + "/it" + std::to_string(number)),
        number_(number),
        state_(state),
        memory_(memory) {
    for (const auto& c : state_.known) seen_[c.hash] = c;
  }

  void Run() {
    Propose();
    EvaluateSamples();
    for (int round = 1; round <= options_.fix_rounds && Healthy(); ++round) FixFailures(round);
    if (!Healthy()) return;
    Tune();
    if (!Healthy()) return;
    Learn();
    if (!Healthy()) return;
    UpdateBeam();
  }

  bool Healthy() const { return state_.engine_failure.empty(); }

 private:
  // The plans for each beam kernel (the kernels in parallel), then the
  // executor's samples for every plan (in parallel).
  void Propose() {
    // What the agents see of each beam kernel, written once for all its plans and samples.
    std::vector<agents::KernelView> views;
    for (const auto& c : state_.beam) views.push_back(View(c));
    std::vector<std::vector<Plan>> plans(state_.beam.size());
    ParallelFor(state_.beam.size(), options_.llm_parallelism, [&](size_t b) { plans[b] = PlansFor(b, views[b]); });
    for (size_t b = 0; b < plans.size(); ++b)
      for (size_t n = 0; n < plans[b].size(); ++n) proposals_.push_back({b, n, plans[b][n], {}});
    ParallelFor(proposals_.size(), options_.llm_parallelism, [&](size_t i) {
      Proposal& p = proposals_[i];
      const Candidate& parent = state_.beam[p.parent];
      for (int k = 0; k < options_.samples; ++k) {
        auto code = agents_.Execute(views[p.parent], p.plan, PlanKey(parent, p.number) + "/sample" + std::to_string(k));
        if (!code) {
          Fail("executor", code.error().message);
          continue;
        }
        Candidate c;
        c.iteration = number_;
        c.parent_id = parent.id;
        c.parent_hash = parent.hash;
        c.plan = p.plan.Text();
        c.code = *code;
        c.hash = agents::CodeHash(*code, options_.scope.language);
        p.samples.push_back(std::move(c));
      }
    });
  }

  // Up to N plans for beam kernel `b`: asked one by one, each told the titles
  // before it, or all from one call.
  std::vector<Plan> PlansFor(size_t b, const agents::KernelView& view) {
    const Candidate& parent = state_.beam[b];
    const std::string lessons = memory_.RenderFor(KernelTags(parent));
    std::vector<Plan> plans;
    if (options_.proposals == ProposalMode::kOneCall) {
      auto several = agents_.ProposeSeveral(view, lessons, options_.plans, key_ + "/" + parent.hash + "/plans");
      if (!several) Fail("planner", several.error().message);
      return several ? *several : plans;
    }
    std::vector<std::string> titles;
    for (int n = 0; n < options_.plans; ++n) {
      auto plan = agents_.Propose(view, lessons, n + 1, options_.plans, titles, PlanKey(parent, n));
      if (!plan) {
        Fail("planner", plan.error().message);
        continue;
      }
      titles.push_back(plan->title);
      plans.push_back(*plan);
    }
    return plans;
  }

  std::string PlanKey(const Candidate& parent, size_t n) const {
    return key_ + "/" + parent.hash + "/plan" + std::to_string(n);
  }

  agents::KernelView View(const Candidate& c) const {
    return {c.code, ProfileText(c.profile), Lineage(c, state_.known),
            AttemptHistory(c, state_, options_.noise_margin)};
  }

  // What the memory is asked about for a kernel: its task and its bound.
  LessonTags KernelTags(const Candidate& c) const {
    LessonTags tags = options_.scope;
    tags.bound = c.profile.bound;
    return tags;
  }

  void Fail(const std::string& role, const std::string& message) {
    std::lock_guard lock(mu_);
    failures_.push_back({role, message});
  }

  // Evaluates every sample not seen before in this search; a duplicate gets
  // the first one's profile without a second evaluation.
  void EvaluateSamples() {
    ReportFailures();
    std::vector<Candidate*> all;
    for (auto& p : proposals_)
      for (auto& c : p.samples) all.push_back(&c);
    EvaluateBatch(all);
  }

  void EvaluateBatch(const std::vector<Candidate*>& batch) {
    std::vector<std::string> codes;
    std::vector<Candidate*> fresh;
    std::vector<Candidate*> duplicates;
    for (Candidate* c : batch) {
      if (seen_.count(c->hash) || known_.count(c->hash)) {
        duplicates.push_back(c);
        continue;
      }
      known_.insert(c->hash);
      fresh.push_back(c);
      codes.push_back(c->code);
    }
    total_ += static_cast<int>(fresh.size());
    auto profiles = evaluator_.Evaluate(codes);
    for (size_t i = 0; i < fresh.size(); ++i) {
      if (!profiles[i]) {
        // The engine's failure: nothing is recorded for the candidate, and the iteration stops.
        if (state_.engine_failure.empty()) state_.engine_failure = profiles[i].error().message;
        known_.erase(fresh[i]->hash);
        continue;
      }
      fresh[i]->profile = *profiles[i];
      listener_.OnCandidate(*fresh[i]);
      seen_[fresh[i]->hash] = *fresh[i];
      state_.known.push_back(*fresh[i]);
      listener_.OnProgress(number_, ++evaluated_, total_, state_.best);
    }
    if (!state_.engine_failure.empty()) return;
    for (Candidate* c : duplicates) {
      if (!seen_.count(c->hash)) continue;
      const Candidate& first = seen_.at(c->hash);
      listener_.OnDuplicate(*c, first);
      // Another sample of the plan that made it is not an attempt of its own.
      if (first.plan != c->plan || first.parent_hash != c->parent_hash)
        state_.duplicates.push_back({c->parent_hash, FirstLine(c->plan), first.id});
    }
    // A duplicate is the candidate evaluated first: its profile, id, plan and
    // parent, so nothing later (a lesson, the beam) claims an edge the store
    // does not have.
    for (Candidate* c : batch)
      if (!c->id && seen_.count(c->hash)) *c = seen_.at(c->hash);
  }

  void FixFailures(int round) {
    std::vector<Candidate*> fixed;
    std::vector<Candidate> replacements;
    std::vector<Candidate*> failing;
    for (auto& p : proposals_)
      for (auto& c : p.samples)
        if (Failing(c)) failing.push_back(&c);
    if (failing.empty()) return;
    std::vector<std::optional<Candidate>> results(failing.size());
    ParallelFor(failing.size(), options_.llm_parallelism, [&](size_t i) {
      const Candidate& bad = *failing[i];
      auto code = agents_.Fix(bad.code, VerdictName(bad.profile.status), FailureLog(bad),
                              key_ + "/fix" + std::to_string(round) + "/" + bad.hash);
      if (!code) return Fail("fixer", code.error().message);
      Candidate c = bad;
      c.id = 0;
      c.code = *code;
      c.hash = agents::CodeHash(*code, options_.scope.language);
      c.plan = bad.plan;
      results[i] = c;
    });
    ReportFailures();
    std::vector<Candidate*> batch;
    for (size_t i = 0; i < failing.size(); ++i)
      if (results[i]) {
        *failing[i] = *results[i];
        batch.push_back(failing[i]);
      }
    EvaluateBatch(batch);
  }

  void ReportFailures() {
    for (const auto& [role, message] : failures_) listener_.OnAgentFailure(role, message);
    failures_.clear();
  }

  // The engine's own sweep of the constants each new correct kernel declares
  // tunable: the variants are built and timed as one batch; the fastest joins
  // its plan's samples when it beats the kernel side by side.
  void Tune() {
    if (options_.tune_budget == 0) return;
    struct Sweep {
      Proposal* proposal;
      Candidate kernel;
      std::vector<Candidate> variants;
      std::vector<std::string> plans;  // each variant's own plan, as written before evaluation
    };
    std::vector<Sweep> sweeps;
    std::set<std::string> swept;
    for (auto& p : proposals_)
      for (const auto& c : p.samples) {
        // A duplicate of another parent's child is that parent's to tune.
        if (!c.ok() || c.parent_hash != state_.beam[p.parent].hash || !swept.insert(c.hash).second) continue;
        TunableScan scan = FindTunables(c.code);
        for (const auto& problem : scan.problems) listener_.OnTuning(c, "annotation not used: " + problem);
        Sweep sweep{&p, c, {}, {}};
        for (const Setting& setting : TuningSettings(scan.tunables, static_cast<size_t>(options_.tune_budget))) {
          Candidate v = c;
          v.id = 0;
          v.code = ApplySetting(c.code, setting);
          v.hash = agents::CodeHash(v.code, options_.scope.language);
          v.plan = c.plan + "\n" + kTunedMark + SettingText(setting) + ")";
          sweep.plans.push_back(v.plan);
          sweep.variants.push_back(std::move(v));
        }
        if (!sweep.variants.empty()) sweeps.push_back(std::move(sweep));
      }
    std::vector<Candidate*> batch;
    for (auto& sweep : sweeps)
      for (auto& v : sweep.variants) batch.push_back(&v);
    if (batch.empty()) return;
    EvaluateBatch(batch);
    if (!Healthy()) return;
    for (auto& sweep : sweeps) {
      // A variant that turned out to be a kernel already timed (another
      // plan's, say) is that kernel, with its own plan and parent: not this sweep's.
      const Candidate* best = nullptr;
      for (size_t i = 0; i < sweep.variants.size(); ++i) {
        const Candidate& v = sweep.variants[i];
        if (v.ok() && v.plan == sweep.plans[i] && v.latency() < (best ? best : &sweep.kernel)->latency()) best = &v;
      }
      if (!best) {
        listener_.OnTuning(sweep.kernel, std::to_string(sweep.variants.size()) + " variants, none faster");
        continue;
      }
      const Speedup speedup = SideBySide(sweep.kernel, *best);
      const std::string result = std::to_string(sweep.variants.size()) + " variants; the fastest, " +
                                 best->plan.substr(sweep.kernel.plan.size() + 1) + ", " + SpeedupText(speedup);
      if (speedup.disturbed) {
        listener_.OnTuning(sweep.kernel, result + ": not kept (measured disturbed: it decides nothing)");
        continue;
      }
      if (speedup.low <= 1.0) {
        listener_.OnTuning(sweep.kernel, result + ": not kept (not faster side by side)");
        continue;
      }
      listener_.OnTuning(sweep.kernel, result + ": kept");
      sweep.proposal->samples.push_back(*best);
    }
  }

  // `fast` against `slow`: timed side by side when the evaluator can (the
  // comparison is kept in `*paired_out`), else the ratio of the two medians
  // (an interval of one point).
  Speedup SideBySide(const Candidate& slow, const Candidate& fast, std::optional<PairedSpeedup>* paired_out = nullptr) {
    auto paired = evaluator_.Compare(slow.code, fast.code);
    if (!paired) listener_.OnAgentFailure("comparison", paired.error().message);
    if (!paired || paired->pairs == 0) paired = MediansRatio(slow.profile, fast.profile);
    if (paired_out) *paired_out = *paired;
    return {paired->speedup, paired->ci_low, paired->ci_high, paired->disturbed, paired->coverage};
  }

  // The kept child against its parent, side by side where possible.
  Speedup CompareWithParent(const Candidate& parent, Candidate& child) {
    std::optional<PairedSpeedup> paired;
    const Speedup speedup = SideBySide(parent, child, &paired);
    child.vs_parent = *paired;
    listener_.OnComparison(parent, child);
    // What the search knows of the child now holds its comparison (for the evidence of its descendants).
    for (auto& k : state_.known)
      if (k.hash == child.hash) k.vs_parent = child.vs_parent;
    if (seen_.count(child.hash)) seen_[child.hash].vs_parent = child.vs_parent;
    return speedup;
  }

  // Keeps one sample per (kernel, plan), compares it with its parent side by
  // side, summarizes the picked pairs, updates the memory. A kept child
  // enters the beam's pool only when faster than its parent.
  void Learn() {
    std::vector<std::pair<const Candidate*, const Candidate*>> pairs;  // (parent, kept)
    std::vector<Speedup> speedups;
    std::vector<const Plan*> plans;
    for (auto& p : proposals_) {
      if (p.samples.empty()) continue;
      const Candidate& parent = state_.beam[p.parent];
      std::vector<Sample> samples;
      for (const auto& c : p.samples) samples.push_back({c.ok(), c.latency()});
      Candidate& kept = p.samples[KeepSample(samples, parent.latency())];
      if (!kept.ok() || !parent.ok() || kept.hash == parent.hash) continue;
      // A duplicate of a candidate with another parent is not this parent's child.
      if (kept.parent_hash != parent.hash) continue;
      // A duplicate of a candidate already compared (another plan's, an earlier iteration's) is not a new pair.
      if (!compared_.insert(parent.hash + "/" + kept.hash).second) continue;
      const Speedup speedup = CompareWithParent(parent, kept);
      if (!speedup.disturbed && speedup.low > 1.0 + options_.noise_margin) beats_parent_.insert(kept.hash);
      pairs.push_back({&parent, &kept});
      speedups.push_back(speedup);
      plans.push_back(&p.plan);
    }
    std::vector<size_t> picked =
        PickLessonPairs(speedups, options_.top_k, options_.max_threshold, options_.min_threshold);
    std::vector<std::optional<Lesson>> lessons(picked.size());
    ParallelFor(picked.size(), options_.llm_parallelism, [&](size_t i) {
      size_t k = picked[i];
      const auto& [slow, fast] = pairs[k];
      const Speedup& speedup = speedups[k];
      agents::PairView pair{View(*slow), View(*fast), PairSpeedupText(speedup, *slow, *fast)};
      auto lesson = agents_.Summarize(pair, *plans[k], key_ + "/summary/" + slow->hash + "-" + fast->hash);
      if (!lesson) return Fail("summarizer", lesson.error().message);
      if (!*lesson) return;
      Lesson l = **lesson;
      const std::vector<std::string> strategies = l.tags.strategies;
      l.tags = KernelTags(*slow);
      l.tags.strategies = strategies;
      l.speedup = speedup.estimate;
      l.low = speedup.low;
      l.high = speedup.high;
      l.coverage = speedup.coverage;
      lessons[i] = l;
    });
    ReportFailures();
    std::vector<Lesson> fresh;
    for (size_t i = 0; i < picked.size(); ++i)
      if (lessons[i]) {
        listener_.OnLesson(*lessons[i], *pairs[picked[i]].first, *pairs[picked[i]].second);
        fresh.push_back(*lessons[i]);
      }
    // Best first among the new lessons: the order they were picked in.
    memory_.Update(fresh);
  }

  // The beam keeps its kernels and gains the children that beat their parent
  // side by side, undisturbed (Learn): the best B distinct by their speedup
  // over the baseline as the side-by-side evidence gives it (the product of
  // the steps of each one's lineage), never by medians taken minutes apart.
  void UpdateBeam() {
    std::vector<Candidate> pool = state_.beam;
    for (auto& p : proposals_)
      for (auto& c : p.samples)
        if (beats_parent_.count(c.hash)) pool.push_back(c);
    std::map<std::string, const Candidate*> by_hash;
    for (const auto& k : state_.known) by_hash.emplace(k.hash, &k);
    for (const auto& c : pool) by_hash.emplace(c.hash, &c);
    std::vector<Sample> samples;
    std::vector<double> speedups;
    std::vector<std::string> hashes, strategies;
    for (const auto& c : pool) {
      const auto evidence = EvidenceFor(c, by_hash, options_.noise_margin);
      samples.push_back({c.ok(), c.latency()});
      speedups.push_back(evidence ? evidence->estimate : 0);
      hashes.push_back(c.hash);
      strategies.push_back(FirstLine(c.plan));
    }
    // Of two variants of one idea (plan titles that name the same strategy),
    // only the one the evidence ranks first is kept: the beam's members stay
    // distinct strategies.
    std::vector<Candidate> beam;
    for (size_t i : PickBeam(samples, speedups, hashes, options_.beam, strategies)) beam.push_back(pool[i]);
    if (!beam.empty()) state_.beam = beam;
    state_.best = state_.beam.front();
    state_.completed_iterations = number_;
    state_.memory = memory_.lessons();
  }

  agents::Agents& agents_;
  CandidateEvaluator& evaluator_;
  const SearchOptions& options_;
  SearchListener& listener_;
  std::string key_;
  int number_;
  SearchState& state_;
  memory::OptimizationMemory& memory_;
  std::vector<Proposal> proposals_;
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> failures_;
  std::map<std::string, Candidate> seen_;
  std::set<std::string> known_;
  std::set<std::string> compared_;      // "parent/child" hashes compared in this iteration
  std::set<std::string> beats_parent_;  // children faster than their parent, side by side
  int evaluated_ = 0, total_ = 0;
};

}  // namespace

SearchState RunBeamSearch(agents::Agents& agents, CandidateEvaluator& evaluator, SearchState state,
                          const SearchOptions& options, SearchListener& listener, const std::string& key_prefix) {
  memory::OptimizationMemory memory(state.memory, {static_cast<size_t>(options.memory_capacity), options.lesson_bytes});
  for (int it = state.completed_iterations + 1; it <= options.iterations; ++it) {
    if (listener.ShouldStop()) break;
    Iteration(agents, evaluator, options, listener, key_prefix, it, state, memory).Run();
    if (!state.engine_failure.empty()) break;  // the iteration is not recorded: a resume does it again
    listener.OnIteration(it, state.beam, memory);
  }
  return state;
}

}  // namespace accelopt::search
