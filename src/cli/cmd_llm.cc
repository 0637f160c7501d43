// accelopt llm: check the model configuration (ping) and find local servers (detect).

#include <fmt/core.h>

#include "cli/common.h"
#include "cli/llm_setup.h"

namespace accelopt::cli {
namespace {

std::string CostText(const llm::CallRecord& r) {
  if (!r.error.empty()) return "-";
  return r.cost_usd ? fmt::format("${:.6f}", *r.cost_usd)
                    : "unknown (model '" + r.model + "' is not in the price table)";
}

void PrintRecord(const llm::CallRecord& r) {
  fmt::print("role         {}\n", r.agent_role);
  fmt::print("backend      {}\n", r.backend);
  fmt::print("model        {}\n", r.model);
  fmt::print("latency      {:.3f} s ({} attempt{})\n", r.latency_seconds, r.attempts.size(),
             r.attempts.size() == 1 ? "" : "s");
  for (const auto& a : r.attempts)
    if (a.outcome != "ok")
      fmt::print("  attempt {}: {} {} (waited {:.2f} s before)\n", a.number, a.outcome, a.message, a.waited_seconds);
  if (r.error.empty()) {
    fmt::print("tokens       {} in, {} out ({} reasoning{}){}\n", r.usage.input_tokens, r.usage.output_tokens,
               r.usage.reasoning_tokens,
               r.usage.reasoning_estimated && !r.usage.estimated ? ", estimated from its text" : "",
               r.usage.estimated ? ", estimated: the server reported none" : "");
    if (!r.reasoning.empty()) {
      std::string reasoning = r.reasoning.size() > 200 ? r.reasoning.substr(0, 200) + "..." : r.reasoning;
      fmt::print("reasoning    {}\n", reasoning);
    }
    fmt::print("cost         {}\n", CostText(r));
    std::string answer = r.response.size() > 200 ? r.response.substr(0, 200) + "..." : r.response;
    fmt::print("answer       {}\n", answer);
  } else {
    fmt::print("error        {}: {}\n", r.error_kind, r.error);
  }
}

void RegisterPing(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("ping",
                                    "send one short prompt to the model configured for a role and report "
                                    "model, latency, tokens and cost");
  static LlmFlags flags;
  static std::string role = "planner", prompt = "Reply with the single word: pong";
  static bool json = false;
  cmd->add_option("--role", role, "agent role: planner, executor, fixer, summarizer");
  cmd->add_option("--prompt", prompt, "the prompt to send");
  cmd->add_flag("--json", json, "print the call record as JSON");
  AddLlmFlags(*cmd, flags);
  cmd->callback([] {
    llm::LlmConfig config = LlmConfigFor(flags);
    if (!config.configured()) throw Exit{kExitError, HowToConfigure()};
    auto client = llm::BuildLlmClient(config);
    if (!client) throw Exit{kExitError, client.error().message};
    auto answer = (*client)->Chat(role, {{"user", prompt}});
    auto records = (*client)->records();
    if (records.empty()) throw Exit{kExitError, answer ? "no call was recorded" : answer.error().message};
    if (json)
      fmt::print("{}\n", DumpJson(records.back().ToJson(), 2));
    else
      PrintRecord(records.back());
    if (!answer) throw Exit{kExitError, ""};
  });
}

void RegisterDetect(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("detect",
                                    "list model servers answering on loopback (Ollama, llama.cpp, vLLM, "
                                    "SGLang); contacts nothing else");
  static bool json = false;
  cmd->add_flag("--json", json, "print JSON: [{name, base_url, models}] (empty when none answers)");
  cmd->callback([] {
    auto servers = llm::ProbeLocalServers();
    if (json) {
      Json out = Json::array();
      for (const auto& s : servers) out.push_back({{"name", s.name}, {"base_url", s.base_url}, {"models", s.models}});
      fmt::print("{}\n", DumpJson(out, 2));
      return;
    }
    if (servers.empty()) {
      fmt::print(
          "No model server answers on 127.0.0.1 ports 11434 (Ollama), 8080 (llama.cpp), 8000 (vLLM), "
          "30000 (SGLang).\n");
      return;
    }
    for (const auto& s : servers) {
      fmt::print("{} at {}\n", s.name, s.base_url);
      for (const auto& m : s.models) fmt::print("  model {}\n", m);
    }
    fmt::print("\nTo use the first, put this in accelopt.yaml:\n\n{}", llm::ConfigSnippetFor(servers.front()));
  });
}

}  // namespace

void RegisterLlm(CLI::App& app) {
  auto* cmd = app.add_subcommand("llm", "language model configuration: ping, detect");
  cmd->require_subcommand(1);
  RegisterPing(*cmd);
  RegisterDetect(*cmd);
}

}  // namespace accelopt::cli
