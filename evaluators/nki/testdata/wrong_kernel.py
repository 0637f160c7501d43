# Deliberately wrong (a fixture of the replay tests): the baseline without
# the gain w, so every row is normalized but never scaled.
import neuronxcc.nki.language as nl


def kernel(x, w):
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
    rows = min(R, nl.tile_size.pmax)
    i_f = nl.arange(D)[None, :]
    for t in nl.affine_range((R + rows - 1) // rows):
        i_p = t * rows + nl.arange(rows)[:, None]
        tile = nl.load(x[i_p, i_f], mask=(i_p < R))
        sq = nl.sum(nl.multiply(tile, tile), axis=[1])
        scale = nl.rsqrt(sq / D + eps)
        nl.store(out[i_p, i_f], value=nl.multiply(tile, scale), mask=(i_p < R))
    return out
