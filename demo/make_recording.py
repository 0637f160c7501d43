#!/usr/bin/env python3
"""Builds demo/recording.jsonl, the scripted LLM answers for the offline demo run.

The kernels live in demo/kernels/<task>/<step>.cpp; the plan texts and lessons are
below. Run from anywhere: python3 demo/make_recording.py
The recording holds no measured figures: latencies, speedups and percent of peak
are measured when the recording is replayed.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Per task, in the order the loop asks: two plans for iteration 1 (on the baseline),
# two for iteration 2 (on the iteration-1 winner). Each iteration-2 kernel holds the
# better iteration-1 ideas plus its own step, since the replay cannot know which
# iteration-1 plan won.
STEPS = {
    "silu": [
        dict(step="iter1_a",
             title="Vectorize silu with a polynomial exp",
             details="The loop calls the scalar libm expf once per element, which keeps the compiler from "
                     "vectorizing it. Replace it with an inline float exp: range reduction x = n*ln2 + r with "
                     "ln2 split in a high and a low part, a degree-6 polynomial for e^r on [-ln2/2, ln2/2], and "
                     "2^n built from the exponent bits, with the argument clamped so 2^n stays finite. Every "
                     "step is plain float arithmetic, so `#pragma omp simd` runs sixteen elements per AVX-512 "
                     "instruction with about 1e-7 relative error.",
             executor="Inlined a branch-free float exp so the element loop vectorizes with AVX-512.",
             lesson="""**Replace scalar libm transcendentals with an inline vectorizable polynomial**
A call to std::exp (or log, tanh) inside an elementwise loop usually stops auto-vectorization: the loop runs one element per call. Writing the function as range reduction plus a short polynomial plus exponent-bit scaling keeps it in float registers, lets `#pragma omp simd` or intrinsics process a whole vector per instruction, and stays within about 1e-7 relative error. It helps in any kernel dominated by exp-like functions (sigmoid, silu, gelu, softmax); clamp the argument so the exponent field cannot overflow.
```cpp
// before
for (long i = 0; i < n; ++i) out[i] = x[i] / (1.0f + std::exp(-x[i]));
// after
static inline float exp_poly(float x) {           // x clamped to [-87, 88]
  float n = (x * 1.442695f + 12582912.0f) - 12582912.0f;  // round(x / ln2)
  float r = x - n * 0.693359375f - n * -2.12194440e-4f;
  float p = /* degree-6 polynomial in r */;
  return p * std::bit_cast<float>((int(n) + 127) << 23);
}
#pragma omp simd
for (long i = 0; i < n; ++i) out[i] = x[i] / (1.0f + exp_poly(-x[i]));
```"""),
        dict(step="iter1_b",
             title="Split silu rows across cores with OpenMP",
             details="Every output element depends only on its own input, so the rows are independent. Add "
                     "`#pragma omp parallel for schedule(static)` on the row loop so each core works through "
                     "a contiguous block of rows. This uses both cores of the machine without changing the "
                     "arithmetic.",
             executor="Split the row loop across the cores with a static OpenMP schedule.",
             lesson="""**Split independent elementwise rows across cores with a static OpenMP loop**
When every output depends only on its own inputs, a `parallel for schedule(static)` on the outermost loop gives each core one contiguous block, with no synchronization beyond the closing barrier. It pays off when the per-element work is compute-heavy (a scalar libm call); for an already vectorized, memory-bound loop the gain is capped by memory bandwidth.
```cpp
// before
for (long i = 0; i < M; ++i) for (long j = 0; j < N; ++j) out[i*N+j] = f(x[i*N+j]);
// after
#pragma omp parallel for schedule(static)
for (long i = 0; i < M; ++i) for (long j = 0; j < N; ++j) out[i*N+j] = f(x[i*N+j]);
```"""),
        dict(step="iter2_a",
             title="Run the vectorized silu loop on all cores",
             details="The vectorized loop runs on one core only. Turn `#pragma omp simd` into `#pragma omp "
                     "parallel for simd schedule(static)` over the flat element range, so each core runs the "
                     "AVX-512 polynomial on its own contiguous chunk. With two cores both the exp arithmetic "
                     "and the memory traffic are shared, and the chunks stay long enough for the hardware "
                     "prefetchers.",
             executor="Combined the vectorized exp loop with a static OpenMP split: `parallel for simd`.",
             lesson="""**Use `parallel for simd` to combine threads and vector lanes in one loop**
