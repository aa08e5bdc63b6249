"""tf.math: one row per op. Derivatives are JAX's; where TF's differ at ties and kinks, the row's JAX function
is written so that JAX's derivative of it is TF's (maximum/minimum send a tie to `x`; abs and relu have 0 at 0).
"""

from __future__ import annotations

import collections
import functools

import jax
import jax.numpy as jnp
import numpy as np

from tapejax._src import dtypes, errors, zero_cotangent
from tapejax._src.convert import to_array
from tapejax._src.deferred import resolve
from tapejax._src.indexed_slices import on_values
from tapejax._src.contracts import COMPLEX, FLOAT, REDUCE, SCAN, Axis, Dtype, NonzeroDivisor, Rule
from tapejax._src.registry import abstract_check, hashable, op
from tapejax._src.tensor import OPERATORS, EagerTensor, Tensor
from tapejax.ops import nan_extrema


def _unary(name: str, fn, **kw):
    return op(name, fn, signature="x", **kw)


# Dtype classes of TF's kernels: TF raises on other dtypes (an int32 `log`) where JAX would promote.
_INEXACT = (Dtype("x"),)  # float and complex
_FLOATING = (Dtype("x", allowed=FLOAT),)  # real floats
_SIGNED = ("int8", "int16", "int32", "int64")
_NUMERIC = (Dtype("x", allowed=(*FLOAT, *_SIGNED, *COMPLEX)),)
_BOOL = (Dtype("x", "y", allowed=("bool",)),)
_INTEGER_DIVISION = (NonzeroDivisor("y"),)


# -- arithmetic ---------------------------------------------------------------------------------------------

def _truediv(x, y):
    # TF: int8/int16/uint8/uint16 divide in float32, int32/int64 in float64.
    if jnp.issubdtype(x.dtype, jnp.integer):
        target = jnp.float32 if jnp.dtype(x.dtype).itemsize <= 2 else jnp.float64
        x, y = x.astype(target), y.astype(target)
    return jnp.true_divide(x, y)


def _divide(x, y):
    return _truediv(x, y)


@abstract_check
def _check_pow(x, y):
    if (jnp.issubdtype(x.dtype, jnp.integer) and not isinstance(y, jax.core.Tracer)
            and np.any(np.asarray(resolve(y)) < 0)):
        raise errors.invalid_argument("Pow", "Integers to negative integer powers are not allowed")


@abstract_check
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
floordiv = op("math.floordiv", jnp.floor_divide, signature="x, y", differentiable=False, op_type="FloorDiv",
              contract=_INTEGER_DIVISION)


@jax.custom_jvp
def _floormod_tf(x, y):
    return jnp.remainder(x, y)


@_floormod_tf.defjvp
def _floormod_tf_jvp(primals, tangents):
    # TF's FloorMod gradient: 1 in x, -floor(x / y) in y (-0 at y = +-inf, where JAX's differs).
    (x, y), (tx, ty) = primals, tangents
    return _floormod_tf(x, y), tx - ty * jnp.floor(x / y)


def _floormod(x, y):
    return _floormod_tf(x, y) if jnp.issubdtype(jnp.result_type(x, y), jnp.inexact) else jnp.remainder(x, y)


floormod = op("math.floormod", _floormod, signature="x, y", op_type="FloorMod", contract=_INTEGER_DIVISION)


@jax.custom_jvp
def _pow_tf(x, y):
    return jnp.power(x, y)


@_pow_tf.defjvp
def _pow_tf_jvp(primals, tangents):
    # The derivative in x is JAX's; in y it is TF's: z * log(x) where x > 0 (x != 0 if complex) and 0 elsewhere,
    # negative bases and NaN included, where JAX's z * log(x) is NaN.
    (x, y), (tx, ty) = primals, tangents
    z, dz = jax.jvp(lambda base: jnp.power(base, y), (x,), (tx,))
    mask = x != 0 if jnp.iscomplexobj(x) else x > 0
    log_x = jnp.where(mask, jnp.log(jnp.where(mask, x, jnp.ones_like(x))), jnp.zeros_like(x))
    return z, dz + ty * (z * log_x)


def _pow(x, y):
    if not jnp.issubdtype(jnp.result_type(x, y), jnp.inexact):
        return jnp.power(x, y)
    return _pow_tf(x, y)


pow = op("math.pow", _pow, signature="x, y", check=_check_pow)
negative = _unary("math.negative", jnp.negative, op_type="Neg", contract=_NUMERIC)


def _abs(x):
    # TF's gradient of |x| is sign(x): 0 at 0 and NaN at NaN, where JAX's is +-1. x * sign(x) is |x| and JAX's
    # derivative of it is sign(x) (sign's own derivative is a symbolic zero: no 0 * inf at infinities).
    if not jnp.iscomplexobj(x):
        return x * jnp.sign(x)
    magnitude = jnp.abs(x)
    return jnp.where(x == 0, jnp.zeros_like(magnitude), magnitude)


abs = _unary("math.abs", _abs, contract=(Dtype("x", allowed=(*FLOAT, *_SIGNED, *COMPLEX)),))  # complex: ComplexAbs
sign = _unary("math.sign", jnp.sign)
square = _unary("math.square", jnp.square)
# TF's SqrtGrad, RsqrtGrad and ReciprocalGrad give 0 for a zero upstream gradient (tf.where(x > 0, tf.sqrt(x), 0.)
# has gradient 0 at 0, not 0 * inf): zero_cotangent=True.
sqrt = _unary("math.sqrt", jnp.sqrt, contract=_INEXACT, zero_cotangent=True)


@jax.custom_jvp
def _rsqrt(x):
    return jax.lax.rsqrt(x)


@_rsqrt.defjvp
def _rsqrt_jvp(primals, tangents):
    # TF's RsqrtGrad, -y^3 / 2: at -0 (y = -inf) its infinity has the opposite sign of JAX's -y / (2x).
    y = _rsqrt(primals[0])
    return y, tangents[0] * (-0.5 * y * y * y)


rsqrt = _unary("math.rsqrt", _rsqrt, contract=_INEXACT, zero_cotangent=True)
reciprocal = _unary("math.reciprocal", jnp.reciprocal, zero_cotangent=True)
squared_difference = op("math.squared_difference", lambda x, y: jnp.square(x - y), signature="x, y")

