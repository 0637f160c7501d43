// fake_llm_server: the tests' loopback model server, standalone, for trying
// `accelopt llm ping` (or anything else) without a real model.
//
// Usage: fake_llm_server [--seconds N] [BEHAVIOR...]
//   BEHAVIOR: answer[:TEXT] | rate_limit[:RETRY_AFTER_S] | server_error | bad_request | malformed
//             | hang[:SECONDS] | drop | no_usage | echo_key
// Behaviors are used one per request, in order; then every request is answered.
// Prints the base URL, then serves on 127.0.0.1 until N seconds pass (default 600).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "testing/fake_llm_server.h"

using accelopt::testing::Behavior;
using accelopt::testing::Scripted;

namespace {

bool Parse(const std::string& arg, Scripted& s) {
  std::string name = arg.substr(0, arg.find(':'));
  std::string value = arg.find(':') == std::string::npos ? "" : arg.substr(arg.find(':') + 1);
  if (name == "answer")
    s.behavior = Behavior::kAnswer, s.text = value.empty() ? "pong" : value;
  else if (name == "rate_limit")
    s.behavior = Behavior::kRateLimit, s.retry_after_seconds = value.empty() ? -1 : std::atof(value.c_str());
  else if (name == "server_error")
    s.behavior = Behavior::kServerError;
  else if (name == "bad_request")
    s.behavior = Behavior::kBadRequest;
  else if (name == "malformed")
    s.behavior = Behavior::kMalformedJson;
  else if (name == "hang")
    s.behavior = Behavior::kHang, s.hang_seconds = value.empty() ? 5 : std::atof(value.c_str());
  else if (name == "drop")
    s.behavior = Behavior::kDrop;
  else if (name == "no_usage")
    s.behavior = Behavior::kNoUsage;
  else if (name == "echo_key")
    s.behavior = Behavior::kEchoKey;
  else
    return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 600;
  accelopt::testing::FakeLlmServer server;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
      continue;
    }
    Scripted s;
    if (!Parse(argv[i], s)) {
      std::fprintf(stderr, "fake_llm_server: unknown behavior '%s'\n", argv[i]);
      return 2;
    }
    server.Enqueue(s);
  }
  std::printf("%s\n", server.base_url().c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return 0;
}
