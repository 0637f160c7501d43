#!/usr/bin/env python3
"""Side-by-side anchor benchmark for the cuda target, run on a GPU machine from
the repository root:

    python3 bench/gpu_anchors.py [TASK...] [--shape gpu] [--kernel TASK=PATH.cu]... [--json out.json]

For each task (default: every suite task with a baseline.cu and an anchor) it
draws the inputs on the GPU with torch from task.yaml's distributions, runs the
anchor, builds the task's baseline.cu and every --kernel .cu with nvcc as the
engine does (same flags, a generated shape.h), calls them through ctypes on the
same tensors, checks every kernel's outputs against the anchor's, and times
everything alike: CUDA events around each call, the L2 flushed (a buffer of
twice its size written) before every call, the contenders' calls interleaved,
median and min of N repetitions after a warm-up.

Anchors, each made and checked in its own try: one that cannot run is reported
with why (in the table and under could_not_run in the JSON), the rest go on:
  matmul, bmm, transpose_matmul, lora: cuBLAS through torch in fp32, TF32 off.
  gqa_paged_decode_*, gqa_paged_prefill_causal_* (page size 1): FlashInfer
    cannot be installed on the GPU machine; two torch anchors stand in, each
    over the pages gathered in page-table order with index_select (the gather
    is timed) and each replayed as a CUDA graph so that Python's launches are
    not timed (--eager-anchor to time them too; where capture fails the calls
    run eagerly and why is reported):
    - SDPA: scaled_dot_product_attention, one call per request (decode:
      FLASH_ATTENTION; prefill: FLASH_ATTENTION with is_causal where a request
      has as many queries as kv positions, else an explicit bottom-right causal
      mask with EFFICIENT_ATTENTION, or MATH where that cannot run; which one
      ran is reported);
    - FlexAttention: flex_attention over one packed sequence of every request
      ([1, heads, tokens, dim]), with a block mask built once beforehand
      (untimed) from kv_indptr (and qo_indptr): a request id per query and per
      kv position, so that each query sees only its own request's kv
      positions j <= i + kv_len - q_len (document masking, bottom-right causal
      for prefill); GQA by enable_gqa=True; compiled once with torch.compile
      (dynamic=False) and called twice before anything is timed; where the
      default (flex-decoding) kernel does not compile, as for the decode tasks
      with torch 2.11, once more with kernel_options FORCE_USE_FLEX_ATTENTION
      (label "forced"). Its natural-log lse times 1/ln 2 gives the task's
      base-2 lse; both outputs are checked against an fp32 attention.
      --no-flex leaves it out.
  Every anchor's outputs are checked against an fp32 (attention) or fp64
  (matmul) torch computation; the kernels against the first anchor's outputs
  where it gives them, else against that computation.

Read floor (gqa_paged_decode_*): bench/read_floor.cu, built with nvcc like the
kernels and called the same way, reads every page of k and v once in
page-table order (one warp per stretch of the page table, 16-byte loads, many
pages in flight), adding up their 32-bit words into one word per lse element;
the sum of those modulo 2^32 is checked against torch's, so no read can be
skipped. No decode kernel can take less time: every decode contender is also
given as its median over the floor's ("x floor").

Yardsticks: every contender's median is also given as a share of the HBM
bandwidth (%HBM: the task's roofline min_bytes, as task_spec evaluates it,
over the median, divided by the bandwidth of a 1 GiB device-to-device copy,
bytes read and written, median of 10, measured once; or --hbm-gbps), and for
the matmul tasks of the fp32 GEMM peak (%fp32: roofline flops_mm over the
median, divided by cuBLAS's fp32 8192^3 product through torch, TF32 off,
median of 5; or --fp32-tflops). Both are in the table and the --json output.
The two paged decode tasks with one extra kernel each take under a minute on
an H100/H200 (torch.compile included); --reps and --warmup bound the timing.

--dry-run needs neither torch nor a GPU: it reads the tasks, evaluates the
shapes, writes the shape headers, builds every kernel with nvcc and prints what
it would run. Exit status: 0 done and every check passed, 1 an error or a
failed check, 77 no nvcc (nothing could be built).
"""

