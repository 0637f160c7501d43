#pragma once
/// cli: one file per subcommand; this header holds what several of them share.
/// Only cli/ turns errors into messages and exit codes.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/result.h"
#include "suite/task.h"
#include "targets/cpu/calibrate.h"
#include "targets/cpu/cpu_target.h"

namespace accelopt::cli {

/// Exit codes: 0 success, 1 engine or input error, 2 usage, 3 a kernel's verdict was not ok.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitVerdict = 3;

/// Thrown by subcommand callbacks to end with a message and an exit code.
struct Exit {
  int code;
  std::string message;
};

/// Options every subcommand that reads the suite shares.
struct CommonFlags {
  std::string suite_dir;
};
void AddSuiteFlag(CLI::App& app, CommonFlags& flags);

/// Options every subcommand that evaluates kernels shares.
struct EvalFlags {
  int seeds = 3;
  double timeout = 60;
  std::vector<int> cpus;
  bool bind_openmp = false;
};
void AddEvalFlags(CLI::App& app, EvalFlags& flags);

/// The suite, or Exit with the loader's message.
std::vector<suite::Task> LoadSuiteOrExit(const std::string& suite_dir);
/// Selected tasks by name (all when `names` is empty); unknown names exit with the known list.
std::vector<const suite::Task*> SelectTasks(const std::vector<suite::Task>& tasks,
                                            const std::vector<std::string>& names);

/// Calibrates this machine (progress, notes and problems on stderr) and saves
/// the profile when it passes its checks (`saved` says whether it did). An
/// Error when the device lock or the profile folder cannot be used.
Result<cpu::Calibration> CalibrateMachine(const cpu::CalibrationOptions& options, bool* saved);

/// The saved profile of this machine. Without one and with
/// `calibrate_if_missing`, calibrates; a calibration that fails its checks is
/// not saved nor used: nullopt (no scoring), with a notice on stderr.
std::optional<cpu::HardwareProfile> HardwareProfileFor(bool calibrate_if_missing);

void RegisterTasks(CLI::App& app);
void RegisterEval(CLI::App& app);
void RegisterCompare(CLI::App& app);
void RegisterCalibrate(CLI::App& app);
void RegisterBench(CLI::App& app);
void RegisterLlm(CLI::App& app);
void RegisterOptimize(CLI::App& app);
void RegisterStoreCommands(CLI::App& app);

}  // namespace accelopt::cli

namespace accelopt::cli {

/// Evaluation settings from the machine's profile (no scoring without one) and the flags.
cpu::CpuTargetOptions TargetOptionsFor(const std::optional<cpu::HardwareProfile>& hardware, const EvalFlags& flags);

}  // namespace accelopt::cli
