#include "cli/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "core/scratch.h"

namespace accelopt::cli {
namespace {

int g_pipe[2] = {-1, -1};
volatile sig_atomic_t g_signalled = 0;

std::mutex& ActionsMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<std::function<void(int)>>& Actions() {
  static std::vector<std::function<void(int)>> actions;
  return actions;
}

void Handle(int signal) {
  if (g_signalled) _exit(128 + signal);  // asked twice: no more waiting
  g_signalled = 1;
  unsigned char byte = static_cast<unsigned char>(signal);
  if (write(g_pipe[1], &byte, 1) != 1) _exit(128 + signal);
}

void Watch() {
  unsigned char byte = 0;
  while (read(g_pipe[0], &byte, 1) != 1) {
  }
  int signal = byte;
  std::fprintf(stderr, "\naccelopt: %s: stopping\n", signal == SIGINT ? "interrupted" : "terminated");
  std::vector<std::function<void(int)>> actions;
  {
    std::lock_guard lock(ActionsMutex());
    actions = Actions();
  }
  for (auto& action : actions) action(signal);
  RemoveLiveScratchDirs();
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(128 + signal);
}

}  // namespace

void InstallInterruptHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (pipe2(g_pipe, O_CLOEXEC) != 0) return;
    std::thread(Watch).detach();
    struct sigaction action = {};
    action.sa_handler = Handle;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  });
}

void OnInterrupt(std::function<void(int signal)> action) {
  std::lock_guard lock(ActionsMutex());
  Actions().push_back(std::move(action));
}

}  // namespace accelopt::cli
