#!/usr/bin/env python3
"""Writes replay.json: synthetic device answers for the replay tests of the NKI evaluator.

Nothing here ran on a device. For the example task `rmsnorm` at its `test`
shape it records what the evaluator's device layer would return:
- the baseline (suite/rmsnorm/baseline.py): compiles; its outputs on the
  inputs the evaluator draws under replay are the pure-Python reference's,
  rounded to float32; its per-call times are made up (a few microseconds);
- wrong_kernel.py: compiles; its outputs are what it computes (the
  reference without the gain w), so it is a wrong answer;
- compile_failure.py: a made-up compiler diagnostic.
The inputs come from the evaluator's own drawing code with the fixture's
seed, so the evaluator finds each call by the digest of its inputs.

Run it again (python3 make_replay.py) after changing the task, its
reference, the kernels above or the way the evaluator draws inputs.
"""

import array
import hashlib
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import evaluator  # noqa: E402

SEED = 20240917
CALLS = 20  # input sets recorded per kernel: covers check (3 seeds) and time (2 series of up to 10 calls)
TASK_DIR = os.path.join(os.path.dirname(HERE), "suite", "rmsnorm")
R, D, EPS = 4, 64, 1.0e-6  # rmsnorm's `test` shape and its constant, as in task.yaml


def task():
    """The task as the engine sends it (docs/external-protocol.md), at the `test` shape."""
    return {
        "name": "rmsnorm", "dir": TASK_DIR, "shape": "test",
        "params": {"R": R, "D": D}, "constants": {"eps": EPS},
        "inputs": [{"name": "x", "dims": [R, D], "elements": R * D, "dist": {"kind": "normal", "a": 0, "b": 1}},
                   {"name": "w", "dims": [D], "elements": D, "dist": {"kind": "uniform", "a": 0.5, "b": 1.5}}],
        "outputs": [{"name": "out", "dims": [R, D], "elements": R * D}],
        "tolerance": 2e-5,
    }


def float32(values):
    # %.9g keeps every float32 exactly and the file short.
    return [float("%.9g" % v) for v in array.array("f", values)]


def unscaled(x, w):
    """What wrong_kernel.py computes: the normalized rows without the gain."""
    out = []
    for r in range(R):
        row = x[r * D:(r + 1) * D]
        scale = 1.0 / math.sqrt(sum(v * v for v in row) / D + EPS)
        out.extend(v * scale for v in row)
    return [out]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    t = task()
    inputs = evaluator.Inputs(replay_seed=SEED)
    draws = [inputs.draw(t, call) for call in range(CALLS)]
    baseline, wrong = {}, {}
    for call, drawn in enumerate(draws):
        digest = evaluator.inputs_digest(drawn)
        # Made-up times: 9.6 us with a deterministic wobble of a few percent.
        baseline[digest] = {"outputs": [float32(o) for o in evaluator.reference(t, drawn)],
                            "seconds": round(9.6e-6 * (1 + 0.03 * math.sin(call)), 12)}
        if call < 3:  # the wrong kernel is only checked (3 seeds by default), never timed
            wrong[digest] = {"outputs": [float32(o) for o in unscaled(*(list(v) for v in drawn))],
                             "seconds": 9.1e-6}
    fixture = {
        "fixture": "synthetic device answers for testing the protocol side; not a measurement",
        "generated_by": "evaluators/nki/testdata/make_replay.py",
        "task": "rmsnorm at shape test",
        "instance": "trn1.2xlarge",
        "seed": SEED,
        "kernels": {
            sha256(os.path.join(TASK_DIR, "baseline.py")): {
                "name": "suite/rmsnorm/baseline.py",
                "compile": {"ok": True, "log": "[synthetic replay] compiled\n"},
                "calls": baseline},
            sha256(os.path.join(HERE, "wrong_kernel.py")): {
                "name": "testdata/wrong_kernel.py",
                "compile": {"ok": True, "log": "[synthetic replay] compiled\n"},
                "calls": wrong},
            sha256(os.path.join(HERE, "compile_failure.py")): {
                "name": "testdata/compile_failure.py",
                "compile": {"ok": False, "log": "[synthetic replay] AttributeError: module "
                            "'neuronxcc.nki.language' has no attribute 'rms_norm'\n"}},
        },
    }
    with open(os.path.join(HERE, "replay.json"), "w") as f:
        f.write(dumps(fixture))


def dumps(fixture):
    """Indented JSON with each recorded call on one line, so that the file stays readable and small."""
    calls = {}
    for k, kernel in enumerate(fixture["kernels"].values()):
        for digest, call in kernel.get("calls", {}).items():
            placeholder = "call %d %s" % (k, digest)
            calls[placeholder] = json.dumps(call)
            kernel["calls"][digest] = placeholder
    text = json.dumps(fixture, indent=1)
    for placeholder, call in calls.items():
        text = text.replace('"%s"' % placeholder, call)
    return text + "\n"

if __name__ == "__main__":
    main()
