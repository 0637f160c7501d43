// Rounds through bfloat16 (8 bits of mantissa).
#include <cstdint>
#include <cstring>
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) {
    float v = 2.0f * x[i];
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits &= 0xffff0000u;
    std::memcpy(&out[i], &bits, 4);
  }
}
