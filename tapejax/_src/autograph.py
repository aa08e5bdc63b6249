"""AutoGraph: Python control flow on tensors inside tf.function, rewritten onto tf.cond and tf.while_loop.

A function is converted source to source when a tf.function traces it (and so are the user functions it calls):
`if`/`while`/`for` statements become calls of `if_stmt` / `while_stmt` / `for_stmt` below, with their bodies as
functions of the variables they assign; `and`/`or`/`not` become `and_` / `or_` / `not_`; `return`, `break` and
`continue` inside converted blocks become flags that guard the statements after them. At run time each construct
looks at its condition: a traced tensor gives tf.cond / tf.while_loop (so jax.lax), a Python value gives plain
Python, exactly as TF's AutoGraph does.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import itertools
import pathlib
import sys
import textwrap
import types
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import capture, control_flow, loops
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape
from .variable import Variable

_LIBRARY_DIRS = tuple(str(pathlib.Path(m.__file__).parent) for m in (jax, np))  # tapejax's: added below
_SKIPPED_MODULES = ("tapejax", "jax", "jaxlib", "numpy", "optax", "tensorflow", "keras", "builtins", "functools",
                    "collections", "itertools", "math", "operator", "typing", "abc", "contextlib", "inspect")


_LIBRARY_DIRS += (str(pathlib.Path(__file__).parents[1]),)


# -- run-time helpers (the `ag__` namespace of converted code) ------------------------------------------------


class Undefined:
    """The value of a variable that a converted block may leave unassigned."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


def ld(get: Callable[[], Any], name: str) -> Any:
    """The variable's current value, or Undefined if it has none yet."""
    try:
        return get()
    except NameError:
        return Undefined(name)


def _is_tensor(x: Any) -> bool:
    """Whether `x` is a graph tensor: inside a tf.function trace every tensor is one, as in TF, even a constant
    the trace has folded to a value (its `if` is a tf.cond, its loop a tf.while_loop)."""
    if isinstance(x, Variable):
        return capture.current_trace() is not None or isinstance(x._current(), jax.core.Tracer)
    return isinstance(x, Tensor) and (capture.current_trace() is not None or isinstance(x._value, jax.core.Tracer))


def _staged(x: Any) -> Any:
    """A graph tensor as a traced one (a condition: its value is never differentiated)."""
    value = x._value if isinstance(x, Tensor) else x.read_value()._value
    return x if isinstance(value, jax.core.Tracer) else EagerTensor(capture.symbolic(value))


def is_undefined(x: Any) -> bool:
    return isinstance(x, Undefined)


def retval(x: Any) -> Any:
    """What a function with returns in its control flow returns: None where no `return` ran."""
    return None if isinstance(x, Undefined) else x


def if_stmt(test: Any, body: Callable, orelse: Callable, values: tuple, names: tuple[str, ...], line: int) -> tuple:
    """`body(*values)` or `orelse(*values)`: a Python `if`, or tf.cond when `test` is a tensor."""
    if not _is_tensor(test):
        return body(*values) if test else orelse(*values)
    seen: dict[str, tuple[str, Any]] = {}  # name -> (branch, (dtype, shape)) of the branch captured first

    def branch(fn: Callable, which: str) -> Callable[[], tuple]:
        def run() -> tuple:
            out = fn(*values)
            for name, value in zip(names, out):
                if isinstance(value, Undefined) and name == "ag__retval":
                    raise ValueError(f"the {which} branch must also have a return statement (the `if` on line "
                                     f"{line}: its condition is a tensor, so both branches run as tf.cond).")
                if isinstance(value, Undefined):
                    raise ValueError(
                        f"'{name}' must also be initialized in the {which} branch of the `if` on line {line}: its "
                        "condition is a tensor, so both branches run as tf.cond and each must give "
                        f"'{name}' a value of the same dtype and shape.")
                _check_branch_output(name, value, which, seen, line)
            return out
        return run

    return tuple(control_flow.cond(_staged(test), branch(body, "main"), branch(orelse, "else")))


