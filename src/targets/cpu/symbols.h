#pragma once
/// What a built kernel imports and exports: a kernel may not call into other
/// processes, files, sockets, the dynamic loader or (unless the task allows it)
/// BLAS, and may not define the timer functions the harness relies on.

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::cpu {

/// The dynamic symbols of a shared library: `undefined` = the ones it imports.
Result<std::vector<std::string>> DynamicSymbols(const std::string& library, bool undefined);

/// A one-line reason when the library imports or exports something a kernel
/// may not; nullopt when it is clean. `allow_blas` admits BLAS imports.
Result<std::optional<std::string>> ForbiddenSymbolUse(const std::string& library, bool allow_blas);

}  // namespace accelopt::cpu