# -- exponentials, logs, trigonometry -----------------------------------------------------------------------

exp = _unary("math.exp", jnp.exp, contract=_INEXACT)
expm1 = _unary("math.expm1", jnp.expm1, contract=_INEXACT)
log = _unary("math.log", jnp.log, contract=_INEXACT)
log1p = _unary("math.log1p", jnp.log1p, contract=_INEXACT)
sin = _unary("math.sin", jnp.sin, contract=_INEXACT)
cos = _unary("math.cos", jnp.cos, contract=_INEXACT)
tan = _unary("math.tan", jnp.tan, contract=_INEXACT)
asin = _unary("math.asin", jnp.arcsin, contract=_INEXACT)
acos = _unary("math.acos", jnp.arccos, contract=_INEXACT)
atan = _unary("math.atan", jnp.arctan, contract=_INEXACT)
atan2 = op("math.atan2", jnp.arctan2, signature="y, x", contract=(Dtype("y", "x", allowed=FLOAT),))
sinh = _unary("math.sinh", jnp.sinh, contract=_INEXACT)
cosh = _unary("math.cosh", jnp.cosh, contract=_INEXACT)
tanh = _unary("math.tanh", jnp.tanh, contract=_INEXACT)
asinh = _unary("math.asinh", jnp.arcsinh, contract=_INEXACT)
acosh = _unary("math.acosh", jnp.arccosh, contract=_INEXACT)
atanh = _unary("math.atanh", jnp.arctanh, contract=_INEXACT)
sigmoid = _unary("math.sigmoid", jax.nn.sigmoid, contract=_INEXACT)
log_sigmoid = _unary("math.log_sigmoid", jax.nn.log_sigmoid, contract=_FLOATING)


def _softplus(features):
    # Written so that JAX's derivative is sigmoid(x) to the last bit, as TF's SoftplusGrad computes it
    # (jax.nn.softplus's derivative rounds differently: 0.9999542 instead of TF's 0.9999546 at x = 10). The
    # inner `where`s keep the branch not taken finite, so its zero cotangent stays zero.
    positive = features > 0
    xp = jnp.where(positive, features, 0)
    xn = jnp.where(positive, 0, features)
    return jnp.where(positive, xp + jnp.log1p(jnp.exp(-xp)), jnp.log1p(jnp.exp(xn)))


softplus = op("math.softplus", _softplus, contract=(Dtype("features", allowed=FLOAT),))
erf = _unary("math.erf", jax.scipy.special.erf, contract=_FLOATING)
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
    # TF sends the gradient to x where x >= y, a tie included (JAX's maximum splits it), and to y elsewhere, also
    # where x is NaN; NaN in either operand propagates to the value.
    return _nan_from(x, jnp.where(x >= y, x, y))


def _minimum(x, y):
    return _nan_from(x, jnp.where(x <= y, x, y))


def _nan_from(x, out):
    # `out`, NaN where x is NaN, with no gradient to x there
    return jnp.where(jnp.isnan(x), jax.lax.stop_gradient(x) + out, out)


maximum = op("math.maximum", _maximum, signature="x, y")
minimum = op("math.minimum", _minimum, signature="x, y")


def _clip_by_value(t, clip_value_min, clip_value_max):
    # TF composes maximum(minimum(t, max), min): the gradient at either bound goes to t, and a minimum above the
    # maximum wins.
    return _maximum(_minimum(t, clip_value_max), clip_value_min)


clip_by_value = on_values(op("clip_by_value", _clip_by_value))

# -- rounding (no gradient in TF) ---------------------------------------------------------------------------

floor = _unary("math.floor", jnp.floor, differentiable=False, contract=_FLOATING)
ceil = _unary("math.ceil", jnp.ceil, differentiable=False, contract=_FLOATING)
round = _unary("math.round", jnp.round, differentiable=False)  # half to even, as TF


# -- comparisons and logic (no gradient) --------------------------------------------------------------------

def _compare(name: str, fn, op_type: str = "", contract: tuple = ()):
    return op(name, fn, signature="x, y", differentiable=False, op_type=op_type, contract=contract)


equal = _compare("math.equal", jnp.equal)
not_equal = _compare("math.not_equal", jnp.not_equal)
less = _compare("math.less", jnp.less)
less_equal = _compare("math.less_equal", jnp.less_equal)
greater = _compare("math.greater", jnp.greater)
greater_equal = _compare("math.greater_equal", jnp.greater_equal)
logical_and = _compare("math.logical_and", jnp.logical_and, contract=_BOOL)
logical_or = _compare("math.logical_or", jnp.logical_or, contract=_BOOL)
logical_xor = _compare("math.logical_xor", jnp.logical_xor, contract=_BOOL)
logical_not = _unary("math.logical_not", jnp.logical_not, differentiable=False, contract=(Dtype("x", allowed=("bool",)),))
is_nan = _unary("math.is_nan", jnp.isnan, differentiable=False, op_type="IsNan", contract=_FLOATING)
is_inf = _unary("math.is_inf", jnp.isinf, differentiable=False, op_type="IsInf", contract=_FLOATING)
is_finite = _unary("math.is_finite", jnp.isfinite, differentiable=False, op_type="IsFinite", contract=_FLOATING)


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


def _chooser(reduce, identity):
    """TF's Max or Min reduction: the identity (-inf or +inf, the dtype's lowest or highest integer) for an empty
    reduction, and TF's gradient, indicators / count: split evenly among ties, NaN over a group whose result is NaN
    (no element equals it: 0 / 0), which XLA's simplification of JAX's own rule loses."""

    @functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
    def chosen(x, axis, keepdims):
        return reduce(x, axis=axis, keepdims=keepdims, initial=identity(x.dtype))

    @chosen.defjvp
    def chosen_jvp(axis, keepdims, primals, tangents):
        (x,), (t,) = primals, tangents
        kept = reduce(x, axis=axis, keepdims=True, initial=identity(x.dtype))
        hits = (x == kept).astype(x.dtype)
        count = jnp.sum(hits, axis=axis, keepdims=True)
        weights = jnp.where(count > 0, hits / jnp.maximum(count, 1), jnp.full_like(hits, jnp.nan))
        return chosen(x, axis, keepdims), jnp.sum(t * weights, axis=axis, keepdims=keepdims)

    def impl(input_tensor, axis=None, keepdims=False):
        return chosen(input_tensor, _axis(axis), keepdims)

    return impl


