"""Tests of bench/self_improvement.py, end to end on a recorded labelled fixture.

Run as `python3 bench/self_improvement_test.py` (ctest runs it, naming the binary
in $ACCELOPT_BINARY and the tests' home in $ACCELOPT_TEST_HOME). The fixture
(tests/fixtures/self_improvement) is two elementwise tasks and recorded model
answers: gelu_sigmoid's planner proposes the idea of logistic's lesson when that
lesson is in its prompt, and another one when it is not. Whether the lesson is
written, and every figure, is measured as the test runs; each figure of the
report is checked against what the store and the commands say was measured.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "self_improvement"
SCRIPT = ROOT / "bench" / "self_improvement.py"
BINARY = os.environ.get("ACCELOPT_BINARY", str(ROOT / "build" / "accelopt"))
TASKS = ["logistic", "broken_baseline", "gelu_sigmoid"]  # the second fails in every run
MEASURED = ["logistic", "gelu_sigmoid"]
REMEMBERED = "Apply the remembered inline exp to gelu_sigmoid"
UNROLLED = "Unroll the gelu_sigmoid element loop by four"


def environment():
    env = dict(os.environ)
    home = os.environ.get("ACCELOPT_TEST_HOME", str(Path(BINARY).resolve().parent / "test-home"))
    env["ACCELOPT_HOME"] = home + "/data"  # the tests' calibration, never the user's
    env["ACCELOPT_CACHE"] = home + "/cache"
    env.pop("ACCELOPT_CONFIG", None)
    return env


def accelopt(*words, db=None):
    command = [BINARY] + list(words) + (["--db", db] if db else [])
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    return done


def script(*words):
    return subprocess.run([sys.executable, str(SCRIPT)] + list(words), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=environment())


def fixture_flags(shape):
    return ["--accelopt", BINARY, "--suite", str(FIXTURE / "suite"), "--shape", shape, "-I", "1", "-N", "1", "-B",
            "1", "-K", "1", "-R", "0", "--scripted", str(FIXTURE / "answers.jsonl")]


class FixtureTest(unittest.TestCase):
    def test_the_recording_holds_model_answers_only(self):
        for line in (FIXTURE / "answers.jsonl").read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            entry = json.loads(line)
            self.assertLessEqual(set(entry), {"role", "match", "response", "repeat"}, line[:120])


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"no accelopt binary at {BINARY}")
class EndToEndTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Scored against the calibration saved in the tests' home, if any test
        # saved one; else unscored, and the report must say so.
        cls.dir = tempfile.TemporaryDirectory(prefix="selfimp-test-")
        cls.db = cls.dir.name + "/store.db"
        cls.json_file = cls.dir.name + "/report.json"
        cls.done = script(*TASKS, *fixture_flags("bench"), "--db", cls.db, "--json", cls.json_file)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def report(self):
        """The report without the failed task's row (test_a_failed_run_... checks that one)."""
        self.assertEqual(self.done.returncode, 3, self.done.stderr[-3000:])  # 3: a task failed
        with open(self.json_file) as f:
            report = json.load(f)
        report["tasks"] = [r for r in report["tasks"] if r["task"] != "broken_baseline"]
        return report

    def candidates(self, run, task):
        got = accelopt("candidates", str(run), "--task", task, "--json", db=self.db)
        self.assertEqual(got.returncode, 0, got.stderr)
        return json.loads(got.stdout)

    def test_each_arrangement_is_what_its_run_measured(self):
        report = self.report()
        self.assertEqual([r["task"] for r in report["tasks"]], MEASURED)
        runs = set()
        for row in report["tasks"]:
            for name in ("fresh", "carried"):
                a = row[name]
                with self.subTest(task=row["task"], arrangement=name):
                    runs.add(a["run"])
                    stored = self.candidates(a["run"], row["task"])
                    best = next(c for c in stored if c["id"] == a["best_candidate"])
                    self.assertEqual(best["status"], "ok")
                    self.assertEqual(a["best_latency_s"], best["latency_s"])
                    self.assertEqual(a["best_percent_of_peak"], best["percent_of_peak"])
                    self.assertEqual(a["best_disturbed"], best["disturbed"])
                    # The calls to 90%: the fewest model calls after which a kernel within 90% was measured.
                    within = [c["model_calls"] for c in stored
                              if c["status"] == "ok" and c["latency_s"] <= best["latency_s"] / 0.9]
                    self.assertEqual(a["calls_to_90"], min(within))
                    self.assertEqual(a["model_calls"], max(c["model_calls"] for c in stored))
                    # With -I 1 -N 1 -K 1: a plan and a kernel were asked for before the child was measured.
                    self.assertEqual(a["model_calls"], 2)
                    self.assertIn(a["calls_to_90"], (0, 2))
                    self.assertEqual(a["candidates"], len(stored))
                    shown = accelopt("show", str(a["run"]), "--json", "--no-code", db=self.db)
                    self.assertEqual(shown.returncode, 0, shown.stderr)
                    self.assertGreaterEqual(json.loads(shown.stdout)["llm"]["calls"], a["model_calls"])
        self.assertEqual(len(runs), 4, "each task of each arrangement in a run of its own")

    def test_the_memory_is_carried_and_changes_what_the_planner_proposes(self):
        report = self.report()
        memory = report["memory"]
        self.assertTrue(memory.startswith("selfimp-"), memory)
        listed = accelopt("memory", "list", "--json", db=self.db)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        lessons = {m["memory"]: m["lessons"] for m in json.loads(listed.stdout)}
        rows = {r["task"]: r for r in report["tasks"]}
        fresh_plans = {c["plan"] for c in self.candidates(rows["gelu_sigmoid"]["fresh"]["run"], "gelu_sigmoid")}
        carried_plans = {c["plan"] for c in self.candidates(rows["gelu_sigmoid"]["carried"]["run"], "gelu_sigmoid")}
        self.assertIn(UNROLLED, fresh_plans)  # a fresh memory never shows the lesson
        if not lessons.get(memory):
            # logistic's comparison was measured disturbed or not faster: no lesson, nothing carried.
            self.assertIn(UNROLLED, carried_plans)
            self.skipTest("no lesson was written on this machine now; the carried run saw none")
        self.assertTrue(any(l["task"] == "logistic" for l in lessons[memory]), lessons[memory])
        self.assertIn(REMEMBERED, carried_plans)
        self.assertNotIn(REMEMBERED, fresh_plans)

    def test_the_best_kernels_were_timed_side_by_side(self):
        report = self.report()
        for row in report["tasks"]:
            c = row["compare"]
            with self.subTest(task=row["task"]):
                self.assertGreater(c["pairs"], 0)
                self.assertLessEqual(c["ci_low"], c["speedup"])
                self.assertLessEqual(c["speedup"], c["ci_high"])
                self.assertIsInstance(c["disturbed"], bool)
                # Both kernels' own figures from that window, scored alike or not at all.
                self.assertGreater(c["fresh_latency_s"], 0)
                self.assertGreater(c["carried_latency_s"], 0)
                self.assertEqual(c["fresh_percent_of_peak"] is None, c["carried_percent_of_peak"] is None)
                if c["fresh_percent_of_peak"] is not None:
                    # % of peak is T / latency: the two percentages stand as the two latencies, inverted.
                    self.assertAlmostEqual(c["carried_percent_of_peak"] / c["fresh_percent_of_peak"],
                                           c["fresh_latency_s"] / c["carried_latency_s"], places=6)
        gelu = next(r for r in report["tasks"] if r["task"] == "gelu_sigmoid")
        if gelu["carried"]["best_plan"] == REMEMBERED and gelu["fresh"]["best_plan"] != REMEMBERED and \
                not gelu["compare"]["disturbed"]:
            # The vectorized exp against a scalar libm loop: several times faster, as measured now.
            self.assertGreater(gelu["compare"]["ci_low"], 1.0, gelu["compare"])

    def test_a_failed_run_is_reported_in_its_row_and_the_rest_go_on(self):
        with open(self.json_file) as f:
            row = next(r for r in json.load(f)["tasks"] if r["task"] == "broken_baseline")
        self.assertIsNone(row["fresh"])
        self.assertIsNone(row["carried"])
        self.assertIsNone(row["compare"])
        self.assertEqual(len(row["errors"]), 2, row["errors"])
        for name in ("fresh", "carried"):
            self.assertIn(f"{name}: broken_baseline ({name}): `accelopt optimize broken_baseline ...` exited",
                          "\n".join(row["errors"]))
        for error in row["errors"]:
            self.assertTrue(error.endswith("exited 1: accelopt: the baseline of task 'broken_baseline' is not ok: the "
                                           "kernel does not compile (see the compile log)"), error)
        table = self.done.stdout
        self.assertIn("| broken_baseline | failed | failed | - | - | - | - | -, - |", table)
        for task in MEASURED:
            self.assertIn(f"| {task} | ", table)
        self.assertIn("| geometric mean | ", table)
        self.assertIn("broken_baseline: fresh: broken_baseline (fresh): ", table)

    def test_the_table_shows_what_the_json_holds(self):
        report = self.report()
        table = self.done.stdout
        for row in report["tasks"]:
            c = row["compare"]
            self.assertIn(f"{c['speedup']:.3f}x [{c['ci_low']:.3f}-{c['ci_high']:.3f}]", table)
            for name in ("fresh", "carried"):
                a = row[name]
                self.assertIn(f"{a['calls_to_90']} of {a['model_calls']}", table)
                if a["best_percent_of_peak"] is None:
                    self.assertIn("unscored", table)  # never a percentage of a peak nobody measured
                else:
                    self.assertIn(f"{a['best_percent_of_peak']:.2f}%", table)

    def test_an_earlier_reports_runs_are_compared_anew_without_running_anything(self):
        with open(self.json_file) as f:
            earlier = json.load(f)
        again_file = self.dir.name + "/again.json"
        again = script(*TASKS, *fixture_flags("bench"), "--db", self.db, "--recompare", self.json_file, "--json",
                       again_file)
        self.assertEqual(again.returncode, 3, again.stderr[-3000:])  # broken_baseline has no runs
        self.assertNotIn("optimizing", again.stderr)
        with open(again_file) as f:
            report = json.load(f)
        self.assertEqual(report["memory"], earlier["memory"])
        self.assertEqual(report["settings"]["recompare"], self.json_file)
        self.assertEqual(report["settings"]["I"], earlier["settings"]["I"])
        before = {r["task"]: r for r in earlier["tasks"]}
        for row in report["tasks"]:
            with self.subTest(task=row["task"]):
                if row["task"] == "broken_baseline":
                    self.assertIn("fresh: " + self.json_file + " holds no fresh run of broken_baseline", row["errors"])
                    continue
                for name in ("fresh", "carried"):
                    self.assertEqual(row[name], before[row["task"]][name])  # read again from the store, the same
                self.assertGreater(row["compare"]["pairs"], 0)  # timed anew

    def test_the_means_are_those_of_the_rows(self):
        report = self.report()
        g = report["geomean"]
        rows = report["tasks"]

        def mean(values):
            return math.exp(sum(math.log(v) for v in values) / len(values))

        quiet = [r["compare"]["speedup"] for r in rows if not r["compare"]["disturbed"]]
        if quiet:
            self.assertAlmostEqual(g["carried_over_fresh"], mean(quiet))
        self.assertEqual(g["disturbed_comparisons_left_out"], len(rows) - len(quiet))
        scored = [r for r in rows if r["fresh"]["best_percent_of_peak"] is not None and
                  r["carried"]["best_percent_of_peak"] is not None]
        self.assertEqual(g["tasks_scored"], len(scored))
        for name in ("fresh", "carried"):
            if scored:
                self.assertAlmostEqual(g[name + "_percent_of_peak"],
                                       mean([r[name]["best_percent_of_peak"] for r in scored]))
            else:
                self.assertIsNone(g[name + "_percent_of_peak"])


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"no accelopt binary at {BINARY}")
class CodeTaskTest(unittest.TestCase):
    """A code task named by its folder, the two arrangements side by side: its own metric, not a % of peak."""

    def test_a_code_task_is_scored_by_its_own_metric(self):
        with tempfile.TemporaryDirectory(prefix="selfimp-code-") as d:
            done = script(str(ROOT / "examples" / "suite" / "wordfreq"), "--accelopt", BINARY, "--scripted",
                          str(ROOT / "examples" / "answers" / "wordfreq.jsonl"), "-I", "1", "-N", "2", "-B", "1",
                          "-K", "1", "-R", "0", "--side-by-side", "--db", d + "/s.db", "--json", d + "/r.json")
            self.assertEqual(done.returncode, 0, done.stderr[-3000:])
            with open(d + "/r.json") as f:
                report = json.load(f)
            self.assertTrue(report["settings"]["side_by_side"])
            [row] = report["tasks"]
            self.assertEqual(row["task"], "wordfreq")
            self.assertEqual(row["metric"], {"metric": "time per byte of text", "unit": "ns", "direction": "lower"})
            for name in ("fresh", "carried"):
                a = row[name]
                got = accelopt("candidates", str(a["run"]), "--task", "wordfreq", "--json", db=d + "/s.db")
                best = next(c for c in json.loads(got.stdout) if c["id"] == a["best_candidate"])
                self.assertEqual(a["best_metric"], best["latency_s"])  # ns per byte, as the benchmark said
                self.assertIsNone(a["best_percent_of_peak"])
                self.assertIn(f"{a['best_metric']:.4g} ns", done.stdout)
            self.assertIn("(time per byte of text)", done.stdout)
            self.assertNotIn("unscored", done.stdout)
            self.assertEqual(report["geomean"]["tasks_scored"], 0)
            self.assertGreater(row["compare"]["pairs"], 0)  # the two bests, side by side, with the code target


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"no accelopt binary at {BINARY}")
class ExchangeTest(unittest.TestCase):
    def test_each_run_has_a_folder_of_its_own_that_says_when_the_run_ended(self):
        with tempfile.TemporaryDirectory(prefix="selfimp-exchange-") as d:
            flags = [f for f in fixture_flags("test")]
            at = flags.index("--scripted")
            del flags[at:at + 2]
            done = script("broken_baseline", *flags, "--exchange", d + "/x", "--db", d + "/s.db")
            self.assertEqual(done.returncode, 3, done.stderr[-3000:])  # its baseline fails before any prompt
            self.assertEqual(sorted(os.listdir(d + "/x")), ["carried-broken_baseline", "fresh-broken_baseline"])
            for name in ("fresh", "carried"):
                with open(f"{d}/x/{name}-broken_baseline/FINISHED") as f:
                    self.assertIn(f"the {name} run of broken_baseline has ended", f.read())


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"no accelopt binary at {BINARY}")
class HeldOutTest(unittest.TestCase):
    """bench/heldout: tasks kept out of the suite, each with a correct baseline (and anchor, where it has one)."""

    def test_each_held_out_task_is_out_of_the_suite_and_its_kernels_are_correct(self):
        heldout = ROOT / "bench" / "heldout"
        tasks = sorted(p.name for p in heldout.iterdir() if (p / "task.yaml").exists())
        self.assertGreaterEqual(len(tasks), 2)
        for task in tasks:
            self.assertFalse((ROOT / "suite" / task).exists(), f"{task} is in the suite: it is not held out")
        done = accelopt("bench", "--suite", str(heldout), "--shape", "test", "--json")
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        rows = json.loads(done.stdout)["rows"]
        measured = {(r["profile"]["task"], r["kernel"]): r["profile"]["status"] for r in rows}
        expected = {(t, "baseline") for t in tasks} | {(t, "openblas") for t in tasks
                                                       if (heldout / t / "vendor.cpp").exists()}
        self.assertEqual(set(measured), expected)
        for (task, kernel), status in measured.items():
            self.assertEqual(status, "ok", f"{task}: its {kernel} kernel")


@unittest.skipUnless(os.access(BINARY, os.X_OK), f"no accelopt binary at {BINARY}")
class ErrorTest(unittest.TestCase):
    def test_a_missing_binary_and_an_unknown_task_are_named(self):
        missing = script("logistic", "--accelopt", "/nonexistent/accelopt")
        self.assertEqual(missing.returncode, 1)
        self.assertIn("no accelopt binary at /nonexistent/accelopt", missing.stderr)
        with tempfile.TemporaryDirectory() as d:
            unknown = script("logistic", "nosuch", *fixture_flags("test"), "--db", d + "/s.db")
        self.assertEqual(unknown.returncode, 1)
        self.assertIn("no task nosuch in the suite", unknown.stderr)
        self.assertNotIn("optimizing", unknown.stderr)  # nothing ran


if __name__ == "__main__":
    unittest.main()
