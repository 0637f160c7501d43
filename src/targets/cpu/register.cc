#include "targets/cpu/register.h"

#include <filesystem>

#include <fmt/core.h>

#include "core/paths.h"
#include "eval/machine.h"
#include "eval/sandbox.h"
#include "targets/cpu/hardware_store.h"

namespace accelopt::cpu {
namespace {

std::string DataDirOf(const targets::TargetSettings& settings) {
  return settings.data_dir.empty() ? DataDir() : settings.data_dir;
}

std::string CacheDirOf(const targets::TargetSettings& settings) {
  return settings.cache_dir.empty() ? CacheDir() : settings.cache_dir;
}

}  // namespace

Result<Calibration> CalibrateAndSave(const CalibrationOptions& options, const std::string& data_dir,
                                     const std::function<void(const std::string&)>& say, bool* saved) {
  *saved = false;
  // Found out before the measurement, not after it.
  if (auto s = CheckWritableDir(data_dir + "/hardware"); !s)
    return Error{"the hardware profile could not be saved: " + s.error().message +
                 " (set $ACCELOPT_HOME to a writable folder)"};
  say("Calibrating: bandwidth, FMA peak, vector peak, OpenBLAS sgemm, in rounds until they hold still "
      "(10-30 seconds)...");
  auto calibration = Calibrate(options);
  if (!calibration) return calibration;
  for (const auto& note : calibration->notes) say("note: " + note);
  if (!calibration->problems.empty()) {
    std::string text = "The calibration is not saved as this machine's profile:";
    for (const auto& problem : calibration->problems) text += "\n  - " + problem;
    say(text);
    return calibration;
  }
  if (auto s = SaveHardwareProfile(data_dir + "/hardware", calibration->profile); !s) return s.error();
  *saved = true;
  return calibration;
}

Result<std::optional<HardwareProfile>> HardwareFor(const targets::TargetSettings& settings) {
  if (!settings.hardware.is_null()) {
    auto recorded = HardwareProfileFromJson(settings.hardware);
    if (!recorded) return Error{"the recorded hardware profile: " + recorded.error().message};
    return std::optional<HardwareProfile>(*recorded);
  }
  auto saved = LoadHardwareProfile(DataDirOf(settings) + "/hardware", DetectMachine().fingerprint);
  if (!saved) return saved.error();
  if (saved->has_value() || !settings.calibrate_if_missing) return *saved;
  settings.say("No hardware profile for this machine yet.");
  bool fresh = false;
  auto calibration = CalibrateAndSave(CalibrationOptions{}, DataDirOf(settings), settings.say, &fresh);
  if (!calibration) return calibration.error();
  if (fresh) return std::optional<HardwareProfile>(calibration->profile);
  settings.say(
      "Going on without a hardware profile: kernels are checked and timed, but no percentage of peak is "
      "computed. Run `accelopt calibrate` when the machine is idle.");
  return std::optional<HardwareProfile>{};
}

Result<CpuTargetOptions> OptionsFor(const targets::TargetSettings& settings,
                                    const std::optional<HardwareProfile>& hardware) {
  CpuTargetOptions options;
  if (hardware) {
    options.rates = RatesOf(*hardware);
    options.hardware = *hardware;
    // Only `accelopt calibrate` writes the saved profile; an evaluation tells.
    const auto say = settings.say;
    options.on_beyond_calibration = [say](const PeakEvidence& e) {
      say(eval::BeyondCalibrationNote(e, "machine", "accelopt calibrate"));
    };
  }
  // Every target that runs kernels on this machine's cores takes its options
  // from here: the harness is named, never left for a constructor to fill.
  options.harness_path = HarnessPath();
  options.kernel_compile.cache_dir = CacheDirOf(settings) + "/build";
  options.reference_compile.cache_dir = CacheDirOf(settings) + "/build";
  options.work_dir = CacheDirOf(settings) + "/work";
  options.seeds = settings.seeds;
  options.wall_seconds = settings.timeout;
  options.keep_work = settings.keep_work;
  options.device_lock = settings.device_lock;
  auto own = targets::SettingsFor(kCpuTarget, settings);
  if (!own) return own.error();
  options.cpus = (*own)["cpus"].get<std::vector<int>>();
  options.bind_openmp = (*own)["bind_openmp"].get<bool>();
  if (auto allowed = eval::CheckCoresAllowed(options.cpus, "--cpus"); !allowed) return allowed.error();
  return options;
}

targets::TargetKind Registration() {
  targets::TargetKind kind;
  kind.name = kCpuTarget;
  kind.summary = "C++ kernels built with the system compiler (g++, OpenMP), run on this machine's cores";
  kind.unavailable = [](const targets::TargetSettings&) {
    const eval::CompileOptions compile;
    if (FindProgram(compile.compiler).empty()) return "the compiler '" + compile.compiler + "' is not on $PATH";
    std::error_code ec;
    if (!std::filesystem::exists(HarnessPath(), ec)) return "the harness " + HarnessPath() + " is missing";
    return std::string();
  };
  kind.isolation = [] {
    const eval::SandboxIsolation& probed = eval::ProbeIsolation();
    if (probed.full())
      return targets::TargetKind::Isolation{
          true,
          std::string("each kernel process in its own PID, IPC, mount and network namespaces, as a user of its own") +
              (probed.user_namespace ? " in a user namespace of its own (outside it, the engine's user)" : "") +
              ", behind an allowlist seccomp filter; its limits: " + probed.limits +
              "; the saved hardware profile changes only through `accelopt calibrate`"};
    return targets::TargetKind::Isolation{false, "this machine refused to isolate the kernel process (" +
                                                     probed.refused + "): every correct result is marked suspect"};
  };
  kind.settings = targets::HostCoreSettings();
  kind.make = [](const targets::TargetSettings& settings) -> Result<std::unique_ptr<targets::Target>> {
    auto hardware = HardwareFor(settings);
    if (!hardware) return hardware.error();
    auto options = OptionsFor(settings, *hardware);
    if (!options) return options.error();
    return MakeCpuTarget(*options);
  };
  kind.calibrator = MakeCpuCalibrator;
  kind.fib_language = targets::FibLanguage{"cpp", "kernel.cpp", true};
  kind.free_form_languages = {"c", "c++", "cpp", "cxx", "cc"};
  kind.demo = targets::TargetKind::Demo{{"silu", "matmul", "rmsnorm_matmul"}, "demo/recording.jsonl", 2, 2};
  return kind;
}

}  // namespace accelopt::cpu
