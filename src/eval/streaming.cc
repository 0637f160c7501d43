#include "eval/streaming.h"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace accelopt::eval {
namespace {

// Bytes until `p` is 16-byte aligned.
size_t HeadBytes(const void* p) { return (16 - (reinterpret_cast<uintptr_t>(p) & 15)) & 15; }

}  // namespace

void StreamCopy(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t head = std::min(HeadBytes(d), bytes);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  for (; bytes >= 64; d += 64, s += 64, bytes -= 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  std::memcpy(d, s, bytes);
}

namespace {

void StreamFill(char* d, __m128i value, const void* pattern, size_t unit, size_t bytes) {
  size_t head = std::min(HeadBytes(d), bytes);
  for (size_t k = 0; k < head; k += unit) std::memcpy(d + k, pattern, unit);
  d += head, bytes -= head;
  for (; bytes >= 64; d += 64, bytes -= 64) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), value);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), value);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), value);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), value);
  }
  for (size_t k = 0; k < bytes; k += unit) std::memcpy(d + k, pattern, unit);
}

}  // namespace

void StreamFill32(void* dst, uint32_t pattern, size_t count) {
  // The pattern is whole in every aligned 16 bytes only if the start is 4-byte aligned.
  StreamFill(static_cast<char*>(dst), _mm_set1_epi32(static_cast<int>(pattern)), &pattern, 4, count * 4);
}

void StreamFill64(void* dst, uint64_t pattern, size_t count) {
  StreamFill(static_cast<char*>(dst), _mm_set1_epi64x(static_cast<long long>(pattern)), &pattern, 8, count * 8);
}

void StreamFence() { _mm_sfence(); }

namespace {

// clflushopt is weakly ordered (flushes overlap), several times faster than clflush.
__attribute__((target("clflushopt"))) void EvictLinesOpt(const char* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) _mm_clflushopt(const_cast<char*>(p + off));
}

void EvictLines(const char* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) _mm_clflush(p + off);
}

// CPUID leaf 7, EBX bit 23 (read directly: not every compiler's
// __builtin_cpu_supports knows "clflushopt").
bool HasClflushopt() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23)) != 0;
}

}  // namespace

void EvictFromCaches(const void* p, size_t bytes) {
  static const bool has_clflushopt = HasClflushopt();
  if (has_clflushopt)
    EvictLinesOpt(static_cast<const char*>(p), bytes);
  else
    EvictLines(static_cast<const char*>(p), bytes);
}

}  // namespace accelopt::eval