import argparse
import ctypes
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from task_spec import TaskError, load_task  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXIT_NO_NVCC = 77
TOOLKIT_NVCC = "/usr/local/cuda/bin/nvcc"  # where the engine also looks (src/targets/cuda/toolchain.cc)
DEFAULT_ARCH = "sm_90a"  # the engine's arch where there is no device: an H100's
# src/targets/cuda/toolchain.{h,cc}: NvccOptions::flags and the library arguments.
NVCC_FLAGS = ["-O3", "-std=c++17", "-lineinfo", "-Xcompiler", "-fPIC", "-shared", "-Xptxas", "-v"]
NVCC_TIMEOUT_S = 600
MATMUL_KINDS = ("matmul", "bmm", "transpose_matmul", "lora")
READ_FLOOR_SOURCE = Path(__file__).resolve().parent / "read_floor.cu"  # the paged decode tasks' read floor


class BenchError(Exception):
    """An error for the user: the message says what failed and where."""


# ---------------------------------------------------------------- anchors: which task gets which

@dataclass
class Anchor:
    kind: str  # one of MATMUL_KINDS, or paged_decode / paged_prefill
    description: str
    flex: str = ""  # paged attention: the FlexAttention anchor's description


# Each matmul anchor's arguments: name and dimensions (parameter names), all float32.
MATMUL_SIGNATURES = {
    "matmul": ([("lhs", "M K"), ("rhs", "K N")], [("out", "M N")], "torch.matmul(lhs, rhs)"),
    "bmm": ([("lhs", "B M K"), ("rhs", "B K N")], [("out", "B M N")], "torch.bmm(lhs, rhs)"),
    "transpose_matmul": ([("lhs", "K M"), ("rhs", "K N")], [("out", "M N")], "torch.matmul(lhs.t(), rhs)"),
    "lora": ([("x", "M K"), ("w", "K N"), ("a", "K R"), ("b", "R N")], [("out", "M N")],
             "torch.addmm(x @ w, x @ a, b)"),
}
PAGED_SIGNATURES = {
    "paged_decode": ([("q", "batch_size num_qo_heads head_dim", "bf16"),
                      ("k_cache", "num_pages page_size num_kv_heads head_dim", "bf16"),
                      ("v_cache", "num_pages page_size num_kv_heads head_dim", "bf16"),
                      ("kv_indptr", "len_indptr", "int32"), ("kv_indices", "num_kv_indices", "int32"),
                      ("sm_scale", "", "float32")],
                     [("output", "batch_size num_qo_heads head_dim", "bf16"),
                      ("lse", "batch_size num_qo_heads", "float32")]),
    "paged_prefill": ([("q", "total_q num_qo_heads head_dim", "bf16"),
                       ("k_cache", "num_pages page_size num_kv_heads head_dim", "bf16"),
                       ("v_cache", "num_pages page_size num_kv_heads head_dim", "bf16"),
                       ("qo_indptr", "len_indptr", "int32"), ("kv_indptr", "len_indptr", "int32"),
                       ("kv_indices", "num_kv_indices", "int32"), ("sm_scale", "", "float32")],
                      [("output", "total_q num_qo_heads head_dim", "bf16"),
                       ("lse", "total_q num_qo_heads", "float32")]),
}


def check_signature(task, inputs, outputs, what):
    """Raises BenchError unless the task's arguments are `inputs` then `outputs`:
    (name, dimensions as parameter names[, dtype]) each."""
    def text(tensors):
        return ", ".join(f"{t[0]} [{', '.join(t[1].split())}] {t[2] if len(t) > 2 else 'float32'}" for t in tensors)

    def fits(declared, expected):
        return len(declared) == len(expected) and all(
            t.name == e[0] and t.dtype == (e[2] if len(e) > 2 else "float32") and
            t.dims == [task.params.get(p, -1) for p in e[1].split()] for t, e in zip(declared, expected))

    if not (fits(task.inputs, inputs) and fits(task.outputs, outputs)):
        have = ", ".join(f"{t.name} {t.dims} {t.dtype}" for t in task.inputs + task.outputs)
        raise BenchError(f"task {task.name}: the {what} anchor expects {text(inputs)}; then {text(outputs)}; "
                         f"task.yaml has {have}")


