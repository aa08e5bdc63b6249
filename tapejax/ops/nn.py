"""tf.nn: activations, convolutions and pooling, and the losses and normalisations built from them, one row each."""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors, zero_cotangent
from tapejax._src.convert import tf_type_string, to_array
from tapejax._src.contracts import FLOAT, INTEGER, Axis, Dtype
from tapejax._src.registry import abstract_check, op
from tapejax._src.tensor import OPERATORS, EagerTensor
from tapejax.ops import conv_transpose, nan_extrema
from tapejax.ops.math import _axis, _clip_by_norm, _maximum, _reduce_mean
from tapejax.ops.math import sigmoid as sigmoid
from tapejax.ops.math import softplus as softplus
from tapejax.ops.math import tanh as tanh


def _relu6(features):
    # TF's gradient is 1 inside (0, 6) only: 0 at both kinks and at NaN; `where` makes JAX's derivative agree.
    inside = (features > 0) & (features < 6)
    outside = jnp.where(features <= 0, jnp.zeros_like(features),
                        jnp.where(features >= 6, jnp.full_like(features, 6), jax.lax.stop_gradient(features)))
    return jnp.where(inside, features, outside)


def _elu(features):
    # TF's EluGrad reads the output: g * (y + 1) where y < 0, g elsewhere (1 at 0 and at NaN). The negative branch
    # sees only negative inputs: no 0 * inf from an overflowing expm1 on the other side.
    negative = features < 0
    return jnp.where(negative, jnp.expm1(jnp.where(negative, features, 0)), features)


def _selu(features):
    # As elu, TF's SeluGrad takes the linear branch at 0 and at NaN.
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * jnp.where(features < 0, alpha * _elu(features), features)


def _softsign(features):
    # TF's gradient 1 / (1 + |x|)^2 is 0 at +-inf, where JAX's of x / (1 + |x|) is inf / inf = NaN (the value
    # there is NaN in both).
    infinite = jnp.isinf(features)
    finite = jnp.where(infinite, jnp.zeros_like(features), features)
    nan = jax.lax.stop_gradient(features / (1 + jnp.abs(features)))
    return jnp.where(infinite, nan, finite / (1 + jnp.abs(finite)))


def _leaky_relu(features, alpha=0.2):
    if jnp.issubdtype(features.dtype, jnp.integer):  # TF computes integer features in float32
        features = features.astype(jnp.float32)
    return jnp.where(features > 0, features, features * alpha)


def _gelu(features, approximate=False):
    return jax.nn.gelu(features, approximate=approximate)  # TF's default is the exact (erf) form


def _softmax(logits, axis=None):
    return jax.nn.softmax(logits, axis=-1 if axis is None else axis)


def _log_softmax(logits, axis=None):
    return jax.nn.log_softmax(logits, axis=-1 if axis is None else axis)


_SOFTMAX = (Dtype("logits", allowed=FLOAT), Axis("logits", message="`dim` must be in the range [{low}, {high}) "
                                              "where {rank} is the number of dimensions in the input. Received: dim={axis}"))
relu = op("nn.relu", jax.nn.relu, signature="features",  # gradient 0 at 0, as TF
          contract=(Dtype("features", allowed=(*FLOAT, *INTEGER)),))
relu6 = op("nn.relu6", _relu6)
elu = op("nn.elu", _elu, contract=(Dtype("features", allowed=FLOAT),))
selu = op("nn.selu", _selu, contract=(Dtype("features", allowed=FLOAT),))
gelu = op("nn.gelu", _gelu, static=("approximate",))
leaky_relu = op("nn.leaky_relu", _leaky_relu, static=("alpha",))
silu = op("nn.silu", lambda features, beta=1.0: features * jax.nn.sigmoid(beta * features), static=("beta",))
softsign = op("nn.softsign", _softsign)
softmax = op("nn.softmax", _softmax, static=("axis",), contract=_SOFTMAX)
log_softmax = op("nn.log_softmax", _log_softmax, static=("axis",), op_type="LogSoftmax", contract=_SOFTMAX)
swish = silu


# -- window arguments: TF's rules for strides, dilations, ksize and padding ----------------------------------
# A window op (convolution, pooling) takes TF's window arguments as static parameters. Its `check` applies TF's
# rules to them and to the input shapes before the op runs (raising TF's exception types: ValueError from TF's
# Python layer, InvalidArgumentError and UnimplementedError from its kernels); the same "plan" function then
# gives the implementation the checked arguments, in the input's own layout (no transposes).

_FLOAT_TYPES = tuple(np.dtype(t) for t in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64))
_CONV2D_TYPES = (*_FLOAT_TYPES, np.dtype(np.int32))


def _listed(value):
    """A static argument as TF prints it: `op()` hashes lists to tuples."""
    return [_listed(v) for v in value] if isinstance(value, tuple) else value


def _dims(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _unimplemented(op_type: str, message: str) -> errors.OpError:
    return errors.UnimplementedError(None, None, f"{message} [Op:{op_type}] name: ")


def _check_dtype(op_type: str, dtype, allowed: tuple) -> None:
    if np.dtype(dtype) not in allowed:
        names = ", ".join(tf_type_string(t) for t in allowed)
        raise errors.invalid_argument(op_type, f"Value for attr 'T' of {tf_type_string(dtype)} is not in the list "
                                               f"of allowed values: {names}")


def _expand(value, n: int, channels_first: bool, name: str) -> tuple[int, ...]:
    """TF's expansion of a window argument to one entry per input dimension, in data_format order.

    One value (or an int) applies to every spatial dimension, n values to the n spatial dimensions, and n + 2
    values are taken as they are; the batch and channel dimensions get 1.
    """
    if value is None:
        return (1,) * (n + 2)
    values = value if isinstance(value, tuple) else (value,)
    if len(values) == n + 2:
        return values
    if len(values) == 1:
        values = values * n
    elif len(values) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={_listed(values)} of "
                         f"length {len(values)}")
    return (1, 1, *values) if channels_first else (1, *values, 1)


