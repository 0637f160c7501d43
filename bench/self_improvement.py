#!/usr/bin/env python3
"""Does the optimization memory make later searches better? A measurement.

The same tasks, the same budget (-I -N -B -K -R), the same model, twice:

  fresh    each task in a run of its own with `--memory fresh` (no lessons in, none out);
  carried  the tasks in the given order, each in a run of its own, all with one
           memory named for this invocation (selfimp-<UTC time>-<pid>), so each task
           starts from the lessons of the tasks before it and of nothing else.

Per task and arrangement: the best kernel the run reports (by its side-by-side
evidence) and its % of peak; the model calls the run had made by the time it
measured a kernel within 90% of that best (`accelopt candidates RUN --json`,
model_calls); then the two best kernels timed against each other side by side
(`accelopt compare`: carried's best over fresh's best, with its 95% interval and
whether it, or either best in its run, was measured disturbed), with both
kernels' own % of peak from that one window. Last, the
geometric means: of the best % of peak per arrangement, and of the side-by-side
ratios (disturbed comparisons left out, and counted). Every figure comes from
what accelopt measured in this invocation (with --recompare, the runs an earlier
report names, read again from the store); nothing is read from a file of results.

  python3 bench/self_improvement.py silu adamw matmul -I 4 -N 2 -B 2 -K 1 --exchange exchange/
  python3 bench/self_improvement.py silu bench/heldout/softmax examples/suite/wordfreq ...  # a task by its folder
  python3 bench/self_improvement.py ... --side-by-side  # the two arrangements at once, each in its own order
  python3 bench/self_improvement.py <tasks> --recompare r.json  # r.json's runs, their bests timed side by side anew
  python3 bench/self_improvement.py ... --json r.json  # also the whole report as JSON (- : on stdout, no table)
  python3 bench/self_improvement.py ... -- --budget 5  # after --: passed to every optimize as is

A task named by its folder (a path) is taken from the suite folder above it;
the others from --suite. A code task (kind: code) is scored by its own metric,
with its unit, instead of a % of peak. With --exchange DIR each run's prompts go
to a folder of their own, DIR/<arrangement>-<task>, and a file FINISHED is
written there when that run ends, so whoever answers knows when to stop.

Progress goes to stderr; the table to stdout. Exit status 0 when every
task of both arrangements ran and was compared, 3 when some failed (each is
reported in its row), 1 on an error that stops everything (no accelopt binary,
a task the suite does not have).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

FRACTION = 0.9  # "reached": a kernel measured within this fraction of the run's final best


class Failure(Exception):
    """A step that failed, with a message naming what and where."""


def log(message):
    print(message, file=sys.stderr, flush=True)


class Accelopt:
    """Runs the accelopt binary with the settings every command of the measurement shares."""

    def __init__(self, args):
        self.binary = args.accelopt
        self.db = args.db
        self.suite = args.suite
        self.shape = args.shape
        self.eval_flags = []
        if args.target:
            self.eval_flags += ["--target", args.target]
        if args.evaluator:
            self.eval_flags += ["--evaluator", args.evaluator]

    def run(self, words, what):
        """stdout of `accelopt WORDS`; Failure naming `what` on a non-zero exit."""
        command = [self.binary] + words
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            raise Failure(f"{what}: cannot run {self.binary}: {e.strerror}")
        if done.returncode != 0:
            # accelopt's own error line says what went wrong; progress lines around it do not.
            lines = [l.strip() for l in (done.stderr + done.stdout).splitlines() if l.strip()]
            said = [l for l in lines if l.startswith("accelopt: ")] or lines[-1:] or ["(nothing printed)"]
            raise Failure(f"{what}: `accelopt {' '.join(words[:2])} ...` exited {done.returncode}: {said[-1]}")
        return done.stdout

    def json(self, words, what):
        out = self.run(words, what)
        try:
            return json.loads(out)
        except ValueError:
            raise Failure(f"{what}: accelopt printed no JSON: {out[:200]!r}")

    def suite_flags(self, task=None):
        suite = task.suite if task is not None and task.suite else self.suite
        return ["--suite", suite] if suite else []

    def shape_flags(self):
        return ["--shape", self.shape] if self.shape else []


def check_binary(binary):
    if os.sep not in binary:
        found = shutil.which(binary)
        if not found:
            raise Failure(f"no accelopt binary: '{binary}' is not on PATH (build it, or name it with --accelopt)")
        return found
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        raise Failure(f"no accelopt binary at {binary} (build it: ninja -C build accelopt, or name it with --accelopt)")
    return binary


class Task:
    """A task as the command line names it: by name (in --suite) or by its folder (in the folder above it)."""

    def __init__(self, word):
        self.word = word
        if os.sep in word:  # a path; a bare word is a name, whatever folders the working one holds
            folder = os.path.normpath(word)
            self.name, self.suite = os.path.basename(folder), os.path.dirname(folder) or "."
        else:
            self.name, self.suite = word, None
        self.metric = None  # a code task's own metric: {"metric", "unit", "direction"}


def check_tasks(acc, tasks):
    """Every named task exists in its suite and loads; Failure naming those that do not.

    Also reads each code task's metric, unit and direction, by which its best is told."""
    listings = {}
    for task in tasks:
        key = task.suite or acc.suite or ""
        if key not in listings:
            where = f"the suite {key}" if key else "the default suite"
            listed = acc.json(["tasks", "--json"] + acc.suite_flags(task) + acc.eval_flags,
                              f"listing the tasks of {where}")
            listings[key] = (where, {t["task"]: t for t in listed if "task" in t})
        where, known = listings[key]
        if task.name not in known:
            raise Failure(f"no task {task.name} in {where} for this target "
                          f"(it has: {', '.join(sorted(known))})")
        if known[task.name].get("error"):
            raise Failure(f"task {task.word} does not load: {known[task.name]['error']}")
        if known[task.name].get("kind") == "code":
            task.metric = {k: known[task.name].get(k) for k in ("metric", "unit", "direction")}
    if len({t.name for t in tasks}) != len(tasks):
        raise Failure("a task is named twice: each is measured once per arrangement")


