#include "llm/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/core.h>

#include "core/json_io.h"
#include "core/paths.h"
#include "llm/http_client.h"

namespace accelopt::llm {
namespace {

// YAML reading with errors that name the file and the field.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  Error Fail(const std::string& field, const YAML::Node& node, const std::string& what) const {
    std::string where = file_ + ": field '" + field + "'";
    if (node.IsDefined() && node.Mark().line >= 0) where += " (line " + std::to_string(node.Mark().line + 1) + ")";
    return Error{where + ": " + what};
  }
  /// A key of `node` not in `known` (a misspelt `budjet:`) is an error naming it and its line.
  Status OnlyKnown(const YAML::Node& node, const std::string& field, std::initializer_list<const char*> known) const {
    if (!node.IsMap()) return Ok{};
    for (const auto& item : node) {
      const std::string key = item.first.Scalar();
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) != known.end()) continue;
      std::string names;
      for (const char* k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      return Fail(field.empty() ? key : field + "." + key, item.first, "unknown key (known: " + names + ")");
    }
    return Ok{};
  }
  /// A scalar of type T; a text where a number belongs, a list where a value
  /// belongs, or a number that is NaN or infinite is an error naming the field.
  template <typename T>
  Status Get(const YAML::Node& parent, const char* key, const std::string& field, T& out) const {
    YAML::Node node = parent[key];
    if (!node.IsDefined() || node.IsNull()) return Ok{};
    const char* expected = std::is_same_v<T, bool>       ? "expected true or false"
                           : std::is_integral_v<T>       ? "expected a whole number"
                           : std::is_floating_point_v<T> ? "expected a finite number"
                                                         : "expected a text value";
    try {
      if (!node.IsScalar()) return Fail(field + "." + key, node, expected);
      out = node.as<T>();
    } catch (const YAML::Exception&) {
      return Fail(field + "." + key, node, expected);
    }
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(out)) return Fail(field + "." + key, node, expected);
    return Ok{};
  }
  /// As Get, and the number must be at least `least` (`strict`: above it).
  template <typename T>
  Status GetAtLeast(const YAML::Node& parent, const char* key, const std::string& field, T& out, T least,
                    bool strict) const {
    if (auto s = Get(parent, key, field, out); !s) return s;
    if (!parent[key].IsDefined() || parent[key].IsNull()) return Ok{};
    if (out < least || (strict && out == least))
      return Fail(field + "." + key, parent[key],
                  fmt::format("must be {} {}, got {}", strict ? "above" : "at least", least, out));
    return Ok{};
  }
  template <typename T>
  Status GetOptionalAtLeast(const YAML::Node& parent, const char* key, const std::string& field, std::optional<T>& out,
                            T least, bool strict) const {
    if (!parent[key].IsDefined() || parent[key].IsNull()) return Ok{};
    T value{};
    if (auto s = GetAtLeast(parent, key, field, value, least, strict); !s) return s;
    out = value;
    return Ok{};
  }

 private:
  std::string file_;
};

std::string ToJsonText(const YAML::Node& node) {
  // YAML -> JSON for extra_body: scalars that look like numbers or booleans stay typed.
  if (node.IsMap()) {
    Json j = Json::object();
    for (const auto& item : node) j[item.first.as<std::string>()] = Json::parse(ToJsonText(item.second));
    return DumpJson(j);
  }
  if (node.IsSequence()) {
    Json j = Json::array();
    for (const auto& item : node) j.push_back(Json::parse(ToJsonText(item)));
    return DumpJson(j);
  }
  std::string s = node.Scalar();
  Json typed = Json::parse(s, nullptr, false);
  if (!typed.is_discarded() && (typed.is_number() || typed.is_boolean() || typed.is_null())) return DumpJson(typed);
  return DumpJson(Json(s));
}

