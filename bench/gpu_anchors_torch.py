"""The GPU half of bench/gpu_anchors.py: inputs drawn with torch, the anchors,
kernels called through ctypes, the checks and the timing. torch is imported by
import_torch() only, so that the dry run needs none of this module's imports.
"""

import ctypes
import math
import statistics
import sys
import time
import warnings

DEVICE = "cuda"  # where every tensor lives
FIB_TOLERANCE = 1e-2  # FlashInfer-Bench's atol and rtol for the bf16 output (and the lse)
FALLBACK_L2_BYTES = 50 << 20  # an H100's L2, where torch does not report it
TIMING = ("CUDA events recorded on the current stream around each call; before every call the L2 is flushed by "
          "writing a buffer of twice its size; warm-up calls, then rounds in which every contender is called once "
          "in turn")


class GpuError(Exception):
    """A failure on the GPU side, for the user: says what failed."""


class ContextLost(GpuError):
    """A call failed on the device: the CUDA context is lost and nothing after it can run."""


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
        self.requests = paged_requests(inputs, prefill)
        for r in self.requests:
            if r.mode == "masked":
                r.mask = self.causal_mask(r.q1 - r.q0, r.k1 - r.k0)
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
        self.call, self.graph_error = capture_graph(self.torch, self.run)
        self.graph = self.graph_error is None

    def outputs(self):
        return {"output": self.out}

    def yardstick(self):
        return paged_yardstick(self.torch, self.q, self.k_cache, self.v_cache, self.indices, self.requests, self.group,
                               self.scale)


def paged_yardstick(torch, q, k_cache, v_cache, indices, requests, group, scale):
    """The output and the base-2 lse in fp32 from the same bf16 values (untimed), from the
    pages gathered anew: k_cache and v_cache as [rows, kv_heads, dim]."""
    k_all, v_all = torch.index_select(k_cache, 0, indices), torch.index_select(v_cache, 0, indices)
    out = torch.zeros(q.shape, dtype=torch.float32, device=DEVICE)
    lse = torch.full(q.shape[:2], -math.inf, dtype=torch.float32, device=DEVICE)
    for r in requests:
        q_len, kv_len = r.q1 - r.q0, r.k1 - r.k0
        qr = q[r.q0:r.q1].float()
        k = k_all[r.k0:r.k1].float().repeat_interleave(group, dim=1)  # [kv_len, heads, dim]
        v = v_all[r.k0:r.k1].float().repeat_interleave(group, dim=1)
        logits = torch.einsum("qhd,khd->hqk", qr, k) * scale
        token = torch.arange(q_len, device=DEVICE)[:, None]
        seen = torch.arange(kv_len, device=DEVICE)[None, :] <= token + (kv_len - q_len)
        logits.masked_fill_(~seen, -math.inf)
        lse[r.q0:r.q1] = (torch.logsumexp(logits, -1) / math.log(2.0)).transpose(0, 1)
        out[r.q0:r.q1] = torch.einsum("hqk,khd->qhd", torch.softmax(logits, -1), v)
    return {"output": out, "lse": lse}, "fp32 torch attention"


def paged_requests(inputs, prefill):
    """The requests with queries and pages, as (q0, q1, k0, k1, mode): a GpuError where a
    request has fewer kv positions than queries (the anchors assume its pages cover its tokens)."""
    kv = inputs["kv_indptr"].tolist()
    qo = inputs["qo_indptr"].tolist() if prefill else list(range(len(kv)))
    requests = []
    for b in range(len(kv) - 1):
        q_len, kv_len = qo[b + 1] - qo[b], kv[b + 1] - kv[b]
        if q_len == 0 or kv_len == 0:
            continue
        if kv_len < q_len:
            raise GpuError(f"request {b} has {q_len} queries but {kv_len} kv positions: the anchor assumes "
                           f"every request's pages cover its own tokens")
        mode = "decode" if not prefill else "causal" if q_len == kv_len else "masked"
        requests.append(Request(qo[b], qo[b + 1], kv[b], kv[b + 1], mode))
    return requests


