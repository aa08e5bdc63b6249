"""Array ops (tf.reshape, tf.concat, tf.gather, slicing, ...), tensor creation and tf.constant."""

from __future__ import annotations

import builtins
import collections.abc
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax._src import config as jax_config  # eager_constant_folding: ensure_compile_time_eval's switch
from jax._src import core as jax_core  # trace_state_clean: is any JAX trace active
import numpy as np

from tapejax._src import dtypes, errors, static_values, zero_cotangent
from tapejax._src.indexed_slices import IndexedSlices, values_of
from tapejax._src.convert import CONVERSIONS, holds_tensor, on_device, tf_type_string, to_array
from tapejax._src.contracts import (CONCAT, PYTHON_AXIS, Axis, Dtype, Indices, Paddings, PerDimension, Rule, SplitSizes,
                                    check_traced)
from tapejax._src.registry import hashable, op
from tapejax._src.string_values import cast_error, is_host, is_text, to_bytes_array
from tapejax._src.tensor import EagerTensor, Tensor, TensorShape, _Operators
from tapejax._src.variable import Variable
from tapejax.ops import nan_extrema

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
    if is_host(array):  # a string tensor: on the host
        return EagerTensor(array if shape is None else _host_shaped(array, tuple(hashable(shape))))
    array = on_device(array)
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


def _host_shaped(array: np.ndarray, shape: tuple) -> np.ndarray:
    if array.size == 1:
        return np.broadcast_to(array.reshape(()), shape).copy()
    if array.size == int(np.prod(shape)):
        return array.reshape(shape)
    raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tried to convert {array.size} values "
                    f"into shape {list(shape)}.")


def _cast_constant(value: _Operators, dtype: Any) -> Any:
    # TF does not cast a tensor here (`tf.cast` does): another dtype is a TypeError
    if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
        raise TypeError(f"Expected tensor {value.numpy()} with dtype {dtypes.as_dtype(dtype)!r}, but got dtype "
                        f"{value.dtype!r}. Use tf.cast to change a tensor's dtype.")
    return value._value


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: str | None = None) -> Tensor:
    """Converts a value to a Tensor (`tf.convert_to_tensor`); a Tensor is returned as it is."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            to_array(value, dtype=dtype)  # raises TF's ValueError
        return value
    if isinstance(value, Variable):
        return value.read_value() if dtype is None else value.read_value() + to_array(0, dtype=dtype)
    if type(value) in CONVERSIONS:  # an IndexedSlices
        return convert_to_tensor(CONVERSIONS[type(value)](value), dtype)
    if holds_tensor(value):
        return stack([convert_to_tensor(v, dtype, dtype_hint) for v in value])
    hint = None if dtype_hint is None else dtypes.as_dtype(dtype_hint)
    if dtype is None and is_text(value):
        return EagerTensor(to_bytes_array(value))  # a string tensor, on the host
    try:
        return EagerTensor(on_device(to_array(value, dtype=dtype, hint=hint)))
    except TypeError:
        if dtype is not None:
            raise
        return EagerTensor(on_device(to_array(value)))


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
# numpy's own squeeze and expand_dims (OpDef.host): a shape met for the first time (each decoded file's length)
# runs on the host, not through a compile
squeeze = op("squeeze", lambda input, axis=None: jnp.squeeze(input, axis), static=("axis",),
             host=lambda input, axis=None: np.squeeze(input, axis))
expand_dims = op("expand_dims", lambda input, axis: jnp.expand_dims(input, axis), static=("axis",),
                 host=lambda input, axis: np.expand_dims(input, axis))
broadcast_to = op("broadcast_to", lambda input, shape: jnp.broadcast_to(input, shape), static=("shape",))
def _tile_on_host(input, multiples):
    if len(multiples) != np.ndim(input):  # numpy would pad `multiples`; TF refuses (the executable raises it)
        raise ValueError("multiples must have one entry per dimension")
    return np.tile(input, multiples)


tile = op("tile", lambda input, multiples: jnp.tile(input, multiples), static=("multiples",),
          contract=(PerDimension("input", "multiples"),), host=_tile_on_host)


def _pad(tensor, paddings, mode="CONSTANT", constant_values=0):
    mode = mode.upper()
    if mode == "CONSTANT":
        return jnp.pad(tensor, paddings, constant_values=constant_values)
    return jnp.pad(tensor, paddings, mode={"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode])


_PAD_MODE = Rule(lambda a: str(a["mode"]).upper() in ("CONSTANT", "REFLECT", "SYMMETRIC"), lambda a: (
    'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". Received `mode` = '
    f'{a["mode"]}'), ValueError)
pad = op("pad", _pad, static=("paddings", "mode", "constant_values"), op_type="PadV2",
         contract=(_PAD_MODE, Paddings("tensor")))

_stack = op("stack", lambda *values, axis=0: jnp.stack(values, axis), static=("axis",), op_type="Pack",
            contract=(Axis("values", new=True, message=PYTHON_AXIS, error=ValueError),),
            host=lambda *values, axis=0: np.stack(values, axis))
_concat = op("concat", lambda *values, axis: jnp.concatenate(values, axis), static=("axis",), op_type="ConcatV2",
             contract=(Axis("values", message=CONCAT),), host=lambda *values, axis: np.concatenate(values, axis))


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


_UNSTACK_NUM = Rule(lambda a: a["num"] is None or a["num"] == a["value"].shape[a["axis"]], lambda a: (
    f"Input shape axis {a['axis']} must equal {a['num']}, got shape {list(a['value'].shape)}"))
_unstack_op = op("unstack", _unstack, static=("num", "axis"), op_type="Unpack",
                 contract=(Axis("value", message=PYTHON_AXIS, error=ValueError), _UNSTACK_NUM))
_split_op = op("split", _split, static=("num_or_size_splits", "axis"), op_type="SplitV",
               contract=(SplitSizes("value"),))


def unstack(value, num=None, axis=0, name="unstack"):
    """Unpacks a tensor into a list of tensors along `axis` (`tf.unstack`)."""
    return list(_unstack_op(value, num=num, axis=axis))


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits a tensor into a list of sub-tensors (`tf.split`)."""
    return list(_split_op(value, num_or_size_splits=num_or_size_splits, axis=axis))


