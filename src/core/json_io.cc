#include "core/json_io.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace accelopt {

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read " + path + ": " + std::strerror(errno)};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Status WriteFile(const std::string& path, const std::string& contents) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return Error{"cannot write " + path + ": cannot create folder " + parent.string() + ": " + ec.message()};
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{"cannot write " + tmp + ": " + std::strerror(errno)};
    out << contents;
    if (!out.flush()) return Error{"cannot write " + tmp + ": " + std::strerror(errno)};
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{"cannot rename " + tmp + " to " + path + ": " + ec.message()};
  return Ok{};
}

Result<Json> ReadJsonFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  try {
    return Json::parse(*text);
  } catch (const Json::exception& e) {
    return Error{path + ": invalid JSON: " + e.what()};
  }
}

Status WriteJsonFile(const std::string& path, const Json& value) { return WriteFile(path, DumpJson(value, 2) + "\n"); }

std::string DumpJson(const Json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace accelopt
