#!/usr/bin/env python3
"""An accelopt evaluator for Triton kernels on an NVIDIA GPU (docs/external-protocol.md).

Run as `evaluator.py REQUEST.json` (one request) or `evaluator.py --serve`
(one JSON request per line until stdin ends). A kernel is a Python module
holding @triton.jit kernels and a host function `kernel(<inputs>, <outputs>)`
over float32 torch CUDA tensors shaped by the task's dims, launching on the
current stream; the task's parameters and constants are globals of the
module. The task folder holds `reference.py` (the same signature over float64
CPU tensors) and `baseline.py`.

Two processes: this one speaks the protocol and starts a worker
(`evaluator.py --worker`) that holds the CUDA context and Triton's compiled
kernels between requests. A kernel that breaks the context (an illegal
address is sticky: every later CUDA call fails) or crashes the worker costs
only that worker: the answer says what happened, and the next request gets
a fresh one. torch and triton are imported by the worker, inside functions,
so the protocol (and the static checks of kernel_rules.py) work without them.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

PROTOCOL = 1
OPS = ("describe", "build", "check", "time", "compare")
SERIES = 2  # timed series per `time`
CHECKED_PER_SERIES = 2  # of which this many calls are checked, at random positions
LOG_LIMIT = 20000


# ---------------------------------------------------------------- the front process


class Worker:
    """The worker process: started when first needed, replaced when it asked to be or died."""

    def __init__(self):
        self.proc = None
        self.tail = b""
        self.pump = None

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.tail = b""
        self.pump = threading.Thread(target=self.forward_stderr, args=(self.proc.stderr,), daemon=True)
        self.pump.start()

    def forward_stderr(self, stream):
        # Passed on as it comes (the engine keeps the last of it); the end kept for a crash's log.
        fd = stream.fileno()
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                return
            self.tail = (self.tail + chunk)[-4000:]
            try:
                sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()
            except (OSError, ValueError):
                pass

    def kill(self):
        # It has answered and holds nothing worth a clean exit (its CUDA context may be broken).
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def stop(self):
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def exchange(self, request):
        for attempt in (0, 1):
            if self.proc is None:
                self.start()
            try:
                self.proc.stdin.write(json.dumps(request).encode() + b"\n")
                self.proc.stdin.flush()
            except OSError:
                # It was gone before this request: start another, once.
                self.kill()
                if attempt == 0:
                    continue
                return died(request, "could not be started")
            line = self.proc.stdout.readline()
            if not line:
                code = self.proc.wait()
                self.pump.join(2.0)
                self.proc = None
                how = ("was killed by %s" % signal_name(-code)) if code < 0 else ("exited with code %d" % code)
                return died(request, how, self.tail.decode(errors="replace"))
            try:
                answer = json.loads(line)
            except ValueError:
                self.stop()
                return {"error": "the worker answered what is not JSON: %r" % line[:400]}
            if answer.pop("restart", False):
                self.kill()
            return answer


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def died(request, how, tail=""):
    """The answer for a request during which the worker process ended: the kernel's verdict where one ran."""
    op = request.get("op")
    if op == "build":
        return {"status": "compile_error", "log": tail,
                "message": "the worker process %s while importing the kernel, compiling it or running it once" % how}
    if op in ("check", "time", "compare"):
        return {"status": "runtime_error", "log": tail,
                "message": "the worker process %s while running the kernel" % how}
    return {"error": "the worker process %s during '%s'%s" % (how, op, (": " + tail[-2000:]) if tail else "")}


def front_answer(worker, request):
    if not isinstance(request, dict) or request.get("protocol") != PROTOCOL:
        got = request.get("protocol") if isinstance(request, dict) else request
        return {"error": "protocol %r is not spoken here (only %d)" % (got, PROTOCOL)}
    if request.get("op") not in OPS:
        return {"error": "unknown op %r" % request.get("op")}
    return worker.exchange(request)


def write_answer(stream, answer):
    answer["protocol"] = PROTOCOL
    stream.write(json.dumps(answer) + "\n")
    stream.flush()