def _einsum_output_labels(a: dict) -> bool:
    inputs, _, output = a["equation"].replace(" ", "").partition("->")
    return set(output.replace(".", "")) <= set(inputs)


_einsum = op("einsum", lambda *inputs, equation: jnp.einsum(equation, *inputs), static=("equation",),
             contract=(Rule(_einsum_output_labels, "Output subscripts contain a label not present in the input "
                            "subscripts.", ValueError),))


def einsum(equation, *inputs, **kwargs):
    """Tensor contraction over the indices of `equation` (`tf.einsum`)."""
    return _einsum(inputs, equation=equation)


def _gather(params, indices, validate_indices=None, axis=None, batch_dims=0):
    axis = batch_dims if axis is None else axis
    if axis < 0:
        axis += params.ndim
    # Concrete indices out of range raise (the row's Indices contract, TF's CPU kernel); traced ones give zeros,
    # as TF's GPU kernel does (negative indices too).
    take = lambda p, i, ax: jnp.take(p, jnp.where(i < 0, p.shape[ax], i), axis=ax, mode="fill",  # noqa: E731
                                     fill_value=0)
    for _ in builtins.range(batch_dims):
        take = jax.vmap(take, in_axes=(0, 0, None))
    return take(params, indices, axis - batch_dims)


gather = op("gather", _gather, static=("validate_indices", "axis", "batch_dims"), same_dtype=False,
            op_type="GatherV2", contract=(Axis("params", message="Expected axis in the range [{low}, {high}), but got "
                                                "{axis}"), Indices("params", axis="axis", batch_dims="batch_dims")))


def _where(condition, x, y):
    return jnp.where(condition, x, y)


_where_op = op("where", _where, same_dtype=(1, 2), op_type="SelectV2",
               contract=(Dtype("condition", allowed=("bool",), conversion=True),))
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
    if target.kind == "O":  # string tensors take the host path (string_values.py): this is a number
        raise cast_error(x.dtype, target)
    if jnp.iscomplexobj(x) and target.kind != "c":
        x = jnp.real(x)
    return dtypes.cast_array(x, target)


def _is_dtype(value: Any) -> bool:
    try:
        dtypes.as_dtype(value)
    except TypeError:
        return False
    return True


_cast_op = op("cast", _cast, static=("dtype",), same_dtype=False, contract=(Rule(
    lambda a: _is_dtype(a["dtype"]), lambda a: f"Cannot convert the argument `type_value`: {a['dtype']!r} to a "
    "TensorFlow DType.", TypeError),))


def cast(x, dtype, name=None) -> Tensor:
    """Same semantics as tf.cast: `x` in `dtype` (complex to real keeps the real part, with TF's rounding and
    saturation rules). A tensor or variable already of `dtype` is returned as it is, as TF does: no op, so no
    executable per shape for a cast that changes nothing (a decoded audio file of each length). A Python or numpy
    value is made a tensor first, as TF does (a Python float is float32): `tf.cast(0.5, tf.float32)`, a Keras
    layer's constant, is then no op either, also in a trace's constant folding."""
    if isinstance(x, bool | int | float | np.ndarray | np.generic) and _is_dtype(dtype):
        x = convert_to_tensor(x)
    if isinstance(x, Tensor | Variable) and _is_dtype(dtype) and x.dtype == dtypes.as_dtype(dtype):
        return x
    return _cast_op(x, dtype)
identity = op("identity", lambda input: input)
stop_gradient = op("stop_gradient", lambda input: input, differentiable=False, op_type="StopGradient")


# -- slicing ------------------------------------------------------------------------------------------------

