"""AutoGraph: Python control flow on tensors inside tf.function, rewritten onto tf.cond and tf.while_loop.

A function is converted source to source when a tf.function traces it (and so are the user functions it calls):
this module parses its source, rewrites it (autograph_transform.py: `if`/`while`/`for` become calls of
`ag__.if_stmt` / `while_stmt` / `for_stmt`, `and`/`or`/`not` calls of `and_` / `or_` / `not_`, and `return`,
`break` and `continue` flags that guard the statements after them), compiles it and caches it. At run time each
construct looks at its condition (autograph_operators.py): a traced tensor gives tf.cond / tf.while_loop (so
jax.lax), a Python value gives plain Python, exactly as TF's AutoGraph does.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import pathlib
import textwrap
import threading
import types
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from . import autograph_operators as operators, caches, capture
from .autograph_transform import Converter

_LIBRARY_DIRS = tuple(str(pathlib.Path(m.__file__).parent) for m in (jax, np))  # tapejax's: added below
_SKIPPED_MODULES = ("tapejax", "jax", "jaxlib", "numpy", "optax", "tensorflow", "keras", "builtins", "functools",
                    "collections", "itertools", "math", "operator", "typing", "abc", "contextlib", "inspect")


_LIBRARY_DIRS += (str(pathlib.Path(__file__).parents[1]),)


def converted_call(fn: Any) -> Any:
    """`fn` converted when it is user code (a Python function or a bound method of one), else `fn` itself. A
    tf.function called while another is traced is inlined, converted as TF converts it."""
    if capture.current_trace() is not None and _is_tf_function(fn):
        return fn._inline()  # converted if that function converts, and its trace counted, as in TF
    return convert(fn) if _convertible(fn) else fn


def _is_tf_function(fn: Any) -> bool:
    # function.Function, known by its inlining method: function.py imports this module, not the reverse.
    return callable(getattr(type(fn), "_inline", None))


# -- conversion --------------------------------------------------------------------------------------------------

# (code, closure cells, globals) -> converted function. Keyed by ids: safe, because the converted function holds
# the very cells and globals, so no id is reused while its entry lives.
_CACHE = caches.Memo("converted functions (autograph.py)", 2048)
# Conversions run one at a time: CPython 3.11's AST constructor keeps its recursion depth in state shared by
# threads, so two threads building ASTs at once fail with "AST constructor recursion depth mismatch"
# (gh-106905); and a function is then converted once, not once per thread that meets it first.
_CONVERTING = threading.Lock()


def do_not_convert(func: Callable | None = None) -> Any:
    """Marks a function so AutoGraph leaves it as it is (`tf.autograph.experimental.do_not_convert`)."""
    def mark(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return f(*args, **kwargs)
        wrapper.__tapejax_do_not_convert__ = True  # type: ignore[attr-defined]
        return wrapper
    return mark if func is None else mark(func)


def is_user_code(fn: types.FunctionType) -> bool:
    """Whether a function is the user's, not tapejax's, JAX's, numpy's or the standard library's. The code
    object decides (not __module__, which functools.wraps copies from a wrapped user function)."""
    return (not fn.__code__.co_filename.startswith(_LIBRARY_DIRS)
            and (fn.__module__ or "").split(".")[0] not in _SKIPPED_MODULES)


def _convertible(fn: Any) -> bool:
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if not isinstance(target, types.FunctionType) or getattr(fn, "__tapejax_do_not_convert__", False):
        return False
    return is_user_code(target)


def convert(fn: Callable) -> Callable:
    """The converted function (cached); `fn` itself where its source cannot be converted."""
    if isinstance(fn, types.MethodType):
        converted = convert(fn.__func__)
        return types.MethodType(converted, fn.__self__) if converted is not fn.__func__ else fn
    if not _convertible(fn):
        return fn
    key = (fn.__code__, fn.__closure__ and tuple(id(c) for c in fn.__closure__), id(fn.__globals__))
    converted = _CACHE.get(key)
    if converted is None:
        with _CONVERTING:
            converted = _CACHE.get(key)
            if converted is None:
                try:
                    converted = _convert(fn)
                except (OSError, TypeError, SyntaxError, _Unsupported):
                    converted = fn  # no source (REPL, builtins) or a construct left to Python: run it as written
                _CACHE[key] = converted
    if converted is not fn and (converted.__defaults__ is not fn.__defaults__
                                or converted.__kwdefaults__ is not fn.__kwdefaults__):
        # the same code defined again with other defaults (a `def` in a loop): same conversion, its own defaults
        converted = types.FunctionType(converted.__code__, converted.__globals__, converted.__name__,
                                       fn.__defaults__, converted.__closure__)
        converted.__kwdefaults__ = fn.__kwdefaults__
        converted = functools.update_wrapper(converted, fn, updated=())
    return converted


def to_code(fn: Callable) -> str:
    """The converted source of `fn` (`tf.autograph.to_code`)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    fn = getattr(fn, "python_function", fn)
    with _CONVERTING:
        tree, _ = _converted_tree(fn)
    return ast.unparse(tree.body[0].body[0]) + "\n"


class _Unsupported(Exception):
    """A function AutoGraph does not convert (zero-argument super(), generators): run as written."""


