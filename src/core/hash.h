#pragma once
/// Stable hashes (the same on every run and machine): content hashes for cache
/// keys, and a 64-bit mixer for counter-based random streams.

#include <cstdint>
#include <string>
#include <string_view>

namespace accelopt {

/// FNV-1a, 64 bits.
inline uint64_t Fnv1a64(std::string_view data, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

/// The SplitMix64 finalizer: a good 64-bit mix, cheap enough per element.
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// 16 lowercase hex digits.
inline std::string Hex64(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) out[static_cast<size_t>(i)] = digits[v & 15];
  return out;
}

}  // namespace accelopt
