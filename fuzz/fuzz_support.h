#pragma once
/// Shared by the fuzz targets (fuzz/README.md): the input as text, and a file
/// to hand to readers that take a path.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace accelopt::fuzz {

inline std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// A folder of this process's own under /tmp, created once.
inline const std::string& ScratchFolder() {
  static const std::string dir = [] {
    std::string pattern = "/tmp/accelopt-fuzz-XXXXXX";
    return std::string(mkdtemp(pattern.data()));
  }();
  return dir;
}

/// Writes `text` to `relative` inside the scratch folder; returns the path.
inline std::string WriteScratch(const std::string& relative, const std::string& text) {
  std::string path = ScratchFolder() + "/" + relative;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

}  // namespace accelopt::fuzz