def _index_key(key: Any, dynamic: list | None = None) -> Any:
    """A hashable form of a Python index: slices become ("slice", start, stop, step). A scalar integer tensor whose
    value is traced (a tf.function's loop counter) becomes ("index", j), j its position in `dynamic`."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, slice):
            out.append(("slice", *(hashable(b, "StridedSlice", "begin, end and strides")
                                   for b in (k.start, k.stop, k.step))))
        elif k is None or k is Ellipsis or isinstance(k, int | np.integer):
            out.append(k if not isinstance(k, np.integer) else int(k))
        elif isinstance(k, _Operators) and dtypes.from_numpy(k._value.dtype).is_integer and k.ndim == 0:
            if dynamic is not None and static_values.is_traced(k):
                out.append(("index", len(dynamic)))
                dynamic.append(k)
            else:
                out.append(static_values.python_int(k, "StridedSlice", "begin"))
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {k!r}"
            )
    return tuple(out)


def _dimensions(ndim: int, key: tuple) -> list[int | None]:
    """The dimension of the input each entry of `key` indexes (None for an ellipsis or a new axis)."""
    dims, dim = [], 0
    n_specified = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            dim = ndim - n_specified + dim
        dims.append(None if k is None or k is Ellipsis else dim)
        dim += k is not None and k is not Ellipsis
    return dims


def _getitem(tensor, key):
    return _index(tensor, key, ())


def _index(tensor, key, dynamic):
    index = []
    for k, dim in zip(key, _dimensions(tensor.ndim, key)):  # (a window's dynamic slice keeps the rank)
        if k is Ellipsis or k is None:
            index.append(k)
        elif isinstance(k, tuple) and k[0] == "window":  # rows [start, start + size) of `dim`, start an argument
            tensor = jax.lax.dynamic_slice_in_dim(tensor, dynamic[k[1]], k[2], axis=dim)
            index.append(slice(None))
        elif isinstance(k, tuple):
            index.append(slice(*k[1:]) if k[0] == "slice" else dynamic[k[1]])
        else:
            if dim >= tensor.ndim:
                raise ValueError(f"Index out of range using input dim {tensor.ndim}")
            size = tensor.shape[dim]
            if not -size <= k < size:
                raise ValueError(f"slice index {k} of dimension {dim} out of bounds.")
            index.append(k)
    return tensor[tuple(index)]


def _check_dynamic_index(tensor, *indices, key):
    """TF checks a traced index when the step runs (InvalidArgumentError); XLA alone would clamp it."""
    for k, dim in zip(key, _dimensions(tensor.ndim, key)):
        if isinstance(k, tuple) and k[0] == "index":
            if dim >= tensor.ndim:
                raise ValueError(f"Index out of range using input dim {tensor.ndim}")
            i, size = indices[k[1]], tensor.shape[dim]
            message = f"slice index of dimension {dim} out of bounds"
            if isinstance(i, jax.core.Tracer):
                check_traced("StridedSlice", (i >= -size) & (i < size), message)
            elif not -size <= int(i) < size:
                raise errors.invalid_argument("StridedSlice", message)


_getitem_op = op("__getitem__", _getitem, static=("key",), op_type="StridedSlice")
# x[i] with a traced scalar i (inside tf.function: a loop counter, an argument): the same slice at a position known
# only when the step runs (XLA's dynamic slice), the output's shape static.
def _getitem_at(*tensors, key):
    return _index(tensors[0], key, tensors[1:])


_getitem_dynamic_op = op("__getitem_dynamic__", _getitem_at, static=("key",), op_type="StridedSlice",
                         same_dtype=False, check=_check_dynamic_index)
# An eager x[i] or x[i:i + k] with its positions as arguments (`_positions_as_arguments`, which checked them).
_getitem_positions_op = op("__getitem_positions__", _getitem_at, static=("key",), op_type="StridedSlice",
                           same_dtype=False)


def _tensor_getitem(tensor, key):
    dynamic: list = []
    key = _index_key(key, dynamic)
    if dynamic:
        return _getitem_dynamic_op([tensor, *dynamic], key=key)
    if not static_values.is_traced(tensor) and not is_host(tensor._value):
        key = _positions_as_arguments(tensor, key, dynamic)
        if dynamic:
            return _getitem_positions_op([tensor, *dynamic], key=key)
    return _getitem_op(tensor, key=key)


def _positions_as_arguments(tensor, key: tuple, dynamic: list) -> tuple:
    """An eager index with its integer positions and unit-step windows' starts made arguments, so that one
    executable serves x[0], x[1], ... and x[i:i + k] for every i (a Python loop over a tensor's rows) instead of
    one compile per position. An integer out of range stays static, for `_index` to raise TF's error; a window's
    start is clamped here as Python clamps a slice, so XLA's own clamping never moves it."""
    out = []
    for k, dim in zip(key, _dimensions(tensor.ndim, key)):
        if dim is None or dim >= tensor.ndim:
            out.append(k)
            continue
        size = tensor.shape[dim]
        position = np.int32 if size < 2**31 else np.int64
        if isinstance(k, int) and -size <= k < size:
            out.append(("index", len(dynamic)))
            dynamic.append(position(k))
        elif isinstance(k, tuple) and k[0] == "slice" and k[3] in (None, 1) and all(
                b is None or isinstance(b, int) for b in k[1:3]):
            start, stop, _ = slice(k[1], k[2]).indices(size)
            length = max(stop - start, 0)  # (a stop before the start selects nothing)
            if length in (0, size):  # empty or whole: nothing that varies with a position
                out.append(k)
                continue
            out.append(("window", len(dynamic), length))
            dynamic.append(position(start))
        else:
            out.append(k)
    return tuple(out)


# The Tensor operator table maps `x[key]` here, after the key is made hashable.
from tapejax._src.tensor import OPERATORS  # noqa: E402

OPERATORS["__getitem__"] = _tensor_getitem


# -- shape queries (no gradient) ----------------------------------------------------------------------------

# The rows compute a shape that has symbolic dimensions (an input_signature's None); the public functions answer a
# known shape with a constant, also inside a tf.function trace, where shapes are static: the shapes, sizes and
# axes computed from it then have values when the ops that take them are built (static_values.py).
_shape_op = op("shape", lambda input, out_type=np.int32: jnp.asarray(input.shape, dtype=dtypes.as_dtype(out_type)._np),
               static=("out_type",), differentiable=False, same_dtype=False)
_size_op = op("size", lambda input, out_type=np.int32: jnp.asarray(input.size, dtype=dtypes.as_dtype(out_type)._np),
              static=("out_type",), differentiable=False, same_dtype=False)
_rank_op = op("rank", lambda input: jnp.asarray(input.ndim, dtype=np.int32), differentiable=False)


def shape(input, out_type=None, name=None) -> Tensor:
    """The shape of `input` as a 1-D tensor (`tf.shape`), int32 unless `out_type` says otherwise.

    Inside a tf.function its value is known when the function is traced (XLA's shapes are static), so it can be
    used wherever an op needs a shape, size or axis: `tf.reshape(x, tf.shape(y)[:-1])`, `tf.zeros(tf.shape(x))`.

    >>> import tapejax as tf
    >>> print(tf.shape(tf.zeros([2, 3])))
    tf.Tensor([2 3], shape=(2,), dtype=int32)
    """
    out_type = np.int32 if out_type is None else dtypes.as_dtype(out_type)._np
    dims = static_values.known_shape(input)
    if dims is None:
        return _shape_op(input, out_type=out_type)
    return EagerTensor(static_values.constant(dims, out_type))


def size(input, out_type=None, name=None) -> Tensor:
    """The number of elements of `input` as a scalar tensor (`tf.size`), known at trace time as `tf.shape` is.

    >>> import tapejax as tf
    >>> print(tf.size(tf.zeros([2, 3])))
    tf.Tensor(6, shape=(), dtype=int32)
    """
    out_type = np.int32 if out_type is None else dtypes.as_dtype(out_type)._np
    dims = static_values.known_shape(input)
    if dims is None:
        return _size_op(input, out_type=out_type)
    return EagerTensor(static_values.constant(math.prod(dims), out_type))


def rank(input, name=None) -> Tensor:
    """The number of dimensions of `input` as a scalar int32 tensor (`tf.rank`), always known at trace time.

    >>> import tapejax as tf
    >>> print(tf.rank(tf.zeros([2, 3])))
    tf.Tensor(2, shape=(), dtype=int32)
    """
    ndim = input.ndim if isinstance(input, _Operators) else np.ndim(input)
    return EagerTensor(static_values.constant(ndim, np.int32))


OPERATORS["shape"], OPERATORS["size"], OPERATORS["rank"] = shape, size, rank


# -- creation (no tensor inputs, so never recorded) ---------------------------------------------------------

def _np_dtype(dtype: Any) -> np.dtype:
    return dtypes.as_dtype(dtype)._np


def _shape(shape: Any, op_type: str = "Fill", arg: str = "dims") -> tuple[int, ...]:
    shape = hashable(shape, op_type, arg)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    _check_dims(shape, op_type)
    return shape


def _check_dims(dims: tuple, op_type: str) -> None:
    for d in dims:
        if isinstance(d, int) and d < 0:
            raise errors.invalid_argument(op_type, f"Dimension {d} must be >= 0")


def zeros(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    if dtypes.as_dtype(dtype) == dtypes.string:  # TF's zero string is b"", a host value (string_values.py)
        return EagerTensor(np.full(_shape(shape, "Fill", "shape"), b"", dtype=object))
    return EagerTensor(_filled(_shape(shape, "Fill", "shape"), 0, _np_dtype(dtype)))


def ones(shape, dtype=dtypes.float32, name=None, layout=None) -> Tensor:
    return EagerTensor(_filled(_shape(shape, "Fill", "shape"), 1, _np_dtype(dtype)))


def zeros_like(input, dtype=None, name=None, layout=None) -> Tensor:
    array = to_array(input)
    if (is_host(array) and dtype is None) or (dtype is not None and dtypes.as_dtype(dtype) == dtypes.string):
        return zeros(array.shape, dtypes.string)
    return EagerTensor(_filled(array.shape, 0, array.dtype if dtype is None else _np_dtype(dtype)))


def ones_like(input, dtype=None, name=None, layout=None) -> Tensor:
    array = to_array(input)
    return EagerTensor(_filled(array.shape, 1, array.dtype if dtype is None else _np_dtype(dtype)))


_HOST_FILL_MAX = 1 << 22  # elements: beyond, the device's broadcast (one compile) beats writing them on the host


def _filled(shape: tuple, value: int, np_dtype: np.dtype) -> Any:
    """zeros or ones: eagerly written on the host and put on the device, with no XLA compile per shape and dtype
    (each new bias, batch-norm statistic and optimizer slot of a Keras model built one, 20-30 ms, as jnp.zeros
    does), and so under constant folding (ensure_compile_time_eval: a first trace building a layer's variables,
    whose jnp.zeros is computed then too); else, inside a JAX trace, staged as jnp's broadcast."""
    computed_now = jax_core.trace_state_clean() or jax_config.eager_constant_folding.value
    if computed_now and math.prod(shape) <= _HOST_FILL_MAX:
        return jax.device_put(np.full(shape, value, np_dtype))
    return jnp.full(shape, value, np_dtype)


_fill = op("fill", lambda value, dims: jnp.full(dims, value), static=("dims",), contract=(Rule(
    lambda a: a["value"].ndim == 0, lambda a: f"value must represent a scalar, got shape {list(a['value'].shape)}"),))


def fill(dims, value, name=None, layout=None) -> Tensor:
    """A tensor of shape `dims` filled with `value` (`tf.fill`); differentiable with respect to `value`."""
    return _fill(value, dims=_shape(dims))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None) -> Tensor:
    num_rows = static_values.python_int(num_rows, "eye", "num_rows")
    num_columns = static_values.python_int(num_columns, "eye", "num_columns")
    _check_dims((int(num_rows), int(num_rows if num_columns is None else num_columns)), "Fill")
    matrix = jnp.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=_np_dtype(dtype))
    if batch_shape is not None:
        matrix = jnp.broadcast_to(matrix, (*_shape(batch_shape, "eye", "batch_shape"), *matrix.shape))
    return EagerTensor(matrix)