def _check_branch_output(name: str, value: Any, which: str, seen: dict, line: int) -> None:
    """TF's rule for a variable both branches of a tensor `if` assign: one dtype (and, for lax.cond, one
    shape); the first branch captured is remembered, the second compared with it."""
    if not isinstance(value, Tensor | Variable | bool | int | float | complex):
        return
    tensor = capture.as_tensor(value)
    aval = (tensor.dtype, tuple(tensor._value.shape))
    if name not in seen:
        seen[name] = (which, aval)
        return
    other, (dtype, shape) = seen[name]
    main, orelse = ((which, aval), (other, (dtype, shape))) if which == "main" else ((other, (dtype, shape)),
                                                                                     (which, aval))
    if main[1][0] != orelse[1][0]:
        raise TypeError(f"'{name}' has dtype {main[1][0].name} in the main branch, but dtype "
                        f"{orelse[1][0].name} in the else branch (the `if` on line {line}).")
    if main[1][1] != orelse[1][1]:
        raise ValueError(
            f"'{name}' has shape {TensorShape(main[1][1])} in the main branch, but shape "
            f"{TensorShape(orelse[1][1])} in the else branch (the `if` on line {line}). Differences from "
            "TensorFlow: tf.cond compiles to jax.lax.cond, whose branches must give one shape.")


_RETURN_IN_LOOP = ("a return statement cannot be placed inside this TensorFlow loop; this may happen if a return "
                   "statement depends on a static Python condition such as a hyperparameter")
_EXIT_IN_PYTHON_LOOP = ("break and return statements which depend on a TF condition are not supported in Python "
                        "for loops. Did you intend to make it a TF loop?\nSee "
                        "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/autograph/g3doc/"
                        "reference/limitations.md#consistency-of-control-flow-types for more info.")


def while_stmt(test: Callable, body: Callable, values: tuple, names: tuple[str, ...], line: int,
               bound: Any = None) -> tuple:
    """A Python `while` while its condition is a Python value; tf.while_loop from the first tensor condition
    on, at most `bound` iterations (a `for` over a range or a tensor knows its trip count).

    Differences from TensorFlow: a variable first assigned inside a tensor loop starts from zeros of the dtype
    and shape the body gives it; TF asserts at run time that the loop runs at least once.
    """
    first = test(*values)
    while not _is_tensor(first):  # a Python condition: a Python loop, as AutoGraph leaves it ...
        if not first:
            return values
        values = body(*values)
        first = test(*values)
    # ... until the condition is a tensor: from there on, tf.while_loop from the current values
    if "ag__do_return" in names:
        raise NotImplementedError(_RETURN_IN_LOOP)
    if any(isinstance(v, Undefined) for v in values):
        values = _seed_undefined(body, tuple(values), names, line)
    out = loops.while_loop(lambda *v: _staged(test(*v)), lambda *v: tuple(body(*v)), tuple(values),
                                  maximum_iterations=bound, _names=names, _line=line)
    return tuple(out)


def _seed_undefined(body: Callable, values: tuple, names: tuple[str, ...], line: int) -> tuple:
    """Loop variables the loop itself first assigns, started from zeros of what one iteration gives them (TF
    infers them from a trial iteration the same way)."""
    missing = [i for i, v in enumerate(values) if isinstance(v, Undefined)]

    def one_iteration() -> list:
        out = body(*values)
        for i in missing:
            if isinstance(out[i], Undefined):
                raise ValueError(f"'{names[i]}' must be defined before the loop on line {line}: its condition is a "
                                 "tensor, so the loop runs as tf.while_loop and carries each variable it assigns.")
        return [out[i] for i in missing]

    (trial,) = capture.capture_each([one_iteration], [], capture.current_trace())
    seeded = list(values)
    for i, (shape, dtype) in zip(missing, trial.out_avals):
        seeded[i] = EagerTensor(jnp.zeros(shape, dtype))
    return tuple(seeded)