def _padding(padding, rank: int, explicit: bool, op_type: str):
    """TF's `padding`: "SAME", "VALID" or, where the op has TF's explicit form, one (before, after) pair per
    input dimension."""
    if isinstance(padding, str):
        if padding == "EXPLICIT" and explicit:
            raise ValueError("'EXPLICIT' is not a valid value for `padding`. To use explicit padding, `padding` "
                             "must be a list.")
        if padding not in ("SAME", "VALID"):
            allowed = '"SAME", "VALID", "EXPLICIT"' if explicit else '"SAME", "VALID"'
            raise errors.invalid_argument(op_type, f"Value for attr 'padding' of \"{padding}\" is not in the list "
                                                   f"of allowed values: {allowed}")
        return padding
    if not explicit or not isinstance(padding, tuple):
        raise TypeError(f"Expected string for argument 'padding' not {_listed(padding)!r}.")
    for i, pair in enumerate(padding):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ValueError("When `padding` is a list, each element of `padding` must be a list/tuple of size 2. "
                             f"Received: padding={_listed(padding)} with element at index {i}")
    if len(padding) != rank:
        raise ValueError(f"When padding is a list, it must be of size {rank}. Received: padding="
                         f"{_listed(padding)} of size {len(padding)}")
    if any(p < 0 for pair in padding for p in pair):
        raise errors.invalid_argument(op_type, f"All elements of explicit_paddings must be nonnegative, got "
                                               f"{_listed(padding)}")
    return padding


def _layout(data_format, allowed: tuple[str, ...], op_type: str) -> str:
    data_format = allowed[0] if data_format is None else data_format
    if data_format not in allowed:
        names = ", ".join(f'"{a}"' for a in allowed)
        raise errors.invalid_argument(op_type, f"Value for attr 'data_format' of \"{data_format}\" is not in the "
                                               f"list of allowed values: {names}")
    return data_format


def _spatial_axes(layout: str) -> tuple[int, ...]:
    return tuple(i for i, letter in enumerate(layout) if letter not in "NC")