def range(start, limit=None, delta=1, dtype=None, name="range") -> Tensor:  # noqa: A001 (TF's name)
    if limit is None:
        start, limit = 0, start
    # On the host: the bounds are static (a tensor's is read), so a symbolic Keras call stays abstract.
    values = [np.asarray(hashable(v, "Range", arg), v.dtype._np) if isinstance(v, _Operators)
              else to_array(v, on_device=False) for v, arg in ((start, "start"), (limit, "limit"), (delta, "delta"))]
    _check_range(*(v.item() for v in values))
    if dtype is None:
        kinds = [v.dtype for v in values]
        dtype = builtins.max(kinds, key=lambda d: (d.kind == "f", d.itemsize))
    np_dtype = _np_dtype(dtype)
    if np.issubdtype(np_dtype, np.integer):  # exact in numpy: no XLA compile (jnp.arange's eager ops made four)
        array = np.arange(*(v.item() for v in values), dtype=np_dtype)
        # eagerly a transfer; in a trace a constant of the program (a device array closed over would be captured)
        return EagerTensor(jax.device_put(array) if jax_core.trace_state_clean() else jnp.asarray(array))
    return EagerTensor(jnp.arange(*(v.item() for v in values), dtype=np_dtype))


def _check_range(start: Any, limit: Any, delta: Any) -> None:
    if delta == 0:
        raise errors.invalid_argument("Range", f"Requires delta != 0: {delta}")
    if (start > limit) if delta > 0 else (start < limit):
        raise errors.invalid_argument("Range", f"Requires start {'<=' if delta > 0 else '>='} limit when delta "
                                               f"{'>' if delta > 0 else '<'} 0: {start}/{limit}")