Result<BackendConfig> ReadBackend(const Reader& r, const std::string& name, const YAML::Node& node) {
  std::string field = "llm.backends." + name;
  if (!node.IsMap()) return r.Fail(field, node, "expected a mapping");
  BackendConfig b;
  if (auto s = r.OnlyKnown(node, field,
                           {"kind", "base_url", "model", "api_key_env", "timeout_seconds", "connect_timeout_seconds",
                            "max_concurrency", "path", "dir", "answer_timeout_seconds", "extra_body"});
      !s)
    return s.error();
  if (auto s = r.Get(node, "kind", field, b.kind); !s) return s.error();
  if (b.kind != "openai" && b.kind != "anthropic" && b.kind != "scripted" && b.kind != "exchange")
    return r.Fail(field + ".kind", node["kind"],
                  "expected openai, anthropic, scripted or exchange, got '" + b.kind + "'");
  Status s = Ok{};
  if (s) s = r.Get(node, "base_url", field, b.http.base_url);
  if (s) s = r.Get(node, "model", field, b.http.model);
  if (s) s = r.Get(node, "api_key_env", field, b.http.api_key_env);
  if (s) s = r.GetAtLeast(node, "timeout_seconds", field, b.http.timeout_seconds, 0.0, true);
  if (s) s = r.GetAtLeast(node, "connect_timeout_seconds", field, b.http.connect_timeout_seconds, 0.0, true);
  if (s) s = r.Get(node, "max_concurrency", field, b.max_concurrency);
  if (s) s = r.Get(node, "path", field, b.scripted.path);
  if (s) s = r.Get(node, "dir", field, b.exchange.dir);
  if (s) s = r.GetAtLeast(node, "answer_timeout_seconds", field, b.exchange.timeout_seconds, 0.0, true);
  if (!s) return s.error();
  if (node["extra_body"]) {
    if (!node["extra_body"].IsMap()) return r.Fail(field + ".extra_body", node["extra_body"], "expected a mapping");
    b.http.extra_body_json = ToJsonText(node["extra_body"]);
  }
  if (!b.http.model.empty()) b.scripted.model = b.exchange.model = b.http.model;
  if (b.max_concurrency < 1) return r.Fail(field + ".max_concurrency", node["max_concurrency"], "must be at least 1");
  return b;
}

Result<RoleSettings> ReadRole(const Reader& r, const std::string& name, const YAML::Node& node) {
  std::string field = "llm.roles." + name;
  if (!node.IsMap()) return r.Fail(field, node, "expected a mapping");
  RoleSettings role;
  Status s =
      r.OnlyKnown(node, field, {"backend", "temperature", "max_tokens", "reasoning_effort", "thinking_budget_tokens"});
  if (s) s = r.Get(node, "backend", field, role.backend);
  if (s) s = r.GetOptionalAtLeast(node, "temperature", field, role.temperature, 0.0, false);
  if (s) s = r.GetOptionalAtLeast(node, "max_tokens", field, role.max_tokens, 0, true);
  if (s) s = r.Get(node, "reasoning_effort", field, role.reasoning_effort);
  if (s) s = r.GetAtLeast(node, "thinking_budget_tokens", field, role.thinking_budget_tokens, 0, false);
  if (!s) return s.error();
  if (role.backend.empty()) return r.Fail(field + ".backend", node, "missing: which backend serves this role");
  return role;
}

}  // namespace