def _same_pads(size: int, window: int, stride: int) -> tuple[int, int]:
    """TF's "SAME": ceil(size / stride) outputs, the padding split evenly with the odd one after."""
    total = max((-(-size // stride) - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def _pads_along(padding, axis: int, size: int, window: int, stride: int) -> tuple[int, int]:
    """The (before, after) padding of one dimension: "SAME", "VALID" or the explicit pairs."""
    if padding == "SAME":
        return _same_pads(size, window, stride)
    return (0, 0) if padding == "VALID" else padding[axis]


def _pads(shape, window, strides, padding) -> tuple[tuple[int, int], ...]:
    return tuple(_pads_along(padding, a, *dim) for a, dim in enumerate(zip(shape, window, strides)))


def _output_size(op_type: str, size: int, window: int, stride: int, pads: tuple[int, int]) -> int:
    # TF's kernels compute (size + pads - window + stride) / stride, truncating; a negative size is an error.
    out = int((size + pads[0] + pads[1] - window + stride) / stride)
    if out < 0:
        raise errors.invalid_argument(op_type, f"Computed output size would be negative: {out} [input_size: {size}, "
                                               f"effective_filter_size: {window}, stride: {stride}]")
    return out


# -- convolutions -------------------------------------------------------------------------------------------


class _ConvPlan(NamedTuple):
    """A checked convolution: the input layout and the spatial strides, padding and dilations."""

    layout: str
    strides: tuple[int, ...]
    padding: str | tuple[tuple[int, int], ...]
    dilations: tuple[int, ...]
    output_shape: tuple[int, ...]


def _conv_plan(op_type: str, input_shape, filter_shape, strides, padding, dilations, layout: str, *,
               grouped: bool = True, batch_dims: bool = True) -> _ConvPlan:
    """Checks a convolution's shapes and window arguments (full, in `layout` order) as TF's kernels do."""
    n = len(layout) - 2
    rank = n + 2
    if len(input_shape) < rank or (len(input_shape) > rank and not batch_dims):
        raise errors.invalid_argument(op_type, f"convolution input must be {rank}-dimensional: {_dims(input_shape)}")
    if len(filter_shape) != rank:
        raise errors.invalid_argument(op_type, f"filter must be {rank}-dimensional: {_dims(filter_shape)}")
    inner = tuple(input_shape[len(input_shape) - rank:])  # TF folds extra leading dimensions into the batch
    channel = layout.index("C")
    spatial = _spatial_axes(layout)
    for name, values, error in (("strides", strides, _unimplemented), ("dilations", dilations,
                                                                       errors.invalid_argument)):
        if values[0] != 1 or values[channel] != 1:  # TF: UnimplementedError for strides, InvalidArgument for dilations
            raise error(op_type, f"Current implementation does not yet support {name} in the batch and depth "
                                 "dimensions.")
    if min(strides) < 1:
        raise errors.invalid_argument(op_type, f"Stride must be > 0, but got {min(strides)}")
    if min(dilations) < 1:
        raise errors.invalid_argument(op_type, "Dilated rates should be larger than 0.")
    if not isinstance(padding, str) and (padding[0] != (0, 0) or padding[channel] != (0, 0)):
        raise errors.invalid_argument(op_type, "Nonzero explicit padding in the batch or depth dimensions is not "
                                               "supported")
    depth, filter_depth, out_depth = inner[channel], filter_shape[-2], filter_shape[-1]
    if not grouped and depth != filter_depth:
        raise errors.invalid_argument(op_type, f"input and filter must have the same depth: {depth} vs "
                                               f"{filter_depth}")
    if filter_depth == 0 or depth % filter_depth:
        raise errors.invalid_argument(op_type, f"input depth must be evenly divisible by filter depth: {depth} vs "
                                               f"{filter_depth}")
    if out_depth % (depth // filter_depth):
        raise errors.invalid_argument(op_type, f"output depth must be evenly divisible by number of groups: "
                                               f"{out_depth} vs {depth // filter_depth}")
    output = list(inner)
    output[channel] = out_depth
    for i, axis in enumerate(spatial):
        window = (filter_shape[i] - 1) * dilations[axis] + 1
        pads = _pads_along(padding, axis, inner[axis], window, strides[axis])
        output[axis] = _output_size(op_type, inner[axis], window, strides[axis], pads)
    return _ConvPlan(layout, tuple(strides[a] for a in spatial),
                     padding if isinstance(padding, str) else tuple(padding[a] for a in spatial),
                     tuple(dilations[a] for a in spatial), (*input_shape[:len(input_shape) - rank], *output))


def _convolve(input, filters, plan: _ConvPlan):
    """lax.conv_general_dilated in the plan's layout; TF's extra leading batch dimensions are folded into one."""
    rank = len(plan.layout)
    batch = input.shape[:input.ndim - rank + 1]
    x = input.reshape((math.prod(batch), *input.shape[input.ndim - rank + 1:]))
    letters = plan.layout.replace("N", "").replace("C", "")
    groups = x.shape[plan.layout.index("C")] // filters.shape[-2]
    out = jax.lax.conv_general_dilated(x, filters, plan.strides, plan.padding, rhs_dilation=plan.dilations,
                                       dimension_numbers=(plan.layout, letters + "IO", plan.layout),
                                       feature_group_count=groups)
    return out.reshape((*batch, *out.shape[1:]))


def _conv2d_plan(input_shape, filter_shape, strides, padding, data_format, dilations, op_type="Conv2D"):
    channels_first = data_format is not None and data_format.startswith("NC")
    strides = _expand(strides, 2, channels_first, "strides")
    dilations = _expand(dilations, 2, channels_first, "dilations")
    padding = _padding(padding, 4, True, op_type)
    layout = _layout(data_format, ("NHWC", "NCHW"), op_type)
    return _conv_plan(op_type, input_shape, filter_shape, strides, padding, dilations, layout)


def _conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None):
    return _convolve(input, filters, _conv2d_plan(input.shape, filters.shape, strides, padding, data_format,
                                                  dilations))


@abstract_check
def _check_conv2d(input, filters, strides, padding, data_format, dilations):
    _check_dtype("Conv2D", input.dtype, _CONV2D_TYPES)
    _conv2d_plan(input.shape, filters.shape, strides, padding, data_format, dilations)


def _conv1d_plan(input_shape, filter_shape, stride, padding, data_format, dilations):
    """TF's conv1d is its conv2d over an inserted height of 1: (plan, the inserted axis)."""
    if data_format in (None, "NWC", "NHWC"):
        layout, axis = "NHWC", -3
    elif data_format in ("NCW", "NCHW"):
        layout, axis = "NCHW", -2
    else:
        raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
    channels_first = layout == "NCHW"
    strides = (1, *_expand(stride, 1, channels_first, "stride"))
    dilations = (1, *_expand(dilations, 1, channels_first, "dilations"))
    padding = _padding(padding, 4, False, "Conv2D")  # TF's conv1d has no explicit padding
    shape = list(input_shape)
    shape.insert(len(shape) + 1 + axis, 1)
    return _conv_plan("Conv2D", shape, (1, *filter_shape), strides, padding, dilations, layout), axis


def _conv1d(input, filters, stride, padding, data_format="NWC", dilations=None):
    plan, axis = _conv1d_plan(input.shape, filters.shape, stride, padding, data_format, dilations)
    return jnp.squeeze(_convolve(jnp.expand_dims(input, axis), filters[None], plan), axis)


def _check_conv1d(input, filters, stride, padding, data_format, dilations):
    _check_dtype("Conv2D", input.dtype, _CONV2D_TYPES)
    _conv1d_plan(input.shape, filters.shape, stride, padding, data_format, dilations)


def _conv3d_plan(input_shape, filter_shape, strides, padding, data_format, dilations):
    # TF's conv3d passes strides and dilations to its kernel as they are: five entries, a list.
    dilations = (1,) * 5 if dilations is None else dilations
    for name, values in (("strides", strides), ("dilations", dilations)):
        if not isinstance(values, tuple):
            raise TypeError(f"Expected list for '{name}' argument to 'conv3d' Op, not {values!r}.")
        if len(values) != 5:
            what = "Sliding window strides" if name == "strides" else "Dilation rates"
            raise errors.invalid_argument("Conv3D", f"{what} field must specify 5 dimensions")
    padding = _padding(padding, 5, False, "Conv3D")
    layout = _layout(data_format, ("NDHWC", "NCDHW"), "Conv3D")
    return _conv_plan("Conv3D", input_shape, filter_shape, strides, padding, dilations, layout, grouped=False)


def _conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None):
    return _convolve(input, filters, _conv3d_plan(input.shape, filters.shape, strides, padding, data_format,
                                                  dilations))


def _check_conv3d(input, filters, strides, padding, data_format, dilations):
    _check_dtype("Conv3D", input.dtype, _FLOAT_TYPES)
    _conv3d_plan(input.shape, filters.shape, strides, padding, data_format, dilations)


def _depthwise_plan(input_shape, filter_shape, strides, padding, data_format, dilations):
    """A depthwise convolution is a grouped one, one group per input channel: filters [h, w, in, multiplier]
    become [h, w, 1, in * multiplier], output channel c * multiplier + m."""
    op_type = "DepthwiseConv2dNative"
    if not isinstance(strides, tuple):
        raise TypeError(f"Expected list for 'strides' argument to 'depthwise_conv2d_native' Op, not {strides!r}.")
    rate = (1, 1) if dilations is None else dilations
    if not isinstance(rate, tuple):
        raise TypeError(f"'{type(rate).__name__}' object is not iterable")
    if len(rate) != 2:
        raise ValueError(f"tf.nn.depthwise_conv2d takes one dilation rate per spatial dimension (2 values); got "
                         f"dilations={_listed(rate)}")
    if len(strides) != 4:
        raise errors.invalid_argument(op_type, "Sliding window strides field must specify 4 dimensions")
    if max(rate) > 1 and any(s != 1 for s in strides):
        raise ValueError(f"tf.nn.depthwise_conv2d with dilations > 1 needs strides of 1; got dilations="
                         f"{_listed(rate)} and strides={_listed(strides)}")
    padding = _padding(padding, 4, True, op_type)
    layout = _layout(data_format, ("NHWC", "NCHW"), op_type)
    if len(filter_shape) != 4:
        raise errors.invalid_argument(op_type, f"filter must be 4-dimensional: {_dims(filter_shape)}")
    if len(input_shape) == 4 and input_shape[layout.index("C")] != filter_shape[2]:
        raise errors.invalid_argument(op_type, f"input and filter must have the same depth: "
                                               f"{input_shape[layout.index('C')]} vs {filter_shape[2]}")
    dilations = (1, 1, *rate) if layout == "NCHW" else (1, *rate, 1)
    grouped_filter = (*filter_shape[:2], 1, filter_shape[2] * filter_shape[3])
    return _conv_plan(op_type, input_shape, grouped_filter, strides, padding, dilations, layout, batch_dims=False)


def _depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None):
    plan = _depthwise_plan(input.shape, filter.shape, strides, padding, data_format, dilations)
    height, width, depth, multiplier = filter.shape
    return _convolve(input, filter.reshape(height, width, 1, depth * multiplier), plan)


def _check_depthwise_conv2d(input, filter, strides, padding, data_format, dilations):
    _check_dtype("DepthwiseConv2dNative", input.dtype, _FLOAT_TYPES)
    _depthwise_plan(input.shape, filter.shape, strides, padding, data_format, dilations)


def _conv2d_transpose_plan(input_shape, filter_shape, output_shape, strides, padding, data_format, dilations):
    """The convolution that conv2d_transpose transposes: from `output_shape` to the input's shape."""
    op_type = "Conv2DBackpropInput"
    if len(input_shape) != 4:
        raise errors.invalid_argument(op_type, f"input must be 4-dimensional: {_dims(input_shape)}")
    if len(filter_shape) != 4:
        raise errors.invalid_argument(op_type, f"filter must be 4-dimensional: {_dims(filter_shape)}")
    channels_first = data_format is not None and data_format.startswith("NC")
    sizes = tuple(int(s) for s in (output_shape if isinstance(output_shape, tuple) else (output_shape,)))
    if len(sizes) == 2:  # the spatial sizes only: batch from the input, channels from the filters
        sizes = (input_shape[0], filter_shape[2], *sizes) if channels_first else \
            (input_shape[0], *sizes, filter_shape[2])
    elif len(sizes) != 4:
        raise errors.invalid_argument(op_type, f"input_sizes must be 4-dimensional, got: {len(sizes)}")
    plan = _conv2d_plan(sizes, filter_shape, strides, padding, data_format, dilations, op_type)
    if plan.output_shape != tuple(input_shape):
        raise errors.invalid_argument(op_type, f"Conv2DCustomBackpropInput: Size of out_backprop doesn't match "
                                               f"computed: actual = {_dims(input_shape)}, computed = "
                                               f"{_dims(plan.output_shape)} (output_shape {_dims(sizes)}, filter "
                                               f"{_dims(filter_shape)})")
    return plan, sizes


def _conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None):
    plan, sizes = _conv2d_transpose_plan(input.shape, filters.shape, output_shape, strides, padding, data_format,
                                         dilations)
    # The transpose of the linear map y -> conv2d(y, filters), as TF's Conv2DBackpropInput. JAX transposes float
    # maps only: an integer input is computed in float64 (exact below 2**53) and cast back.
    work = input.dtype if jnp.issubdtype(input.dtype, jnp.inexact) else jnp.float64
    x, filters = input.astype(work), filters.astype(work)
    if isinstance(plan.padding, str) and (max(plan.strides) == 1 or max(plan.dilations) == 1):
        # the sub-pixel form (conv_transpose.py): XLA differentiates linear_transpose's form with respect to the
        # filters through a slow dilated convolution on a CPU
        channels_first = plan.layout == "NCHW"
        out = conv_transpose.transposed(jnp.moveaxis(x, 1, -1) if channels_first else x, filters, plan.strides,
                                        plan.padding.lower(), plan.dilations,
                                        sizes[2:] if channels_first else sizes[1:3])
        return (jnp.moveaxis(out, -1, 1) if channels_first else out).astype(input.dtype)
    (out,) = jax.linear_transpose(lambda y: _convolve(y, filters, plan), jax.ShapeDtypeStruct(sizes, work))(x)
    return out.astype(input.dtype)


