"""tf.math: one row per op. Derivatives are JAX's; where TF's differ at ties and kinks, the row's JAX function
is written so that JAX's derivative of it is TF's (maximum/minimum send a tie to `x`; abs and relu have 0 at 0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.convert import to_array
from tapejax._src.registry import op
from tapejax._src.tensor import OPERATORS, EagerTensor


def _unary(name: str, fn, **kw):
    return op(name, fn, signature="x", **kw)


# -- arithmetic ---------------------------------------------------------------------------------------------

def _truediv(x, y):
    # TF: int8/int16/uint8/uint16 divide in float32, int32/int64 in float64.
    if jnp.issubdtype(x.dtype, jnp.integer):
        target = jnp.float32 if jnp.dtype(x.dtype).itemsize <= 2 else jnp.float64
        x, y = x.astype(target), y.astype(target)
    return jnp.true_divide(x, y)


def _divide(x, y):
    return _truediv(x, y)


def _check_pow(x, y):
    if (jnp.issubdtype(x.dtype, jnp.integer) and not isinstance(y, jax.core.Tracer)
            and np.any(np.asarray(y) < 0)):
        raise errors.invalid_argument("Pow", "Integers to negative integer powers are not allowed")


def _check_truediv(x, y):
    # TF's `/` and tf.math.truediv check dtypes in Python, before any op runs, and raise TypeError.
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {dtypes.from_numpy(x.dtype)!r} != "
                        f"{dtypes.from_numpy(y.dtype)!r}.")


add = op("math.add", jnp.add, signature="x, y", op_type="AddV2")
subtract = op("math.subtract", jnp.subtract, signature="x, y", op_type="Sub")
multiply = op("math.multiply", jnp.multiply, signature="x, y", op_type="Mul")
truediv = op("math.truediv", _truediv, signature="x, y", op_type="RealDiv", check=_check_truediv)
divide = op("math.divide", _divide, signature="x, y", op_type="RealDiv", check=_check_truediv)
floordiv = op("math.floordiv", jnp.floor_divide, signature="x, y", differentiable=False, op_type="FloorDiv")
floormod = op("math.floormod", jnp.remainder, signature="x, y", op_type="FloorMod")
pow = op("math.pow", jnp.power, signature="x, y", check=_check_pow)
negative = _unary("math.negative", jnp.negative, op_type="Neg")


def _abs(x):
    # TF's gradient of |x| at 0 is 0 (sign(0)); JAX's is 1. The `where` makes JAX's derivative TF's.
    magnitude = jnp.abs(x)
    return jnp.where(x == 0, jnp.zeros_like(magnitude), magnitude)


abs = _unary("math.abs", _abs)
sign = _unary("math.sign", jnp.sign)
square = _unary("math.square", jnp.square)
sqrt = _unary("math.sqrt", jnp.sqrt)
rsqrt = _unary("math.rsqrt", jax.lax.rsqrt)
reciprocal = _unary("math.reciprocal", jnp.reciprocal)
squared_difference = op("math.squared_difference", lambda x, y: jnp.square(x - y), signature="x, y")

# -- exponentials, logs, trigonometry -----------------------------------------------------------------------

exp = _unary("math.exp", jnp.exp)
expm1 = _unary("math.expm1", jnp.expm1)
log = _unary("math.log", jnp.log)
log1p = _unary("math.log1p", jnp.log1p)
sin = _unary("math.sin", jnp.sin)
cos = _unary("math.cos", jnp.cos)
tan = _unary("math.tan", jnp.tan)
asin = _unary("math.asin", jnp.arcsin)
acos = _unary("math.acos", jnp.arccos)
atan = _unary("math.atan", jnp.arctan)
atan2 = op("math.atan2", jnp.arctan2, signature="y, x")
sinh = _unary("math.sinh", jnp.sinh)
cosh = _unary("math.cosh", jnp.cosh)
tanh = _unary("math.tanh", jnp.tanh)
asinh = _unary("math.asinh", jnp.arcsinh)
acosh = _unary("math.acosh", jnp.arccosh)
atanh = _unary("math.atanh", jnp.arctanh)
sigmoid = _unary("math.sigmoid", jax.nn.sigmoid)
log_sigmoid = _unary("math.log_sigmoid", jax.nn.log_sigmoid)


def _softplus(features):
    # Written so that JAX's derivative is sigmoid(x) to the last bit, as TF's SoftplusGrad computes it
    # (jax.nn.softplus's derivative rounds differently: 0.9999542 instead of TF's 0.9999546 at x = 10). The
    # inner `where`s keep the branch not taken finite, so its zero cotangent stays zero.
    positive = features > 0
    xp = jnp.where(positive, features, 0)
    xn = jnp.where(positive, 0, features)
    return jnp.where(positive, xp + jnp.log1p(jnp.exp(-xp)), jnp.log1p(jnp.exp(xn)))


softplus = op("math.softplus", _softplus)
erf = _unary("math.erf", jax.scipy.special.erf)
real = op("math.real", jnp.real, signature="input")
_imag = op("math.imag", jnp.imag, signature="input")


def imag(input, name=None):
    """The imaginary part (`tf.math.imag`); of a real tensor, zeros that no gradient flows through, as in TF."""
    array = to_array(input)
    if not jnp.iscomplexobj(array):
        return EagerTensor(jnp.zeros(array.shape, array.dtype))
    return _imag(input)


OPERATORS["math.imag"] = imag  # the row's public callable is this wrapper (real inputs never reach the row)
conj = _unary("math.conj", jnp.conj)


# -- ties and kinks as TF has them --------------------------------------------------------------------------

def _maximum(x, y):
    # TF sends the whole gradient to x at a tie (JAX's maximum splits it); NaN in either operand propagates.
    return jnp.where((x >= y) | jnp.isnan(x), x, y)


def _minimum(x, y):
    return jnp.where((x <= y) | jnp.isnan(x), x, y)


maximum = op("math.maximum", _maximum, signature="x, y")
minimum = op("math.minimum", _minimum, signature="x, y")


def _clip_by_value(t, clip_value_min, clip_value_max):
    # TF composes minimum(maximum(t, min), max): the gradient at either bound goes to t.
    return _minimum(_maximum(t, clip_value_min), clip_value_max)


clip_by_value = op("clip_by_value", _clip_by_value)

# -- rounding (no gradient in TF) ---------------------------------------------------------------------------

floor = _unary("math.floor", jnp.floor, differentiable=False)
ceil = _unary("math.ceil", jnp.ceil, differentiable=False)
round = _unary("math.round", jnp.round, differentiable=False)  # half to even, as TF


# -- comparisons and logic (no gradient) --------------------------------------------------------------------

def _compare(name: str, fn, op_type: str = ""):
    return op(name, fn, signature="x, y", differentiable=False, op_type=op_type)


equal = _compare("math.equal", jnp.equal)
not_equal = _compare("math.not_equal", jnp.not_equal)
less = _compare("math.less", jnp.less)
less_equal = _compare("math.less_equal", jnp.less_equal)
greater = _compare("math.greater", jnp.greater)
greater_equal = _compare("math.greater_equal", jnp.greater_equal)
logical_and = _compare("math.logical_and", jnp.logical_and)
logical_or = _compare("math.logical_or", jnp.logical_or)
logical_xor = _compare("math.logical_xor", jnp.logical_xor)
logical_not = _unary("math.logical_not", jnp.logical_not, differentiable=False)
is_nan = _unary("math.is_nan", jnp.isnan, differentiable=False, op_type="IsNan")
is_inf = _unary("math.is_inf", jnp.isinf, differentiable=False, op_type="IsInf")
is_finite = _unary("math.is_finite", jnp.isfinite, differentiable=False, op_type="IsFinite")


def _equal_or_false(fn, on_mismatch: bool):
    # Python's == on tensors (TF 2): elementwise, but a scalar result instead of an error when shapes differ.
    def impl(x, y):
        try:
            jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
        except ValueError:
            return jnp.asarray(on_mismatch)
        return fn(x, y)

    return impl


op("__eq__", _equal_or_false(jnp.equal, False), signature="x, y", differentiable=False, op_type="Equal")
op("__ne__", _equal_or_false(jnp.not_equal, True), signature="x, y", differentiable=False, op_type="NotEqual")
op("__and__", jnp.bitwise_and, signature="x, y", differentiable=False, op_type="LogicalAnd")
op("__or__", jnp.bitwise_or, signature="x, y", differentiable=False, op_type="LogicalOr")
op("__xor__", jnp.bitwise_xor, signature="x, y", differentiable=False, op_type="LogicalXor")
op("__invert__", jnp.invert, signature="x", differentiable=False, op_type="LogicalNot")


# -- reductions ---------------------------------------------------------------------------------------------

def _axis(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _reduce_sum(input_tensor, axis=None, keepdims=False):
    return jnp.sum(input_tensor, axis=_axis(axis), keepdims=keepdims, dtype=input_tensor.dtype)


def _reduce_mean(input_tensor, axis=None, keepdims=False):
    mean = jnp.mean(input_tensor, axis=_axis(axis), keepdims=keepdims)
    return mean.astype(input_tensor.dtype)  # TF keeps integer dtypes (truncating)


def _reduce_max(input_tensor, axis=None, keepdims=False):
    return jnp.max(input_tensor, axis=_axis(axis), keepdims=keepdims)  # JAX splits ties evenly, as TF


def _reduce_min(input_tensor, axis=None, keepdims=False):
    return jnp.min(input_tensor, axis=_axis(axis), keepdims=keepdims)


def _reduce_prod(input_tensor, axis=None, keepdims=False):
    return jnp.prod(input_tensor, axis=_axis(axis), keepdims=keepdims, dtype=input_tensor.dtype)


def _reduce_logsumexp(input_tensor, axis=None, keepdims=False):
    return jax.nn.logsumexp(input_tensor, axis=_axis(axis), keepdims=keepdims)


def _reduce_any(input_tensor, axis=None, keepdims=False):
    return jnp.any(input_tensor, axis=_axis(axis), keepdims=keepdims)


def _reduce_all(input_tensor, axis=None, keepdims=False):
    return jnp.all(input_tensor, axis=_axis(axis), keepdims=keepdims)


_REDUCE = ("axis", "keepdims")
reduce_sum = op("math.reduce_sum", _reduce_sum, static=_REDUCE, op_type="Sum")
reduce_mean = op("math.reduce_mean", _reduce_mean, static=_REDUCE, op_type="Mean")
reduce_max = op("math.reduce_max", _reduce_max, static=_REDUCE, op_type="Max")
reduce_min = op("math.reduce_min", _reduce_min, static=_REDUCE, op_type="Min")
reduce_prod = op("math.reduce_prod", _reduce_prod, static=_REDUCE, op_type="Prod")
reduce_logsumexp = op("math.reduce_logsumexp", _reduce_logsumexp, static=_REDUCE)
reduce_any = op("math.reduce_any", _reduce_any, static=_REDUCE, differentiable=False, op_type="Any")
reduce_all = op("math.reduce_all", _reduce_all, static=_REDUCE, differentiable=False, op_type="All")


def _argmax(input, axis=None, output_type=np.int64):
    return jnp.argmax(input, axis=0 if axis is None else axis).astype(output_type)


def _argmin(input, axis=None, output_type=np.int64):
    return jnp.argmin(input, axis=0 if axis is None else axis).astype(output_type)


argmax = op("math.argmax", _argmax, static=("axis", "output_type"), differentiable=False, op_type="ArgMax")
argmin = op("math.argmin", _argmin, static=("axis", "output_type"), differentiable=False, op_type="ArgMin")


def _add_n(*inputs):
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return total


add_n = op("math.add_n", _add_n, op_type="AddN")


def _clip_by_norm(t, clip_norm, axes=None):
    # TF's formula: t * clip_norm / max(l2norm(t), clip_norm), with a gradient-safe norm at zero; TF casts
    # clip_norm to t's dtype.
    clip_norm = clip_norm.astype(t.dtype)
    squares = jnp.sum(t * t, axis=_axis(axes), keepdims=True)
    positive = squares > 0
    l2norm = jnp.where(positive, jnp.sqrt(jnp.where(positive, squares, 1)), squares)
    return t * clip_norm / _maximum(l2norm, clip_norm)


clip_by_norm = op("clip_by_norm", _clip_by_norm, static=("axes",), same_dtype=False)
