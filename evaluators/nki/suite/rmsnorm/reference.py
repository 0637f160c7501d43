# out[r][d] = x[r][d] / sqrt(mean(x[r]^2) + eps) * w[d], in double precision
# (Python floats). The inputs are flat, row-major lists; the answer is the
# list of outputs, each flat and row-major.
import math


def reference(x, w):
    out = [0.0] * (R * D)
    for r in range(R):
        row = x[r * D:(r + 1) * D]
        scale = 1.0 / math.sqrt(sum(v * v for v in row) / D + eps)
        for d in range(D):
            out[r * D + d] = row[d] * scale * w[d]
    return [out]
