#include "cli/llm_setup.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "cli/common.h"

namespace accelopt::cli {

void AddLlmFlags(CLI::App& app, LlmFlags& flags) {
  app.add_option("--config", flags.config_path, "configuration file (default: $ACCELOPT_CONFIG, else ./accelopt.yaml)");
  app.add_option("--backend", flags.override_.kind, "with --base-url: openai (chat completions) or anthropic")
      ->check(CLI::IsMember({"openai", "anthropic"}));
  app.add_option("--base-url", flags.override_.base_url, "model server, e.g. http://127.0.0.1:8000/v1");
  app.add_option("--model", flags.override_.model, "model name (alone: replaces the model of every configured server)");
  app.add_option("--api-key-env", flags.override_.api_key_env, "environment variable holding the API key");
  app.add_option("--scripted", flags.override_.scripted_path, "replay a recorded exchange file (JSON lines)");
  app.add_option("--exchange", flags.override_.exchange_dir, "write prompts to this folder and wait for answers");
  app.add_option("--temperature", flags.override_.temperature, "sampling temperature for every role");
  app.add_option("--max-tokens", flags.override_.max_tokens, "answer token limit for every role");
  app.add_option("--reasoning-effort", flags.override_.reasoning_effort,
                 "low, medium or high, where the server accepts it")
      ->check(CLI::IsMember({"low", "medium", "high"}));
  app.add_option("--thinking-budget", flags.override_.thinking_budget_tokens,
                 "Anthropic extended thinking budget in tokens for every role");
}

void AddBudgetFlag(CLI::App& app, std::optional<double>& budget_usd) {
  app.add_option("--budget", budget_usd,
                 "money budget in dollars for the whole run, resumes included (replaces llm.budget.usd); no new "
                 "model call starts once it is spent")
      ->check([](const std::string& text) -> std::string {
        char* end = nullptr;
        const double usd = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(usd) || usd < 0)
          return "expected dollars, a finite number 0 or more, got '" + text + "'";
        return "";
      });
}

std::string ConfigPathFor(const LlmFlags& flags) {
  if (!flags.config_path.empty()) return flags.config_path;
  if (const char* env = std::getenv("ACCELOPT_CONFIG"); env && *env) return env;
  std::error_code ec;
  return std::filesystem::exists("accelopt.yaml", ec) ? "accelopt.yaml" : "";
}

llm::LlmConfig LlmConfigFor(const LlmFlags& flags) {
  llm::LlmConfig config;
  std::string path = ConfigPathFor(flags);
  if (!path.empty()) {
    auto loaded = llm::LoadLlmConfig(path);
    if (!loaded) throw Exit{kExitError, loaded.error().message};
    config = *loaded;
  }
  if (auto s = llm::ApplyOverride(flags.override_, config); !s) throw Exit{kExitError, s.error().message};
  return config;
}

std::string HowToConfigure() {
  std::string text = "No language model is configured.\n";
  auto servers = llm::ProbeLocalServers();
  if (servers.empty()) {
    text +=
        "Nothing answers on the usual local ports (Ollama 11434, llama.cpp 8080, vLLM 8000, SGLang 30000).\n"
        "Start a server, or give one on the command line:\n"
        "  --base-url http://127.0.0.1:8000/v1 --model MODEL            (any OpenAI-compatible server)\n"
        "  --backend anthropic --base-url https://api.anthropic.com/v1 --model MODEL --api-key-env ANTHROPIC_API_KEY\n"
        "or write an `llm:` section in accelopt.yaml (see docs/llm.md).\n";
    return text;
  }
  text += "These servers answer on this machine:\n";
  for (const auto& s : servers) {
    text += "  " + s.name + " at " + s.base_url + ":";
    for (const auto& m : s.models) text += " " + m;
    text += "\n";
  }
  text += "Use one with --base-url " + servers.front().base_url + " --model " +
          (servers.front().models.empty() ? std::string("MODEL") : servers.front().models.front()) +
          ", or put this in accelopt.yaml:\n\n" + llm::ConfigSnippetFor(servers.front());
  return text;
}

}  // namespace accelopt::cli
