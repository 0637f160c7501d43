#!/usr/bin/env python3
"""An accelopt evaluator for NKI kernels on AWS Trainium (docs/external-protocol.md).

Run as `evaluator.py REQUEST.json` (one request) or `evaluator.py --serve`
(one request per line). A kernel is a Python module defining an NKI kernel
`kernel(<inputs>)` that allocates its outputs in HBM (`nl.shared_hbm`) and
returns them (a tuple when there are several). The task's parameters and
constants are globals of the module. The task folder holds `reference.py`
(`reference(<inputs>)` over flat lists of Python floats, double precision,
returning the list of flat outputs) and `baseline.py`.

Everything that touches the device is one narrow layer, `NeuronDevice`
(compile, run, profile); numpy and neuronxcc are imported only there and in
the worker it starts. `--replay FILE` replaces that layer with a recording
(`ReplayDevice`): synthetic device answers for testing the protocol side,
never a measurement. Everything else (inputs, reference, comparison,
statuses, series) is the same code in both modes.
"""

import array
import ast
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

PROTOCOL = 1
HERE = os.path.dirname(os.path.abspath(__file__))
ALLOWED_IMPORTS = {"neuronxcc.nki", "neuronxcc.nki.language", "neuronxcc.nki.isa", "numpy", "math"}
SERIES = 2  # timed series per `time` request

# Peaks of one NeuronCore from AWS's specifications (a kernel runs on one
# core): the device's HBM bandwidth (a core cannot exceed it), the Tensor
# Engine's float32 rate (the tasks are float32; bf16 fails their tolerance)
# and the fp32 rate of the engines that do elementwise work. Not measured.
SPECIFICATIONS = {
    "trn1": {
        "core": "NeuronCore-v2",
        "bandwidth_gbs": 820.0,  # 2 HBM stacks per Trainium device, 820 GB/s
        "peak_mm_gflops": 23750.0,  # 47.5 FP32 TFLOPS per device, 2 cores (95 BF16 TFLOPS per core)
        "peak_vec_gflops": 5200.0,  # Vector Engine 2.3 + Scalar Engine 2.9 FP32 TFLOPS
    },
    "trn2": {
        "core": "NeuronCore-v3",
        "bandwidth_gbs": 2900.0,  # 4 HBM stacks per Trainium2 device, 2.9 TB/s
        "peak_mm_gflops": 22625.0,  # 181 FP32 TFLOPS per device, 8 cores (79 BF16 TFLOPS per core)
        "peak_vec_gflops": 1000.0,  # Vector Engine 1.0 FP32 TFLOPS (the Scalar Engine's is not counted)
    },
}


def answer(obj):
    obj["protocol"] = PROTOCOL
    sys.stdout.write(json.dumps(obj))
    sys.stdout.write("\n")
    sys.stdout.flush()


class DeviceError(Exception):
    """The device or its tooling failed (not the kernel): an `error` answer."""


# ---------------------------------------------------------------------------
# The device layer. compile(path, task, inputs) -> {"ok", "log"};
# run(path, task, inputs) -> outputs; profile(path, task, inputs) ->
# (outputs, seconds on the device). Inputs are array('f') buffers; outputs
# come back as flat lists of floats, one per task output. A kernel that fails
# raises KernelFailure with its log; the device failing raises DeviceError.


class KernelFailure(Exception):
    def __init__(self, message, log):
        super().__init__(message)
        self.log = log


def instance_type():
    """The EC2 instance type: $ACCELOPT_NKI_INSTANCE, else the machine's DMI product name."""
    named = os.environ.get("ACCELOPT_NKI_INSTANCE", "")
    if named:
        return named
    try:
        with open("/sys/devices/virtual/dmi/id/product_name") as f:
            return f.read().strip()
    except OSError:
        return ""


