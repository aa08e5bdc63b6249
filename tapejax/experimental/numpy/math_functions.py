"""tf.experimental.numpy's elementwise functions and reductions: one row per NumPy name, onto tapejax's ops.

A row pairs NumPy's function (which decides the result's dtype, conversion.py) with the tapejax op that computes
it, so values and gradients are those of the tapejax ops (and so JAX's), and dtypes are NumPy's.
"""

from __future__ import annotations

import math as _math
from collections.abc import Callable
from typing import Any

import numpy as np

from tapejax import linalg as tfl
from tapejax import math as tfm
from tapejax._src import dtypes
from tapejax._src.tensor import Tensor
from tapejax.ops import array as tfa

from .conversion import asarray, common, numpy_dtype, result_dtype


def cast(t: Tensor, dtype: np.dtype) -> Tensor:
    return t if t.dtype._np == dtype else tfa.cast(t, dtypes.from_numpy(np.dtype(dtype)))


def elementwise(np_fn: Callable[..., Any], tf_fn: Callable[..., Any]) -> Callable[..., Tensor]:
    """A NumPy ufunc onto a tapejax op: the operands promoted as NumPy does, then cast to the result's dtype
    (int32 -> float64 for `sin`), except for results of another kind than a complex input (abs, angle) and for
    bool results (comparisons, which compare in the promoted dtype)."""

    def fn(*xs: Any) -> Tensor:
        out = result_dtype(np_fn, *xs)
        dtype, ts = common(*xs)
        if out.kind != "b" and not (dtype.kind == "c" and out.kind != "c"):
            ts = [cast(t, out) for t in ts]
        return tf_fn(*ts)

    fn.__name__ = np_fn.__name__
    fn.__doc__ = f"NumPy's `{np_fn.__name__}` on tensors (tf.experimental.numpy); NumPy's dtype rules."
    return fn


def _axis(axis: Any) -> Any:
    return list(axis) if isinstance(axis, tuple) else axis


