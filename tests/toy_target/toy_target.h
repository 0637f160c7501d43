#pragma once
/// A target of the tests' own, to show what a new target is: one folder, one
/// registration line (toy_target.cc) and data. Its kernel language is a toy:
/// a kernel is lines of `key value`,
///
///   scale 2      every output element is `scale` times its input element
///   cost_us 40   what one call takes, in microseconds
///
/// and every task asks for its first input doubled. It "runs" a kernel by
/// computing that on inputs drawn from the task's name, judges it against
/// the doubled inputs, and times it as its cost says: deterministic, no
/// compiler, no process, no device.

#include "targets/registry.h"

namespace accelopt::toy {

/// "toy"
inline constexpr const char kToyTarget[] = "toy";

/// The toy target's registration: always available; its calibrator saves
/// nothing and reports a fixed profile; its setting `noise_us` is added to
/// every call's cost.
targets::TargetKind Registration();

}  // namespace accelopt::toy