def specification_peaks(instance):
    family = instance.split(".")[0]
    spec = SPECIFICATIONS.get(family)
    if spec is None:
        return None, "no specification for instance type '%s' (known: %s; set ACCELOPT_NKI_INSTANCE)" % (
            instance, ", ".join(sorted(SPECIFICATIONS)))
    rates = {k: spec[k] for k in ("bandwidth_gbs", "peak_mm_gflops", "peak_vec_gflops")}
    peaks = dict(rates)
    peaks.update({"theoretical": dict(rates), "calibrated": False, "fingerprint": instance + "/" + spec["core"]})
    return peaks, spec["core"]


class NeuronDevice:
    """Runs kernels on the local NeuronCore through nki.baremetal and times them with neuron-profile.

    Each call runs in a worker process of its own (`evaluator.py --device-call
    FOLDER`): the kernel's Python, which runs when NKI traces it, never shares
    memory with the reference, the comparison or the clock. Every call compiles
    the kernel again (nki.baremetal compiles each call), so calls take seconds.
    """

    def __init__(self):
        self.instance = instance_type()

    @staticmethod
    def unavailable():
        """Why this machine cannot run NKI kernels ("" when it can)."""
        try:
            import neuronxcc.nki  # noqa: F401
            import numpy  # noqa: F401
        except ImportError as e:
            return "the Neuron SDK is not installed here (%s): the NKI evaluator needs neuronxcc and numpy " \
                   "on a Trainium instance" % e
        if not any(name.startswith("neuron") and name[6:].isdigit() for name in os.listdir("/dev")):
            return "no Neuron device here (/dev/neuron* is missing): the NKI evaluator needs a Trainium instance"
        if shutil.which("neuron-profile") is None:
            return "neuron-profile is not on PATH (install aws-neuronx-tools; it is in /opt/aws/neuron/bin)"
        return ""

    def describe(self):
        peaks, core = specification_peaks(self.instance)
        if peaks is None:
            raise DeviceError(core)
        return peaks, "AWS %s, one %s (kernels run on one core through nki.baremetal)" % (self.instance, core)

    def _call(self, path, task, inputs, mode):
        import numpy as np
        folder = tempfile.mkdtemp(prefix="call-", dir=os.path.dirname(path))
        try:
            for i, (t, values) in enumerate(zip(task["inputs"], inputs)):
                np.save(os.path.join(folder, "in%d.npy" % i),
                        np.frombuffer(values, dtype=np.float32).reshape(t["dims"]))
            with open(os.path.join(folder, "call.json"), "w") as f:
                json.dump({"kernel": path, "task": task, "mode": mode}, f)
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--device-call", folder],
                                  capture_output=True, text=True)
            log = done.stdout + done.stderr
            if done.returncode == 3:
                raise KernelFailure("the kernel failed to compile or run on the device", log)
            if done.returncode != 0:
                raise DeviceError("the device worker exited with code %d: %s" % (done.returncode, log[-2000:]))
            outputs = []
            for i in range(len(task["outputs"])):
                out = np.load(os.path.join(folder, "out%d.npy" % i))
                outputs.append(out.astype(np.float64).ravel().tolist())
            seconds = self._device_seconds(folder) if mode == "profile" else None
            return outputs, seconds, log
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @staticmethod
    def _device_seconds(folder):
        """The call's time on the device: neuron-profile's summary of the trace nki.baremetal captured."""
        summary = os.path.join(folder, "summary.json")
        done = subprocess.run(["neuron-profile", "view", "-n", os.path.join(folder, "kernel.neff"),
                               "-s", os.path.join(folder, "profile.ntff"), "--output-format", "json",
                               "--output-file", summary], capture_output=True, text=True)
        if done.returncode != 0:
            raise DeviceError("neuron-profile view failed: " + (done.stdout + done.stderr)[-2000:])
        with open(summary) as f:
            seconds = json.load(f)["summary"][0]["total_time"]
        if not (isinstance(seconds, (int, float)) and seconds > 0 and math.isfinite(seconds)):
            raise DeviceError("neuron-profile reported a total_time of %r" % (seconds,))
        return float(seconds)

    def compile(self, path, task, inputs):
        try:
            _, _, log = self._call(path, task, inputs, "run")
            return {"ok": True, "log": log}
        except KernelFailure as e:
            return {"ok": False, "log": e.log}

    def run(self, path, task, inputs):
        return self._call(path, task, inputs, "run")[0]

    def profile(self, path, task, inputs):
        outputs, seconds, _ = self._call(path, task, inputs, "profile")
        return outputs, seconds


