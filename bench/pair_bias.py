#!/usr/bin/env python3
"""Does the side-by-side comparison agree with the two kernels measured alone?

For pairs of kernels of unequal thread counts and durations (a long
one-thread parent against a short two-thread child, and the reverse), each
kernel is evaluated alone (`accelopt eval --json`: its median) and the pair is
compared side by side (`accelopt compare --json`: the median of the pairs'
ratios and its interval). The ratio of the two lone medians should lie within
the comparison's interval; the table says by how much it does not.

Run on a quiet machine (the load each measurement ran under is printed):

    python3 bench/pair_bias.py [--accelopt build/accelopt] [--task silu] [--repeat 2] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# A kernel: the task's work done `reps` times over (same outputs), on `threads` threads.
KERNEL = """#include <cmath>
extern "C" void kernel(const float* x, float* out) {{
  for (int rep = 0; rep < {reps}; ++rep) {{
{pragma}    for (long i = 0; i < M * N; ++i) {{ const float v = x[i]; out[i] = v / (1.0f + std::exp(-v)); }}
    asm volatile("" ::: "memory");
  }}
}}
"""

# (parent, child): (threads, reps) each. The child is the faster one by design.
PAIRS = [
    ((1, 8), (2, 1)),   # long one-thread parent, short two-thread child: the reported case
    ((1, 32), (2, 1)),  # a larger gap
    ((1, 2), (2, 1)),   # a small gap
    ((2, 8), (1, 1)),   # the reverse: a long two-thread parent, a short one-thread child
    ((1, 4), (1, 1)),   # equal thread counts, unequal durations
]


def write_kernel(folder, threads, reps):
    path = os.path.join(folder, f"t{threads}_r{reps}.cpp")
    pragma = f"#pragma omp parallel for num_threads({threads})\n" if threads > 1 else ""
    with open(path, "w") as f:
        f.write(KERNEL.format(reps=reps, pragma=pragma))
    return path


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0,):
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--accelopt", default="build/accelopt")
    ap.add_argument("--task", default="silu")
    ap.add_argument("--repeat", type=int, default=2, help="comparisons per pair")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for parent, child in PAIRS:
            a = write_kernel(folder, *parent)
            b = write_kernel(folder, *child)
            alone = [run_json([args.accelopt, "eval", args.task, k, "--json"]) for k in (a, b)]
            medians = [p["latency"]["median_s"] for p in alone]
            loads = [p.get("other_load", 0) for p in alone]
            for r in range(args.repeat):
                c = run_json([args.accelopt, "compare", args.task, a, b, "--json"])
                ratio = medians[0] / medians[1]
                inside = c["ci_low"] <= ratio <= c["ci_high"]
                rows.append({
                    "parent": f"{parent[0]} thread(s) x{parent[1]}", "child": f"{child[0]} thread(s) x{child[1]}",
                    "parent_median_s": medians[0], "child_median_s": medians[1], "medians_ratio": ratio,
                    "paired": c["speedup"], "ci_low": c["ci_low"], "ci_high": c["ci_high"], "pairs": c["pairs"],
                    "paired_over_ratio": c["speedup"] / ratio, "ratio_inside_interval": inside,
                    "load_alone": max(loads), "load_paired": c.get("other_load", 0),
                    "paired_child_median_s": c["b"]["latency"]["median_s"],
                    "paired_parent_median_s": c["a"]["latency"]["median_s"],
                })
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'parent':>18} {'child':>18} {'alone: medians ratio':>21} {'side by side [interval]':>28} "
          f"{'paired/alone':>12} {'inside':>6} {'child alone':>11} {'child paired':>12} {'load':>5}")
    for r in rows:
        print(f"{r['parent']:>18} {r['child']:>18} {r['medians_ratio']:>20.2f}x "
              f"{r['paired']:>10.2f}x [{r['ci_low']:.2f}-{r['ci_high']:.2f}] {r['paired_over_ratio']:>11.3f} "
              f"{'yes' if r['ratio_inside_interval'] else 'NO':>6} {r['child_median_s']*1e3:>9.3f}ms "
              f"{r['paired_child_median_s']*1e3:>10.3f}ms {100*max(r['load_alone'], r['load_paired']):>4.0f}%")


if __name__ == "__main__":
    main()