def main():
    args = sys.argv[1:]
    if args == ["--worker"]:
        return worker_main()
    if args == ["--serve"]:
        worker = Worker()
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as e:
                write_answer(sys.stdout, {"error": "the request is not JSON: %s" % e})
                continue
            write_answer(sys.stdout, front_answer(worker, request))
        worker.stop()
        return 0
    if len(args) != 1 or args[0].startswith("--"):
        sys.stderr.write("usage: evaluator.py REQUEST.json | evaluator.py --serve "
                         "(started by accelopt; see docs/external-protocol.md)\n")
        return 2
    with open(args[0]) as f:
        request = json.load(f)
    worker = Worker()
    write_answer(sys.stdout, front_answer(worker, request))
    worker.stop()
    return 0


# ---------------------------------------------------------------- the worker process


def worker_main():
    # Answers go to a private copy of stdout; whatever the kernel or Triton prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = handle(request)
        except Exception:
            answer = {"error": "the evaluator failed during '%s': %s" % (request.get("op"), clip(traceback.format_exc()))}
        write_answer(answers, answer)
        if answer.get("restart"):
            break
    return 0


def handle(request):
    import harness
    # A build checks the source first, before torch is imported (build() asks for the rest).
    problem = harness.environment_problem() if request["op"] != "build" else None
    if problem:
        return {"error": problem}
    return {"describe": describe, "build": build, "check": check, "time": time_kernel,
            "compare": compare}[request["op"]](request)


def clip(text):
    return text if len(text) <= LOG_LIMIT else "...\n" + text[-LOG_LIMIT:]


def describe(_request):
    import torch
    import triton
    import kernel_rules
    import peaks
    with device_lock("describe (measuring the peaks)"):
        measured = peaks.measure()
    return {
        "name": "triton",
        "language": "triton",
        "file_extension": ".py",
        "fence_tags": ["python", "py"],
        "build_command": "Triton %s, kernels compiled at their first call (the build makes one); imports: %s"
        % (triton.__version__, kernel_rules.allowed_text()),
        "prompts_dir": "evaluators/triton/prompts",
        "machine": peaks.machine_line(torch, triton),
        "peaks": measured,
        "serve": True,
        "compare": True,
    }


_modules = {}  # module name -> module, oldest first
MODULES_KEPT = 64


def load_kernel(path, task):
    """The kernel module at `path` with the task's globals, imported once per content and shape."""
    import hashlib
    import importlib.util
    import harness
    with open(path, "rb") as f:
        content = f.read()
    key = hashlib.sha256(content + json.dumps([path, task["params"], task["constants"]], sort_keys=True).encode())
    name = "accelopt_kernel_" + key.hexdigest()[:20]
    if name not in _modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(harness.shape_globals(task))
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        _modules[name] = module
        while len(_modules) > MODULES_KEPT:
            sys.modules.pop(_modules.pop(next(iter(_modules))).__name__, None)
    return _modules[name]


def compile_failure(e):
    """Whether `e` came from Triton compiling a kernel (at its first call) rather than from running it."""
    for cls in type(e).__mro__:
        if (cls.__module__ or "").startswith("triton.compiler") or cls.__name__ in (
                "CompilationError", "OutOfResources", "PTXASError"):
            return True
    marker = os.sep + "triton" + os.sep + "compiler" + os.sep
    return any(marker in frame.filename for frame in traceback.extract_tb(e.__traceback__))


def summary(e):
    """The exception's type and the last line of its message (the cause, for Triton's compile errors)."""
    lines = [line for line in str(e).splitlines() if line.strip()]
    return (type(e).__name__ + ": " + (lines[-1] if lines else ""))[:400]


def failed_run(e, what):
    """The status answer for an exception raised while the kernel ran; the worker is replaced after it."""
    log = clip(traceback.format_exc())
    names = [cls.__name__ for cls in type(e).__mro__]
    if "OutOfMemoryError" in names or "out of memory" in str(e):
        return {"status": "resource_limit", "message": "out of device memory %s: %s" % (what, summary(e)),
                "log": log, "restart": True}
    if compile_failure(e):
        return {"status": "runtime_error", "message": "Triton could not compile the kernel %s: %s" % (
            what, summary(e)), "log": log, "restart": True}
    return {"status": "runtime_error", "message": "the kernel failed %s: %s" % (what, summary(e)), "log": log,
            "restart": True}


