"""The symbol uses of one TF2 program, read syntactically (ast): the extraction half of the usage census.

Used by docs/census/build.py; needs TensorFlow installed, because it asks TF which names exist (to know where
a symbol path ends and whether TF 2.x has it at all). What is counted, per occurrence in the source:

* **`tf.*` paths.** Every maximal attribute chain or bare name that resolves, through the program's imports, to
  TensorFlow: `import tensorflow as tf`, `from tensorflow import keras`, `from tensorflow.keras import layers`,
  `import tensorflow.keras.backend as K`, `from tensorflow.keras.layers import Dense`... Standalone `keras` is read
  as `tf.keras` (TF 2.x ships Keras as `tf.keras`). The chain is cut after the first object that is not a module
  (`tf.float32.max` counts `tf.float32`), or after one attribute of a class (`tf.data.Dataset.range`).
* **Members of typed names** (`model.fit`, `tape.gradient`, `x.numpy()`). A name (or `self.attr`) is typed when
  every binding of it in the file is `name = <tf class>(...)`, `with <tf class>(...) as name`,
  `name = <instance of a user class that subclasses a tf class>(...)`, or `name = <tf function>(...)` for the
  functions of the math-like namespaces, which return a Tensor. Call results are typed the same way
  (`tf.reduce_sum(x).numpy()`), and `self.X` inside a class that subclasses a tf class is a member of that class.
  Scopes are not told apart: a name is typed file-wide, and function arguments and loop variables do not bind.
  A member counts only where TF's class has that attribute (so instance attributes set at run time are not seen).
* **Unmistakable Tensor/Variable methods** on untyped values: `.numpy()`, `.assign(...)`, `.assign_add`,
  `.assign_sub`, `.get_shape()`, `.set_shape`, `.read_value()`, `.scatter_*`... (names no numpy array, builtin
  container, Keras layer or model has; `assign*` are also Keras optimizer methods, rarely called in user code).

This is a heuristic: it misses members of values it cannot type (function arguments, list elements, attribute
chains through user objects), Python protocols (`f"{t:.2f}"`, `len(t)`, `t[0]`, arithmetic), and dynamic access
(`getattr(tf, name)`). It over-counts a distinctive method name called on a non-TF object.
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
from typing import Any

import tensorflow as tf

TENSOR_METHODS = {"numpy", "get_shape", "set_shape", "ref", "experimental_ref", "consumers", "value_index"}
VARIABLE_METHODS = {"assign", "assign_add", "assign_sub", "read_value", "sparse_read", "scatter_add",
                    "scatter_sub", "scatter_max", "scatter_min", "scatter_mul", "scatter_div", "scatter_update",
                    "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub", "batch_scatter_update",
                    "initialized_value", "count_up_to"}
# Namespaces whose functions return a Tensor, and the functions there that do not.
TENSOR_NAMESPACES = {"tf", "tf.math", "tf.nn", "tf.linalg", "tf.random", "tf.image", "tf.signal", "tf.strings",
                     "tf.dtypes", "tf.bitwise", "tf.io"}
NOT_TENSOR = {"tf.function", "tf.print", "tf.name_scope", "tf.device", "tf.control_dependencies", "tf.get_logger",
              "tf.init_scope", "tf.custom_gradient", "tf.recompute_grad", "tf.while_loop", "tf.cond",
              "tf.switch_case", "tf.unstack", "tf.split", "tf.meshgrid", "tf.unique", "tf.tuple", "tf.group",
              "tf.no_op", "tf.executing_eagerly", "tf.is_tensor", "tf.gradients", "tf.clip_by_global_norm",
              "tf.nn.moments", "tf.linalg.eigh", "tf.linalg.svd", "tf.linalg.qr", "tf.math.top_k", "tf.nn.top_k",
              "tf.linalg.lu", "tf.io.gfile", "tf.random.set_seed", "tf.random.get_global_generator",
              "tf.io.write_file", "tf.nn.ctc_beam_search_decoder", "tf.nn.ctc_greedy_decoder"}
TF1_MARKERS = ("tf.contrib", "tf.Session", "tf.placeholder", "tf.enable_eager_execution", "tf.InteractiveSession",
               "tf.train.AdamOptimizer", "tf.train.GradientDescentOptimizer", "tf.get_variable",
               "tf.global_variables_initializer")
_EAGER_TENSOR = type(tf.constant(0.0))
_ROOTS = {"tensorflow": "tf", "keras": "tf.keras"}


def _module_path(dotted: str) -> str | None:
    """`tensorflow.keras.layers` -> `tf.keras.layers`; None for non-TF modules."""
    root, _, rest = dotted.partition(".")
    if root not in _ROOTS:
        return None
    return _ROOTS[root] + ("." + rest if rest else "")


@functools.lru_cache(maxsize=None)
def _tf_object(path: str) -> tuple[bool, Any]:
    obj: Any = tf
    for part in path.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 (TF's lazy loaders raise assorted errors for absent names)
            return False, None
    return True, obj


@functools.lru_cache(maxsize=None)
def resolve(path: str) -> tuple[str, bool, Any]:
    """A used chain -> (the symbol it names, whether TF has it, TF's object or None)."""
    parts = path.split(".")
    obj: Any = tf
    for i in range(1, len(parts)):
        ok, nxt = _tf_object(".".join(parts[: i + 1]))
        if not ok:
            return ".".join(parts[: i + 1]), False, None
        obj = nxt
        if not isinstance(obj, types.ModuleType):
            if inspect.isclass(obj) and i + 1 < len(parts):
                member = ".".join(parts[: i + 2])
                has = hasattr(obj, parts[i + 1])
                return member, has, getattr(obj, parts[i + 1], None)
            return ".".join(parts[: i + 1]), True, obj
    return path, True, obj


def has_member(type_path: str, attr: str) -> bool:
    if type_path == "tf.Tensor":
        return hasattr(_EAGER_TENSOR, attr)
    if type_path == "tf.Variable":
        return hasattr(tf.Variable, attr) or hasattr(type(tf.Variable(0.0)), attr)
    _, ok, obj = resolve(type_path)
    return ok and inspect.isclass(obj) and hasattr(obj, attr)


def _returns_tensor(symbol: str, obj: Any) -> bool:
    namespace = symbol.rpartition(".")[0]
    return (namespace in TENSOR_NAMESPACES and symbol not in NOT_TENSOR and callable(obj)
            and not inspect.isclass(obj) and not symbol.startswith("tf.io.gfile"))


class _Program:
    """One program's module AST, read in three passes: imports, bindings, then uses."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.aliases: dict[str, str] = {}  # local name -> tf path
        self.user_classes: dict[str, str] = {}  # user class name -> its first tf base class
        self.types: dict[str, str | None] = {}  # binding key -> type path (None: ambiguous)
        self.uses: dict[str, int] = {}
        self.standalone_keras = False
        self._imports()
        self._classes()
        self._bindings()

    # pass 1: imports
    def _imports(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    path = _module_path(a.name)
                    if path is None:
                        continue
                    self.standalone_keras |= a.name.split(".")[0] == "keras"
                    if a.asname:
                        self.aliases[a.asname] = path
                    else:
                        root = a.name.split(".")[0]
                        self.aliases[root] = _ROOTS[root]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                base = _module_path(node.module)
                if base is None:
                    continue
                self.standalone_keras |= node.module.split(".")[0] == "keras"
                for a in node.names:
                    if a.name != "*":
                        self.aliases[a.asname or a.name] = f"{base}.{a.name}"

    def chain(self, node: ast.AST) -> str | None:
        """The tf path an expression names syntactically (`tf.nn.relu`, an alias), or None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def _classes(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    path = self.chain(b)
                    if path is None and isinstance(b, ast.Name):
                        path = self.user_classes.get(b.id)
                    if path is not None:
                        symbol, ok, obj = resolve(path)
                        if ok and inspect.isclass(obj):
                            self.user_classes[node.name] = symbol
                            break

    @staticmethod
    def key(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return "self." + node.attr
        return None

    def type_of(self, node: ast.AST) -> str | None:
        """The TF type of an expression's value where syntax shows it: a class path, `tf.Tensor`, `tf.Variable`."""
        key = self.key(node)
        if key is not None and key in self.types:
            return self.types[key]
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.user_classes:
            return self.user_classes[func.id]
        path = self.chain(func)
        if path is None:
            if isinstance(func, ast.Attribute) and self.type_of(func.value) == "tf.data.Dataset":
                return "tf.data.Dataset"
            return None
        symbol, ok, obj = resolve(path)
        if not ok:
            return None
        if symbol == "tf.Variable":
            return "tf.Variable"
        if inspect.isclass(obj):
            return symbol
        if symbol.startswith("tf.data.Dataset."):
            return "tf.data.Dataset"
        return "tf.Tensor" if _returns_tensor(symbol, obj) else None

    # pass 2: bindings
    def _bind(self, target: ast.AST, value_type: str | None) -> None:
        key = self.key(target)
        if key is None or key in self.aliases:
            return
        if key in self.types and self.types[key] != value_type:
            self.types[key] = None
        else:
            self.types[key] = value_type

    def _bindings(self) -> None:
        for _ in range(2):  # twice, so a name typed from another typed name settles
            self.types = {}
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign):
                    t = self.type_of(node.value)
                    for target in node.targets:
                        self._bind(target, t)
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    self._bind(node.target, self.type_of(node.value))
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    self._bind(node.optional_vars, self.type_of(node.context_expr))

    # pass 3: uses
    def count(self, symbol: str, valid: bool) -> None:
        self.uses[symbol] = self.uses.get(symbol, 0) + 1
        self.valid.setdefault(symbol, valid)

    def collect(self) -> tuple[dict[str, int], dict[str, bool]]:
        self.valid: dict[str, bool] = {}
        self._visit(self.tree, None)
        return self.uses, self.valid

    def _visit(self, node: ast.AST, tf_class: str | None) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(node, ast.ClassDef):
            tf_class = self.user_classes.get(node.name)
        path = self.chain(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
        if path is not None and isinstance(getattr(node, "ctx", None), ast.Load):
            symbol, ok, _ = resolve(path)
            self.count(symbol, ok)
            return
        if isinstance(node, ast.Attribute) and not node.attr.startswith("_"):
            owner = node.value
            t = tf_class if isinstance(owner, ast.Name) and owner.id == "self" and tf_class else None
            t = t or self.type_of(owner)
            if t is not None and has_member(t, node.attr):
                self.count(f"{t}.{node.attr}", True)
            elif t is None and self.chain(owner) is None:
                if node.attr in TENSOR_METHODS:
                    self.count(f"tf.Tensor.{node.attr}", True)
                elif node.attr in VARIABLE_METHODS:
                    self.count(f"tf.Variable.{node.attr}", True)
        for child in ast.iter_child_nodes(node):
            self._visit(child, tf_class)


def code_of_notebook(nb: dict) -> list[str]:
    """A notebook's code cells, without IPython's `!shell` and `%magic` lines."""
    cells = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        # A shell or magic line becomes `pass`, so a block holding only such lines still parses.
        lines = [ln[: len(ln) - len(ln.lstrip())] + "pass" if ln.lstrip().startswith(("!", "%")) else ln
                 for ln in src.splitlines()]
        cells.append("\n".join(lines))
    return cells


def code_of_markdown(text: str) -> list[str]:
    """The ```python blocks of a Markdown page."""
    cells, block = [], None
    for line in text.splitlines():
        if block is None and line.strip().startswith("```") and line.strip()[3:].strip() in ("python", "py"):
            block = []
        elif block is not None and line.strip().startswith("```"):
            cells.append("\n".join(block))
            block = None
        elif block is not None:
            block.append(line)
    return cells


def parse_cells(cells: list[str]) -> tuple[ast.Module, int]:
    """One module from the cells that parse (cells that do not, e.g. IPython-only syntax, are dropped)."""
    body, dropped = [], 0
    for src in cells:
        try:
            body.extend(ast.parse(src).body)
        except SyntaxError:
            dropped += 1
    return ast.Module(body=body, type_ignores=[]), dropped


def extract(tree: ast.Module) -> dict[str, Any]:
    program = _Program(tree)
    uses, valid = program.collect()
    return {"uses": uses, "in_tf": valid, "standalone_keras": program.standalone_keras,
            "tf1": any(s == m or s.startswith(m + ".") for s in uses for m in TF1_MARKERS)}
