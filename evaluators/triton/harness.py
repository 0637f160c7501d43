"""The calls of a kernel on the GPU, prepared and timed under docs/trust.md.

Every call, checked or not, is prepared the same way and followed by the same
work, so that nothing a kernel can observe tells a checked call apart:

  before: fresh inputs drawn on the device from the task's `dist` with a new
          seed, outputs filled with NaN, the L2 cache flushed (a buffer twice
          its size written), then a device-wide synchronize: nothing runs on
          the GPU when the call begins;
  timed:  a CUDA event on the evaluator's stream, the kernel's host function,
          a second event, a device-wide synchronize; the host clock around it
          all;
  after:  the inputs drawn again from the same seed and compared bit for bit
          with what the kernel left in its inputs, and a copy of the outputs.

A call's time is the events' time, unless the host clock saw the device busy
longer than the events by more than the synchronize costs by itself (the
`threshold`, measured at the start of every request): then work the call
launched on another stream, or left running, was in the time the host waited
for, and the host's time counts. Launching elsewhere gains at most the jitter
of a synchronize.

Checked calls keep their outputs and seed; their reference (the task's
`reference.py`, in double precision on the CPU) is computed after the series,
so that its cost does not separate them from the others either.

torch is imported inside functions: this module loads on machines without it.
"""

import math
import os
import time

# Bound when this module loads, before any kernel module does.
_perf = time.perf_counter
_bound = {}


def environment_problem():
    """None when torch, triton and a CUDA device can be used here; else why not, in one line."""
    try:
        import torch
    except Exception as e:  # ImportError, or a broken installation
        return "torch does not import here (%s: %s); a CUDA GPU with torch and triton is needed" % (
            type(e).__name__, e)
    try:
        import triton  # noqa: F401
    except Exception as e:
        return "triton does not import here (%s: %s); a CUDA GPU with torch and triton is needed" % (
            type(e).__name__, e)
    try:
        available = torch.cuda.is_available()
    except Exception as e:
        return "no CUDA device: torch.cuda.is_available() failed (%s)" % e
    if not available:
        return "no CUDA device: torch.cuda.is_available() is false"
    if not _bound:
        # The synchronize and event the clock relies on, taken before any kernel module is loaded.
        _bound["synchronize"] = torch.cuda.synchronize
        _bound["Event"] = torch.cuda.Event
    return None


def shape_globals(task):
    """The task's parameters (integers where whole) and constants, as module globals."""
    g = {}
    g.update({k: (int(v) if float(v).is_integer() else v) for k, v in task["params"].items()})
    g.update(task["constants"])
    return g


def load_reference(task):
    """The task's reference function (reference.py), loaded apart from any kernel module."""
    path = os.path.join(task["dir"], "reference.py")
    with open(path) as f:
        source = f.read()
    scope = shape_globals(task)
    scope["__name__"] = "accelopt_reference"
    exec(compile(source, path, "exec"), scope)
    return scope["reference"]


class Call:
    """What one prepared call gave: its times, an input it changed (or None), its outputs' copies."""

    def __init__(self, seed, event_s, wall_s, changed, outputs):
        self.seed = seed
        self.event_s = event_s
        self.wall_s = wall_s
        self.changed = changed
        self.outputs = outputs