def _converted_tree(fn: types.FunctionType) -> tuple[ast.Module, int]:
    node, first = _function_node(fn)
    if any(isinstance(n, ast.Name) and n.id == "super" for n in ast.walk(node)) or any(
            isinstance(n, ast.Yield | ast.YieldFrom | ast.Global | ast.Nonlocal | ast.Await) for n in ast.walk(node)):
        raise _Unsupported(fn)  # these depend on the function's own frame or scope: run it as written
    # Defaults and annotations would be evaluated where the converted function is defined, away from the names
    # they use: the converted function takes the original's defaults instead (see _convert).
    node.decorator_list, node.returns = [], None
    node.args.defaults, node.args.kw_defaults = [], [None] * len(node.args.kwonlyargs)
    for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]:
        if arg is not None:
            arg.annotation = None
    node = Converter(first - 1).visit_function(node)
    free = list(fn.__code__.co_freevars)
    factory = ast.FunctionDef(
        name="__tapejax_autograph_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg("ag__"), *[ast.arg(n) for n in free]], kwonlyargs=[],
                           kw_defaults=[], defaults=[]),
        body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[], returns=None,
        type_params=[])
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first - 1)
    return module, first


def _source_lines(fn: types.FunctionType) -> tuple[list[str], int]:
    """`inspect.getsourcelines(fn.__code__)`: the code's own source (never a `__wrapped__` one), from its first
    line. inspect finds a code object's module by resolving the path of every imported module (70 ms once TF
    and JAX are imported); the function's globals serve linecache as well (a loader's source for a zip)."""
    code = fn.__code__
    file = inspect.getsourcefile(code) or inspect.getfile(code)
    linecache.checkcache(file)
    lines = linecache.getlines(file, fn.__globals__)
    if not lines or code.co_firstlineno > len(lines):
        raise OSError("could not get source code")
    return inspect.getblock(lines[code.co_firstlineno - 1:]), code.co_firstlineno


def _function_node(fn: types.FunctionType) -> tuple[ast.FunctionDef, int]:
    """The `def` of `fn` parsed from its source, a lambda as a `def` returning its body; and its first line."""
    lines, first = _source_lines(fn)
    if fn.__name__ != "<lambda>":
        node = ast.parse(textwrap.dedent("".join(lines))).body[0]
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            raise _Unsupported(fn)
        return node, first
    # A lambda's source is the lines it sits on. An indented line parses inside an `if 1:`, which keeps the
    # columns, so the lambda is found by where its code's instructions are.
    indented = lines[0][:1].isspace()
    tree = ast.parse(("if 1:\n" if indented else "") + "".join(lines))
    shift = first - 1 - indented  # parsed line + shift = file line
    spots = {(ln, col) for ln, _, col, end in fn.__code__.co_positions()  # (RESUME has an empty span)
             if ln is not None and col is not None and end is not None and end > col}

    def holds(lam: ast.Lambda) -> bool:
        start = (lam.body.lineno + shift, lam.body.col_offset)
        end = (lam.body.end_lineno + shift, lam.body.end_col_offset)
        return bool(spots) and all(start <= spot < end for spot in spots)

    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and holds(n)]
    found = [n for n in found if not any(m is not n and holds(m) and m in list(ast.walk(n)) for m in found)]
    if len(found) != 1:
        raise _Unsupported(fn)  # not found, or lambdas nested on one line: left as written
    lam = found[0]
    node = ast.FunctionDef(name="ag__lambda", args=lam.args, body=[ast.Return(lam.body)], decorator_list=[],
                           returns=None, type_params=[])
    ast.copy_location(node, lam)
    ast.increment_lineno(node, -(lam.lineno - 1))  # its lines counted from `first`, as a def's are
    return node, lam.lineno + shift


def _convert(fn: types.FunctionType) -> Callable:
    module, _ = _converted_tree(fn)
    code = compile(module, inspect.getsourcefile(fn) or "<autograph>", "exec")
    namespace: dict[str, Any] = {}
    exec(code, fn.__globals__, namespace)  # noqa: S102 (the user's own function, rewritten)
    free = fn.__code__.co_freevars
    made = namespace["__tapejax_autograph_factory"](_AG, *[None] * len(free))
    # The converted function shares the original's closure cells, so it sees a name the enclosing scope rebinds
    # later (a closure over a loop's variable), as the original does.
    cells = dict(zip(free, fn.__closure__ or ()))
    own = dict(zip(made.__code__.co_freevars, made.__closure__ or ()))  # `ag__`, and the function's own name
    converted = types.FunctionType(made.__code__, made.__globals__, made.__name__, None,
                                   tuple(cells.get(n, own[n]) for n in made.__code__.co_freevars))
    if made.__name__ in own and made.__name__ not in cells:  # a recursive call is a call of the converted one
        own[made.__name__].cell_contents = converted
    converted.__defaults__, converted.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    converted.__tapejax_converted__ = True
    return functools.update_wrapper(converted, fn, updated=())


# `ag__` in converted code: the run-time operators, and converted_call, which lives here because it converts.
_AG = types.SimpleNamespace(
    Undefined=operators.Undefined, ld=operators.ld, is_undefined=operators.is_undefined, retval=operators.retval,
    if_stmt=operators.if_stmt, while_stmt=operators.while_stmt, for_stmt=operators.for_stmt,
    range_=operators.range_, and_=operators.and_, or_=operators.or_, not_=operators.not_,
    converted_call=converted_call)