def _check_conv2d_transpose(input, filters, output_shape, strides, padding, data_format, dilations):
    _check_dtype("Conv2DBackpropInput", input.dtype, _CONV2D_TYPES)
    _conv2d_transpose_plan(input.shape, filters.shape, output_shape, strides, padding, data_format, dilations)


_CONV2D_DOC = """Same semantics as tf.nn.conv2d; computed with jax.lax.conv_general_dilated.

`strides` and `dilations` are an int, one value per spatial dimension, or one per input dimension (batch and
channels 1); `padding` is "SAME", "VALID" or TF's explicit list of (before, after) pairs; a filter with a fraction
of the input's channels makes a grouped convolution, as in TF.

>>> import tapejax as tf
>>> image = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
>>> print(tf.nn.conv2d(image, tf.ones([2, 2, 1, 1]), strides=2, padding="VALID")[0, :, :, 0])
tf.Tensor(
[[10. 18.]
 [42. 50.]], shape=(2, 2), dtype=float32)
"""
_DEPTHWISE_DOC = """Same semantics as tf.nn.depthwise_conv2d; computed with jax.lax.conv_general_dilated, one group
per input channel (output channel c * channel_multiplier + m).

>>> import tapejax as tf
>>> print(tf.nn.depthwise_conv2d(tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 2, 1]), [1, 1, 1, 1], "VALID").shape)
(1, 2, 2, 2)

Differences from TensorFlow: dilations > 1 together with strides > 1 raise ValueError; TF warns that it does not
support them and returns a result that is neither a strided nor a dilated convolution. The input must have rank 4.
"""
_CONV2D_TRANSPOSE_DOC = """Same semantics as tf.nn.conv2d_transpose: the transpose of tf.nn.conv2d from `output_shape`
to the input's shape, as TF's Conv2DBackpropInput. `output_shape` may also give the spatial sizes only. With "SAME"
or "VALID" padding it is computed as one ordinary convolution per output residue of the stride, interleaved
(tapejax/ops/conv_transpose.py: fast to differentiate on XLA); with explicit paddings, as JAX's linear_transpose.

>>> import tapejax as tf
>>> print(tf.nn.conv2d_transpose(tf.ones([1, 2, 2, 1]), tf.ones([2, 2, 1, 1]), [1, 4, 4, 1], 2)[0, :, :, 0])
tf.Tensor(
[[1. 1. 1. 1.]
 [1. 1. 1. 1.]
 [1. 1. 1. 1.]
 [1. 1. 1. 1.]], shape=(4, 4), dtype=float32)

Differences from TensorFlow: int32 inputs are computed in float64 (exact up to 2**53) and cast back.
"""
_CONV = ("strides", "padding", "data_format", "dilations")
conv1d = op("nn.conv1d", _conv1d, static=("stride", "padding", "data_format", "dilations"), op_type="Conv2D",
            check=_check_conv1d)
conv2d = op("nn.conv2d", _conv2d, static=_CONV, op_type="Conv2D", check=_check_conv2d, doc=_CONV2D_DOC)
conv3d = op("nn.conv3d", _conv3d, static=_CONV, op_type="Conv3D", check=_check_conv3d)
depthwise_conv2d = op("nn.depthwise_conv2d", _depthwise_conv2d, static=_CONV, op_type="DepthwiseConv2dNative",
                      check=_check_depthwise_conv2d, doc=_DEPTHWISE_DOC)
conv2d_transpose = op("nn.conv2d_transpose", _conv2d_transpose, static=("output_shape", *_CONV),
                      op_type="Conv2DBackpropInput", check=_check_conv2d_transpose, doc=_CONV2D_TRANSPOSE_DOC)


# -- pooling ------------------------------------------------------------------------------------------------


class _PoolPlan(NamedTuple):
    """A checked pooling: the axis TF inserts for 1-D pooling (or None), the full window, strides and padding."""

    axis: int | None
    window: tuple[int, ...]
    strides: tuple[int, ...]
    padding: str | tuple[tuple[int, int], ...]


