// Starting a one-node Slurm cluster for a test: a munge key and munged, a
// slurm.conf, slurmctld and slurmd, each daemon a child in the foreground with
// its output in a file of the cluster's folder, so that a failure can show it.

#include "testing/slurm_cluster.h"
#include "testing/shared_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

namespace accelopt::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Tail(const std::string& text, size_t n = 3000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// `name` on PATH or in the sbin folders (where Debian puts the daemons); "" when absent.
std::string FindProgram(const std::string& name) {
  std::string path = getenv("PATH") ? getenv("PATH") : "";
  path += ":/usr/sbin:/sbin:/usr/local/sbin";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// Two different ports of 127.0.0.1 that nothing listens on now.
Result<std::pair<int, int>> FreePorts() {
  int fds[2] = {-1, -1};
  int ports[2] = {0, 0};
  std::string why;
  for (int i = 0; i < 2 && why.empty(); ++i) {
    fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fds[i] < 0 || bind(fds[i], reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        getsockname(fds[i], reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      why = strerror(errno);
    ports[i] = ntohs(addr.sin_port);
  }
  for (int fd : fds)
    if (fd >= 0) close(fd);
  if (!why.empty()) return Error{"slurm cluster: find a free port: " + why};
  return std::make_pair(ports[0], ports[1]);
}

constexpr const char* kNode = "accelopt-node";
constexpr const char* kPrograms[] = {"munged", "slurmctld", "slurmd",  "sbatch",
                                     "squeue", "sinfo",     "scancel", "scontrol"};

}  // namespace

bool SlurmCluster::Available(std::string* why_not) {
  std::vector<std::string> missing;
  for (const char* p : kPrograms)
    if (FindProgram(p).empty()) missing.push_back(p);
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    *why_not = "Slurm is not installed (no " + list +
               "; scripts/setup.sh installs slurmctld, slurmd, slurm-client "
               "and munge)";
    return false;
  }
  if (geteuid() != 0) {
    *why_not = "the test Slurm cluster needs root (slurmd runs jobs as their users; CI runs as root)";
    return false;
  }
  return true;
}

Result<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(double timeout_seconds) {
  std::string why_not;
  if (!Available(&why_not)) return Error{why_not};
  std::unique_ptr<SlurmCluster> cluster(new SlurmCluster());
  std::string pattern = (fs::temp_directory_path() / "accelopt-slurm-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return Error{"slurm cluster: mkdtemp " + pattern + ": " + strerror(errno)};
  const std::string dir = cluster->dir_ = pattern;
  if (Status s = cluster->StartWatcher(); !s) return s.error();
  for (const char* sub : {"munge", "state", "spool"}) fs::create_directories(dir + "/" + sub);
  chmod((dir + "/munge").c_str(), 0700);

  // A fresh munge key: only this cluster's daemons and clients share it.
  const std::string key = dir + "/munge/munge.key";
  {
    std::random_device random;
    std::string bytes;
    for (int i = 0; i < 128; ++i) bytes.push_back(static_cast<char>(random() & 0xff));
    std::ofstream out(key, std::ios::binary);
    out << bytes;
    if (!out) return Error{"slurm cluster: write the munge key " + key};
  }
  chmod(key.c_str(), 0400);
  const std::string socket = dir + "/munge/munge.socket";
  if (Status s = cluster->Spawn(
          "munged", {FindProgram("munged"), "--foreground", "--force", "--socket=" + socket, "--key-file=" + key,
                     "--log-file=" + dir + "/munge/munged.log", "--pid-file=" + dir + "/munge/munged.pid",
                     "--seed-file=" + dir + "/munge/munged.seed"});
      !s)
    return s.error();

  auto ports = FreePorts();
  if (!ports) return ports.error();
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  cluster->conf_ = dir + "/slurm.conf";
  {
    std::ofstream conf(cluster->conf_);
    conf << "ClusterName=accelopttest\n"
         << "SlurmctldHost=localhost(127.0.0.1)\n"
         << "SlurmctldPort=" << ports->first << "\n"
         << "SlurmdPort=" << ports->second << "\n"
         << "SlurmUser=root\nSlurmdUser=root\n"
         << "AuthType=auth/munge\nCredType=cred/munge\n"
         << "AuthInfo=socket=" << socket << "\n"
         << "StateSaveLocation=" << dir << "/state\n"
         << "SlurmdSpoolDir=" << dir << "/spool\n"
         << "SlurmctldPidFile=" << dir << "/slurmctld.pid\n"
         << "SlurmdPidFile=" << dir << "/slurmd.pid\n"
         << "SlurmctldLogFile=" << dir << "/slurmctld.log\n"
         << "SlurmdLogFile=" << dir << "/slurmd.log\n"
         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
         << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
         << "SchedulerType=sched/backfill\nMpiDefault=none\n"
         << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
         << "ReturnToService=2\nSlurmctldTimeout=10\nSlurmdTimeout=10\nMessageTimeout=10\n"
         << "InactiveLimit=0\nKillWait=2\nMinJobAge=600\nGresTypes=gpu\n"
         << "NodeName=" << kNode << " NodeHostname=" << host << " NodeAddr=127.0.0.1 CPUs=" << cpus
         << " Gres=gpu:1 State=UNKNOWN\n"
         << "PartitionName=" << cluster->partition_ << " Nodes=" << kNode
         << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO\n";
    if (!conf) return Error{"slurm cluster: write " + cluster->conf_};
  }
  // One GPU, a plain file standing for its device: enough for Slurm to count
  // it (--gres=gpu:1), with task/none confining nothing.
  {
    std::ofstream(dir + "/fake-gpu0");
    std::ofstream gres(dir + "/gres.conf");
    gres << "NodeName=" << kNode << " Name=gpu File=" << dir << "/fake-gpu0\n";
    if (!gres) return Error{"slurm cluster: write " + dir + "/gres.conf"};
  }

  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  // munged makes its socket; slurmctld and slurmd need it to start.
  while (!fs::exists(socket)) {
    if (Clock::now() > deadline)
      return Error{"slurm cluster: munged made no socket " + socket + "\n" + cluster->Logs()};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (Status s = cluster->Spawn("slurmctld", {FindProgram("slurmctld"), "-D", "-i", "-f", cluster->conf_}); !s)
    return s.error();
  if (Status s = cluster->Spawn("slurmd", {FindProgram("slurmd"), "-D", "-N", kNode, "-f", cluster->conf_}); !s)
    return s.error();

  std::string last;
  for (;;) {
    auto shown = cluster->Client({"sinfo", "-h", "-n", kNode, "-o", "%T"});
    if (!shown) return shown.error();
    last = shown->out + shown->err;
    if (shown->exit_code == 0 && shown->out.rfind("idle", 0) == 0) break;
    for (int pid : cluster->pids_)
      if (waitpid(pid, nullptr, WNOHANG) == pid)
        return Error{"slurm cluster: a daemon (pid " + std::to_string(pid) + ") exited\n" + cluster->Logs()};
    if (Clock::now() > deadline)
      return Error{"slurm cluster: node " + std::string(kNode) + " not idle after " + std::to_string(timeout_seconds) +
                   " s (sinfo: " + last + ")\n" + cluster->Logs()};
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return cluster;
}

SlurmCluster::~SlurmCluster() {
  if (!conf_.empty()) Client({"scancel", "--partition=" + partition_});  // a job's processes outlive slurmd
  StopDaemons();
  watcher_.Finish();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

void SlurmCluster::StopDaemons() {
  // slurmd first, so that the controller does not wait for it; munged last.
  for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
    kill(*it, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (waitpid(*it, nullptr, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(*it, SIGKILL);
        waitpid(*it, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  pids_.clear();
  std::ofstream(dir_ + "/daemons.pids", std::ios::trunc);
}

std::string SlurmCluster::Env() const { return "SLURM_CONF=" + service::ShellQuote(conf_); }

Result<service::CommandOutput> SlurmCluster::Client(const std::vector<std::string>& argv) const {
  std::vector<std::string> with_conf = {"env", "SLURM_CONF=" + conf_};
  with_conf.insert(with_conf.end(), argv.begin(), argv.end());
  return service::RunCommand(with_conf);
}

std::string SlurmCluster::Logs() const {
  std::string out;
  for (const char* log :
       {"munged.out", "munge/munged.log", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"}) {
    const std::string text = ReadAll(dir_ + "/" + log);
    if (!text.empty()) out += "--- " + std::string(log) + ":\n" + Tail(text) + "\n";
  }
  return out;
}

// Starts a daemon in the foreground, its output in <name>.out; its pid is
// written where the watcher finds it.
Status SlurmCluster::Spawn(const std::string& name, const std::vector<std::string>& argv) {
  const std::string out_path = dir_ + "/" + name + ".out";
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string conf = "SLURM_CONF=" + conf_;
  const pid_t pid = fork();
  if (pid < 0) return Error{"slurm cluster: start " + name + ": fork: " + strerror(errno)};
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec. A session of its
    // own: a ^C to the tests reaches the watcher's cleanup, not the daemon.
    setsid();
    int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    close_range(3, ~0U, 0);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    if (!conf_.empty()) putenv(const_cast<char*>(conf.c_str()));
    execv(args[0], args.data());
    _exit(127);
  }
  pids_.push_back(pid);
  std::ofstream(dir_ + "/daemons.pids", std::ios::app) << pid << "\n";
  return Ok{};
}

// Cancels the cluster's jobs, stops its daemons (by the pids in daemons.pids)
// and removes the folder: at the destructor (which did all that already), or
// when this process dies however it dies.
Status SlurmCluster::StartWatcher() {
  const std::string d = service::ShellQuote(dir_);
  return watcher_.Start("slurm cluster", "if [ -s " + d + "/daemons.pids ]; then SLURM_CONF=" + d +
                                             "/slurm.conf timeout 10 scancel --partition=" + partition_ +
                                             "; sleep 1; pids=$(cat " + d +
                                             "/daemons.pids); kill -TERM $pids; sleep 3; kill -KILL $pids; fi; rm -rf " +
                                             d);
}

SlurmCluster* SharedSlurmCluster(std::string* why_not) {
  return SharedServer<SlurmCluster>(
      "Slurm", why_not, [](std::string* why) { return SlurmCluster::Available(why); },
      [] { return SlurmCluster::Start(); });
}

}  // namespace accelopt::testing