def anchor_for(task):
    """The task's anchor, or None when it has none; a BenchError when the task is
    one an anchor is meant for but its arguments do not fit it."""
    if task.name in MATMUL_SIGNATURES:
        inputs, outputs, call = MATMUL_SIGNATURES[task.name]
        if task.roofline["flops_mm"] <= 0:
            raise BenchError(f"task {task.name}: a matmul anchor needs roofline.flops_mm > 0")
        check_signature(task, inputs, outputs, task.name)
        return Anchor(task.name, f"cuBLAS via {call}, fp32, TF32 off")
    kind = ("paged_decode" if task.fib_definition.startswith("gqa_paged_decode_") else
            "paged_prefill" if task.fib_definition.startswith("gqa_paged_prefill_causal_") else None)
    if kind is None:
        return None
    check_signature(task, *PAGED_SIGNATURES[kind], kind.replace("_", " "))
    p = task.params
    if p["page_size"] != 1 or p["num_qo_heads"] % p["num_kv_heads"]:
        raise BenchError(f"task {task.name}: the paged attention anchor needs page_size 1 and num_qo_heads "
                         f"a multiple of num_kv_heads")
    how = ("one FLASH_ATTENTION call per request" if kind == "paged_decode" else
           "one call per request: FLASH_ATTENTION with is_causal where q_len == kv_len, else a bottom-right "
           "causal mask on EFFICIENT_ATTENTION (MATH where that cannot run)")
    flex = ("torch FlexAttention (torch.compile, compile untimed) over one packed sequence of every request's "
            "pages gathered with index_select (gather timed), a block mask keeping each query to its own request's "
            "kv positions" + (" and bottom-right causal" if kind == "paged_prefill" else "") + ", enable_gqa")
    return Anchor(kind, f"torch SDPA over the pages gathered with index_select (gather timed), {how}", flex)


def anchors_text():
    return (", ".join(MATMUL_KINDS) + " (cuBLAS) and the FlashInfer-Bench paged attention tasks "
            "gqa_paged_decode_* and gqa_paged_prefill_causal_* with page size 1 (torch SDPA and FlexAttention)")


# ---------------------------------------------------------------- builds

@dataclass
class Build:
    label: str
    source: Path  # as shown: relative to the repository where it lies inside it
    library: Path
    seconds: float
    ptxas: str  # registers, spills and shared memory per function, from ptxas -v


def find_nvcc(explicit):
    if explicit:
        if not Path(explicit).is_file():
            raise BenchError(f"--nvcc {explicit}: no such file")
        return explicit
    return shutil.which("nvcc") or (TOOLKIT_NVCC if Path(TOOLKIT_NVCC).is_file() else None)


