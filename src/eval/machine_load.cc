#include "eval/machine_load.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/clock.h"

namespace accelopt::eval {
namespace {

// utime + stime of /proc/<pid>/stat (the fields after the command name, which may contain spaces).
double ProcessTicks(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return 0;
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());
  return ticks;
}

}  // namespace

CpuSnapshot TakeCpuSnapshot(pid_t child) { return TakeCpuSnapshot(std::vector<pid_t>{child}); }

CpuSnapshot TakeCpuSnapshot(const std::vector<pid_t>& children) {
  CpuSnapshot s;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) {
    s.busy = user + nice + system + irq + softirq + steal;
    s.steal = steal;
    s.total = s.busy + idle + iowait;
  }
  s.ours = ProcessTicks("/proc/self/stat");
  for (pid_t child : children)
    if (child > 0) s.ours += ProcessTicks("/proc/" + std::to_string(child) + "/stat");
  return s;
}

MachineLoad LoadBetween(const CpuSnapshot& before, const CpuSnapshot& after) {
  MachineLoad load;
  const double total = after.total - before.total;
  if (total <= 0) return load;
  const double others = (after.busy - before.busy) - (after.ours - before.ours);
  load.others = std::clamp(others / total, 0.0, 1.0);
  load.steal = std::clamp((after.steal - before.steal) / total, 0.0, 1.0);
  return load;
}

bool WaitForQuiet(const QuietWait& wait, const std::vector<pid_t>& children) {
  const double until = NowSeconds() + wait.max_seconds;
  for (;;) {
    const CpuSnapshot before = TakeCpuSnapshot(children);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait.window_seconds));
    const double others = LoadBetween(before, TakeCpuSnapshot(children)).others;
    if (others <= wait.share) return true;
    const double left = until - NowSeconds();
    if (left <= 0) return false;
    if (wait.on_busy) wait.on_busy(others, left);
  }
}

}  // namespace accelopt::eval