Once an elementwise loop vectorizes, split its iteration range across the cores with `#pragma omp parallel for simd schedule(static)`: each thread gets one contiguous chunk and vectorizes it, so the vector code and the threading compose without restructuring. It helps until the loop reaches the memory bandwidth of the machine; keep the chunks contiguous so the prefetchers see long streams.
```cpp
// before
#pragma omp simd
for (long i = 0; i < n; ++i) out[i] = f(x[i]);
// after
#pragma omp parallel for simd schedule(static)
for (long i = 0; i < n; ++i) out[i] = f(x[i]);
```"""),
        dict(step="iter2_b",
             title="Stream silu results with AVX-512 non-temporal stores",
             details="The output is written once and never read back by the kernel, yet each store first "
                     "pulls its cache line in (read-for-ownership), adding a third memory stream to a "
                     "bandwidth-bound loop. Rewrite the loop with AVX-512 intrinsics (the same polynomial exp, "
                     "two vectors per step), split it across both cores with OpenMP, and write the results "
                     "with _mm512_stream_ps, fencing each thread's stores with _mm_sfence before the barrier. "
                     "A masked tail handles lengths that are not a multiple of 32.",
             executor="Rewrote the vectorized silu with AVX-512 intrinsics, OpenMP chunks and non-temporal stores.",
             lesson="""**Write large write-only outputs with non-temporal stores**
A normal store to a line not in cache first reads that line from memory (read-for-ownership), so a streaming elementwise kernel moves three bytes per two it needs. When the output is large, written in full aligned vectors and not read again soon, `_mm512_stream_ps` writes it straight to memory and removes that read. Each thread must issue `_mm_sfence()` before the closing barrier, and the tail must use ordinary (masked) stores. Avoid it for outputs that are consumed right away from cache.
```cpp
// before
for (long i = 0; i < n; i += 16) _mm512_store_ps(out + i, f(_mm512_load_ps(x + i)));
// after
#pragma omp parallel
{
#pragma omp for nowait
  for (long i = 0; i < n; i += 16) _mm512_stream_ps(out + i, f(_mm512_load_ps(x + i)));
  _mm_sfence();
}
```"""),
    ],
    "matmul": [
        dict(step="iter1_a",
             title="Reorder matmul loops to i-k-j",
             details="The innermost k loop reads rhs[k*N + j] with a stride of N floats, touching a new cache "
                     "line per multiply and preventing vectorization. Reorder the loops to i-k-j: zero the "
                     "output row, then for each k add lhs[i][k] times the contiguous row k of rhs into it. The "
                     "inner loop then streams rhs and the output row with unit stride and vectorizes with "
                     "AVX-512 FMAs.",
             executor="Reordered the loops to i-k-j so the inner loop is a unit-stride, vectorizable axpy.",
             lesson="""**Make the innermost loop unit-stride: use i-k-j order for row-major matmul**
In the textbook i-j-k order the reduction loop walks a column of the right-hand matrix, one cache line per element and no vectorization. Moving k outside j turns the inner loop into an axpy over a contiguous row (out_row += a * rhs_row), which reads every fetched cache line completely and vectorizes. It applies to any contraction over row-major data whose reduction index is the slow index of one operand.
```cpp
// before
for (i) for (j) { float acc = 0; for (k) acc += A[i*K+k] * B[k*N+j]; C[i*N+j] = acc; }
// after
for (i) { for (j) C[i*N+j] = 0;
  for (k) { float a = A[i*K+k];
#pragma omp simd
    for (j) C[i*N+j] += a * B[k*N+j]; } }
```"""),
        dict(step="iter1_b",
             title="Parallelize matmul rows with OpenMP",
             details="The output rows are independent dot-product sets, so add `#pragma omp parallel for "
                     "schedule(static)` on the row loop. Each core then computes its own block of output rows "
                     "and the second core of the machine is no longer idle. The loop body is unchanged.",
             executor="Split the output rows across the cores with OpenMP.",
             lesson="""**Threading a strided loop helps little: fix the access pattern first**