Result<LlmConfig> LoadLlmConfig(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error{path + ": cannot read the configuration file"};
  } catch (const YAML::Exception& e) {
    return Error{path + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  LlmConfig config;
  if (!root || root.IsNull()) return config;  // an empty file
  if (!root.IsMap())
    return Error{path + ": expected a mapping at the top level (with an `llm:` section), got " +
                 (root.IsScalar() ? "a single value" : "a list")};
  YAML::Node llm = root["llm"];
  Reader r(path);
  // accelopt.yaml holds the `llm:` section only: anything else is a misspelling, never a setting left out.
  if (auto s = r.OnlyKnown(root, "", {"llm"}); !s) return s.error();
  if (!llm) return config;
  if (!llm.IsMap()) return r.Fail("llm", llm, "expected a mapping with `backends:` and `roles:`");
  if (auto s = r.OnlyKnown(llm, "llm", {"backends", "roles", "retry", "budget", "prices"}); !s) return s.error();
  for (const char* section : {"backends", "roles"})
    if (llm[section] && !llm[section].IsMap())
      return r.Fail(std::string("llm.") + section, llm[section], "expected a mapping of names to settings");
  for (const char* section : {"retry", "budget"})
    if (llm[section] && !llm[section].IsMap())
      return r.Fail(std::string("llm.") + section, llm[section], "expected a mapping");
  try {
    if (llm["backends"])
      for (const auto& item : llm["backends"]) {
        auto b = ReadBackend(r, item.first.as<std::string>(), item.second);
        if (!b) return b.error();
        config.backends[item.first.as<std::string>()] = *b;
      }
    if (llm["roles"])
      for (const auto& item : llm["roles"]) {
        auto role = ReadRole(r, item.first.as<std::string>(), item.second);
        if (!role) return role.error();
        if (!config.backends.count(role->backend))
          return r.Fail("llm.roles." + item.first.as<std::string>() + ".backend", item.second,
                        "names backend '" + role->backend + "', which llm.backends does not define");
        config.roles[item.first.as<std::string>()] = *role;
      }
    Status s = Ok{};
    if (llm["retry"]) {
      const YAML::Node& n = llm["retry"];
      if (s) s = r.OnlyKnown(n, "llm.retry", {"max_attempts", "base_delay_seconds", "max_delay_seconds"});
      if (s) s = r.GetAtLeast(n, "max_attempts", "llm.retry", config.retry.max_attempts, 1, false);
      if (s) s = r.GetAtLeast(n, "base_delay_seconds", "llm.retry", config.retry.base_delay_seconds, 0.0, false);
      if (s) s = r.GetAtLeast(n, "max_delay_seconds", "llm.retry", config.retry.max_delay_seconds, 0.0, false);
    }
    if (llm["budget"]) {
      const YAML::Node& n = llm["budget"];
      if (s) s = r.OnlyKnown(n, "llm.budget", {"usd", "tokens", "wall_seconds"});
      if (s) s = r.GetOptionalAtLeast(n, "usd", "llm.budget", config.budget.usd, 0.0, false);
      if (s) s = r.GetOptionalAtLeast(n, "tokens", "llm.budget", config.budget.tokens, 0L, true);
      if (s) s = r.GetOptionalAtLeast(n, "wall_seconds", "llm.budget", config.budget.wall_seconds, 0.0, true);
    }
    if (s) s = r.Get(llm, "prices", "llm", config.prices_path);
    if (!s) return s.error();
  } catch (const YAML::Exception& e) {
    return Error{path + ": malformed at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  if (config.roles.empty() && config.backends.size() == 1)
    config.roles["default"] = RoleSettings{config.backends.begin()->first};
  return config;
}

namespace {

void ApplySampling(const ModelOverride& o, LlmConfig& config) {
  for (auto& [name, role] : config.roles) {
    if (o.temperature) role.temperature = o.temperature;
    if (o.max_tokens) role.max_tokens = o.max_tokens;
    if (!o.reasoning_effort.empty()) role.reasoning_effort = o.reasoning_effort;
    if (o.thinking_budget_tokens) role.thinking_budget_tokens = *o.thinking_budget_tokens;
  }
}

Status ApplyBackend(const ModelOverride& o, LlmConfig& config) {
  BackendConfig b;
  if (!o.scripted_path.empty()) {
    b.kind = "scripted";
    b.scripted.path = o.scripted_path;
  } else if (!o.exchange_dir.empty()) {
    b.kind = "exchange";
    b.exchange.dir = o.exchange_dir;
  } else if (!o.base_url.empty()) {
    b.kind = o.kind.empty() ? "openai" : o.kind;
    b.http.base_url = o.base_url;
    b.http.model = o.model;
    b.http.api_key_env = o.api_key_env;
    if (b.http.model.empty()) return Error{"--base-url needs --model (which model the server should run)"};
  } else {
    if (!o.model.empty())
      for (auto& [name, backend] : config.backends) backend.http.model = o.model;
    if (!o.kind.empty() || !o.api_key_env.empty())
      return Error{"--backend and --api-key-env need --base-url (where the server is)"};
    return Ok{};
  }
  config.backends["command-line"] = b;
  // The command line serves every role, including roles the file configured.
  for (auto& [name, role] : config.roles) role.backend = "command-line";
  config.roles["default"].backend = "command-line";
  return Ok{};
}

}  // namespace

Status ApplyOverride(const ModelOverride& o, LlmConfig& config) {
  if (o.budget_usd && (!std::isfinite(*o.budget_usd) || *o.budget_usd < 0))
    return Error{fmt::format("--budget: expected a finite number of dollars, 0 or more, got {}", *o.budget_usd)};
  if (auto s = ApplyBackend(o, config); !s) return s;
  if (o.budget_usd) config.budget.usd = o.budget_usd;
  ApplySampling(o, config);
  return Ok{};
}

Result<std::unique_ptr<LlmClient>> BuildLlmClient(const LlmConfig& config) {
  std::map<std::string, LlmClient::Backend> backends;
  for (const auto& [name, b] : config.backends) {
    Result<std::unique_ptr<ChatModel>> model = Error{"unknown kind"};
    if (b.kind == "openai")
      model = OpenOpenAiChatModel(b.http);
    else if (b.kind == "anthropic")
      model = OpenAnthropicChatModel(b.http);
    else if (b.kind == "scripted")
      model = OpenScriptedChatModel(b.scripted);
    else if (b.kind == "exchange")
      model = OpenExchangeChatModel(b.exchange);
    if (!model) return Error{"backend '" + name + "' (" + b.kind + "): " + model.error().message};
    backends[name] = LlmClient::Backend{std::move(*model), b.max_concurrency};
  }
  std::string prices_path = config.prices_path.empty() ? ProjectDataPath("prices/prices.yaml") : config.prices_path;
  auto prices = PriceTable::Load(prices_path);
  if (!prices) return prices.error();
  return std::make_unique<LlmClient>(std::move(backends), config.roles, config.retry, config.budget, *prices);
}

std::vector<DetectedServer> ProbeLocalServers(double timeout_seconds) {
  struct Probe {
    const char* name;
    int port;
    const char* list_path;  // lists the models
    bool ollama_tags;
  };
  const Probe probes[] = {{"Ollama", 11434, "/api/tags", true},
                          {"llama.cpp", 8080, "/v1/models", false},
                          {"vLLM", 8000, "/v1/models", false},
                          {"SGLang", 30000, "/v1/models", false}};
  std::vector<DetectedServer> found;
  for (const auto& p : probes) {
    std::string root = "http://127.0.0.1:" + std::to_string(p.port);
    HttpRequest request{"GET", root + p.list_path, {}, "", timeout_seconds, timeout_seconds, 1 << 20};
    HttpResult result = PerformHttp(request);
    if (!result.response || result.response->status != 200) continue;
    DetectedServer server{p.name, root + "/v1", {}};
    Json j = Json::parse(result.response->body, nullptr, false);
    const char* list = p.ollama_tags ? "models" : "data";
    const char* key = p.ollama_tags ? "name" : "id";
    if (j.is_object() && j.contains(list) && j[list].is_array())
      for (const auto& m : j[list])
        if (m.is_object() && m.contains(key) && m[key].is_string()) server.models.push_back(m[key]);
    found.push_back(server);
  }
  return found;
}

std::string ConfigSnippetFor(const DetectedServer& server) {
  std::ostringstream out;
  out << "llm:\n"
      << "  backends:\n"
      << "    local:\n"
      << "      kind: openai\n"
      << "      base_url: " << server.base_url << "\n"
      << "      model: " << (server.models.empty() ? "MODEL-NAME" : server.models.front()) << "\n"
      << "  roles:\n"
      << "    default: {backend: local}\n";
  return out.str();
}

}  // namespace accelopt::llm
