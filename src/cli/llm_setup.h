#pragma once
/// Command-line flags that choose and configure the language model, shared
/// by every subcommand that talks to one.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "llm/config.h"

namespace accelopt::cli {

struct LlmFlags {
  std::string config_path;  ///< --config; default $ACCELOPT_CONFIG, else ./accelopt.yaml when present
  llm::ModelOverride override_;
};
void AddLlmFlags(CLI::App& app, LlmFlags& flags);
/// --budget DOLLARS: a run's money budget (optimize and resume).
void AddBudgetFlag(CLI::App& app, std::optional<double>& budget_usd);

/// The configuration from the file and the flags. Exit on a bad file.
llm::LlmConfig LlmConfigFor(const LlmFlags& flags);

/// The path actually read ("" when none).
std::string ConfigPathFor(const LlmFlags& flags);

/// Explains how to configure a model, listing what answers on loopback.
std::string HowToConfigure();

}  // namespace accelopt::cli
