"""Array ops (tf.reshape, tf.concat, tf.gather, slicing, ...), tensor creation and tf.constant."""

from __future__ import annotations

import builtins
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes
from tapejax._src.convert import holds_tensor, to_array
from tapejax._src.registry import hashable, op
from tapejax._src.tensor import EagerTensor, Tensor, _Operators
from tapejax._src.variable import Variable

newaxis = None


# -- conversion ---------------------------------------------------------------------------------------------

def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const") -> Tensor:
    """Creates a constant tensor (`tf.constant`): float -> float32, int -> int32, numpy keeps its dtype.

    >>> import tapejax as tf
    >>> tf.constant([1, 2]).dtype, tf.constant(1.0).dtype
    (tf.int32, tf.float32)
    """
    array = to_array(value, dtype=None if dtype is None else dtypes.as_dtype(dtype),
                     hint=None) if not isinstance(value, _Operators) else _cast_constant(value, dtype)
    array = jnp.asarray(array)
    if shape is not None:
        shape = tuple(hashable(shape))
        if array.size == 1:
            array = jnp.broadcast_to(array.reshape(()), shape)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tried to convert "
                            f"{array.size} values into shape {list(shape)}.")
    return EagerTensor(array)


def _cast_constant(value: _Operators, dtype: Any) -> Any:
    array = value._value
    return array if dtype is None else array.astype(dtypes.as_dtype(dtype)._np)


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: str | None = None) -> Tensor:
    """Converts a value to a Tensor (`tf.convert_to_tensor`); a Tensor is returned as it is."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            to_array(value, dtype=dtype)  # raises TF's ValueError
        return value
    if isinstance(value, Variable):
        return value.read_value() if dtype is None else value.read_value() + to_array(0, dtype=dtype)
    if holds_tensor(value):
        return stack([convert_to_tensor(v, dtype, dtype_hint) for v in value])
    hint = None if dtype_hint is None else dtypes.as_dtype(dtype_hint)
    try:
        return EagerTensor(jnp.asarray(to_array(value, dtype=dtype, hint=hint)))
    except TypeError:
        if dtype is not None:
            raise
        return EagerTensor(jnp.asarray(to_array(value)))


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor | Variable)


# -- shapes -------------------------------------------------------------------------------------------------

def _reshape(tensor, shape):
    return jnp.reshape(tensor, shape)


def _transpose(a, perm=None, conjugate=False):
    out = jnp.transpose(a, perm)
    return jnp.conj(out) if conjugate else out


reshape = op("reshape", _reshape, static=("shape",))
transpose = op("transpose", _transpose, static=("perm", "conjugate"))
squeeze = op("squeeze", lambda input, axis=None: jnp.squeeze(input, axis), static=("axis",))
expand_dims = op("expand_dims", lambda input, axis: jnp.expand_dims(input, axis), static=("axis",))
broadcast_to = op("broadcast_to", lambda input, shape: jnp.broadcast_to(input, shape), static=("shape",))
tile = op("tile", lambda input, multiples: jnp.tile(input, multiples), static=("multiples",))


def _pad(tensor, paddings, mode="CONSTANT", constant_values=0):
    mode = mode.upper()
    if mode == "CONSTANT":
        return jnp.pad(tensor, paddings, constant_values=constant_values)
    return jnp.pad(tensor, paddings, mode={"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode])


pad = op("pad", _pad, static=("paddings", "mode", "constant_values"), op_type="PadV2")

_stack = op("stack", lambda *values, axis=0: jnp.stack(values, axis), static=("axis",), op_type="Pack")
_concat = op("concat", lambda *values, axis: jnp.concatenate(values, axis), static=("axis",), op_type="ConcatV2")


def stack(values, axis=0, name="stack"):
    """Stacks a list of tensors along a new axis (`tf.stack`)."""
    return _stack(values, axis=axis)


def concat(values, axis, name="concat"):
    """Concatenates a list of tensors along an existing axis (`tf.concat`)."""
    return _concat(values, axis=axis)


def _unstack(value, num=None, axis=0):
    return tuple(jnp.moveaxis(value, axis, 0))


def _split(value, num_or_size_splits, axis=0):
    if isinstance(num_or_size_splits, int):
        return tuple(jnp.split(value, num_or_size_splits, axis))
    sizes = list(num_or_size_splits)
    if -1 in sizes:
        sizes[sizes.index(-1)] = value.shape[axis] - (sum(sizes) + 1)
    return tuple(jnp.split(value, np.cumsum(sizes)[:-1].tolist(), axis))


_unstack_op = op("unstack", _unstack, static=("num", "axis"), op_type="Unpack")
_split_op = op("split", _split, static=("num_or_size_splits", "axis"), op_type="SplitV")


def unstack(value, num=None, axis=0, name="unstack"):
    """Unpacks a tensor into a list of tensors along `axis` (`tf.unstack`)."""
    return list(_unstack_op(value, num=num, axis=axis))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits a tensor into a list of sub-tensors (`tf.split`)."""
    return list(_split_op(value, num_or_size_splits=num_or_size_splits, axis=axis))


_einsum = op("einsum", lambda *inputs, equation: jnp.einsum(equation, *inputs), static=("equation",))


def einsum(equation, *inputs, **kwargs):
    """Tensor contraction over the indices of `equation` (`tf.einsum`)."""
    return _einsum(inputs, equation=equation)


def _gather(params, indices, validate_indices=None, axis=None, batch_dims=0):
    axis = batch_dims if axis is None else axis
    if axis < 0:
        axis += params.ndim
    take = lambda p, i, ax: jnp.take(p, i, axis=ax, mode="clip")  # noqa: E731
    for _ in builtins.range(batch_dims):
        take = jax.vmap(take, in_axes=(0, 0, None))
    return take(params, indices, axis - batch_dims)


