"""The rates the GPU reaches, measured once per process (docs/external-protocol.md, `peaks`).

- bandwidth: the best of a device copy of a large float32 buffer (read and
  written bytes counted) and a read-only sum over it (read bytes), so that
  neither a copy-like nor a read-mostly kernel outruns it;
- peak_mm: a large float32 torch.matmul with TF32 tensor cores allowed: the
  fastest rate of a matmul on float32 data (a kernel accurate to float32,
  plain FMA or 3xTF32, stays below it);
- peak_vec: fma_peak.py, a Triton kernel of independent FMA chains.

Each figure is measured in rounds until the best two agree within 2% (three
rounds at least, twelve at most); its spread is the third-best round's
distance from the best. The theoretical figures come from the device's
attributes: memory clock and bus width, SM count and clock with the FP32
lanes and TF32 tensor rate per SM of its architecture (0, unknown, where the
architecture is not in the tables).
"""

import time

# FP32 lanes per SM by compute capability (major, minor).
FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
              (10, 0): 128, (12, 0): 128}
# Dense TF32 tensor-core flops per SM per clock (the higher of a generation's parts).
TF32_FLOPS_PER_SM_CLOCK = {(8, 0): 1024, (8, 6): 512, (8, 7): 512, (8, 9): 512, (9, 0): 2048, (10, 0): 4096,
                           (12, 0): 512}

SETTLE = 0.02
_cached = {}


def _rounds(measure, least=3, most=12):
    """The best of `measure()`'s seconds over rounds, its spread, and whether it settled."""
    times = []
    while len(times) < most:
        times.append(measure())
        best = sorted(times)
        if len(best) >= least and best[1] - best[0] <= SETTLE * best[0]:
            break
    best = sorted(times)
    settled = len(best) >= 2 and best[1] - best[0] <= SETTLE * best[0]
    spread = (best[2] - best[0]) / best[0] if len(best) >= 3 else 1.0
    return best[0], spread, settled


def _per_run(torch, fn, runs):
    """Seconds per run of `fn`, `runs` back to back between two events."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(runs):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / runs


def device_attributes(torch, index):
    """SM clock (kHz), memory clock (kHz) and bus width (bits) as the driver gives them; {} when it does not."""
    try:
        import triton
        props = triton.runtime.driver.active.utils.get_device_properties(index)
        return {k: props.get(k) or 0 for k in ("sm_clock_rate", "mem_clock_rate", "mem_bus_width")}
    except Exception:
        return {}


def driver_version():
    """The NVIDIA driver's version ("550.54.15"), else the CUDA driver API version, else "driver ?"."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            words = f.readline().split()
        for i, w in enumerate(words):
            if w == "Module" and i + 1 < len(words):
                return "driver " + words[i + 1]
    except OSError:
        pass
    try:
        import ctypes
        version = ctypes.c_int(0)
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return "CUDA driver %d.%d" % (version.value // 1000, version.value % 1000 // 10)
    except OSError:
        pass
    return "driver ?"


def machine_line(torch, triton):
    index = torch.cuda.current_device()
    p = torch.cuda.get_device_properties(index)
    l2 = getattr(p, "L2_cache_size", 0)
    return "%s (sm_%d%d), %d SMs, L2 %d MiB, %.0f GiB device memory; torch %s, triton %s, CUDA %s, %s" % (
        p.name, p.major, p.minor, p.multi_processor_count, l2 >> 20, p.total_memory / 2**30, torch.__version__,
        triton.__version__, torch.version.cuda, driver_version())


def fingerprint(torch):
    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    return "%s/%s/%d SMs" % (p.name, driver_version(), p.multi_processor_count)


def _bandwidth(torch, total_memory):
    n = min(1 << 28, total_memory // 16 // 4)  # 1 GiB per buffer at most, an eighth of memory for both
    a = torch.empty(n, dtype=torch.float32, device="cuda").normal_()
    b = torch.empty_like(a)
    copy = _rounds(lambda: _per_run(torch, lambda: b.copy_(a), 10))
    read = _rounds(lambda: _per_run(torch, lambda: a.sum(), 10))
    del a, b
    rates = [(8.0 * n / copy[0] / 1e9, copy), (4.0 * n / read[0] / 1e9, read)]
    rate, (_, spread, settled) = max(rates, key=lambda r: r[0])
    return rate, spread, settled


def _matmul(torch):
    n = 8192
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    c = torch.empty(n, n, device="cuda")
    was = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        torch.matmul(a, b, out=c)  # cuBLAS picks its algorithm
        best, spread, settled = _rounds(lambda: _per_run(torch, lambda: torch.matmul(a, b, out=c), 5))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = was
    return 2.0 * n ** 3 / best / 1e9, spread, settled


def _fma(torch, sms):
    import fma_peak
    programs = sms * 8
    out = torch.empty(programs * fma_peak.BLOCK, dtype=torch.float32, device="cuda")
    run, flops = fma_peak.launcher(out, programs, 256)
    run()  # compiles
    one = _per_run(torch, run, 3)
    # About 5 ms per run: long beside the launch, short beside the time limit. A multiple
    # of 16, as 256 is, so that Triton's specialization of integer arguments does not recompile.
    iters = max(256, int(256 * 5e-3 / max(one, 1e-7)) // 16 * 16)
    run, flops = fma_peak.launcher(out, programs, iters)
    best, spread, settled = _rounds(lambda: _per_run(torch, run, 3))
    return flops / best / 1e9, spread, settled


def measure():
    """The peaks object of a `describe` answer; measured on the first call, then kept."""
    if "peaks" in _cached:
        return _cached["peaks"]
    import torch
    index = torch.cuda.current_device()
    p = torch.cuda.get_device_properties(index)
    cc = (p.major, p.minor)
    bandwidth = _bandwidth(torch, p.total_memory)
    mm = _matmul(torch)
    vec = _fma(torch, p.multi_processor_count)
    attrs = device_attributes(torch, index)
    sm_hz = attrs.get("sm_clock_rate", 0) * 1e3
    theoretical = {
        "bandwidth_gbs": 2 * attrs.get("mem_clock_rate", 0) * 1e3 * attrs.get("mem_bus_width", 0) / 8 / 1e9,
        "peak_mm_gflops": p.multi_processor_count * TF32_FLOPS_PER_SM_CLOCK.get(cc, 0) * sm_hz / 1e9,
        "peak_vec_gflops": p.multi_processor_count * FP32_LANES.get(cc, 0) * 2 * sm_hz / 1e9,
    }
    _cached["peaks"] = {
        "bandwidth_gbs": bandwidth[0],
        "peak_mm_gflops": mm[0],
        "peak_vec_gflops": vec[0],
        "theoretical": theoretical,
        "spreads": {"bandwidth": bandwidth[1], "peak_mm": mm[1], "peak_vec": vec[1]},
        "calibrated": bandwidth[2] and mm[2] and vec[2],
        "fingerprint": fingerprint(torch),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    return _cached["peaks"]
