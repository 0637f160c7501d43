#pragma once
/// What the engine does on SIGINT or SIGTERM: a thread of its own (never the
/// signal handler) runs the registered actions (mark a run interrupted, say
/// how to resume), removes this process's scratch folders, and exits with
/// 128 + the signal. A second signal while that runs exits at once.

#include <functional>

namespace accelopt::cli {

/// Installs the handlers for SIGINT and SIGTERM; once per process.
void InstallInterruptHandler();

/// Runs on interruption, after actions added earlier, on the handler's thread,
/// while the rest of the engine may still run: take the locks you need.
void OnInterrupt(std::function<void(int signal)> action);

}  // namespace accelopt::cli
