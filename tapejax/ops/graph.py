"""What TF code calls around its ops for graph bookkeeping, and small ops beside them: `tf.no_op`, `tf.group`,
`tf.control_dependencies`, `tf.identity_n`, `tf.ensure_shape`, `tf.shape_n`, `tf.get_static_value`,
`tf.executing_eagerly`, `tf.inside_function`, `tf.timestamp`, `tf.broadcast_static_shape`,
`tf.broadcast_dynamic_shape`, `tf.saturate_cast`, `tf.realdiv`.

Ordering needs nothing here: eager ops run in program order, and inside `tf.function` JAX orders effects
(prints, summaries, variable updates) itself, so `control_dependencies` and `group` have nothing to add.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.context import CONTEXT
from tapejax._src.registry import op
from tapejax._src.tensor import EagerTensor, Tensor, TensorShape, _Operators
from tapejax.ops.array import cast, constant, identity, shape
from tapejax.ops.math import clip_by_value


def no_op(name: str | None = None) -> None:
    """Does nothing (`tf.no_op`); returns None, as TF's eager no_op."""
    return None


def group(*inputs: Any, name: str | None = None) -> None:
    """Waits for nothing (`tf.group`): eagerly the inputs have run; inside tf.function JAX keeps them. None."""
    return None


@contextlib.contextmanager
def control_dependencies(control_inputs: Any) -> Iterator[None]:
    """`tf.control_dependencies`: a context manager that adds nothing (see the module docstring). A callable
    input is called, as TF does eagerly."""
    for x in control_inputs or ():
        if callable(x) and not isinstance(x, _Operators):
            x()
    yield


def executing_eagerly() -> bool:
    """False inside a `tf.function` trace, True otherwise (`tf.executing_eagerly`)."""
    return CONTEXT.trace is None


def inside_function() -> bool:
    """True inside a `tf.function` trace (`tf.inside_function`)."""
    return CONTEXT.trace is not None


def identity_n(input: Any, name: str | None = None) -> list[Tensor]:  # noqa: A002 (TF's name)
    """Each input as a tensor (`tf.identity_n`)."""
    return [identity(x) for x in input]


def shape_n(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """The shape of each input (`tf.shape_n`)."""
    return [shape(x, out_type=out_type) for x in input]


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of `tensor` as numpy if it is known now, else None (`tf.get_static_value`): an eager tensor's
    value; inside `tf.function`, a value that does not depend on the step's inputs. Other values come back as
    they are."""
    if not isinstance(tensor, _Operators):
        return tensor
    value = tensor._value if isinstance(tensor, Tensor) else tensor._current()
    return None if isinstance(value, jax.core.Tracer) else np.asarray(value)


def timestamp(name: str | None = None) -> Tensor:
    """Seconds since the epoch, a float64 scalar (`tf.timestamp`). Inside tf.function it is the time of the
    trace, not of the call (differences from TensorFlow: TF reads the clock when the step runs)."""
    return constant(time.time(), dtypes.float64)


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`x`, after checking that its shape is compatible with `shape` (None dimensions match any size).

    Raises:
      InvalidArgumentError: the shapes differ (eagerly; TF's message). Inside tf.function, where shapes are
        known when the step is traced, TF's ValueError.
    """
    value = identity(x)
    expected = TensorShape(shape)
    if not expected.is_compatible_with(value.shape):
        message = (f"Shape of tensor input {list(value.shape)} is not compatible with expected shape "
                   f"{str(expected.as_list() if expected.rank is not None else None).replace(' ', '')}.")
        if CONTEXT.trace is not None:
            raise ValueError(message)
        raise errors.invalid_argument("EnsureShape", message.replace(", ", ","))
    return value


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The shape two shapes broadcast to (`tf.broadcast_static_shape`); TF's ValueError if they do not."""
    x, y = TensorShape(shape_x).as_list(), TensorShape(shape_y).as_list()
    out = []
    for a, b in zip([1] * (len(y) - len(x)) + x, [1] * (len(x) - len(y)) + y):
        if a is None or b is None:
            out.append(b if a == 1 else a if b == 1 else None)
        elif a != b and 1 not in (a, b):
            raise ValueError("Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension "
                             f"pair they are either equal or one of them is 1. Received: {tuple(x)} and {tuple(y)}.")
        else:
            out.append(max(a, b) if 1 in (a, b) else a)
    return TensorShape(out)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The shape two shape tensors broadcast to, as a tensor of their dtype (`tf.broadcast_dynamic_shape`).

    Raises:
      InvalidArgumentError: the shapes do not broadcast.
    """
    x, y = constant(shape_x), constant(shape_y)
    try:
        out = np.broadcast_shapes(tuple(int(d) for d in x.numpy()), tuple(int(d) for d in y.numpy()))
    except ValueError:
        raise errors.invalid_argument("BroadcastArgs", f"Incompatible shapes: {list(x.numpy())} vs. "
                                      f"{list(y.numpy())}".replace(", ", ",")) from None
    return constant(np.asarray(out, x.dtype.as_numpy_dtype))


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """`value` cast to `dtype`, clipped to its range first (`tf.saturate_cast`), as TF computes it: the bounds are
    the target's limits in the input's dtype (so float32 -> int32 tops out at 2147483520, as in TF)."""
    x = constant(value) if not isinstance(value, _Operators) else value
    target = dtypes.as_dtype(dtype)
    source = x.dtype
    if source.is_complex and not target.is_complex:
        x = cast(x, source.real_dtype)
        source = source.real_dtype
    if not source.is_bool and not target.is_bool and not target.is_complex:
        src, dst = _limits(source), _limits(target)
        if src[0] < dst[0] or src[1] > dst[1]:
            low, high = _bound(dst[0], source, up=True), _bound(dst[1], source, up=False)
            x = clip_by_value(x, low, high)
    return cast(x, target)


def _limits(dtype: Any) -> tuple[Any, Any]:
    info = np.finfo(dtype.as_numpy_dtype) if dtype.is_floating else np.iinfo(dtype.as_numpy_dtype)
    return info.min, info.max


def _bound(limit: Any, dtype: Any, up: bool) -> Any:
    """The target's limit as a value of the input's dtype that casts inside the target's range."""
    value = np.asarray(limit).astype(dtype.as_numpy_dtype)
    if dtype.is_floating and abs(float(value)) > abs(float(limit)):  # rounded past the limit: step back in
        value = np.nextafter(value, np.asarray(0, value.dtype))
    return value


def _check_realdiv(x: Any, y: Any) -> None:
    if not (jnp.issubdtype(x.dtype, jnp.inexact)):
        raise errors.NotFoundError(None, None, f"Could not find device for node: {{{{node RealDiv}}}} = "
                                   f"RealDiv[T=DT_{dtypes.from_numpy(x.dtype).name.upper()}]")


realdiv = op("realdiv", lambda x, y: x / y, signature="x, y", op_type="RealDiv", check=_check_realdiv)