def device_call(folder):
    """The worker: loads the kernel, runs it once on the device with the saved inputs, saves its outputs.

    Exit code 3 is the kernel's failure (tracing, compiling or running it);
    anything else non-zero is the evaluator's.
    """
    import numpy as np
    from neuronxcc import nki
    with open(os.path.join(folder, "call.json")) as f:
        call = json.load(f)
    task = call["task"]
    inputs = [np.load(os.path.join(folder, "in%d.npy" % i)) for i in range(len(task["inputs"]))]
    try:
        fn = load_module(call["kernel"], task)["kernel"]
        options = {"save_neff_name": os.path.join(folder, "kernel.neff")}
        if call["mode"] == "profile":
            options["save_trace_name"] = os.path.join(folder, "profile.ntff")
        outputs = nki.baremetal(fn, **options)(*inputs)
    except Exception:
        traceback.print_exc()
        return 3
    if not isinstance(outputs, (tuple, list)):
        outputs = (outputs,)
    if len(outputs) != len(task["outputs"]):
        sys.stderr.write("the kernel returned %d outputs; the task has %d\n" % (len(outputs), len(task["outputs"])))
        return 3
    for i, out in enumerate(outputs):
        np.save(os.path.join(folder, "out%d.npy" % i), np.asarray(out))
    return 0


class ReplayDevice:
    """The device layer replaced by a recording: a fixture of synthetic device answers.

    Answers are found by the kernel's source (sha256) and the call's inputs
    (sha256 of their float32 bytes); anything not recorded is a DeviceError,
    never a guess.
    """

    def __init__(self, path):
        with open(path) as f:
            self.fixture = json.load(f)
        if "not a measurement" not in self.fixture.get("fixture", ""):
            raise DeviceError("%s does not say it is a synthetic fixture; refusing to replay it" % path)
        self.path = path
        self.instance = self.fixture["instance"]

    def describe(self):
        peaks, core = specification_peaks(self.instance)
        if peaks is None:
            raise DeviceError(core)
        peaks["fingerprint"] = "replay of " + os.path.basename(self.path)
        return peaks, "REPLAY of %s (synthetic device answers, not a measurement): as if AWS %s, one %s" % (
            os.path.basename(self.path), self.instance, core)

    def _kernel(self, path):
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        kernel = self.fixture["kernels"].get(digest)
        if kernel is None:
            raise DeviceError("the replay fixture has no kernel with source sha256 %s" % digest)
        return kernel

    def compile(self, path, task, inputs):
        return self._kernel(path)["compile"]

    def _recorded(self, path, inputs):
        digest = inputs_digest(inputs)
        call = self._kernel(path).get("calls", {}).get(digest)
        if call is None:
            raise DeviceError("the replay fixture has no call of this kernel on inputs %s" % digest)
        if "failure" in call:
            raise KernelFailure("the kernel failed on the device (replayed)", call["failure"])
        return call

    def run(self, path, task, inputs):
        return self._recorded(path, inputs)["outputs"]

    def profile(self, path, task, inputs):
        call = self._recorded(path, inputs)
        return call["outputs"], call["seconds"]


# ---------------------------------------------------------------------------
# The evaluator's side: inputs, reference, comparison, statuses, series.


def inputs_digest(inputs):
    h = hashlib.sha256()
    for values in inputs:
        h.update(values.tobytes())
    return h.hexdigest()


class Inputs:
    """Draws each call's inputs, rounded to float32. Fresh from os.urandom; under
    replay from the fixture's seed, so that call `i` of a request always draws
    the same inputs (the recording's)."""

    def __init__(self, replay_seed=None):
        self.replay_seed = replay_seed

    def draw(self, task, call):
        if self.replay_seed is None:
            rng = random.Random(int.from_bytes(os.urandom(8), "little"))
        else:
            rng = random.Random(self.replay_seed * 1000003 + call)
        return [draw_tensor(t, rng) for t in task["inputs"]]