Splitting the independent output rows across cores with `#pragma omp parallel for` is an easy win, but when the inner loop walks memory with a large stride both cores wait on the same cache and memory system, so the gain stays well below the core count. Parallelize first where the per-core work is compute-bound, and make the inner loop unit-stride before or together with threading.
```cpp
// before
for (long i = 0; i < M; ++i) for (long j = 0; j < N; ++j) C[i*N+j] = dot(A + i*K, B + j, K, N);
// after
#pragma omp parallel for schedule(static)
for (long i = 0; i < M; ++i) for (long j = 0; j < N; ++j) C[i*N+j] = dot(A + i*K, B + j, K, N);
```"""),
        dict(step="iter2_a",
             title="Register-block matmul into 8x48 tiles",
             details="The i-k-j loop loads and stores the output row for every k, so it is limited by loads "
                     "and stores rather than FMAs, and it rereads all of rhs for each output row. Compute 8-row "
                     "by 48-column output tiles with AVX-512 intrinsics instead: 24 accumulators stay in "
                     "registers for the whole K loop, each k loads three vectors of one rhs row and broadcasts "
                     "eight lhs values, so each rhs load feeds eight FMAs and the output is written once. Split "
                     "the column blocks across both cores with OpenMP (collapse over column and row blocks) and "
                     "mask partial tiles at the edges.",
             executor="Wrote an 8x48 AVX-512 register-blocked micro-kernel with OpenMP over column blocks.",
             lesson="""**Keep an output tile in registers across the whole reduction**
An axpy-style inner loop (C_row += a * B_row) loads and stores C for every multiply-add and reuses each loaded B value once, so load/store ports, not FMA units, set the speed. A register-blocked micro-kernel holds an MR x NR tile of C in vector registers across all of K: per k it loads NR/16 vectors of B and broadcasts MR values of A, giving MR FMAs per B load and writing C once. Choose MR x NR/16 accumulators to fill most of the register file (24 of 32 zmm here) and split tiles over cores.
```cpp
// before
for (k) { float a = A[i*K+k]; for (j) C[i*N+j] += a * B[k*N+j]; }
// after: 8 x 48 tile, acc[8][3] are __m512 registers
for (long k = 0; k < K; ++k) {
  __m512 b0 = _mm512_loadu_ps(B + k*N + j0), b1 = ..., b2 = ...;
  for (int r = 0; r < 8; ++r) { __m512 a = _mm512_set1_ps(A[(i0+r)*K + k]);
    acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]); /* same for b1, b2 */ }
}
/* store acc once */
```"""),
        dict(step="iter2_b",
             title="Cache-block matmul K into L2 panels",
             details="In i-k-j order every output row streams all of rhs, so rhs is read from L3 once per "
                     "row. Give each core a contiguous slice of output columns with OpenMP and walk K in panels "
                     "of 256 rows: one panel of the core's column slice (about 192 KiB) stays in its L2 while "
                     "all M output rows accumulate against it. rhs then leaves L3 once per call, and the "
                     "inner loop stays a unit-stride, vectorized axpy.",
             executor="Blocked K into L2-sized panels of rhs and gave each core its own column slice.",
             lesson="""**Block the reduction dimension so a panel of the shared operand stays in L2**
When several output rows each stream the same large operand, that operand is fetched from L3 or memory once per row. Splitting K into panels sized for the L2 cache (panel rows x column slice x 4 bytes well under L2) and running all rows against one panel before moving on turns those refetches into L2 hits. Combine it with a per-core column split so each core's panel is private. It helps when the operand is larger than L2 and reused by many rows.
```cpp
// before
for (i) for (k) for (j in slice) C[i][j] += A[i][k] * B[k][j];
// after
for (k0 = 0; k0 < K; k0 += 256)
  for (i) for (k = k0; k < k0 + 256; ++k) for (j in slice) C[i][j] += A[i][k] * B[k][j];
```"""),
    ],
    "rmsnorm_matmul": [
        dict(step="iter1_a",
             title="Fuse rmsnorm scaling into an i-k-j matmul",
             details="The kernel divides every x element by the rms, then computes dot products in i-j-k "
                     "order with a stride-N walk down w. Compute the sum of squares with a vectorized "
                     "reduction and one reciprocal 1/rms per row, form each normalized value as x[i][k] * "
                     "inv_rms on the fly, and reorder the matmul to i-k-j so the inner loop adds that value "
                     "times a contiguous row of w into the output row. This removes the per-element divisions "
                     "and the scratch row, and the inner loop vectorizes with unit stride.",
             executor="Fused the normalization into an i-k-j matmul: one reciprocal per row, unit-stride inner loop.",
             lesson="""**Fold a per-row normalization into the consuming loop as one reciprocal multiply**