def reduction(np_fn: Callable[..., Any], tf_fn: Callable[..., Any]) -> Callable[..., Tensor]:
    """A NumPy reduction `(a, axis=None, dtype=None, keepdims=False)` onto a tapejax reduce op; NumPy's result
    dtype (a sum of int32 is int64, a mean of ints float64)."""

    def fn(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
        t = asarray(a)
        target = numpy_dtype(dtype) or np.asarray(np_fn(np.ones(1, t.dtype._np))).dtype
        return tf_fn(cast(t, target), axis=_axis(axis), keepdims=keepdims)

    fn.__name__ = np_fn.__name__
    fn.__doc__ = f"NumPy's `{np_fn.__name__}` on tensors (tf.experimental.numpy); NumPy's dtype rules."
    return fn


def _plain_reduction(tf_fn: Callable[..., Any]) -> Callable[..., Tensor]:
    """A reduction whose dtype is its input's (max, min, all, any)."""

    def fn(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
        return tf_fn(asarray(a), axis=_axis(axis), keepdims=keepdims)

    return fn


def _variance(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
              keepdims: bool = False) -> Tensor:
    t = asarray(a)
    t = cast(t, numpy_dtype(dtype) or np.var(np.ones(2, t.dtype._np)).dtype)
    var = tfm.reduce_variance(t, axis=_axis(axis), keepdims=keepdims)
    if ddof:
        n = int(np.prod(t.shape.as_list())) // max(int(np.prod(var.shape.as_list())), 1)  # values per result
        var = var * (n / (n - ddof))
    return var


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """NumPy's `var` (`ddof` included) on tensors."""
    return _variance(a, axis, dtype, out, ddof, keepdims)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """NumPy's `std` (`ddof` included) on tensors."""
    return tfm.sqrt(_variance(a, axis, dtype, out, ddof, keepdims))


def _arg(tf_fn: Callable[..., Any]) -> Callable[..., Tensor]:
    def fn(a: Any, axis: int | None = None) -> Tensor:
        t = asarray(a)
        return tf_fn(tfa.reshape(t, [-1]) if axis is None else t, axis=0 if axis is None else axis)

    return fn


def _nan_to(value: float, tf_fn: Callable[..., Any]) -> Callable[..., Tensor]:
    def fn(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
        t = asarray(a)
        if t.dtype.is_floating:
            t = tfa.where(tfm.is_nan(t), tfa.zeros_like(t) + value, t)
        return tf_fn(t, axis=axis, dtype=dtype, keepdims=keepdims)

    return fn


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False) -> Tensor:
    """NumPy's `nanmean`: the mean over the values that are not NaN."""
    t = asarray(a)
    t = cast(t, numpy_dtype(dtype) or np.mean(np.ones(1, t.dtype._np)).dtype)
    keep = tfm.logical_not(tfm.is_nan(t))
    total = tfm.reduce_sum(tfa.where(keep, t, tfa.zeros_like(t)), axis=_axis(axis), keepdims=keepdims)
    return total / tfm.reduce_sum(tfa.cast(keep, t.dtype), axis=_axis(axis), keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False) -> Any:
    """NumPy's `average`, with `weights`."""
    if weights is None:
        result = reduction(np.mean, tfm.reduce_mean)(a, axis)
        scale = asarray(np.prod(asarray(a).shape) / max(np.prod(result.shape), 1), result.dtype._np)
    else:
        _, (t, w) = common(a, weights)
        out = np.mean(np.ones(1, t.dtype._np)).dtype
        t, w = cast(t, out), cast(w, out)
        if w.shape.rank == 1 and t.shape.rank > 1 and axis is not None:
            w = tfa.reshape(w, [-1 if i == axis % t.shape.rank else 1 for i in range(t.shape.rank)])
        scale = tfm.reduce_sum(w * tfa.ones_like(t), axis=_axis(axis))
        result = tfm.reduce_sum(t * w, axis=_axis(axis)) / scale
    return (result, scale) if returned else result


def _clip(a: Any, a_min: Any, a_max: Any) -> Tensor:
    _, (t, lo, hi) = common(a, a_min, a_max)
    return tfm.minimum(tfm.maximum(t, lo), hi)


def around(a: Any, decimals: int = 0) -> Tensor:
    """NumPy's `around`: half to even, at `decimals`."""
    t = asarray(a)
    if not t.dtype.is_floating:
        return t
    scale = 10.0 ** decimals
    return tfm.round(t * scale) / scale if decimals else tfm.round(t)


def _power(x1: Tensor, x2: Tensor) -> Tensor:
    return tfm.pow(x1, x2)


def _logaddexp(x1: Tensor, x2: Tensor) -> Tensor:
    top = tfm.maximum(x1, x2)
    return top + tfm.log1p(tfm.exp(-tfm.abs(x1 - x2)))


def _sinc(x: Tensor) -> Tensor:
    y = x * _math.pi
    safe = tfa.where(tfm.equal(y, 0), tfa.ones_like(y), y)
    return tfa.where(tfm.equal(y, 0), tfa.ones_like(y), tfm.sin(safe) / safe)


def _dot(x1: Tensor, x2: Tensor) -> Tensor:
    if x1.shape.rank == 0 or x2.shape.rank == 0:
        return x1 * x2
    if x2.shape.rank == 1:
        return tfl.tensordot(x1, x2, [[x1.shape.rank - 1], [0]])
    return tfl.tensordot(x1, x2, [[x1.shape.rank - 1], [x2.shape.rank - 2]])


def _matmul(x1: Tensor, x2: Tensor) -> Tensor:
    if x1.shape.rank == 1 and x2.shape.rank == 1:
        return tfm.reduce_sum(x1 * x2)
    if x1.shape.rank == 1:
        return tfa.squeeze(tfl.matmul(tfa.expand_dims(x1, 0), x2), -2)
    if x2.shape.rank == 1:
        return tfa.squeeze(tfl.matmul(x1, tfa.expand_dims(x2, -1)), -1)
    return tfl.matmul(x1, x2)


def _flat(t: Tensor) -> Tensor:
    return tfa.reshape(t, [-1])


def _pi_scale(factor: float) -> Callable[[Tensor], Tensor]:
    return lambda x: x * factor


# name -> (NumPy's function: the dtype oracle, tapejax's computation)
ELEMENTWISE: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "abs": (np.abs, tfm.abs), "absolute": (np.absolute, tfm.abs), "fabs": (np.fabs, tfm.abs),
    "negative": (np.negative, tfm.negative), "positive": (np.positive, tfa.identity),
    "sign": (np.sign, tfm.sign), "square": (np.square, tfm.square), "sqrt": (np.sqrt, tfm.sqrt),
    "cbrt": (np.cbrt, lambda x: tfm.sign(x) * tfm.pow(tfm.abs(x), 1.0 / 3.0)),
    "reciprocal": (np.reciprocal, tfm.reciprocal),
    "exp": (np.exp, tfm.exp), "exp2": (np.exp2, lambda x: tfm.exp(x * _math.log(2.0))),
    "expm1": (np.expm1, tfm.expm1), "log": (np.log, tfm.log), "log1p": (np.log1p, tfm.log1p),
    "log2": (np.log2, lambda x: tfm.log(x) / _math.log(2.0)),
    "log10": (np.log10, lambda x: tfm.log(x) / _math.log(10.0)),
    "sin": (np.sin, tfm.sin), "cos": (np.cos, tfm.cos), "tan": (np.tan, tfm.tan),
    "arcsin": (np.arcsin, tfm.asin), "arccos": (np.arccos, tfm.acos), "arctan": (np.arctan, tfm.atan),
    "sinh": (np.sinh, tfm.sinh), "cosh": (np.cosh, tfm.cosh), "tanh": (np.tanh, tfm.tanh),
    "arcsinh": (np.arcsinh, tfm.asinh), "arccosh": (np.arccosh, tfm.acosh), "arctanh": (np.arctanh, tfm.atanh),
    "deg2rad": (np.deg2rad, _pi_scale(_math.pi / 180.0)), "rad2deg": (np.rad2deg, _pi_scale(180.0 / _math.pi)),
    "sinc": (np.sinc, _sinc), "floor": (np.floor, tfm.floor), "ceil": (np.ceil, tfm.ceil),
    "fix": (np.fix, lambda x: tfm.sign(x) * tfm.floor(tfm.abs(x))), "rint": (np.rint, tfm.rint),
    "real": (np.real, tfm.real), "imag": (np.imag, tfm.imag), "angle": (np.angle, tfm.angle),
    "conj": (np.conj, tfm.conj), "conjugate": (np.conjugate, tfm.conj),
    "isnan": (np.isnan, tfm.is_nan), "isinf": (np.isinf, tfm.is_inf), "isfinite": (np.isfinite, tfm.is_finite),
    "isposinf": (np.isposinf, lambda x: tfm.logical_and(tfm.is_inf(x), x > 0)),
    "isneginf": (np.isneginf, lambda x: tfm.logical_and(tfm.is_inf(x), x < 0)),
    "logical_not": (np.logical_not, lambda x: tfm.logical_not(tfa.cast(x, dtypes.bool_))),
    "add": (np.add, tfm.add), "subtract": (np.subtract, tfm.subtract), "multiply": (np.multiply, tfm.multiply),
    "divide": (np.divide, tfm.divide), "true_divide": (np.true_divide, tfm.divide),
    "floor_divide": (np.floor_divide, tfm.floordiv), "mod": (np.mod, tfm.floormod),
    "remainder": (np.remainder, tfm.floormod), "power": (np.power, _power), "float_power": (np.float_power, _power),
    "maximum": (np.maximum, tfm.maximum), "minimum": (np.minimum, tfm.minimum),
    "arctan2": (np.arctan2, tfm.atan2), "hypot": (np.hypot, lambda a, b: tfm.sqrt(a * a + b * b)),
    "logaddexp": (np.logaddexp, _logaddexp),
    "logaddexp2": (np.logaddexp2, lambda a, b: _logaddexp(a * _math.log(2.0), b * _math.log(2.0)) / _math.log(2.0)),
    "heaviside": (np.heaviside, lambda a, b: tfa.where(a < 0, tfa.zeros_like(a), tfa.where(a > 0, tfa.ones_like(a), b))),
    "nextafter": (np.nextafter, tfm.nextafter),
    "equal": (np.equal, tfm.equal), "not_equal": (np.not_equal, tfm.not_equal), "less": (np.less, tfm.less),
    "less_equal": (np.less_equal, tfm.less_equal), "greater": (np.greater, tfm.greater),
    "greater_equal": (np.greater_equal, tfm.greater_equal),
    "logical_and": (np.logical_and, lambda a, b: tfm.logical_and(tfa.cast(a, dtypes.bool_), tfa.cast(b, dtypes.bool_))),
    "logical_or": (np.logical_or, lambda a, b: tfm.logical_or(tfa.cast(a, dtypes.bool_), tfa.cast(b, dtypes.bool_))),
    "logical_xor": (np.logical_xor, lambda a, b: tfm.logical_xor(tfa.cast(a, dtypes.bool_), tfa.cast(b, dtypes.bool_))),
    "matmul": (np.matmul, _matmul), "dot": (np.dot, _dot), "inner": (np.inner, lambda a, b: tfl.tensordot(a, b, [[-1], [-1]]) if a.shape.rank and b.shape.rank else a * b),
    "outer": (np.outer, lambda a, b: tfa.reshape(_flat(a), [-1, 1]) * tfa.reshape(_flat(b), [1, -1])),
    "vdot": (np.vdot, lambda a, b: tfm.reduce_sum(tfm.conj(_flat(a)) * _flat(b))),
    "kron": (np.kron, lambda a, b: tfa.reshape(a[:, None, :, None] * b[None, :, None, :],
                                               [a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]])),
}