def draw_tensor(t, rng):
    d = t["dist"]
    if d["kind"] == "uniform":
        values = [rng.uniform(d["a"], d["b"]) for _ in range(t["elements"])]
    else:
        values = [rng.gauss(d["a"], d["b"]) for _ in range(t["elements"])]
    return array.array("f", values)


def shape_globals(task):
    g = {}
    g.update({k: (int(v) if float(v).is_integer() else v) for k, v in task["params"].items()})
    g.update(task["constants"])
    return g


def load_module(path, task):
    with open(path) as f:
        source = f.read()
    scope = shape_globals(task)
    exec(compile(source, path, "exec"), scope)
    return scope


def reference(task, inputs):
    scope = load_module(os.path.join(task["dir"], "reference.py"), task)
    return scope["reference"](*[list(v) for v in inputs])


def rel_l2(out, ref):
    num = sum((o - r) ** 2 for o, r in zip(out, ref))
    den = sum(r * r for r in ref)
    return math.sqrt(num / den) if den > 0 else math.sqrt(num)


def compare_outputs(task, outputs, inputs, worst, where):
    """Compares one call's outputs with the reference on its inputs; updates `worst`.
    Returns a wrong_answer message, or "" when every output is within the tolerance."""
    for t, out, ref in zip(task["outputs"], outputs, reference(task, inputs)):
        if len(out) != t["elements"]:
            return "output '%s' has %d values, not %d (%s)" % (t["name"], len(out), t["elements"], where)
        bad = sum(1 for v in out if not math.isfinite(v))
        if bad:
            return "output '%s': %d of %d values are not finite (%s)" % (t["name"], bad, len(out), where)
        err = rel_l2(out, ref)
        worst["rel_l2"] = max(worst["rel_l2"], err)
        worst["max_abs"] = max(worst["max_abs"], max((abs(o - r) for o, r in zip(out, ref)), default=0.0))
        if err > task["tolerance"]:
            return "output '%s': relative L2 error %.3g exceeds %.3g (%s)" % (t["name"], err, task["tolerance"], where)
    return ""