def _lowest(dtype):
    return -np.inf if jnp.issubdtype(dtype, jnp.inexact) else (False if dtype == bool else jnp.iinfo(dtype).min)


def _highest(dtype):
    return np.inf if jnp.issubdtype(dtype, jnp.inexact) else (True if dtype == bool else jnp.iinfo(dtype).max)


_reduce_max = _chooser(jnp.max, _lowest)
_reduce_min = _chooser(jnp.min, _highest)


def _reduce_prod(input_tensor, axis=None, keepdims=False):
    return jnp.prod(input_tensor, axis=_axis(axis), keepdims=keepdims, dtype=input_tensor.dtype)


def _reduce_logsumexp(input_tensor, axis=None, keepdims=False):
    return jax.nn.logsumexp(input_tensor, axis=_axis(axis), keepdims=keepdims)


def _reduce_any(input_tensor, axis=None, keepdims=False):
    return jnp.any(input_tensor, axis=_axis(axis), keepdims=keepdims)


def _reduce_all(input_tensor, axis=None, keepdims=False):
    return jnp.all(input_tensor, axis=_axis(axis), keepdims=keepdims)


_REDUCE = ("axis", "keepdims")
_AXES = (Axis("input_tensor", message=REDUCE),)
_BOOL_AXES = (Dtype("input_tensor", allowed=("bool",)), *_AXES)
reduce_sum = op("math.reduce_sum", _reduce_sum, static=_REDUCE, op_type="Sum", contract=_AXES)
reduce_mean = op("math.reduce_mean", _reduce_mean, static=_REDUCE, op_type="Mean", contract=_AXES)
reduce_max = op("math.reduce_max", _reduce_max, static=_REDUCE, op_type="Max", contract=_AXES)
reduce_min = op("math.reduce_min", _reduce_min, static=_REDUCE, op_type="Min", contract=_AXES)
reduce_prod = op("math.reduce_prod", _reduce_prod, static=_REDUCE, op_type="Prod", contract=_AXES)
reduce_logsumexp = op("math.reduce_logsumexp", _reduce_logsumexp, static=_REDUCE,
                      contract=(Dtype("input_tensor", allowed=FLOAT), *_AXES))
reduce_any = op("math.reduce_any", _reduce_any, static=_REDUCE, differentiable=False, op_type="Any",
                contract=_BOOL_AXES)
reduce_all = op("math.reduce_all", _reduce_all, static=_REDUCE, differentiable=False, op_type="All",
                contract=_BOOL_AXES)


def _argmax(input, axis=None, output_type=np.int64):
    return jnp.argmax(input, axis=0 if axis is None else axis).astype(output_type)


def _argmin(input, axis=None, output_type=np.int64):
    return jnp.argmin(input, axis=0 if axis is None else axis).astype(output_type)


argmax = op("math.argmax", _argmax, static=("axis", "output_type"), differentiable=False, op_type="ArgMax",
            contract=(Axis("input"),))
argmin = op("math.argmin", _argmin, static=("axis", "output_type"), differentiable=False, op_type="ArgMin",
            contract=(Axis("input"),))


def _add_n(*inputs):
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return total


add_n = op("math.add_n", _add_n, op_type="AddN", contract=(Rule(
    lambda a: len(a["inputs"]) > 0, "Inputs must be an iterable of at least one Tensor/IndexedSlices with the same "
    "dtype and shape.", ValueError),))


def _clip_by_norm(t, clip_norm, axes=None):
    # TF's formula: t * clip_norm / max(l2norm(t), clip_norm), with a gradient-safe norm at zero; TF casts
    # clip_norm to t's dtype.
    clip_norm = _maximum(clip_norm, jnp.zeros_like(clip_norm)).astype(t.dtype)  # TF: a negative clip_norm is 0
    squares = jnp.sum(t * t, axis=_axis(axes), keepdims=True)
    positive = squares > 0
    l2norm = jnp.where(positive, zero_cotangent.sqrt(jnp.where(positive, squares, 1)), squares)
    return t * clip_norm / _maximum(l2norm, clip_norm)


_clip_by_norm_op = op("clip_by_norm", _clip_by_norm, static=("axes",), same_dtype=False)


@on_values
@functools.wraps(_clip_by_norm_op)
def clip_by_norm(t, clip_norm, axes=None, name=None):
    # TF multiplies by a Python or numpy scalar clip_norm as a number of t's dtype, and casts a tensor: 2.2 stays
    # 2.2 in float64, where a float32 tensor of it would be 2.2000000476837.
    if np.isscalar(clip_norm) and not isinstance(clip_norm, str | bytes):
        dtype = t.dtype.dtype if isinstance(t, Tensor) else to_array(t).dtype
        if jnp.issubdtype(dtype, jnp.inexact):
            clip_norm = np.asarray(clip_norm, dtype)
    return _clip_by_norm_op(t, clip_norm, axes=axes, name=name)


OPERATORS["clip_by_norm"] = clip_by_norm


# -- more elementwise functions: rounding, special functions ------------------------------------------------

rint = _unary("math.rint", jnp.rint, differentiable=False, contract=_FLOATING)  # half to even; TF's gradient is None
erfc = _unary("math.erfc", jax.scipy.special.erfc, contract=_FLOATING)
erfinv = _unary("math.erfinv", jax.scipy.special.erfinv, contract=_FLOATING)
ndtri = _unary("math.ndtri", jax.scipy.special.ndtri, contract=_FLOATING)


def _erfcinv(x):
    # TF's definition: erfcinv(x) = -ndtri(x / 2) / sqrt(2).
    return -jax.scipy.special.ndtri(x * 0.5) * np.sqrt(0.5).astype(x.dtype)


erfcinv = op("math.erfcinv", _erfcinv)
lgamma = _unary("math.lgamma", jax.scipy.special.gammaln, contract=_FLOATING)
digamma = _unary("math.digamma", jax.scipy.special.digamma, contract=_FLOATING)
# exp(|x|) * i0e(x), with TF's |x| (derivative sign(x)): JAX's derivative of it at 0 is then TF's (0, and i1's 0.5).
bessel_i0 = _unary("math.bessel_i0", lambda x: jnp.exp(_abs(x)) * jax.lax.bessel_i0e(x), op_type="BesselI0")
bessel_i0e = _unary("math.bessel_i0e", jax.scipy.special.i0e, op_type="BesselI0e")
# TF's gradient of i1 at 0 is 1 (its BesselI1 gradient imputes it), not the true 0.5: `where` gives JAX's the same.
bessel_i1 = _unary("math.bessel_i1", lambda x: jnp.where(x == 0, x, jnp.exp(_abs(x)) * jax.lax.bessel_i1e(x)),
                   op_type="BesselI1")