gather = op("gather", _gather, static=("validate_indices", "axis", "batch_dims"), same_dtype=False,
            op_type="GatherV2")


def _where(condition, x, y):
    return jnp.where(condition, x, y)


_where_op = op("where", _where, same_dtype=(1, 2), op_type="SelectV2")
_where_indices = op("where_indices", lambda condition: jnp.argwhere(condition).astype(np.int64),
                    differentiable=False, op_type="Where", jit=False)  # its shape depends on the values


def where(condition, x=None, y=None, name=None):
    """`tf.where`: elementwise choice of x or y by condition, or the indices of true elements when alone."""
    if x is None and y is None:
        return _where_indices(condition)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return _where_op(condition, x, y)


def _cast(x, dtype):
    target = dtypes.as_dtype(dtype)._np
    if jnp.iscomplexobj(x) and target.kind != "c":
        x = jnp.real(x)
    return x.astype(target)


cast = op("cast", _cast, static=("dtype",), same_dtype=False)
identity = op("identity", lambda input: input)
stop_gradient = op("stop_gradient", lambda input: input, differentiable=False, op_type="StopGradient")


# -- slicing ------------------------------------------------------------------------------------------------

def _index_key(key: Any) -> Any:
    """A hashable form of a Python index: slices become ("slice", start, stop, step)."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, slice):
            out.append(("slice", hashable(k.start), hashable(k.stop), hashable(k.step)))
        elif k is None or k is Ellipsis or isinstance(k, int | np.integer):
            out.append(k if not isinstance(k, np.integer) else int(k))
        elif isinstance(k, _Operators) and dtypes.from_numpy(k._value.dtype).is_integer and k.ndim == 0:
            out.append(int(k))
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {k!r}"
            )
    return tuple(out)


def _getitem(tensor, key):
    index = []
    dim = 0
    n_specified = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            index.append(Ellipsis)
            dim = tensor.ndim - n_specified + dim
        elif k is None:
            index.append(None)
        elif isinstance(k, tuple):
            index.append(slice(*k[1:]))
            dim += 1
        else:
            if dim >= tensor.ndim:
                raise ValueError(f"Index out of range using input dim {tensor.ndim}")
            size = tensor.shape[dim]
            if not -size <= k < size:
                raise ValueError(f"slice index {k} of dimension {dim} out of bounds.")
            index.append(k)
            dim += 1
    return tensor[tuple(index)]


_getitem_op = op("__getitem__", _getitem, static=("key",), op_type="StridedSlice")


def _tensor_getitem(tensor, key):
    return _getitem_op(tensor, key=_index_key(key))


# The Tensor operator table maps `x[key]` here, after the key is made hashable.
from tapejax._src.tensor import OPERATORS  # noqa: E402

OPERATORS["__getitem__"] = _tensor_getitem


# -- shape queries (no gradient) ----------------------------------------------------------------------------

shape = op("shape", lambda input, out_type=np.int32: jnp.asarray(input.shape, dtype=dtypes.as_dtype(out_type)._np),
           static=("out_type",), differentiable=False, same_dtype=False)
size = op("size", lambda input, out_type=np.int32: jnp.asarray(input.size, dtype=dtypes.as_dtype(out_type)._np),
          static=("out_type",), differentiable=False, same_dtype=False)
rank = op("rank", lambda input: jnp.asarray(input.ndim, dtype=np.int32), differentiable=False)


# -- creation (no tensor inputs, so never recorded) ---------------------------------------------------------

def _np_dtype(dtype: Any) -> np.dtype:
    return dtypes.as_dtype(dtype)._np


def _shape(shape: Any) -> tuple[int, ...]:
    shape = hashable(shape)
    return (shape,) if isinstance(shape, int) else tuple(shape)


def zeros(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    return EagerTensor(jnp.zeros(_shape(shape), _np_dtype(dtype)))


def ones(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    return EagerTensor(jnp.ones(_shape(shape), _np_dtype(dtype)))


def zeros_like(input, dtype=None, name=None, layout=None) -> Tensor:
    array = to_array(input)
    return EagerTensor(jnp.zeros(array.shape, array.dtype if dtype is None else _np_dtype(dtype)))


def ones_like(input, dtype=None, name=None, layout=None) -> Tensor:
    array = to_array(input)
    return EagerTensor(jnp.ones(array.shape, array.dtype if dtype is None else _np_dtype(dtype)))


_fill = op("fill", lambda value, dims: jnp.full(dims, value), static=("dims",))


def fill(dims, value, name=None, layout=None) -> Tensor:
    """A tensor of shape `dims` filled with `value` (`tf.fill`); differentiable with respect to `value`."""
    return _fill(value, dims=_shape(dims))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None) -> Tensor:
    matrix = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=_np_dtype(dtype))
    if batch_shape is not None:
        matrix = jnp.broadcast_to(matrix, (*_shape(batch_shape), *matrix.shape))
    return EagerTensor(matrix)


def range(start, limit=None, delta=1, dtype=None, name="range") -> Tensor:  # noqa: A001 (TF's name)
    if limit is None:
        start, limit = 0, start
    values = [to_array(v) for v in (start, limit, delta)]
    if dtype is None:
        kinds = [v.dtype for v in values]
        dtype = builtins.max(kinds, key=lambda d: (d.kind == "f", d.itemsize))
    return EagerTensor(jnp.arange(*(v.item() for v in values), dtype=_np_dtype(dtype)))


def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    start_arr, stop_arr = to_array(start), to_array(stop, hint=dtypes.from_numpy(to_array(start).dtype))
    return EagerTensor(jnp.linspace(start_arr, stop_arr, int(num), axis=axis, dtype=start_arr.dtype))