def exchange_folder(args, name, task):
    """The folder a run's prompts go to with --exchange: one per arrangement and task."""
    return os.path.join(args.exchange, f"{name}-{task.name}")


def optimize(acc, args, task, name, memory):
    """One task's run; its JSON task entry and run id."""
    model_flags = args.model_flags
    if args.exchange:
        folder = exchange_folder(args, name, task)
        os.makedirs(folder, exist_ok=True)
        model_flags = model_flags + ["--exchange", folder]
    words = ["optimize", task.name, "--memory", memory, "--json", "--db", acc.db] + acc.suite_flags(task) + \
        acc.shape_flags() + acc.eval_flags + args.budget_flags + model_flags + args.optimize_args
    try:
        result = acc.json(words, f"{task.name} ({name})")
    finally:
        if args.exchange:
            with open(os.path.join(folder, "FINISHED"), "w") as f:
                f.write(f"the {name} run of {task.name} has ended; no more prompts will come to this folder\n")
    entries = [t for t in result.get("tasks", []) if t.get("task") == task.name]
    if not entries:
        raise Failure(f"{task.name}: run {result.get('run')} reported no result for the task")
    return result["run"], entries[0]


def calls_to_reach(candidates, best_latency, higher_is_better=False):
    """The fewest model calls after which a kernel was measured within FRACTION of the best.

    % of peak is T / latency with T fixed by the task and shape, so "within 90% of
    the best % of peak" is "latency at most best / 0.9": the same test, scored or not.
    A code task's figure is its own metric (in latency_s); where more is better,
    within 90% is "at least 0.9 of the best".
    """
    def within(value):
        return value >= best_latency * FRACTION if higher_is_better else value <= best_latency / FRACTION

    reached = [c["model_calls"] for c in candidates
               if c["status"] == "ok" and c["latency_s"] is not None and within(c["latency_s"])]
    return min(reached) if reached else None


def arrangement(acc, args, task, name, memory):
    """What one arrangement's run of a task measured: its best, when it got there, the run's calls."""
    run, entry = optimize(acc, args, task, name, memory)
    return described(acc, task, run, entry["best_candidate"])


def described(acc, task, run, best_id):
    """A run of a task as the store holds it: its best candidate `best_id`, when it got there, its calls."""
    candidates = acc.json(["candidates", str(run), "--task", task.name, "--json", "--db", acc.db],
                          f"{task.name}: candidates of run {run}")
    by_id = {c["id"]: c for c in candidates}
    best = by_id.get(best_id)
    if best is None or best["status"] != "ok":
        raise Failure(f"{task.name}: run {run}'s best candidate {best_id} is not an ok kernel in the store")
    if any("model_calls" not in c for c in candidates):
        raise Failure(f"{task.name}: this accelopt's `candidates --json` gives no model_calls: rebuild it")
    higher = bool(task.metric and task.metric.get("direction") == "higher")
    return {
        "run": run,
        "best_candidate": best["id"],
        "best_percent_of_peak": best["percent_of_peak"],  # None: unscored (no saved calibration)
        "best_latency_s": best["latency_s"],
        "best_disturbed": bool(best["disturbed"]),
        "best_plan": best["plan"],
        "best_metric": best["latency_s"] if task.metric else None,  # a code task's own figure, in its unit
        "calls_to_90": calls_to_reach(candidates, best["latency_s"], higher),
        "model_calls": max(c["model_calls"] for c in candidates),
        "candidates": len(candidates),
    }


