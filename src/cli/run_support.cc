#include "cli/run_support.h"

#include <fmt/core.h>

#include "agents/parse.h"
#include "cli/common.h"
#include "targets/cpu/calibrate.h"

namespace accelopt::cli {

StoreModelPort::StoreModelPort(store::Store& store, llm::LlmClient& client, int64_t run_id, std::string task)
    : store_(store), client_(client), run_id_(run_id), task_(std::move(task)) {}

Result<std::string> StoreModelPort::Ask(const std::string& role, const std::string& prompt, const std::string& key) {
  auto recorded = store_.GetLlmCall(key);
  if (!recorded) return recorded.error();
  if (*recorded && (**recorded).value("error", "").empty()) {
    ++replayed_;
    return (**recorded).value("response", "");
  }
  auto answer = client_.Chat(role, {{"user", prompt}});
  auto records = client_.records();
  // The client records every call; the newest of this role and prompt is ours.
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->agent_role != role || it->prompt.empty() || it->prompt.back().content != prompt) continue;
    Json record = it->ToJson();
    record["task"] = task_;
    record["key"] = key;
    // A failed call is kept for accounting under its own key, so a resume asks again.
    std::string stored_key = answer ? key : key + "#failed-" + it->id;
    if (auto s = store_.PutLlmCall(stored_key, run_id_, role, record); !s) return s.error();
    break;
  }
  if (!answer) return answer.error();
  return answer->text;
}

StoreEvaluator::StoreEvaluator(store::Store& store, targets::Target& target, const suite::Task& task,
                               std::string shape, int64_t run_id)
    : store_(store), target_(target), task_(task), shape_(std::move(shape)), run_id_(run_id) {}

Result<eval::Profile> StoreEvaluator::EvaluateOne(const std::string& code) {
  std::string key = "run" + std::to_string(run_id_) + "/" + task_.name + "/" + shape_ + "/" + agents::CodeHash(code);
  auto recorded = store_.GetEvaluation(key);
  if (!recorded) return recorded.error();
  if (*recorded) return eval::ProfileFromJson(**recorded);
  targets::EvalRequest request{&task_, shape_, {code, "candidate", {}}};
  auto profile = std::move(target_.Evaluate({&request, 1})[0]);
  if (!profile) return profile.error();
  if (auto s = store_.PutEvaluation(key, run_id_, task_.name, profile->ToJson()); !s) return s.error();
  return profile;
}

std::vector<Result<eval::Profile>> StoreEvaluator::Evaluate(const std::vector<std::string>& codes) {
  std::vector<Result<eval::Profile>> out;
  for (const auto& code : codes) out.push_back(EvaluateOne(code));
  return out;
}

RunRecorder::RunRecorder(store::Store& store, llm::LlmClient& client, int64_t run_id, std::string task,
                         std::string memory_name, int iterations)
    : store_(store),
      client_(client),
      run_id_(run_id),
      task_(std::move(task)),
      memory_name_(std::move(memory_name)),
      iterations_(iterations) {}

void RunRecorder::OnCandidate(search::Candidate& c) {
  store::CandidateRow row;
  row.run_id = run_id_;
  row.task = task_;
  row.iteration = c.iteration;
  row.parent_id = c.parent_id;
  row.plan = c.plan;
  row.code = c.code;
  row.code_hash = c.hash;
  row.status = eval::VerdictName(c.profile.status);
  row.latency_s = c.latency();
  row.percent_of_peak = c.profile.percent_of_peak;
  row.profile = c.profile.ToJson();
  auto id = store_.AddCandidate(row);
  if (id) c.id = *id;
  else fmt::print(stderr, "warning: {}\n", id.error().message);
}

void RunRecorder::OnLesson(memory::MemoryLesson& lesson, const search::Candidate& slow, const search::Candidate& fast) {
  store::Lesson row;
  row.memory = memory_name_;
  row.task = task_;
  row.target = "cpu";
  row.speedup = lesson.speedup;
  row.title = lesson.title;
  row.text = lesson.text;
  row.run_id = run_id_;
  row.slow_candidate = slow.id;
  row.fast_candidate = fast.id;
  auto id = store_.AddLesson(row);
  if (id) lesson.id = *id;
  else fmt::print(stderr, "warning: {}\n", id.error().message);
  fmt::print(stderr, "  lesson ({:.2f}x): {}\n", lesson.speedup, lesson.title);
}

