#include "run/safetensors.h"

#include "core/json_io.h"

namespace accelopt::run {

std::string SafetensorsBytes(const std::vector<SafeTensor>& tensors) {
  Json header = Json::object();
  size_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(text.size()) >> (8 * i)) & 0xff);
  out += text;
  for (const auto& t : tensors) out += t.bytes;
  return out;
}

Status WriteSafetensors(const std::string& path, const std::vector<SafeTensor>& tensors) {
  return WriteFile(path, SafetensorsBytes(tensors));
}

}  // namespace accelopt::run
