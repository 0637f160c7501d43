"""The GPU half of bench/gpu_anchors.py: inputs drawn with torch, the anchors,
kernels called through ctypes, the checks and the timing. torch is imported by
import_torch() only, so that the dry run needs none of this module's imports.
"""

import ctypes
import math
import statistics
import warnings

DEVICE = "cuda"  # where every tensor lives
FIB_TOLERANCE = 1e-2  # FlashInfer-Bench's atol and rtol for the bf16 output (and the lse)
FALLBACK_L2_BYTES = 50 << 20  # an H100's L2, where torch does not report it
TIMING = ("CUDA events recorded on the current stream around each call; before every call the L2 is flushed by "
          "writing a buffer of twice its size; warm-up calls, then rounds in which every contender is called once "
          "in turn")


class GpuError(Exception):
    """A failure on the GPU side, for the user: says what failed."""


def import_torch():
    try:
        import torch
    except ImportError:
        raise GpuError("PyTorch is not installed: the benchmark needs torch with CUDA (--dry-run builds without it)")
    if not torch.cuda.is_available():
        raise GpuError(f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no CUDA device")
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: F401
    except ImportError:
        raise GpuError(f"torch {torch.__version__} lacks torch.nn.attention.sdpa_kernel: PyTorch 2.3 or later is needed")
    torch.backends.cuda.matmul.allow_tf32 = False  # the matmul anchors are fp32 cuBLAS, as the kernels compute
    torch.backends.cudnn.allow_tf32 = False
    return torch


def device_arch(torch):
    """nvcc's -arch for the device, as the engine picks it (sm_90a on Hopper)."""
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


def torch_dtype(torch, name):
    return {"float32": torch.float32, "bf16": torch.bfloat16, "int32": torch.int32}[name]


# ---------------------------------------------------------------- inputs

def draw_indptr(torch, parts, dist, generator):
    # As the engine draws it (src/eval/draw.cc): each segment at least `least`, the rest of `total`
    # shared out in proportion to weights uniform in [1 - spread, 1 + spread].
    f64 = dict(dtype=torch.float64, device=DEVICE)
    weights = 1.0 + dist["spread"] * (2.0 * torch.rand(parts, generator=generator, **f64) - 1.0)
    cumulative = torch.cat([torch.zeros(1, **f64), torch.cumsum(weights, 0)])
    spare = dist["total"] - parts * dist["least"]
    share = torch.floor(spare * (cumulative / cumulative[-1]))
    share[-1] = spare
    return torch.arange(parts + 1, **f64) * dist["least"] + share


def draw_inputs(torch, task, seed):
    """Every input of `task` on the GPU, drawn from its task.yaml distribution."""
    generator = torch.Generator(device=DEVICE)
    generator.manual_seed(seed)
    inputs = {}
    for t in task.inputs:
        d, shape = t.dist, tuple(t.dims)
        if d["kind"] == "normal":
            x = torch.randn(shape, generator=generator, device=DEVICE) * d["std"] + d["mean"]
        elif d["kind"] == "uniform":
            x = torch.rand(shape, generator=generator, device=DEVICE) * (d["high"] - d["low"]) + d["low"]
        elif d["kind"] == "constant":
            x = torch.full(shape, d["value"], device=DEVICE)
        elif d["kind"] == "indptr":
            x = draw_indptr(torch, t.elements - 1, d, generator)
        else:  # pages: distinct ids
            x = torch.randperm(d["pages"], generator=generator, device=DEVICE)[: t.elements]
        inputs[t.name] = x.to(torch_dtype(torch, t.dtype)).contiguous()  # bf16: rounded to nearest even
    return inputs


# ---------------------------------------------------------------- anchors

class MatmulAnchor:
    """cuBLAS through torch, fp32 with TF32 off; its yardstick is the same product in fp64."""

    FORMULAS = {
        "matmul": lambda torch, t: torch.matmul(t["lhs"], t["rhs"]),
        "bmm": lambda torch, t: torch.bmm(t["lhs"], t["rhs"]),
        "transpose_matmul": lambda torch, t: torch.matmul(t["lhs"].t(), t["rhs"]),  # cuBLAS reads lhs transposed
        "lora": lambda torch, t: torch.addmm(torch.matmul(t["x"], t["w"]), torch.matmul(t["x"], t["a"]), t["b"]),
    }

    def __init__(self, torch, task, inputs, kind):
        self.torch, self.inputs, self.formula = torch, inputs, self.FORMULAS[kind]
        self.result = None
        self.label = "cuBLAS"
        self.details = {"library": "cuBLAS via torch", "dtype": "float32", "tf32": False}

    def call(self):
        self.result = self.formula(self.torch, self.inputs)

    def outputs(self):
        return {"out": self.result}

    def yardstick(self):
        return {"out": self.formula(self.torch, {k: v.double() for k, v in self.inputs.items()})}, "fp64 torch"


class Request:
    def __init__(self, q0, q1, k0, k1, mode):
        self.q0, self.q1, self.k0, self.k1, self.mode, self.mask = q0, q1, k0, k1, mode, None


class PagedAttentionAnchor:
    """torch SDPA over each request's pages, gathered for all requests by one index_select
    of k and one of v (part of what is timed), then one SDPA call per request:
    - decode and masked prefill: the query heads that share a kv head are laid out as that
      kv head's queries, so no kv head is copied (rows ordered head, token);
    - prefill with q_len == kv_len: is_causal (top-left is bottom-right there), with
      enable_gqa where torch has it, else the kv heads repeated (a copy, timed);
    - prefill with q_len < kv_len: an additive bottom-right causal mask, built once
      beforehand (the page table is read on the host then, as a planner would).
    SDPA returns no lse: the kernels' lse is checked against an fp32 computation."""

    def __init__(self, torch, task, inputs, prefill, use_graph):
        from torch.nn.attention import SDPBackend
        p = task.params
        self.torch, self.prefill = torch, prefill
        self.heads, self.kv_heads, self.dim = p["num_qo_heads"], p["num_kv_heads"], p["head_dim"]
        self.group = self.heads // self.kv_heads
        self.q = inputs["q"]
        self.k_cache = inputs["k_cache"].view(-1, self.kv_heads, self.dim)
        self.v_cache = inputs["v_cache"].view(-1, self.kv_heads, self.dim)
        self.indices = inputs["kv_indices"]
        self.scale = float(inputs["sm_scale"].item())
        self.k = torch.empty((self.indices.numel(), self.kv_heads, self.dim), dtype=torch.bfloat16, device=DEVICE)
        self.v = torch.empty_like(self.k)
        self.out = torch.zeros_like(self.q)  # a request without pages keeps zeros, as FlashInfer-Bench's
        kv = inputs["kv_indptr"].tolist()
        qo = inputs["qo_indptr"].tolist() if prefill else list(range(len(kv)))
        self.requests = []
        for b in range(len(kv) - 1):
            q_len, kv_len = qo[b + 1] - qo[b], kv[b + 1] - kv[b]
            if q_len == 0 or kv_len == 0:
                continue
            if kv_len < q_len:
                raise GpuError(f"request {b} has {q_len} queries but {kv_len} kv positions: the anchor assumes "
                               f"every request's pages cover its own tokens")
            mode = "decode" if not prefill else "causal" if q_len == kv_len else "masked"
            self.requests.append(Request(qo[b], qo[b + 1], kv[b], kv[b + 1], mode))
            if mode == "masked":
                self.requests[-1].mask = self.causal_mask(q_len, kv_len)
        flash, efficient, math_ = SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH
        preferences = {"decode": [(flash, None), (efficient, None), (math_, None)],
                       "masked": [(efficient, None), (math_, None)],
                       "causal": [(b, g) for b in (flash, efficient, math_) for g in ("enable_gqa", "repeat")]}
        self.choice, self.refused = {}, {}
        for mode in sorted({r.mode for r in self.requests}):
            self.choice[mode] = self.choose(mode, preferences[mode])
        self.graph, self.graph_error = False, None
        self.call = self.run
        if use_graph:
            self.capture()
        used = sorted({self.choice[r.mode][0].name for r in self.requests})
        self.label = f"SDPA {'+'.join(used)}{' graph' if self.graph else ' eager'}"
        self.details = {
            "sdpa_backend": {mode: backend.name for mode, (backend, _) in self.choice.items()},
            "requests_per_mode": {mode: sum(r.mode == mode for r in self.requests) for mode in self.choice},
            "gqa": {mode: gqa or "query heads as the kv head's queries" for mode, (_, gqa) in self.choice.items()},
            "refused": self.refused, "cuda_graph": self.graph, "cuda_graph_error": self.graph_error,
            "gather_timed": True, "lse": "not produced by SDPA; the kernels' lse is checked against fp32 math",
        }

    def causal_mask(self, q_len, kv_len):
        # Rows (head of the group, token): token i sees kv positions j <= i + kv_len - q_len. The row
        # stride is a multiple of 16 elements so that EFFICIENT_ATTENTION takes the mask without a copy.
        torch = self.torch
        rows, width = self.group * q_len, -(-kv_len // 16) * 16
        mask = torch.full((rows, width), -math.inf, dtype=torch.bfloat16, device=DEVICE)[:, :kv_len]
        token = torch.arange(q_len, device=DEVICE).repeat(self.group)
        seen = torch.arange(kv_len, device=DEVICE)[None, :] <= token[:, None] + (kv_len - q_len)
        return mask.masked_fill_(seen, 0.0)[None, None]

    def attend(self, r, backend, gqa):
        torch = self.torch
        from torch.nn.attention import sdpa_kernel
        sdpa = torch.nn.functional.scaled_dot_product_attention
        q_len = r.q1 - r.q0
        k = self.k[r.k0:r.k1].permute(1, 0, 2).unsqueeze(0)  # [1, kv_heads, kv_len, dim], a view
        v = self.v[r.k0:r.k1].permute(1, 0, 2).unsqueeze(0)
        with sdpa_kernel([backend]):
            if r.mode == "causal":
                q = self.q[r.q0:r.q1].transpose(0, 1).unsqueeze(0)  # [1, heads, q_len, dim]
                if gqa == "repeat":
                    k, v = k.repeat_interleave(self.group, dim=1), v.repeat_interleave(self.group, dim=1)
                extra = {"enable_gqa": True} if gqa == "enable_gqa" else {}
                o = sdpa(q, k, v, is_causal=True, scale=self.scale, **extra)
                self.out[r.q0:r.q1].copy_(o[0].transpose(0, 1))
            else:
                q = self.q[r.q0:r.q1].view(q_len, self.kv_heads, self.group, self.dim).permute(1, 2, 0, 3)
                q = q.reshape(1, self.kv_heads, self.group * q_len, self.dim)
                o = sdpa(q, k, v, attn_mask=r.mask, scale=self.scale)
                rows = o[0].unflatten(1, (self.group, q_len)).permute(2, 0, 1, 3)  # [q_len, kv_heads, group, dim]
                self.out[r.q0:r.q1].view(q_len, self.kv_heads, self.group, self.dim).copy_(rows)

    def gather(self):
        self.torch.index_select(self.k_cache, 0, self.indices, out=self.k)
        self.torch.index_select(self.v_cache, 0, self.indices, out=self.v)

    def choose(self, mode, candidates):
        # The first (backend, gqa) that runs the mode's first request; why the others did not is kept.
        self.gather()
        first = next(r for r in self.requests if r.mode == mode)
        for backend, gqa in candidates:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    self.attend(first, backend, gqa)
                    self.torch.cuda.synchronize()
                    return backend, gqa
                except (RuntimeError, TypeError) as e:
                    why = [str(w.message).splitlines()[0] for w in caught] + [str(e).splitlines()[0]]
                    self.refused[f"{mode}: {backend.name}{' ' + gqa if gqa else ''}"] = "; ".join(why)
        raise GpuError(f"no SDPA backend runs the {mode} requests: {self.refused}")

    def run(self):
        self.gather()
        for r in self.requests:
            self.attend(r, *self.choice[r.mode])

    def capture(self):
        torch = self.torch
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.run()  # warm-up on a side stream before capture, as torch.cuda.graph asks
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.run()
            self.call, self.graph = graph.replay, True
        except RuntimeError as e:
            self.graph_error = str(e).splitlines()[0]
            torch.cuda.synchronize()

    def outputs(self):
        return {"output": self.out}

    def yardstick(self):
        """The output and the base-2 lse in fp32 from the same bf16 values (untimed)."""
        torch = self.torch
        self.gather()
        out = torch.zeros(self.q.shape, dtype=torch.float32, device=DEVICE)
        lse = torch.full(self.q.shape[:2], -math.inf, dtype=torch.float32, device=DEVICE)
        for r in self.requests:
            q_len, kv_len = r.q1 - r.q0, r.k1 - r.k0
            q = self.q[r.q0:r.q1].float()
            k = self.k[r.k0:r.k1].float().repeat_interleave(self.group, dim=1)  # [kv_len, heads, dim]
            v = self.v[r.k0:r.k1].float().repeat_interleave(self.group, dim=1)
            logits = torch.einsum("qhd,khd->hqk", q, k) * self.scale
            token = torch.arange(q_len, device=DEVICE)[:, None]
            seen = torch.arange(kv_len, device=DEVICE)[None, :] <= token + (kv_len - q_len)
            logits.masked_fill_(~seen, -math.inf)
            lse[r.q0:r.q1] = (torch.logsumexp(logits, -1) / math.log(2.0)).transpose(0, 1)
            out[r.q0:r.q1] = torch.einsum("hqk,khd->qhd", torch.softmax(logits, -1), v)
        return {"output": out, "lse": lse}, "fp32 torch attention"


def make_anchor(torch, anchor, task, inputs, use_graph):
    if anchor.kind in MatmulAnchor.FORMULAS:
        return MatmulAnchor(torch, task, inputs, anchor.kind)
    return PagedAttentionAnchor(torch, task, inputs, anchor.kind == "paged_prefill", use_graph)


# ---------------------------------------------------------------- kernels, checks, timing

class KernelCall:
    """A built kernel.so called through ctypes on the torch tensors' device pointers and
    the current stream, with outputs of its own."""

    def __init__(self, torch, build, task, inputs):
        try:
            self.library = ctypes.CDLL(str(build.library))
            function = self.library.kernel
        except OSError as e:
            raise GpuError(f"cannot load {build.library} (built from {build.source}): {e}") from None
        except AttributeError:
            raise GpuError(f"{build.source} defines no extern \"C\" function 'kernel'") from None
        self.outputs = {t.name: torch.empty(tuple(t.dims), dtype=torch_dtype(torch, t.dtype), device=DEVICE)
                        for t in task.outputs}
        pointers = [inputs[t.name].data_ptr() for t in task.inputs] + [o.data_ptr() for o in self.outputs.values()]
        function.argtypes = [ctypes.c_void_p] * (len(pointers) + 1)
        function.restype = None
        self.function, self.args = function, [ctypes.c_void_p(p) for p in pointers]
        self.stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def __call__(self):
        self.function(*self.args, self.stream)

    def poison(self):
        for o in self.outputs.values():
            o.fill_(math.nan)


def compare(torch, got, want, rule, tolerance):
    """Whether `got` matches `want`: FlashInfer-Bench's rule ("fib": no element off by more than
    1e-2 and by more than 1e-2 of `want`) or the relative L2 error within `tolerance`."""
    got, want = got.double(), want.double()
    same = got == want  # equal infinities (the lse of a request without pages) match
    finite = torch.isfinite(got) & torch.isfinite(want)
    error = torch.where(finite, (got - want).abs(), torch.zeros_like(got))
    out = {"max_abs_error": error.max().item() if error.numel() else 0.0}
    if rule == "fib":
        bad = ~(same | (finite & ((error <= FIB_TOLERANCE) | (error <= FIB_TOLERANCE * want.abs()))))
        out.update(rule="fib atol=rtol=1e-2", bad_elements=int(bad.sum().item()))
        out["ok"] = out["bad_elements"] == 0
    else:
        relative = (torch.linalg.vector_norm(error) / torch.linalg.vector_norm(torch.where(finite, want, 0))).item()
        out.update(rule=f"relative L2 <= {tolerance:g}", relative_l2=relative)
        out["ok"] = bool((same | finite).all().item()) and relative <= tolerance
    return out


def synchronize(torch, what):
    try:
        torch.cuda.synchronize()
    except RuntimeError as e:
        raise GpuError(f"{what} failed on the device (the CUDA context is lost, nothing after it can run): "
                       f"{str(e).splitlines()[0]}") from None


class L2Flush:
    def __init__(self, torch):
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.l2_bytes = int(getattr(props, "L2_cache_size", 0) or 0)
        self.l2_reported = self.l2_bytes > 0
        self.l2_bytes = self.l2_bytes or FALLBACK_L2_BYTES
        self.buffer = torch.empty(2 * self.l2_bytes, dtype=torch.uint8, device=DEVICE)

    def __call__(self):
        self.buffer.zero_()


def time_interleaved(torch, functions, reps, warmup, flush):
    """Microseconds of each call of each function, per function, in the order of TIMING."""
    for _ in range(warmup):
        for fn in functions:
            flush()
            fn()
    synchronize(torch, "a warm-up call")
    events = [[] for _ in functions]
    for _ in range(reps):
        for fn, pairs in zip(functions, events):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            flush()
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
    synchronize(torch, "a timed call")
    return [[1000.0 * s.elapsed_time(e) for s, e in pairs] for pairs in events]


def bench_task(torch, job, args, flush):
    task = job.task
    rules = {t.name: ("fib" if t.dtype == "bf16" or job.anchor.kind.startswith("paged") else "l2")
             for t in task.outputs}
    inputs = draw_inputs(torch, task, args.seed)
    kept = {name: x.clone() for name, x in inputs.items()}
    anchor = make_anchor(torch, job.anchor, task, inputs, use_graph=not args.eager_anchor)
    anchor.call()
    synchronize(torch, f"the {task.name} anchor")
    anchor_out = {name: x.clone() for name, x in anchor.outputs().items()}
    yardstick, yardstick_name = anchor.yardstick()
    anchor_entry = {"label": anchor.label, "description": job.anchor.description, **anchor.details,
                    "checks": {f"{name} vs {yardstick_name}": compare(torch, x, yardstick[name], rules[name],
                                                                      task.tolerance)
                               for name, x in anchor_out.items()}}
    kernels, entries = [], []
    for build in job.builds:
        kernel = KernelCall(torch, build, task, inputs)
        kernel.poison()
        kernel()
        synchronize(torch, f"{task.name}: {build.label} ({build.source})")
        checks = {}
        for name, got in kernel.outputs.items():
            want, against = (anchor_out[name], "anchor") if name in anchor_out else (yardstick[name], yardstick_name)
            checks[f"{name} vs {against}"] = compare(torch, got, want, rules[name], task.tolerance)
        changed = [name for name, x in inputs.items() if not torch.equal(x, kept[name])]
        if changed:
            checks["inputs unchanged"] = {"ok": False, "changed": changed}
            for name in changed:
                inputs[name].copy_(kept[name])
        kernels.append(kernel)
        entries.append({"label": build.label, "source": str(build.source), "build_seconds": round(build.seconds, 3),
                        "ptxas": build.ptxas, "checks": checks})
    times = time_interleaved(torch, [anchor.call] + kernels, args.reps, args.warmup, flush)
    for entry, series in zip([anchor_entry] + entries, times):
        entry.update(times_us=[round(t, 3) for t in series], median_us=statistics.median(series), min_us=min(series))
        entry["checks_passed"] = all(c["ok"] for c in entry["checks"].values())
    for entry in entries:
        entry["anchor_over_kernel"] = anchor_entry["median_us"] / entry["median_us"]
    return {"task": task.name, "shape": task.shape, "params": task.params, "roofline": task.roofline,
            "anchor": anchor_entry, "kernels": entries}


def benchmark(torch, jobs, args, arch):
    """Runs every job; the JSON document of gpu_anchors.py --json."""
    flush = L2Flush(torch)
    device = torch.cuda.current_device()
    document = {
        "device": torch.cuda.get_device_name(device),
        "capability": "%d.%d" % torch.cuda.get_device_capability(device),
        "arch": arch, "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "l2_bytes": flush.l2_bytes, "l2_reported_by_torch": flush.l2_reported,
        "flush_bytes": flush.buffer.numel(), "shape": args.shape, "seed": args.seed, "reps": args.reps,
        "warmup": args.warmup, "timing": TIMING, "tasks": [],
    }
    for job in jobs:
        document["tasks"].append(bench_task(torch, job, args, flush))
    document["all_checks_passed"] = all(
        e["checks_passed"] for t in document["tasks"] for e in [t["anchor"]] + t["kernels"])
    return document


def print_table(document):
    print(f"{document['device']} (sm {document['capability']}), torch {document['torch']}, CUDA {document['cuda']}; "
          f"{document['reps']} timed calls each, L2 ({document['l2_bytes'] >> 20} MiB) flushed before every call")
    header = f"{'task':<44} {'kernel':<36} {'median us':>10} {'min us':>10} {'anchor/kernel':>13}  check"
    print(header)
    print("-" * len(header))
    for t in document["tasks"]:
        a = t["anchor"]
        rows = [(t["task"], "anchor: " + a["label"], a, "-")]
        rows += [("", k["label"], k, f"{k['anchor_over_kernel']:.2f}") for k in t["kernels"]]
        for task, label, entry, ratio in rows:
            failed = [name for name, c in entry["checks"].items() if not c["ok"]]
            check = "ok" if not failed else "FAILED: " + ", ".join(failed)
            print(f"{task:<44} {label:<36} {entry['median_us']:>10.1f} {entry['min_us']:>10.1f} {ratio:>13}  {check}")
    print("anchor/kernel > 1: the kernel is faster than the anchor. The attention anchors' page gather is timed.")