def _pool_plan(kind: str, op_type: str, shape, window, strides, padding, layout: str, axis=None) -> _PoolPlan:
    """Checks a pooling's shape and (full) window arguments as TF's kernels do."""
    if len(shape) != len(layout):
        raise errors.invalid_argument(op_type, f"Input must be {len(layout)}-dimensional: {_dims(shape)}")
    if min(window) < 1:
        raise errors.invalid_argument(op_type, f"Sliding window ksize must be positive. The specified or inferred "
                                               f"ksize is: {','.join(map(str, window))}")
    if min(strides) < 1:
        raise errors.invalid_argument(op_type, f"Stride must be > 0, but got {min(strides)}")
    if window[0] != 1 or strides[0] != 1:
        raise _unimplemented(op_type, "Pooling is not yet supported on the batch dimension.")
    channel = layout.index("C")
    spatial = _spatial_axes(layout)
    if window[channel] != 1 or strides[channel] != 1:
        # TF pools across channels only in 2-D max pooling, and then across nothing else.
        if kind != "max" or len(layout) != 4:
            raise _unimplemented(op_type, "Pooling is not yet supported on the depth dimension.")
        if any(window[a] != 1 or strides[a] != 1 for a in spatial):
            raise _unimplemented(op_type, "MaxPooling supports exactly one of pooling across depth or pooling "
                                          "across width/height.")
        if window[channel] != strides[channel]:
            raise _unimplemented(op_type, "Depthwise max pooling requires the depth window to equal the depth "
                                          "stride.")
        if shape[channel] % window[channel]:
            raise errors.invalid_argument(op_type, "Depthwise max pooling requires the depth window to evenly "
                                                   "divide the input depth.")
    if not isinstance(padding, str):
        if padding[0] != (0, 0) or padding[channel] != (0, 0):
            raise errors.invalid_argument(op_type, "Nonzero explicit padding in the batch or depth dimensions is "
                                                   "not supported")
        if any(p >= window[a] for a in spatial for p in padding[a]):
            raise errors.invalid_argument(op_type, "Explicit padding must be smaller than the pooling window: "
                                                   f"padding {_listed(padding)}, ksize {_listed(window)}")
    for a in spatial:
        _output_size(op_type, shape[a], window[a], strides[a], _pads_along(padding, a, shape[a], window[a],
                                                                            strides[a]))
    return _PoolPlan(axis, window, strides, padding)


def _pool2d_plan(kind, shape, ksize, strides, padding, data_format, op_type):
    data_format = "NHWC" if data_format is None else data_format
    channels_first = data_format.startswith("NC")
    ksize = _expand(ksize, 2, channels_first, "ksize")
    strides = _expand(strides, 2, channels_first, "strides")
    if isinstance(padding, tuple) and data_format == "NCHW_VECT_C":
        raise ValueError(f"`data_format='NCHW_VECT_C'` is not supported with explicit padding. Received: "
                         f"padding={_listed(padding)}")
    padding = _padding(padding, 4, kind == "max", op_type)  # TF's avg_pool has no explicit padding
    layout = _layout(data_format, ("NHWC", "NCHW"), op_type)
    return _pool_plan(kind, op_type, shape, ksize, strides, padding, layout)


def _pool1d_plan(kind, shape, ksize, strides, padding, data_format, op_type):
    """TF pools in 1-D with its 2-D op over an inserted height of 1."""
    data_format = "NWC" if data_format is None else data_format
    channels_first = data_format.startswith("NC")
    ksize = (1, *_expand(ksize, 1, channels_first, "ksize"))
    strides = (1, *_expand(strides, 1, channels_first, "strides"))
    if isinstance(padding, tuple) and data_format == "NCHW_VECT_C":
        raise ValueError(f"`data_format='NCHW_VECT_C'` is not supported with explicit padding. Received: "
                         f"padding={_listed(padding)}")
    padding = _padding(padding, 3, kind == "max", op_type)
    if isinstance(padding, tuple):
        padding = ((0, 0), *padding)
    layout, axis = ("NHWC", 1) if data_format == "NWC" else ("NCHW", 2)
    shape = list(shape)
    shape.insert(min(axis, len(shape)), 1)
    return _pool_plan(kind, op_type, shape, ksize, strides, padding, layout, axis)


def _pool3d_plan(kind, shape, ksize, strides, padding, data_format, op_type):
    data_format = "NDHWC" if data_format is None else data_format
    channels_first = data_format.startswith("NC")
    ksize = _expand(ksize, 3, channels_first, "ksize")
    strides = _expand(strides, 3, channels_first, "strides")
    padding = _padding(padding, 5, False, op_type)
    layout = _layout(data_format, ("NDHWC", "NCDHW"), op_type)
    return _pool_plan(kind, op_type, shape, ksize, strides, padding, layout)


def _pool_any_plan(kind, shape, ksize, strides, padding, data_format, op_type):
    """tf.nn.max_pool / avg_pool: 1-, 2- or 3-D pooling by the input's rank."""
    n = len(shape) - 2
    if not 1 <= n <= 3:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={tuple(shape)} of rank "
                         f"{n + 2}.")
    channels_first = data_format is not None and data_format.startswith("NC")
    if isinstance(padding, tuple) and data_format == "NCHW_VECT_C":
        raise ValueError(f"`data_format='NCHW_VECT_C'` is not supported with explicit padding. Received: "
                         f"padding={_listed(padding)}")
    ksize = _expand(ksize, n, channels_first, "ksize")
    strides = _expand(strides, n, channels_first, "strides")
    if isinstance(padding, tuple) and n == 3 and kind == "max":
        raise ValueError(f"Explicit padding is not supported with an input tensor of rank 5. Received: "
                         f"padding={_listed(padding)}")
    plan = {1: _pool1d_plan, 2: _pool2d_plan, 3: _pool3d_plan}[n]
    return plan(kind, shape, ksize, strides, padding, data_format, op_type if n < 3 else op_type + "3D")


