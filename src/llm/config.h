#pragma once
/// The `llm:` section of accelopt.yaml: backends, per-role settings, retries,
/// budgets and the price table; plus command-line overrides and the probe of
/// the usual local servers.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/chat_model.h"
#include "llm/llm_client.h"

namespace accelopt::llm {

struct BackendConfig {
  std::string kind;  ///< openai | anthropic | scripted | exchange
  HttpBackendOptions http;
  ScriptedOptions scripted;
  ExchangeOptions exchange;
  int max_concurrency = 4;
};

struct LlmConfig {
  std::map<std::string, BackendConfig> backends;
  std::map<std::string, RoleSettings> roles;
  RetryOptions retry;
  Budget budget;
  std::string prices_path;  ///< "" = the shipped prices/prices.yaml
  bool configured() const { return !backends.empty(); }
};

/// Reads the `llm:` section of a YAML file. A file without one is an empty
/// config. Errors name the file, the field and what was expected.
Result<LlmConfig> LoadLlmConfig(const std::string& path);

/// Command-line choices that replace the file's for this run.
struct ModelOverride {
  std::string kind;  ///< with base_url: a new backend serving every role
  std::string base_url;
  std::string model;  ///< alone: replaces the model of every HTTP backend
  std::string api_key_env;
  std::string scripted_path;  ///< a recording, serving every role
  std::string exchange_dir;   ///< a prompt/answer folder, serving every role
  // Sampling settings for every role (unset = keep the file's).
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::string reasoning_effort;
  std::optional<int> thinking_budget_tokens;
  std::optional<double> budget_usd;  ///< the run's money budget in USD (replaces llm.budget.usd)
};
Status ApplyOverride(const ModelOverride& o, LlmConfig& config);

/// Opens every backend and the price table. Errors name the backend.
Result<std::unique_ptr<LlmClient>> BuildLlmClient(const LlmConfig& config);

/// A model server answering on loopback.
struct DetectedServer {
  std::string name;      ///< "Ollama", "llama.cpp", "vLLM or SGLang"
  std::string base_url;  ///< OpenAI-compatible base URL
  std::vector<std::string> models;
};

/// Probes 127.0.0.1 only: Ollama (11434), llama.cpp (8080), vLLM (8000),
/// SGLang (30000). Never contacts anything else.
std::vector<DetectedServer> ProbeLocalServers(double timeout_seconds = 0.5);

/// An `llm:` section using `server`'s first model for every role.
std::string ConfigSnippetFor(const DetectedServer& server);

}  // namespace accelopt::llm
