// accelopt worker: owns one device and completes the store's queued jobs on it.

#include <fmt/core.h>

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>

#include "cli/common.h"
#include "cli/interrupt.h"
#include "core/paths.h"
#include "service/worker.h"
#include "store/store.h"

namespace accelopt::cli {
namespace {

struct WorkerFlags {
  std::string db = "accelopt.db";
  std::string queue;  // "": the store's file
  std::string device;  // "" = the device of each job's target
  std::string machine_class;
  std::string name;
  std::string target;  // whose machine fingerprint is the default machine class
  double lease = 30;
  double heartbeat = 5;
  double idle_exit = 0;
  int max_jobs = 0;
  bool stop_with_parent = false;
  bool no_calibrate = false;
  CommonFlags common;
};

std::string DefaultName() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return fmt::format("{}-{}", host, getpid());
}

}  // namespace

/// The machine class a target's jobs run on by default: the fingerprint of
/// the machine it measures on (Target::Machine).
std::string DefaultMachineClass(const std::string& target_name) {
  targets::TargetSettings settings = TargetSettingsFor(EvalFlags{});
  settings.calibrate_if_missing = false;  // the fingerprint needs no profile
  settings.device_lock = false;
  auto target = MakeTargetOrExit(settings, target_name);
  return target->Machine();
}

void RegisterWorker(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "worker",
      "complete the store's queued evaluation jobs on one device (claims with a lease renewed while measuring; a "
      "worker that dies loses its lease and its job runs again elsewhere)");
  static WorkerFlags f;
  cmd->add_option("--db", f.db,
                  "the store that keeps this machine's hardware profile (an SQLite file or a PostgreSQL database: "
                  "postgresql://user@host:port/db), and the queue it serves unless --queue names another");
  cmd->add_option("--queue", f.queue,
                  "the queue it serves: an SQLite file or a PostgreSQL database (postgresql://user@host:port/db; a "
                  "password from $PGPASSWORD or ~/.pgpass stays out of process listings); default: the --db store");
  cmd->add_option("--device", f.device,
                  "the device it owns: its machine-wide lock is held while a job measures (default: each job's "
                  "target's device)");
  cmd->add_option("--machine-class", f.machine_class,
                  "the class of machine it serves: it takes only jobs for this class (default: this machine's "
                  "fingerprint for --target)");
  cmd->add_option("--target", f.target, "the target whose machine fingerprint is the default machine class");
  cmd->add_option("--name", f.name, "its name in the queue and in outcomes (default: host-pid)");
  cmd->add_option("--lease", f.lease, "seconds a claim holds without a heartbeat")->check(CLI::PositiveNumber);
  cmd->add_option("--heartbeat", f.heartbeat, "seconds between heartbeats while measuring")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--idle-exit", f.idle_exit, "exit after this many seconds without a job (0: never)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-jobs", f.max_jobs, "exit after this many jobs (0: no limit)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--stop-with-parent", f.stop_with_parent, "exit when the process that started it ends");
  cmd->add_flag("--no-calibrate", f.no_calibrate,
                "when this machine has no saved hardware profile and a job names none, score nothing instead of "
                "calibrating first");
  AddSuiteFlag(*cmd, f.common);
  cmd->callback([] {
    if (f.stop_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() == 1) return;  // the parent is gone already
    }
    if (f.heartbeat * 2 > f.lease)
      throw Exit{kExitUsage, fmt::format("--heartbeat {} must be at most half of --lease {}: a slow heartbeat would "
                                         "lose the lease of a healthy worker",
                                         f.heartbeat, f.lease)};
    service::QueueOptions queue_options;
    queue_options.lease_seconds = f.lease;
    const std::string queue_at = f.queue.empty() ? f.db : f.queue;
    auto queue = service::OpenJobQueue(queue_at, queue_options);
    if (!queue) throw Exit{kExitError, queue.error().message};
    service::WorkerOptions options;
    options.info.name = f.name.empty() ? DefaultName() : f.name;
    options.info.device = f.device;
    options.info.machine_class =
        f.machine_class.empty() ? DefaultMachineClass(f.target.empty() ? targets::kDefaultTarget : f.target)
                                : f.machine_class;
    options.heartbeat_seconds = f.heartbeat;
    options.idle_exit_seconds = f.idle_exit;
    options.max_jobs = f.max_jobs;
    options.local.settings = TargetSettingsFor(EvalFlags{});
    options.local.settings.calibrate_if_missing = !f.no_calibrate;
    options.local.purpose = "worker " + options.info.name;
    options.say = [name = options.info.name](const std::string& text) {
      fmt::print(stderr, "[{}] {}\n", name, text);
      std::fflush(stderr);
    };
    options.local.settings.say = options.say;
    options.local.on_device_wait = [say = options.say](const std::string& device, const std::string& holder) {
      say("waiting for the " + device + " device, held by " + holder);
    };
    // Its machine's hardware profile lives in the store: read there when a job names none, and kept there.
    std::shared_ptr<store::Store> hardware_store = OpenStoreOrExit(f.db, /*create=*/true);
    const std::string machine = options.info.machine_class;
    options.local.recorded_hardware = [hardware_store, machine, say = options.say](const std::string& target) {
      auto profile = hardware_store->GetHardware(target, machine);
      if (!profile) say("warning: " + profile.error().message);
      return profile && *profile ? **profile : Json();
    };
    options.local.record_hardware = [hardware_store, machine, say = options.say](const std::string& target,
                                                                                 const Json& hardware) {
      if (auto s = hardware_store->PutHardware(target, machine, hardware); !s) say("warning: " + s.error().message);
    };
    fmt::print(stderr, "[{}] serving {} (machine class {}, device {})\n", options.info.name,
               service::RedactUri(queue_at),
               options.info.machine_class, f.device.empty() ? "of each job's target" : f.device);
    static std::atomic<bool> stop{false};
    auto summary = service::RunWorker(**queue, options, stop);
    if (!summary) throw Exit{kExitError, summary.error().message};
    fmt::print(stderr, "[{}] stopped: {} job(s) completed, {} failed, {} lost to another worker\n", options.info.name,
               summary->completed, summary->failed, summary->lost);
  });
}

}  // namespace accelopt::cli