A normalization that writes a scaled copy of a row (xn[k] = x[k] / rms) costs a division per element and a scratch buffer that the next loop rereads. Computing 1/rms once per row and scaling each value as it is consumed removes both, and pairing it with an i-k-j matmul makes the consumer a unit-stride, vectorizable axpy. It applies to rmsnorm, layernorm or softmax denominators feeding a matmul or reduction.
```cpp
// before
for (k) xn[k] = x[i*K+k] / rms;
for (j) { float acc = 0; for (k) acc += xn[k] * w[k*N+j]; out[i*N+j] = acc; }
// after
const float inv = 1.0f / std::sqrt(ss / K);
for (k) { float a = x[i*K+k] * inv;
#pragma omp simd
  for (j) out[i*N+j] += a * w[k*N+j]; }
```"""),
        dict(step="iter1_b",
             title="Parallelize rmsnorm_matmul rows with OpenMP",
             details="Each output row depends only on its own row of x, so split the row loop across the "
                     "cores with `#pragma omp for schedule(static)` inside a parallel region. Each thread "
                     "allocates its own normalized scratch row once, so the threads never share the buffer. "
                     "The arithmetic per row is unchanged.",
             executor="Parallelized the rows with OpenMP and gave each thread a private scratch row.",
             lesson="""**Give each thread its own scratch buffer when parallelizing rows**
A kernel that reuses one scratch buffer across loop iterations cannot simply get `parallel for`: threads would overwrite each other's data. Open a parallel region, allocate the scratch once per thread inside it, and share only the work-sharing loop. The gain stays limited while the inner loop walks memory with a large stride; fix the access order too.
```cpp
// before
std::vector<float> xn(K);
for (long i = 0; i < M; ++i) { normalize(x + i*K, xn); row_matmul(xn, w, out + i*N); }
// after
#pragma omp parallel
{ std::vector<float> xn(K);
#pragma omp for schedule(static)
  for (long i = 0; i < M; ++i) { normalize(x + i*K, xn); row_matmul(xn, w, out + i*N); } }
```"""),
        dict(step="iter2_a",
             title="Register-block rmsnorm_matmul into 8x48 tiles with scaled stores",
             details="The fused i-k-j loop loads and stores the output row for every k and streams all of w "
                     "once per row. Since the row scale is linear, multiply raw x by w and apply 1/rms when a "
                     "tile is stored. Compute the row norms in a parallel prologue, then 8-row by 48-column "
                     "output tiles with AVX-512 intrinsics: 24 accumulators stay in registers over the whole "
                     "K loop, each k loads three vectors of one w row and broadcasts eight x values. Split the "
                     "column blocks across both cores with OpenMP and mask partial tiles.",
             executor="Wrote an 8x48 AVX-512 register-blocked matmul that applies 1/rms at the store, with OpenMP.",
             lesson="""**Apply per-row scale factors at the store of a register-blocked matmul**
A per-row scale of the left operand commutes with the matmul: (s_i * x_i) @ W = s_i * (x_i @ W). A register-blocked micro-kernel can therefore accumulate raw x @ W in its tile registers and multiply each row by s_i once when the tile is stored, instead of scaling every x element. Combined with an MR x NR register tile (MR FMAs per loaded W vector, C written once), this moves the matmul from load/store-bound towards FMA-bound.
```cpp
// before
for (k) { float a = x[i*K+k] * inv[i]; for (j) out[i*N+j] += a * w[k*N+j]; }
// after: acc[r][c] are __m512 registers holding an 8 x 48 tile of x @ w
for (long k = 0; k < K; ++k) { /* 3 loads of w, 8 broadcasts of x, 24 FMAs */ }
for (int r = 0; r < 8; ++r)
  _mm512_storeu_ps(o + r*N, _mm512_mul_ps(acc[r][0], _mm512_set1_ps(inv[i0 + r])));
```"""),
        dict(step="iter2_b",
             title="Cache-block rmsnorm_matmul K into L2 panels",
             details="In the fused i-k-j loop each output row streams all of w (8 MiB) from L3. Compute the row "
                     "norms in a parallel prologue, give each core a contiguous slice of output columns, and "
                     "walk K in panels of 64 rows: one panel of the core's slice (about 256 KiB) stays in its "
                     "L2 while all M rows accumulate against it. w then leaves L3 once per call, and the inner "
                     "loop stays a unit-stride, vectorized axpy with x[i][k] * inv_rms formed on the fly.",
             executor="Blocked K into L2-sized panels of w with a per-core column slice, keeping the fused scaling.",
             lesson="""**Reuse a cached panel of the weights across all rows before moving along K**
