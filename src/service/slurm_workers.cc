#include "service/slurm_workers.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

namespace accelopt::service {
namespace {

using Clock = std::chrono::steady_clock;

// The first line of `text`, trimmed: what sbatch --parsable prints.
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

// "sbatch failed (exit 1): sbatch: error: invalid partition specified: gpu".
Error CommandError(const std::vector<std::string>& argv, const CommandOutput& out) {
  const std::string said = Trimmed(out.err.empty() ? out.out : out.err);
  return Error{fmt::format("{} failed (exit {}){}", argv[0], out.exit_code, said.empty() ? "" : ": " + said)};
}

}  // namespace

bool SlurmJobState::Ended() const {
  static const std::set<std::string> kLive = {"SUBMITTED", "PENDING",   "CONFIGURING",  "RUNNING",     "COMPLETING",
                                              "SUSPENDED", "REQUEUED",  "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING",
                                              "SIGNALING", "STAGE_OUT", "STOPPED"};
  return !kLive.count(state);
}

Result<SlurmJobState> ParseScontrolJob(const std::string& line) {
  SlurmJobState s;
  bool has_state = false;
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "JobState") {
      s.state = value;
      has_state = true;
    } else if (key == "Reason") {
      s.reason = value;
    } else if (key == "NodeList" && value != "(null)") {
      s.node = value;
    } else if (key == "ExitCode") {
      const size_t colon = value.find(':');
      s.exit_code = atoi(value.substr(0, colon).c_str());
      s.signal = colon == std::string::npos ? 0 : atoi(value.substr(colon + 1).c_str());
    }
  }
  if (!has_state) return Error{"scontrol show job printed no JobState: '" + FirstLine(line) + "'"};
  return s;
}

std::map<std::string, SlurmJobState> ParseSqueue(const std::string& text) {
  std::map<std::string, SlurmJobState> jobs;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = Trimmed(line);
    const size_t a = line.find('|');
    if (line.empty() || a == std::string::npos) continue;
    const size_t b = line.find('|', a + 1);
    SlurmJobState s;
    s.state = line.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    if (b != std::string::npos) s.node = line.substr(b + 1);
    jobs[line.substr(0, a)] = s;
  }
  return jobs;
}

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> SbatchCommand(const SlurmSettings& settings, const std::string& name, const std::string& log,
                                       const std::vector<std::string>& worker_argv) {
  std::vector<std::string> argv = {
      "sbatch",     "--parsable",   "--job-name=" + name, "--output=" + log, "--partition=" + settings.partition,
      "--ntasks=1", "--no-requeue", "--export=ALL"};
  if (!settings.gres.empty()) argv.push_back("--gres=" + settings.gres);
  if (!settings.time_limit.empty()) argv.push_back("--time=" + settings.time_limit);
  if (!settings.account.empty()) argv.push_back("--account=" + settings.account);
  std::string wrap = "exec";
  for (const std::string& a : worker_argv) wrap += " " + ShellQuote(a);
  argv.push_back("--wrap=" + wrap);
  return argv;
}

Json SlurmWorker::ToJson() const {
  return {{"job_id", job_id},      {"name", name},       {"log", log},
          {"state", state.state},  {"node", state.node}, {"exit_code", state.exit_code},
          {"signal", state.signal}};
}

SlurmWorkers::SlurmWorkers(SlurmWorkersOptions options) : options_(std::move(options)) {}

SlurmWorkers::~SlurmWorkers() { Stop(); }

void SlurmWorkers::Say(const std::string& text) const {
  if (options_.say) options_.say(text);
}

Status SlurmWorkers::Refresh() {
  std::vector<std::string> ids;
  for (const SlurmWorker& w : workers_)
    if (!w.state.Ended()) ids.push_back(w.job_id);
  if (ids.empty()) return Ok{};
  const std::vector<std::string> squeue = {
      "squeue", "-h", "--states=all", "-j", fmt::format("{}", fmt::join(ids, ",")), "-o", "%i|%T|%N"};
  auto listed = options_.run(squeue);
  if (!listed) return listed.error();
  // squeue refuses a list holding an id the controller forgot: each is then asked alone.
  std::map<std::string, SlurmJobState> states;
  if (listed->exit_code == 0) states = ParseSqueue(listed->out);
  for (SlurmWorker& w : workers_) {
    if (w.state.Ended()) continue;
    SlurmJobState now = w.state;
    auto found = states.find(w.job_id);
    if (found != states.end()) {
      now.state = found->second.state;
      if (!found->second.node.empty()) now.node = found->second.node;
    }
    // An ended job's exit code is in scontrol only (squeue has none; there is no sacct without slurmdbd).
    if (found == states.end() || now.Ended()) {
      const std::vector<std::string> show = {"scontrol", "show", "job", "-o", w.job_id};
      auto shown = options_.run(show);
      if (!shown) return shown.error();
      if (shown->exit_code != 0) {
        if ((shown->err + shown->out).find("Invalid job id") == std::string::npos) return CommandError(show, *shown);
        now.state = "UNKNOWN";  // forgotten by the controller (MinJobAge passed)
        now.reason = "no longer known to slurmctld";
      } else {
        auto parsed = ParseScontrolJob(shown->out);
        if (!parsed) return parsed.error();
        now = *parsed;
      }
    }
    if (now.state == w.state.state) {
      w.state = now;
      continue;
    }
    w.state = now;
    if (now.state == "RUNNING")
      Say(fmt::format("slurm: job {} ({}) running on {} (log {})", w.job_id, w.name, now.node, w.log));
    else if (now.Ended())
      Say(fmt::format("slurm: job {} ({}) ended: {}, exit code {}{} (log {})", w.job_id, w.name, now.state,
                      now.exit_code, now.signal ? fmt::format(", signal {}", now.signal) : "", w.log));
  }
  return Ok{};
}

