#pragma once
/// An unpacked `make dist` tarball (scripts/dist.sh): its binaries are in
/// <root>/bin, its libraries in <root>/lib and its data (suite, prompts, demo,
/// prices, ...) in <root>, which holds kDistMarker.

#include <string>

namespace accelopt {

/// The file that marks the root of an unpacked dist.
inline constexpr const char kDistMarker[] = ".accelopt-dist";

/// The root of the unpacked dist the running executable belongs to (the folder
/// above its own, when it holds kDistMarker); "" for a build tree.
std::string DistRoot();

/// ProjectDataPath (core/paths.h) for an executable in `executable_dir`: in a
/// dist, <root>/<relative> when it exists, whatever the working directory
/// holds, so that a dist always reads its own data; else, as for a build tree
/// (which sits in the checkout), the first of ./<relative> and
/// <executable_dir>/../<relative> that exists; ./<relative> when none does.
std::string ProjectDataPathFor(const std::string& executable_dir, const std::string& relative);

}  // namespace accelopt