bessel_i1e = _unary("math.bessel_i1e", jax.scipy.special.i1e, op_type="BesselI1e")
# TF's ZetaGrad returns None for x: no gradient reaches x through this argument (the tape gives None).
zeta = op("math.zeta", jax.scipy.special.zeta, signature="x, q", no_gradient_args=(0,))
# Neither JAX nor TF (IgammaGradA) has a second derivative with respect to a.
igamma = op("math.igamma", jax.scipy.special.gammainc, signature="a, x")
igammac = op("math.igammac", jax.scipy.special.gammaincc, signature="a, x")


def _lbeta(x):
    # log(prod Gamma(x_i) / Gamma(sum x_i)) over the last axis; an empty last axis gives -inf, as in TF.
    return jnp.sum(jax.scipy.special.gammaln(x), axis=-1) - jax.scipy.special.gammaln(jnp.sum(x, axis=-1))


lbeta = op("math.lbeta", _lbeta)


@jax.custom_jvp
def _nextafter(x1, x2):
    return jnp.nextafter(x1, x2)


@_nextafter.defjvp
def _nextafter_jvp(primals, tangents):
    # TF's gradient is 1 for x1 and 0 for x2, at every value (JAX defines none).
    return _nextafter(*primals), tangents[0] + jnp.zeros_like(tangents[1])  # _nextafter: any order


nextafter = op("math.nextafter", _nextafter, op_type="NextAfter")


def _angle(input):
    return jnp.angle(input).astype(jnp.real(input).dtype)


_angle_row = op("math.angle", _angle)


def angle(input, name=None):
    """The argument of a complex tensor (`tf.math.angle`); of a real tensor, pi where it is negative, else 0.

    As in TF, no gradient flows through the real case (it is computed from a comparison).
    """
    array = to_array(input)
    if not jnp.iscomplexobj(array):
        return EagerTensor(jnp.where(array < 0, jnp.asarray(np.pi, array.dtype), jnp.zeros((), array.dtype)))
    return _angle_row(input)


OPERATORS["math.angle"] = angle  # the row's public callable is this wrapper (real inputs never reach the row)


def _complex(real, imag):
    return jax.lax.complex(*jnp.broadcast_arrays(real, imag))


def _check_complex(real, imag):
    if real.dtype != imag.dtype or real.dtype not in (np.float32, np.float64):
        raise TypeError(f"The `real` and `imag` components have incorrect types: {real.dtype} {imag.dtype}. They "
                        "must be consistent, and one of [tf.float32, tf.float64]")


complex = op("complex", _complex, check=_check_complex)  # noqa: A001 (TF's name)

def _conversion_error(argument: str, array, dtype) -> ValueError:
    """TF's ValueError when its Python wrapper converts a tensor `argument` to another tensor's `dtype`."""
    return ValueError(f"{argument}: Tensor conversion requested dtype {dtypes.from_numpy(dtype).name} for Tensor "
                      f"with dtype {dtypes.from_numpy(array.dtype).name}: {EagerTensor(array)!r}")


# -- division and products that are 0 where TF says so -------------------------------------------------------
# Each is a `where` whose branch not taken is kept finite, so that JAX's derivative is TF's: 0 wherever the
# result is forced to 0 (DivNoNanGrad, XlogyGrad, ...).


def _divide_no_nan(x, y):
    if jnp.issubdtype(x.dtype, jnp.integer):  # TF divides integers as truediv does (int32 -> float64)
        target = jnp.float32 if jnp.dtype(x.dtype).itemsize <= 2 else jnp.float64
        x, y = x.astype(target), y.astype(target)
    zero = y == 0
    return jnp.where(zero, jnp.zeros_like(x / jnp.where(zero, 1, y)), x / jnp.where(zero, 1, y))


divide_no_nan = op("math.divide_no_nan", _divide_no_nan, signature="x, y", op_type="DivNoNan",
                   check=_check_truediv)


def _reciprocal_no_nan(x):
    return _divide_no_nan(jnp.ones_like(x), x)


reciprocal_no_nan = op("math.reciprocal_no_nan", _reciprocal_no_nan, signature="x", op_type="DivNoNan")


@jax.custom_jvp
def _multiply_no_nan(x, y):
    return jnp.where(y == 0, jnp.zeros_like(x * y), x * y)


@_multiply_no_nan.defjvp
def _multiply_no_nan_jvp(primals, tangents):
    # TF's MulNoNanGrad: multiply_no_nan(grad, y) for x and multiply_no_nan(x, grad) for y, x also where y == 0
    # and 0 where the upstream gradient is (zero_cotangent.scale), also for a non-finite x.
    (x, y), (tx, ty) = primals, tangents
    out = _multiply_no_nan(x, y)
    shape = out.shape
    dx = jnp.where(y == 0, jnp.zeros_like(out), tx * y)
    dy = zero_cotangent.scale(jnp.broadcast_to(ty, shape).astype(out.dtype), jnp.broadcast_to(x, shape))
    return out, dx + dy


def _check_multiply_no_nan(x, y):
    # TF's wrapper converts y to x's dtype in Python, before the kernel: a mismatch is its ValueError.
    if y.dtype != x.dtype:
        raise _conversion_error("y", y, x.dtype)


multiply_no_nan = op("math.multiply_no_nan", _multiply_no_nan, signature="x, y", op_type="MulNoNan",
                     check=_check_multiply_no_nan)


def _x_times(fn):
    def impl(x, y):
        zero = x == 0
        safe_y = jnp.where(zero, jnp.ones_like(y), y)
        return jnp.where(zero, jnp.zeros_like(x), x * fn(safe_y))

    return impl


xlogy = op("math.xlogy", _x_times(jnp.log), signature="x, y")
xlog1py = op("math.xlog1py", _x_times(lambda y: jnp.log1p(y)), signature="x, y", op_type="Xlog1py")
xdivy = op("math.xdivy", _x_times(jnp.reciprocal), signature="x, y")