class _Range:
    """`range(...)` / `tf.range(...)` with a tensor bound: iterated by a while_loop over its index."""

    def __init__(self, start: Any, limit: Any, delta: Any):
        self.start, self.limit, self.delta = start, limit, delta

    def length(self) -> int | None:
        """The number of iterations when no bound is traced (the loop's maximum_iterations), else None."""
        try:
            start, limit, delta = (int(np.asarray(getattr(a, "_value", a))) for a in (self.start, self.limit,
                                                                                      self.delta))
        except (jax.errors.ConcretizationTypeError, TypeError):
            return None
        return max(0, -(-(limit - start) // delta))


def range_(fn: Callable, *args: Any) -> Any:
    if any(_is_tensor(a) for a in args):
        start, limit, delta = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        return _Range(start, limit, delta)
    return fn(*args)


def for_stmt(iterable: Any, extra_test: Callable | None, body: Callable, values: tuple, names: tuple[str, ...],
             line: int) -> tuple:
    """`for` over a Python iterable: a Python loop. Over a tensor range or a tensor's rows: tf.while_loop over
    an index, bounded by the trip count; `extra_test` (a `break` or `return` flag) ends it early."""
    tf = _tapejax()
    more = (lambda *v: True) if extra_test is None else extra_test

    def both(a: Any, b: Any) -> Any:
        return a if b is True else OPERATORS["math.logical_and"](a, b)

    if isinstance(iterable, Variable):
        iterable = iterable.read_value()
    if isinstance(iterable, _Range) or (isinstance(iterable, Tensor) and _is_tensor(iterable)):
        if isinstance(iterable, _Range):
            limit, delta = iterable.limit, iterable.delta
            index = tf.cast(iterable.start, limit.dtype if isinstance(limit, Tensor | Variable) else tf.int32)
            negative = not isinstance(delta, Tensor | Variable) and delta < 0
            bound = iterable.length()
            item = lambda i: i  # noqa: E731
            inside = (lambda i: i > limit) if negative else (lambda i: i < limit)
        else:
            bound = iterable.shape[0]  # None under an input_signature's None dimension: no static trip count
            rows = tf.shape(iterable)[0] if bound is None else bound
            index, delta = tf.constant(0), 1
            item = lambda i: tf.gather(iterable, i)  # noqa: E731
            inside = lambda i: i < rows  # noqa: E731
        out = while_stmt(lambda i, *v: both(inside(i), more(*v)), lambda i, *v: (i + delta, *body(item(i), *v)),
                         (index, *values), ("<loop index>", *names), line, bound)
        return tuple(out[1:])
    for item in iterable:
        go = more(*values)
        if _is_tensor(go):
            raise NotImplementedError(_EXIT_IN_PYTHON_LOOP)
        if not go:
            break
        values = body(item, *values)
    return values


def _tapejax() -> Any:
    import tapejax  # noqa: PLC0415 (the public namespace is built on this module)
    return tapejax


def and_(a: Callable, b: Callable) -> Any:
    """`a() and b()`: on a tensor, `b` runs inside tf.cond only where `a()` is true, as TF's lazy `and`."""
    x = a()
    if _is_tensor(x):
        return control_flow.cond(_staged(x), lambda: _as_bool(b()), lambda: x)
    return x and b()


def or_(a: Callable, b: Callable) -> Any:
    """`a() or b()`: on a tensor, `b` runs inside tf.cond only where `a()` is false."""
    x = a()
    if _is_tensor(x):
        return control_flow.cond(_staged(x), lambda: x, lambda: _as_bool(b()))
    return x or b()


def _as_bool(x: Any) -> Any:
    return x if isinstance(x, Tensor | Variable) else bool(x)


def not_(x: Any) -> Any:
    return OPERATORS["math.logical_not"](x) if _is_tensor(x) else not x


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

_CACHE: dict[Any, Any] = {}
_counter = itertools.count()


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
    node = _Converter(first - 1).visit_function(node)
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


def _function_node(fn: types.FunctionType) -> tuple[ast.FunctionDef, int]:
    """The `def` of `fn` parsed from its source, a lambda as a `def` returning its body; and its first line."""
    lines, first = inspect.getsourcelines(fn.__code__)  # the code's own source, never a __wrapped__ one
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
    cells = [c.cell_contents for c in fn.__closure__ or ()]
    converted = namespace["__tapejax_autograph_factory"](sys.modules[__name__], *cells)
    converted.__defaults__, converted.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    converted.__tapejax_converted__ = True
    return functools.update_wrapper(converted, fn, updated=())


# -- the source transformation ---------------------------------------------------------------------------------


def _stores(nodes: Sequence[ast.AST]) -> list[str]:
    """Names a block assigns, in order (not inside nested functions or classes)."""
    names: dict[str, None] = {}
    for node in nodes:
        for n in _walk_local(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.setdefault(n.id)
            elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.setdefault(n.name)
    return list(names)


def _loads(nodes: Sequence[ast.AST]) -> set[str]:
    """Names a block reads; `x += 1` reads x too (its Name is a Store)."""
    return {n.id for node in nodes for n in _walk_local(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)} | {
        n.target.id for node in nodes for n in _walk_local(node)
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}


def _walk_local(node: ast.AST):
    """ast.walk that does not enter nested function or class bodies (their names are their own)."""
    yield node
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda) and not getattr(
            node, "_ag_root", False):
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_local(child)


def _loads_before_store(body: Sequence[ast.stmt]) -> set[str]:
    """Names a loop body reads before assigning them (values carried from the previous iteration)."""
    stored: set[str] = set()
    carried: set[str] = set()
    for stmt in body:
        carried |= _loads([stmt]) - stored
        stored |= set(_stores([stmt]))
    return carried


def _parse_stmts(text: str, **names: Any) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(text).format(**names)).body


def _tuple(names: Sequence[str], ctx: ast.expr_context) -> ast.Tuple:
    return ast.Tuple([ast.Name(n, ctx) for n in names], ctx)


def _ld_tuple(names: Sequence[str]) -> ast.Tuple:
    return ast.Tuple([ast.parse(f"ag__.ld(lambda: {n}, {n!r})", mode="eval").body for n in names], ast.Load())


def _func(name: str, params: Sequence[str], body: list[ast.stmt], returns: Sequence[str]) -> ast.FunctionDef:
    body = [*body, ast.Return(_tuple(returns, ast.Load()))]
    return ast.FunctionDef(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params],
                                                         kwonlyargs=[], kw_defaults=[], defaults=[]),
                           body=body, decorator_list=[], returns=None, type_params=[])


