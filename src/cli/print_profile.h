#pragma once

#include "core/profile.h"

namespace accelopt::cli {

/// Human-readable profile: status, errors, latency, score, counters, logs.
void PrintProfile(const Profile& profile, bool verbose);

}  // namespace accelopt::cli