def new_seed():
    return int.from_bytes(os.urandom(8), "little") >> 1


def build(request):
    import kernel_rules
    import harness
    task = request["task"]
    source = request["source"]
    path = os.path.join(request["work_dir"], "kernel.py")
    with open(path, "w") as f:
        f.write(source)
    start = time.perf_counter()
    try:
        kernel_rules.check_source(source, path)
    except kernel_rules.Refusal as r:
        return {"status": r.status, "message": r.message, "log": r.message, "seconds": time.perf_counter() - start}
    problem = harness.environment_problem()
    if problem:
        return {"error": problem}
    try:
        module = load_kernel(path, task)
    except Exception as e:
        return {"status": "compile_error", "message": "the kernel module failed to import: %s" % summary(e),
                "log": clip(traceback.format_exc()), "seconds": time.perf_counter() - start}
    # Triton compiles at the first call: make it here, so that a kernel that does not compile is a compile error.
    log = ""
    restart = False
    try:
        with device_lock("build %s (first call)" % task["name"]):
            harness.Device(task).call(module.kernel, new_seed())
    except Exception as e:
        if compile_failure(e):
            return {"status": "compile_error", "message": "Triton could not compile the kernel at its first call: "
                    + summary(e), "log": clip(traceback.format_exc()), "seconds": time.perf_counter() - start}
        # Not a compile failure: the check runs the kernel again and reports it.
        log = "the first call failed (the check reports it):\n" + clip(traceback.format_exc())
        restart = True
    answer = {"status": "ok", "artifact": path, "log": log, "seconds": time.perf_counter() - start}
    if restart:
        answer["restart"] = True
    return answer


def check(request):
    import harness
    task = request["task"]
    try:
        kernel = load_kernel(request["artifact"], task).kernel
    except Exception as e:
        return not_loaded(e)
    reference = harness.load_reference(task)
    try:
        with device_lock("check %s" % task["name"]):
            device = harness.Device(task)
            calls = [device.call(kernel, new_seed()) for _ in range(request["seeds"])]
    except Exception as e:
        return failed_run(e, "while checked")
    worst = {"rel_l2": 0.0, "max_abs": 0.0}
    for i, call in enumerate(calls):
        if call.changed:
            return changed_input(call.changed, i + 1)
        wrong = device.judge(reference, call, worst)
        if wrong:
            return {"status": "wrong_answer", "message": wrong, "checked_calls": i + 1, "errors": worst}
    return {"status": "ok", "checked_calls": len(calls), "errors": worst}


def not_loaded(e):
    return {"status": "runtime_error", "message": "the kernel module failed to load: " + summary(e),
            "log": clip(traceback.format_exc())}


def changed_input(name, calls):
    return {"status": "forbidden", "checked_calls": calls,
            "message": "the kernel changed its input '%s' (inputs are read-only; write only the outputs)" % name}


def call_count(request, one_seconds):
    """Calls per series: what the engine's budget allows for a call of `one_seconds`, within its bounds."""
    fits = int(request["budget_seconds"] / max(one_seconds, 1e-7))
    return max(request["min_calls"], min(request["max_calls"], fits))


