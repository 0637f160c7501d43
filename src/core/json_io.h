#pragma once
/// Whole-file reading and writing, with errors naming the path.

#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"

namespace accelopt {

using Json = nlohmann::json;

/// The file's bytes. An Error naming the path when it cannot be read or is a directory.
Result<std::string> ReadFile(const std::string& path);
/// Writes atomically: a temporary file beside `path`, then rename.
Status WriteFile(const std::string& path, const std::string& contents);
Result<Json> ReadJsonFile(const std::string& path);
Status WriteJsonFile(const std::string& path, const Json& value);

/// JSON text of `value` (`indent` < 0: one line). Every string crosses into
/// JSON here: bytes that are not valid UTF-8 (a kernel's Latin-1 comment or
/// binary stderr, a log cut inside a character, a path) become U+FFFD instead
/// of an exception. Use this, never Json::dump, for text leaving the process.
std::string DumpJson(const Json& value, int indent = -1);

}  // namespace accelopt
