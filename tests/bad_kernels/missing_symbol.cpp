// Defines the wrong name.
extern "C" void kernal(const float* x, float* out) { out[0] = x[0]; }
