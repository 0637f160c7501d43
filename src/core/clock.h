#pragma once
/// Steady-clock readings in seconds, for timing the engine's own work.

#include <chrono>

namespace accelopt {

/// Seconds on the steady clock (an arbitrary origin: only differences mean anything).
inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Seconds elapsed since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace accelopt
