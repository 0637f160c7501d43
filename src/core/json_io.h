#pragma once
/// Whole-file reading and writing, with errors naming the path.

#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"

namespace accelopt {

using Json = nlohmann::json;

Result<std::string> ReadFile(const std::string& path);
/// Writes atomically: a temporary file beside `path`, then rename.
Status WriteFile(const std::string& path, const std::string& contents);
Result<Json> ReadJsonFile(const std::string& path);
Status WriteJsonFile(const std::string& path, const Json& value);

}  // namespace accelopt
