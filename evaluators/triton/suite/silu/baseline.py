# One program per BLOCK elements of the flattened [M, N] tensor, masked at
# the end; exp in float32.
import triton
import triton.language as tl


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


def kernel(x, out):
    n = M * N
    BLOCK = 1024
    silu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