def _contains(nodes: Sequence[ast.AST], kinds: tuple[type, ...], loops: bool = True) -> bool:
    """Whether a block holds a statement of `kinds` (not in nested functions; not in nested loops if not
    `loops`: a break belongs to its innermost loop)."""
    for node in nodes:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, kinds):
                return True
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                continue
            if not loops and isinstance(n, ast.For | ast.While):
                continue
            stack.extend(ast.iter_child_nodes(n))
    return False


class _Converter:
    """Rewrites one function. Statement lists are processed in order, so a flag set by `return`/`break`/
    `continue` guards the statements after it."""

    def __init__(self, line_offset: int = 0):
        self.line_offset = line_offset  # the function's first line in its file: errors name file lines

    def line(self, stmt: ast.stmt) -> ast.Constant:
        return ast.Constant(stmt.lineno + self.line_offset)

    def visit_function(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node._ag_root = True  # type: ignore[attr-defined]
        body = node.body
        if _contains(body, (ast.Return,)) and _returns_nested(body):
            body = self._lower_returns(_early_returns_to_else(body))
        self.function_loads = _loads(body)
        node.body = self.block(body, set())
        return node

    # returns nested in control flow: `ag__retval` and a `ag__do_return` flag guarding what follows
    def _lower_returns(self, body: list[ast.stmt]) -> list[ast.stmt]:
        class Returns(ast.NodeTransformer):
            def visit_FunctionDef(self, n: ast.AST) -> ast.AST:
                return n

            visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

            def visit_Return(self, n: ast.Return) -> list[ast.stmt]:
                value = n.value or ast.Constant(None)
                return [ast.copy_location(ast.Assign([ast.Name("ag__retval", ast.Store())], value), n),
                        ast.copy_location(ast.Assign([ast.Name("ag__do_return", ast.Store())], ast.Constant(True)),
                                          n)]

        lowered: list[ast.stmt] = []
        for s in body:  # a statement may become two (a top-level return): NodeTransformer then gives a list
            out = Returns().visit(s)
            lowered.extend(out if isinstance(out, list) else [out])
        start = _parse_stmts("ag__do_return = False\nag__retval = ag__.Undefined('ag__retval')")
        return [*start, *_guard(lowered, "ag__do_return"), *_parse_stmts("return ag__.retval(ag__retval)")]

    def block(self, stmts: list[ast.stmt], live_after: set[str]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            later = live_after | _loads(stmts[i + 1:])
            out.extend(self.statement(stmt, later))
        return out

    def statement(self, stmt: ast.stmt, live_after: set[str]) -> list[ast.stmt]:
        if isinstance(stmt, ast.If):
            return self.convert_if(stmt, live_after)
        if isinstance(stmt, ast.While) and not stmt.orelse:
            return self.convert_while(stmt, live_after)
        if isinstance(stmt, ast.For) and not stmt.orelse:
            return self.convert_for(stmt, live_after)
        if isinstance(stmt, ast.FunctionDef):
            return [_Converter(self.line_offset).visit_function(stmt)]
        if isinstance(stmt, ast.With):  # `with tf.GradientTape() as tape:` blocks hold most control flow
            stmt.items = [_Expressions(self.line_offset).visit(item) for item in stmt.items]
            stmt.body = self.block(stmt.body, live_after)
            return [stmt]
        if isinstance(stmt, ast.Try):
            stmt.body = self.block(stmt.body, live_after)
            for handler in stmt.handlers:
                handler.body = self.block(handler.body, live_after)
            stmt.orelse = self.block(stmt.orelse, live_after)
            stmt.finalbody = self.block(stmt.finalbody, live_after)
            return [stmt]
        return [_Expressions(self.line_offset).visit(stmt)]

    def _assign(self, stmt: ast.stmt, outputs: Sequence[str], call: ast.Call) -> list[ast.stmt]:
        """`outputs = call`, then each output the construct left unassigned deleted again, so that reading it
        raises UnboundLocalError as in Python (a Python `if` that did not assign it)."""
        if not outputs:
            return [ast.Expr(call)]
        out: list[ast.stmt] = [ast.Assign([_tuple(outputs, ast.Store())], call)]
        for name in outputs:
            if not name.startswith("ag__"):
                out.extend(_parse_stmts(f"if ag__.is_undefined({name}):\n    del {name}"))
        return out

    def convert_if(self, stmt: ast.If, live_after: set[str]) -> list[ast.stmt]:
        k = next(_counter)
        modified = _stores(stmt.body + stmt.orelse)
        outputs = [n for n in modified if n in live_after or n.startswith("ag__")]
        read_first = _loads_before_store(stmt.body) | _loads_before_store(stmt.orelse)
        params = outputs + [n for n in modified if n in read_first and n not in outputs]
        body = self.block(stmt.body, live_after | set(outputs))
        orelse = self.block(stmt.orelse, live_after | set(outputs)) or [ast.Pass()]
        true_fn = _func(f"ag__if_true_{k}", params, body, outputs)
        false_fn = _func(f"ag__if_false_{k}", params, orelse, outputs)
        test = _Expressions(self.line_offset).visit(stmt.test)
        call = _ag_call("if_stmt", [test, ast.Name(true_fn.name, ast.Load()), ast.Name(false_fn.name, ast.Load()),
                         _ld_tuple(params), ast.Constant(tuple(params)), self.line(stmt)])
        return [ast.copy_location(n, stmt) for n in (true_fn, false_fn, *self._assign(stmt, outputs, call))]

    def _loop_body(self, body: list[ast.stmt], k: int) -> tuple[list[ast.stmt], list[str]]:
        """A loop body with `break`/`continue` lowered to flags of this loop (`ag__break_<k>`, reset by the
        loop; `ag__continue_<k>`, reset by each iteration) guarding what follows them, and the flags that end
        the loop: its break flag, and `ag__do_return` when a return inside sets it."""
        body = copy.deepcopy(body)  # the statement itself stays as written
        if _contains(body, (ast.Continue,), loops=False):
            flag = f"ag__continue_{k}"
            body = [*_parse_stmts(f"{flag} = False"), *_guard(_lower_jump(body, ast.Continue, flag), flag)]
        exits = []
        if _contains(body, (ast.Break,), loops=False):
            flag = f"ag__break_{k}"
            body = _guard(_lower_jump(body, ast.Break, flag), flag)
            exits.append(flag)
        if _sets(body, "ag__do_return"):
            exits.append("ag__do_return")
        return body, exits

    def _loop_vars(self, body: list[ast.stmt], carried: set[str], exits: Sequence[str],
                   exclude: Sequence[str] = ()) -> list[str]:
        modified = [n for n in _stores(body) if n not in exclude]
        return [n for n in modified if (n in carried or n in exits or n.startswith("ag__"))
                and not n.startswith("ag__continue_")]

    def convert_while(self, stmt: ast.While, live_after: set[str]) -> list[ast.stmt]:
        k = next(_counter)
        body, exits = self._loop_body(stmt.body, k)
        test_expr = stmt.test
        for flag in exits:  # checked before the test, as `break` skips it
            test_expr = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())), test_expr])
        carried = _loads([stmt.test]) | _loads_before_store(body) | live_after
        loop_vars = self._loop_vars(body, carried, exits)
        body = self.block(body, set(loop_vars) | live_after)
        test_fn = _func(f"ag__test_{k}", loop_vars, [], [])
        test_fn.body = [ast.Return(_Expressions(self.line_offset).visit(test_expr))]
        body_fn = _func(f"ag__body_{k}", loop_vars, body, loop_vars)
        init = [ast.Assign([ast.Name(f, ast.Store())], ast.Constant(False)) for f in exits if f != "ag__do_return"]
        call = _ag_call("while_stmt", [ast.Name(test_fn.name, ast.Load()), ast.Name(body_fn.name, ast.Load()),
                         _ld_tuple(loop_vars), ast.Constant(tuple(loop_vars)), self.line(stmt)])
        return [ast.copy_location(n, stmt) for n in (*init, test_fn, body_fn, *self._assign(stmt, loop_vars, call))]

    def convert_for(self, stmt: ast.For, live_after: set[str]) -> list[ast.stmt]:
        k = next(_counter)
        body, exits = self._loop_body(stmt.body, k)
        target = stmt.target
        carried = _loads_before_store(body) | live_after
        loop_vars = self._loop_vars(body, carried, exits, exclude=_stores([target]))
        body = self.block(body, set(loop_vars) | live_after)
        unpack = ast.Assign([target], ast.Name("ag__item", ast.Load()))
        body_fn = _func(f"ag__for_body_{k}", ["ag__item", *loop_vars], [unpack, *body], loop_vars)
        defs: list[ast.stmt] = [body_fn]
        extra_test: ast.expr = ast.Constant(None)
        if exits:  # the loop goes on while no exit flag is set (TF's extra_test)
            test_expr = ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), ast.Name(f, ast.Load())) for f in exits]) \
                if len(exits) > 1 else ast.UnaryOp(ast.Not(), ast.Name(exits[0], ast.Load()))
            test_fn = _func(f"ag__for_test_{k}", loop_vars, [], [])
            test_fn.body = [ast.Return(_Expressions(self.line_offset).visit(test_expr))]
            defs.insert(0, test_fn)
            extra_test = ast.Name(test_fn.name, ast.Load())
        is_range = _is_range(stmt.iter)
        iterable = _Expressions(self.line_offset).visit(stmt.iter)
        if is_range:
            iterable = _ag_call("range_", [iterable.func, *iterable.args])
        init = [ast.Assign([ast.Name(f, ast.Store())], ast.Constant(False)) for f in exits if f != "ag__do_return"]
        call = _ag_call("for_stmt", [iterable, extra_test, ast.Name(body_fn.name, ast.Load()),
                                     _ld_tuple(loop_vars), ast.Constant(tuple(loop_vars)), self.line(stmt)])
        return [ast.copy_location(n, stmt) for n in (*init, *defs, *self._assign(stmt, loop_vars, call))]