void RunRecorder::OnAgentFailure(const std::string& role, const std::string& message) {
  fmt::print(stderr, "  {} failed: {}\n", role, message.substr(0, 300));
}

void RunRecorder::OnProgress(int iteration, int evaluated, int total, const search::Candidate& best) {
  llm::Totals t = client_.totals();
  std::string cost = fmt::format("${:.4f}", t.cost_usd) + (t.unknown_cost_calls ? " + unknown" : "");
  fmt::print(stderr, "[{}] iteration {}/{}: evaluated {}/{}, best {:.2f}% of peak ({}), tokens {} in / {} out, cost {}\n",
             task_, iteration, iterations_, evaluated, total, best.profile.percent_of_peak,
             best.ok() ? FormatSeconds(best.latency()) : "-", t.input_tokens, t.output_tokens, cost);
}

void RunRecorder::OnIteration(int iteration, const std::vector<search::Candidate>& beam,
                              const memory::OptimizationMemory& memory) {
  search::SearchState state;
  state.completed_iterations = iteration;
  state.beam = beam;
  state.memory = memory.lessons();
  if (auto s = store_.PutIteration(run_id_, task_, iteration, StateToJson(state)); !s)
    fmt::print(stderr, "warning: {}\n", s.error().message);
}

bool RunRecorder::ShouldStop() {
  if (auto spent = client_.BudgetSpent()) {
    stop_reason_ = *spent;
    return true;
  }
  return false;
}

Json StateToJson(const search::SearchState& state) {
  Json beam = Json::array(), memory = Json::array();
  for (const auto& c : state.beam) beam.push_back(search::ToJson(c));
  for (const auto& l : state.memory)
    memory.push_back({{"id", l.id}, {"task", l.task}, {"speedup", l.speedup}, {"title", l.title}, {"text", l.text}});
  return {{"completed_iterations", state.completed_iterations}, {"beam", beam}, {"memory", memory}};
}

Result<search::SearchState> StateFromJson(const Json& j) {
  search::SearchState state;
  try {
    state.completed_iterations = j.at("completed_iterations");
    for (const auto& c : j.at("beam")) {
      auto candidate = search::CandidateFromJson(c);
      if (!candidate) return candidate.error();
      state.beam.push_back(*candidate);
    }
    for (const auto& l : j.at("memory"))
      state.memory.push_back({l.at("id"), l.at("task"), l.at("speedup"), l.at("title"), l.at("text")});
  } catch (const Json::exception& e) {
    return Error{std::string("checkpoint: ") + e.what()};
  }
  return state;
}

agents::TaskBrief BriefFor(const suite::Task& task, const std::string& shape) {
  agents::TaskBrief brief;
  brief.task = task.name;
  brief.description = task.description;
  std::string signature;
  for (const auto& t : task.inputs) signature += (signature.empty() ? "" : ", ") + ("const float* " + t.name);
  for (const auto& t : task.outputs) signature += ", float* " + t.name;
  brief.signature = signature;
  auto bound = suite::Bind(task, shape);
  if (bound) {
    std::string header = bound->ShapeHeader();
    std::string decls;
    for (size_t at = header.find("constexpr"); at != std::string::npos; at = header.find("constexpr", at + 1))
      decls += (decls.empty() ? "" : " ") + header.substr(at, header.find('\n', at) - at);
    brief.shape = decls;
  }
  auto reference = ReadFile(task.reference_path());
  brief.reference = reference ? *reference : "";
  brief.flags = "-O3 -march=native -fopenmp -std=c++20";
  cpu::MachineIdentity machine = cpu::DetectMachine();
  brief.isa = std::to_string(machine.cores) + " cores, " + std::to_string(machine.simd_bits) + "-bit SIMD";
  for (const auto& f : machine.isa) brief.isa += " " + f;
  brief.tolerance = task.tolerance;
  return brief;
}

}  // namespace accelopt::cli
