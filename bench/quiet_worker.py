#!/usr/bin/env python3
"""Is a worker's timed series as quiet as `accelopt eval` alone while
`accelopt optimize` drives the loop?

Side by side in one run, on this machine:
  alone   -- `accelopt eval TASK --json` of each demo task's baseline, ROUNDS times;
  driven  -- `accelopt optimize --demo --workers 1`: the engine runs the loop
             (prompts, parsing, selection, the store) while one worker builds and
             measures every kernel; the profiles are read back from the queue.
For each, every timed series' spread (interquartile range / median), the share
of the CPU other processes used while it ran, and the series measured again
because they were disturbed.

    python3 bench/quiet_worker.py [--accelopt build/accelopt] [--rounds 3] [--shape bench] [--json]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

DEMO_TASKS = ["silu", "matmul", "rmsnorm_matmul"]


def baseline_sources(suite):
    out = {}
    for task in DEMO_TASKS:
        with open(os.path.join(suite, task, "baseline.cpp")) as f:
            out[task] = f.read()
    return out


def series_of(profile):
    lat = profile.get("latency") or {}
    return {
        "task": profile.get("task"),
        "spread": lat.get("spread"),
        "median_s": lat.get("median_s"),
        "other_load": profile.get("other_load", 0.0),
        "disturbed": profile.get("disturbed_series", 0),
    }


def summary(rows):
    spreads = [r["spread"] for r in rows if r["spread"] is not None]
    loads = [r["other_load"] for r in rows]
    return {
        "series": len(rows),
        "spread_median": statistics.median(spreads) if spreads else None,
        "spread_max": max(spreads) if spreads else None,
        "other_load_median": statistics.median(loads) if loads else None,
        "other_load_max": max(loads) if loads else None,
        "disturbed_series": sum(r["disturbed"] for r in rows),
    }


def run(cmd, env):
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 3):
        sys.exit(f"quiet_worker: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--accelopt", default="build/accelopt")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shape", default="bench")
    ap.add_argument("--suite", default="suite")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="quiet-worker-") as tmp:
        baselines = baseline_sources(args.suite)
        alone, driven, driven_all = [], [], []
        for r in range(args.rounds):
            # Alternating: alone, then driven, so drift on the machine touches both.
            for task in DEMO_TASKS:
                out = run([args.accelopt, "eval", task, "--shape", args.shape, "--json"], env)
                alone.append(series_of(json.loads(out)))
            db = os.path.join(tmp, f"driven-{r}.db")
            run([args.accelopt, "optimize", "--demo", "--shape", args.shape, "--workers", "1", "--db", db,
                 "--memory", "fresh"], env)
            con = sqlite3.connect(db)
            for job, outcome in con.execute("SELECT job, outcome FROM jobs WHERE state = 'done'"):
                sources = [s["source"] for s in json.loads(job)["sources"]]
                for source, p in zip(sources, json.loads(outcome)["profiles"]):
                    if p.get("status") != "ok" or not p.get("latency"):
                        continue
                    driven_all.append(series_of(p))
                    # Like for like: the baselines, which `alone` measures.
                    if baselines.get(p.get("task")) == source:
                        driven.append(series_of(p))
            con.close()
    result = {"shape": args.shape, "rounds": args.rounds, "alone": summary(alone), "driven": summary(driven),
              "driven_all_kernels": summary(driven_all)}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"timed series at shape {args.shape}, {args.rounds} round(s): the demo tasks' baselines by `accelopt eval` "
          f"alone, and by a worker while `optimize --demo --workers 1` drives the loop (driven_all_kernels: every "
          f"kernel that worker measured)")
    print(f"{'':18} {'series':>6} {'spread median':>14} {'spread max':>11} {'other load median':>18} "
          f"{'other load max':>15} {'disturbed':>9}")
    for name in ("alone", "driven", "driven_all_kernels"):
        s = result[name]
        fmt = lambda v, pct=False: "-" if v is None else (f"{100 * v:.1f}%" if pct else f"{v:.4f}")
        print(f"{name:18} {s['series']:>6} {fmt(s['spread_median']):>14} {fmt(s['spread_max']):>11} "
              f"{fmt(s['other_load_median'], True):>18} {fmt(s['other_load_max'], True):>15} "
              f"{s['disturbed_series']:>9}")


if __name__ == "__main__":
    main()