def _window_counts(shape, window, strides, pads) -> np.ndarray:
    """How many input elements (padding excluded) each window of an average pooling covers, broadcastable to the
    output: TF's AvgPool divides by this count, not by the window size."""
    counts = np.ones((1,) * len(shape), np.int64)
    for d, (size, k, s, (before, after)) in enumerate(zip(shape, window, strides, pads)):
        if before == after == 0:  # every window lies inside along d
            counts = counts * k
            continue
        starts = np.arange((size + before + after - k) // s + 1) * s - before
        along = np.minimum(starts + k, size) - np.maximum(starts, 0)
        counts = counts * along.reshape([-1 if i == d else 1 for i in range(len(shape))])
    return counts


def _pool(kind: str, input, plan: _PoolPlan):
    x = input if plan.axis is None else jnp.expand_dims(input, plan.axis)
    pads = _pads(x.shape, plan.window, plan.strides, plan.padding)
    if kind == "max":
        out = nan_extrema.max_pool(x, plan.window, plan.strides, pads)  # NaN skipped; TF's MaxPoolGrad (3D too)
    else:
        total = jax.lax.reduce_window(x, np.array(0, x.dtype), jax.lax.add, plan.window, plan.strides, pads)
        out = total / jnp.asarray(_window_counts(x.shape, plan.window, plan.strides, pads), x.dtype)
    return out if plan.axis is None else jnp.squeeze(out, plan.axis)


_MAX_POOL_TYPES = (*_FLOAT_TYPES, *(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                                            np.uint16)))


_MAX_POOL_DOC = """Same semantics as tf.{name}; computed with jax.lax.reduce_window. As TF's CPU kernels, NaN is
skipped and a window of NaN or -inf only gives the dtype's lowest value. The gradient is TF's: in 1-D and 2-D it goes
to the first element of each window (row-major), replaced by each later element greater than it (MaxPoolGrad); in
3-D in full to every element within 1e-5 of the max (MaxPool3DGrad).

>>> import tapejax as tf
>>> print(tf.nn.max_pool2d(tf.reshape(tf.range(9.0), [1, 3, 3, 1]), 2, 2, "SAME")[0, :, :, 0])
tf.Tensor(
[[4. 5.]
 [7. 8.]], shape=(2, 2), dtype=float32)

Differences from TensorFlow: channels-first inputs have a gradient (TF's CPU kernels have none).
"""
_AVG_POOL_DOC = """Same semantics as tf.{name}; computed with jax.lax.reduce_window. With "SAME" padding a window
at the border averages only the input elements it covers, as TF's AvgPool does.

>>> import tapejax as tf
>>> print(tf.nn.avg_pool2d(tf.reshape(tf.range(1.0, 10.0), [1, 3, 3, 1]), 2, 2, "SAME")[0, :, :, 0])
tf.Tensor(
[[3.  4.5]
 [7.5 9. ]], shape=(2, 2), dtype=float32)

Differences from TensorFlow: a window across channels raises UnimplementedError (TF returns an empty tensor).
"""


def _pool_row(name: str, kind: str, plan_fn, op_type: str, default_format):
    """One pooling row: TF's signature, its checks, and lax.reduce_window."""
    allowed = _MAX_POOL_TYPES if kind == "max" else _FLOAT_TYPES
    doc = (_MAX_POOL_DOC if kind == "max" else _AVG_POOL_DOC).replace("{name}", name)

    def impl(input, ksize, strides, padding, data_format=default_format):
        return _pool(kind, input, plan_fn(kind, input.shape, ksize, strides, padding, data_format, op_type))

    def check(input, ksize, strides, padding, data_format):
        _check_dtype(op_type, input.dtype, allowed)
        plan_fn(kind, input.shape, ksize, strides, padding, data_format, op_type)

    return op(name, impl, static=("ksize", "strides", "padding", "data_format"), op_type=op_type, check=check,
              doc=doc)


max_pool = _pool_row("nn.max_pool", "max", _pool_any_plan, "MaxPool", None)
max_pool1d = _pool_row("nn.max_pool1d", "max", _pool1d_plan, "MaxPool", "NWC")
max_pool2d = _pool_row("nn.max_pool2d", "max", _pool2d_plan, "MaxPool", "NHWC")
max_pool3d = _pool_row("nn.max_pool3d", "max", _pool3d_plan, "MaxPool3D", "NDHWC")
avg_pool = _pool_row("nn.avg_pool", "avg", _pool_any_plan, "AvgPool", None)
avg_pool1d = _pool_row("nn.avg_pool1d", "avg", _pool1d_plan, "AvgPool", "NWC")
avg_pool2d = _pool_row("nn.avg_pool2d", "avg", _pool2d_plan, "AvgPool", "NHWC")
avg_pool3d = _pool_row("nn.avg_pool3d", "avg", _pool3d_plan, "AvgPool3D", "NDHWC")


# -- bias -----------------------------------------------------------------------------------------------------


def _channels_first(data_format) -> bool:
    if data_format is None:
        return False
    if data_format.startswith("NC"):
        return True
    if data_format.startswith("N") and data_format.endswith("C"):
        return False
    raise ValueError(f"`data_format` must be of the form `N...C` or `NC...`. Received: data_format={data_format}")


def _bias_add(value, bias, data_format=None):
    if _channels_first(data_format):
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return value + bias


@abstract_check
def _check_bias_add(value, bias, data_format):
    channels_first = _channels_first(data_format)
    if value.ndim < 2:
        raise errors.invalid_argument("BiasAdd", f"Input tensor must be at least 2D: {_dims(value.shape)}")
    if bias.ndim != 1:
        raise errors.invalid_argument("BiasAdd", f"Biases must be 1D: {_dims(bias.shape)}")
    if bias.shape[0] != value.shape[1 if channels_first else -1]:
        raise errors.invalid_argument("BiasAdd", f"Must provide as many biases as the last dimension of the input "
                                                 f"tensor: {_dims(bias.shape)} vs. {_dims(value.shape)}")


bias_add = op("nn.bias_add", _bias_add, static=("data_format",), check=_check_bias_add)


# -- losses -------------------------------------------------------------------------------------------------


def _softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    # TF's kernel takes labels in the logits' dtype, and its gradient with respect to the logits is
    # softmax(logits) - labels: the derivative of -sum(labels * log_softmax(logits)) only when the labels sum to
    # one (otherwise it is sum(labels) * softmax - labels). The stop_gradient term keeps the value and makes JAX's
    # derivative TF's; the labels' gradient stays -log_softmax(logits), as TF's.
    labels = labels.astype(logits.dtype)
    lse = jax.nn.logsumexp(logits, axis=axis)
    mass = jnp.sum(labels, axis=axis)
    return lse + (mass - 1) * jax.lax.stop_gradient(lse) - jnp.sum(labels * logits, axis=axis)


def _sparse_softmax_cross_entropy_with_logits(labels, logits):
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    # Out-of-range labels are errors on concrete inputs (the check); traced, they give NaN, as TF on GPU.
    return -jnp.take_along_axis(log_probs, labels[..., None], axis=-1, mode="fill")[..., 0]


