"""AutoGraph's run-time operators: what converted code calls as `ag__.if_stmt`, `while_stmt`, `for_stmt`, ...

At run time each construct looks at its condition: a traced tensor gives tf.cond / tf.while_loop (so jax.lax),
a Python value gives plain Python, exactly as TF's AutoGraph does. autograph_transform.py writes the calls;
autograph.py hands these functions (and `converted_call`) to converted code as its `ag__` namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import capture, control_flow, dtypes, loops
from .convert import to_array
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape
from .variable import Variable


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
    local: tuple[int, ...] = ()
    if any(isinstance(v, Undefined) for v in values):
        values, local = _seed_undefined(body, tuple(values), names, line)
    if local:  # loop-local objects (a GradientTape made in the body): the loop carries the other variables
        carried = [i for i in range(len(values)) if i not in local]
        full = list(values)

        def pick(out: Sequence) -> tuple:
            return tuple(out[i] for i in carried)

        def put(kept: tuple) -> list:
            for i, v in zip(carried, kept):
                full[i] = v
            return full

        out = loops.while_loop(lambda *v: _staged(test(*put(v))), lambda *v: pick(body(*put(v))), pick(values),
                               maximum_iterations=bound, _names=pick(names), _line=line)
        return tuple(put(tuple(out)))
    out = loops.while_loop(lambda *v: _staged(test(*v)), lambda *v: tuple(body(*v)), tuple(values),
                                  maximum_iterations=bound, _names=names, _line=line)
    return tuple(out)


def _carriable(v: Any) -> bool:
    """Whether a loop can carry `v`: tensors, numbers and arrays, or nests of them."""
    leaves = jax.tree_util.tree_leaves(v, is_leaf=lambda x: isinstance(x, Tensor | Variable))
    return all(isinstance(x, Tensor | Variable | int | float | bool | complex | np.ndarray | np.generic | jax.Array)
               for x in leaves)


def _seed_undefined(body: Callable, values: tuple, names: tuple[str, ...], line: int) -> tuple[tuple, tuple]:
    """Loop variables the loop itself first assigns, started from zeros of what one iteration gives them (TF
    infers them from a trial iteration the same way); and the positions of those that hold objects a loop
    cannot carry (a GradientTape, a Python object made in the body): loop-local, as TF leaves them, left
    undefined after the loop."""
    missing = [i for i, v in enumerate(values) if isinstance(v, Undefined)]
    local: list[int] = []

    def one_iteration() -> list:
        out = body(*values)
        for i in missing:
            if isinstance(out[i], Undefined):
                raise ValueError(f"'{names[i]}' must be defined before the loop on line {line}: its condition is a "
                                 "tensor, so the loop runs as tf.while_loop and carries each variable it assigns.")
        local[:] = [i for i in missing if not _carriable(out[i])]
        return [out[i] for i in missing if i not in local]

    (trial,) = capture.capture_each([one_iteration], [], capture.current_trace())
    seeded = list(values)
    for i, (shape, dtype) in zip([i for i in missing if i not in local], trial.out_avals):
        seeded[i] = EagerTensor(jnp.zeros(shape, dtype))
    return tuple(seeded), tuple(local)


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
    an index, bounded by the trip count; `extra_test` (a `break` or `return` flag) ends it early. An object with
    an `_ag_for_stmt` method (a tf.data dataset or iterator) runs its own loop inside a trace."""
    more = (lambda *v: True) if extra_test is None else extra_test

    def both(a: Any, b: Any) -> Any:
        return a if b is True else OPERATORS["math.logical_and"](a, b)

    if isinstance(iterable, Variable):
        iterable = iterable.read_value()
    graph_loop = getattr(iterable, "_ag_for_stmt", None)  # a tf.data dataset or iterator: its own graph loop
    if graph_loop is not None and capture.current_trace() is not None:
        return graph_loop(extra_test, body, values, names, line)
    if isinstance(iterable, _Range) or (isinstance(iterable, Tensor) and _is_tensor(iterable)):
        if isinstance(iterable, _Range):
            limit, delta = iterable.limit, iterable.delta
            index = OPERATORS["cast"](iterable.start,
                                      limit.dtype if isinstance(limit, Tensor | Variable) else dtypes.int32)
            negative = not isinstance(delta, Tensor | Variable) and delta < 0
            bound = iterable.length()
            item = lambda i: i  # noqa: E731
            inside = (lambda i: i > limit) if negative else (lambda i: i < limit)
        else:
            bound = iterable.shape[0]  # None under an input_signature's None dimension: no static trip count
            rows = OPERATORS["shape"](iterable)[0] if bound is None else bound
            index, delta = EagerTensor(jnp.asarray(to_array(0))), 1
            item = lambda i: OPERATORS["gather"](iterable, i)  # noqa: E731
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