def side_by_side(acc, task, fresh, carried, scratch):
    """carried's best kernel over fresh's, timed side by side."""
    paths = []
    for name, a in (("fresh", fresh), ("carried", carried)):
        folder = os.path.join(scratch, f"{task.name}-{name}")
        acc.run(["export", "candidate", str(a["best_candidate"]), folder, "--db", acc.db],
                f"{task.name}: exporting {name}'s best candidate {a['best_candidate']}")
        kernels = [f for f in os.listdir(folder) if f.startswith("kernel")]
        if len(kernels) != 1:
            raise Failure(f"{task.name}: export of candidate {a['best_candidate']} wrote no single kernel file")
        paths.append(os.path.join(folder, kernels[0]))
    c = acc.json(["compare", task.name, paths[0], paths[1], "--json"] + acc.suite_flags(task) +
                 acc.shape_flags() + acc.eval_flags, f"{task.name}: comparing the best kernels")
    out = {key: c.get(key) for key in ("speedup", "ci_low", "ci_high", "pairs", "coverage", "other_load",
                                       "disturbed_series", "disturbed")}
    # Both kernels' own figures from that one window: the % of peak (or a code task's
    # metric) that agrees with the ratio, where each run's figure was taken in its own conditions.
    for name, profile in (("fresh", c.get("a") or {}), ("carried", c.get("b") or {})):
        score = profile.get("score") or {}
        out[name + "_percent_of_peak"] = score.get("percent_of_peak") if score.get("bound") else None
        out[name + "_latency_s"] = (profile.get("latency") or {}).get("median_s")
    return out


