#include "service/eval_job.h"

#include <filesystem>
#include <limits>

#include "core/hash.h"

namespace accelopt::service {
namespace fs = std::filesystem;

std::string DigestOfFiles(const std::map<std::string, std::string>& files) {
  ContentHasher h;
  h.Add("task-files/v2");
  for (const auto& [path, contents] : files)
    h.Add(path).Add(std::string_view("\0", 1)).Add(std::to_string(contents.size())).Add("\n").Add(contents);
  return h.Hex();
}

namespace {

// The regular files under `dir`, by path relative to it.
Result<std::map<std::string, std::string>> FilesUnder(const std::string& dir, size_t max_bytes) {
  std::map<std::string, std::string> files;
  size_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    auto contents = ReadFile(it->path().string());
    if (!contents) return contents.error();
    total += contents->size();
    if (total > max_bytes)
      return Error{"task folder " + dir + " holds more than " + std::to_string(max_bytes) +
                   " bytes: a job carries a task's files, not a data set"};
    files[fs::relative(it->path(), dir).string()] = std::move(*contents);
  }
  if (ec) return Error{"cannot list task folder " + dir + ": " + ec.message()};
  return files;
}

template <typename T>
Result<T> Field(const Json& j, const char* name, const char* what) {
  try {
    return j.at(name).get<T>();
  } catch (const Json::exception&) {
    return Error{std::string(what) + ": field '" + name + "' is missing or mistyped"};
  }
}

Json SourceToJson(const JobSource& s) {
  return {{"label", s.label}, {"source", s.source}, {"hash", s.hash}, {"libraries", s.libraries}};
}

}  // namespace

const char* JobKindName(JobKind kind) { return kind == JobKind::kCompare ? "compare" : "evaluate"; }

Result<TaskSpec> TaskSpecOf(const suite::Task& task, const std::string& shape, size_t max_bytes) {
  auto bound = suite::Bind(task, shape);
  if (!bound) return bound.error();
  auto files = FilesUnder(task.dir, max_bytes);
  if (!files) return files.error();
  TaskSpec spec{task.name, shape, task.dir, std::move(*files), "", Json::object()};
  spec.digest = DigestOfFiles(spec.files);
  for (const auto& [name, value] : bound->params) spec.parameters[name] = value;
  return spec;
}

std::string EvalJob::Key() const {
  std::string hashes;
  for (const JobSource& s : sources) hashes += (hashes.empty() ? "" : "-") + s.hash;
  return std::string(JobKindName(kind)) + "/" + task.name + "@" + task.digest + "/" + task.shape + "/" + target +
         "@" + machine_class + "/" + hashes;
}

Json EvalJob::ToJson() const {
  Json sources_json = Json::array();
  for (const JobSource& s : sources) sources_json.push_back(SourceToJson(s));
  return {{"version", version},
          {"kind", JobKindName(kind)},
          {"task",
           {{"name", task.name},
            {"shape", task.shape},
            {"origin", task.origin},
            {"files", task.files},
            {"digest", task.digest},
            {"parameters", task.parameters}}},
          {"sources", sources_json},
          {"target", target},
          {"settings", settings},
          {"machine_class", machine_class}};
}

Result<EvalJob> EvalJob::FromJson(const Json& j) {
  EvalJob job;
  auto version = Field<int>(j, "version", "job");
  if (!version) return version.error();
  if (*version != kJobVersion)
    return Error{"job: version " + std::to_string(*version) + " cannot be read by this accelopt (it reads version " +
                 std::to_string(kJobVersion) + ")"};
  try {
    const std::string kind = j.at("kind").get<std::string>();
    if (kind != "evaluate" && kind != "compare") return Error{"job: unknown kind '" + kind + "'"};
    job.kind = kind == "compare" ? JobKind::kCompare : JobKind::kEvaluate;
    const Json& t = j.at("task");
    job.task = {t.at("name"), t.at("shape"), t.at("origin"), t.at("files"), t.at("digest"), t.at("parameters")};
    for (const Json& s : j.at("sources"))
      job.sources.push_back({s.at("label"), s.at("source"), s.at("hash"), s.at("libraries")});
    job.target = j.at("target").get<std::string>();
    job.settings = j.at("settings");
    job.machine_class = j.at("machine_class").get<std::string>();
  } catch (const Json::exception& e) {
    return Error{std::string("job: a field is missing or mistyped: ") + e.what()};
  }
  if (DigestOfFiles(job.task.files) != job.task.digest) return Error{"job: the task's files do not match their digest"};
  const size_t expected = job.kind == JobKind::kCompare ? 2 : 1;
  if (job.sources.size() != expected)
    return Error{"job: a " + std::string(JobKindName(job.kind)) + " job has " + std::to_string(expected) +
                 " source(s), this one " + std::to_string(job.sources.size())};
  return job;
}

