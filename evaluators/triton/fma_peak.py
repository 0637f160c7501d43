"""The Triton kernel that measures the vector FMA peak: eight independent
chains of fused multiply-adds per element, BLOCK elements per program, no
memory traffic beyond one store per element at the end. Imported by peaks.py
only when it measures (it imports triton)."""

import triton
import triton.language as tl

BLOCK = 1024
CHAINS = 8


@triton.jit
def fma_chains(out_ptr, iters, mul, add, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = offs.to(tl.float32) * 1e-9
    a = x + 0.125
    b = x + 0.25
    c = x + 0.375
    d = x + 0.5
    e = x + 0.625
    f = x + 0.75
    g = x + 0.875
    h = x + 1.0
    for _ in range(iters):
        a = tl.fma(a, mul, add)
        b = tl.fma(b, mul, add)
        c = tl.fma(c, mul, add)
        d = tl.fma(d, mul, add)
        e = tl.fma(e, mul, add)
        f = tl.fma(f, mul, add)
        g = tl.fma(g, mul, add)
        h = tl.fma(h, mul, add)
    tl.store(out_ptr + offs, a + b + c + d + e + f + g + h)


def launcher(out, programs, iters):
    """A function running the kernel once over `programs` programs; its flops per run."""

    def run():
        fma_chains[(programs,)](out, iters, 0.999, 0.001, BLOCK=BLOCK, num_warps=4)

    return run, 2.0 * CHAINS * BLOCK * programs * iters