def build_kernel(nvcc, arch, task, label, source, folder):
    """Builds `source` for `task` into folder/kernel.so as the engine does; a BenchError with nvcc's output."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shape.h").write_text(task.shape_header())
    shutil.copyfile(source, folder / "kernel.cu")
    command = [nvcc, f"-arch={arch}", *NVCC_FLAGS, "-include", "shape.h", "-x", "cu", "kernel.cu", "-o", "kernel.so"]
    start = time.monotonic()
    try:
        run = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=NVCC_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise BenchError(f"task {task.name}: {label} ({shown(source)}): nvcc ran past {NVCC_TIMEOUT_S} s") from None
    except OSError as e:
        raise BenchError(f"cannot run {nvcc}: {e.strerror}") from None
    output = run.stdout + run.stderr
    if run.returncode != 0 or not (folder / "kernel.so").is_file():
        raise BenchError(f"task {task.name}: {label} ({shown(source)}) does not build (nvcc exit status "
                         f"{run.returncode}; {' '.join(command)}):\n{output.strip()}")
    try:
        ctypes.CDLL(str(folder / "kernel.so")).kernel
    except (OSError, AttributeError) as e:
        raise BenchError(f"task {task.name}: {label} ({shown(source)}) builds but defines no extern \"C\" function "
                         f"'kernel': {e}") from None
    ptxas = "\n".join(line for line in output.splitlines()
                      if line.startswith("ptxas info") and ("Used" in line or "Function properties" in line)
                      or "spill" in line)
    return Build(label, shown(source), folder / "kernel.so", time.monotonic() - start, ptxas)


def ptxas_summary(report):
    registers = [int(r) for r in re.findall(r"Used (\d+) registers", report)]
    spills = sum(int(s) for s in re.findall(r"(\d+) bytes spill stores", report))
    return f"{len(registers)} function(s), at most {max(registers, default=0)} registers, {spills} bytes spilled"


# ---------------------------------------------------------------- the plan

@dataclass
class Job:
    task: object  # task_spec.BoundTask
    anchor: Anchor
    kernels: list = field(default_factory=list)  # (label, source path)
    builds: list = field(default_factory=list)  # Build, in the order of kernels
    floor_build: object = None  # Build of read_floor.cu (paged decode tasks), else None


def shown(path):
    """`path` relative to the repository where it lies inside it (as printed and kept in the JSON)."""
    try:
        return path.resolve().relative_to(ROOT)
    except ValueError:
        return path


def parse_kernel_flags(values):
    extra = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise BenchError(f"--kernel {value}: expected TASK=PATH.cu")
        if not Path(path).is_file():
            raise BenchError(f"--kernel {value}: no such file {path}")
        extra.setdefault(name, []).append(Path(path))
    return extra


def plan_jobs(args):
    suite = Path(args.suite)
    if not suite.is_dir():
        raise BenchError(f"--suite {suite}: no such folder")
    extra = parse_kernel_flags(args.kernel)
    jobs = []
    names = args.tasks or sorted(p.parent.name for p in suite.glob("*/baseline.cu") if (p.parent / "task.yaml").is_file())
    for name in names:
        folder = suite / name
        if not (folder / "task.yaml").is_file():
            raise BenchError(f"no task '{name}' in {suite}")
        if not (folder / "baseline.cu").is_file():
            raise BenchError(f"task {name} has no baseline.cu: the cuda target does not run it")
        try:
            task = load_task(folder, args.shape)
        except TaskError as e:
            raise BenchError(str(e)) from None
        anchor = anchor_for(task)
        if anchor is None:
            if args.tasks:
                raise BenchError(f"task {name} has no anchor: anchors exist for {anchors_text()}")
            continue
        job = Job(task, anchor, [("baseline", folder / "baseline.cu")])
        for path in extra.pop(name, []):
            label = path.stem if path.stem not in [k[0] for k in job.kernels] else f"{path.stem}#{len(job.kernels)}"
            job.kernels.append((label, path))
        jobs.append(job)
    if extra:
        raise BenchError(f"--kernel names task(s) not benchmarked here: {', '.join(sorted(extra))}")
    if not jobs:
        raise BenchError("no task to benchmark")
    return jobs


def build_jobs(jobs, nvcc, arch, build_dir):
    for job in jobs:
        for i, (label, source) in enumerate(job.kernels):
            folder = build_dir / job.task.name / f"{i}-{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}"
            job.builds.append(build_kernel(nvcc, arch, job.task, label, source, folder))
        if job.anchor.kind == "paged_decode":
            job.floor_build = build_kernel(nvcc, arch, job.task, "read floor", READ_FLOOR_SOURCE,
                                           build_dir / job.task.name / "read-floor")


def describe_input(t):
    d = dict(t.dist)
    kind = d.pop("kind")
    return f"{t.name} {t.dtype} {t.dims} {kind}({', '.join(f'{k}={v:g}' for k, v in d.items())})"


def print_plan(jobs, args, arch):
    for job in jobs:
        t = job.task
        print(f"{t.name} (shape {t.shape}: {' '.join(f'{k}={v}' for k, v in sorted(t.params.items()))})")
        print(f"  inputs:  {'; '.join(describe_input(i) for i in t.inputs)}")
        print(f"  outputs: {'; '.join(f'{o.name} {o.dtype} {o.dims}' for o in t.outputs)}")
        print(f"  anchor:  {job.anchor.description}")
        if job.anchor.flex:
            print(f"  anchor:  {job.anchor.flex}")
        if job.floor_build:
            b = job.floor_build
            print(f"  floor:   {b.label} ({b.source}) built for {arch} in {b.seconds:.1f} s: {ptxas_summary(b.ptxas)}")
        for b in job.builds:
            print(f"  kernel:  {b.label} ({b.source}) built for {arch} in {b.seconds:.1f} s: {ptxas_summary(b.ptxas)}")
    print(f"would time each anchor and kernel {args.reps} times after {args.warmup} warm-up call(s), CUDA events "
          f"around each call, the L2 flushed before every call, the calls interleaved")
    print(f"HBM bandwidth: {f'{args.hbm_gbps:g} GB/s (--hbm-gbps)' if args.hbm_gbps else 'measured (1 GiB copy)'}"
          + ("; fp32 GEMM peak: " + (f"{args.fp32_tflops:g} TFLOP/s (--fp32-tflops)" if args.fp32_tflops else
                                     "measured (cuBLAS 8192^3)")
             if any(j.anchor.kind in MATMUL_KINDS for j in jobs) else ""))


# ---------------------------------------------------------------- main

def parse_args(argv):
    head, usage, rest = __doc__.split("\n\n", 2)
    p = argparse.ArgumentParser(description=head + "\n\n" + usage, formatter_class=argparse.RawTextHelpFormatter,
                                epilog=rest)
    p.add_argument("tasks", nargs="*", help="task names (default: every task with a baseline.cu and an anchor)")
    p.add_argument("--shape", default="gpu",
                   help="the shape to run (default: gpu, the cuda target's default, which every task with a baseline.cu has)")
    p.add_argument("--suite", default=str(ROOT / "suite"), help="the task folder (default: the repository's suite/)")
    p.add_argument("--kernel", action="append", default=[], metavar="TASK=PATH",
                   help="another .cu kernel to build and time for TASK (repeatable)")
    p.add_argument("--reps", type=int, default=30, help="timed calls per anchor and kernel (default: 30)")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls before (default: 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the inputs (default: 0)")
    p.add_argument("--json", metavar="PATH", help="write every figure as JSON to PATH")
    p.add_argument("--dry-run", action="store_true", help="read, build and print the plan: no torch, no GPU")
    p.add_argument("--build-dir", help="where the builds go (default: a temporary folder, removed after)")
    p.add_argument("--nvcc", help="the nvcc to use (default: on $PATH, else " + TOOLKIT_NVCC + ")")
    p.add_argument("--arch", help=f"nvcc -arch (default: the device's, {DEFAULT_ARCH} for --dry-run)")
    p.add_argument("--eager-anchor", action="store_true",
                   help="time the attention anchors' Python launches too instead of replaying a CUDA graph")
    p.add_argument("--no-flex", action="store_true",
                   help="leave out the FlexAttention anchor (and its torch.compile)")
    p.add_argument("--hbm-gbps", type=float, metavar="GB/S",
                   help="the HBM bandwidth the %%HBM column divides by (default: measured, a 1 GiB device copy)")
    p.add_argument("--fp32-tflops", type=float, metavar="TFLOP/S",
                   help="the fp32 GEMM peak the %%fp32 column divides by (default: measured, cuBLAS 8192^3)")
    args = p.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        p.error("--reps must be at least 1 and --warmup at least 0")
    if (args.hbm_gbps is not None and args.hbm_gbps <= 0) or (args.fp32_tflops is not None and args.fp32_tflops <= 0):
        p.error("--hbm-gbps and --fp32-tflops must be positive")
    return args


def write_json(path, document):
    try:
        Path(path).write_text(json.dumps(document, indent=2) + "\n")
    except OSError as e:
        raise BenchError(f"cannot write {path}: {e.strerror}") from None


def run(args):
    jobs = plan_jobs(args)
    nvcc = find_nvcc(args.nvcc)
    if not nvcc:
        print(f"gpu_anchors: nvcc is not on $PATH or at {TOOLKIT_NVCC} (give --nvcc): nothing can be built",
              file=sys.stderr)
        return EXIT_NO_NVCC
    torch = None
    if not args.dry_run:
        import gpu_anchors_torch as gpu
        try:
            torch = gpu.import_torch()
        except gpu.GpuError as e:
            raise BenchError(str(e)) from None
    arch = args.arch or (gpu.device_arch(torch) if torch else DEFAULT_ARCH)
    with tempfile.TemporaryDirectory(prefix="gpu_anchors-") as scratch:
        build_dir = Path(args.build_dir) if args.build_dir else Path(scratch)
        build_jobs(jobs, nvcc, arch, build_dir)
        if args.dry_run:
            print_plan(jobs, args, arch)
            if args.json:
                write_json(args.json, {"dry_run": True, "arch": arch, "tasks": [
                    {"task": j.task.name, "shape": j.task.shape, "params": j.task.params,
                     "anchor": j.anchor.description, "flex_anchor": j.anchor.flex or None,
                     "read_floor": ({"source": str(j.floor_build.source), "ptxas": j.floor_build.ptxas}
                                    if j.floor_build else None),
                     "kernels": [{"label": b.label, "source": str(b.source), "ptxas": b.ptxas} for b in j.builds]}
                    for j in jobs]})
            return 0
        try:
            document = gpu.benchmark(torch, jobs, args, arch)
        except gpu.GpuError as e:
            raise BenchError(str(e)) from None
    gpu.print_table(document)
    if args.json:
        write_json(args.json, document)
    return 0 if document["all_checks_passed"] else 1


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except BenchError as e:
        print(f"gpu_anchors: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