def _truncatediv(x, y):
    if jnp.issubdtype(x.dtype, jnp.integer):
        return jax.lax.div(x, y)  # C division: rounds toward zero
    return jnp.trunc(x / y)


# TF's truncating integer kernels report a zero divisor through their unexpected-error path: InternalError.
_TRUNCATED_DIVISION = (NonzeroDivisor("y", errors.InternalError),)
truncatediv = op("truncatediv", _truncatediv, signature="x, y", differentiable=False, op_type="TruncateDiv",
                 contract=_TRUNCATED_DIVISION)
truncatemod = op("truncatemod", jnp.fmod, signature="x, y", has_gradient=False, op_type="TruncateMod",
                 contract=_TRUNCATED_DIVISION)


def _check_scalar_mul(scalar, x):
    # TF's wrapper converts scalar to x's dtype (a ValueError on mismatch), then checks its rank.
    if scalar.dtype != x.dtype:
        raise _conversion_error("scalar", scalar, x.dtype)
    if jnp.ndim(scalar) != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {tuple(jnp.shape(scalar))}.")


scalar_mul = op("math.scalar_mul", jnp.multiply, signature="scalar, x", op_type="Mul", check=_check_scalar_mul)


def _polyval(*coeffs_and_x):
    # Horner's rule, as TF: p = c_0; p = c_i + p * x. The row takes [*coeffs, x] (see `polyval`).
    *coeffs, x = coeffs_and_x
    if not coeffs:
        return jnp.zeros_like(x)
    result = coeffs[0] + jnp.zeros_like(x)  # not 0 * x + c_0: that is NaN at x = inf
    for c in coeffs[1:]:
        result = c + result * x
    return result


_polyval_row = op("math.polyval", _polyval)


def polyval(coeffs, x, name=None):
    """The polynomial with coefficients `coeffs` (highest degree first) at `x` (`tf.math.polyval`).

    >>> import tapejax as tf
    >>> print(tf.math.polyval([1.0, 2.0, 3.0], tf.constant(2.0)))  # 1 * 2**2 + 2 * 2 + 3
    tf.Tensor(11.0, shape=(), dtype=float32)
    """
    if not isinstance(coeffs, list | tuple):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    return _polyval_row([*coeffs, x])


# -- more comparisons and predicates (no gradient) -----------------------------------------------------------

def _is_non_decreasing(x):
    flat = jnp.ravel(x)
    return jnp.all(flat[1:] >= flat[:-1])


def _is_strictly_increasing(x):
    flat = jnp.ravel(x)
    return jnp.all(flat[1:] > flat[:-1])


is_non_decreasing = _unary("math.is_non_decreasing", _is_non_decreasing, differentiable=False)
is_strictly_increasing = _unary("math.is_strictly_increasing", _is_strictly_increasing, differentiable=False)


def _zero_fraction(value):
    return jnp.mean(value == 0, dtype=jnp.float32)


zero_fraction = op("math.zero_fraction", _zero_fraction, differentiable=False)


# -- more reductions ----------------------------------------------------------------------------------------

@abstract_check
def _check_real_or_complex(input_tensor, **params):
    if not jnp.issubdtype(input_tensor.dtype, jnp.inexact):
        raise TypeError(f"Input must be either real or complex. Received integer type "
                        f"<dtype: '{dtypes.from_numpy(input_tensor.dtype).name}'>.")


def _reduce_variance(input_tensor, axis=None, keepdims=False):
    # TF's formula: mean(|x - mean(x)|^2), real for complex inputs.
    axis = _axis(axis)
    deviations = input_tensor - jnp.mean(input_tensor, axis=axis, keepdims=True)
    return jnp.mean(jnp.square(jnp.abs(deviations)), axis=axis, keepdims=keepdims)


def _reduce_std(input_tensor, axis=None, keepdims=False):
    return zero_cotangent.sqrt(_reduce_variance(input_tensor, axis, keepdims))


def _reduce_euclidean_norm(input_tensor, axis=None, keepdims=False):
    squares = input_tensor * jnp.conj(input_tensor)
    if jnp.issubdtype(input_tensor.dtype, jnp.integer):  # TF keeps the integer dtype (truncating the root)
        total = jnp.sum(squares, axis=_axis(axis), keepdims=keepdims, dtype=jnp.float64)
        return jnp.sqrt(total).astype(input_tensor.dtype)
    return jnp.sqrt(jnp.sum(squares, axis=_axis(axis), keepdims=keepdims))


def _count_nonzero(input, axis=None, keepdims=None, dtype=np.int64):
    nonzero = input != jnp.zeros((), input.dtype)
    return jnp.sum(nonzero, axis=_axis(axis), keepdims=bool(keepdims), dtype=dtypes.as_dtype(dtype)._np)


reduce_variance = op("math.reduce_variance", _reduce_variance, static=_REDUCE, check=_check_real_or_complex,
                     contract=_AXES)
reduce_std = op("math.reduce_std", _reduce_std, static=_REDUCE, check=_check_real_or_complex, contract=_AXES)
reduce_euclidean_norm = op("math.reduce_euclidean_norm", _reduce_euclidean_norm, static=_REDUCE,
                           op_type="EuclideanNorm", contract=_AXES)
count_nonzero = op("math.count_nonzero", _count_nonzero, static=("axis", "keepdims", "dtype"),
                   differentiable=False, contract=(Axis("input", message=REDUCE),))


def _accumulate_n(*inputs, shape=None, tensor_dtype=None):
    return _add_n(*inputs)


def _check_accumulate_n(*inputs, shape=None, tensor_dtype=None):
    # TF's Python checks, before its AddN: one dtype and one shape (no broadcasting), `shape` and `tensor_dtype`
    # agreeing with the inputs.
    if not inputs or any(x.dtype != inputs[0].dtype for x in inputs):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    merged = None if shape is None else tuple(shape)
    for x in inputs:
        if merged is not None and (len(merged) != x.ndim or any(m not in (None, d) for m, d in zip(merged, x.shape))):
            raise ValueError(f"Shapes {merged} and {tuple(x.shape)} are not compatible")
        merged = tuple(x.shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype)._np != inputs[0].dtype:
        raise TypeError(f"The `tensor_dtype` argument is <dtype: '{dtypes.as_dtype(tensor_dtype).name}'>, but "
                        f"`input` is of type <dtype: '{dtypes.from_numpy(inputs[0].dtype).name}'>. These must be "
                        "equal. Try casting the input to the desired type.")


