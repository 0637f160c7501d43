// Caches its outputs by a hash of its whole input and answers a repeated input
// from the cache. Computing is made slow (2 ms of spinning) so that a cache hit
// would show in the timing: the evaluator must never let the timed calls hit.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

extern "C" void kernel(const float* x, float* out) {
  static std::map<uint64_t, std::vector<float>> cache;
  uint64_t h = 1469598103934665603ULL;
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(x);
  for (long i = 0; i < M * N * 4; ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
  if (auto it = cache.find(h); it != cache.end()) {
    std::memcpy(out, it->second.data(), sizeof(float) * M * N);
    return;
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < until) {
  }
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  cache[h].assign(out, out + M * N);
}