class Device:
    """One task's tensors on the current CUDA device, made once per request.

    Not thread-safe; one per request. Raises what torch raises (out of
    memory, a CUDA error): the caller turns it into a status.
    """

    def __init__(self, task):
        import torch
        self.torch = torch
        self.task = task
        index = torch.cuda.current_device()
        device = torch.device("cuda", index)
        f32 = torch.float32

        def tensor(t):
            return torch.empty([int(d) for d in t["dims"]], dtype=f32, device=device)

        self.inputs = [tensor(t) for t in task["inputs"]]
        self.outputs = [tensor(t) for t in task["outputs"]]
        self.redrawn = [tensor(t) for t in task["inputs"]]
        l2 = getattr(torch.cuda.get_device_properties(index), "L2_cache_size", 0) or (128 << 20)
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device=device)
        self.generator = torch.Generator(device=device)
        self.stream = torch.cuda.current_stream(device)
        self.synchronize = _bound.get("synchronize", torch.cuda.synchronize)
        event = _bound.get("Event", torch.cuda.Event)
        self.start = event(enable_timing=True)
        self.end = event(enable_timing=True)

    def draw(self, seed, into):
        self.generator.manual_seed(seed)
        for t, x in zip(self.task["inputs"], into):
            d = t["dist"]
            if d["kind"] == "uniform":
                x.uniform_(d["a"], d["b"], generator=self.generator)
            else:
                x.normal_(d["a"], d["b"], generator=self.generator)

    def call(self, fn, seed):
        """One call of `fn` on inputs drawn from `seed`, prepared and followed as every call is."""
        torch = self.torch
        self.draw(seed, self.inputs)
        for o in self.outputs:
            o.fill_(math.nan)
        self.flush.fill_(seed & 0xFF)
        self.synchronize()
        t0 = _perf()
        self.start.record(self.stream)
        fn(*self.inputs, *self.outputs)
        self.end.record(self.stream)
        self.synchronize()
        wall = _perf() - t0
        # A kernel that made another stream current does not move the evaluator's work there.
        torch.cuda.set_stream(self.stream)
        event = self.start.elapsed_time(self.end) / 1e3
        self.draw(seed, self.redrawn)
        changed = None
        for t, x, again in zip(self.task["inputs"], self.inputs, self.redrawn):
            if not torch.equal(x, again) and changed is None:
                changed = t["name"]
        outputs = [o.clone() for o in self.outputs]
        return Call(seed, event, wall, changed, outputs)

    def threshold(self, rounds=100):
        """How much longer the host clock sees an empty call than its events do, at most
        (the 98th percentile over `rounds`, plus 2 us): beyond it, a call's work ran outside its stream."""
        gaps = []
        for _ in range(rounds):
            self.synchronize()
            t0 = _perf()
            self.start.record(self.stream)
            self.end.record(self.stream)
            self.synchronize()
            wall = _perf() - t0
            gaps.append(wall - self.start.elapsed_time(self.end) / 1e3)
        gaps.sort()
        return gaps[int(0.98 * (len(gaps) - 1))] + 2e-6

    def reference(self, fn, seed):
        """The reference's outputs (float64, CPU) for the inputs drawn from `seed`."""
        torch = self.torch
        self.draw(seed, self.redrawn)
        inputs = [x.to(device="cpu", dtype=torch.float64) for x in self.redrawn]
        outputs = [torch.full([int(d) for d in t["dims"]], math.nan, dtype=torch.float64) for t in self.task["outputs"]]
        fn(*inputs, *outputs)
        return outputs

    def judge(self, reference_fn, call, worst):
        """None when `call`'s outputs match the reference within the tolerance (updating
        `worst`, the {rel_l2, max_abs} so far); else the wrong answer's message."""
        torch = self.torch
        for t, out, ref in zip(self.task["outputs"], call.outputs, self.reference(reference_fn, call.seed)):
            out = out.to(device="cpu", dtype=torch.float64)
            bad = int((~torch.isfinite(out)).sum().item())
            if bad:
                return "output '%s': %d of %d values are not finite" % (t["name"], bad, out.numel())
            diff = out - ref
            num = float((diff * diff).sum().item())
            den = float((ref * ref).sum().item())
            err = math.sqrt(num / den) if den > 0 else math.sqrt(num)
            worst["rel_l2"] = max(worst["rel_l2"], err)
            if diff.numel():
                worst["max_abs"] = max(worst["max_abs"], float(diff.abs().max().item()))
            if not err <= self.task["tolerance"]:
                return "output '%s': relative L2 error %.3g exceeds %.3g" % (t["name"], err, self.task["tolerance"])
        return None


def sample(call, threshold):
    """The seconds a call counts: its events' time, or the host's when the device was busy beyond its stream."""
    if call.event_s <= 0 or call.wall_s - call.event_s > threshold:
        return call.wall_s
    return call.event_s