def time_kernel(request):
    import random
    import harness
    task = request["task"]
    try:
        kernel = load_kernel(request["artifact"], task).kernel
    except Exception as e:
        return not_loaded(e)
    reference = harness.load_reference(task)
    rng = random.SystemRandom()
    series, kept, changed, outside = [], [], None, 0
    try:
        with device_lock("time %s" % task["name"]):
            device = harness.Device(task)
            threshold = device.threshold()
            warm = [device.call(kernel, new_seed()) for _ in range(2)]  # the first may still compile
            changed = next((c.changed for c in warm if c.changed), None)
            calls = call_count(request, harness.sample(warm[-1], threshold))
            for _ in range(SERIES):
                checked = set(rng.sample(range(calls), min(CHECKED_PER_SERIES, calls)))
                samples = []
                for k in range(calls):
                    call = device.call(kernel, new_seed())
                    samples.append(harness.sample(call, threshold))
                    outside += call.wall_s - call.event_s > threshold
                    changed = changed or call.changed
                    if k in checked:
                        kept.append(call)
                    else:
                        call.outputs = None
                series.append(samples)
    except Exception as e:
        return failed_run(e, "while timed")
    if changed:
        return changed_input(changed, len(kept))
    worst = {"rel_l2": 0.0, "max_abs": 0.0}
    for i, call in enumerate(kept):
        wrong = device.judge(reference, call, worst)
        if wrong:
            return {"status": "wrong_answer", "checked_calls": i + 1,
                    "message": "a checked call among the timed ones: " + wrong}
    return {"status": "ok", "series": series, "checked_calls": len(kept),
            "timing": {"threshold_s": threshold, "calls_timed_by_host": outside}}


def compare(request):
    import random
    import harness
    task = request["task"]
    try:
        kernels = [load_kernel(path, task).kernel for path in request["artifacts"]]
    except Exception as e:
        return not_loaded(e)
    reference = harness.load_reference(task)
    rng = random.SystemRandom()
    pairs, kept, changed = [], [], None
    try:
        with device_lock("compare on %s" % task["name"]):
            device = harness.Device(task)
            threshold = device.threshold()
            slowest = 0.0
            for kernel in kernels:
                warm = [device.call(kernel, new_seed()) for _ in range(2)]
                changed = changed or next((c.changed for c in warm if c.changed), None)
                slowest = max(slowest, harness.sample(warm[-1], threshold))
            calls = call_count(request, slowest)
            checked = set(rng.sample(range(calls), min(CHECKED_PER_SERIES, calls)))
            for k in range(calls):
                seed = new_seed()  # the same inputs for both of a pair
                times = [0.0, 0.0]
                for which in ((0, 1) if k % 2 == 0 else (1, 0)):
                    call = device.call(kernels[which], seed)
                    times[which] = harness.sample(call, threshold)
                    changed = changed or call.changed
                    if k in checked:
                        kept.append((which, call))
                    else:
                        call.outputs = None
                pairs.append(times)
    except Exception as e:
        return failed_run(e, "while compared")
    if changed:
        return {"status": "runtime_error", "message": "a kernel changed its input '%s' while compared" % changed}
    worst = {"rel_l2": 0.0, "max_abs": 0.0}
    for which, call in kept:
        wrong = device.judge(reference, call, worst)
        if wrong:
            return {"status": "runtime_error",
                    "message": "kernel %s was wrong on a checked call of the comparison: %s" % ("AB"[which], wrong)}
    return {"status": "ok", "pairs": pairs}


class device_lock:
    """The machine-wide lock of the GPU, shared with every accelopt process (src/eval/device_lock.h):
    flock on `accelopt-cuda-<index>.lock` in $ACCELOPT_LOCK_DIR, /run/lock or /tmp, entered through the
    `.queue` turnstile. Without a usable lock folder it runs unlocked."""

    def __init__(self, purpose):
        self.purpose = purpose
        self.fd = None

    def __enter__(self):
        import fcntl
        import torch
        folder = os.environ.get("ACCELOPT_LOCK_DIR") or (
            "/run/lock" if os.access("/run/lock", os.W_OK | os.X_OK) else "/tmp")
        base = os.path.join(folder, "accelopt-cuda-%d" % torch.cuda.current_device())
        try:
            queue = os.open(base + ".queue", os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            return self
        try:
            self.fd = os.open(base + ".lock", os.O_RDWR | os.O_CREAT, 0o666)
            fcntl.flock(queue, fcntl.LOCK_EX)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, ("triton evaluator (pid %d): %s\n" % (os.getpid(), self.purpose)).encode(), 0)
        except OSError:
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None
        finally:
            os.close(queue)  # closing it releases the turnstile
        return self

    def __exit__(self, *_):
        if self.fd is not None:
            import fcntl
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
        return False


if __name__ == "__main__":
    sys.exit(main())
