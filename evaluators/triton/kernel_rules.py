"""The static rules a Triton kernel module must follow, checked on its source
before anything of it runs (and before torch or triton is imported, so that
the check works on any machine).

A kernel module may import `triton`, `triton.language` (and what lies below
it, such as `triton.language.extra.libdevice`), `torch` and `math`. Of torch
it may use what a launcher needs: dtypes, allocation, streams, events and
graphs (ALLOWED_TORCH, ALLOWED_TORCH_CUDA); torch's own compute (matmul, the
nn functions, cuBLAS) and its private or native parts are not a Triton
kernel. It may not assign to a module's attributes (which would patch the
clock or the synchronization the evaluator uses), reach dunder attributes, or
call the builtins that load or run other code.

This is a filter against the obvious, not a sandbox: the kernel runs in the
evaluator's worker process (README.md says what that leaves open).
"""

import ast

ALLOWED_MODULES = ("math", "torch", "triton", "triton.language")

# torch.NAME a kernel may use: what a host function needs to launch Triton kernels.
ALLOWED_TORCH = frozenset({
    "Size", "Tensor", "bfloat16", "bool", "cdouble", "cfloat", "cuda", "device", "double", "dtype", "empty",
    "empty_like", "empty_strided", "finfo", "float", "float16", "float32", "float64", "half", "iinfo", "int",
    "int16", "int32", "int64", "int8", "long", "uint8", "zeros", "zeros_like", "full", "full_like", "ones",
    "ones_like", "arange",
})
# torch.cuda.NAME a kernel may use.
ALLOWED_TORCH_CUDA = frozenset({
    "CUDAGraph", "Event", "Stream", "current_device", "current_stream", "default_stream", "device",
    "get_device_capability", "get_device_properties", "graph", "set_stream", "stream", "synchronize",
})
# Builtins that load, run or reach code the check cannot see.
FORBIDDEN_NAMES = frozenset({
    "__builtins__", "__import__", "__loader__", "__spec__", "breakpoint", "compile", "delattr", "eval", "exec",
    "exit", "getattr", "globals", "input", "locals", "open", "quit", "setattr", "vars",
})


class Refusal(Exception):
    """The source breaks a rule: `status` is forbidden or compile_error, `message` says which."""

    def __init__(self, status, message, line=None):
        super().__init__(message)
        self.status = status
        self.message = message if line is None else "line %d: %s" % (line, message)


def module_allowed(name):
    return name in ALLOWED_MODULES or name.startswith("triton.language.")


class _Checker(ast.NodeVisitor):
    def __init__(self):
        # Local names bound to modules: alias -> the module's full name.
        self.modules = {}
        self.parents = {}

    def refuse(self, node, message):
        raise Refusal("forbidden", message, getattr(node, "lineno", None))

    def check(self, tree):
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        # Imports first, wherever they are, so that aliases are known to every use.
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self.imports(node)
            elif isinstance(node, ast.ImportFrom):
                self.imports_from(node)
        self.visit(tree)

    def imports(self, node):
        for alias in node.names:
            if not module_allowed(alias.name):
                self.refuse(node, "imports '%s' (allowed: %s)" % (alias.name, allowed_text()))
            if alias.asname:
                self.modules[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.modules[top] = top

    def imports_from(self, node):
        module = node.module or ""
        if node.level or not module_allowed(module):
            self.refuse(node, "imports from '%s' (allowed: %s)" % ("." * node.level + module, allowed_text()))
        for alias in node.names:
            if alias.name == "*":
                self.refuse(node, "imports * from '%s' (name what it uses)" % module)
            full = module + "." + alias.name
            if module == "torch" and alias.name not in ALLOWED_TORCH:
                self.refuse(node, "imports torch.%s (%s)" % (alias.name, torch_rule()))
            # `from torch import cuda` binds a module; `from triton.language import extra` too.
            if full == "torch.cuda" or full == "triton.language" or full.startswith("triton.language."):
                self.modules[alias.asname or alias.name] = full

    def visit_Name(self, node):
        if node.id in FORBIDDEN_NAMES:
            self.refuse(node, "uses '%s' (not allowed in a kernel module)" % node.id)
        module = self.modules.get(node.id)
        if module in ("torch", "torch.cuda") and not isinstance(self.parents.get(node), ast.Attribute):
            self.refuse(node, "uses the module %s other than as %s.NAME (%s)" % (module, module, torch_rule()))
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr.startswith("__") and node.attr.endswith("__") and node.attr != "__init__":
            self.refuse(node, "reaches the attribute '%s'" % node.attr)
        root = self.modules.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if root == "torch":
            if node.attr not in ALLOWED_TORCH:
                self.refuse(node, "uses torch.%s (%s)" % (node.attr, torch_rule()))
            if node.attr == "cuda":
                parent = self.parents.get(node)
                if not isinstance(parent, ast.Attribute) or parent.attr not in ALLOWED_TORCH_CUDA:
                    what = parent.attr if isinstance(parent, ast.Attribute) else "cuda used as a value"
                    self.refuse(node, "uses torch.cuda.%s (%s)" % (what, torch_rule()))
        elif root == "torch.cuda" and node.attr not in ALLOWED_TORCH_CUDA:
            self.refuse(node, "uses torch.cuda.%s (%s)" % (node.attr, torch_rule()))
        self.generic_visit(node)

    def assigned(self, target):
        # An attribute (or an item of one) rooted at a module: the module is being patched.
        while isinstance(target, (ast.Attribute, ast.Subscript)):
            target = target.value
            if isinstance(target, ast.Name) and target.id in self.modules:
                return self.modules[target.id]
        return None

    def visit_targets(self, node, targets):
        for target in targets:
            for part in ast.walk(target):
                module = self.assigned(part) if isinstance(part, (ast.Attribute, ast.Subscript)) else None
                if module:
                    self.refuse(node, "assigns to an attribute of the module %s" % module)

    def visit_Assign(self, node):
        self.visit_targets(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.visit_targets(node, [node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self.visit_targets(node, [node.target])
        self.generic_visit(node)

    def visit_Delete(self, node):
        self.visit_targets(node, node.targets)
        self.generic_visit(node)


def allowed_text():
    return "triton, triton.language and below it, torch, math"


def torch_rule():
    return "torch is for allocating and launching: dtypes, empty/zeros/full, streams and events; compute in Triton"


def check_source(source, path):
    """Parses and checks a kernel module; returns its tree, or raises Refusal."""
    try:
        tree = ast.parse(source, path)
    except SyntaxError as e:
        raise Refusal("compile_error", "%s:%s: %s" % (path, e.lineno, e.msg))
    except ValueError as e:  # a NUL byte in the source
        raise Refusal("compile_error", "%s: %s" % (path, e))
    _Checker().check(tree)
    if not any(isinstance(n, ast.FunctionDef) and n.name == "kernel" for n in tree.body):
        raise Refusal("compile_error", "no function `kernel` is defined at the top level of the module")
    return tree
