"""The layering of the package: `_src` never imports the public layer (the `tf` namespace, its submodules, the op
tables, keras), modules import downwards only, and none is over 450 lines."""

from __future__ import annotations

import ast
import pathlib

import pytest

import tapejax

ROOT = pathlib.Path(tapejax.__file__).parent
SRC = "tapejax._src"
MAX_LINES = 450
# Each module may import only modules listed before it (DESIGN/STYLE layering, adapted: see docs/design.md).
ORDER = ["host_memory", "dtypes", "errors", "logs", "caches", "checking", "one_off", "string_values", "background", "xla_options", "tiers", "compilation_cache", "context", "tensor", "deferred", "convert",
         "tape", "variable", "pytrees", "static_values", "dispatch", "contracts", "zero_cotangent", "registry", "indexed_slices", "sparse_gradients", "lowering", "executables", "structure",
         "structured_jacobian", "transforms", "sweep", "problem", "repeated", "chunks", "debugging", "tape_arguments", "gradient_tape", "forward", "custom_gradient",
         "checkpoint_pending", "module", "capture", "control_flow", "tensor_array", "tensor_array_loops", "loops", "autograph_transform",
         "autograph_operators", "autograph", "signature", "spec_only", "concrete_function", "retrace_causes", "retracing", "reachable", "function", "pure_state", "pure_function",
         "compile_stats", "printing",
         "summary_writer", "summary_encoding", "summary_ops", "devices", "logical_devices", "host_callback",
         "cluster", "checkpoint_table", "checkpoint_bundle", "checkpoint_graph", "checkpoint_management", "checkpoint",
         "saved_model", "saved_model_load"]


def _runtime_nodes(tree: ast.AST):
    """Every node, at any depth (function bodies included: a lazy import is an import), except those under
    `if TYPE_CHECKING:` (imports for annotations only)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node)


def _resolve(name: str, level: int, package: str = SRC) -> str:
    """The absolute module name of `from <level dots><name> import ...` written in `package`."""
    if not level:
        return name
    base = package.split(".")
    base = base[:len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _dynamic_lookup(node: ast.AST) -> ast.expr | None:
    """The module-name argument of `importlib.import_module(x)`, `__import__(x)`, `sys.modules[x]` or
    `sys.modules.get(x)`; None for any other node."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules":
        return node.slice
    if isinstance(node, ast.Call) and node.args:
        func = ast.unparse(node.func)
        if func in ("importlib.import_module", "import_module", "__import__", "sys.modules.get"):
            return node.args[0]
    return None


def imported_modules(source: str) -> set[str]:
    """The absolute names of the modules a `_src` module's source imports or looks up at run time. A dynamic
    lookup by a name that is not a string constant is returned as `<dynamic: ...>`: the layering cannot be
    checked through it, so it is refused (import the module statically instead)."""
    names = set()
    for node in _runtime_nodes(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = _resolve(node.module or "", node.level)
            names.add(module)
            # `from pkg import name` may import the submodule pkg.name: counted as such (a name that is no module
            # gives a name that matches none, harmlessly)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        else:
            arg = _dynamic_lookup(node)
            if arg is None:
                continue
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                package = SRC
                if isinstance(node, ast.Call) and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    package = node.args[1].value  # importlib.import_module(name, package)
                level = len(arg.value) - len(arg.value.lstrip("."))
                names.add(_resolve(arg.value[level:], level, package))
            else:
                names.add(f"<dynamic: {ast.unparse(arg)}>")
    return names


def _public(name: str) -> bool:
    """Whether a module name is tapejax's public layer: the `tf` namespace itself, or any module of the package
    outside `_src` (tapejax.math, tapejax.nest, tapejax.ops, tapejax.keras, ...)."""
    return name == "tapejax" or (name.startswith("tapejax.") and not (name == SRC or name.startswith(SRC + ".")))


def _src_modules(names: set[str]) -> set[str]:
    """The `_src` modules among `names`, by their file name."""
    return {n[len(SRC) + 1:].split(".")[0] for n in names if n.startswith(SRC + ".")}


def _sources() -> list[pathlib.Path]:
    return sorted((ROOT / "_src").glob("*.py"))


def test_src_never_imports_the_public_layer():
    for path in _sources():
        refused = sorted(n for n in imported_modules(path.read_text()) if _public(n) or n.startswith("<dynamic"))
        assert not refused, f"_src/{path.name} imports {refused}: the public layer is built on _src, not under it"


@pytest.mark.parametrize("source, found", [
    ("from .. import nn", "tapejax.nn"),
    ("from ..ops import math", "tapejax.ops"),
    ("from ..keras.layers import Dense", "tapejax.keras.layers"),
    ("def f():\n    import tapejax\n    return tapejax", "tapejax"),
    ("class A:\n    def f(self):\n        from tapejax import nest", "tapejax.nest"),
    ("import tapejax.math as m", "tapejax.math"),
    ("import importlib\nm = importlib.import_module('tapejax.keras')", "tapejax.keras"),
    ("from importlib import import_module\nm = import_module('..ops', 'tapejax._src')", "tapejax.ops"),
    ("m = __import__('tapejax')", "tapejax"),
    ("import sys\nm = sys.modules['tapejax.nn']", "tapejax.nn"),
    ("import sys\nm = sys.modules.get('tapejax')", "tapejax"),
    ("import sys\nm = sys.modules[__name__]", "<dynamic: __name__>"),
])
def test_the_walker_finds_every_way_to_import(source, found):
    names = imported_modules(source)
    assert found in names and any(_public(n) or n.startswith("<dynamic") for n in names), names


@pytest.mark.parametrize("source", [
    "from . import tape",
    "from .tensor import Tensor",
    "from tapejax._src import tape",
    "from jax._src import config",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tapejax import nn",
])
def test_the_walker_allows_src_and_annotation_imports(source):
    assert not [n for n in imported_modules(source) if _public(n) or n.startswith("<dynamic")]


def test_src_modules_import_downwards_only():
    for i, module in enumerate(ORDER):
        path = ROOT / "_src" / f"{module}.py"
        allowed = set(ORDER[:i])
        imported = _src_modules(imported_modules(path.read_text()))
        assert imported <= allowed, f"{module} imports {sorted(imported - allowed)}, which come after it"


def test_every_src_module_is_in_the_order():
    modules = {p.stem for p in _sources()} - {"__init__"}
    assert modules <= set(ORDER) | {"typing"}, sorted(modules - set(ORDER))


def test_no_src_module_is_over_the_line_limit():
    long = {p.name: n for p in _sources() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by idea): {long}"
