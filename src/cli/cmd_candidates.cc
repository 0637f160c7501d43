// accelopt candidates RUN: every candidate of a run, one line each (or JSON);
// accelopt export candidate ID DIR: one candidate's files, or a patch against its parent.

#include <fmt/core.h>

#include <filesystem>

#include "cli/common.h"
#include "core/command.h"
#include "core/json_io.h"
#include "core/text.h"
#include "run/optimize.h"
#include "store/store.h"

namespace accelopt::cli {
namespace {

// Its comparison with its parent in words: "1.52x [1.48-1.57]", marked when measured disturbed.
std::string VsParentText(const Candidate& c) {
  if (!c.vs_parent) return "";
  const PairedSpeedup& v = *c.vs_parent;
  if (v.pairs == 0) return fmt::format("{:.2f}x (medians)", v.speedup);
  return fmt::format("{:.2f}x [{:.2f}-{:.2f}]{}", v.speedup, v.ci_low, v.ci_high, v.disturbed ? " disturbed" : "");
}

// A percentage of a peak someone measured: none when unscored (no saved
// calibration) or when the task's figure is its own metric (a code task).
bool Scored(const Candidate& c) { return c.ok() && c.profile.scored_against && !c.profile.metric; }

Json CandidateJson(const store::StoredCandidate& stored) {
  const Candidate& c = stored.candidate;
  Json j = {{"id", c.id},
            {"task", stored.task},
            {"iteration", c.iteration},
            {"parent", c.parent_id == 0 ? Json(nullptr) : Json(c.parent_id)},
            {"status", VerdictName(c.profile.status)},
            {"latency_s", c.ok() ? Json(c.latency()) : Json(nullptr)},
            {"percent_of_peak", Scored(c) ? Json(c.profile.percent_of_peak) : Json(nullptr)},
            {"disturbed", c.profile.disturbed},
            {"plan", FirstLine(c.plan)},
            {"code_hash", c.hash}};
  j["vs_parent"] = c.vs_parent ? ToJson(*c.vs_parent) : Json(nullptr);
  return j;
}

void RegisterCandidates(CLI::App& app) {
  auto* cmd = app.add_subcommand("candidates", "every candidate of a run: status, latency, % of peak, parent, plan");
  static std::string db = "accelopt.db", task;
  static int64_t run = 0;
  static bool json = false;
  cmd->add_option("RUN", run, "run id (see `accelopt runs`)")->required();
  cmd->add_option("--task", task, "only this task's candidates");
  cmd->add_option("--db", db, kDbHelp);
  cmd->add_flag("--json", json,
                "one JSON array of the candidates, with each one's comparison with its parent and the model calls of "
                "its task made by the time it was measured (model_calls)");
  cmd->callback([] {
    auto store = OpenStoreOrExit(db, /*create=*/false);
    RunOrExit(*store, run, db);  // an unknown run is an error, not an empty list
    auto candidates = store->ListCandidates(run, task);
    if (!candidates) throw Exit{kExitError, candidates.error().message};
    if (json) {
      auto calls = store->ListLlmCalls(run);
      if (!calls) throw Exit{kExitError, calls.error().message};
      Json out = Json::array();
      for (const auto& stored : *candidates) {
        out.push_back(CandidateJson(stored));
        out.back()["model_calls"] = run::ModelCallsBy(*calls, stored.task, stored.candidate.iteration);
      }
      fmt::print("{}\n", DumpJson(out, 2));
      return;
    }
    if (candidates->empty()) {
      fmt::print("run {} has no candidates{}\n", run, task.empty() ? "" : " for task " + task);
      return;
    }
    fmt::print("{:>6}  {:<16} {:>4} {:>6}  {:<14} {:>10} {:>8}  {:<26} {}\n", "id", "task", "it", "parent", "status",
               "latency", "% peak", "vs parent", "plan");
    for (const auto& stored : *candidates) {
      const Candidate& c = stored.candidate;
      std::string latency = c.ok() ? FormatSeconds(c.latency()) : "-";
      if (c.ok() && c.profile.disturbed) latency += "*";
      fmt::print("{:>6}  {:<16} {:>4} {:>6}  {:<14} {:>10} {:>8}  {:<26} {}\n", c.id, stored.task, c.iteration,
                 c.parent_id ? std::to_string(c.parent_id) : "-", VerdictName(c.profile.status), latency,
                 Scored(c)                           ? fmt::format("{:.2f}%", c.profile.percent_of_peak)
                 : c.ok() && !c.profile.metric ? "unscored"
                                               : "-",
                 VsParentText(c),
                 c.plan.empty() ? "(baseline)" : FirstLine(c.plan));
    }
    fmt::print("* measured while other processes loaded the machine; `accelopt export candidate ID DIR` writes one\n");
  });
}

// The file name a candidate's code is written under: its target's kernel file, else plain text.
std::string KernelFileName(const Candidate& c) {
  auto target = targets::MakeTarget(c.profile.target.empty() ? targets::kDefaultTarget : c.profile.target, {});
  const std::string extension = target ? (*target)->Describe().file_extension : "";
  return "kernel" + (extension.empty() ? std::string(".txt") : extension);
}

void WriteOrExit(const std::string& path, const std::string& text) {
  if (auto s = WriteFile(path, text); !s) throw Exit{kExitError, s.error().message};
}

// `diff -u` of two files, labelled as a patch of one file `name`.
std::string Patch(const std::string& name, const std::string& before_path, const std::string& after_path) {
  auto diff = RunCommand({"diff", "-u", "--label", "a/" + name, "--label", "b/" + name, before_path, after_path});
  if (!diff) throw Exit{kExitError, diff.error().message};
  // 0: the same, 1: different, anything else: diff itself failed.
  if (diff->exit_code > 1) throw Exit{kExitError, "diff failed: " + diff->err};
  return diff->out;
}

void RegisterExportCandidate(CLI::App& export_cmd) {
  auto* cmd = export_cmd.add_subcommand(
      "candidate", "write one candidate's code, plan and profile into a folder, or with --patch a diff against its parent");
  static std::string db = "accelopt.db", dir;
  static int64_t id = 0;
  static bool patch = false;
  cmd->add_option("ID", id, "candidate id (see `accelopt candidates RUN`)")->required();
  cmd->add_option("DIR", dir, "the folder to write into (created when missing)")->required();
  cmd->add_option("--db", db, kDbHelp);
  cmd->add_flag("--patch", patch,
                "also write its parent's code (parent-kernel.*) and candidate-ID.patch, a unified diff of its code "
                "against its parent's");
  cmd->callback([] {
    auto store = OpenStoreOrExit(db, /*create=*/false);
    auto stored = store->GetCandidate(id);
    if (!stored) throw Exit{kExitError, stored.error().message};
    if (!*stored) throw Exit{kExitError, fmt::format("no candidate {} in {}", id, store::RedactUri(db))};
    const Candidate& c = (*stored)->candidate;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Exit{kExitError, dir + ": cannot create: " + ec.message()};
    const std::string name = KernelFileName(c);
    WriteOrExit(dir + "/" + name, c.code);
    WriteOrExit(dir + "/plan.md", c.plan.empty() ? "(the baseline: no plan)\n" : c.plan + "\n");
    Json about = CandidateJson(**stored);
    about["run"] = (*stored)->run_id;
    about["profile"] = c.profile.ToJson();
    if (auto s = WriteJsonFile(dir + "/candidate.json", about); !s) throw Exit{kExitError, s.error().message};
    fmt::print("{}/{}\n{}/plan.md\n{}/candidate.json\n", dir, name, dir, dir);
    if (!patch) return;
    if (c.parent_id == 0) throw Exit{kExitError, fmt::format("candidate {} is a baseline: it has no parent to diff against", id)};
    auto parent = store->GetCandidate(c.parent_id);
    if (!parent) throw Exit{kExitError, parent.error().message};
    if (!*parent) throw Exit{kExitError, fmt::format("candidate {}'s parent {} is not in the store", id, c.parent_id)};
    const std::string parent_file = dir + "/parent-" + name;
    WriteOrExit(parent_file, (*parent)->candidate.code);
    const std::string file = dir + "/candidate-" + std::to_string(id) + ".patch";
    WriteOrExit(file, Patch(name, parent_file, dir + "/" + name));
    fmt::print("{}\n{}\n", parent_file, file);
  });
}

}  // namespace

void RegisterCandidateCommands(CLI::App& app) {
  RegisterCandidates(app);
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == "export") RegisterExportCandidate(*sub);
}

}  // namespace accelopt::cli
