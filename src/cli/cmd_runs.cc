// accelopt runs / show / memory: what the store holds.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "cli/common.h"
#include "core/json_io.h"
#include "core/text.h"
#include "memory/memory.h"
#include "run/optimize.h"
#include "store/store.h"

namespace accelopt::cli {
namespace {

// The answers the run could not use (no plan, no code block, edits that do
// not apply), with why: the model's effort that produced no candidate.
void PrintRejected(const std::vector<Json>& calls) {
  std::vector<const Json*> rejected;
  for (const Json& c : calls)
    if (c.contains("rejected")) rejected.push_back(&c);
  if (rejected.empty()) return;
  fmt::print("\n{} answer(s) not used:\n", rejected.size());
  for (const Json* c : rejected)
    fmt::print("  {} {} ({}): {}\n", c->value("task", ""), c->value("agent_role", c->value("role", "")),
               c->value("key", ""), c->value("rejected", "").substr(0, 300));
}

// A candidate's median and score as `show` lists them: latency and percent of
// peak for a kernel, its metric for a code task.
std::string MeasureOf(const Candidate& c) {
  if (c.profile.metric) return MeasureText(c.profile);
  return fmt::format("{}, {:.2f}% of peak", FormatSeconds(c.latency()), c.profile.percent_of_peak);
}

// Reading commands open an existing store only: a mistyped --db is an error,
// never a new empty store that shows an empty history.
std::unique_ptr<store::Store> Open(const std::string& path, bool create = false) {
  return OpenStoreOrExit(path, create);
}

template <typename T>
T Must(Result<T> r) {
  if (!r) throw Exit{kExitError, r.error().message};
  return std::move(*r);
}

// A memory that holds no lesson does not exist: naming one is an error that lists those there are.
void RequireMemory(store::Store& store, const std::string& name, const std::string& db) {
  std::string names;
  for (const auto& [memory, count] : Must(store.ListMemories())) {
    if (memory == name) return;
    names += (names.empty() ? "" : ", ") + memory;
  }
  throw Exit{kExitError, fmt::format("no memory '{}' in {} ({})", name, store::RedactUri(db),
                                     names.empty() ? "it holds no lessons yet" : "memories: " + names)};
}

void RegisterRuns(CLI::App& app) {
  auto* cmd = app.add_subcommand("runs", "list the runs in the store");
  static std::string db = "accelopt.db";
  static bool json = false;
  cmd->add_option("--db", db, kDbHelp);
  cmd->add_flag("--json", json, "print JSON");
  cmd->callback([] {
    auto runs = Must(Open(db)->ListRuns());
    if (json) {
      Json out = Json::array();
      for (const auto& r : runs)
        out.push_back({{"id", r.id},
                       {"created_at", r.created_at},
                       {"status", r.status},
                       {"config", r.config},
                       {"summary", r.summary}});
      fmt::print("{}\n", DumpJson(out, 2));
      return;
    }
    fmt::print("{:>4}  {:<20}  {:<9}  {}\n", "run", "created", "status", "tasks: speedup");
    for (const auto& r : runs) {
      std::string tasks;
      if (r.summary.is_array())
        for (const auto& t : r.summary)
          if (t.value("best_s", 0.0) > 0)
            tasks += fmt::format("{}: {:.2f}x  ", t.value("task", ""),
                                 t.value("baseline_s", 0.0) / t["best_s"].get<double>());
      if (tasks.empty() && r.config.contains("tasks"))
        for (const auto& t : r.config["tasks"]) tasks += t.get<std::string>() + "  ";
      fmt::print("{:>4}  {:<20}  {:<9}  {}\n", r.id, r.created_at, r.status, tasks);
    }
  });
}

// The hardware profile a run is scored against: a stored percentage is
// 100 x max(bytes / bandwidth, mm flops / peak_mm, vec flops / peak_vec) / latency.
void PrintRunHardware(const Json& config) {
  if (!config.contains("hardware") || config["hardware"].is_null()) {
    fmt::print("scored against: no hardware profile (no percentages of peak)\n");
    return;
  }
  const Json& hardware = config["hardware"];
  // Runs recorded before there were targets ran on the default one.
  const std::string target =
      config.contains("eval") ? config["eval"].value("target", targets::kDefaultTarget) : targets::kDefaultTarget;
  const targets::TargetKind* kind = targets::FindTarget(target);
  if (kind && kind->calibrator) {
    if (std::string text = kind->calibrator()->DescribeRecorded(hardware); !text.empty()) {
      fmt::print("{}", text);
      return;
    }
  }
  // The peaks every target reports.
  fmt::print(
      "scored against: the {} target's peaks: bandwidth {:.4g} GB/s, peak_mm {:.4g} GFLOP/s, peak_vec {:.4g} "
      "GFLOP/s ({}, {})\n",
      target, hardware.value("bandwidth_gbs", 0.0), hardware.value("peak_mm_gflops", 0.0),
      hardware.value("peak_vec_gflops", 0.0), hardware.value("fingerprint", "-"), hardware.value("measured_at", "-"));
}

// The run as `show --json` gives it: the same facts as its text.
Json ShowJson(const store::RunInfo& info, const std::map<std::string, std::vector<const Candidate*>>& lineages,
              const std::vector<Json>& calls, bool code) {
  Json tasks = Json::array();
  for (const auto& [task, chain] : lineages) {
    Json lineage = Json::array();
    for (const Candidate* c : chain) {
      Json j = ToJson(*c);
      if (!code) j.erase("code");
      lineage.push_back(j);
    }
    Json entry = {{"task", task}, {"best_candidate", chain.back()->id}, {"lineage", lineage}};
    // What the run recorded when it finished the task: the evidence, the final comparison, the load.
    if (info.summary.is_array())
      for (const Json& t : info.summary)
        if (t.is_object() && t.value("task", "") == task) entry["result"] = t;
    tasks.push_back(entry);
  }
  const run::LlmTotals t = run::SumLlmCalls(calls);
  Json rejected = Json::array();
  for (const Json& c : calls)
    if (c.contains("rejected"))
      rejected.push_back({{"task", c.value("task", "")},
                          {"role", c.value("agent_role", c.value("role", ""))},
                          {"key", c.value("key", "")},
                          {"reason", c.value("rejected", "")}});
  return {{"run", info.id},
          {"created_at", info.created_at},
          {"status", info.status},
          {"hardware", info.config.value("hardware", Json(nullptr))},
          {"tasks", tasks},
          {"rejected", rejected},
          {"llm",
           {{"calls", t.calls},
            {"input_tokens", t.input_tokens},
            {"output_tokens", t.output_tokens},
            {"cost_usd", t.cost_usd},
            {"priced_calls", t.priced},
            {"unpriced_calls", t.unpriced}}}};
}

// The run's workers on Slurm, as the run left them (optimize --slurm): a
// JSON array, null when the run had none.
Json SlurmJobsOf(const std::string& db, int64_t run) {
  const std::string path = SlurmRecordPath(db, run);
  if (!std::filesystem::exists(path)) return nullptr;
  auto text = ReadFile(path);
  if (!text) throw Exit{kExitError, text.error().message};
  Json record = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("slurm_jobs") || !record["slurm_jobs"].is_array())
    throw Exit{kExitError, "not a record of Slurm jobs: " + path};
  return record["slurm_jobs"];
}

void PrintSlurmJobs(const std::string& db, int64_t run) {
  const Json jobs = SlurmJobsOf(db, run);
  if (jobs.is_null()) return;
  fmt::print("\nSlurm worker jobs ({}):\n", SlurmRecordPath(db, run));
  if (jobs.empty()) fmt::print("  none was needed\n");
  for (const Json& j : jobs)
    fmt::print("  job {} ({}) {}, exit code {}{}, node {}, log {}\n", j.value("job_id", ""), j.value("name", ""),
               j.value("state", ""), j.value("exit_code", 0),
               j.value("signal", 0) ? fmt::format(", signal {}", j.value("signal", 0)) : "", j.value("node", ""),
               j.value("log", ""));
}

void RegisterShow(CLI::App& app) {
  auto* cmd = app.add_subcommand("show", "a run's best kernel per task and the lineage of plans that led to it");
  static std::string db = "accelopt.db";
  static int64_t run = 0;
  static bool code = true, json = false;
  cmd->add_option("RUN", run, "run id")->required();
  cmd->add_option("--db", db, kDbHelp);
  cmd->add_flag("!--no-code", code, "do not print the best kernels' code");
  cmd->add_flag("--json", json,
                "print JSON: the run, its hardware profile, per task the lineage from baseline to best (each "
                "candidate with its profile), unused answers and LLM totals");
  cmd->callback([] {
    auto store = Open(db);
    const store::RunInfo info = RunOrExit(*store, run, db);
    auto candidates = Must(store->ListCandidates(run, ""));
    std::map<int64_t, const Candidate*> by_id;
    std::map<std::string, std::vector<const Candidate*>> by_task;
    for (const auto& stored : candidates) {
      by_id[stored.candidate.id] = &stored.candidate;
      by_task[stored.task].push_back(&stored.candidate);
    }
    // The run's own choice where it finished the task, else the side-by-side evidence's.
    std::map<std::string, const Json*> summaries;
    if (info.summary.is_array())
      for (const Json& t : info.summary)
        if (t.is_object() && t.contains("task")) summaries[t.value("task", "")] = &t;
    std::map<std::string, std::vector<const Candidate*>> lineages;  // oldest first
    for (const auto& [task, all] : by_task) {
      const Candidate* b = run::RunsBest(info.summary, task, all).candidate;
      if (!b) continue;
      std::vector<const Candidate*>& chain = lineages[task];
      for (const Candidate* c = b; c; c = c->parent_id && by_id.count(c->parent_id) ? by_id[c->parent_id] : nullptr)
        chain.insert(chain.begin(), c);
    }
    const std::vector<Json> calls = Must(store->ListLlmCalls(run));
    if (json) {
      Json shown = ShowJson(info, lineages, calls, code);
      if (Json jobs = SlurmJobsOf(db, run); !jobs.is_null()) shown["slurm_jobs"] = jobs;
      fmt::print("{}\n", DumpJson(shown, 2));
      return;
    }
    fmt::print("run {} ({}, {})\n", info.id, info.created_at, info.status);
    PrintRunHardware(info.config);
    for (const auto& [task, chain] : lineages) {
      const Candidate* b = chain.back();
      fmt::print("\n== {}: best candidate {} ({})\n", task, b->id, MeasureOf(*b));
      const Json* summary = summaries.count(task) ? summaries[task] : nullptr;
      if (summary && summary->contains("speedup_vs_baseline") && (*summary)["speedup_vs_baseline"].is_object())
        if (auto direct = PairedSpeedupFromJson((*summary)["speedup_vs_baseline"]))
          fmt::print("  against the baseline, side by side: {}\n", PairedSpeedupText(*direct));
      for (const Candidate* c : chain) {
        std::string plan = c->plan.empty() ? "(baseline)" : FirstLine(c->plan);
        fmt::print("  iteration {:>2}  candidate {:>4}  {:>24}{}  {}\n", c->iteration, c->id, MeasureOf(*c),
                   c->profile.disturbed ? " (disturbed)" : "", plan);
        if (c->vs_parent) fmt::print("      over its parent: {}\n", PairedSpeedupText(*c->vs_parent));
      }
      if (summary && summary->contains("measured") && (*summary)["measured"].is_object()) {
        const Json& m = (*summary)["measured"];
        fmt::print("  measured under load: {} of {} evaluations, {} of {} comparisons; {} series measured again\n",
                   m.value("disturbed_evaluations", 0), m.value("evaluations", 0), m.value("disturbed_comparisons", 0),
                   m.value("comparisons", 0), m.value("retried_series", 0));
      }
      if (code) fmt::print("\n{}\n", b->code);
    }
    const run::LlmTotals t = run::SumLlmCalls(calls);
    PrintRejected(calls);
    std::string cost_text = t.unpriced == 0 ? fmt::format("${:.4f}", t.cost_usd)
                            : t.priced == 0 ? "cost unknown (the model is not in the price table)"
                                            : fmt::format(
                                                  "${:.4f} for the {} priced calls; {} more are not in "
                                                  "the price table",
                                                  t.cost_usd, t.priced, t.unpriced);
    fmt::print("\n{} LLM calls, {} tokens in, {} out, {}\n", t.calls, t.input_tokens, t.output_tokens, cost_text);
    PrintSlurmJobs(db, run);
  });
}

// The lesson as the memory holds it, with where it is kept and where it came from.
Json LessonJson(const store::StoredLesson& l) {
  Json j = ToJson(l.lesson);
  j["memory"] = l.memory;
  j["run_id"] = l.run_id;
  j["slow_candidate"] = l.slow_candidate;
  j["fast_candidate"] = l.fast_candidate;
  j["created_at"] = l.created_at;
  return j;
}

// `memory search`: the lessons a planner would be given, ranked as the search ranks them.
void RegisterMemorySearch(CLI::App& memory_cmd, std::string& db, std::string& name) {
  static std::vector<std::string> tags, words;
  static bool json = false;
  static search::SearchOptions defaults;
  static size_t max_lessons = defaults.memory_capacity, max_bytes = defaults.lesson_bytes;
  auto* cmd = memory_cmd.add_subcommand(
      "search",
      "the lessons a planner would get: the kernel's tags rank them (its machine class's lessons first, then "
      "same bound and family, then the largest verified effect), strategy= and TEXT filter them");
  cmd->add_option("TEXT", words, "words every lesson shown must contain (any case)");
  cmd->add_option("--tag", tags,
                  "key=value: task, family, bound, target, language, machine describe the planner's kernel; strategy= "
                  "keeps lessons of that kind (repeatable)")
      ->allow_extra_args(false)
      ->check([](const std::string& tag) -> std::string {
        size_t eq = tag.find('=');
        if (eq == std::string::npos || eq + 1 == tag.size()) return "expected key=value, got '" + tag + "'";
        if (LessonTags probe; !probe.Set(tag.substr(0, eq), tag.substr(eq + 1))) {
          std::string names;
          for (const auto& n : LessonTagNames()) names += (names.empty() ? "" : ", ") + n;
          return "unknown tag '" + tag.substr(0, eq) + "' (tags: " + names + ")";
        }
        return "";
      });
  cmd->add_option("--memory", name, "memory name");
  cmd->add_option("--db", db, kDbHelp);
  cmd->add_option("--max-lessons", max_lessons, "lessons given at most (a planner's limit by default)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-bytes", max_bytes, "size of the block at most (a planner's limit by default)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", json, "machine-readable: the lessons in order, with their relevance");
  cmd->callback([&db, &name] {
    auto store = Open(db);
    RequireMemory(*store, name, db);
    memory::LessonQuery query;
    for (const auto& tag : tags) {
      const std::string key = tag.substr(0, tag.find('=')), value = tag.substr(tag.find('=') + 1);
      if (key == "strategy")
        query.required.push_back({key, value});
      else
        query.kernel.Set(key, value);  // the check above admits only tag names
    }
    for (const auto& w : words) query.text += (query.text.empty() ? "" : " ") + w;
    std::vector<Lesson> lessons;
    for (const auto& stored : Must(store->ListLessons(name, run::kMemoryPool))) lessons.push_back(stored.lesson);
    auto chosen = memory::SelectLessons(lessons, query, {max_lessons, max_bytes});
    if (json) {
      Json out = Json::array();
      for (const auto& r : chosen) {
        Json j = ToJson(r.lesson);
        j["relevance"] = r.relevance;
        j["same_machine"] = r.home == 2 ? Json(true) : r.home == 0 ? Json(false) : Json(nullptr);
        j["verified_effect"] = r.lesson.VerifiedEffect();
        out.push_back(j);
      }
      fmt::print("{}\n", DumpJson(out, 2));
      return;
    }
    if (chosen.empty()) {
      fmt::print("no lesson in memory '{}' matches\n", name);
      return;
    }
    const std::string block = memory::RenderLessons(chosen, query.kernel.machine);
    fmt::print("{} of {} lessons in memory '{}', {} bytes, as a planner would read them:\n\n{}", chosen.size(),
               lessons.size(), name, block.size(), block);
  });
}

void RegisterMemory(CLI::App& app) {
  auto* cmd = app.add_subcommand("memory", "the optimization memory: list, show, export, import lessons");
  cmd->require_subcommand(1);
  static std::string db = "accelopt.db", name = "shared", file;
  static int64_t id = 0;
  static bool list_json = false, show_json = false;
  auto* list = cmd->add_subcommand("list", "memories and their lessons, newest first");
  list->add_option("--db", db, kDbHelp);
  list->add_flag("--json", list_json, "print JSON: [{memory, lessons: [each lesson in full]}]");
  list->callback([] {
    auto store = Open(db);
    auto memories = Must(store->ListMemories());
    if (list_json) {
      Json out = Json::array();
      for (const auto& [memory, count] : memories) {
        Json lessons = Json::array();
        for (const auto& l : Must(store->ListLessons(memory, 0))) lessons.push_back(LessonJson(l));
        out.push_back({{"memory", memory}, {"lessons", lessons}});
      }
      fmt::print("{}\n", DumpJson(out, 2));
      return;
    }
    if (memories.empty()) fmt::print("no lessons in {}: memories fill as `accelopt optimize` learns\n", store::RedactUri(db));
    for (const auto& [memory, count] : memories) {
      fmt::print("{} ({} lessons)\n", memory, count);
      for (const auto& l : Must(store->ListLessons(memory, 0)))
        fmt::print("  {:>4}  {:>6.2f}x  {:<16} {}\n", l.lesson.id, l.lesson.speedup, l.lesson.tags.task,
                   l.lesson.title);
    }
  });
  auto* show = cmd->add_subcommand("show", "one lesson in full");
  show->add_option("ID", id, "lesson id")->required();
  show->add_option("--db", db, kDbHelp);
  show->add_flag("--json", show_json, "print JSON: the lesson, its memory and the run and candidates it came from");
  show->callback([] {
    auto stored = Must(Open(db)->GetLesson(id));
    if (!stored) throw Exit{kExitError, fmt::format("no lesson {}", id)};
    if (show_json) {
      fmt::print("{}\n", DumpJson(LessonJson(*stored), 2));
      return;
    }
    const Lesson& l = stored->lesson;
    fmt::print("lesson {} in memory '{}': task {}, {:.2f}x, run {} (candidates {} -> {})\n\n{}\n", l.id, stored->memory,
               l.tags.task, l.speedup, stored->run_id, stored->slow_candidate, stored->fast_candidate, l.text);
  });
  RegisterMemorySearch(*cmd, db, name);
  auto* exp = cmd->add_subcommand("export", "write a memory's lessons as JSON");
  exp->add_option("--memory", name, "memory name");
  exp->add_option("--db", db, kDbHelp);
  exp->add_option("FILE", file, "output file (default: stdout)");
  exp->callback([] {
    auto store = Open(db);
    RequireMemory(*store, name, db);
    Json out = Json::array();
    for (const auto& l : Must(store->ListLessons(name, 0))) out.push_back(LessonJson(l));
    if (file.empty())
      fmt::print("{}\n", DumpJson(out, 2));
    else if (auto s = WriteJsonFile(file, out); !s)
      throw Exit{kExitError, s.error().message};
  });
  auto* imp = cmd->add_subcommand("import", "add lessons from an exported JSON file to a memory");
  imp->add_option("FILE", file, "exported lessons")->required();
  imp->add_option("--memory", name, "memory to add them to");
  imp->add_option("--db", db, kDbHelp);
  imp->callback([] {
    auto json = ReadJsonFile(file);
    if (!json) throw Exit{kExitError, json.error().message};
    if (!json->is_array()) throw Exit{kExitError, file + ": expected a JSON array of lessons"};
    auto store = Open(db, /*create=*/true);
    // A lesson the memory already holds (same task, title and text) is not added twice.
    std::set<std::tuple<std::string, std::string, std::string>> held;
    for (const auto& l : Must(store->ListLessons(name, 0)))
      held.insert({l.lesson.tags.task, l.lesson.title, l.lesson.text});
    // Every entry is read and checked before any is added: a file with one
    // bad lesson (a speedup no measurement gives, an interval that does not
    // hold its estimate) adds nothing, and the error names each bad entry.
    std::vector<Lesson> lessons;
    std::vector<std::string> bad;
    for (size_t i = 0; i < json->size(); ++i) {
      // The store numbers the lessons it adds: a file written by hand need not.
      Json entry = (*json)[i];
      if (entry.is_object() && !entry.contains("id")) entry["id"] = 0;
      auto lesson = LessonFromJson(entry);
      Status checked = lesson ? CheckImportedLesson(*lesson) : Status(lesson.error());
      if (!checked) {
        bad.push_back(fmt::format("entry {}: {}", i + 1, checked.error().message));
        continue;
      }
      if (lesson->tags.target.empty()) lesson->tags.target = targets::kDefaultTarget;  // exported before lessons named their target
      lessons.push_back(std::move(*lesson));
    }
    if (!bad.empty()) {
      const size_t shown = std::min<size_t>(bad.size(), 5);
      throw Exit{kExitError, fmt::format("{}: {} of {} lessons cannot be imported, so none was:\n  {}{}", file,
                                         bad.size(), json->size(), fmt::join(bad.begin(), bad.begin() + shown, "\n  "),
                                         bad.size() > shown ? fmt::format("\n  ... and {} more", bad.size() - shown)
                                                            : std::string())};
    }
    int added = 0, already = 0;
    // Oldest first, so the newest stays newest.
    for (auto it = lessons.rbegin(); it != lessons.rend(); ++it) {
      const Lesson& l = *it;
      if (!held.insert({l.tags.task, l.title, l.text}).second) {
        ++already;
        continue;
      }
      Must(store->AddLesson({l, name}));
      ++added;
    }
    fmt::print("imported {} lessons into memory '{}'{}\n", added, name,
               already ? fmt::format(" ({} already there)", already) : "");
  });
}

}  // namespace

void RegisterStoreCommands(CLI::App& app) {
  RegisterRuns(app);
  RegisterShow(app);
  RegisterMemory(app);
}

}  // namespace accelopt::cli