Json EvalOutcome::ToJson() const {
  Json profiles_json = Json::array();
  for (const Profile& p : profiles) profiles_json.push_back(p.ToJson());
  Json j = {{"profiles", profiles_json},
            {"worker", worker},
            {"device", device},
            {"machine", machine},
            {"seconds", seconds}};
  if (speedup) j["speedup"] = accelopt::ToJson(*speedup);
  return j;
}

Result<EvalOutcome> EvalOutcome::FromJson(const Json& j) {
  EvalOutcome out;
  try {
    for (const Json& p : j.at("profiles")) {
      auto profile = ProfileFromJson(p);
      if (!profile) return Error{"outcome: " + profile.error().message};
      out.profiles.push_back(std::move(*profile));
    }
    if (j.contains("speedup") && !j["speedup"].is_null()) {
      auto speedup = PairedSpeedupFromJson(j["speedup"]);
      if (!speedup) return Error{"outcome: " + speedup.error().message};
      out.speedup = *speedup;
    }
    out.worker = j.value("worker", "");
    out.device = j.value("device", "");
    out.machine = j.value("machine", "");
    out.seconds = j.value("seconds", 0.0);
  } catch (const Json::exception& e) {
    return Error{std::string("outcome: a field is missing or mistyped: ") + e.what()};
  }
  return out;
}

Json SettingsToJson(const targets::TargetSettings& s) {
  return {{"seeds", s.seeds},
          {"timeout", s.timeout},
          {"options", s.options},
          {"hardware", s.hardware},
          {"calibrate_if_missing", s.calibrate_if_missing}};
}

Status ApplySettings(const Json& data, targets::TargetSettings& s) {
  try {
    s.seeds = data.value("seeds", s.seeds);
    s.timeout = data.value("timeout", s.timeout);
    if (data.contains("options")) {
      if (!data["options"].is_object()) return Error{"job settings: 'options' is not an object"};
      s.options = data["options"];
    }
    if (data.contains("hardware")) s.hardware = data.at("hardware");
    s.calibrate_if_missing = data.value("calibrate_if_missing", s.calibrate_if_missing);
  } catch (const Json::exception& e) {
    return Error{std::string("job settings: ") + e.what()};
  }
  return Ok{};
}

Result<suite::Task> LoadTaskSpec(const TaskSpec& spec, const std::string& cache_dir) {
  if (!spec.origin.empty()) {
    std::error_code ec;
    if (fs::is_directory(spec.origin, ec)) {
      auto files = FilesUnder(spec.origin, std::numeric_limits<size_t>::max());
      if (files && DigestOfFiles(*files) == spec.digest) return suite::LoadTask(spec.origin);
    }
  }
  // A copy named by its digest; its folder is named as the task, as a task folder must be.
  const fs::path dir = fs::path(cache_dir) / "job-tasks" / spec.digest / spec.name;
  for (const auto& [path, contents] : spec.files) {
    const fs::path file = dir / path;
    if (fs::path(path).is_absolute() || path.find("..") != std::string::npos)
      return Error{"job task " + spec.name + ": file path '" + path + "' leaves the task folder"};
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) return Error{"cannot create " + file.parent_path().string() + ": " + ec.message()};
    if (Status s = WriteFile(file.string(), contents); !s) return s.error();
  }
  auto task = suite::LoadTask(dir.string());
  if (!task) return Error{"job task " + spec.name + " (a copy of " + spec.origin + "): " + task.error().message};
  return task;
}

}  // namespace accelopt::service
