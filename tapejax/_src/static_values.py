"""Shape-like arguments: the values an op needs when it is built (shapes, sizes, axes, depths, bounds).

XLA compiles static shapes, so every shape is known while a `tf.function` traces. `tf.shape(x)`, `tf.size(x)` and
`tf.rank(x)` of a tensor whose dimensions are all known are therefore constants (`constant`), even inside a
trace, and the ops on them (arithmetic, slicing, `tf.stack`, `tf.concat`, casts) are folded at trace time
(concrete_function.py traces under `jax.ensure_compile_time_eval`), so `tf.reshape(x, tf.shape(y)[:-1])` or
`tf.zeros([tf.shape(x)[0], 7])` get concrete values. An op reads such an argument with `python_value` (for a
row's static parameters, `registry.hashable` calls it: the one place a row's shape-like argument becomes a Python
value). A traced value cannot be read: it raises TF's InvalidArgumentError in the words of TF's XLA compiler
("must be a compile-time constant"), naming the op and the argument and saying what to do. In a trace for an
`input_signature` with None dimensions, the value may only depend on a symbolic size: function.py then traces
the step per size, where every shape is concrete, and raises only if the value depends on a tensor's contents
there too (`tf.zeros(tf.cast(tf.reduce_sum(x), tf.int32))`). TF's own graphs support such shapes; no XLA
program does.
"""

from __future__ import annotations

from typing import Any, Final

import jax
import jax.numpy as jnp
import numpy as np

from . import caches, checking, deferred, errors
from .tensor import TensorShape, _Operators
from .variable import Variable


class PartiallyKnownShape(ValueError):
    """TF's ValueError for a TensorShape with None dimensions used as a shape; final: function.py does not trace
    per size on it, where the shape would be known (TF raises it)."""


class NotStatic(errors.InvalidArgumentError):
    """A shape-like argument whose value is traced. tf.data's traced map (data/traced.py) catches it, as it catches
    JAX's concretization errors, and maps such a function element by element instead."""


NOT_STATIC: Final = (
    "Input `{arg}` to {op} must be a compile-time constant.\n\nXLA, which compiles a tf.function, needs every "
    "shape, size, axis and bound when it compiles the step, but this value depends on the contents of a tensor "
    "(here a traced {dtype} tensor of shape {shape}). Shapes are known at trace time: tf.shape(x), tf.size(x), "
    "tf.rank(x), x.shape and arithmetic, slicing, tf.stack and tf.concat of them work. Otherwise compute the value "
    "outside the tf.function and pass it as a Python int (the function is traced once per value), or keep the "
    "shape static (pad to a maximum size and mask)."
)


def known_shape(value: Any) -> tuple[int, ...] | None:
    """The dimensions of a tensor, variable or array-like `value`, or None if one is symbolic (unknown until the
    call: an input_signature's None)."""
    if isinstance(value, _Operators):
        dims = (deferred.raw(value) if not isinstance(value, Variable) else value._value).shape
    else:
        dims = np.shape(value)
    return tuple(dims) if all(type(d) is int for d in dims) else None


def constant(value: Any, dtype: Any) -> Any:
    """A shape query's answer (an int or a tuple of them) as a constant array of `dtype`, concrete even inside a
    JAX trace that does not fold constants (a symbolic trace): it depends on no input. Arrays are immutable, so
    one is shared by every query of the same shape (a transfer to the device costs far more than the lookup)."""
    key = (value, dtype)
    array = _CONSTANTS.get(key)
    if array is None or checking.FLAG.on:
        with jax.ensure_compile_time_eval():
            fresh = jnp.asarray(np.asarray(value, dtype=dtype))
        if array is not None:
            checking.compare(_CONSTANTS.name, [array], [fresh], repr(key))
        else:
            _CONSTANTS[key] = array = fresh
    return array


_CONSTANTS = caches.Memo("shape constants (static_values.py)", 1024)


def is_traced(value: Any) -> bool:
    """Whether a tensor's or variable's value is a tracer (it has no value until a compiled step runs)."""
    return isinstance(value._current() if isinstance(value, Variable) else value._value, jax.core.Tracer)


def python_value(value: Any, op: str = "", arg: str = "") -> Any:
    """The value of a tensor, variable, TensorShape or numpy value used as a shape-like argument of op `op` (TF's op
    type or function name), as a Python number or nested list: read now if concrete; a traced value raises (see
    the module docstring), and so does a shape with unknown dimensions, as in TF."""
    if isinstance(value, TensorShape):
        if value.dims is None or None in value.dims:
            raise PartiallyKnownShape(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        return value.as_list()
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    array = value._current() if isinstance(value, Variable) else value._value
    if isinstance(array, jax.core.Tracer):
        raise NotStatic(None, None, NOT_STATIC.format(
            arg=arg or "shape", op=op or "this op", dtype=np.dtype(array.dtype).name, shape=list(array.shape)))
    return np.asarray(array).tolist()


def python_int(value: Any, op: str, arg: str) -> Any:
    """`int(value)` for a scalar shape-like argument (a depth, a count, a bound); other values as they are."""
    if isinstance(value, _Operators):
        return int(python_value(value, op, arg))
    return int(value) if isinstance(value, np.integer) else value