def linspace(start, stop, num, name=None, axis=0) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` (`tf.linspace`), with TF's dtypes.

    As in TF, `stop` is converted to `start`'s dtype (`tf.linspace(0, 2.5, 5)` is a TypeError; a tensor of another
    dtype a ValueError), and integer bounds give the dtype of their true division: `tf.linspace(-2, 2, 5)` is
    float64 (int8/int16/uint8/uint16 bounds give float32).

    >>> import tapejax as tf
    >>> print(tf.linspace(-2, 2, 5))
    tf.Tensor([-2. -1.  0.  1.  2.], shape=(5,), dtype=float64)
    """
    num = static_values.python_int(num, "LinSpace", "num")
    if int(num) < 0:
        raise errors.invalid_argument("LinSpace", f"Requires num >= 0: {int(num)}")
    start_arr = to_array(start)
    stop_arr = to_array(stop, dtype=dtypes.from_numpy(start_arr.dtype))
    kind = start_arr.dtype
    if kind == np.bool_:
        raise errors.invalid_argument("LinSpace", "start and stop must be numbers, got bool")
    if kind.kind in "iu":  # TF divides (stop - start) by num - 1: int32/int64 give float64, narrower float32
        kind = np.dtype(np.float64 if kind.itemsize >= 4 else np.float32)
    return EagerTensor(jnp.linspace(start_arr, stop_arr, int(num), axis=axis, dtype=kind))


# -- indexing with index tensors: gather_nd, scatter_nd, tensor_scatter_nd_* ----------------------------------

def _is_traced(*values: Any) -> bool:
    return any(isinstance(v, jax.core.Tracer) for v in values)


def _nd_index(indices):
    """`indices[..., k]` as the k index arrays of an advanced index: `x[_nd_index(i)]` is TF's GatherNd."""
    return tuple(jnp.moveaxis(indices, -1, 0))


def _check_nd_indices(op_type: str, indices: Any, shape: tuple[int, ...], what: str) -> None:
    """TF's CPU kernels reject an index outside `shape` (its GPU kernels give zeros); JAX would clamp or drop it."""
    if _is_traced(indices):
        return
    index = np.asarray(indices)
    if index.ndim and index.shape[-1] > len(shape):
        raise errors.invalid_argument(op_type, "index innermost dimension length must be <= params rank; saw: "
                                               f"{index.shape[-1]} vs. {len(shape)}")
    if index.ndim == 0 or index.size == 0:
        return
    bound = np.asarray(shape[:index.shape[-1]])
    bad = np.any((index < 0) | (index >= bound), axis=-1)
    if bad.any():
        first = tuple(np.argwhere(bad)[0].tolist())
        position = ",".join(str(i) for i in first)
        raise errors.invalid_argument(op_type, f"indices[{position}] = {index[first].tolist()} does not index into "
                                               f"{what} [{','.join(str(d) for d in shape)}]")


def _gather_nd(params, indices, batch_dims=0):
    take = lambda p, i: p[_nd_index(i)]  # noqa: E731
    for _ in builtins.range(batch_dims):
        take = jax.vmap(take)
    return take(params, indices)


def _check_gather_nd(params, indices, batch_dims=0):
    if batch_dims == 0:
        _check_nd_indices("GatherNd", indices, params.shape, "param shape")


gather_nd = op("gather_nd", _gather_nd, static=("batch_dims",), same_dtype=False, check=_check_gather_nd)


def _scatter_nd(indices, updates, shape):
    return jnp.zeros(shape, updates.dtype).at[_nd_index(indices)].add(updates)  # TF sums repeated indices


def _check_scatter_nd(indices, updates, shape):
    _check_nd_indices("ScatterNd", indices, tuple(shape), "shape")


scatter_nd = op("scatter_nd", _scatter_nd, static=("shape",), same_dtype=False, check=_check_scatter_nd)


def _tensor_scatter(name: str, method: str, op_type: str):
    """A tensor_scatter_nd_* row: `tensor.at[indices].<method>(updates)`; max and min as TF's kernels (nan_extrema:
    a NaN update is skipped, a NaN in the tensor kept)."""

    def impl(tensor, indices, updates):
        if method in ("max", "min"):
            return nan_extrema.scatter_extremum(jnp.asarray(tensor), _nd_index(indices), updates, method == "max")
        return getattr(jnp.asarray(tensor).at[_nd_index(indices)], method)(updates)

    def check(tensor, indices, updates):
        _check_nd_indices(op_type, indices, tensor.shape, "shape")

    return op(name, impl, same_dtype=(0, 2), op_type=op_type, check=check)


# Repeated indices: update keeps one of the updates (TF: unspecified which), add/sub/max/min combine them all.
tensor_scatter_nd_update = _tensor_scatter("tensor_scatter_nd_update", "set", "TensorScatterUpdate")
tensor_scatter_nd_add = _tensor_scatter("tensor_scatter_nd_add", "add", "TensorScatterAdd")
tensor_scatter_nd_sub = _tensor_scatter("tensor_scatter_nd_sub", "subtract", "TensorScatterSub")
tensor_scatter_nd_max = _tensor_scatter("tensor_scatter_nd_max", "max", "TensorScatterMax")
tensor_scatter_nd_min = _tensor_scatter("tensor_scatter_nd_min", "min", "TensorScatterMin")


# -- ops whose output shape depends on values ---------------------------------------------------------------
# boolean_mask and sequence_mask: the public function computes the shape from the concrete values (eagerly, or
# from Python and numpy values inside tf.function) and passes it as a static parameter, so the row compiles and
# differentiates like any other. A row with jit=False would not do: gradients replay each op's VJP under jax.jit
# (sweep.py, lowering.py), where the mask is a traced input. unique has no gradient, so its row runs unjitted.

_VALUE_DEPENDENT_SHAPE = (
    "tf.{op} inside tf.function: the shape of its output depends on the values of `{arg}`, and those are not "
    "known while tf.function traces (a traced tensor has a shape and dtype, but no value). {fix}"
)


def _concrete(value: Any, op_name: str, arg: str, fix: str) -> np.ndarray:
    array = to_array(value)
    if _is_traced(array):
        raise errors.OperatorNotAllowedInGraphError(_VALUE_DEPENDENT_SHAPE.format(op=op_name, arg=arg, fix=fix))
    return np.asarray(array)


def _boolean_mask(tensor, mask, axis=None, size=None):
    axis = 0 if axis is None else axis % tensor.ndim
    merged = tensor.shape[:axis] + (-1,) + tensor.shape[axis + mask.ndim:]
    if size is None:  # the public tf.boolean_mask passes it; this is for calls of the row on concrete values
        size = int(np.count_nonzero(np.asarray(mask)))
    (positions,) = jnp.nonzero(mask.reshape(-1), size=size)
    return jnp.take(tensor.reshape(merged), positions, axis=axis)


_boolean_mask_op = op("boolean_mask", _boolean_mask, static=("axis", "size"), same_dtype=False)


def boolean_mask(tensor, mask, axis=None, name="boolean_mask") -> Tensor:
    """The elements (or slices along `axis`) of `tensor` where `mask` is True (`tf.boolean_mask`).

    >>> import tapejax as tf
    >>> print(tf.boolean_mask([[1, 2], [3, 4], [5, 6]], [True, False, True]))
    tf.Tensor(
    [[1 2]
     [5 6]], shape=(2, 2), dtype=int32)

    Differences from TensorFlow: inside tf.function the mask must be known when the function is traced (a Python
    or numpy value, or a tensor computed from them): the output shape depends on it, and JAX compiles static
    shapes only. A traced mask raises an error that says so; `tf.where(mask, tensor, 0)` keeps the shape instead.
    """
    mask_value = _concrete(mask, "boolean_mask", "mask", "Pass a mask known at trace time, or keep the shape "
                           "with tf.where(mask, tensor, tf.zeros_like(tensor)).")
    shape = tuple(tensor.shape) if isinstance(tensor, _Operators) else np.shape(tensor)
    k = mask_value.ndim
    if k == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else int(hashable(axis, "boolean_mask", "axis"))
    axis = axis + len(shape) if axis < 0 else axis
    if shape[axis:axis + k] != mask_value.shape:
        raise ValueError(f"Shapes {TensorShape(shape[axis:axis + k])} and {TensorShape(mask_value.shape)} are "
                         "incompatible")
    return _boolean_mask_op(tensor, mask, axis=axis, size=int(np.count_nonzero(mask_value)))


def _unique(x, out_idx=np.int32):
    # Concrete values only (the row is not jitted): the number of unique elements is the output's shape.
    values, first, inverse = jnp.unique(x, return_index=True, return_inverse=True)
    order = jnp.argsort(first)  # TF lists the unique elements in order of first occurrence, not sorted
    rank = jnp.argsort(order)
    return values[order], rank[inverse.reshape(-1)].astype(dtypes.as_dtype(out_idx)._np)


def _check_unique(x, out_idx=np.int32):
    if _is_traced(x):
        raise errors.OperatorNotAllowedInGraphError(_VALUE_DEPENDENT_SHAPE.format(
            op="unique", arg="x", fix="Call it outside tf.function, or on values known at trace time."))
    if x.ndim != 1:
        raise errors.invalid_argument("Unique", "unique expects a 1D vector.")


_unique_op = op("unique", _unique, static=("out_idx",), has_gradient=False, jit=False, check=_check_unique)


def unique(x, out_idx=dtypes.int32, name=None):
    """The unique elements of a 1-D tensor in order of first occurrence, and each element's index in them.

    Returns a namedtuple `(y, idx)`, as `tf.unique` does. TF has no gradient for it (LookupError).

    >>> import tapejax as tf
    >>> y, idx = tf.unique([3, 1, 3, 2])
    >>> print(y, idx)
    tf.Tensor([3 1 2], shape=(3,), dtype=int32) tf.Tensor([0 1 0 2], shape=(4,), dtype=int32)
    """
    return _Unique(*_unique_op(x, out_idx=out_idx))


class _Unique(NamedTuple):
    y: Tensor
    idx: Tensor


_Unique.__name__ = _Unique.__qualname__ = "Unique"


def _sequence_mask(lengths, maxlen, dtype=np.bool_):
    mask = jnp.arange(maxlen, dtype=lengths.dtype) < lengths[..., None]
    return mask.astype(dtypes.as_dtype(dtype)._np)


_sequence_mask_op = op("sequence_mask", _sequence_mask, static=("maxlen", "dtype"), differentiable=False,
                       op_type="Less")


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool_, name=None) -> Tensor:
    """`mask[i..., j] = j < lengths[i...]`, with `maxlen` columns (`tf.sequence_mask`).

    >>> import tapejax as tf
    >>> print(tf.sequence_mask([1, 3], 4))
    tf.Tensor(
    [[ True False False False]
     [ True  True  True False]], shape=(2, 4), dtype=bool)

    Differences from TensorFlow: without `maxlen` (it is then `max(lengths)`), the lengths must be known when a
    tf.function traces.
    """
    if maxlen is None:
        value = _concrete(lengths, "sequence_mask", "lengths", "Pass maxlen.")
        maxlen = builtins.max(int(value.max()) if value.size else 0, 0)
    maxlen = int(hashable(maxlen, "sequence_mask", "maxlen"))
    _check_range(0, maxlen, 1)
    return _sequence_mask_op(lengths, maxlen=maxlen, dtype=dtype)


# -- sorting and searching ----------------------------------------------------------------------------------

def _check_direction(values, axis=-1, direction="ASCENDING", stable=False):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("Argument `direction` should be one of ASCENDING, DESCENDING. Received: "
                         f"direction={direction}")


def _sort(values, axis=-1, direction="ASCENDING"):
    return jnp.sort(values, axis=axis, descending=direction == "DESCENDING")


def _argsort(values, axis=-1, direction="ASCENDING", stable=False):
    # Stable in both directions, as TF's is: its top_k keeps equal values in index order.
    order = jnp.argsort(values, axis=axis, stable=True, descending=direction == "DESCENDING")
    return order.astype(np.int32)


sort = op("sort", _sort, static=("axis", "direction"), op_type="TopKV2", check=_check_direction)
argsort = op("argsort", _argsort, static=("axis", "direction", "stable"), differentiable=False, op_type="TopKV2",
             check=_check_direction)


def _searchsorted(sorted_sequence, values, side="left", out_type=np.int32):
    rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    queries = values.reshape(rows.shape[0], -1)
    found = jax.vmap(lambda row, q: jnp.searchsorted(row, q, side=side))(rows, queries)
    return found.reshape(values.shape).astype(dtypes.as_dtype(out_type)._np)


def _check_searchsorted(sorted_sequence, values, side="left", out_type=np.int32):
    if side not in ("left", "right"):
        raise ValueError(f"side must be either left or right, got {side}")
    if sorted_sequence.ndim == 0 or sorted_sequence.shape[:-1] != values.shape[:-1]:
        raise errors.invalid_argument(
            "LowerBound" if side == "left" else "UpperBound",
            "Leading dim_size of both tensors must match. sorted_sequence shape "
            f"{list(sorted_sequence.shape)}, values shape {list(values.shape)}")


searchsorted = op("searchsorted", _searchsorted, static=("side", "out_type"), differentiable=False,
                  op_type="LowerBound", check=_check_searchsorted)


def _histogram_fixed_width(values, value_range, nbins=100, dtype=np.int32):
    # TF's kernel, in float64: clamp the values into the range, offset by the low edge, divide by the bin width
    # (computed as high/nbins - low/nbins), truncate, and put the high edge in the last bin.
    low, high = value_range[0].astype(np.float64), value_range[1].astype(np.float64)
    offset = jnp.clip(values, value_range[0], value_range[1]).astype(np.float64) - low
    # XLA turns a division by a broadcast scalar into a multiplication by its reciprocal, which rounds differently
    # and moves values on a bin edge: the barrier keeps the IEEE divisions TF's kernel does.
    count = jax.lax.optimization_barrier(jnp.full(offset.shape, nbins, np.float64))
    width = jax.lax.optimization_barrier(high / count - low / count)
    bins = jnp.minimum(offset / width, nbins - 1).astype(np.int32)
    return jnp.bincount(bins.reshape(-1), length=nbins).astype(dtypes.as_dtype(dtype)._np)


def _check_histogram(values, value_range, nbins=100, dtype=np.int32):
    if nbins <= 0:
        raise errors.invalid_argument("HistogramFixedWidth", f"nbins should be a positive number, but got '{nbins}'")
    if _is_traced(values, value_range):
        return
    low, high = np.asarray(value_range).tolist()
    if not low < high:
        raise errors.invalid_argument("HistogramFixedWidth", "value_range should satisfy value_range[0] < "
                                                             f"value_range[1], but got '[{low}, {high}]'")
    if np.isnan(np.asarray(values, np.float64)).any():
        raise errors.invalid_argument("HistogramFixedWidth", "Histogram values must not contain NaN")


histogram_fixed_width = op("histogram_fixed_width", _histogram_fixed_width, static=("nbins", "dtype"),
                           differentiable=False, op_type="HistogramFixedWidth", check=_check_histogram)


# -- one_hot ------------------------------------------------------------------------------------------------

def _one_hot(indices, on_value, off_value, depth, axis=-1):
    hot = indices[..., None] == jnp.arange(depth, dtype=indices.dtype)  # out-of-range indices: all off
    hot = jnp.moveaxis(hot, -1, axis)
    return jnp.where(hot, on_value, off_value)


def _check_one_hot(indices, on_value, off_value, depth, axis=-1):
    if on_value.dtype != off_value.dtype:
        raise TypeError(f"dtype {dtypes.from_numpy(on_value.dtype)!r} of on_value does not match dtype "
                        f"{dtypes.from_numpy(off_value.dtype)!r} of off_value")


# TF registers no gradient for on_value and off_value either: every gradient through one_hot is None.
_one_hot_op = op("one_hot", _one_hot, static=("depth", "axis"), differentiable=False, same_dtype=(1, 2),
                 op_type="OneHot", check=_check_one_hot, contract=(
                     Dtype("indices", allowed=("uint8", "int8", "int32", "int64"), attr="TI"),
                     Rule(lambda a: a["depth"] >= 0, lambda a: f"depth must be non-negative, got: {a['depth']}")))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None) -> Tensor:
    """`on_value` where the last axis (or `axis`) equals the index, `off_value` elsewhere (`tf.one_hot`).

    The dtype is `dtype`, else on_value's, else off_value's, else float32, as in TF.

    >>> import tapejax as tf
    >>> print(tf.one_hot([0, 2, -1], 3))
    tf.Tensor(
    [[1. 0. 0.]
     [0. 0. 1.]
     [0. 0. 0.]], shape=(3, 3), dtype=float32)
    """
    given = {k: v for k, v in (("on_value", on_value), ("off_value", off_value)) if v is not None}
    arrays = {k: v if isinstance(v, _Operators) else to_array(v) for k, v in given.items()}
    given_dtypes = {k: a.dtype if isinstance(a, _Operators) else dtypes.from_numpy(a.dtype)
                    for k, a in arrays.items()}
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        for k, d in given_dtypes.items():
            if d != dtype:
                raise TypeError(f"dtype {d!r} of {k} does not match dtype parameter {dtype!r}")
    else:
        dtype = next(iter(given_dtypes.values()), dtypes.float32)
    on = arrays.get("on_value", np.ones((), dtype._np))
    off = arrays.get("off_value", np.zeros((), dtype._np))  # a dtype mismatch of the two: the row's TypeError
    return _one_hot_op(indices, on, off, depth=int(hashable(depth, "OneHot", "depth")),
                       axis=-1 if axis is None else int(hashable(axis, "OneHot", "axis")))


# -- reordering and slicing ---------------------------------------------------------------------------------

def _reverse(tensor, axis):
    return jnp.flip(tensor, tuple(axis))


reverse = op("reverse", _reverse, static=("axis",), op_type="ReverseV2", contract=(Axis(
    "tensor", message="'axis'[{index}] = {axis} is out of valid range [0, {last}", unique=True),))
roll = op("roll", lambda input, shift, axis: jnp.roll(input, shift, axis), static=("shift", "axis"))


def _slice(input_, begin, size):
    index = []
    for dim, (b, s, n) in enumerate(zip(begin, size, input_.shape)):
        s = n - b if s == -1 else s
        if not (0 <= b <= n and 0 <= s <= n - b):
            raise ValueError(f"Expected size[{dim}] in [0, {n - b}], but got {s}" if 0 <= b <= n
                             else f"Expected begin[{dim}] in [0, {n}], but got {b}")
        index.append(builtins.slice(b, b + s))
    return input_[tuple(index)]


slice_ = op("slice", _slice, static=("begin", "size"), contract=(Rule(
    lambda a: len(a["begin"]) == len(a["size"]) == a["input_"].ndim, lambda a: (
        f"Expected begin and size arguments to be 1-D tensors of size {a['input_'].ndim}, but got shapes "
        f"[{len(a['begin'])}] and [{len(a['size'])}] instead.")),))  # `slice_`: array.py keeps the builtin `slice`


def _strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                   shrink_axis_mask=0):
    """TF's sparse slice spec as a Python index (the form `x[...]` takes), then `x[...]`'s own implementation."""
    strides = (1,) * len(begin) if strides is None else strides
    key = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            if Ellipsis in key:
                raise ValueError("Multiple ellipses in slice spec not allowed")
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            if s < 0:
                raise ValueError("only stride 1 allowed on non-range indexing.")
            key.append(b)
        else:
            if s == 0:
                raise ValueError(f"strides[{i}] must be non-zero")
            key.append(("slice", None if begin_mask & bit else b, None if end_mask & bit else e, s))
    return _getitem(input_, tuple(key))


strided_slice = op("strided_slice", _strided_slice,
                   static=("begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                           "shrink_axis_mask"))


def _repeat(input, repeats, axis=None):
    if axis is None:  # TF flattens first, as numpy does
        input, axis = input.reshape(-1), 0
    return jnp.repeat(input, np.asarray(repeats), axis=axis)  # repeats are static: the output shape is known


repeat = op("repeat", _repeat, static=("repeats", "axis"))

def _meshgrid_impl(*args, indexing="xy"):
    return tuple(jnp.meshgrid(*[jnp.ravel(a) for a in args], indexing=indexing))  # TF flattens each input


_meshgrid = op("meshgrid", _meshgrid_impl, static=("indexing",), op_type="Meshgrid")


def meshgrid(*args, **kwargs) -> list[Tensor]:
    """Coordinate grids from 1-D coordinate vectors (`tf.meshgrid`), "xy" (Cartesian) or "ij" (matrix) indexing.

    >>> import tapejax as tf
    >>> x, y = tf.meshgrid([1, 2, 3], [4, 5])
    >>> print(x.shape, y.shape)
    (2, 3) (2, 3)
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Key word arguments {list(kwargs)} not supported")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    return list(_meshgrid(args, indexing=indexing)) if args else []


# -- clip_by_global_norm ------------------------------------------------------------------------------------

def _clip_by_global_norm(*tensors, has_use_norm=False):
    """tensors: t_list, then clip_norm, then use_norm if given. Returns the clipped tensors, then the norm."""
    if has_use_norm:
        *t_list, clip_norm, norm = tensors
    else:
        *t_list, clip_norm = tensors
        norm = zero_cotangent.sqrt(builtins.sum(jnp.sum(t * t) for t in t_list))
    # TF's formula: an infinite or NaN norm makes every output NaN (the `norm - norm` term).
    scale = clip_norm * jnp.minimum(1 / norm, 1 / clip_norm) + (norm - norm)
    return (*[t * scale.astype(t.dtype) for t in t_list], norm)


def _check_clip_by_global_norm(*tensors, has_use_norm=False):
    # TF's order of failures: the global norm stacks the tensors' squared norms (one dtype), then
    # `1 / clip_norm` in the norm's dtype is a Python-level division (TypeError on another dtype).
    *t_list, clip_norm = tensors[:-1] if has_use_norm else tensors
    norm_dtype = tensors[-1].dtype if has_use_norm else t_list[0].dtype
    if not has_use_norm:
        for i, t in enumerate(t_list):
            if t.dtype != norm_dtype:
                raise errors.invalid_argument(
                    "Pack", f"cannot compute Pack as input #{i}(zero-based) was expected to be a "
                            f"{tf_type_string(norm_dtype)} tensor but is a {tf_type_string(t.dtype)} tensor")
    if clip_norm.dtype != norm_dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {dtypes.from_numpy(norm_dtype)!r} != "
                        f"{dtypes.from_numpy(clip_norm.dtype)!r}.")


_clip_by_global_norm_op = op("clip_by_global_norm", _clip_by_global_norm, static=("has_use_norm",),
                             same_dtype=False, op_type="ClipByGlobalNorm", check=_check_clip_by_global_norm)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None) -> tuple[list[Tensor | None], Tensor]:
    """Scales the tensors by `clip_norm / max(global_norm, clip_norm)` (`tf.clip_by_global_norm`).

    Returns `(list_clipped, global_norm)`; None entries of `t_list` stay None, as in TF.

    >>> import tapejax as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0])], 1.0)
    >>> print(clipped[0], norm)
    tf.Tensor([0.6 0.8], shape=(2,), dtype=float32) tf.Tensor(5.0, shape=(), dtype=float32)
    """
    if not isinstance(t_list, collections.abc.Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    slices = [t for t in t_list if isinstance(t, IndexedSlices)]
    present = [values_of(t) for t in t_list if t is not None]  # an IndexedSlices: its values (TF)
    if not isinstance(clip_norm, _Operators):  # a Python or numpy clip_norm takes the norm's dtype, as in TF
        norm_dtype = to_array(use_norm if use_norm is not None else present[0]).dtype
        clip_norm = to_array(clip_norm, hint=dtypes.from_numpy(norm_dtype))
    tensors = [*present, clip_norm] + ([] if use_norm is None else [use_norm])
    *clipped, norm = _clip_by_global_norm_op(tensors, has_use_norm=use_norm is not None)
    it = iter(clipped)
    out = [None if t is None else next(it) for t in t_list]
    if slices:
        out = [IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else c
               for c, t in zip(out, t_list)]
    return out, norm


# The public callables of these rows resolve TF's defaults from concrete values (a mask's true count, `maxlen`,
# one_hot's dtype): the operator table points at them, as it does for `x[key]`.
OPERATORS["boolean_mask"] = boolean_mask
OPERATORS["sequence_mask"] = sequence_mask
OPERATORS["one_hot"] = one_hot
