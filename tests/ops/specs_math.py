"""The op specs of the tf.math rows added for issue #6 (merged into op_specs.SPEC / EXTRA_CASES).

References use numpy and `math` only. Where neither has the function, the reference says what it computes
instead, in float64 and to about 1e-13 (the float64 tests compare at rtol 1e-10): erfinv and ndtri by Newton's
method on math.erf / math.erfc, digamma by its recurrence and asymptotic series, the Bessel functions by their
power series, Hurwitz's zeta by Euler-Maclaurin summation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from op_specs import (
    F32,
    Spec,
    away_from_zero,
    binary,
    fixed,
    normal,
    positive,
    unary,
    unit,
)

# -- references where numpy has no function -----------------------------------------------------------------


def _elementwise(fn):
    """A reference from a scalar float64 function: applied elementwise, then cast to the first input's dtype."""
    vectorized = np.vectorize(fn, otypes=[np.float64])

    def ref(*args):
        return vectorized(*[np.asarray(a, np.float64) for a in args]).astype(np.asarray(args[0]).dtype)

    return ref


def _erfinv(y: float) -> float:
    x = 0.0
    for _ in range(100):  # Newton on erf(x) = y; erf'(x) = 2/sqrt(pi) exp(-x^2)
        step = (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-16 * max(1.0, abs(x)):
            break
    return x


def _ndtri(p: float) -> float:
    x = 0.0
    for _ in range(100):  # Newton on Phi(x) = erfc(-x / sqrt(2)) / 2 = p; Phi'(x) = exp(-x^2 / 2) / sqrt(2 pi)
        step = (0.5 * math.erfc(-x / math.sqrt(2)) - p) / (math.exp(-x * x / 2) / math.sqrt(2 * math.pi))
        x -= step
        if abs(step) < 1e-16 * max(1.0, abs(x)):
            break
    return x


def _digamma(x: float) -> float:
    total = 0.0
    while x < 10:  # psi(x) = psi(x + 1) - 1/x
        total -= 1 / x
        x += 1
    inv2 = 1 / (x * x)  # asymptotic series: ln x - 1/(2x) - sum B_2k / (2k x^2k)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return total + math.log(x) - 0.5 / x - series


def _bessel_i(order: int, x: float) -> float:
    """I_0 or I_1 by the power series sum_k (x/2)^(2k + order) / (k! (k + order)!)."""
    half = x / 2
    term = half**order / math.factorial(order)
    total, k = term, 0
    while abs(term) > 1e-17 * abs(total):
        k += 1
        term *= half * half / (k * (k + order))
        total += term
    return total


# B_2k / (2k)! for k = 1..6, the Euler-Maclaurin coefficients
_EM = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000)


def _zeta(s: float, q: float) -> float:
    """Hurwitz's zeta sum_k (q + k)^-s, by Euler-Maclaurin after the first 20 terms."""
    n = 20
    total = sum((q + k) ** -s for k in range(n))
    a = q + n
    total += a ** (1 - s) / (s - 1) + 0.5 * a**-s
    rising = s  # s (s+1) ... (s + 2k - 2)
    for k, coefficient in enumerate(_EM, start=1):
        total += coefficient * rising * a ** (-s - 2 * k + 1)
        rising *= (s + 2 * k - 1) * (s + 2 * k)
    return total