class Evaluator:
    def __init__(self, device, inputs, unavailable=""):
        self.device = device
        self.inputs = inputs
        self.unavailable = unavailable

    def describe(self, _request):
        if self.unavailable:
            return {"error": self.unavailable}
        peaks, machine = self.device.describe()
        return {
            "name": "nki",
            "language": "nki",
            "file_extension": ".py",
            "fence_tags": ["python", "py"],
            "build_command": "neuronxcc NKI through nki.baremetal (imports limited to %s)"
            % ", ".join(sorted(ALLOWED_IMPORTS)),
            "prompts_dir": "evaluators/nki/prompts",
            "machine": machine,
            "peaks": peaks,
            "serve": True,
        }

    def build(self, request):
        source, task = request["source"], request["task"]
        path = os.path.join(request["work_dir"], "kernel.py")
        with open(path, "w") as f:
            f.write(source)
        start = time.perf_counter()
        try:
            tree = ast.parse(source, path)
        except SyntaxError as e:
            return {"status": "compile_error", "message": "%s:%s: %s" % (path, e.lineno, e.msg),
                    "log": "".join(traceback.format_exception_only(type(e), e))}
        refused = forbidden_import(tree)
        if refused:
            return {"status": "forbidden", "message": refused}
        if not any(isinstance(n, ast.FunctionDef) and n.name == "kernel" for n in tree.body):
            return {"status": "compile_error", "message": "no function `kernel` is defined", "log": ""}
        compiled = self.device.compile(path, task, self.inputs.draw(task, 0))
        seconds = time.perf_counter() - start
        if not compiled["ok"]:
            return {"status": "compile_error", "message": "the NKI compiler refused the kernel",
                    "log": compiled["log"], "seconds": seconds}
        return {"status": "ok", "artifact": path, "log": compiled["log"], "seconds": seconds}

    def check(self, request):
        task, path = request["task"], request["artifact"]
        worst = {"rel_l2": 0.0, "max_abs": 0.0}
        for call in range(request["seeds"]):
            inputs = self.inputs.draw(task, call)
            try:
                outputs = self.device.run(path, task, inputs)
            except KernelFailure as e:
                return {"status": "runtime_error", "message": "%s (checked call %d)" % (e, call + 1), "log": e.log,
                        "checked_calls": call}
            wrong = compare_outputs(task, outputs, inputs, worst, "checked call %d" % (call + 1))
            if wrong:
                return {"status": "wrong_answer", "message": wrong, "checked_calls": call + 1, "errors": worst}
        return {"status": "ok", "checked_calls": request["seeds"], "errors": worst}

    def time(self, request):
        """Series of min_calls calls (each compiles and runs on the device, seconds of wall
        time, so the budget does not lengthen them), every call on fresh inputs and checked."""
        task, path = request["task"], request["artifact"]
        calls = max(1, request["min_calls"])
        worst = {"rel_l2": 0.0, "max_abs": 0.0}
        series = []
        for s in range(SERIES):
            one = []
            for c in range(calls):
                n = s * calls + c
                inputs = self.inputs.draw(task, n)
                try:
                    outputs, seconds = self.device.profile(path, task, inputs)
                except KernelFailure as e:
                    return {"status": "runtime_error", "message": "%s (timed call %d)" % (e, n + 1), "log": e.log}
                wrong = compare_outputs(task, outputs, inputs, worst, "timed call %d" % (n + 1))
                if wrong:
                    return {"status": "wrong_answer", "message": wrong, "checked_calls": n + 1, "errors": worst}
                one.append(seconds)
            series.append(one)
        return {"status": "ok", "series": series, "checked_calls": SERIES * calls}

    def handle(self, request):
        if request.get("protocol") != PROTOCOL:
            return {"error": "protocol %r is not spoken here (only %d)" % (request.get("protocol"), PROTOCOL)}
        op = {"describe": self.describe, "build": self.build, "check": self.check, "time": self.time}.get(
            request.get("op"))
        if op is None:
            return {"error": "unknown op %r" % request.get("op")}
        if self.unavailable:
            return {"error": self.unavailable}
        try:
            return op(request)
        except DeviceError as e:
            return {"error": str(e)}


def forbidden_import(tree):
    """Why the module's imports are refused ("" when they are all allowed)."""
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            # `from neuronxcc import nki` imports neuronxcc.nki; `from numpy import x` is numpy's.
            names = [module if module in ALLOWED_IMPORTS else module + "." + a.name for a in node.names]
        for name in names:
            if name not in ALLOWED_IMPORTS:
                return "imports '%s' (allowed: %s)" % (name, ", ".join(sorted(ALLOWED_IMPORTS)))
    return ""


def make_evaluator(replay):
    if replay:
        device = ReplayDevice(replay)
        return Evaluator(device, Inputs(replay_seed=device.fixture["seed"]))
    return Evaluator(NeuronDevice(), Inputs(), NeuronDevice.unavailable())


USAGE = ("usage: evaluator.py [--replay FIXTURE.json] (REQUEST.json | --serve)\n"
         "  started by accelopt; see docs/external-protocol.md and evaluators/nki/README.md\n")


def main(argv):
    if len(argv) == 2 and argv[0] == "--device-call":
        return device_call(argv[1])
    replay = None
    if len(argv) >= 2 and argv[0] == "--replay":
        replay, argv = argv[1], argv[2:]
    if len(argv) != 1:
        sys.stderr.write(USAGE)
        return 2
    try:
        evaluator = make_evaluator(replay)
    except (OSError, ValueError, KeyError, DeviceError) as e:
        failure = {"error": "the replay fixture %s cannot be used: %s" % (replay, e)}
        evaluator = None
    if argv[0] == "--serve":
        # Persistent: one request per line on stdin, one answer per line on stdout, until stdin ends.
        for line in sys.stdin:
            if line.strip():
                answer(evaluator.handle(json.loads(line)) if evaluator else dict(failure))
        return 0
    with open(argv[0]) as f:
        request = json.load(f)
    answer(evaluator.handle(request) if evaluator else failure)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
