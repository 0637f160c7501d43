#pragma once
/// Steady-clock readings in seconds, for timing the engine's own work.

#include <chrono>
#include <ctime>
#include <string>

namespace accelopt {

/// Seconds on the steady clock (an arbitrary origin: only differences mean anything).
inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Seconds elapsed since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The current time as ISO-8601 UTC, to the second ("2026-11-23T02:46:05Z").
inline std::string IsoUtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace accelopt
