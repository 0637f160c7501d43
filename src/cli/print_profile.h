#pragma once

#include "eval/profile.h"

namespace accelopt::cli {

/// Human-readable profile: status, errors, latency, score, counters, logs.
void PrintProfile(const eval::Profile& profile, bool verbose);

}  // namespace accelopt::cli