accumulate_n = op("math.accumulate_n", _accumulate_n, static=("shape", "tensor_dtype"), op_type="AddN",
                  check=_check_accumulate_n)


# -- cumulative sums, products and logsumexps ---------------------------------------------------------------

def _scan(fn, identity, x, axis, exclusive, reverse):
    """fn along `axis` of x (flipped when `reverse`); `exclusive` shifts x by one, filling with `identity`."""
    axis = axis % x.ndim if x.ndim else 0
    if reverse:
        x = jnp.flip(x, axis)
    if exclusive:
        head = jnp.full(x.shape[:axis] + (1,) + x.shape[axis + 1:], identity, x.dtype)
        x = jnp.concatenate([head, jax.lax.slice_in_dim(x, 0, x.shape[axis] - 1, axis=axis)], axis=axis)
    out = fn(x, axis)
    return jnp.flip(out, axis) if reverse else out


def _cumsum(x, axis=0, exclusive=False, reverse=False):
    return _scan(lambda v, a: jnp.cumsum(v, axis=a, dtype=v.dtype), 0, x, axis, exclusive, reverse)


def _cumprod_tf(v, a):
    # TF's CumprodGrad divides by x with div_no_nan, so its gradient for an x that is 0 is 0 (not the product
    # of the other factors): the `where` gives JAX's derivative the same zeros.
    return jnp.cumprod(jnp.where(v == 0, jnp.zeros_like(v), v), axis=a, dtype=v.dtype)


def _cumprod(x, axis=0, exclusive=False, reverse=False):
    return _scan(_cumprod_tf, 1, x, axis, exclusive, reverse)


def _cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False):
    return _scan(lambda v, a: jax.lax.cumlogsumexp(v, axis=a), -np.inf, x, axis, exclusive, reverse)


_SCAN = ("axis", "exclusive", "reverse")
_SCAN_AXIS = (Axis("x", message=SCAN),)
cumsum = op("math.cumsum", _cumsum, static=_SCAN, contract=_SCAN_AXIS)
cumprod = op("math.cumprod", _cumprod, static=_SCAN, contract=_SCAN_AXIS)
cumulative_logsumexp = op("math.cumulative_logsumexp", _cumulative_logsumexp, static=_SCAN,
                          contract=(Dtype("x", allowed=FLOAT), *_SCAN_AXIS))


# -- segment reductions -------------------------------------------------------------------------------------
# The number of segments fixes the output shape, so it is a static parameter of every row. The unsorted ops take
# it as an argument (a tensor is read as a Python int); the sorted ones read it from the segment ids, which must
# then be concrete (not inside tf.function). Ids outside [0, num_segments) are dropped, as TF drops negative ids.

def _segments(data, segment_ids):
    """data with its first segment_ids.ndim axes flattened into one, and the flat ids."""
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    ids = segment_ids.reshape(-1)
    return data.reshape(ids.shape + data.shape[segment_ids.ndim:]), ids


def _per_segment(values, data):
    """A per-segment vector shaped to broadcast against per-segment rows of data."""
    return values.reshape(values.shape + (1,) * (data.ndim - 1))


def _counts(ids, num_segments):
    return jax.ops.segment_sum(jnp.ones(ids.shape, jnp.int32), ids, num_segments)


def _segment_sum(data, segment_ids, num_segments):
    data, ids = _segments(data, segment_ids)
    return jax.ops.segment_sum(data, ids, num_segments)


def _divide_by(total, count):
    if jnp.issubdtype(total.dtype, jnp.integer):
        return jax.lax.div(total, jnp.maximum(count, 1).astype(total.dtype))
    return total / jnp.maximum(count, 1).astype(total.dtype)


def _segment_mean(data, segment_ids, num_segments):
    data, ids = _segments(data, segment_ids)
    count = _per_segment(_counts(ids, num_segments), data)
    return _divide_by(jax.ops.segment_sum(data, ids, num_segments), count)


def _segment_sqrt_n(data, segment_ids, num_segments):
    data, ids = _segments(data, segment_ids)
    count = _per_segment(_counts(ids, num_segments), data)
    return jax.ops.segment_sum(data, ids, num_segments) / jnp.sqrt(jnp.maximum(count, 1).astype(data.dtype))


def _extremum(largest: bool, empty, start=None):
    # TF's running max from `start` (nan_extrema: a NaN is replaced by the next element), its gradient shared evenly
    # among the elements equal to the result.
    def impl(data, segment_ids, num_segments):
        data, ids = _segments(data, segment_ids)
        begin = None if start is None else start(data.dtype)
        out = nan_extrema.segment_extremum(data, ids, num_segments, largest, begin)
        filled = _per_segment(_counts(ids, num_segments), data) > 0
        return jnp.where(filled, out, jnp.asarray(empty(data.dtype), data.dtype))

    return impl


def _lowest(dtype):
    return jnp.finfo(dtype).min if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype).min


def _highest(dtype):
    return jnp.finfo(dtype).max if jnp.issubdtype(dtype, jnp.inexact) else jnp.iinfo(dtype).max


def _segment_prod(data, segment_ids, num_segments):
    # jax.ops.segment_prod has no derivative; a segmented scan of products (sorted by id) has JAX's exact one,
    # which is TF's, also where a factor is 0. The scan's element (start, p) resets the product at a new id.
    data, ids = _segments(data, segment_ids)
    n = ids.shape[0]
    if n == 0:
        return jnp.ones((num_segments,) + data.shape[1:], data.dtype)
    order = jnp.argsort(ids, stable=True)
    sorted_ids = ids[order]
    starts = jnp.concatenate([jnp.ones(1, bool), sorted_ids[1:] != sorted_ids[:-1]])

    def combine(a, b):
        start_a, product_a = a
        start_b, product_b = b
        restart = start_b.reshape(start_b.shape + (1,) * (product_b.ndim - start_b.ndim))
        return start_a | start_b, jnp.where(restart, product_b, product_a * product_b)

    _, running = jax.lax.associative_scan(combine, (starts, data[order]))
    last = jax.ops.segment_max(jnp.arange(n), sorted_ids, num_segments)  # each segment's last position
    filled = _per_segment(_counts(ids, num_segments), data) > 0
    return jnp.where(filled, running[jnp.clip(last, 0, n - 1)], jnp.ones((), data.dtype))


