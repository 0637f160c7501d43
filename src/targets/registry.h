#pragma once
/// targets: the registry. A target is built from its name; `accelopt targets`
/// lists each registered one, available here or with the reason it is not.
///
/// The public line: code outside src/targets/ includes only the plugin
/// interfaces (target.h, registry.h, calibrator.h, settings.h), never a
/// target's folder; what targets share lives in eval/. Adding a target:
///   1. a folder src/targets/<name>/ with a Target (target.h) and a function
///      returning its TargetKind: name, summary, `make`, `unavailable`, and its
///      data: settings (settings.h), calibrator (calibrator.h), FlashInfer-Bench
///      language, free-form languages, demo;
///   2. one registration line: in registry.cc for a built-in target, or a
///      static TargetRegistrar beside a target defined elsewhere
///      (tests/toy_target/ is one, registered by the tests);
///   3. its source files in CMakeLists.txt, and its prompt templates under
///      prompts/<name>/ when it has its own (TargetInfo::prompts_dir).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "targets/calibrator.h"
#include "targets/settings.h"
#include "targets/target.h"

namespace accelopt::targets {

/// The target an evaluation runs on when the user names none (and the one
/// runs recorded before there were targets ran on): core/profile.h's.
using ::accelopt::kDefaultTarget;

/// What the user chose for an evaluation, for any target; each target takes
/// what applies to it, and its own settings from `options`.
struct TargetSettings {
  int seeds = 3;           ///< correctness runs, each with fresh random inputs
  double timeout = 60;     ///< wall-clock limit per child process, seconds
  bool keep_work = false;  ///< keep evaluation folders for debugging
  /// The target takes its device's machine-wide lock itself while it measures;
  /// false when its evaluator holds the lock (service::LocalEvaluator).
  bool device_lock = true;
  /// Measure the machine when it has no saved profile (else no scoring).
  bool calibrate_if_missing = true;
  /// A recorded hardware profile to score against (a resumed run's); null: the machine's own.
  Json hardware;
  std::string data_dir;   ///< where hardware profiles are kept
  std::string cache_dir;  ///< builds and scratch folders
  /// Progress and notes for the user (calibration, a raised peak, ...).
  std::function<void(const std::string&)> say = [](const std::string&) {};
  /// The targets' own settings by name, as each describes them
  /// (TargetKind::settings); a target reads its own with SettingsFor and
  /// leaves the others'.
  Json options = Json::object();
};

struct TargetKind {
  std::string name;
  std::string summary;  ///< one line: kernel language and where it runs
  /// Why it cannot run here ("" when it can): a missing compiler, device or program.
  std::function<std::string(const TargetSettings&)> unavailable;
  /// Why it cannot run here, found by starting it (an evaluator asked to
  /// describe itself): slower than `unavailable`, so asked only where the
  /// user asks which targets run (`accelopt targets`). Unset: `unavailable` says all.
  std::function<std::string(const TargetSettings&)> probe;
  /// Against a kernel that attacks the machine (docs/trust.md): whether its
  /// results can be trusted here, and how its kernels are kept from the
  /// machine, in words. Unset: not trusted, nothing stated.
  struct Isolation {
    bool trusted = false;
    std::string how;
  };
  std::function<Isolation()> isolation;
  std::function<Result<std::unique_ptr<Target>>(const TargetSettings&)> make;
  /// The settings of its own it takes from TargetSettings::options (name, type, default, help).
  std::vector<SettingSpec> settings;
  /// Its calibrator (`accelopt calibrate --target NAME`); unset: it has no hardware to measure.
  std::function<std::unique_ptr<Calibrator>()> calibrator;
  /// How its kernels are written into a FlashInfer-Bench solution; none: they cannot be.
  std::optional<FibLanguage> fib_language;
  /// Its kernel languages (as TargetInfo::language and fence tags name them)
  /// in which comments and whitespace change nothing: two kernels that differ
  /// only there are the same kernel (agents::CodeHash).
  std::vector<std::string> free_form_languages;
  /// The recorded demo on this target (`accelopt optimize --demo`); none: the default target's.
  struct Demo {
    std::vector<std::string> tasks;  ///< run when the user names none
    std::string recording;           ///< the recorded model answers, relative to the project
    int iterations = 2, plans = 2;   ///< the search the recording answers
  };
  std::optional<Demo> demo;
};

/// Why `kind` cannot run here ("" when it can): `unavailable`, then, when
/// that finds nothing, `probe`. May start the target's programs; blocks.
std::string WhyUnavailable(const TargetKind& kind, const TargetSettings& settings);

/// Every registered target, in registration order: the built-in ones, then
/// those registered with RegisterTarget.
const std::vector<TargetKind>& RegisteredTargets();

/// Adds `kind` to the registry; an Error when a target of that name is
/// registered already or it cannot be made (no name or no `make`). Call it
/// before the registry is read (at static initialization, through a
/// TargetRegistrar, or first thing in main): not thread-safe.
Status RegisterTarget(TargetKind kind);

/// Registers a target at static initialization, one line beside its definition:
///   static const targets::TargetRegistrar kRegistered{MyTargetKind()};
/// Aborts when RegisterTarget fails (two targets of one name is a programming error).
struct TargetRegistrar {
  explicit TargetRegistrar(TargetKind kind);
};

/// The registered target named `name`; null when there is none.
const TargetKind* FindTarget(const std::string& name);

/// The own settings of the target named `name`: each setting of its
/// TargetKind::settings with the value in `settings.options`, or its default.
/// An Error names a value of the wrong type, or an unknown target.
Result<Json> SettingsFor(const std::string& name, const TargetSettings& settings);

/// The target named `name`, built with `settings`; an Error naming the known
/// targets when there is none of that name, or saying why it is unavailable.
Result<std::unique_ptr<Target>> MakeTarget(const std::string& name, const TargetSettings& settings);

}  // namespace accelopt::targets
