#include "targets/target.h"

namespace accelopt::targets {

std::string EvaluationJob::Key() const { return task + "/" + shape + "/" + target + "@" + machine + "/" + code_hash; }

Json EvaluationJob::ToJson() const {
  return {{"task", task}, {"shape", shape}, {"code_hash", code_hash}, {"target", target}, {"machine", machine}};
}

Result<EvaluationJob> EvaluationJob::FromJson(const Json& j) {
  EvaluationJob job;
  for (const auto& [key, field] :
       {std::pair{"task", &job.task}, std::pair{"shape", &job.shape}, std::pair{"code_hash", &job.code_hash},
        std::pair{"target", &job.target}, std::pair{"machine", &job.machine}}) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty())
      return Error{std::string("evaluation job: '") + key + "' must be a non-empty string"};
    *field = j[key].get<std::string>();
  }
  return job;
}

std::vector<Result<Profile>> Target::Evaluate(std::span<const EvalRequest> requests, const OnResult& on_result) {
  std::vector<Result<std::unique_ptr<Built>>> built = Build(requests);
  std::vector<Result<Profile>> out(built.size(), Error{""});
  std::vector<Built*> runnable;
  std::vector<size_t> index;  // of each runnable one among the requests
  for (size_t k = 0; k < built.size(); ++k) {
    if (built[k]) {
      runnable.push_back(built[k]->get());
      index.push_back(k);
    } else {
      out[k] = built[k].error();
      if (on_result) on_result(k, out[k]);
    }
  }
  std::vector<Result<Profile>> ran = Run(runnable, [&](size_t k, const Result<Profile>& result) {
    if (on_result) on_result(index[k], result);
  });
  for (size_t k = 0; k < ran.size(); ++k) out[index[k]] = std::move(ran[k]);
  return out;
}

Result<std::string> Target::Baseline(const suite::Task& task) const {
  return ReadFile(task.baseline_path(Describe().file_extension));
}

std::string Target::Signature(const suite::Task& task) const {
  std::string signature;
  for (const auto& t : task.inputs)
    signature += (signature.empty() ? "const " : ", const ") + std::string(suite::DTypeCType(t.dtype)) + "* " + t.name;
  for (const auto& t : task.outputs) signature += ", " + std::string(suite::DTypeCType(t.dtype)) + "* " + t.name;
  return signature;
}

std::string Target::ShapeDeclarations(const suite::BoundTask& bound) const {
  const std::string header = bound.ShapeHeader();
  std::string decls;
  for (size_t at = header.find("constexpr"); at != std::string::npos; at = header.find("constexpr", at + 1))
    decls += (decls.empty() ? "" : " ") + header.substr(at, header.find('\n', at) - at);
  return decls;
}

}  // namespace accelopt::targets
