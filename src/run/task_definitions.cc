#include "run/task_definitions.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "service/eval_job.h"

namespace accelopt::run {

Result<Json> TaskDefinitions(const std::vector<const suite::Task*>& tasks, const std::string& shape) {
  Json out = Json::object();
  for (const suite::Task* task : tasks) {
    auto spec = service::TaskSpecOf(*task, shape);
    if (!spec) return Error{"task '" + task->name + "': " + spec.error().message};
    Json files = Json::object();
    for (const auto& [path, contents] : spec->files) files[path] = service::DigestOfFiles({{path, contents}});
    out[task->name] = {{"digest", spec->digest}, {"files", files}};
  }
  return out;
}

namespace {

// The files of one task that differ between `recorded` and `now`, as "task.yaml changed", "x.cpp added".
std::vector<std::string> FileDifferences(const Json& recorded, const Json& now) {
  std::vector<std::string> out;
  for (const auto& [path, digest] : recorded.items()) {
    if (!now.contains(path))
      out.push_back(path + " is gone");
    else if (now[path] != digest)
      out.push_back(path + " changed");
  }
  for (const auto& [path, digest] : now.items())
    if (!recorded.contains(path)) out.push_back(path + " was added");
  return out;
}

}  // namespace

Status CheckTaskDefinitions(const Json& recorded, const std::vector<const suite::Task*>& tasks,
                            const std::string& shape) {
  auto now = TaskDefinitions(tasks, shape);
  if (!now) return now.error();
  std::vector<std::string> problems;
  for (const suite::Task* task : tasks) {
    const Json& current = (*now)[task->name];
    if (!recorded.is_object() || !recorded.contains(task->name)) {
      problems.push_back(fmt::format("task '{}' ({}): the run recorded no definition of it", task->name, task->dir));
      continue;
    }
    const Json& then = recorded[task->name];
    if (then.value("digest", "") == current["digest"]) continue;
    std::vector<std::string> files = then.contains("files") && then["files"].is_object()
                                         ? FileDifferences(then["files"], current["files"])
                                         : std::vector<std::string>{"its files differ"};
    problems.push_back(fmt::format("task '{}' ({}): {}", task->name, task->dir, fmt::join(files, ", ")));
  }
  if (problems.empty()) return Ok{};
  return Error{fmt::format("{}", fmt::join(problems, "; "))};
}

}  // namespace accelopt::run
