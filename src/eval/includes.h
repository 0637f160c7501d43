#pragma once
/// What a kernel's source may read at compile time: system headers and its
/// own file. The compiler runs on the engine's machine and its log is stored
/// and sent to the fixer's model, so a kernel that could name any file
/// (`#include "/etc/passwd"`) would copy that file into the log.

#include <optional>
#include <string>

namespace accelopt::eval {

/// Why `source` is refused before it is compiled, or nullopt when it may be
/// compiled. Refused, each with the line it is on: an `#include`,
/// `#include_next`, `#import` or `#embed` other than of a system header by a
/// relative path (`<immintrin.h>`; not `"x.h"`, `</etc/passwd>`,
/// `<../x>`, nor a macro, whose expansion cannot be checked here);
/// `__has_include`/`__has_embed` of anything else (a file's existence is
/// information too); and the assembler's `.include` and `.incbin` directives,
/// which read a file when the kernel's inline assembly is assembled.
/// Directives are recognized as the preprocessor does: after joining lines
/// ended by a backslash, with comments removed and the digraph `%:` read as `#`.
std::optional<std::string> ForbiddenFileAccess(const std::string& source);

}  // namespace accelopt::eval