def capture_graph(torch, run):
    """(replay, None) with `run` captured as a CUDA graph after a warm-up on a side stream, as
    torch.cuda.graph asks; (run, the first line of why) where it cannot be captured."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            run()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            run()
        return graph.replay, None
    except Exception as e:  # noqa: BLE001 - then the calls are timed eagerly, and why is reported
        synchronize(torch, "a failed CUDA graph capture")
        return run, first_line(e)


LOG2E = 1.0 / math.log(2.0)


class FlexAttentionAnchor:
    """torch FlexAttention over one packed sequence: the pages of every request gathered in
    page-table order by one index_select of k and one of v (timed), the queries of every
    request packed along the sequence ([1, heads, tokens, dim], a view), and a block mask
    that keeps query i of request b to b's kv positions j <= i + kv_len - q_len (document
    masking from kv_indptr and qo_indptr: a request id per query and per kv position and
    the last packed kv position each query sees; for decode every position of its own
    request). GQA by enable_gqa=True. flex_attention is compiled once with torch.compile
    and run twice before anything is timed; the block mask is built beforehand (untimed,
    as a planner would). Its natural-log lse is turned into base 2 (times 1/ln 2) and the
    output copied into the task's layout, both timed."""

    def __init__(self, torch, task, inputs, prefill, use_graph, compile=True):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        p = task.params
        self.torch = torch
        kv_heads, dim = p["num_kv_heads"], p["head_dim"]
        q = inputs["q"]
        self.q = q.transpose(0, 1).unsqueeze(0)  # [1, heads, tokens, dim], a view
        self.k_cache = inputs["k_cache"].view(-1, kv_heads, dim)
        self.v_cache = inputs["v_cache"].view(-1, kv_heads, dim)
        self.indices = inputs["kv_indices"]
        self.scale = float(inputs["sm_scale"].item())
        n = self.indices.numel()
        self.k = torch.empty((n, kv_heads, dim), dtype=torch.bfloat16, device=DEVICE)
        self.v = torch.empty_like(self.k)
        self.out = torch.zeros_like(q)
        self.lse = torch.zeros(q.shape[:2], dtype=torch.float32, device=DEVICE)
        kv = inputs["kv_indptr"].tolist()
        qo = inputs["qo_indptr"].tolist() if prefill else list(range(len(kv)))
        if kv[0] != 0 or kv[-1] != n or qo[0] != 0 or qo[-1] != q.shape[0]:
            raise GpuError(f"kv_indptr runs {kv[0]}..{kv[-1]} over {n} pages, qo {qo[0]}..{qo[-1]} over "
                           f"{q.shape[0]} queries")
        q_doc, q_last, kv_doc = [], [], []
        for b in range(len(kv) - 1):
            q_len, kv_len = qo[b + 1] - qo[b], kv[b + 1] - kv[b]
            kv_doc += [b] * kv_len
            q_doc += [b] * q_len
            q_last += [kv[b] + i + kv_len - q_len for i in range(q_len)]  # below kv[b]: sees nothing
        as_tensor = lambda x: torch.tensor(x, dtype=torch.int32, device=DEVICE)  # noqa: E731
        q_doc, q_last, kv_doc = as_tensor(q_doc), as_tensor(q_last), as_tensor(kv_doc)

        def mask_mod(b, h, q_idx, kv_idx):
            return (q_doc[q_idx] == kv_doc[kv_idx]) & (kv_idx <= q_last[q_idx])

        self.block_mask = create_block_mask(mask_mod, None, None, q.shape[0], n, device=DEVICE)
        self.flex = torch.compile(flex_attention, dynamic=False) if compile else flex_attention
        self.kernel_options, self.first_choice_error = None, None
        start = time.monotonic()
        try:
            self.run()  # compiles
        except Exception as e:  # noqa: BLE001 - then once more with the general kernel
            # With few queries flex_attention picks its flex-decoding kernel, which inductor may find no
            # configuration for (seen on an H200 with torch 2.11 for the decode tasks): the general kernel then.
            self.first_choice_error = first_line(e)
            synchronize(torch, "a FlexAttention compile that failed")
            self.kernel_options = {"FORCE_USE_FLEX_ATTENTION": True}
            try:
                self.run()
            except Exception as again:  # noqa: BLE001 - both reasons, for the report
                raise RuntimeError(f"the default kernel: {self.first_choice_error}; FORCE_USE_FLEX_ATTENTION: "
                                   f"{first_line(again)}") from None
        self.run()
        torch.cuda.synchronize()
        compile_seconds = time.monotonic() - start
        self.call, self.graph_error, self.graph = self.run, None, False
        if use_graph:
            self.call, self.graph_error = capture_graph(torch, self.run)
            self.graph = self.graph_error is None
        self.label = (f"FlexAttention{' forced' if self.kernel_options else ''}"
                      f"{' graph' if self.graph else ' eager'}")
        self.details = {
            "library": f"torch FlexAttention ({'torch.compile' if compile else 'eager'}), block mask of "
                       f"document + bottom-right causal masking over one packed sequence",
            "first_two_calls_seconds": round(compile_seconds, 2),
            "cuda_graph": self.graph, "cuda_graph_error": self.graph_error, "gather_timed": True,
            "lse": "flex_attention's natural-log lse / ln 2", "kernel_options": self.kernel_options,
            "default_kernel_error": self.first_choice_error,
        }

    def run(self):
        torch = self.torch
        torch.index_select(self.k_cache, 0, self.indices, out=self.k)
        torch.index_select(self.v_cache, 0, self.indices, out=self.v)
        k = self.k.permute(1, 0, 2).unsqueeze(0)  # [1, kv_heads, n, dim], a view
        v = self.v.permute(1, 0, 2).unsqueeze(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # return_lse is deprecated in favour of return_aux in newer torch
            out, lse = self.flex(self.q, k, v, block_mask=self.block_mask, scale=self.scale, enable_gqa=True,
                                 return_lse=True, kernel_options=self.kernel_options)
        self.out.copy_(out[0].transpose(0, 1))
        torch.mul(lse[0].transpose(0, 1), LOG2E, out=self.lse)

    def outputs(self):
        return {"output": self.out, "lse": self.lse}


def make_anchor(torch, anchor, task, inputs, use_graph):
    if anchor.kind in MatmulAnchor.FORMULAS:
        return MatmulAnchor(torch, task, inputs, anchor.kind)
    return PagedAttentionAnchor(torch, task, inputs, anchor.kind == "paged_prefill", use_graph)


def make_yardstick(torch, kind, task, inputs):
    """The yardstick of every check, computed without any anchor: (outputs, its name)."""
    if kind in MatmulAnchor.FORMULAS:
        formula = MatmulAnchor.FORMULAS[kind]
        return {"out": formula(torch, {k: v.double() for k, v in inputs.items()})}, "fp64 torch"
    p = task.params
    kv_heads, dim = p["num_kv_heads"], p["head_dim"]
    return paged_yardstick(torch, inputs["q"], inputs["k_cache"].view(-1, kv_heads, dim),
                           inputs["v_cache"].view(-1, kv_heads, dim), inputs["kv_indices"],
                           paged_requests(inputs, kind == "paged_prefill"), p["num_qo_heads"] // kv_heads,
                           float(inputs["sm_scale"].item()))


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
        raise ContextLost(f"{what} failed on the device (the CUDA context is lost, nothing after it can run): "
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


def first_line(error):
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}"


def read_floor_check(torch, task, inputs, sums):
    """The read floor's words against the sum, modulo 2^32, of every 32-bit word of the pages
    of k and v that the page table names (see bench/read_floor.cu)."""
    def words(cache):
        rows = torch.index_select(cache.reshape(cache.shape[0], -1), 0, inputs["kv_indices"])
        return rows.contiguous().view(torch.int32).to(torch.int64).sum().item()

    want = (words(inputs["k_cache"]) + words(inputs["v_cache"])) % (1 << 32)
    got = sums.contiguous().view(torch.int32).to(torch.int64).sum().item() % (1 << 32)
    return {"ok": got == want, "rule": "sum of the page words modulo 2^32", "got": got, "want": want}


def bench_task(torch, job, args, flush):
    """One task: the yardstick, every anchor (each in its own try: one that cannot run is reported with
    why), the read floor (decode), the kernels, checked, then all timed interleaved."""
    task = job.task
    kind = job.anchor.kind
    rules = {t.name: ("fib" if t.dtype == "bf16" or kind.startswith("paged") else "l2") for t in task.outputs}
    inputs = draw_inputs(torch, task, args.seed)
    kept = {name: x.clone() for name, x in inputs.items()}
    yardstick, yardstick_name = make_yardstick(torch, kind, task, inputs)
    synchronize(torch, f"the {task.name} yardstick")
    timed = []  # (entry, function)

    def restore_inputs(checks):
        changed = [name for name, x in inputs.items() if not torch.equal(x, kept[name])]
        if changed:
            checks["inputs unchanged"] = {"ok": False, "changed": changed}
            for name in changed:
                inputs[name].copy_(kept[name])

    def try_anchor(entry, build):
        # build() -> the anchor object, made and warmed up; its outputs are checked against the yardstick.
        try:
            anchor = build()
            anchor.call()
            synchronize(torch, f"{task.name}: the {entry['label']} anchor")
        except ContextLost:
            raise  # nothing after it can run
        except Exception as e:  # noqa: BLE001 - any failure of one anchor is reported, the others go on
            entry["error"] = first_line(e)
            print(f"gpu_anchors: {task.name}: the {entry['label']} anchor could not run: {entry['error']}",
                  file=sys.stderr)
            synchronize(torch, f"{task.name}: after the {entry['label']} anchor failed")
            return None
        outputs = {name: x.clone() for name, x in anchor.outputs().items()}
        entry.update(label=anchor.label, **anchor.details)
        entry["checks"] = {f"{name} vs {yardstick_name}": compare(torch, x, yardstick[name], rules[name],
                                                                  task.tolerance)
                           for name, x in outputs.items()}
        restore_inputs(entry["checks"])
        timed.append((entry, anchor.call))
        return outputs

    anchor_entry = {"label": "SDPA" if kind.startswith("paged") else "cuBLAS", "description": job.anchor.description}
    anchor_out = try_anchor(anchor_entry, lambda: make_anchor(torch, job.anchor, task, inputs,
                                                              use_graph=not args.eager_anchor)) or {}
    others = []
    if kind.startswith("paged"):
        flex = {"label": "FlexAttention", "description": job.anchor.flex}
        others.append(flex)
        if getattr(args, "no_flex", False):
            flex["error"] = "skipped (--no-flex)"
        else:
            try_anchor(flex, lambda: FlexAttentionAnchor(torch, task, inputs, kind == "paged_prefill",
                                                         use_graph=not args.eager_anchor))
    floor = None
    floor_build = getattr(job, "floor_build", None)
    if floor_build is not None:
        floor = {"label": floor_build.label, "source": str(floor_build.source),
                 "description": "reads every page of k and v once in page-table order (bench/read_floor.cu)",
                 "ptxas": floor_build.ptxas}
        try:
            call = KernelCall(torch, floor_build, task, inputs)
            call.poison()
            call()
            synchronize(torch, f"{task.name}: the read floor")
            floor["checks"] = {"page words summed": read_floor_check(torch, task, inputs, call.outputs["lse"])}
            restore_inputs(floor["checks"])
            timed.append((floor, call))
        except ContextLost:
            raise
        except Exception as e:  # noqa: BLE001 - reported, the kernels go on
            floor["error"] = first_line(e)
            print(f"gpu_anchors: {task.name}: the read floor could not run: {floor['error']}", file=sys.stderr)
    entries = []
    for build in job.builds:
        kernel = KernelCall(torch, build, task, inputs)
        kernel.poison()
        kernel()
        synchronize(torch, f"{task.name}: {build.label} ({build.source})")
        checks = {}
        for name, got in kernel.outputs.items():
            want, against = (anchor_out[name], "anchor") if name in anchor_out else (yardstick[name], yardstick_name)
            checks[f"{name} vs {against}"] = compare(torch, got, want, rules[name], task.tolerance)
        restore_inputs(checks)
        entry = {"label": build.label, "source": str(build.source), "build_seconds": round(build.seconds, 3),
                 "ptxas": build.ptxas, "checks": checks}
        entries.append(entry)
        timed.append((entry, kernel))
    times = time_interleaved(torch, [fn for _, fn in timed], args.reps, args.warmup, flush)
    for (entry, _), series in zip(timed, times):
        entry.update(times_us=[round(t, 3) for t in series], median_us=statistics.median(series), min_us=min(series))
        entry["checks_passed"] = all(c["ok"] for c in entry["checks"].values())
    for entry in entries:
        entry["anchor_over_kernel"] = (anchor_entry["median_us"] / entry["median_us"]
                                       if "median_us" in anchor_entry else None)
    return {"task": task.name, "shape": task.shape, "params": task.params, "roofline": task.roofline,
            "anchor": anchor_entry, "other_anchors": others, "read_floor": floor, "kernels": entries}


def add_yardsticks(document, task_entry, matmul):
    """Every timed entry's share of the measured HBM bandwidth (the roofline's min_bytes over its
    median), of the fp32 GEMM peak (matmul tasks: flops_mm over its median) and its time over
    the read floor's (decode tasks)."""
    floor = task_entry["read_floor"]
    floor_us = floor.get("median_us") if floor else None
    for e in [task_entry["anchor"], *task_entry["other_anchors"], *([floor] if floor else []), *task_entry["kernels"]]:
        if "median_us" not in e or e["median_us"] <= 0:
            continue
        seconds = e["median_us"] * 1e-6
        if document.get("hbm_gbps"):
            e["hbm_pct"] = 100.0 * task_entry["roofline"]["min_bytes"] / seconds / (document["hbm_gbps"] * 1e9)
        if matmul and document.get("fp32_tflops"):
            e["fp32_peak_pct"] = 100.0 * task_entry["roofline"]["flops_mm"] / seconds / (document["fp32_tflops"] * 1e12)
        if floor_us:
            e["over_read_floor"] = e["median_us"] / floor_us


def median_event_ms(torch, fn, reps, warmup):
    for _ in range(warmup):
        fn()
    pairs = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    synchronize(torch, "a yardstick measurement")
    return statistics.median(s.elapsed_time(e) for s, e in pairs)


def measure_hbm_gbps(torch, nbytes=1 << 30):
    """GB/s of a device-to-device copy of `nbytes` (1 GiB), bytes read and written counted."""
    src = torch.ones(nbytes, dtype=torch.uint8, device=DEVICE)
    dst = torch.empty_like(src)
    ms = median_event_ms(torch, lambda: dst.copy_(src), reps=10, warmup=3)
    del src, dst
    return 2.0 * nbytes / (ms * 1e-3) / 1e9


def measure_fp32_tflops(torch, n=8192):
    """TFLOP/s of cuBLAS's fp32 product of two n x n matrices, TF32 off (as import_torch sets)."""
    a = torch.randn((n, n), device=DEVICE)
    b = torch.randn((n, n), device=DEVICE)
    c = torch.empty((n, n), device=DEVICE)
    ms = median_event_ms(torch, lambda: torch.matmul(a, b, out=c), reps=5, warmup=2)
    del a, b, c
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12


def yardstick_measure(document, key, given, measure, how):
    if given:
        document[key], document[key + "_source"] = float(given), "given on the command line"
        return
    try:
        document[key], document[key + "_source"] = measure(), how
    except ContextLost:
        raise
    except Exception as e:  # noqa: BLE001 - the table then goes without these figures
        document[key], document[key + "_source"] = None, f"not measured: {first_line(e)}"


def cudnn_version(torch):
    try:
        return torch.backends.cudnn.version()
    except Exception:  # noqa: BLE001 - only a detail of the report
        return None


def benchmark(torch, jobs, args, arch):
    """Runs every job; the JSON document of gpu_anchors.py --json."""
    flush = L2Flush(torch)
    device = torch.cuda.current_device()
    document = {
        "device": torch.cuda.get_device_name(device),
        "capability": "%d.%d" % torch.cuda.get_device_capability(device),
        "arch": arch, "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": cudnn_version(torch), "l2_bytes": flush.l2_bytes, "l2_reported_by_torch": flush.l2_reported,
        "flush_bytes": flush.buffer.numel(), "shape": args.shape, "seed": args.seed, "reps": args.reps,
        "warmup": args.warmup, "timing": TIMING, "tasks": [],
    }
    yardstick_measure(document, "hbm_gbps", getattr(args, "hbm_gbps", None), lambda: measure_hbm_gbps(torch),
                      "measured: device-to-device copy of 1 GiB, bytes read + written, median of 10")
    if any(job.anchor.kind in MatmulAnchor.FORMULAS for job in jobs):
        yardstick_measure(document, "fp32_tflops", getattr(args, "fp32_tflops", None),
                          lambda: measure_fp32_tflops(torch),
                          "measured: cuBLAS fp32 8192^3 matmul via torch, TF32 off, median of 5")
    for job in jobs:
        entry = bench_task(torch, job, args, flush)
        add_yardsticks(document, entry, job.anchor.kind in MatmulAnchor.FORMULAS)
        document["tasks"].append(entry)
    document["all_checks_passed"] = all(
        e["checks_passed"] for t in document["tasks"] for e in timed_entries(t))
    document["could_not_run"] = [f"{t['task']}: {e['label']}: {e['error']}" for t in document["tasks"]
                                 for e in [t["anchor"], *t["other_anchors"], t["read_floor"] or {}] if "error" in e]
    return document


def timed_entries(task_entry):
    """The entries that ran (an anchor that could not run has none of the timing fields)."""
    floor = [task_entry["read_floor"]] if task_entry.get("read_floor") else []
    return [e for e in [task_entry["anchor"], *task_entry.get("other_anchors", []), *floor, *task_entry["kernels"]]
            if "median_us" in e]


def print_table(document):
    hbm, fp32 = document.get("hbm_gbps"), document.get("fp32_tflops")
    print(f"{document['device']} (sm {document['capability']}), torch {document['torch']}, CUDA {document['cuda']}; "
          f"{document['reps']} timed calls each, L2 ({document['l2_bytes'] >> 20} MiB) flushed before every call")
    print(f"HBM: {f'{hbm:.0f} GB/s' if hbm else 'unknown'} ({document.get('hbm_gbps_source', 'not measured')})"
          + (f"; fp32 GEMM peak: {f'{fp32:.1f} TFLOP/s' if fp32 else 'unknown'} "
             f"({document.get('fp32_tflops_source')})" if "fp32_tflops" in document else ""))
    header = (f"{'task':<42} {'contender':<34} {'median us':>10} {'min us':>10} {'anchor/k':>8} {'%HBM':>6} "
              f"{'x floor':>7} {'%fp32':>6}  check")
    print(header)
    print("-" * len(header))

    def number(entry, key, form):
        return form.format(entry[key]) if entry.get(key) is not None else "-"

    for t in document["tasks"]:
        rows = [("anchor: " + t["anchor"]["label"], t["anchor"])]
        rows += [("anchor: " + a["label"], a) for a in t.get("other_anchors", [])]
        rows += [("floor: " + t["read_floor"]["label"], t["read_floor"])] if t.get("read_floor") else []
        rows += [(k["label"], k) for k in t["kernels"]]
        name = t["task"]
        for label, entry in rows:
            if "median_us" not in entry:
                print(f"{name:<42} {label:<34} could not run: {entry.get('error', 'unknown')}")
            else:
                failed = [n for n, c in entry["checks"].items() if not c["ok"]]
                check = "ok" if not failed else "FAILED: " + ", ".join(failed)
                print(f"{name:<42} {label:<34} {entry['median_us']:>10.1f} {entry['min_us']:>10.1f} "
                      f"{number(entry, 'anchor_over_kernel', '{:.2f}'):>8} {number(entry, 'hbm_pct', '{:.0f}'):>6} "
                      f"{number(entry, 'over_read_floor', '{:.2f}'):>7} {number(entry, 'fp32_peak_pct', '{:.0f}'):>6}  "
                      f"{check}")
            name = ""
    print("anchor/k > 1: the kernel is faster than the first anchor. %HBM: the task's roofline min_bytes over the "
          "median time, as a share of the HBM bandwidth above. x floor: the median over the read floor's (decode: "
          "no kernel can go below 1). %fp32: flops_mm over the median as a share of the fp32 GEMM peak. The "
          "attention anchors' page gather is timed.")