Status SlurmWorkers::Submit() {
  const std::string name =
      fmt::format("{}-{}", options_.name_prefix, options_.first_number + static_cast<int>(workers_.size()));
  const std::string log = options_.log_dir + "/" + name + ".log";
  std::vector<std::string> worker_argv = {options_.program};
  worker_argv.insert(worker_argv.end(), options_.arguments.begin(), options_.arguments.end());
  worker_argv.insert(worker_argv.end(), {"--name", name});
  if (options_.idle_exit_seconds > 0)
    worker_argv.insert(worker_argv.end(), {"--idle-exit", fmt::format("{:g}", options_.idle_exit_seconds)});
  const auto argv = SbatchCommand(options_.slurm, name, log, worker_argv);
  auto submitted = options_.run(argv);
  if (!submitted) return submitted.error();
  if (submitted->exit_code != 0) return CommandError(argv, *submitted);
  // --parsable prints "ID" or "ID;CLUSTER".
  std::string id = FirstLine(submitted->out);
  id = id.substr(0, id.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
    return Error{"sbatch printed no job id: '" + FirstLine(submitted->out) + "'"};
  workers_.push_back({id, name, log, {}});
  Say(fmt::format("slurm: submitted job {} ({}) to partition {}{} (log {})", id, name, options_.slurm.partition,
                  options_.slurm.gres.empty() ? "" : ", gres " + options_.slurm.gres, log));
  return Ok{};
}

Status CheckSlurmSettings(const SlurmSettings& settings, const CommandRunner& run) {
  auto argv = SbatchCommand(settings, "accelopt-check", "/dev/null", {"true"});
  argv.insert(argv.begin() + 1, "--test-only");
  auto checked = run(argv);
  if (!checked) return checked.error();
  if (checked->exit_code != 0) return CommandError(argv, *checked);
  return Ok{};
}

Status SlurmWorkers::Tend(int outstanding) {
  std::lock_guard lock(mu_);
  if (stopped_) return Ok{};
  if (Status s = Refresh(); !s) return s;
  int live = 0, failed_in_a_row = 0;
  const SlurmWorker* last_failed = nullptr;
  for (const SlurmWorker& w : workers_) {
    live += w.state.Ended() ? 0 : 1;
    const std::string& s = w.state.state;
    if (s == "FAILED" || s == "BOOT_FAIL" || s == "OUT_OF_MEMORY") {
      ++failed_in_a_row;
      last_failed = &w;
    } else if (s == "COMPLETED" || s == "RUNNING" || s == "CANCELLED" || s == "TIMEOUT") {
      failed_in_a_row = 0;  // it ran; a later failure is news again
    }
  }
  if (failed_in_a_row >= options_.max_failures && live < outstanding)
    return Error{
        fmt::format("{} worker jobs failed in a row (the last: job {}, exit code {}; its log {}): no more are "
                    "submitted",
                    failed_in_a_row, last_failed->job_id, last_failed->state.exit_code, last_failed->log)};
  while (live < options_.slurm.max_workers && live < outstanding) {
    if (Status s = Submit(); !s) return s;
    ++live;
  }
  return Ok{};
}

void SlurmWorkers::TendInBackground(JobQueue& queue, const std::string& machine_class, double poll_seconds) {
  tender_ = std::thread([this, &queue, machine_class, poll_seconds] {
    std::string last_error;
    while (!stop_) {
      Status s = [&]() -> Status {
        auto outstanding = queue.Outstanding(machine_class);
        if (!outstanding) return outstanding.error();
        return Tend(*outstanding);
      }();
      const std::string error = s ? "" : s.error().message;
      if (!error.empty() && error != last_error) Say("slurm: " + error);
      last_error = error;
      const auto until = Clock::now() + std::chrono::duration<double>(poll_seconds);
      while (!stop_ && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

Status SlurmWorkers::Stop(double wait_seconds) {
  std::lock_guard stopping(stop_mu_);
  stop_ = true;
  if (tender_.joinable()) tender_.join();
  std::lock_guard lock(mu_);
  if (stopped_) return Ok{};
  stopped_ = true;
  std::vector<std::string> cancel = {"scancel"};
  for (const SlurmWorker& w : workers_)
    if (!w.state.Ended()) cancel.push_back(w.job_id);
  if (cancel.size() == 1) return Ok{};
  Status result = Ok{};
  auto cancelled = options_.run(cancel);
  if (!cancelled)
    result = cancelled.error();
  else if (cancelled->exit_code != 0)
    result = CommandError(cancel, *cancelled);
  const auto deadline = Clock::now() + std::chrono::duration<double>(wait_seconds);
  for (;;) {
    Status s = Refresh();
    if (!s) return result ? s : result;
    const bool all_ended =
        std::all_of(workers_.begin(), workers_.end(), [](const SlurmWorker& w) { return w.state.Ended(); });
    if (all_ended || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return result;
}

std::vector<SlurmWorker> SlurmWorkers::Workers() const {
  std::lock_guard lock(mu_);
  return workers_;
}

}  // namespace accelopt::service
