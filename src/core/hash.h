#pragma once
/// Stable hashes (the same on every run and machine). Content identity (a
/// kernel's "seen before", build cache keys, a job's inputs) is SHA-256,
/// since a kernel is written by a model and FNV collisions are easy to craft:
/// a crafted kernel must not inherit another's verdict or build. FNV-1a and
/// SplitMix64 remain for what no input chooses to collide: seeds of random
/// streams, a machine's fingerprint, identifiers an export format derives.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace accelopt {

/// SHA-256 of `data`, 64 lowercase hex digits (OpenSSL's libcrypto).
std::string ContentHash(std::string_view data);

/// SHA-256 over several pieces fed in turn; Hex() ends it. Not thread-safe.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  ContentHasher& Add(std::string_view data);
  /// 64 lowercase hex digits; call once.
  std::string Hex();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// FNV-1a, 64 bits. Not for content identity (collisions are easy to craft):
/// seeds and fingerprints of what the engine itself chooses.
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
