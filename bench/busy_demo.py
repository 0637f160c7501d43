#!/usr/bin/env python3
"""The demo on a busy machine: what it decides under load, checked when quiet.

Phase `run`: starts a load generator (LOAD processes, each spinning on a core
at normal priority: `--load 2` keeps both cores of a 2-core machine fully
used), runs `accelopt optimize --demo` into a fresh store, stops the load.
Phase `verify`: on the then quiet machine, times side by side again
  - every lesson's pair (slow, fast): a lesson is contradicted when the quiet
    comparison's interval lies wholly on the other side of 1, unsupported
    when it does not clear the lesson thresholds (1.04x faster, 1.15x slower);
  - each task's reported best against its baseline.
and prints one JSON document (`--out FILE` keeps it).

    python3 bench/busy_demo.py --accelopt build/accelopt --load 2 [--pattern constant|bursty]
        [--phase run|verify|both] [--work DIR] [--out FILE] [TASK...]

The verify phase needs a quiet machine: the load it ran under is part of the output.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time

SPIN = "while True: pass"
# Busy for `on` seconds, idle for `off`, in step with the other spinners (the clock's phase).
BURST = """import time
on, off = {on}, {off}
while True:
    if time.time() % (on + off) < on:
        pass
    else:
        time.sleep(0.05)
"""


def cpu_ticks():
    with open("/proc/stat") as f:
        fields = [float(x) for x in f.readline().split()[1:9]]
    busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
    return busy, busy + fields[3] + fields[4]


def machine_busy_share(seconds):
    b0, t0 = cpu_ticks()
    time.sleep(seconds)
    b1, t1 = cpu_ticks()
    return (b1 - b0) / max(1.0, t1 - t0)


def run_phase(args, db):
    code = SPIN if args.pattern == "constant" else BURST.format(on=args.on, off=args.off)
    load = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(args.load)]
    try:
        time.sleep(1)
        started = time.time()
        b0, t0 = cpu_ticks()
        # Versions before `optimize --json` print the table as text.
        helptext = subprocess.run([args.accelopt, "optimize", "--help"], capture_output=True, text=True).stdout
        json_flag = ["--json"] if "--json" in helptext else []
        proc = subprocess.run([args.accelopt, "optimize", "--demo", "--db", db] + json_flag + args.tasks,
                              capture_output=True, text=True)
        b1, t1 = cpu_ticks()
    finally:
        for p in load:
            p.kill()
        for p in load:
            p.wait()
    with open(db + ".stderr.txt", "w") as f:
        f.write(proc.stderr)
    result = {"load_processes": args.load, "pattern": args.pattern, "tasks": args.tasks or "the demo's",
              "seconds": round(time.time() - started, 1),
              "machine_busy_share_during_run": round((b1 - b0) / max(1.0, t1 - t0), 3), "exit_code": proc.returncode}
    try:
        result["final_table"] = json.loads(proc.stdout)
    except json.JSONDecodeError:
        result["final_table_text"] = proc.stdout[-4000:]
    return result


def compare(args, task, slow_code, fast_code, folder):
    paths = []
    for name, code in (("slow", slow_code), ("fast", fast_code)):
        path = os.path.join(folder, f"{name}.cpp")
        with open(path, "w") as f:
            f.write(code)
        paths.append(path)
    out = subprocess.run([args.verifier, "compare", task, paths[0], paths[1], "--json"], capture_output=True,
                         text=True)
    try:
        j = json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"error": out.stderr[-500:]}
    if j.get("speedup") is None:
        return {"error": "not both ok"}
    return {k: j.get(k) for k in ("speedup", "ci_low", "ci_high", "pairs", "other_load", "disturbed")}


def verify_phase(args, db, folder):
    con = sqlite3.connect(db)
    code = {row[0]: (row[1], row[2]) for row in con.execute("SELECT id, task, code FROM candidates")}
    lessons = con.execute("SELECT id, task, speedup, speedup_low, speedup_high, slow_candidate, fast_candidate, title "
                          "FROM lessons").fetchall()
    out = {"machine_busy_share_before_verify": round(machine_busy_share(2), 3), "lessons": [], "best": []}
    for lid, task, speedup, low, high, slow, fast, title in lessons:
        if slow not in code or fast not in code:
            continue
        quiet = compare(args, task, code[slow][1], code[fast][1], folder)
        row = {"lesson": lid, "task": task, "title": title[:80], "claimed": speedup, "claimed_low": low,
               "claimed_high": high, "quiet": quiet}
        if "speedup" in quiet:
            faster = (low if low is not None else speedup) > 1
            row["contradicted"] = quiet["ci_high"] < 1 if faster else quiet["ci_low"] > 1
            row["supported"] = quiet["ci_low"] > 1.04 if faster else quiet["ci_high"] < 1 / 1.15
        out["lessons"].append(row)
    summary = con.execute("SELECT summary FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    tasks = json.loads(summary[0]) if summary and summary[0] else []
    for t in tasks if isinstance(tasks, list) else []:
        task, best = t.get("task"), t.get("best_candidate")
        base = con.execute("SELECT id FROM candidates WHERE task = ? AND iteration = 0 ORDER BY id LIMIT 1",
                           (task,)).fetchone()
        row = {"task": task, "best_candidate": best, "baseline_candidate": base[0] if base else None,
               "reported_medians_ratio": (t["baseline_s"] / t["best_s"]) if t.get("best_s") else None,
               "reported_vs_baseline": t.get("speedup_vs_baseline"), "reported_chained": t.get("speedup_chained")}
        if base and best and best != base[0] and best in code:
            row["quiet"] = compare(args, task, code[base[0]][1], code[best][1], folder)
        out["best"].append(row)
    ls = [r for r in out["lessons"] if "contradicted" in r]
    out["counts"] = {"lessons": len(out["lessons"]), "contradicted": sum(r["contradicted"] for r in ls),
                     "unsupported": sum(not r["supported"] for r in ls)}
    out["machine_busy_share_after_verify"] = round(machine_busy_share(2), 3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--accelopt", default="build/accelopt", help="the accelopt whose run is tested")
    ap.add_argument("--verifier", help="the accelopt that re-measures quietly (default: --accelopt; one yardstick "
                                       "for runs of two versions)")
    ap.add_argument("--load", type=int, default=os.cpu_count() or 2, help="spinning processes (default: one per core)")
    ap.add_argument("--phase", choices=["run", "verify", "both"], default="both")
    ap.add_argument("--pattern", choices=["constant", "bursty"], default="constant",
                    help="constant: the spinners never rest; bursty: busy --on seconds, idle --off seconds")
    ap.add_argument("--on", type=float, default=3)
    ap.add_argument("--off", type=float, default=3)
    ap.add_argument("tasks", nargs="*", help="the demo's tasks to run (default: all three)")
    ap.add_argument("--work", default="busy-demo", help="folder for the store and the kernels compared")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    args.accelopt = os.path.abspath(args.accelopt)
    args.verifier = os.path.abspath(args.verifier or args.accelopt)
    os.makedirs(args.work, exist_ok=True)
    db = os.path.join(args.work, "busy.db")
    report = {}
    if args.phase in ("run", "both"):
        if os.path.exists(db):
            os.remove(db)
        report["run"] = run_phase(args, db)
    if args.phase in ("verify", "both"):
        report["verify"] = verify_phase(args, db, args.work)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