REDUCTIONS = {"sum": (np.sum, tfm.reduce_sum), "prod": (np.prod, tfm.reduce_prod),
              "mean": (np.mean, tfm.reduce_mean)}

FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: elementwise(*row) for name, row in ELEMENTWISE.items()},
    **{name: reduction(*row) for name, row in REDUCTIONS.items()},
    "max": _plain_reduction(tfm.reduce_max), "amax": _plain_reduction(tfm.reduce_max),
    "min": _plain_reduction(tfm.reduce_min), "amin": _plain_reduction(tfm.reduce_min),
    "all": _plain_reduction(lambda t, **k: tfm.reduce_all(tfa.cast(t, dtypes.bool_), **k)),
    "any": _plain_reduction(lambda t, **k: tfm.reduce_any(tfa.cast(t, dtypes.bool_), **k)),
    "ptp": _plain_reduction(lambda t, **k: tfm.reduce_max(t, **k) - tfm.reduce_min(t, **k)),
    "var": var, "std": std, "nanmean": nanmean, "average": average,
    "nansum": _nan_to(0.0, reduction(np.sum, tfm.reduce_sum)), "nanprod": _nan_to(1.0, reduction(np.prod, tfm.reduce_prod)),
    "argmax": _arg(tfm.argmax), "argmin": _arg(tfm.argmin),
    "count_nonzero": lambda a, axis=None, keepdims=False: tfa.cast(
        tfm.count_nonzero(asarray(a), axis=_axis(axis), keepdims=keepdims), dtypes.int64),
    "clip": _clip, "around": around, "round": around,
}
