# Deliberately broken (a fixture of the replay tests): nki.language has no
# rms_norm, so tracing the kernel fails before anything runs.
import neuronxcc.nki.language as nl


def kernel(x, w):
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.rms_norm(nl.load(x), nl.load(w), eps))
    return out