def _check_unsorted_ids(op_type: str):
    def check(data, segment_ids, num_segments):
        if isinstance(segment_ids, jax.core.Tracer):
            return
        ids = np.asarray(segment_ids)
        if tuple(np.shape(data))[:ids.ndim] != ids.shape:
            raise ValueError(f"segment_ids.shape = {list(ids.shape)} does not prefix data.shape = "
                             f"{list(np.shape(data))}")
        too_big = np.flatnonzero(ids.reshape(-1) >= num_segments)
        if too_big.size:
            i = int(too_big[0])
            raise errors.invalid_argument(
                op_type, f"segment_ids[{i}] = {ids.reshape(-1)[i]} is out of range [0, {num_segments})")

    return check


def _unsorted(name: str, impl, op_type: str):
    return op(f"math.{name}", impl, static=("num_segments",), same_dtype=False, check=_check_unsorted_ids(op_type),
              op_type=op_type)


unsorted_segment_sum = _unsorted("unsorted_segment_sum", _segment_sum, "UnsortedSegmentSum")
unsorted_segment_mean = _unsorted("unsorted_segment_mean", _segment_mean, "UnsortedSegmentMean")
unsorted_segment_sqrt_n = _unsorted("unsorted_segment_sqrt_n", _segment_sqrt_n, "UnsortedSegmentSqrtN")
# TF's unsorted max starts from the dtype's lowest value: a segment of -inf only gives it, as does an empty one.
unsorted_segment_max = _unsorted("unsorted_segment_max", _extremum(True, _lowest, _lowest), "UnsortedSegmentMax")
unsorted_segment_min = _unsorted("unsorted_segment_min", _extremum(False, _highest, _highest), "UnsortedSegmentMin")
unsorted_segment_prod = _unsorted("unsorted_segment_prod", _segment_prod, "UnsortedSegmentProd")


def _concrete(value, api: str, what: str) -> np.ndarray:
    """The value of an argument that fixes an output shape; inside tf.function it must not be traced."""
    array = to_array(value)
    if isinstance(array, jax.core.Tracer):
        raise TypeError(f"tf.math.{api}: the shape of the result depends on the values of `{what}`, which are not "
                        f"known inside tf.function here. Compute it outside tf.function, or use an op that takes "
                        f"the size (tf.math.unsorted_segment_* take num_segments; bincount takes minlength and "
                        f"maxlength; confusion_matrix takes num_classes).")
    return np.asarray(array)


def _sorted(name: str, impl, op_type: str, note: str = ""):
    row = op(f"math.{name}", impl, static=("num_segments",), same_dtype=False, op_type=op_type)

    def segment_op(data, segment_ids, name=None):
        ids = _concrete(segment_ids, row.__name__, "segment_ids")
        if ids.ndim != 1:
            raise errors.invalid_argument(op_type, f"segment_ids should be a vector, got shape {list(ids.shape)}")
        if ids.size and ids.min() < 0:
            raise errors.invalid_argument(op_type, f"Segment id {int(ids.min())} out of range, possibly because "
                                                   "'segment_ids' input is not sorted.")
        if np.any(ids[1:] < ids[:-1]):
            raise errors.invalid_argument(op_type, "segment ids are not increasing")
        return row(data, segment_ids, num_segments=int(ids[-1]) + 1 if ids.size else 0)

    segment_op.__name__ = segment_op.__qualname__ = row.__name__
    segment_op.__doc__ = (f"Same semantics as tf.math.{row.__name__}: the ids are sorted, and there are "
                          f"max(segment_ids) + 1 segments (empty ones get TF's 0, or 1 for a product).{note}")
    segment_op.opdef = row.opdef
    OPERATORS[row.opdef.name] = segment_op
    return segment_op


segment_sum = _sorted("segment_sum", _segment_sum, "SegmentSum")
segment_mean = _sorted("segment_mean", _segment_mean, "SegmentMean")
# The sorted ops start from the first element, and give 0 for an empty segment.
_NAN_NOTE = (" A NaN is replaced by the next element of its segment, as in TF's kernel on rows narrower than a SIMD "
             "packet (8 float32s); TF's vectorised kernel skips every NaN of wider rows.")
segment_max = _sorted("segment_max", _extremum(True, lambda dtype: 0), "SegmentMax", _NAN_NOTE)
segment_min = _sorted("segment_min", _extremum(False, lambda dtype: 0), "SegmentMin", _NAN_NOTE)
segment_prod = _sorted("segment_prod", _segment_prod, "SegmentProd")


# -- top k, counting, permutations --------------------------------------------------------------------------

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
ApproxTopK = collections.namedtuple("ApproxTopK", ["values", "indices"])


def _top_k(input, k=1, sorted=True, index_type=np.int32):
    values, indices = jax.lax.top_k(input, k)  # ties: the lower index first, as in TF
    return values, indices.astype(dtypes.as_dtype(index_type)._np)


_top_k_row = op("math.top_k", _top_k, static=("k", "sorted", "index_type"), op_type="TopKV2")


def top_k(input, k=1, sorted=True, index_type=np.int32, name=None):
    """The k largest entries of the last axis and their indices (`tf.math.top_k`), as TopKV2(values, indices).

    >>> import tapejax as tf
    >>> tf.math.top_k([1.0, 3.0, 2.0], k=2).indices.numpy().tolist()
    [1, 2]

    Differences from TensorFlow: `sorted=False` still returns the entries sorted.
    """
    return TopKV2(*_top_k_row(input, k, sorted, index_type))


OPERATORS["math.top_k"] = top_k


def _approx_k(is_max: bool):
    def impl(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
             aggregate_to_topk=True):
        fn = jax.lax.approx_max_k if is_max else jax.lax.approx_min_k
        return tuple(fn(operand, k, reduction_dimension=reduction_dimension, recall_target=recall_target,
                        reduction_input_size_override=reduction_input_size_override,
                        aggregate_to_topk=aggregate_to_topk))

    return impl


