#include "cli/common.h"

#include <algorithm>

#include <fmt/core.h>
#include <sched.h>

#include "core/paths.h"
#include "targets/cpu/hardware_store.h"

namespace accelopt::cli {

void AddSuiteFlag(CLI::App& app, CommonFlags& flags) {
  app.add_option("--suite", flags.suite_dir, "task suite folder (default: ./suite, or $ACCELOPT_SUITE)");
}

std::vector<suite::Task> LoadSuiteOrExit(const std::string& suite_dir) {
  auto tasks = suite::LoadSuite(suite_dir.empty() ? DefaultSuiteDir() : suite_dir);
  if (!tasks) throw Exit{kExitError, tasks.error().message};
  if (tasks->empty())
    throw Exit{kExitError, "no tasks found in " + (suite_dir.empty() ? DefaultSuiteDir() : suite_dir)};
  return std::move(*tasks);
}

std::vector<const suite::Task*> SelectTasks(const std::vector<suite::Task>& tasks,
                                            const std::vector<std::string>& names) {
  std::vector<const suite::Task*> out;
  if (names.empty()) {
    for (const auto& t : tasks) out.push_back(&t);
    return out;
  }
  for (const auto& name : names) {
    if (std::count(names.begin(), names.end(), name) > 1 &&
        std::any_of(out.begin(), out.end(), [&](const suite::Task* t) { return t->name == name; })) {
      fmt::print(stderr, "task '{}' is named more than once: taken once\n", name);
      continue;
    }
    const suite::Task* found = nullptr;
    for (const auto& t : tasks)
      if (t.name == name) found = &t;
    if (!found) {
      std::string known;
      for (const auto& t : tasks) known += (known.empty() ? "" : ", ") + t.name;
      throw Exit{kExitError, "unknown task '" + name + "' (known: " + known + ")"};
    }
    out.push_back(found);
  }
  return out;
}

Result<cpu::Calibration> CalibrateMachine(const cpu::CalibrationOptions& options, bool* saved) {
  *saved = false;
  // Found out before the measurement, not after it.
  if (auto s = CheckWritableDir(DataDir() + "/hardware"); !s)
    return Error{"the hardware profile could not be saved: " + s.error().message +
                 " (set $ACCELOPT_HOME to a writable folder)"};
  fmt::print(stderr,
             "Calibrating: bandwidth, FMA peak, vector peak, OpenBLAS sgemm, in rounds until they hold still "
             "(10-30 seconds)...\n");
  auto calibration = cpu::Calibrate(options);
  if (!calibration) return calibration;
  for (const auto& note : calibration->notes) fmt::print(stderr, "note: {}\n", note);
  if (!calibration->problems.empty()) {
    fmt::print(stderr, "The calibration is not saved as this machine's profile:\n");
    for (const auto& problem : calibration->problems) fmt::print(stderr, "  - {}\n", problem);
    return calibration;
  }
  if (auto s = cpu::SaveHardwareProfile(DataDir() + "/hardware", calibration->profile); !s) return s.error();
  *saved = true;
  return calibration;
}

std::optional<cpu::HardwareProfile> HardwareProfileFor(bool calibrate_if_missing) {
  cpu::MachineIdentity machine = cpu::DetectMachine();
  auto saved = cpu::LoadHardwareProfile(DataDir() + "/hardware", machine.fingerprint);
  if (!saved) throw Exit{kExitError, saved.error().message};
  if (saved->has_value() || !calibrate_if_missing) return *saved;
  fmt::print(stderr, "No hardware profile for this machine yet.\n");
  bool fresh = false;
  auto calibration = CalibrateMachine(cpu::CalibrationOptions{}, &fresh);
  if (!calibration) throw Exit{kExitError, calibration.error().message};
  if (fresh) return calibration->profile;
  fmt::print(stderr,
             "Going on without a hardware profile: kernels are checked and timed, but no percentage of peak is "
             "computed. Run `accelopt calibrate` when the machine is idle.\n");
  return std::nullopt;
}

}  // namespace accelopt::cli

namespace accelopt::cli {

void AddEvalFlags(CLI::App& app, EvalFlags& flags) {
  app.add_option("--seeds", flags.seeds, "correctness runs, each with fresh random inputs")->check(CLI::Range(1, 100));
  app.add_option("--timeout", flags.timeout, "wall-clock limit per child process, seconds")->check(CLI::PositiveNumber);
  app.add_option("--cpus", flags.cpus, "cores the kernel runs on, e.g. --cpus 0,1 (default: all allowed)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            return !value.empty() && value.find_first_not_of("0123456789") == std::string::npos
                       ? ""
                       : "a core is a number from 0 up, got '" + value + "'";
          },
          "CORE", "core number"));
  // Checked once the command line is parsed, before the command does anything.
  app.parse_complete_callback([&flags] {
    for (size_t i = 0; i < flags.cpus.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (flags.cpus[i] == flags.cpus[j])
          throw CLI::ValidationError("--cpus", fmt::format("core {} is named twice", flags.cpus[i]));
  });
  app.add_flag("--bind-openmp", flags.bind_openmp,
               "bind each OpenMP thread to one core (also pins the main thread, which confines OpenBLAS and "
               "std::thread workers to one core)");
}

cpu::CpuTargetOptions TargetOptionsFor(const std::optional<cpu::HardwareProfile>& hardware, const EvalFlags& flags) {
  cpu::CpuTargetOptions options;
  if (hardware) {
    options.rates = cpu::RatesOf(*hardware);
    options.hardware = *hardware;
    options.on_hardware_raised = [](const cpu::HardwareProfile& raised) {
      const cpu::PeakEvidence& e = raised.evidence.back();
      fmt::print(stderr,
                 "note: kernel {} ({}) proved this machine's {} is at least {:.4g} (calibrated {:.4g}): raised\n",
                 e.kernel_hash, e.task, e.figure, e.value, e.previous);
      if (auto s = cpu::SaveHardwareProfile(DataDir() + "/hardware", raised); !s)
        fmt::print(stderr, "warning: the raised profile was not saved: {}\n", s.error().message);
    };
  }
  options.kernel_compile.cache_dir = CacheDir() + "/build";
  options.seeds = flags.seeds;
  options.wall_seconds = flags.timeout;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c : flags.cpus)
      if (c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed))
        throw Exit{kExitError, fmt::format("--cpus: core {} is not available to this process ({} cores allowed)", c,
                                           CPU_COUNT(&allowed))};
  options.cpus = flags.cpus;
  options.bind_openmp = flags.bind_openmp;
  return options;
}

}  // namespace accelopt::cli
