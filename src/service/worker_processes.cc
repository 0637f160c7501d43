#include "service/worker_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

extern char** environ;

namespace accelopt::service {

Result<WorkerProcesses> WorkerProcesses::Start(const std::string& program, const std::vector<std::string>& arguments,
                                                int count, const std::string& name_prefix,
                                                const std::string& log_dir) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) return Error{"cannot create the workers' log folder " + log_dir + ": " + ec.message()};
  WorkerProcesses workers;
  for (int i = 1; i <= count; ++i) {
    const std::string name = name_prefix + "-" + std::to_string(i);
    const std::string log = log_dir + "/" + name + ".log";
    std::vector<std::string> args = {program};
    args.insert(args.end(), arguments.begin(), arguments.end());
    args.insert(args.end(), {"--name", name});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return Error{"cannot start worker " + name + " (" + program + "): " + std::strerror(rc)};
    workers.pids_.push_back(pid);
    workers.logs_.push_back(log);
  }
  return workers;
}

std::vector<std::string> WorkerProcesses::Exited() {
  std::vector<std::string> out;
  for (size_t i = 0; i < pids_.size(); ++i) {
    if (pids_[i] <= 0) continue;
    int status = 0;
    if (waitpid(pids_[i], &status, WNOHANG) != pids_[i]) continue;
    pids_[i] = 0;
    const std::string name = std::filesystem::path(logs_[i]).stem().string();
    out.push_back(WIFSIGNALED(status) ? name + ": signal " + std::to_string(WTERMSIG(status))
                                      : name + ": exit " + std::to_string(WEXITSTATUS(status)));
  }
  return out;
}

void WorkerProcesses::Stop(double grace_seconds) {
  for (pid_t pid : pids_)
    if (pid > 0) kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  for (pid_t& pid : pids_) {
    while (pid > 0) {
      int status = 0;
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) {
        pid = 0;
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  pids_.clear();
}

}  // namespace accelopt::service
