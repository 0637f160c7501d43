"""A task folder's task.yaml read and bound to one shape, for the scripts in bench/.

The engine's own reader (src/suite/task.cc) validates every task when it loads;
this module reads what bench/gpu_anchors.py needs and checks that much: the
shape's parameters, each tensor's dimensions, element type and distribution,
and the roofline, every expression evaluated as the engine does
(docs/task-format.md): literals, names, + - * / % ^, parentheses, unary minus
and min, max, ceil, floor, sqrt, log2, in double precision. Nothing is
evaluated with eval().

task.yaml is read with PyYAML where it is installed and otherwise with a small
reader of the subset the suite uses (block mappings and sequences, one-line
flow mappings and sequences, plain and quoted scalars, comments), which
refuses anything else by name and line: a GPU machine with PyTorch but no
PyYAML can still run the benchmark.
"""

import math
import re
from dataclasses import dataclass, field
from pathlib import Path


class TaskError(Exception):
    """A task that cannot be read or bound; the message names the file and the field."""


# ---------------------------------------------------------------- expressions

MAX_EXPRESSION_LENGTH = 4096
MAX_DEPTH = 100
FUNCTIONS = {
    "min": (2, min),
    "max": (2, max),
    "ceil": (1, math.ceil),
    "floor": (1, math.floor),
    "sqrt": (1, math.sqrt),
    "log2": (1, math.log2),
}
_NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Parser:
    """Recursive descent over the engine's grammar (src/suite/expr.cc), evaluating as it goes:
    sum := product (('+'|'-') product)*; product := unary (('*'|'/'|'%') unary)*;
    unary := '-' unary | '+' unary | power; power := atom ('^' unary)?;
    atom := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'."""

    def __init__(self, text, names):
        self.text, self.names, self.pos, self.depth = text, names, 0, 0

    def fail(self, what):
        raise TaskError(f"in expression '{self.text}' at character {self.pos + 1}: {what}")

    def skip_space(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def accept(self, c):
        self.skip_space()
        if self.text.startswith(c, self.pos):
            self.pos += 1
            return True
        return False

    def whole(self):
        value = self.sum()
        self.skip_space()
        if self.pos != len(self.text):
            self.fail(f"unexpected '{self.text[self.pos]}'")
        return value

    def sum(self):
        value = self.product()
        while True:
            if self.accept("+"):
                value += self.product()
            elif self.accept("-"):
                value -= self.product()
            else:
                return value

    def product(self):
        value = self.unary()
        while True:
            if self.accept("*"):
                value *= self.unary()
            elif self.accept("/") or self.accept("%"):
                op = self.text[self.pos - 1]
                right = self.unary()
                if right == 0:
                    raise TaskError(f"in expression '{self.text}': division by zero")
                value = value / right if op == "/" else math.fmod(value, right)
            else:
                return value

    def unary(self):
        if self.depth >= MAX_DEPTH:
            self.fail(f"nested more than {MAX_DEPTH} levels deep")
        self.depth += 1
        if self.accept("-"):
            value = -self.unary()
        elif self.accept("+"):
            value = self.unary()
        else:
            value = self.atom()
            if self.accept("^"):
                value = math.pow(value, self.unary())
        self.depth -= 1
        return value

    def atom(self):
        self.skip_space()
        if self.pos >= len(self.text):
            self.fail("expected a number, a name or '(' but the expression ended")
        if self.accept("("):
            value = self.sum()
            if not self.accept(")"):
                self.fail("expected ')'")
            return value
        number = _NUMBER.match(self.text, self.pos)
        if number:
            self.pos = number.end()
            return float(number.group(0))
        name = _NAME.match(self.text, self.pos)
        if not name:
            self.fail(f"expected a number, a name or '(' but found '{self.text[self.pos]}'")
        self.pos = name.end()
        if not self.accept("("):
            if name.group(0) not in self.names:
                raise TaskError(f"in expression '{self.text}': unknown name '{name.group(0)}'")
            return float(self.names[name.group(0)])
        if name.group(0) not in FUNCTIONS:
            self.fail(f"unknown function '{name.group(0)}'")
        arity, function = FUNCTIONS[name.group(0)]
        args = [self.sum()]
        while self.accept(","):
            args.append(self.sum())
        if not self.accept(")"):
            self.fail(f"expected ',' or ')' in call to {name.group(0)}")
        if len(args) != arity:
            self.fail(f"{name.group(0)} takes {arity} argument(s), got {len(args)}")
        return float(function(*args))


def evaluate(expression, names):
    """The value of `expression` (text or a number) with `names` bound, as a float."""
    if isinstance(expression, bool):
        raise TaskError(f"expected an expression, got {expression}")
    if isinstance(expression, (int, float)):
        return float(expression)
    text = str(expression)
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise TaskError(f"expression is {len(text)} characters long; at most {MAX_EXPRESSION_LENGTH}")
    return _Parser(text, names).whole()


# ---------------------------------------------------------------- task.yaml

_INT = re.compile(r"[-+]?\d+$")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _scalar(text, where):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text[:1] in "'\"|>&*!%@`":
        raise TaskError(f"{where}: this reader does not handle '{text[:1]}' (install PyYAML)")
    if text in ("", "~", "null"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def _flow(text, pos, where):
    """Parses a flow mapping or sequence starting at text[pos]; returns (value, end)."""
    closing = "}" if text[pos] == "{" else "]"
    items, pos = ({} if closing == "}" else []), pos + 1
    while True:
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos < len(text) and text[pos] == closing:
            return items, pos + 1
        key = None
        if closing == "}":
            colon = text.find(":", pos)
            if colon < 0:
                raise TaskError(f"{where}: expected 'key: value' in '{text}'")
            key, pos = text[pos:colon].strip(), colon + 1
            while pos < len(text) and text[pos] == " ":
                pos += 1
        if pos < len(text) and text[pos] in "{[":
            value, pos = _flow(text, pos, where)
        else:
            end = pos
            while end < len(text) and text[end] not in ",]}":
                end += 1
            value, pos = _scalar(text[pos:end], where), end
        if key is None:
            items.append(value)
        elif key in items:
            raise TaskError(f"{where}: key '{key}' given twice")
        else:
            items[key] = value
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos >= len(text) or text[pos] != closing:
            raise TaskError(f"{where}: unterminated '{text}'")


def _inline(text, where):
    if text[:1] in "{[":
        value, end = _flow(text, 0, where)
        if text[end:].strip():
            raise TaskError(f"{where}: unexpected '{text[end:].strip()}' after '{text[:end]}'")
        return value
    return _scalar(text, where)


def _strip_comment(line):
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"" and (i == 0 or line[i - 1] in " [{,:"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def read_yaml_subset(text, path="task.yaml"):
    """The subset of YAML the suite's task.yaml files use; anything else is a TaskError."""
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise TaskError(f"{path}:{number}: tab in indentation")
        content = _strip_comment(raw)
        if content.strip() and content.strip() not in ("---", "..."):
            lines.append((len(content) - len(content.lstrip(" ")), content.strip(), number))

    def block(i, indent):
        if lines[i][1].startswith("- ") or lines[i][1] == "-":
            return sequence(i, indent)
        return mapping(i, indent)

    def value_after(i, rest, indent, where):
        # The value of a "key:" or "- " whose text on the line is `rest`.
        if rest:
            return _inline(rest, where), i + 1
        if i + 1 < len(lines) and (lines[i + 1][0] > indent or
                                   (lines[i + 1][0] == indent and lines[i + 1][1].startswith("-"))):
            return block(i + 1, lines[i + 1][0])
        return None, i + 1

    def mapping(i, indent):
        out = {}
        while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
            _, content, number = lines[i]
            where = f"{path}:{number}"
            match = re.match(r"([^\s:'\"{}\[\],#][^:]*?):(\s+|$)", content)
            if not match:
                raise TaskError(f"{where}: expected 'key: value', got '{content}'")
            key = match.group(1)
            if key in out:
                raise TaskError(f"{where}: key '{key}' given twice")
            out[key], i = value_after(i, content[match.end():].strip(), indent, where)
        return _end(i, indent, out)

    def sequence(i, indent):
        out = []
        while i < len(lines) and lines[i][0] == indent and (lines[i][1].startswith("- ") or lines[i][1] == "-"):
            _, content, number = lines[i]
            rest = content[1:].lstrip()
            if re.match(r"[^\s:'\"{}\[\],#][^:]*?:(\s|$)", rest):
                # "- key: value" opens a mapping whose keys line up with `key`.
                lines[i] = (indent + len(content) - len(rest), rest, number)
                item, i = mapping(i, lines[i][0])
            else:
                item, i = value_after(i, rest, indent, f"{path}:{number}")
            out.append(item)
        return _end(i, indent, out)

    def _end(i, indent, value):
        if i < len(lines) and lines[i][0] > indent:
            raise TaskError(f"{path}:{lines[i][2]}: unexpected indentation")
        return value, i

    if not lines:
        return None
    value, i = block(0, lines[0][0])
    if i < len(lines):
        raise TaskError(f"{path}:{lines[i][2]}: unexpected '{lines[i][1]}'")
    return value


def read_yaml(path, prefer_pyyaml=True):
    """task.yaml as Python values: with PyYAML when it is installed, else with read_yaml_subset."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise TaskError(f"cannot read {path}: {e.strerror}") from None
    if prefer_pyyaml:
        try:
            import yaml
        except ImportError:
            yaml = None
        if yaml is not None:
            try:
                return yaml.safe_load(text)
            except yaml.YAMLError as e:
                raise TaskError(f"{path}: {e}") from None
    return read_yaml_subset(text, str(path))


# ---------------------------------------------------------------- binding

DTYPES = ("float32", "bf16", "int32")
DTYPE_BYTES = {"float32": 4, "bf16": 2, "int32": 4}
C_TYPES = {"float32": "float", "bf16": "__nv_bfloat16", "int32": "int"}


@dataclass
class Tensor:
    """One kernel argument at the bound shape."""
    name: str
    dims: list  # of ints; empty for a scalar (one element)
    dtype: str  # float32, bf16 or int32
    dist: dict = field(default_factory=dict)  # inputs only: kind and its parameters, expressions evaluated

    @property
    def elements(self):
        return math.prod(self.dims)


@dataclass
class BoundTask:
    """A task at one shape."""
    name: str
    folder: Path
    shape: str
    params: dict  # name -> int
    constants: dict  # name -> float
    inputs: list
    outputs: list
    roofline: dict  # flops_mm, flops_vec, min_bytes
    tolerance: float
    family: str = ""
    fib_definition: str = ""

    def shape_header(self):
        """shape.h as the engine writes it (BoundTask::ShapeHeader): every parameter a
        `constexpr long`, every constant a `constexpr double`, names in sorted order."""
        out = [f"// Generated by bench/gpu_anchors.py: task '{self.name}', shape '{self.shape}'.", "#pragma once"]
        out += [f"constexpr long {k} = {v};" for k, v in sorted(self.params.items())]
        out += [f"constexpr double {k} = {v:.17g};" for k, v in sorted(self.constants.items())]
        return "\n".join(out) + "\n"


def _number_map(node, where):
    if not isinstance(node, dict):
        raise TaskError(f"{where}: expected a mapping of names to numbers")
    out = {}
    for key, value in node.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TaskError(f"{where}.{key}: expected a number, got '{value}'")
        out[str(key)] = float(value)
    return out


def _integer(expression, names, where, least=0):
    value = evaluate(expression, names)
    if value != math.floor(value) or value < least:
        raise TaskError(f"{where}: '{expression}' must be an integer of at least {least}, got {value:g}")
    return int(value)


def _bind_tensor(node, names, where, is_input):
    if not isinstance(node, dict) or "name" not in node:
        raise TaskError(f"{where}: expected a tensor with a name")
    where = f"{where} '{node['name']}'"
    dtype = node.get("dtype", "float32")
    if dtype not in DTYPES:
        raise TaskError(f"{where}: dtype '{dtype}': expected float32, bf16 or int32")
    shape = node.get("shape")
    if not isinstance(shape, list):
        raise TaskError(f"{where}: shape: expected a list of expressions")
    dims = [_integer(d, names, f"{where}, shape", least=1) for d in shape]
    dist = {}
    if is_input:
        raw = node.get("dist", {"kind": "normal", "mean": 0, "std": 1})
        kind = raw.get("kind") if isinstance(raw, dict) else None
        if kind == "normal":
            dist = {"kind": kind, "mean": float(raw.get("mean", 0)), "std": float(raw.get("std", 1))}
        elif kind == "uniform":
            dist = {"kind": kind, "low": float(raw.get("low", 0)), "high": float(raw.get("high", 1))}
        elif kind == "constant":
            dist = {"kind": kind, "value": float(raw["value"])}
        elif kind == "indptr":
            dist = {"kind": kind, "total": _integer(raw["total"], names, f"{where}, dist.total"),
                    "least": _integer(raw["least"], names, f"{where}, dist.least"),
                    "spread": float(raw.get("spread", 0))}
            parts = math.prod(dims) - 1
            if len(dims) != 1 or parts < 1 or dist["total"] < parts * dist["least"]:
                raise TaskError(f"{where}: {parts} segments of at least {dist['least']} do not fit in {dist['total']}")
        elif kind == "pages":
            dist = {"kind": kind, "pages": _integer(raw["pages"], names, f"{where}, dist.pages")}
            if len(dims) != 1 or dims[0] > dist["pages"]:
                raise TaskError(f"{where}: {dims} distinct page ids cannot be drawn from {dist['pages']} pages")
        else:
            raise TaskError(f"{where}: dist: expected kind normal, uniform, constant, indptr or pages, got {raw}")
        if (dtype == "int32") != (kind in ("indptr", "pages")):
            raise TaskError(f"{where}: an int32 input is drawn as indptr or pages, and only an int32 one")
    return Tensor(str(node["name"]), dims, dtype, dist)


def load_task(folder, shape="bench", prefer_pyyaml=True):
    """The task in `folder` bound to `shape`; a TaskError names what is wrong."""
    folder = Path(folder)
    path = folder / "task.yaml"
    doc = read_yaml(path, prefer_pyyaml)
    if not isinstance(doc, dict):
        raise TaskError(f"{path}: expected a mapping at the top")
    if doc.get("kind", "kernel") != "kernel":
        raise TaskError(f"{path}: a task of kind '{doc.get('kind')}' has no kernels to benchmark")
    shapes = doc.get("shapes") or {}
    if shape not in shapes:
        raise TaskError(f"{path}: no shape '{shape}' (it has {', '.join(shapes) or 'none'})")
    params = _number_map(shapes[shape], f"{path}: shapes.{shape}")
    constants = _number_map(doc.get("constants") or {}, f"{path}: constants")
    names = {**params, **constants}
    for key, value in params.items():
        if value != math.floor(value):
            raise TaskError(f"{path}: shapes.{shape}.{key}: expected an integer, got {value:g}")
    inputs = [_bind_tensor(t, names, f"{path}: input", True) for t in doc.get("inputs") or []]
    outputs = [_bind_tensor(t, names, f"{path}: output", False) for t in doc.get("outputs") or []]
    if not inputs or not outputs:
        raise TaskError(f"{path}: a kernel task needs inputs and outputs")
    roofline = {}
    for key in ("flops_mm", "flops_vec", "min_bytes"):
        expression = (doc.get("roofline") or {}).get(key)
        if expression is None:
            raise TaskError(f"{path}: missing field 'roofline.{key}'")
        roofline[key] = evaluate(expression, names)
    return BoundTask(name=str(doc.get("name", folder.name)), folder=folder, shape=shape,
                     params={k: int(v) for k, v in params.items()}, constants=constants, inputs=inputs,
                     outputs=outputs, roofline=roofline, tolerance=float(doc.get("tolerance", 2e-5)),
                     family=str(doc.get("family", "")), fib_definition=str(doc.get("fib_definition", "")))
