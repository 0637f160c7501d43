#pragma once
/// Writing tensors in the safetensors format (a little-endian u64 header
/// length, a JSON header naming each tensor's dtype, shape and byte range,
/// then the bytes), as FlashInfer-Bench's workloads load fixed inputs.

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::run {

struct SafeTensor {
  std::string name;
  std::string dtype;  ///< the format's name: "I32", "F32", "BF16", ...
  std::vector<long> shape;
  std::string bytes;  ///< little-endian, row-major
};

/// The file's contents; the header is padded with spaces to a multiple of 8 bytes.
std::string SafetensorsBytes(const std::vector<SafeTensor>& tensors);

/// Writes `tensors` to `path` (its folder must exist).
Status WriteSafetensors(const std::string& path, const std::vector<SafeTensor>& tensors);

}  // namespace accelopt::run