When a small batch of rows is multiplied by a weight matrix larger than L2, row-by-row processing refetches the whole matrix from L3 for every row. Walking K in panels that fit L2 (per core: panel rows x its column slice x 4 bytes) and accumulating every row against the current panel turns those refetches into L2 hits. Split columns, not rows, across cores so each core's panel is private and the accumulation needs no synchronization.
```cpp
// before
for (i) for (k) for (j) out[i][j] += xs[i][k] * w[k][j];
// after (j in this core's column slice)
for (k0 = 0; k0 < K; k0 += 64)
  for (i) for (k = k0; k < k0 + 64; ++k) for (j) out[i][j] += xs[i][k] * w[k][j];
```"""),
    ],
}

HEADER = [
    "# This is a recorded demo of LLM answers for the offline run of the optimization loop, not a live model.",
    "# Written for the tasks silu, matmul and rmsnorm_matmul (2 iterations, beam 1, 2 plans, 1 executor sample).",
    "# It contains no measured figures: latencies, speedups and percent of peak are measured at replay time.",
    "# Generated by demo/make_recording.py from demo/kernels/<task>/<step>.cpp; edit those and rerun it.",
]


# The GPU demo: one iteration with one plan on each paged decode task of the
# cuda target, whose executor answers with the project's split-KV kernel
# (kernels/cuda/gqa_paged_decode_split.cu, shared by both decode tasks).
CUDA_TASKS = ["gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1"]
CUDA_KERNEL = os.path.join(REPO, "kernels", "cuda", "gqa_paged_decode_split.cu")
CUDA_STEP = dict(
    title="Split each request's pages across blocks and share every kv row among its query heads",
    details="The baseline gives each (request, query head) one block that walks the request's pages one at a "
            "time and sums every logit across the block with two barriers, so each k and v row is read once "
            "per query head and only 2048 blocks run, each on a long serial chain. Give each block one "
            "(request, kv head, split) instead: the query heads that share the kv head read each row once, "
            "sixteen splits per request fill the device, each warp walks every fourth page with 8-byte "
            "loads, logits are summed with warp shuffles and folded into an online softmax in base 2, and a "
            "second kernel merges the splits of each query head into the output and the log-sum-exp.",
    executor="Split-KV decode: one block per (request, kv head, split), warps over pages, a merge kernel.",
    lesson="""**Decode attention: read each kv row once per kv head and split long sequences across blocks**