_APPROX = ("k", "reduction_dimension", "recall_target", "reduction_input_size_override", "aggregate_to_topk")
_approx_max_k_row = op("math.approx_max_k", _approx_k(True), static=_APPROX, op_type="ApproxTopK")
_approx_min_k_row = op("math.approx_min_k", _approx_k(False), static=_APPROX, op_type="ApproxTopK")


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """Same semantics as tf.math.approx_max_k (on CPU, the exact top k); returns ApproxTopK(values, indices)."""
    return ApproxTopK(*_approx_max_k_row(operand, k, reduction_dimension, recall_target,
                                         reduction_input_size_override, aggregate_to_topk))


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True, name=None):
    """Same semantics as tf.math.approx_min_k (on CPU, the exact bottom k); returns ApproxTopK(values, indices)."""
    return ApproxTopK(*_approx_min_k_row(operand, k, reduction_dimension, recall_target,
                                         reduction_input_size_override, aggregate_to_topk))


OPERATORS["math.approx_max_k"] = approx_max_k
OPERATORS["math.approx_min_k"] = approx_min_k


def _in_top_k(targets, predictions, k):
    # TF: the target is in the top k if fewer than k predictions are strictly larger (so ties at the boundary
    # are all in); a target out of range, or a row with a non-finite prediction, gives False.
    n = predictions.shape[-1]
    valid = (targets >= 0) & (targets < n)
    index = jnp.clip(targets, 0, n - 1).astype(jnp.int32)[:, None]
    target_values = jnp.take_along_axis(predictions, index, axis=1)
    larger = jnp.sum(predictions > target_values, axis=1)
    finite = jnp.all(jnp.isfinite(predictions), axis=1)
    return valid & finite & (larger < k)


in_top_k = op("math.in_top_k", _in_top_k, static=("k",), differentiable=False, same_dtype=False,
              op_type="InTopKV2")


def _bincount(arr, weights=None, length=0, dtype=np.int32, axis=None, binary_output=False):
    out_dtype = weights.dtype if weights is not None else dtypes.as_dtype(dtype)._np

    def count(values, w):
        w = jnp.ones(values.shape, out_dtype) if w is None else w
        # values >= length (cut off by maxlength) are dropped
        return jnp.zeros((length,), out_dtype).at[values].add(w, mode="drop")

    if axis in (-1, 1) and arr.ndim == 2:
        out = jax.vmap(count)(arr, weights) if weights is not None else jax.vmap(lambda v: count(v, None))(arr)
    else:
        out = count(arr.reshape(-1), None if weights is None else weights.reshape(-1))
    return (out > 0).astype(out_dtype) if binary_output else out


_bincount_row = op("math.bincount", _bincount, static=("length", "dtype", "axis", "binary_output"),
                   same_dtype=False, has_gradient=False, op_type="DenseBincount")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=np.int32, name=None, axis=None,
             binary_output=False):
    """Counts the occurrences of each value in `arr` (`tf.math.bincount`), optionally weighted.

    >>> import tapejax as tf
    >>> tf.math.bincount([1, 1, 3]).numpy().tolist()
    [0, 2, 0, 1]
    """
    values = _concrete(arr, "bincount", "arr")
    if values.size and values.min() < 0:
        raise errors.invalid_argument("DenseBincount", "Input arr must be non-negative!")
    if weights is not None and binary_output:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
    length = int(values.max()) + 1 if values.size else 0
    if minlength is not None:
        length = max(length, int(hashable(minlength)))
    if maxlength is not None:
        length = min(length, int(hashable(maxlength)))
    return _bincount_row(arr, weights, length=length, dtype=dtype, axis=axis, binary_output=binary_output)


OPERATORS["math.bincount"] = bincount


def _confusion_matrix(labels, predictions, weights=None, num_classes=None, dtype=np.int32):
    target = dtypes.as_dtype(dtype)._np
    values = jnp.ones(labels.shape, target) if weights is None else weights.astype(target)
    matrix = jnp.zeros((num_classes, num_classes), target)
    return matrix.at[labels.astype(jnp.int32), predictions.astype(jnp.int32)].add(values)


# The row takes the tensors first (labels, predictions, weights); tf.math.confusion_matrix below has TF's order.
_confusion_matrix_row = op("math.confusion_matrix", _confusion_matrix, static=("num_classes", "dtype"),
                           same_dtype=False, op_type="ScatterNd")


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=np.int32, name=None):
    """The confusion matrix of `labels` against `predictions` (`tf.math.confusion_matrix`).

    Rows are labels and columns predictions; with `num_classes=None` there are max(labels, predictions) + 1.

    >>> import tapejax as tf
    >>> tf.math.confusion_matrix([0, 1, 1], [0, 1, 0]).numpy().tolist()
    [[1, 0], [1, 1]]
    """
    label_values = _concrete(labels, "confusion_matrix", "labels")
    prediction_values = _concrete(predictions, "confusion_matrix", "predictions")
    for what, values in (("labels", label_values), ("predictions", prediction_values)):
        if values.size and values.min() < 0:
            raise errors.invalid_argument("ConfusionMatrix", f"`{what}` contains negative values.")
    if num_classes is None:
        num_classes = max(int(label_values.max(initial=-1)), int(prediction_values.max(initial=-1))) + 1
    num_classes = int(hashable(num_classes))
    for what, values in (("labels", label_values), ("predictions", prediction_values)):
        if values.size and values.max() >= num_classes:
            raise errors.invalid_argument("ConfusionMatrix", f"`{what}` out of bound")
    return _confusion_matrix_row(labels, predictions, weights, num_classes=num_classes, dtype=dtype)


def _invert_permutation(x):
    return jnp.zeros_like(x).at[x].set(jnp.arange(x.shape[0], dtype=x.dtype))


def _check_permutation(x):
    if isinstance(x, jax.core.Tracer):
        return
    values = np.asarray(x)
    if values.ndim != 1:
        raise errors.invalid_argument("InvertPermutation", "invert_permutation expects a 1D vector.")
    seen = np.zeros(values.size, bool)
    for v in values.tolist():
        if not 0 <= v < values.size:
            raise errors.invalid_argument("InvertPermutation", f"{v} is not between 0 and {values.size}")
        if seen[v]:
            raise errors.invalid_argument("InvertPermutation", f"{v} is duplicated in the input.")
        seen[v] = True


invert_permutation = op("math.invert_permutation", _invert_permutation, signature="x", differentiable=False,
                        check=_check_permutation)
