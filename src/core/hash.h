#pragma once
/// Stable content hashes (the same on every run and machine), for cache keys.

#include <cstdint>
#include <string>
#include <string_view>

namespace accelopt {

/// FNV-1a, 64 bits.
inline uint64_t Fnv1a64(std::string_view data, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

/// 16 lowercase hex digits.
inline std::string Hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = digits[v & 15];
  return out;
}

}  // namespace accelopt