def _check_sparse_softmax_cross_entropy_with_logits(labels, logits):
    op_type = "SparseSoftmaxCrossEntropyWithLogits"
    if labels.dtype not in (np.int32, np.int64):
        raise errors.invalid_argument(op_type, f"Value for attr 'Tlabels' of {tf_type_string(labels.dtype)} is not "
                                               "in the list of allowed values: int32, int64")
    if labels.ndim != logits.ndim - 1:
        raise ValueError(f"`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: labels.shape="
                         f"{labels.shape} of rank {labels.ndim} and logits.shape={logits.shape} of rank {logits.ndim}")
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                         f"labels.shape={labels.shape} and logits.shape={logits.shape}")
    _check_dtype(op_type, logits.dtype, _FLOAT_TYPES)
    if not isinstance(labels, jax.core.Tracer):
        values = np.asarray(labels)
        outside = (values < 0) | (values >= logits.shape[-1])
        if outside.any():
            raise errors.invalid_argument(op_type, f"Received a label value of {values[outside][0]} which is "
                                                   f"outside the valid range of [0, {logits.shape[-1]}).  Label "
                                                   f"values: {' '.join(map(str, values.ravel()))}")


def _sigmoid_cross_entropy_with_logits(labels=None, logits=None):
    # TF's formula, max(x, 0) - x * z + log(1 + exp(-|x|)), with its `where`s: the same derivative at x = 0.
    zeros = jnp.zeros_like(logits)
    positive = logits >= zeros
    relu_logits = jnp.where(positive, logits, zeros)
    neg_abs_logits = jnp.where(positive, -logits, logits)
    return (relu_logits - logits * labels) + jnp.log1p(jnp.exp(neg_abs_logits))


@abstract_check
def _check_sigmoid_cross_entropy_with_logits(labels, logits):
    if labels is None or logits is None:
        raise ValueError("Both `labels` and `logits` must be provided for sigmoid_cross_entropy_with_logits. "
                         f"Received: labels={labels} and logits={logits}")
    if labels.shape != logits.shape:
        raise ValueError(f"`logits` and `labels` must have the same shape, received ({logits.shape} vs "
                         f"{labels.shape}).")


def _log_poisson_loss(targets, log_input, compute_full_loss=False):
    result = jnp.exp(log_input) - log_input * targets
    if compute_full_loss:
        # Stirling's approximation of log(targets!), added where targets > 1 (TF's formula and `where`).
        stirling = targets * jnp.log(targets) - targets + 0.5 * jnp.log(2 * math.pi * targets)
        result = result + jnp.where((targets >= 0) & (targets <= 1), jnp.zeros_like(targets), stirling)
    return result


def _check_log_poisson_loss(targets, log_input, compute_full_loss):
    if targets.shape != log_input.shape:
        raise ValueError(f"`log_input` and `targets` must have the same shape, received ({log_input.shape} vs "
                         f"{targets.shape}).")


def _l2_loss(t):
    return (jnp.sum(jnp.square(t)) / 2).astype(t.dtype)


_SOFTMAX_CROSS_ENTROPY_DOC = """Same semantics as tf.nn.softmax_cross_entropy_with_logits: -sum(labels *
log_softmax(logits)) along `axis`, the labels taken in the logits' dtype. As in TF, the gradient with respect to the
logits is softmax(logits) - labels (also for labels that do not sum to one) and with respect to the labels
-log_softmax(logits).

>>> import tapejax as tf
>>> print(tf.nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], [[0.0, 0.0]]))
tf.Tensor([0.6931472], shape=(1,), dtype=float32)

Differences from TensorFlow: second derivatives that mix labels and logits differ (TF's gradient of the logits'
gradient with respect to the labels is zero); the second derivative in the logits alone is TF's.
"""
softmax_cross_entropy_with_logits = op("nn.softmax_cross_entropy_with_logits", _softmax_cross_entropy_with_logits,
                                       static=("axis",), same_dtype=False, doc=_SOFTMAX_CROSS_ENTROPY_DOC)
sparse_softmax_cross_entropy_with_logits = op(
    "nn.sparse_softmax_cross_entropy_with_logits", _sparse_softmax_cross_entropy_with_logits, same_dtype=False,
    check=_check_sparse_softmax_cross_entropy_with_logits)
sigmoid_cross_entropy_with_logits = op("nn.sigmoid_cross_entropy_with_logits", _sigmoid_cross_entropy_with_logits,
                                       check=_check_sigmoid_cross_entropy_with_logits)
log_poisson_loss = op("nn.log_poisson_loss", _log_poisson_loss, static=("compute_full_loss",),
                      check=_check_log_poisson_loss)
l2_loss = op("nn.l2_loss", _l2_loss, check=lambda t: _check_dtype("L2Loss", t.dtype, _FLOAT_TYPES))


# -- normalisation ------------------------------------------------------------------------------------------


def _l2_normalize(x, axis=None, epsilon=1e-12, dim=None):
    # x / sqrt(max(sum(x**2), epsilon)); at the tie sum(x**2) == epsilon the gradient goes to the sum, as TF's
    # maximum sends it.
    axis = _axis(dim if axis is None else axis)
    if jnp.iscomplexobj(x):
        real, imag = jnp.real(x), jnp.imag(x)
        square_sum = jnp.sum(real * real + imag * imag, axis=axis, keepdims=True)
        inv_norm = zero_cotangent.rsqrt(_maximum(square_sum, jnp.asarray(epsilon, square_sum.dtype)))
        return jax.lax.complex(real * inv_norm, imag * inv_norm)
    square_sum = jnp.sum(jnp.square(x), axis=axis, keepdims=True)
    return x * zero_cotangent.rsqrt(_maximum(square_sum, jnp.asarray(epsilon, x.dtype)))


@abstract_check
def _check_l2_normalize(x, axis, epsilon, dim):
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    if not (jnp.issubdtype(x.dtype, jnp.inexact)):
        raise TypeError(f"Cannot convert {epsilon} to EagerTensor of dtype {dtypes.from_numpy(x.dtype).name}")


def _moments(x, axes, shift=None, keepdims=False):
    # TF: float16 is computed in float32; the variance is the mean squared distance to the mean with the gradient
    # through that mean stopped (JAX's first derivative is then TF's, and so are the second derivatives).
    # `shift` is unused, as in TF.
    y = x.astype(jnp.float32) if x.dtype == jnp.float16 else x
    axes = _axis(axes)
    mean = _reduce_mean(y, axes, keepdims=True)
    deviation = y - jax.lax.stop_gradient(mean)
    variance = _reduce_mean(deviation * jnp.conj(deviation), axes, keepdims=keepdims)
    if not keepdims:
        mean = jnp.squeeze(mean, axes)
    return mean.astype(x.dtype), variance.astype(x.dtype)


