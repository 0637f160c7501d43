#include "run/config.h"

#include "targets/registry.h"

namespace accelopt::run {

Json ToJson(const RunConfig& c) {
  const auto& s = c.search;
  const auto& m = c.model;
  Json llm = {{"config", c.llm_config},       {"kind", m.kind},
              {"base_url", m.base_url},       {"model", m.model},
              {"api_key_env", m.api_key_env}, {"scripted", m.scripted_path},
              {"exchange", m.exchange_dir},   {"reasoning_effort", m.reasoning_effort}};
  if (m.temperature) llm["temperature"] = *m.temperature;
  if (m.max_tokens) llm["max_tokens"] = *m.max_tokens;
  if (m.thinking_budget_tokens) llm["thinking_budget_tokens"] = *m.thinking_budget_tokens;
  if (m.budget_usd) llm["budget_usd"] = *m.budget_usd;
  return {{"tasks", c.tasks},
          {"memory", c.memory},
          {"shape", c.shape},
          {"demo", c.demo},
          {"anchors", c.anchors},
          {"suite", c.suite_dir},
          {"search",
           {{"iterations", s.iterations},
            {"plans", s.plans},
            {"beam", s.beam},
            {"samples", s.samples},
            {"top_k", s.top_k},
            {"memory_capacity", s.memory_capacity},
            {"max_threshold", s.max_threshold},
            {"min_threshold", s.min_threshold},
            {"fix_rounds", s.fix_rounds},
            {"llm_parallelism", s.llm_parallelism},
            {"proposals", search::ProposalModeName(s.proposals)},
            {"tune_budget", s.tune_budget},
            {"lesson_bytes", s.lesson_bytes}}},
          {"llm", llm},
          {"eval",
           {{"target", c.eval.target},
            {"evaluator", c.eval.evaluator},
            {"seeds", c.eval.seeds},
            {"timeout", c.eval.timeout},
            {"cpus", c.eval.cpus},
            {"bind_openmp", c.eval.bind_openmp}}},
          {"queue",
           {{"enabled", c.queue.enabled}, {"workers", c.queue.workers}, {"machine_class", c.queue.machine_class},
            {"location", c.queue.location},
            {"lease", c.queue.lease},
            {"slurm",
             {{"partition", c.queue.slurm.partition},
              {"gres", c.queue.slurm.gres},
              {"time_limit", c.queue.slurm.time_limit},
              {"account", c.queue.slurm.account},
              {"max_workers", c.queue.slurm.max_workers}}}}}};
}

Result<RunConfig> RunConfigFromJson(const Json& j) {
  RunConfig c;
  try {
    c.tasks = j.at("tasks").get<std::vector<std::string>>();
    c.memory = j.at("memory");
    c.shape = j.at("shape");
    c.demo = j.value("demo", false);
    c.anchors = j.value("anchors", false);
    c.suite_dir = j.value("suite", "");
    const Json& s = j.at("search");
    c.search.iterations = s.at("iterations");
    c.search.plans = s.at("plans");
    c.search.beam = s.at("beam");
    c.search.samples = s.at("samples");
    c.search.top_k = s.at("top_k");
    c.search.memory_capacity = s.at("memory_capacity");
    c.search.max_threshold = s.at("max_threshold");
    c.search.min_threshold = s.at("min_threshold");
    c.search.fix_rounds = s.at("fix_rounds");
    c.search.llm_parallelism = s.at("llm_parallelism");
    // Runs recorded before these settings existed asked one plan at a time,
    // with the default lessons block, and swept no constants.
    auto proposals = search::ProposalModeFromName(s.value("proposals", "sequential"));
    if (!proposals) return Error{"run config: search.proposals: unknown mode '" + s.value("proposals", "") + "'"};
    c.search.proposals = *proposals;
    c.search.lesson_bytes = s.value("lesson_bytes", c.search.lesson_bytes);
    c.search.tune_budget = s.value("tune_budget", 0);
    const Json& l = j.at("llm");
    c.llm_config = l.value("config", "");
    c.model.kind = l.value("kind", "");
    c.model.base_url = l.value("base_url", "");
    c.model.model = l.value("model", "");
    c.model.api_key_env = l.value("api_key_env", "");
    c.model.scripted_path = l.value("scripted", "");
    c.model.exchange_dir = l.value("exchange", "");
    c.model.reasoning_effort = l.value("reasoning_effort", "");
    if (l.contains("temperature")) c.model.temperature = l["temperature"].get<double>();
    if (l.contains("max_tokens")) c.model.max_tokens = l["max_tokens"].get<int>();
    if (l.contains("thinking_budget_tokens")) c.model.thinking_budget_tokens = l["thinking_budget_tokens"].get<int>();
    if (l.contains("budget_usd")) c.model.budget_usd = l["budget_usd"].get<double>();
    const Json& e = j.at("eval");
    c.eval.target = e.value("target", targets::kDefaultTarget);  // runs recorded before there were targets to name
    c.eval.evaluator = e.value("evaluator", "");
    c.eval.seeds = e.value("seeds", 3);
    c.eval.timeout = e.value("timeout", 60.0);
    c.eval.cpus = e.value("cpus", std::vector<int>{});
    c.eval.bind_openmp = e.value("bind_openmp", false);
    if (j.contains("queue")) {  // runs recorded before the queue evaluated here
      const Json& q = j["queue"];
      c.queue.enabled = q.value("enabled", false);
      c.queue.workers = q.value("workers", 0);
      c.queue.machine_class = q.value("machine_class", "");
      c.queue.location = q.value("location", "");
      c.queue.lease = q.value("lease", 30.0);
      if (q.contains("slurm")) {  // runs recorded before workers went to Slurm
        const Json& s = q["slurm"];
        c.queue.slurm.partition = s.value("partition", "");
        c.queue.slurm.gres = s.value("gres", "");
        c.queue.slurm.time_limit = s.value("time_limit", "");
        c.queue.slurm.account = s.value("account", "");
        c.queue.slurm.max_workers = s.value("max_workers", 1);
      }
    }
  } catch (const Json::exception& e) {
    return Error{std::string("run config: ") + e.what()};
  }
  return c;
}

}  // namespace accelopt::run