def _guard(stmts: list[ast.stmt], flag: str) -> list[ast.stmt]:
    """`s1; s2; ...` -> `s1; if not flag: s2; ...` after each statement that may set `flag`, at every depth:
    inside an `if` (or a loop, for the return flag) the statements after the one setting it are guarded too."""
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        _guard_inside(s, flag)
        out.append(s)
        if _sets([s], flag) and i + 1 < len(stmts):
            guard = ast.If(test=ast.UnaryOp(ast.Not(), ast.Name(flag, ast.Load())),
                           body=_guard(stmts[i + 1:], flag), orelse=[])
            out.append(ast.copy_location(guard, stmts[i + 1]))
            break
    return out


def _guard_inside(stmt: ast.stmt, flag: str) -> None:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    for field in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            setattr(stmt, field, _guard(block, flag))
    for handler in getattr(stmt, "handlers", []):
        handler.body = _guard(handler.body, flag)


def _is_range(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "range") or (
        isinstance(func, ast.Attribute) and func.attr == "range")


def _sets(body: Sequence[ast.stmt], flag: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == flag and isinstance(n.ctx, ast.Store)
               for s in body for n in _walk_local(s))


def _returns_nested(body: Sequence[ast.stmt]) -> bool:
    """Whether a `return` sits inside an if/while/for (a top-level return needs no rewriting)."""
    return any(isinstance(s, ast.If | ast.While | ast.For | ast.With | ast.Try) and _contains([s], (ast.Return,))
               for s in body)


