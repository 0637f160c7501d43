#pragma once
/// One throwaway server of a kind for the whole test program (tests only):
/// started on first use, kept until exit. nullptr with the reason in
/// `*why_not` when its programs are not installed (the test then skips); a
/// server that is installed but does not start fails each calling test with
/// its first failure, and is not tried again.

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace accelopt::testing {

/// `installed(why_not)` says whether the programs are there; `start()`
/// returns a Result<std::unique_ptr<Server>>. `what` names it in a failure.
template <typename Server, typename Installed, typename Start>
Server* SharedServer(const char* what, std::string* why_not, Installed installed, Start start) {
  static std::mutex mu;
  static std::unique_ptr<Server> server;
  static std::optional<std::string> failure;
  std::lock_guard lock(mu);
  if (server) return server.get();
  if (!installed(why_not)) return nullptr;
  if (!failure) {
    auto started = start();
    if (started) {
      server = std::move(*started);
      return server.get();
    }
    failure = started.error().message;
  }
  *why_not = *failure;
  ADD_FAILURE() << what << " is installed but its test server did not start: " << *failure;
  return nullptr;
}

}  // namespace accelopt::testing