With one query token per request, attention is a stream over the kv cache. Mapping one block to one query head reads every k and v row once per query head of its group and serializes a whole sequence on one block. Map a block to (request, kv head, split) so the group's query heads share each loaded row, give every request several splits so the device is full whatever the batch, reduce logits inside a warp with shuffles instead of block barriers, keep an online softmax per split, and merge the splits with their maxima and sums in a second pass.
```cuda
// before: grid = batch * num_qo_heads, one page at a time, block-wide sums
// after: grid = (splits, num_kv_heads, batch); per warp, per page:
float s = WarpSum(dot(q[g], k_row)) * scale_log2e;   // for each query head g of the group
float top = fmaxf(m[g], s), c = exp2f(m[g] - top), p = exp2f(s - top);
l[g] = l[g] * c + p; acc[g] = acc[g] * c + p * v_row; m[g] = top;
```""")

CUDA_HEADER = [
    "# This is a recorded demo of LLM answers for the GPU run of the optimization loop, not a live model.",
    "# Written for the cuda target's paged decode tasks (1 iteration, beam 1, 1 plan, 1 executor sample each).",
    "# It contains no measured figures: latencies, speedups and percent of peak are measured at replay time.",
    "# Generated by demo/make_recording.py from kernels/cuda/gqa_paged_decode_split.cu; edit that and rerun it.",
]


def cuda_entries():
    entries = []
    for task in CUDA_TASKS:
        marker = open(os.path.join(REPO, "suite", task, "baseline.cu")).readline().strip()
        entries.append({"role": "planner", "match": [marker, f"Task: {task}"],
                        "response": f"PLAN: {CUDA_STEP['title']}\n{CUDA_STEP['details']}"})
    code = open(CUDA_KERNEL).read()
    # One executor answer and one lesson per task: an entry is used up once it
    # answers, and the same kernel serves both decode tasks.
    for task in CUDA_TASKS:
        entries.append({"role": "executor", "match": [f"Plan: {CUDA_STEP['title']}", f"Task: {task}"],
                        "response": f"{CUDA_STEP['executor']}\n\n```cuda\n{code.rstrip()}\n```\n"})
    for task in CUDA_TASKS:
        entries.append({"role": "summarizer", "match": [CUDA_STEP["title"], f"Task: {task}"],
                        "response": CUDA_STEP["lesson"]})
    entries.append({"role": "summarizer", "response": "no optimization found", "repeat": True})
    return entries, [code]


def kernel_text(task, step):
    with open(os.path.join(HERE, "kernels", task, step + ".cpp")) as f:
        return f.read()


def check(entries, kernels):
    titles = [s["title"] for steps in STEPS.values() for s in steps]
    assert len(set(titles)) == len(titles), "duplicate plan titles"
    for a in titles:
        for b in titles:
            assert a == b or a not in b, f"title {a!r} occurs inside {b!r}"
        for code in kernels:
            assert a not in code, f"title {a!r} occurs in a kernel"
        for steps in STEPS.values():
            for s in steps:
                if s["title"] != a:
                    assert a not in s["details"] and a not in s["lesson"], f"title {a!r} occurs in another text"
    figures = re.compile(r"\d+(\.\d+)?\s*(ms|us|µs|ns|%|x faster|times faster|GB/s|GFLOP)|speedup of|percent of peak",
                         re.I)
    for e in entries:
        assert "```" not in e["response"] or e["role"] in ("executor", "summarizer")
        assert not figures.search(e["response"]), f"measured-looking figure in: {e['response'][:80]}"
        assert "Task: " not in e["response"]
    for steps in STEPS.values():
        for s in steps:
            assert "no optimization found" not in s["lesson"].lower()
            assert s["lesson"].startswith("**")


def main():
    entries, kernels = [], []
    for task, steps in STEPS.items():
        assert [s["step"] for s in steps] == ["iter1_a", "iter1_b", "iter2_a", "iter2_b"]
        # Planner answers are tied to the prompt that asks for them, not to the order of
        # the calls, so a resumed run (whose recorded calls are not asked again) gets the
        # same plans: iteration 1 prompts show the baseline (its first comment line),
        # iteration 2 prompts do not; "proposal k of 2" picks the plan within an iteration.
        baseline_marker = open(os.path.join(REPO, "suite", task, "baseline.cpp")).readline().strip()
        for i, s in enumerate(steps):
            first_iteration = s["step"].startswith("iter1")
            match = [baseline_marker if first_iteration else f"Task: {task}", f"proposal {i % 2 + 1} of 2"]
            entries.append({"role": "planner", "match": match,
                            "response": f"PLAN: {s['title']}\n{s['details']}"})
        for s in steps:
            code = kernel_text(task, s["step"])
            kernels.append(code)
            entries.append({"role": "executor", "match": f"Plan: {s['title']}",
                            "response": f"{s['executor']}\n\n```cpp\n{code.rstrip()}\n```\n"})
        for s in steps:
            # The summarizer prompt holds the plan as "...to the second: <title>\n<details>",
            # so the bare title is the match (titles appear nowhere else in its prompt).
            entries.append({"role": "summarizer", "match": s["title"], "response": s["lesson"]})
    entries.append({"role": "summarizer", "response": "no optimization found", "repeat": True})
    check(entries, kernels)
    write(os.path.join(HERE, "recording.jsonl"), HEADER, entries)
    entries, kernels = cuda_entries()
    check(entries, kernels)
    write(os.path.join(HERE, "recording_cuda.jsonl"), CUDA_HEADER, entries)


def write(path, header, entries):
    lines = header + [json.dumps(e, ensure_ascii=False) for e in entries]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}: {len(entries)} entries")


if __name__ == "__main__":
    sys.exit(main())