def _ends_with_return(body: Sequence[ast.stmt]) -> bool:
    last = body[-1] if body else None
    return isinstance(last, ast.Return) or (isinstance(last, ast.If) and _ends_with_return(last.body)
                                            and _ends_with_return(last.orelse))


def _early_returns_to_else(body: list[ast.stmt]) -> list[ast.stmt]:
    """`if c: ...; return a` + rest  ->  `if c: ...; return a` / `else: rest` (and the same with the branches
    swapped): both branches then return, so a tensor condition gives both branches a value to return."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.If):
            stmt.body = _early_returns_to_else(stmt.body)
            stmt.orelse = _early_returns_to_else(stmt.orelse)
            if i + 1 < len(body) and _ends_with_return(stmt.body) and not _ends_with_return(stmt.orelse):
                stmt.orelse = _early_returns_to_else(stmt.orelse + body[i + 1:])
                out.append(stmt)
                return out
            if i + 1 < len(body) and _ends_with_return(stmt.orelse) and not _ends_with_return(stmt.body):
                stmt.body = _early_returns_to_else(stmt.body + body[i + 1:])
                out.append(stmt)
                return out
        out.append(stmt)
    return out


def _lower_jump(body: list[ast.stmt], kind: type, flag: str) -> list[ast.stmt]:
    class Jumps(ast.NodeTransformer):
        def visit_FunctionDef(self, n: ast.AST) -> ast.AST:
            return n

        visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_For = visit_While = visit_FunctionDef

        def generic_visit(self, n: ast.AST) -> Any:
            if isinstance(n, kind):
                return ast.copy_location(ast.Assign([ast.Name(flag, ast.Store())], ast.Constant(True)), n)
            return super().generic_visit(n)

    return [Jumps().visit(s) for s in body]


class _Expressions(ast.NodeTransformer):
    """`and`/`or`/`not` to ag__ calls, user calls through `converted_call` (expressions only)."""

    def __init__(self, line_offset: int):
        self.line_offset = line_offset

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return _Converter(self.line_offset).visit_function(node)

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _ag_call(name, [_thunk(value), _thunk(result)])
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_ag_call("not_", [node.operand]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("print", "super", "range", "len", "isinstance"):
            return node
        node.func = _ag_call("converted_call", [node.func])
        return node


def _ag_call(name: str, args: list[ast.expr]) -> ast.Call:
    """`ag__.<name>(*args)`: a call of this module's run-time helpers from converted code."""
    return ast.Call(ast.Attribute(ast.Name("ag__", ast.Load()), name, ast.Load()), args, [])


def _thunk(expr: ast.expr) -> ast.Lambda:
    return ast.Lambda(ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), expr)
