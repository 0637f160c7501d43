"""Tests of bench/gpu_anchors_torch.py on the CPU: the inputs drawn as task.yaml
says, every anchor against the task's own reference.cpp (built with g++), and a
benchmark's whole flow with C++ kernels of the matmul ABI in place of CUDA ones.

Needs torch (any version; on the CPU) and g++; exits 77 without torch. Where
torch has no torch.nn.attention (before 2.3), scaled_dot_product_attention is
replaced by a small fake with the refusals of the real backends (flash: no mask,
no causal mask unless square; efficient: as many kv heads as query heads), so
that the anchors' fallbacks run too. Run as `python3 bench/gpu_anchors_torch_test.py`.
"""

import argparse
import contextlib
import ctypes
import enum
import math
import subprocess
import sys
import tempfile
import time
import types
import unittest
from pathlib import Path
from unittest import mock

try:
    import torch
except ImportError:
    print("torch is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_anchors  # noqa: E402
import gpu_anchors_torch as gpu  # noqa: E402
import task_spec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAGED = ["gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1",
         "gqa_paged_prefill_causal_h32_kv4_d128_ps1", "gqa_paged_prefill_causal_h32_kv8_d128_ps1"]
gpu.DEVICE = "cpu"


def install_fake_sdpa():
    class SDPBackend(enum.Enum):
        FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH = 1, 2, 3

    chosen = []

    @contextlib.contextmanager
    def sdpa_kernel(backends):
        chosen.append(backends[0])
        yield
        chosen.pop()

    def sdpa(q, k, v, attn_mask=None, is_causal=False, scale=None):
        backend = chosen[-1]
        if backend == SDPBackend.FLASH_ATTENTION and (attn_mask is not None or
                                                      (is_causal and q.shape[2] != k.shape[2])):
            raise RuntimeError("No available kernel (flash: no mask, no causal mask unless square)")
        if q.shape[1] != k.shape[1]:
            raise RuntimeError("No available kernel (query and kv heads differ)")
        logits = q.float() @ k.float().transpose(-1, -2) * scale
        if is_causal:
            logits.masked_fill_(~torch.ones(logits.shape[-2:], dtype=torch.bool).tril(), -math.inf)
        if attn_mask is not None:
            logits = logits + attn_mask.float()
        return (torch.softmax(logits, -1) @ v.float()).to(q.dtype)

    module = types.ModuleType("torch.nn.attention")
    module.SDPBackend, module.sdpa_kernel = SDPBackend, sdpa_kernel
    sys.modules["torch.nn.attention"] = module
    torch.nn.functional.scaled_dot_product_attention = sdpa


try:
    import torch.nn.attention  # noqa: F401
    from torch.nn.attention import sdpa_kernel  # noqa: F401
except ImportError:
    install_fake_sdpa()


def reference_outputs(task, inputs, folder):
    """The task's reference.cpp on the same inputs, in double."""
    folder = folder / "reference" / task.name / task.shape  # one library per path: dlopen keeps the first
    folder.mkdir(parents=True)
    (folder / "shape.h").write_text(task.shape_header())
    subprocess.run(["g++", "-O2", "-fPIC", "-shared", "-std=c++20", "-include", str(folder / "shape.h"),
                    str(task.folder / "reference.cpp"), "-o", str(folder / "reference.so")], check=True)
    library = ctypes.CDLL(str(folder / "reference.so"))
    args = [inputs[t.name].float().contiguous().reshape(-1) for t in task.inputs]
    outs = [torch.zeros(t.elements, dtype=torch.float64) for t in task.outputs]
    library.reference(*[ctypes.c_void_p(x.data_ptr()) for x in args + outs])
    return {t.name: o.reshape(t.dims) for t, o in zip(task.outputs, outs)}


class AnchorTest(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory(prefix="gpu_anchors_test-")
        self.folder = Path(self.scratch.name)
        self.no_sync = mock.patch.object(torch.cuda, "synchronize", lambda: None)  # all on the CPU
        self.no_sync.start()

    def tearDown(self):
        self.no_sync.stop()
        self.scratch.cleanup()

    def check_against_reference(self, folder, shape):
        task = task_spec.load_task(folder, shape)
        anchor = gpu_anchors.anchor_for(task)
        inputs = gpu.draw_inputs(torch, task, seed=5)
        made = gpu.make_anchor(torch, anchor, task, inputs, use_graph=False)
        made.call()
        outputs = {k: v.clone() for k, v in made.outputs().items()}
        yardstick, _ = made.yardstick()
        reference = reference_outputs(task, inputs, self.folder)
        rule = "fib" if anchor.kind.startswith("paged") else "l2"
        for name, got in list(outputs.items()) + [(f"yardstick {k}", v) for k, v in yardstick.items()]:
            verdict = gpu.compare(torch, got, reference[name.split()[-1]], rule, task.tolerance)
            self.assertTrue(verdict["ok"], f"{task.name} {shape} {name}: {verdict}")
        return made

    def test_inputs_follow_their_distributions(self):
        task = task_spec.load_task(ROOT / "suite" / PAGED[2], "bench")
        inputs = gpu.draw_inputs(torch, task, seed=1)
        for t in task.inputs:
            x = inputs[t.name]
            self.assertEqual(list(x.shape), t.dims)
            if t.dist["kind"] == "indptr":
                lengths = (x[1:] - x[:-1]).tolist()
                self.assertEqual((x[0].item(), x[-1].item()), (0, t.dist["total"]))
                self.assertGreaterEqual(min(lengths), t.dist["least"])
            elif t.dist["kind"] == "pages":
                self.assertEqual(len(set(x.tolist())), x.numel())
                self.assertTrue(0 <= x.min().item() and x.max().item() < t.dist["pages"])
        self.assertEqual(inputs["q"].dtype, torch.bfloat16)
        self.assertEqual(inputs["sm_scale"].item(), torch.tensor(0.08838834764831845).item())
        kv = inputs["kv_indptr"].diff().tolist()
        self.assertGreater(max(kv), min(kv))  # spread 0.9: lengths differ
        self.assertTrue(torch.equal(inputs["q"], gpu.draw_inputs(torch, task, seed=1)["q"]))

    def test_every_anchor_matches_reference_cpp(self):
        for name in list(gpu_anchors.MATMUL_SIGNATURES) + PAGED:
            with self.subTest(task=name):
                self.check_against_reference(ROOT / "suite" / name, "test")

    def test_flex_anchor_matches_reference_cpp(self):
        # Eager FlexAttention on the CPU (no torch.compile): the packed sequence, the block mask and the lse in base 2.
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: F401
        except ImportError:
            self.skipTest("this torch has no FlexAttention")
        for name in PAGED:
            with self.subTest(task=name):
                task = task_spec.load_task(ROOT / "suite" / name, "test")
                inputs = gpu.draw_inputs(torch, task, seed=5)
                flex = gpu.FlexAttentionAnchor(torch, task, inputs, name.startswith("gqa_paged_prefill"),
                                               use_graph=False, compile=False)
                flex.call()
                reference = reference_outputs(task, inputs, self.folder)
                self.assertEqual(set(flex.outputs()), {"output", "lse"})
                for out, got in flex.outputs().items():
                    verdict = gpu.compare(torch, got, reference[out], "fib", task.tolerance)
                    self.assertTrue(verdict["ok"], f"{name} flex {out}: {verdict}")

    def test_prefill_square_and_mixed_requests(self):
        # Requests with as many queries as kv positions take is_causal; the others the mask.
        for name in PAGED[2:]:
            folder = self.folder / name
            folder.mkdir()
            (folder / "reference.cpp").write_text((ROOT / "suite" / name / "reference.cpp").read_text())
            kv_heads = task_spec.load_task(ROOT / "suite" / name, "test").params["num_kv_heads"]
            common = f"num_qo_heads: 32, num_kv_heads: {kv_heads}, head_dim: 128, page_size: 1"
            text = (ROOT / "suite" / name / "task.yaml").read_text().replace("shapes:\n", (
                f"shapes:\n  square: {{len_indptr: 3, total_q: 10, num_kv_indices: 10, num_pages: 20, {common}}}\n"
                f"  mixed: {{len_indptr: 5, total_q: 12, num_kv_indices: 14, num_pages: 30, {common}}}\n"), 1)
            (folder / "task.yaml").write_text(text)
            with self.subTest(task=name):
                square = self.check_against_reference(folder, "square")
                self.assertEqual(set(square.details["sdpa_backend"]), {"causal"})
                mixed = self.check_against_reference(folder, "mixed")
                self.assertEqual(set(mixed.details["sdpa_backend"]), {"causal", "masked"})


CPU_MATMUL = """// The matmul kernel ABI on the CPU, one element made wrong by WRONG.
extern "C" void kernel(const float* lhs, const float* rhs, float* out, void* stream) {
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float acc = 0;
      for (long k = 0; k < K; ++k) acc += lhs[i * K + k] * rhs[k * N + j];
      out[i * N + j] = acc + (i == 1 && j == 2 ? WRONG : 0.0f);
    }
}
"""


class Event:
    """torch.cuda.Event on the host clock."""

    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        self.at = time.perf_counter()

    def elapsed_time(self, end):
        return (end.at - self.at) * 1000.0  # ms


class FlowTest(unittest.TestCase):
    def test_benchmark_checks_times_and_reports(self):
        task = task_spec.load_task(ROOT / "suite/matmul", "test")
        with tempfile.TemporaryDirectory() as scratch:
            builds = []
            for label, wrong in (("right", "0.0f"), ("wrong", "1.0f")):
                folder = Path(scratch) / label
                folder.mkdir()
                (folder / "shape.h").write_text(task.shape_header() + f"#define WRONG {wrong}\n")
                (folder / "kernel.cpp").write_text(CPU_MATMUL)
                subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-include", str(folder / "shape.h"),
                                str(folder / "kernel.cpp"), "-o", str(folder / "kernel.so")], check=True)
                builds.append(gpu_anchors.Build(label, Path(f"{label}.cu"), folder / "kernel.so", 0.5,
                                                "ptxas info    : Used 30 registers"))
            job = gpu_anchors.Job(task, gpu_anchors.anchor_for(task), [(b.label, b.source) for b in builds], builds)
            args = argparse.Namespace(seed=0, reps=4, warmup=1, eager_anchor=False, shape="test", hbm_gbps=1000.0,
                                      fp32_tflops=10.0, no_flex=False)
            cuda = types.SimpleNamespace(
                Event=Event, synchronize=lambda: None, current_device=lambda: 0,
                get_device_name=lambda device=0: "test device", get_device_capability=lambda device=0: (9, 0),
                get_device_properties=lambda device: types.SimpleNamespace(L2_cache_size=1 << 16),
                current_stream=lambda: types.SimpleNamespace(cuda_stream=0))
            with mock.patch.object(torch, "cuda", cuda):
                document = gpu.benchmark(torch, [job], args, "sm_90a")
                gpu.print_table(document)
        entry = document["tasks"][0]
        self.assertEqual((document["flush_bytes"], document["reps"]), (2 << 16, 4))
        self.assertTrue(entry["anchor"]["checks_passed"])
        right, wrong = entry["kernels"]
        self.assertTrue(right["checks_passed"])
        self.assertFalse(wrong["checks_passed"])
        self.assertFalse(document["all_checks_passed"])
        for e in (entry["anchor"], right, wrong):
            self.assertEqual(len(e["times_us"]), 4)
            self.assertLessEqual(e["min_us"], e["median_us"])
        self.assertAlmostEqual(right["anchor_over_kernel"], entry["anchor"]["median_us"] / right["median_us"])
        self.assertEqual(document["hbm_gbps"], 1000.0)
        for e in (entry["anchor"], right):
            seconds = e["median_us"] * 1e-6
            self.assertAlmostEqual(e["hbm_pct"], 100 * task.roofline["min_bytes"] / seconds / 1e12)
            self.assertAlmostEqual(e["fp32_peak_pct"], 100 * task.roofline["flops_mm"] / seconds / 1e13)
        self.assertEqual((entry["other_anchors"], entry["read_floor"], document["could_not_run"]), ([], None, []))


if __name__ == "__main__":
    unittest.main()
