#!/usr/bin/env python3
"""An accelopt evaluator for kernels written in Python (docs/external-protocol.md).

Run as `evaluator.py REQUEST.json`: it answers one request on stdout. A kernel
is a Python module defining `kernel(<inputs>, <outputs>)` over flat
`array('f')` buffers; the task's parameters and constants are globals of the
module (as `constexpr` values are for a C++ kernel). The task folder holds
`reference.py` (same signature, computing in double precision) and
`baseline.py`.

It reports the Python-level peaks it measures itself (a copy of float32
buffers for bandwidth, a C-speed multiply-add for arithmetic), so a kernel is
scored against what Python on this machine can do. It is a working adapter
and the engine's test of the protocol, not a trust boundary: the kernel runs
in the evaluator's own process (see README.md).
"""

import array
import ast
import json
import math
import operator
import os
import platform
import random
import sys
import time
import traceback

PROTOCOL = 1
ALLOWED_IMPORTS = {"math", "array", "itertools", "operator", "functools"}


def answer(obj):
    obj["protocol"] = PROTOCOL
    sys.stdout.write(json.dumps(obj))
    sys.stdout.write("\n")
    sys.stdout.flush()


def best_of(rounds, fn):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure_peaks():
    """Bandwidth of a float32 buffer copy (64 MiB, beyond the caches) and the rate of a C-speed multiply-add."""
    n = 1 << 24
    a = array.array("f", bytes(4 * n))
    b = array.array("f", bytes(4 * n))

    def copy():
        b[:] = a

    copy_s = best_of(3, copy)
    x = [1.0001] * (1 << 18)
    y = [0.9999] * (1 << 18)

    def fma():
        sum(map(operator.mul, x, y))

    fma_s = best_of(7, fma)
    gflops = 2 * len(x) / fma_s / 1e9
    return {
        "bandwidth_gbs": 2 * 4 * n / copy_s / 1e9,
        "peak_mm_gflops": gflops,
        "peak_vec_gflops": gflops,
        "calibrated": True,
        "spreads": {"bandwidth": 0.05, "peak_mm": 0.05, "peak_vec": 0.05},
        "fingerprint": platform.node() + "/" + platform.python_implementation() + "-" + platform.python_version(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def describe(_request):
    answer({
        "name": "python",
        "language": "python",
        "file_extension": ".py",
        "fence_tags": ["python", "py"],
        "build_command": "python3 %s (compiled to bytecode; import statements checked against %s, "
        "which is no boundary: not trusted against a hostile kernel)"
        % (platform.python_version(), ", ".join(sorted(ALLOWED_IMPORTS))),
        "prompts_dir": "evaluators/python/prompts",
        "machine": "%s, %d cores, Python %s (one interpreter thread)"
        % (platform.machine(), os.cpu_count() or 1, platform.python_version()),
        "peaks": measure_peaks(),
        "serve": True,
        "compare": True,
        # Not a boundary (README): every ok the engine reports says so.
        "trusted": False,
        "isolation": "none: the kernel runs in the evaluator's own interpreter, and its import check "
                     "reads the source only (__import__ passes it)",
    })


def shape_globals(task):
    g = {}
    g.update({k: (int(v) if float(v).is_integer() else v) for k, v in task["params"].items()})
    g.update(task["constants"])
    return g


def load_module(path, task):
    with open(path) as f:
        source = f.read()
    scope = shape_globals(task)
    exec(compile(source, path, "exec"), scope)
    return scope


def build(request):
    source = request["source"]
    path = os.path.join(request["work_dir"], "kernel.py")
    with open(path, "w") as f:
        f.write(source)
    start = time.perf_counter()
    try:
        tree = ast.parse(source, path)
        compile(tree, path, "exec")
    except SyntaxError as e:
        answer({"status": "compile_error", "message": "%s:%s: %s" % (path, e.lineno, e.msg),
                "log": "".join(traceback.format_exception_only(type(e), e))})
        return
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [(node.module or "").split(".")[0]]
        for name in names:
            if name not in ALLOWED_IMPORTS:
                answer({"status": "forbidden", "message": "imports '%s' (allowed: %s)"
                        % (name, ", ".join(sorted(ALLOWED_IMPORTS)))})
                return
    if not any(isinstance(n, ast.FunctionDef) and n.name == "kernel" for n in tree.body):
        answer({"status": "compile_error", "message": "no function `kernel` is defined", "log": ""})
        return
    answer({"status": "ok", "artifact": path, "log": "", "seconds": time.perf_counter() - start})


def draw(tensor, rng):
    d = tensor["dist"]
    if d["kind"] == "uniform":
        return [rng.uniform(d["a"], d["b"]) for _ in range(tensor["elements"])]
    return [rng.gauss(d["a"], d["b"]) for _ in range(tensor["elements"])]


def call(fn, task, inputs):
    """Runs fn on float32 copies of the inputs and NaN-poisoned outputs; returns the outputs."""
    args = [array.array("f", values) for values in inputs]
    outs = [array.array("f", [math.nan]) * t["elements"] for t in task["outputs"]]
    fn(*args, *outs)
    return outs


def reference(task, inputs):
    scope = load_module(os.path.join(task["dir"], "reference.py"), task)
    outs = [[math.nan] * t["elements"] for t in task["outputs"]]
    scope["reference"](*[list(array.array("f", v)) for v in inputs], *outs)
    return outs


def rel_l2(out, ref):
    num = sum((o - r) ** 2 for o, r in zip(out, ref))
    den = sum(r * r for r in ref)
    return math.sqrt(num / den) if den > 0 else math.sqrt(num)


def check(request):
    task = request["task"]
    try:
        kernel = load_module(request["artifact"], task)["kernel"]
    except Exception:
        answer({"status": "runtime_error", "message": "the kernel module failed to load",
                "log": traceback.format_exc()})
        return
    worst = {"rel_l2": 0.0, "max_abs": 0.0}
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    for seed in range(request["seeds"]):
        inputs = [draw(t, rng) for t in task["inputs"]]
        try:
            outs = call(kernel, task, inputs)
        except Exception:
            answer({"status": "runtime_error", "message": "the kernel raised an exception (seed %d)" % seed,
                    "log": traceback.format_exc()})
            return
        for t, out, ref in zip(task["outputs"], outs, reference(task, inputs)):
            bad = sum(1 for v in out if not math.isfinite(v))
            if bad:
                answer({"status": "wrong_answer", "checked_calls": seed + 1,
                        "message": "output '%s': %d of %d values are not finite" % (t["name"], bad, len(out))})
                return
            err = rel_l2(out, ref)
            worst["rel_l2"] = max(worst["rel_l2"], err)
            worst["max_abs"] = max(worst["max_abs"], max((abs(o - r) for o, r in zip(out, ref)), default=0.0))
            if err > task["tolerance"]:
                answer({"status": "wrong_answer", "checked_calls": seed + 1, "errors": worst,
                        "message": "output '%s': relative L2 error %.3g exceeds %.3g"
                        % (t["name"], err, task["tolerance"])})
                return
    answer({"status": "ok", "checked_calls": request["seeds"], "errors": worst})


def timing_setup(request, *fns):
    """Three drawn input sets (fresh inputs for every call would cost more than the
    call; they are rotated), poisoned outputs, and the calls per series the
    engine's budget allows for the slowest of `fns`."""
    task = request["task"]
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    sets = [[array.array("f", draw(t, rng)) for t in task["inputs"]] for _ in range(3)]
    outs = [array.array("f", [math.nan]) * t["elements"] for t in task["outputs"]]
    one = max(best_of(1, lambda: fn(*sets[0], *outs)) for fn in fns)
    calls = max(request["min_calls"], min(request["max_calls"], int(request["budget_seconds"] / max(one, 1e-7))))
    return sets, outs, calls


def timed(fn, args, outs):
    start = time.perf_counter()
    fn(*args, *outs)
    return time.perf_counter() - start


def time_kernel(request):
    kernel = load_module(request["artifact"], request["task"])["kernel"]
    try:
        sets, outs, calls = timing_setup(request, kernel)
        series = [[timed(kernel, sets[c % len(sets)], outs) for c in range(calls)] for _ in range(2)]
    except Exception:
        answer({"status": "runtime_error", "message": "the kernel raised an exception while timed",
                "log": traceback.format_exc()})
        return
    answer({"status": "ok", "series": series})


def compare(request):
    """Times two kernels side by side: pairs of calls on the same inputs, in the order A B, then B A."""
    kernels = [load_module(path, request["task"])["kernel"] for path in request["artifacts"]]
    try:
        sets, outs, calls = timing_setup(request, *kernels)
        pairs = []
        for c in range(calls):
            times = [0.0, 0.0]
            for which in ((0, 1) if c % 2 == 0 else (1, 0)):
                times[which] = timed(kernels[which], sets[c % len(sets)], outs)
            pairs.append(times)
    except Exception:
        answer({"status": "runtime_error", "message": "a kernel raised an exception while compared",
                "log": traceback.format_exc()})
        return
    answer({"status": "ok", "pairs": pairs})


def handle(request):
    if request.get("protocol") != PROTOCOL:
        answer({"error": "protocol %r is not spoken here (only %d)" % (request.get("protocol"), PROTOCOL)})
        return
    ops = {"describe": describe, "build": build, "check": check, "time": time_kernel, "compare": compare}
    op = ops.get(request.get("op"))
    if op is None:
        answer({"error": "unknown op %r" % request.get("op")})
        return
    op(request)


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--serve":
        # Persistent: one request per line on stdin, one answer per line on stdout, until stdin ends.
        for line in sys.stdin:
            if line.strip():
                handle(json.loads(line))
        return 0
    if len(sys.argv) != 2:
        sys.stderr.write("usage: evaluator.py REQUEST.json | evaluator.py --serve "
                         "(started by accelopt; see docs/external-protocol.md)\n")
        return 2
    with open(sys.argv[1]) as f:
        handle(json.load(f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