def _igamma(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function, by its series x^a e^-x sum_n x^n / Gamma(a + n + 1)."""
    term = math.exp(a * math.log(x) - x - math.lgamma(a + 1))
    total, n = term, 0
    while term > 1e-17 * total:
        n += 1
        term *= x / (a + n)
        total += term
    return total


erfc_ref = _elementwise(math.erfc)
erfinv_ref = _elementwise(_erfinv)
ndtri_ref = _elementwise(_ndtri)
erfcinv_ref = _elementwise(lambda x: _erfinv(1 - x))
lgamma_ref = _elementwise(math.lgamma)
digamma_ref = _elementwise(_digamma)
i0_ref = _elementwise(lambda x: _bessel_i(0, x))
i1_ref = _elementwise(lambda x: _bessel_i(1, x))
i0e_ref = _elementwise(lambda x: math.exp(-abs(x)) * _bessel_i(0, x))
i1e_ref = _elementwise(lambda x: math.exp(-abs(x)) * _bessel_i(1, x))
zeta_ref = _elementwise(_zeta)
igamma_ref = _elementwise(_igamma)
igammac_ref = _elementwise(lambda a, x: 1 - _igamma(a, x))


def lbeta_ref(x):
    lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
    x64 = x.astype(np.float64)
    return (lgamma(x64).sum(-1) - lgamma(x64.sum(-1))).astype(x.dtype)


# -- references where numpy has the pieces ------------------------------------------------------------------


def divide_no_nan_ref(x, y):
    if x.dtype.kind in "iu":
        x, y = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, np.zeros_like(x), x / y).astype(x.dtype)


def multiply_no_nan_ref(x, y):
    with np.errstate(invalid="ignore"):
        return np.where(y == 0, np.zeros_like(x), x * y).astype(x.dtype)


def _x_times(fn):
    def ref(x, y):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(x == 0, np.zeros_like(x), x * fn(y)).astype(x.dtype)

    return ref


def polyval_ref(*coeffs_and_x):
    *coeffs, x = coeffs_and_x
    result = np.zeros_like(x)
    for c in coeffs:
        result = c + result * x
    return result.astype(x.dtype)


def _call_polyval(m, args, kwargs):
    return m.math.polyval(list(args[:-1]), args[-1])  # TF takes the coefficients as a Python list


def variance_ref(x, axis=None, keepdims=False):
    return np.var(x, axis=axis, keepdims=keepdims).astype(x.dtype)


def std_ref(x, axis=None, keepdims=False):
    return np.std(x, axis=axis, keepdims=keepdims).astype(x.dtype)


def euclidean_norm_ref(x, axis=None, keepdims=False):
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)).astype(x.dtype)


def count_nonzero_ref(x, axis=None, keepdims=None, dtype=np.int64):
    return np.asarray(np.count_nonzero(x, axis=axis, keepdims=bool(keepdims))).astype(dtype)


def _scan_ref(fn, identity):
    def ref(x, axis=0, exclusive=False, reverse=False):
        if reverse:
            x = np.flip(x, axis)
        if exclusive:
            head = np.full_like(np.take(x, [0], axis=axis), identity)
            x = np.concatenate([head, np.delete(x, -1, axis=axis)], axis=axis)
        out = fn(x, axis).astype(x.dtype)
        return np.flip(out, axis) if reverse else out

    return ref


cumsum_ref = _scan_ref(lambda x, axis: np.cumsum(x, axis), 0)
cumprod_ref = _scan_ref(lambda x, axis: np.cumprod(x, axis), 1)
cumulative_logsumexp_ref = _scan_ref(lambda x, axis: np.logaddexp.accumulate(x.astype(np.float64), axis), -np.inf)


def _segment_ref(reduce, empty):
    """A segment reduction: `reduce(rows)` over the rows of each segment, `empty(dtype)` for an empty one."""

    def ref(data, segment_ids, num_segments=None):
        ids = segment_ids.reshape(-1)
        rows = data.reshape(ids.shape + data.shape[segment_ids.ndim:])
        n = int(ids.max()) + 1 if num_segments is None else num_segments
        out = [reduce(rows[ids == s]) if np.any(ids == s) else np.full(rows.shape[1:], empty(data.dtype))
               for s in range(n)]
        return np.asarray(out, data.dtype).reshape((n,) + rows.shape[1:])

    return ref


def _zero(dtype):
    return 0


def _one(dtype):
    return 1


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


segment_sum_ref = _segment_ref(lambda r: r.sum(0), _zero)
segment_mean_ref = _segment_ref(lambda r: r.mean(0), _zero)
segment_sqrt_n_ref = _segment_ref(lambda r: r.sum(0) / np.sqrt(len(r)), _zero)
segment_prod_ref = _segment_ref(lambda r: r.prod(0), _one)


def top_k_ref(x, k=1, sorted=True, index_type=np.int32):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]  # ties: the lower index first
    return np.take_along_axis(x, order, -1), order.astype(index_type)


def bottom_k_ref(x, k):
    order = np.argsort(x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def in_top_k_ref(targets, predictions, k):
    out = []
    for t, row in zip(targets, predictions):
        ok = 0 <= t < row.size and np.all(np.isfinite(row))
        out.append(bool(ok and np.sum(row > row[t]) < k))
    return np.array(out)


def _call_approx_min_k(m, args, kwargs):
    fn = m.math.approx_min_k
    if m.__name__ == "tensorflow":  # TF's CPU kernel is max-only; its XLA kernel does both
        fn = m.function(fn, jit_compile=True)
    return fn(*args, **kwargs)


def bincount_ref(arr, weights=None, minlength=None, maxlength=None, dtype=np.int32, axis=None, binary_output=False):
    length = int(arr.max()) + 1 if arr.size else 0
    length = max(length, minlength or 0)
    length = length if maxlength is None else min(length, maxlength)
    out_dtype = weights.dtype if weights is not None else np.dtype(dtype)

    def count(values, w):
        keep = values < length
        out = np.bincount(values[keep], None if w is None else w[keep], minlength=length)[:length]
        return (out > 0) if binary_output else out

    if axis == -1 and arr.ndim == 2:
        out = np.stack([count(a, None if weights is None else w) for a, w in
                        zip(arr, weights if weights is not None else arr)])
    else:
        out = count(arr.reshape(-1), None if weights is None else weights.reshape(-1))
    return np.asarray(out).astype(out_dtype)


def confusion_matrix_ref(labels, predictions, weights=None, num_classes=None, dtype=np.int32):
    n = num_classes or int(max(labels.max(), predictions.max())) + 1
    out = np.zeros((n, n), np.float64)
    np.add.at(out, (labels, predictions), 1 if weights is None else weights)
    return out.astype(dtype)


def _call_confusion_matrix(m, args, kwargs):
    labels, predictions, *weights = args
    return m.math.confusion_matrix(labels, predictions, weights=weights[0] if weights else None, **kwargs)


def complex_ref(real, imag):
    return (real + 1j * imag).astype(np.complex64 if real.dtype == np.float32 else np.complex128)


def invert_permutation_ref(x):
    out = np.empty_like(x)
    out[x] = np.arange(x.size, dtype=x.dtype)
    return out


# -- samplers -----------------------------------------------------------------------------------------------


def probabilities(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inside (0, 1), with margin: the domain of ndtri."""
    return rng.uniform(0.1, 0.9, shape).astype(F32)


def below_two(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inside (0, 2), with margin: the domain of erfcinv."""
    return rng.uniform(0.2, 1.8, shape).astype(F32)


def zeta_exponents(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inside (1, inf), with margin: where Hurwitz's zeta converges."""
    return rng.uniform(1.5, 3.0, shape).astype(F32)


def _ints(*values: Any) -> np.ndarray:
    return np.array(values, np.int32)


_COMPLEX = np.array([[1 + 2j, -0.5 + 0.3j], [0.7 - 1.1j, -2.0 - 0.4j]], np.complex64)
_NAN, _INF = float("nan"), float("inf")
# Segments 0, 1 and 3 (2 is empty); the unsorted ids also drop a row (-1).
_SEGMENT_IDS = _ints(0, 0, 1, 3, 3)
_UNSORTED_IDS = _ints(3, 0, 3, -1, 0)


def _segment_data(rng: np.random.Generator) -> np.ndarray:
    return away_from_zero(rng, (5, 2))


def _segment_spec(ref, ids=_SEGMENT_IDS, num_segments=4, unsorted=False, **kw: Any) -> Spec:
    if unsorted:
        return Spec(lambda rng: (_segment_data(rng), ids), lambda d, i, num_segments: ref(d, i, num_segments),
                    kwargs={"num_segments": num_segments}, **kw)
    return Spec(lambda rng: (_segment_data(rng), ids), lambda d, i: ref(d, i), impl_kwargs={"num_segments":
                                                                                          num_segments}, **kw)


# -- the table ----------------------------------------------------------------------------------------------

SPEC: dict[str, Spec] = {
    # rounding: no value near a half (rint's ties have their own case)
    "math.rint": unary(np.rint),
    # special functions
    "math.erfc": unary(erfc_ref),
    "math.erfinv": unary(erfinv_ref, unit),
    "math.erfcinv": unary(erfcinv_ref, below_two),
    "math.ndtri": unary(ndtri_ref, probabilities),
    "math.lgamma": unary(lgamma_ref, positive),
    "math.digamma": unary(digamma_ref, positive),
    "math.bessel_i0": unary(i0_ref),
    "math.bessel_i0e": unary(i0e_ref, away_from_zero),  # i0e has a kink at 0 (|x|)
    "math.bessel_i1": unary(i1_ref),
    "math.bessel_i1e": unary(i1e_ref, away_from_zero),
    "math.zeta": binary(zeta_ref, zeta_exponents, positive),
    # JAX has no second derivative for a (nor TF: IgammaGradA has no gradient): check_grads to first order
    "math.igamma": binary(igamma_ref, positive, positive, grad_order=1),
    "math.igammac": binary(igammac_ref, positive, positive, grad_order=1),
    "math.lbeta": Spec(lambda rng: (positive(rng, (2, 3)),), lbeta_ref),
    "math.nextafter": binary(np.nextafter),
    "math.angle": fixed(_COMPLEX, ref=np.angle),  # of a real tensor: its own case (TF: no gradient)
    "complex": binary(complex_ref, mixed="TypeError"),
    # division and products with TF's zeros
    "math.divide_no_nan": binary(divide_no_nan_ref, sy=away_from_zero, mixed="TypeError"),
    "math.reciprocal_no_nan": unary(lambda x: (1 / x).astype(x.dtype), away_from_zero),
    # TF's wrapper converts y to x's dtype in Python: a ValueError, before the kernel
    "math.multiply_no_nan": binary(multiply_no_nan_ref, mixed="ValueError"),
    "math.xlogy": binary(_x_times(np.log), sy=positive),
    "math.xlog1py": binary(_x_times(np.log1p), sy=positive),
    "math.xdivy": binary(_x_times(np.reciprocal), sy=away_from_zero),
    "truncatediv": binary(lambda x, y: np.trunc(x / y), sy=away_from_zero),
    # TF has no gradient for truncatemod (LookupError), so it is not a "binary" case: the broadcasting test
    # differentiates those
    "truncatemod": fixed([[1.3, -2.7, 4.1], [0.45, 3.3, -1.0]], [[0.7, 1.9, -1.6], [2.0, -1.4, 0.3]], ref=np.fmod),
    # TF's wrapper converts scalar to x's dtype in Python: a ValueError
    "math.scalar_mul": Spec(lambda rng: (np.asarray(rng.normal(), F32), normal(rng, (2, 3))), np.multiply,
                            mixed="ValueError"),
    "math.polyval": Spec(lambda rng: (normal(rng, ()), normal(rng, (3,)), normal(rng, ()), normal(rng, (2, 3))),
                         polyval_ref, variadic=True, tf_call=_call_polyval),
    # predicates
    "math.is_non_decreasing": fixed([[1.0, 1.0], [2.0, 3.0]], ref=lambda x: np.all(np.diff(x.ravel()) >= 0)),
    "math.is_strictly_increasing": fixed([[1.0, 1.0], [2.0, 3.0]], ref=lambda x: np.all(np.diff(x.ravel()) > 0)),
    # TF's result is float32 for every input dtype: an int32 input keeps the float64 test (float64 in, float64 out)
    # from applying
    "math.zero_fraction": fixed(np.array([[0, 3, 0], [2, 0, -1]], np.int32), ref=lambda x: np.float32(np.mean(x == 0))),
    # reductions
    "math.reduce_variance": Spec(lambda rng: (normal(rng, (2, 3)),), variance_ref, kwargs={"axis": 1}),
    "math.reduce_std": Spec(lambda rng: (normal(rng, (2, 3)),), std_ref, kwargs={"axis": 0, "keepdims": True}),
    "math.reduce_euclidean_norm": Spec(lambda rng: (normal(rng, (2, 3)),), euclidean_norm_ref, kwargs={"axis": 1}),
    "math.count_nonzero": fixed([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], ref=count_nonzero_ref, kwargs={"axis": 1}),
    "math.accumulate_n": Spec(lambda rng: tuple(normal(rng, (2, 3)) for _ in range(3)),
                              lambda *xs: xs[0] + xs[1] + xs[2], variadic=True,
                              mixed="ValueError"),  # TF's Python check of the inputs' dtypes
    # scans
    "math.cumsum": Spec(lambda rng: (normal(rng, (2, 3)),), cumsum_ref, kwargs={"axis": 1}),
    "math.cumprod": Spec(lambda rng: (away_from_zero(rng, (2, 3)),), cumprod_ref, kwargs={"axis": 1}),
    "math.cumulative_logsumexp": Spec(lambda rng: (normal(rng, (2, 3)),), cumulative_logsumexp_ref,
                                      kwargs={"axis": 1}),
    # segments: away_from_zero data (no ties for max/min, no zero factor for prod)
    "math.segment_sum": _segment_spec(segment_sum_ref),
    "math.segment_mean": _segment_spec(segment_mean_ref),
    "math.segment_max": _segment_spec(_segment_ref(lambda r: r.max(0), _zero)),
    "math.segment_min": _segment_spec(_segment_ref(lambda r: r.min(0), _zero)),
    "math.segment_prod": _segment_spec(segment_prod_ref),
    "math.unsorted_segment_sum": _segment_spec(segment_sum_ref, _UNSORTED_IDS, unsorted=True),
    "math.unsorted_segment_mean": _segment_spec(segment_mean_ref, _UNSORTED_IDS, unsorted=True),
    "math.unsorted_segment_sqrt_n": _segment_spec(segment_sqrt_n_ref, _UNSORTED_IDS, unsorted=True),
    "math.unsorted_segment_max": _segment_spec(_segment_ref(lambda r: r.max(0), _lowest), _UNSORTED_IDS,
                                               unsorted=True),
    "math.unsorted_segment_min": _segment_spec(_segment_ref(lambda r: r.min(0), _highest), _UNSORTED_IDS,
                                               unsorted=True),
    "math.unsorted_segment_prod": _segment_spec(segment_prod_ref, _UNSORTED_IDS, unsorted=True),
    # top k and counting
    "math.top_k": Spec(lambda rng: (normal(rng, (2, 4)),), top_k_ref, kwargs={"k": 2}),
    "math.approx_max_k": Spec(lambda rng: (normal(rng, (2, 4)),), lambda x, k: top_k_ref(x, k), kwargs={"k": 2}),
    "math.approx_min_k": Spec(lambda rng: (normal(rng, (2, 4)),), bottom_k_ref, kwargs={"k": 2},
                              tf_call=_call_approx_min_k),
    # ties at the boundary count as in; a non-finite row and a target out of range give False
    "math.in_top_k": fixed(_ints(1, 0, 2, 3), [[0.1, 0.5, 0.5], [0.2, 0.2, 0.9], [1.0, _INF, 0.0], [0.3, 0.1, 0.2]],
                           ref=in_top_k_ref, kwargs={"k": 1}),
    # TF has no gradient for weighted counts (DenseBincount): LookupError
    "math.bincount": Spec(lambda rng: (_ints(1, 1, 4, 0, 1), normal(rng, (5,))), bincount_ref,
                          impl_kwargs={"length": 5}),
    # the row takes the tensors first; TF's function is called with weights by keyword
    "math.confusion_matrix": Spec(lambda rng: (_ints(0, 1, 2, 2), _ints(0, 2, 2, 1), normal(rng, (4,))),
                                  confusion_matrix_ref, kwargs={"num_classes": 3, "dtype": np.float64},
                                  tf_call=_call_confusion_matrix),
    "math.invert_permutation": fixed(_ints(2, 0, 3, 1), ref=invert_permutation_ref),
}


EXTRA_CASES: list[tuple[str, str, Spec]] = [
    # TF's rint rounds half to even, as round does
    ("math.rint[ties]", "math.rint", fixed([0.5, 1.5, 2.5, -0.5, -1.5], ref=np.rint)),
    ("math.bessel_i0e[at_zero]", "math.bessel_i0e", fixed([0.0, 1.0], ref=i0e_ref)),
    # zeros in y: the result and both gradients are 0 there (DivNoNanGrad, MulNoNanGrad's x for y)
    ("math.divide_no_nan[zeros]", "math.divide_no_nan",
     fixed([1.5, -2.0, 0.0, 3.0], [0.0, 0.0, 0.0, -1.5], ref=divide_no_nan_ref, mixed="TypeError")),
    ("math.divide_no_nan[int32]", "math.divide_no_nan", fixed(_ints(7, -7, 3), _ints(2, 0, -4), ref=divide_no_nan_ref,
                                                               mixed="TypeError")),
    ("math.reciprocal_no_nan[zeros]", "math.reciprocal_no_nan",
     fixed([0.0, 2.0, -0.5], ref=lambda x: divide_no_nan_ref(np.ones_like(x), x))),
    ("math.multiply_no_nan[zeros]", "math.multiply_no_nan",
     fixed([1.5, 4.0, -2.0, 0.0], [0.0, 0.0, 0.5, 0.0], ref=multiply_no_nan_ref, mixed="ValueError")),
    # x = 0: the result and both gradients are 0, whatever y (XlogyGrad, Xlog1pyGrad, XdivyGrad)
    ("math.xlogy[zeros]", "math.xlogy", fixed([0.0, 0.0, 2.0], [0.0, 1.5, 0.5], ref=_x_times(np.log))),
    ("math.xlog1py[zeros]", "math.xlog1py", fixed([0.0, 0.0, 2.0], [-1.0, 1.5, 0.5], ref=_x_times(np.log1p))),
    ("math.xdivy[zeros]", "math.xdivy", fixed([0.0, 0.0, 2.0], [0.0, 1.5, 0.5], ref=_x_times(np.reciprocal))),
    ("truncatediv[int32]", "truncatediv", fixed(_ints(7, -7, 3), _ints(2, 2, -4), ref=lambda x, y: np.trunc(x / y)
                                                 .astype(np.int32))),
    ("math.reduce_euclidean_norm[int32]", "math.reduce_euclidean_norm",
     fixed(_ints(3, 4, 1), ref=lambda x: np.int32(math.sqrt(26)))),
    ("math.count_nonzero[keepdims]", "math.count_nonzero",
     fixed([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], ref=count_nonzero_ref,
           kwargs={"axis": 0, "keepdims": True, "dtype": np.int32})),
    ("math.count_nonzero[bool]", "math.count_nonzero", fixed(np.array([True, False, True]), ref=count_nonzero_ref)),
    # exclusive and reverse, alone and together
    ("math.cumsum[exclusive]", "math.cumsum",
     Spec(lambda rng: (normal(rng, (2, 3)),), cumsum_ref, kwargs={"axis": 1, "exclusive": True})),
    ("math.cumsum[reverse_exclusive]", "math.cumsum",
     Spec(lambda rng: (normal(rng, (3, 2)),), cumsum_ref, kwargs={"exclusive": True, "reverse": True})),
    ("math.cumsum[int32]", "math.cumsum", fixed(_ints(1, 2, 3), ref=cumsum_ref, kwargs={"reverse": True})),
    ("math.cumprod[reverse_exclusive]", "math.cumprod",
     Spec(lambda rng: (away_from_zero(rng, (2, 3)),), cumprod_ref,
          kwargs={"axis": -1, "exclusive": True, "reverse": True})),
    # a factor 0: TF's gradient for it is 0 (CumprodGrad divides with div_no_nan)
    ("math.cumprod[zero]", "math.cumprod", fixed([2.0, 0.0, 3.0, -1.5], ref=cumprod_ref)),
    ("math.cumprod[zero_exclusive]", "math.cumprod",
     fixed([2.0, 0.0, 3.0, -1.5], ref=cumprod_ref, kwargs={"exclusive": True})),
    ("math.cumulative_logsumexp[reverse_exclusive]", "math.cumulative_logsumexp",
     Spec(lambda rng: (normal(rng, (2, 3)),), cumulative_logsumexp_ref,
          kwargs={"axis": 1, "exclusive": True, "reverse": True})),
    # ties inside a segment: the gradient is shared evenly among the tied rows
    ("math.segment_max[ties]", "math.segment_max",
     Spec(lambda rng: (np.array([1.0, 3.0, 3.0, 2.0], F32), _ints(0, 0, 0, 2)),
          lambda d, i: _segment_ref(lambda r: r.max(0), _zero)(d, i), impl_kwargs={"num_segments": 3})),
    ("math.unsorted_segment_min[ties]", "math.unsorted_segment_min",
     Spec(lambda rng: (np.array([1.0, 3.0, 1.0, 2.0], F32), _ints(1, 1, 1, 0)),
          _segment_ref(lambda r: r.min(0), _highest), kwargs={"num_segments": 3})),
    # zero factors: one zero gets the product of the others, two zeros give 0 (as TF's SegmentProdGrad)
    ("math.segment_prod[zeros]", "math.segment_prod",
     Spec(lambda rng: (np.array([1.5, 0.0, 3.0, 0.0, 0.0, 2.0], F32), _ints(0, 0, 0, 1, 1, 1)),
          lambda d, i: segment_prod_ref(d, i), impl_kwargs={"num_segments": 2})),
    ("math.unsorted_segment_prod[zeros]", "math.unsorted_segment_prod",
     Spec(lambda rng: (np.array([1.5, 0.0, 3.0, 0.0, 0.0, 2.0], F32), _ints(1, 0, 1, 0, 1, 0)),
          segment_prod_ref, kwargs={"num_segments": 2})),
    # segment ids of rank 2 index the first two axes of data
    ("math.unsorted_segment_sum[ids_2d]", "math.unsorted_segment_sum",
     Spec(lambda rng: (normal(rng, (2, 2, 3)), np.array([[0, 1], [1, 1]], np.int32)), segment_sum_ref,
          kwargs={"num_segments": 2})),
    ("math.segment_mean[int32]", "math.segment_mean",
     Spec(lambda rng: (_ints(1, 2, 4, -3, -4), _ints(0, 0, 1, 2, 2)),
          lambda d, i: np.array([1, 4, -3], np.int32), impl_kwargs={"num_segments": 3})),
    ("math.unsorted_segment_max[int32]", "math.unsorted_segment_max",
     Spec(lambda rng: (_ints(1, 2, 4), _ints(0, 0, 2)), _segment_ref(lambda r: r.max(0), _lowest),
          kwargs={"num_segments": 3})),
    # ties: the lower index first
    ("math.top_k[ties]", "math.top_k",
     fixed([1.0, 3.0, 3.0, 2.0], ref=top_k_ref, kwargs={"k": 3, "index_type": np.int64})),
    # weighted counts: minlength, maxlength (values above it are dropped), per row. (Every case of a row without
    # TF gradient needs a float argument: the LookupError test differentiates it.)
    ("math.bincount[minlength]", "math.bincount",
     Spec(lambda rng: (_ints(1, 1, 3), normal(rng, (3,))), bincount_ref, kwargs={"minlength": 6},
          impl_kwargs={"length": 6})),
    ("math.bincount[maxlength]", "math.bincount",
     Spec(lambda rng: (_ints(1, 1, 5, 0), normal(rng, (4,))), bincount_ref, kwargs={"maxlength": 3},
          impl_kwargs={"length": 3})),
    ("math.bincount[axis]", "math.bincount",
     Spec(lambda rng: (np.array([[0, 1, 1], [2, 2, 0]], np.int32), normal(rng, (2, 3))), bincount_ref,
          kwargs={"axis": -1},
          impl_kwargs={"length": 3, "axis": -1})),
    ("math.confusion_matrix[int32]", "math.confusion_matrix",
     Spec(lambda rng: (_ints(0, 1, 2, 2), _ints(0, 2, 2, 1)), confusion_matrix_ref, kwargs={"num_classes": 4},
          tf_call=_call_confusion_matrix)),
]
