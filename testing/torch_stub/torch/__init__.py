"""A pure-Python stand-in for the few parts of torch that the Triton
adapter's harness (evaluators/triton/harness.py) uses, so that its logic
(fresh inputs, poisoned outputs, checked calls, changed inputs, pairs) is
tested on machines without torch or a GPU. Tensors are flat lists of
floats, rounded to float32 where their dtype says so; the "device" is the
host; CUDA events read the host clock. Tests only: nothing here is torch's
behaviour beyond what the harness relies on."""

import math
import random
import struct
import time

__version__ = "stub"
float32, float64, uint8 = "float32", "float64", "uint8"


class version:
    cuda = "stub"


class device:
    def __init__(self, kind, index=0):
        self.kind, self.index = kind, index


def _count(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def _f32(v):
    return struct.unpack("f", struct.pack("f", v))[0] if math.isfinite(v) else v


class Tensor:
    def __init__(self, data, dims, dtype=float32):
        self.dims, self.dtype = list(dims), dtype
        self.data = [_f32(v) for v in data] if dtype == float32 else list(data)

    def _like(self, data):
        return Tensor(data, self.dims, self.dtype)

    def _with(self, other, f):
        values = other.data if isinstance(other, Tensor) else [other] * len(self.data)
        return self._like([f(a, b) for a, b in zip(self.data, values)])

    def uniform_(self, low, high, generator=None):
        self.__init__([generator.rng.uniform(low, high) for _ in self.data], self.dims, self.dtype)
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        self.__init__([generator.rng.gauss(mean, std) for _ in self.data], self.dims, self.dtype)
        return self

    def fill_(self, value):
        self.__init__([float(value)] * len(self.data), self.dims, self.dtype)
        return self

    def copy_(self, other):
        self.__init__(other.data, self.dims, self.dtype)
        return self

    def clone(self):
        return self._like(self.data)

    def to(self, device=None, dtype=None):
        return Tensor(self.data, self.dims, dtype or self.dtype)

    def numel(self):
        return len(self.data)

    def __add__(self, other):
        return self._with(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._with(other, lambda a, b: a - b)

    def __mul__(self, other):
        return self._with(other, lambda a, b: a * b)

    def __truediv__(self, other):
        return self._with(other, lambda a, b: a / b)

    def __neg__(self):
        return self._like([-a for a in self.data])

    def __invert__(self):
        return self._like([not a for a in self.data])

    def exp(self):
        return self._like([math.exp(min(a, 700.0)) for a in self.data])

    def abs(self):
        return self._like([abs(a) for a in self.data])

    def sum(self):
        return Tensor([sum(self.data)], [], float64)

    def max(self):
        return Tensor([max(self.data)], [], float64)

    def item(self):
        return self.data[0]


def empty(dims, dtype=float32, device=None):
    dims = [dims] if isinstance(dims, int) else dims
    return Tensor([0.0] * (16 if dtype == uint8 else _count(dims)), dims, dtype)


def full(dims, value, dtype=float32):
    return Tensor([value] * _count(dims), dims, dtype)


def exp(t):
    return t.exp()


def isfinite(t):
    return Tensor([math.isfinite(a) for a in t.data], t.dims, float64)


def equal(a, b):
    return a.data == b.data


class Generator:
    def __init__(self, device=None):
        self.rng = random.Random()

    def manual_seed(self, seed):
        self.rng.seed(seed)
        return self


class _Properties:
    name, major, minor, multi_processor_count, total_memory, L2_cache_size = "stub", 9, 0, 4, 1 << 30, 16


_current_stream = ["main"]


class cuda:
    @staticmethod
    def is_available():
        return True

    @staticmethod
    def current_device():
        return 0

    @staticmethod
    def get_device_properties(index):
        return _Properties()

    @staticmethod
    def current_stream(device=None):
        return _current_stream[0]

    @staticmethod
    def set_stream(stream):
        _current_stream[0] = stream

    @staticmethod
    def synchronize():
        pass

    class Event:
        def __init__(self, enable_timing=False):
            self.at = None

        def record(self, stream=None):
            self.at = time.perf_counter()

        def elapsed_time(self, other):
            return (other.at - self.at) * 1e3