def _batch_normalization(x, mean, variance, offset, scale, variance_epsilon):
    # TF's order of operations; the per-channel factors are cast to x's dtype (float64 x with float32 moments is
    # no error in TF).
    inv = zero_cotangent.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    shift = offset - mean * inv if offset is not None else -mean * inv
    return x * inv.astype(x.dtype) + shift.astype(x.dtype)


l2_normalize = op("nn.l2_normalize", _l2_normalize, static=("axis", "epsilon", "dim"), check=_check_l2_normalize,
                  op_type="L2Normalize")
_MOMENTS_DOC = """Same semantics as tf.nn.moments: the (mean, variance) of `x` over `axes`, float16 computed in
float32, integers truncated as TF's reduce_mean truncates. As TF, the variance does not differentiate through the
mean: first derivatives are the true ones, second derivatives TF's.

>>> import tapejax as tf
>>> mean, variance = tf.nn.moments(tf.constant([1.0, 2.0, 3.0, 6.0]), axes=[0])
>>> print(mean, variance)
tf.Tensor(3.0, shape=(), dtype=float32) tf.Tensor(3.5, shape=(), dtype=float32)
"""
moments = op("nn.moments", _moments, static=("axes", "shift", "keepdims"), doc=_MOMENTS_DOC)
batch_normalization = op("nn.batch_normalization", _batch_normalization, static=("variance_epsilon",),
                         same_dtype=(1, 2, 3, 4))


# -- embeddings ---------------------------------------------------------------------------------------------


def _embedding_lookup(params, ids, max_norm=None):
    # Out-of-range ids are errors on concrete inputs (the check); traced, they give zeros, as TF on GPU.
    result = jnp.take(params, ids, axis=0, mode="fill", fill_value=0)
    if max_norm is None:
        return result
    # Each embedding (the axes after the ids' own) is clipped to l2-norm max_norm, as tf.clip_by_norm does.
    return _clip_by_norm(result, jnp.asarray(max_norm), axes=tuple(range(ids.ndim, result.ndim)))


def _check_embedding_lookup(params, ids, max_norm):
    if not jnp.issubdtype(ids.dtype, jnp.integer) or ids.dtype.itemsize < 2:
        raise errors.invalid_argument("GatherV2", f"Value for attr 'Tindices' of {tf_type_string(ids.dtype)} is not "
                                                  "in the list of allowed values: int16, int32, int64")
    if max_norm is not None:
        _check_max_norm(params.dtype)
    if params.ndim == 0:
        raise errors.invalid_argument("GatherV2", "params must be at least 1 dimensional")
    if not isinstance(ids, jax.core.Tracer):
        _check_ids(np.asarray(ids), params.shape[0])


def _check_max_norm(dtype) -> None:
    if not jnp.issubdtype(dtype, jnp.inexact):
        raise errors.invalid_argument("Sqrt", f"Value for attr 'T' of {tf_type_string(dtype)} is not in the list of "
                                              "allowed values: bfloat16, half, float, double, complex64, complex128")


def _check_ids(ids: np.ndarray, size: int) -> None:
    outside = (ids < 0) | (ids >= size)
    if outside.any():
        position = tuple(int(i) for i in np.argwhere(outside)[0])
        raise errors.invalid_argument("GatherV2", f"indices[{','.join(map(str, position))}] = {ids[position]} is "
                                                  f"not in [0, {size})")


def _div_strategy(ids, sizes: list[int]):
    """TF's "div" sharding of N rows over P shards, in order, the first N % P shards one row longer: each id's
    shard and row in it."""
    per_shard, extras = divmod(sum(sizes), len(sizes))
    boundary = extras * (per_shard + 1)
    long = ids < boundary
    shard = jnp.where(long, ids // (per_shard + 1), extras + (ids - boundary) // max(per_shard, 1))
    row = jnp.where(long, ids % (per_shard + 1), (ids - boundary) % max(per_shard, 1))
    return shard, row


_embedding_lookup_op = op("nn.embedding_lookup", _embedding_lookup, static=("max_norm",), same_dtype=False,
                          op_type="GatherV2", check=_check_embedding_lookup)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Looks up `ids` in the embedding table `params` (`tf.nn.embedding_lookup`).

    `params` is one tensor, or a list of shards of one table split by TF's "div" strategy: of N rows in P shards,
    the first N % P shards hold one row more, and id i lives in shard i // rows-per-shard, in order. With
    `max_norm`, each looked-up embedding whose l2-norm exceeds it is scaled down to it.

    >>> import tapejax as tf
    >>> print(tf.nn.embedding_lookup(tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]), [2, 0]))
    tf.Tensor(
    [[4. 5.]
     [0. 1.]], shape=(2, 2), dtype=float32)
    """
    if not isinstance(params, list | tuple):
        return _lookup(params, ids, max_norm)
    if not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    if len(params) == 1:
        return _lookup(params[0], ids, max_norm)
    # One lookup in the concatenated shards: row r of shard p is row offset[p] + r of the concatenation. An id
    # past the end of its shard is TF's error, not the next shard's row.
    sizes = [int(p.shape[0]) if hasattr(p, "shape") else int(np.shape(p)[0]) for p in params]
    ids_array = jnp.asarray(to_array(ids))
    flat = ids_array.reshape(-1)
    shard, row = _div_strategy(flat, sizes)
    if not isinstance(flat, jax.core.Tracer):
        _check_ids(np.asarray(flat), sum(sizes))
        for p, size in enumerate(sizes):
            _check_ids(np.where(np.asarray(shard) == p, np.asarray(row), 0), size)
    offsets = jnp.asarray(np.cumsum([0, *sizes[:-1]]), flat.dtype)
    rows = EagerTensor(offsets[jnp.clip(shard, 0, len(sizes) - 1)] + row)
    table = OPERATORS["concat"](list(params), axis=0)
    found = _lookup(table, rows, max_norm)
    return OPERATORS["reshape"](found, (*ids_array.shape, *found.shape[1:]))


def _lookup(params, ids, max_norm):
    """One table's lookup. With `max_norm`, TF's two ops: the gather, then `tf.clip_by_norm` of each embedding (the
    axes after the ids' own), so that the table's gradient is the gather's IndexedSlices, as TF's is."""
    found = _embedding_lookup_op(params, ids)
    if max_norm is None:
        return found
    _check_max_norm(found.dtype.dtype)
    n_row_axes = len(params.shape) - 1 if hasattr(params, "shape") else np.ndim(params) - 1
    axes = tuple(range(len(found.shape) - n_row_axes, len(found.shape)))
    return OPERATORS["clip_by_norm"](found, max_norm, axes=axes)


OPERATORS["nn.embedding_lookup"] = embedding_lookup  # the row's public callable is this wrapper (sharded params)