def geomean(values):
    values = [v for v in values if v is not None]
    if not values or any(v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summarize(rows):
    """Geometric means over the tasks where each figure exists for both arrangements."""
    scored = [r for r in rows if r.get("fresh") and r.get("carried") and
              r["fresh"]["best_percent_of_peak"] is not None and r["carried"]["best_percent_of_peak"] is not None]
    compared = [r for r in rows if r.get("compare") and r["compare"]["speedup"]]
    quiet = [r for r in compared if not r["compare"]["disturbed"]]
    paired = [r for r in quiet if r["compare"].get("fresh_percent_of_peak") is not None and
              r["compare"].get("carried_percent_of_peak") is not None]
    return {
        "tasks_scored": len(scored),
        "fresh_percent_of_peak": geomean([r["fresh"]["best_percent_of_peak"] for r in scored]),
        "carried_percent_of_peak": geomean([r["carried"]["best_percent_of_peak"] for r in scored]),
        "tasks_scored_side_by_side": len(paired),
        "fresh_percent_of_peak_side_by_side": geomean([r["compare"]["fresh_percent_of_peak"] for r in paired]),
        "carried_percent_of_peak_side_by_side": geomean([r["compare"]["carried_percent_of_peak"] for r in paired]),
        "carried_over_fresh": geomean([r["compare"]["speedup"] for r in quiet]),
        "comparisons": len(compared),
        "disturbed_comparisons_left_out": len(compared) - len(quiet),
    }


def percent_cell(a, metric=None):
    """The best's % of peak; a code task's own metric and unit instead."""
    if a is None:
        return "failed"
    mark = "*" if a["best_disturbed"] else ""
    if metric:
        return f"{a['best_metric']:.4g} {metric['unit']}{mark} ({metric['metric']})"
    if a["best_percent_of_peak"] is None:
        return "unscored" + mark
    return f"{a['best_percent_of_peak']:.2f}%" + mark


def calls_cell(a):
    if a is None:
        return "-"
    return f"{a['calls_to_90']} of {a['model_calls']}" if a["calls_to_90"] is not None else f"- of {a['model_calls']}"


def compare_cell(c):
    if not c:
        return "-"
    if not c["speedup"]:
        return "no interval"
    text = f"{c['speedup']:.3f}x [{c['ci_low']:.3f}-{c['ci_high']:.3f}]"
    return text + (" disturbed" if c["disturbed"] else "")


def paired_cell(c, metric=None):
    """Both bests' own figures from the side-by-side window: fresh's / carried's."""
    if not c or c.get("fresh_latency_s") is None:
        return "-"
    if metric:
        return f"{c['fresh_latency_s']:.4g} / {c['carried_latency_s']:.4g} {metric['unit']}"
    if c.get("fresh_percent_of_peak") is None:
        return "unscored"
    return f"{c['fresh_percent_of_peak']:.2f}% / {c['carried_percent_of_peak']:.2f}%"


def markdown(report):
    lines = [f"memory carried: `{report['memory']}` (store {report['db']}); "
             f"calls: the model calls by the time a kernel within {FRACTION:.0%} of the run's best was measured, "
             "of all the run's calls", "",
             "| task | fresh: best % of peak, in its run | carried: best % of peak, in its run | fresh: calls to 90% | "
             "carried: calls to 90% | side by side: fresh's best / carried's best | "
             "carried's best over fresh's, side by side [95%] | runs (fresh, carried) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report["tasks"]:
        f, c = r.get("fresh"), r.get("carried")
        runs = f"{f['run'] if f else '-'}, {c['run'] if c else '-'}"
        lines.append(f"| {r['task']} | {percent_cell(f, r.get('metric'))} | {percent_cell(c, r.get('metric'))} | "
                     f"{calls_cell(f)} | {calls_cell(c)} | {paired_cell(r.get('compare'), r.get('metric'))} | "
                     f"{compare_cell(r.get('compare'))} | {runs} |")
    g = report["geomean"]
    pct = (lambda v: f"{v:.2f}%" if v is not None else "-")
    ratio = f"{g['carried_over_fresh']:.3f}x" if g["carried_over_fresh"] is not None else "-"
    both = (f"{pct(g['fresh_percent_of_peak_side_by_side'])} / {pct(g['carried_percent_of_peak_side_by_side'])}"
            if g["tasks_scored_side_by_side"] else "-")
    lines.append(f"| geometric mean | {pct(g['fresh_percent_of_peak'])} | {pct(g['carried_percent_of_peak'])} | | | "
                 f"{both} | {ratio} | |")
    notes = []
    if any(a and a["best_disturbed"] for r in report["tasks"] for a in (r.get("fresh"), r.get("carried"))):
        notes.append("* the best kernel's own evaluation in its run was measured while other processes loaded the "
                     "machine")
    if g["disturbed_comparisons_left_out"]:
        notes.append(f"{g['disturbed_comparisons_left_out']} disturbed comparison(s) left out of the ratios' mean")
    notes.append(f"% of peak means over the {g['tasks_scored']} task(s) scored in both arrangements; a code task "
                 "shows its own metric and counts only in the ratios' mean")
    for r in report["tasks"]:
        for e in r.get("errors", []):
            notes.append(f"{r['task']}: {e}")
    return "\n".join(lines + [""] + notes) + "\n"


def parse_args(argv):
    extra = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("tasks", nargs="+", help="the tasks, in the order the carried memory visits them")
    p.add_argument("--accelopt", default=os.environ.get("ACCELOPT_BINARY", "build/accelopt"),
                   help="the accelopt binary (default: $ACCELOPT_BINARY, else build/accelopt)")
    p.add_argument("--db", default="accelopt.db", help="the store both arrangements' runs go to (default accelopt.db)")
    p.add_argument("--suite", help="task suite folder (accelopt's default when absent)")
    p.add_argument("--shape", help="the shape every run and comparison uses (accelopt's default when absent)")
    p.add_argument("--target", help="the target (accelopt's default when absent)")
    p.add_argument("--evaluator", help="the external target's evaluator program")
    for flag in ("-I", "-N", "-B", "-K", "-R"):
        p.add_argument(flag, type=int, help=f"optimize {flag}, the same for every run")
    p.add_argument("--config", help="the model configuration (accelopt.yaml) every run uses")
    p.add_argument("--scripted", help="replay this recording of model answers in every run")
    p.add_argument("--exchange", help="the file-exchange folder: each run's prompts go to a folder of its own "
                   "in it, <arrangement>-<task>, with a file FINISHED written there when the run ends")
    p.add_argument("--memory-name", help="the carried memory's name (default selfimp-<UTC time>-<pid>); "
                   "it must hold no lessons yet")
    p.add_argument("--side-by-side", action="store_true", help="run the two arrangements at once (each its "
                   "tasks in order) instead of one after the other: half the wall time where the model, not the "
                   "machine, is the slow part")
    p.add_argument("--recompare", metavar="REPORT", help="run nothing: take the runs of an earlier report (its "
                   "--json FILE), read them again from the store and time their bests side by side anew (the same "
                   "tasks, store and target flags)")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON to FILE ('-': on stdout, instead "
                   "of the table)")
    args = p.parse_args(argv)
    args.optimize_args = extra
    args.budget_flags = [w for flag in ("-I", "-N", "-B", "-K", "-R")
                         for w in ((flag, str(getattr(args, flag[1:]))) if getattr(args, flag[1:]) is not None else ())]
    # --exchange is given per run, a folder each (optimize).
    args.model_flags = [w for flag, value in (("--config", args.config), ("--scripted", args.scripted))
                        if value for w in (flag, value)]
    args.tasks = [Task(word) for word in args.tasks]
    return args


def new_row(task):
    return {"task": task.name, "folder": task.word if task.suite else None, "metric": task.metric, "errors": []}


def measure(args):
    args.accelopt = check_binary(args.accelopt)
    acc = Accelopt(args)
    check_tasks(acc, args.tasks)
    if args.recompare:
        return recompared(acc, args)
    memory = args.memory_name or time.strftime("selfimp-%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{os.getpid()}"
    if os.path.exists(acc.db):
        held = acc.json(["memory", "list", "--json", "--db", acc.db], "listing the store's memories")
        if any(m.get("memory") == memory and m.get("lessons") for m in held):
            raise Failure(f"memory '{memory}' in {acc.db} holds lessons already: name a new one")
    rows = [new_row(t) for t in args.tasks]

    def lane(name, memory_flag):
        """One arrangement: its tasks in order, each in a run of its own."""
        for task, row in zip(args.tasks, rows):
            log(f"[{name}] {task.name}: optimizing")
            try:
                row[name] = arrangement(acc, args, task, name, memory_flag)
                log(f"[{name}] {task.name}: run {row[name]['run']}, best candidate {row[name]['best_candidate']}")
            except Failure as e:
                row[name] = None
                row["errors"].append(f"{name}: {e}")
                log(f"[{name}] {e}")

    lanes = (("fresh", "fresh"), ("carried", memory))
    if args.side_by_side:
        # Each arrangement keeps its own order; their evaluations share the machine (the
        # engine's device lock takes them in turn, and a disturbed series is measured again).
        threads = [threading.Thread(target=lane, args=l) for l in lanes]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for l in lanes:
            lane(*l)
    return compared(acc, args, memory, rows)


def recompared(acc, args):
    """--recompare REPORT: the runs an earlier invocation made, read again from the store, their bests timed anew."""
    try:
        with open(args.recompare) as f:
            earlier = json.load(f)
        runs = {r["task"]: r for r in earlier["tasks"]}
        memory = earlier["memory"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Failure(f"--recompare {args.recompare}: not a report this script wrote ({e})")
    rows = []
    for task in args.tasks:
        row = new_row(task)
        for name in ("fresh", "carried"):
            was = (runs.get(task.name) or {}).get(name)
            row[name] = None
            if not was:
                row["errors"].append(f"{name}: {args.recompare} holds no {name} run of {task.name}")
                continue
            try:
                row[name] = described(acc, task, was["run"], was["best_candidate"])
            except Failure as e:
                row["errors"].append(f"{name}: {e}")
        rows.append(row)
    report = compared(acc, args, memory, rows)
    report["settings"] = dict(earlier.get("settings") or {}, recompare=args.recompare)  # the runs' own budget
    return report


def compared(acc, args, memory, rows):
    """Each task's two bests timed side by side, then the report."""
    with tempfile.TemporaryDirectory(prefix="selfimp-") as scratch:
        for task, row in zip(args.tasks, rows):
            row["compare"] = None
            if not (row["fresh"] and row["carried"]):
                continue
            log(f"{task.name}: timing the two best kernels side by side")
            try:
                row["compare"] = side_by_side(acc, task, row["fresh"], row["carried"], scratch)
            except Failure as e:
                row["errors"].append(f"compare: {e}")
                log(str(e))
    settings = {k: getattr(args, k) for k in ("I", "N", "B", "K", "R", "shape", "suite", "target", "config",
                                              "scripted", "exchange", "side_by_side")}
    settings["optimize_args"] = args.optimize_args
    settings["recompare"] = args.recompare
    return {"memory": memory, "db": acc.db, "settings": settings, "fraction": FRACTION, "tasks": rows,
            "geomean": summarize(rows)}


def main(argv):
    args = parse_args(argv)
    try:
        report = measure(args)
    except Failure as e:
        print(f"self_improvement: {e}", file=sys.stderr)
        return 1
    if args.json and args.json != "-":
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    print(json.dumps(report, indent=2) if args.json == "-" else markdown(report), end="" if args.json != "-" else "\n")
    return 3 if any(r["errors"] for r in report["tasks"]) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
