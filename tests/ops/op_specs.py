"""The op spec table: for every row of tapejax's op registry, sample inputs and a numpy reference.

`SPEC[row_name]` says how to exercise one row of `tapejax._src.registry.REGISTRY`: the tensor arguments (numpy
arrays, small fixed shapes, values inside the op's domain and away from its kinks and ties), the static keyword
arguments (TF's names), and a reference for the forward value written with numpy and `math` only (scipy is not
required). The reference also fixes the dtype TensorFlow gives the result (int32 `/` -> float64, comparisons ->
bool, argmax -> int64), and tests/compat/test_ops_vs_tf.py checks every reference against real TensorFlow.

`EXTRA_CASES` adds a few more cases for rows whose dtype rules or options deserve their own check (integer
division, round-half-to-even, complex inputs, split with -1, ...).

Only numpy and `math` are used; where numpy has no function the reference says what it uses instead
(`math.erf` elementwise for erf and the exact gelu).
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

F32 = np.float32

# -- samplers: (rng, shape) -> float32 array ----------------------------------------------------------------


def normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.normal(size=shape).astype(F32)


def positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, shape).astype(F32)


def unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inside (-1, 1), with margin: the domain of asin, acos, atanh."""
    return rng.uniform(-0.8, 0.8, shape).astype(F32)


def above_one(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inside (1, inf), with margin: the domain of acosh."""
    return rng.uniform(1.2, 3.0, shape).astype(F32)


def away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """|x| in [0.3, 2] with random signs: away from the kink of abs/relu and the pole of 1/x."""
    return (rng.uniform(0.3, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(F32)


def small_integers(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Floats from {0, 1, 2}: comparisons then see ties as well as strict orders."""
    return rng.integers(0, 3, shape).astype(F32)


def booleans(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.random(shape) < 0.5


# -- the spec record ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Spec:
    """How to exercise one registry row.

    Attributes:
      args: rng -> the tensor arguments (numpy arrays), in the order of the row's impl.
      ref: numpy reference, `ref(*args, **kwargs)`; returns an array (or a tuple of arrays for multi-output
        rows) whose dtype is the dtype TensorFlow gives.
      kwargs: static keyword arguments, by TF's names, as the public callable takes them.
      variadic: the public callable takes the tensors as one sequence (`tf.stack(values, axis)`).
      kind: "unary" / "binary" for elementwise ops (second-derivative and broadcasting tests), else "".
      samplers: for elementwise kinds, one sampler per argument, to draw the same domain in other shapes.
      impl_kwargs: static kwargs for `impl` when they differ from the public ones (`__getitem__`'s key).
      tf_call: `(module, args, kwargs) -> result` calling TF's public API, for rows whose public TF function has
        another calling convention than the row (`tf.fill(dims, value)`, `tf.einsum(equation, *inputs)`) or
        lives under another path (`where_indices` is `tf.where(condition)`).
      permutation: random op: the value is compared as a permutation of the reference's rows.
      mixed: the name of the exception TF raises when the first float argument is float64 and the other float
        arguments float32 ("InvalidArgumentError" from the kernel; "TypeError" or "ValueError" from a check or
        conversion in TF's Python wrapper), or "" where TF converts and computes. Only looked at for rows with two
        or more float arguments.
      rtol, atol: float32 tolerances of the forward comparison with the reference.
      float32_inside: the row computes in float32 whatever its float inputs' dtype, as TF's image ops do (a float64
        image is resized or brightened in float32): float64 finite differences cannot see its derivatives, so
        `check_grads` runs on the float32 inputs, to first order, and a float64 result is compared with float32
        tolerances.
      grad_order: the order to which `jax.test_util.check_grads` holds the row's JAX derivatives to finite
        differences: 1 for rows whose derivatives are TF's rather than the true ones beyond that (TF's moments
        stops the gradient through the mean inside the variance; its softmax cross-entropy takes
        softmax - labels as the logits' gradient, exact for labels that sum to one only).
    """

    args: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    ref: Callable[..., Any]
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    variadic: bool = False
    kind: str = ""
    samplers: tuple[Callable[..., np.ndarray], ...] = ()
    impl_kwargs: Mapping[str, Any] | None = None
    tf_call: Callable[..., Any] | None = None
    permutation: bool = False
    mixed: str = "InvalidArgumentError"
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_order: int = 2
    float32_inside: bool = False


def rng_for(case_id: str) -> np.random.Generator:
    """A generator seeded by the case id: every run draws the same inputs."""
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def sample(case_id: str, spec: Spec) -> tuple[np.ndarray, ...]:
    return tuple(spec.args(rng_for(case_id)))


def unary(ref: Callable[..., Any], sampler: Callable[..., np.ndarray] = normal, shape: tuple[int, ...] = (2, 3),
          **kw: Any) -> Spec:
    return Spec(args=lambda rng: (sampler(rng, shape),), ref=ref, kind="unary", samplers=(sampler,), **kw)


def binary(ref: Callable[..., Any], sx: Callable[..., np.ndarray] = normal, sy: Callable[..., np.ndarray] = normal,
           shape: tuple[int, ...] = (2, 3), **kw: Any) -> Spec:
    return Spec(args=lambda rng: (sx(rng, shape), sy(rng, shape)), ref=ref, kind="binary", samplers=(sx, sy),
                **kw)


def fixed(*arrays: Any, ref: Callable[..., Any], **kw: Any) -> Spec:
    """Hand-chosen inputs (float lists become float32), for ops whose kinks random values might hit."""
    values = tuple(np.asarray(a, F32) if isinstance(a, list | float) else np.asarray(a) for a in arrays)
    return Spec(args=lambda rng: values, ref=ref, **kw)


def elementwise_fixed(kind: str, *arrays: Any, ref: Callable[..., Any], samplers: tuple = (), **kw: Any) -> Spec:
    spec = fixed(*arrays, ref=ref, **kw)
    return dataclasses.replace(spec, kind=kind, samplers=samplers)


# -- numpy references where numpy has no single function ----------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])  # numpy has no erf: math.erf elementwise


def erf_ref(x):
    return _erf(x).astype(x.dtype)


def sigmoid_ref(x):
    return 1 / (1 + np.exp(-x))


def log_sigmoid_ref(x):
    return -np.logaddexp(0, -x)


def softplus_ref(x):
    return np.logaddexp(0, x)


# SELU's constants (Klambauer et al. 2017), as TF documents them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu_ref(x):
    return (SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x))).astype(x.dtype)


def gelu_ref(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi).astype(x.dtype) * (x + 0.044715 * x**3)))
    return (0.5 * x * (1 + erf_ref(x / np.sqrt(2).astype(x.dtype)))).astype(x.dtype)


def softmax_ref(x, axis=None):
    axis = -1 if axis is None else axis
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x, axis=None):
    axis = -1 if axis is None else axis
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def logsumexp_ref(x, axis=None, keepdims=False):
    m = x.max(axis=axis, keepdims=True)
    out = m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def reduce_mean_ref(x, axis=None, keepdims=False):
    # TF keeps the input dtype; integer means truncate toward zero.
    mean = np.mean(x, axis=axis, keepdims=keepdims)
    return np.trunc(mean).astype(x.dtype) if x.dtype.kind in "iu" else np.asarray(mean, x.dtype)


def clip_by_norm_ref(t, clip_norm, axes=None):
    norm = np.sqrt(np.sum(t * t, axis=axes, keepdims=True))
    return (t * clip_norm / np.maximum(norm, clip_norm)).astype(t.dtype)


def norm_ref(x, ord="euclidean", axis=None, keepdims=None):
    if ord in ("euclidean", "fro"):
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=bool(keepdims))).astype(x.dtype)
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=bool(keepdims)).astype(x.dtype)


def split_ref(x, num_or_size_splits, axis=0):
    if isinstance(num_or_size_splits, int):
        return tuple(np.split(x, num_or_size_splits, axis))
    sizes = list(num_or_size_splits)
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis))


def gather_ref(params, indices, axis=None, batch_dims=0):
    axis = batch_dims if axis is None else axis
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    assert batch_dims == 1 and axis == 1, "reference covers the cases in this table"
    return np.stack([np.take(p, i, axis=0) for p, i in zip(params, indices)])


def _well_conditioned(rng: np.random.Generator, n: int) -> np.ndarray:
    return (rng.normal(size=(n, n)) * 0.3 + 2 * np.eye(n)).astype(F32)


def _distinct_rows(rng: np.random.Generator) -> np.ndarray:
    return (np.arange(8, dtype=F32).reshape(4, 2) + rng.uniform(0, 0.5, (4, 2))).astype(F32)


# A raw JAX PRNG key (uint32[2]): the key input of the random.shuffle row.
SHUFFLE_KEY = np.array([0, 42], dtype=np.uint32)

# The slicing key of the `__getitem__` case: x[::-1, None, 1:].
GETITEM_KEY = (slice(None, None, -1), None, slice(1, None))


def _getitem_impl_kwargs() -> dict[str, Any]:
    # impl takes the key in the hashable form the Tensor operator builds; build it with tapejax's own helper.
    from tapejax.ops.array import _index_key

    return {"key": _index_key(GETITEM_KEY)}


class _LazyKwargs(Mapping):
    """A mapping computed on first use (so importing this table does not import tapejax)."""

    def __init__(self, make: Callable[[], dict[str, Any]]):
        self._make = make
        self._value: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._value is None:
            self._value = self._make()
        return self._value

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


# -- calls of TF's public API where it differs from the row's callable --------------------------------------


def _call_fill(m, args, kwargs):
    return m.fill(kwargs["dims"], args[0])


def _call_einsum(m, args, kwargs):
    return m.einsum(kwargs["equation"], *args)


def _call_shuffle(m, args, kwargs):
    return m.random.shuffle(args[0])  # TF draws the key itself; the row takes it as an input


def _call_where_indices(m, args, kwargs):
    return m.where(args[0])


# -- the table ----------------------------------------------------------------------------------------------

_NAN, _INF = float("nan"), float("inf")

_COMPLEX = np.array([[1 + 2j, -0.5 + 0.3j], [0.7 - 1.1j, -2.0 - 0.4j]], np.complex64)


SPEC: dict[str, Spec] = {
    # arithmetic
    "math.add": binary(np.add),
    "math.subtract": binary(np.subtract),
    "math.multiply": binary(np.multiply),
    # TF checks the dtypes of / in Python: TypeError "`x` and `y` must have the same dtype, got tf.float64 !=
    # tf.float32."
    "math.truediv": binary(np.true_divide, sy=away_from_zero, mixed="TypeError"),
    "math.divide": binary(np.true_divide, sy=away_from_zero, mixed="TypeError"),
    "math.floordiv": binary(np.floor_divide, sy=away_from_zero),
    "realdiv": binary(np.true_divide, sy=away_from_zero),  # the raw op: mixed dtypes are its InvalidArgumentError
    # x / y kept at least 0.1 away from an integer: floormod has a jump there.
    "math.floormod": elementwise_fixed("binary", [[1.3, -2.7, 4.1], [0.45, 3.3, -1.0]],
                                       [[0.7, 1.9, -1.6], [2.0, -1.4, 0.3]], ref=np.remainder,
                                       samplers=(normal, away_from_zero)),
    "math.pow": binary(np.power, sx=positive),
    "math.negative": unary(np.negative),
    "math.abs": unary(np.abs, away_from_zero),
    "math.sign": unary(np.sign, away_from_zero),
    "math.square": unary(np.square),
    "math.sqrt": unary(np.sqrt, positive),
    "math.rsqrt": unary(lambda x: 1 / np.sqrt(x), positive),
    "math.reciprocal": unary(lambda x: 1 / x, away_from_zero),
    "math.squared_difference": binary(lambda x, y: np.square(x - y)),
    # exponentials, logs, trigonometry
    "math.exp": unary(np.exp),
    "math.expm1": unary(np.expm1),
    "math.log": unary(np.log, positive),
    "math.log1p": unary(np.log1p, positive),
    "math.sin": unary(np.sin),
    "math.cos": unary(np.cos),
    "math.tan": unary(np.tan, unit),
    "math.asin": unary(np.arcsin, unit),
    "math.acos": unary(np.arccos, unit),
    "math.atan": unary(np.arctan),
    "math.atan2": binary(np.arctan2, sx=normal, sy=positive),  # x > 0: away from the branch cut
    "math.sinh": unary(np.sinh),
    "math.cosh": unary(np.cosh),
    "math.tanh": unary(np.tanh),
    "math.asinh": unary(np.arcsinh),
    "math.acosh": unary(np.arccosh, above_one),
    "math.atanh": unary(np.arctanh, unit),
    "math.sigmoid": unary(sigmoid_ref),
    "math.log_sigmoid": unary(log_sigmoid_ref),
    "math.softplus": unary(softplus_ref),
    "math.erf": unary(erf_ref),
    "math.real": unary(np.real),
    "math.imag": fixed(_COMPLEX, ref=np.imag),  # of a real tensor: see test_tape_vs_tf.py (TF's None)
    "math.conj": unary(np.conj),
    # ties and kinks: random normals never tie
    "math.maximum": binary(np.maximum),
    "math.minimum": binary(np.minimum),
    "clip_by_value": fixed([[-1.3, -0.2, 0.7], [0.1, 1.1, -0.8]], -0.5, 0.5, ref=np.clip),
    # rounding: no value near a half (round's ties have their own case)
    "math.floor": unary(np.floor, shape=(2, 3)),
    "math.ceil": unary(np.ceil),
    "math.round": elementwise_fixed("unary", [[-1.7, -0.2, 0.3], [1.2, 2.8, -3.4]], ref=np.round,
                                    samplers=(normal,)),
    # comparisons and logic
    "math.equal": binary(np.equal, small_integers, small_integers),
    "math.not_equal": binary(np.not_equal, small_integers, small_integers),
    "math.less": binary(np.less, small_integers, small_integers),
    "math.less_equal": binary(np.less_equal, small_integers, small_integers),
    "math.greater": binary(np.greater, small_integers, small_integers),
    "math.greater_equal": binary(np.greater_equal, small_integers, small_integers),
    "math.logical_and": binary(np.logical_and, booleans, booleans),
    "math.logical_or": binary(np.logical_or, booleans, booleans),
    "math.logical_xor": binary(np.logical_xor, booleans, booleans),
    "math.logical_not": unary(np.logical_not, booleans),
    "math.is_nan": fixed([[1.0, _NAN, _INF], [-_INF, 0.0, -2.0]], ref=np.isnan),
    "math.is_inf": fixed([[1.0, _NAN, _INF], [-_INF, 0.0, -2.0]], ref=np.isinf),
    "math.is_finite": fixed([[1.0, _NAN, _INF], [-_INF, 0.0, -2.0]], ref=np.isfinite),
    # Python operators (internal rows)
    "__eq__": binary(np.equal, small_integers, small_integers),
    "__ne__": binary(np.not_equal, small_integers, small_integers),
    "__and__": binary(np.logical_and, booleans, booleans),
    "__or__": binary(np.logical_or, booleans, booleans),
    "__xor__": binary(np.logical_xor, booleans, booleans),
    "__invert__": unary(np.logical_not, booleans),
    # reductions (random normals: no ties for max/min; reduce_prod away from zero)
    "math.reduce_sum": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, axis, keepdims=False:
                            np.sum(x, axis=axis, keepdims=keepdims), kwargs={"axis": 1}),
    "math.reduce_mean": Spec(lambda rng: (normal(rng, (2, 3)),), reduce_mean_ref,
                             kwargs={"axis": 0, "keepdims": True}),
    "math.reduce_max": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, axis: np.max(x, axis=axis),
                            kwargs={"axis": 1}),
    "math.reduce_min": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x: np.asarray(np.min(x))),
    "math.reduce_prod": Spec(lambda rng: (away_from_zero(rng, (2, 3)),), lambda x, axis: np.prod(x, axis=axis),
                             kwargs={"axis": 1}),
    "math.reduce_logsumexp": Spec(lambda rng: (normal(rng, (2, 3)),), logsumexp_ref, kwargs={"axis": 1}),
    "math.reduce_any": Spec(lambda rng: (booleans(rng, (2, 3)),), lambda x, axis: np.any(x, axis=axis),
                            kwargs={"axis": 1}),
    "math.reduce_all": Spec(lambda rng: (booleans(rng, (2, 3)),), lambda x, axis: np.all(x, axis=axis),
                            kwargs={"axis": 1}),
    "math.argmax": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, axis: np.argmax(x, axis).astype(np.int64),
                        kwargs={"axis": 1}),
    "math.argmin": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x: np.argmin(x, 0).astype(np.int64)),
    "math.add_n": Spec(lambda rng: tuple(normal(rng, (2, 3)) for _ in range(3)), lambda *xs: xs[0] + xs[1] + xs[2],
                       variadic=True),
    # |t| is about 3, above clip_norm: the clipping branch, away from the tie norm == clip_norm
    # TF casts clip_norm to t's dtype: float32 with float64 is no error
    "clip_by_norm": fixed([[1.5, -2.0, 0.5], [1.0, 1.2, -0.7]], 1.0, ref=clip_by_norm_ref, mixed=""),
    # nn
    "nn.relu": unary(lambda x: np.maximum(x, 0), away_from_zero),
    "nn.relu6": elementwise_fixed("unary", [[-1.0, 0.5, 3.0], [5.5, 7.0, -0.3]], ref=lambda x: np.clip(x, 0, 6),
                                  samplers=(away_from_zero,)),
    "nn.elu": unary(lambda x: np.where(x > 0, x, np.expm1(x)), away_from_zero),
    "nn.selu": unary(selu_ref, away_from_zero),
    "nn.gelu": unary(gelu_ref),
    "nn.leaky_relu": unary(lambda x: np.where(x > 0, x, 0.2 * x), away_from_zero),
    "nn.silu": unary(lambda x: x * sigmoid_ref(x)),
    "nn.softsign": unary(lambda x: x / (1 + np.abs(x))),
    "nn.softmax": Spec(lambda rng: (normal(rng, (2, 3)),), softmax_ref),
    "nn.log_softmax": Spec(lambda rng: (normal(rng, (2, 3)),), log_softmax_ref, kwargs={"axis": 0}),
    # array
    "reshape": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, shape: np.reshape(x, shape),
                    kwargs={"shape": (3, -1)}),
    "transpose": Spec(lambda rng: (normal(rng, (2, 3, 4)),), lambda x, perm: np.transpose(x, perm),
                      kwargs={"perm": (2, 0, 1)}),
    "squeeze": Spec(lambda rng: (normal(rng, (2, 1, 3)),), lambda x, axis: np.squeeze(x, axis),
                    kwargs={"axis": 1}),
    "expand_dims": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, axis: np.expand_dims(x, axis),
                        kwargs={"axis": 1}),
    "broadcast_to": Spec(lambda rng: (normal(rng, (1, 3)),), lambda x, shape: np.broadcast_to(x, shape),
                         kwargs={"shape": (2, 3)}),
    "tile": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, multiples: np.tile(x, multiples),
                 kwargs={"multiples": (2, 1)}),
    "pad": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, paddings: np.pad(x, paddings),
                kwargs={"paddings": ((1, 0), (0, 2))}),
    "stack": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (2, 3))),
                  lambda *xs, axis: np.stack(xs, axis), kwargs={"axis": 1}, variadic=True),
    "concat": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (1, 3))),
                   lambda *xs, axis: np.concatenate(xs, axis), kwargs={"axis": 0}, variadic=True),
    "unstack": Spec(lambda rng: (normal(rng, (2, 3)),),
                    lambda x, axis: tuple(np.moveaxis(x, axis, 0)), kwargs={"axis": 1}),
    "split": Spec(lambda rng: (normal(rng, (2, 3)),), split_ref, kwargs={"num_or_size_splits": (1, 2), "axis": 1}),
    "einsum": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (3, 4))),
                   lambda *xs, equation: np.einsum(equation, *xs), kwargs={"equation": "ij,jk->ik"}, variadic=True,
                   tf_call=_call_einsum),
    # a repeated index: the gradient must add both contributions
    "gather": Spec(lambda rng: (normal(rng, (4, 3)), np.array([2, 0, 2], np.int32)), gather_ref),
    "where": Spec(lambda rng: (booleans(rng, (2, 3)), normal(rng, (2, 3)), normal(rng, (2, 3))), np.where),
    "where_indices": Spec(lambda rng: (booleans(rng, (2, 3)),), lambda c: np.argwhere(c).astype(np.int64),
                          tf_call=_call_where_indices),
    "cast": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, dtype: x.astype(dtype),
                 kwargs={"dtype": np.float64}),
    "identity": unary(lambda x: x),
    "stop_gradient": unary(lambda x: x),
    "__getitem__": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, key: x[key], kwargs={"key": GETITEM_KEY},
                        impl_kwargs=_LazyKwargs(_getitem_impl_kwargs)),
    # x[:, i] with a traced i (the public path inside tf.function): called here with a concrete index.
    "__getitem_dynamic__": Spec(lambda rng: (normal(rng, (2, 3, 4)), np.array(-2, np.int32)),
                                lambda x, i, key: x[:, int(i)], variadic=True,
                                kwargs={"key": (("slice", None, None, None), ("index", 0))}),
    # an eager x[:, i, s:s + 2]: its positions as arguments (one executable for every i and s)
    "__getitem_positions__": Spec(lambda rng: (normal(rng, (2, 3, 4)), np.array(-2, np.int32), np.array(1, np.int32)),
                                  lambda x, i, s, key: x[:, int(i), int(s):int(s) + 2], variadic=True,
                                  kwargs={"key": (("slice", None, None, None), ("index", 0), ("window", 1, 2))}),
    "shape": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x: np.array(x.shape, np.int32)),
    "size": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x: np.array(x.size, np.int32)),
    "rank": Spec(lambda rng: (normal(rng, (2, 3)),), lambda x: np.array(x.ndim, np.int32)),
    "fill": Spec(lambda rng: (np.array(1.5, F32),), lambda v, dims: np.full(dims, v, v.dtype),
                 kwargs={"dims": (2, 3)}, tf_call=_call_fill),
    # linalg
    "linalg.matmul": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (3, 4))), lambda a, b: a @ b),
    "linalg.matvec": Spec(lambda rng: (normal(rng, (2, 3)), normal(rng, (3,))), lambda a, b: a @ b),
    "linalg.solve": Spec(lambda rng: (_well_conditioned(rng, 3), normal(rng, (3, 2))), np.linalg.solve,
                         rtol=1e-4, atol=1e-5),
    "linalg.inv": Spec(lambda rng: (_well_conditioned(rng, 3),), np.linalg.inv, rtol=1e-4, atol=1e-5),
    "norm": Spec(lambda rng: (normal(rng, (2, 3)),), norm_ref),
    # random: the key is an input of the row; the value is a permutation of the rows
    "random.shuffle": Spec(lambda rng: (_distinct_rows(rng), SHUFFLE_KEY), lambda x, key: x, permutation=True,
                           tf_call=_call_shuffle),
}


# -- extra cases: (case id, row name, spec) -----------------------------------------------------------------



def _ints(*values: Any) -> np.ndarray:
    return np.array(values, np.int32)


EXTRA_CASES: list[tuple[str, str, Spec]] = [
    # TF: int32 / int32 -> float64; // and % keep int32 and floor (toward -inf)
    ("math.truediv[int32]", "math.truediv",
     fixed(_ints(7, -7, 3, 0), _ints(2, 2, -4, 5), ref=np.true_divide)),
    ("math.divide[int32]", "math.divide", fixed(_ints(7, -7, 3), _ints(2, 2, -4), ref=np.true_divide)),
    ("math.floordiv[int32]", "math.floordiv", fixed(_ints(7, -7, 3), _ints(2, 2, -4), ref=np.floor_divide)),
    ("math.floormod[int32]", "math.floormod", fixed(_ints(7, -7, 3), _ints(2, 2, -4), ref=np.remainder)),
    ("math.pow[int32]", "math.pow", fixed(_ints(2, -3, 5), _ints(3, 2, 0), ref=np.power)),
    # TF: the mean of int32 stays int32, truncated: mean(1, 2) = 1, mean(-1, -2) = -1
    ("math.reduce_mean[int32]", "math.reduce_mean",
     fixed(np.array([[1, 2], [-1, -2]], np.int32), ref=reduce_mean_ref, kwargs={"axis": 1})),
    ("math.argmax[int32]", "math.argmax",
     Spec(lambda rng: (normal(rng, (2, 3)),), lambda x, axis, output_type: np.argmax(x, axis).astype(np.int32),
          kwargs={"axis": 0, "output_type": np.int32})),
    # TF rounds half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0, -1.5 -> -2
    ("math.round[ties]", "math.round", fixed([0.5, 1.5, 2.5, -0.5, -1.5], ref=np.round)),
    ("cast[to_int32]", "cast",
     fixed([-1.7, -0.2, 2.5, 3.9], ref=lambda x, dtype: np.trunc(x).astype(dtype), kwargs={"dtype": np.int32})),
    ("math.abs[complex64]", "math.abs", fixed(_COMPLEX, ref=np.abs)),
    ("math.real[complex64]", "math.real", fixed(_COMPLEX, ref=np.real)),
    ("math.conj[complex64]", "math.conj", fixed(_COMPLEX, ref=np.conj)),
    ("nn.gelu[approximate]", "nn.gelu",
     Spec(lambda rng: (normal(rng, (2, 3)),), gelu_ref, kwargs={"approximate": True})),
    ("split[num]", "split", Spec(lambda rng: (normal(rng, (2, 3)),), split_ref,
                                 kwargs={"num_or_size_splits": 3, "axis": 1})),
    ("split[minus_one]", "split", Spec(lambda rng: (normal(rng, (2, 5)),), split_ref,
                                       kwargs={"num_or_size_splits": (2, -1), "axis": 1})),
    ("pad[reflect]", "pad", Spec(lambda rng: (normal(rng, (3, 3)),),
                                 lambda x, paddings, mode: np.pad(x, paddings, mode="reflect"),
                                 kwargs={"paddings": ((1, 1), (0, 2)), "mode": "REFLECT"})),
    ("gather[batch_dims]", "gather",
     Spec(lambda rng: (normal(rng, (2, 3)), np.array([[2, 0], [1, 1]], np.int32)), gather_ref,
          kwargs={"axis": 1, "batch_dims": 1})),
    ("linalg.matmul[transpose]", "linalg.matmul",
     Spec(lambda rng: (normal(rng, (3, 2)), normal(rng, (4, 3))), lambda a, b, transpose_a, transpose_b: a.T @ b.T,
          kwargs={"transpose_a": True, "transpose_b": True})),
    ("norm[axis]", "norm", Spec(lambda rng: (normal(rng, (2, 3)),), norm_ref, kwargs={"axis": 1, "keepdims": True})),
    ("math.reduce_sum[keepdims]", "math.reduce_sum",
     Spec(lambda rng: (normal(rng, (2, 3, 2)),), lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims),
          kwargs={"axis": (0, 2), "keepdims": True})),
]


# -- tf.nn: convolutions, pooling, bias ---------------------------------------------------------------------
# References by loops over filter taps and windows, in float64, channels last (channels-first inputs are moved
# there and back). Their window arguments are read the way TF documents them, independently of tapejax's code:
# one value for every spatial dimension, one per spatial dimension, or one per input dimension.


def _spatial_arg(value: Any, n: int, channels_first: bool) -> tuple[int, ...]:
    """strides / dilations / ksize for the n spatial dimensions."""
    if value is None:
        return (1,) * n
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        return tuple(values) * n
    if len(values) == n:
        return tuple(values)
    return tuple(values[2:] if channels_first else values[1:-1])


def _spatial_pads(sizes: tuple[int, ...], windows: tuple[int, ...], strides: tuple[int, ...], padding: Any,
                  channels_first: bool) -> list[tuple[int, int]]:
    """"VALID": none; "SAME": ceil(size / stride) outputs, the odd padding after; or TF's explicit pairs."""
    if padding == "VALID":
        return [(0, 0)] * len(sizes)
    if padding == "SAME":
        pads = []
        for size, k, s in zip(sizes, windows, strides):
            total = max((math.ceil(size / s) - 1) * s + k - size, 0)
            pads.append((total // 2, total - total // 2))
        return pads
    pairs = [tuple(p) for p in padding]
    return pairs[2:] if channels_first else pairs[1:-1]


def _channels_last(x: np.ndarray, n: int, channels_first: bool) -> np.ndarray:
    return np.moveaxis(x, x.ndim - n - 1, -1) if channels_first else x


def _channels_back(y: np.ndarray, n: int, channels_first: bool) -> np.ndarray:
    return np.moveaxis(y, -1, y.ndim - n - 1) if channels_first else y


def conv_ref(x, f, strides, padding, data_format=None, dilations=None):
    """TF's n-D convolution (n = filter rank - 2), grouped when the input has k times the filter's input channels;
    dimensions before the last n + 1 are batch dimensions."""
    n = f.ndim - 2
    channels_first = data_format is not None and data_format.startswith("NC")
    y = _channels_last(x, n, channels_first).astype(np.float64)
    batch = y.shape[:-n - 1]
    y = y.reshape((-1, *y.shape[-n - 1:]))
    s, d = _spatial_arg(strides, n, channels_first), _spatial_arg(dilations, n, channels_first)
    windows = tuple((f.shape[i] - 1) * d[i] + 1 for i in range(n))
    pads = _spatial_pads(y.shape[1:-1], windows, s, padding, channels_first)
    y = np.pad(y, [(0, 0), *pads, (0, 0)])
    out_sizes = [(y.shape[1 + i] - windows[i]) // s[i] + 1 for i in range(n)]
    groups, c_in, c_out = y.shape[-1] // f.shape[-2], f.shape[-2], f.shape[-1] // (y.shape[-1] // f.shape[-2])
    out = np.zeros((y.shape[0], *out_sizes, f.shape[-1]))
    for tap in np.ndindex(*f.shape[:n]):
        rows = tuple(slice(tap[i] * d[i], tap[i] * d[i] + (out_sizes[i] - 1) * s[i] + 1, s[i]) for i in range(n))
        patch = y[(slice(None), *rows)]
        for g in range(groups):
            out[..., g * c_out:(g + 1) * c_out] += (patch[..., g * c_in:(g + 1) * c_in]
                                                   @ f[tap][:, g * c_out:(g + 1) * c_out])
    out = out.reshape((*batch, *out.shape[1:]))
    return _channels_back(out, n, channels_first).astype(x.dtype)


def conv1d_ref(x, f, stride, padding, data_format="NWC", dilations=None):
    return conv_ref(x, f, stride, padding, data_format, dilations)


def conv3d_ref(x, f, strides, padding, data_format="NDHWC", dilations=None):
    return conv_ref(x, f, strides, padding, data_format, dilations)


def depthwise_conv2d_ref(x, f, strides, padding, data_format=None, dilations=None):
    """Input channel c meets filter[:, :, c, m] alone, for output channel c * multiplier + m."""
    channels_first = data_format is not None and data_format.startswith("NC")
    y = _channels_last(x, 2, channels_first)
    depth, multiplier = f.shape[2:]
    if not isinstance(padding, str):  # explicit pairs, in channels-last order
        padding = [(0, 0), *_spatial_pads((), (), (), padding, channels_first), (0, 0)]
    strides = _spatial_arg(strides, 2, channels_first)
    outs = [conv_ref(y[..., c:c + 1], f[:, :, c:c + 1, m:m + 1], strides, padding, None, dilations)
            for c in range(depth) for m in range(multiplier)]
    return _channels_back(np.concatenate(outs, axis=-1), 2, channels_first)


def conv2d_transpose_ref(x, f, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None):
    """The adjoint of conv2d from `output_shape`: each input element scatters x[n, i, j] @ f[a, b].T into the
    output at (i * stride + a * dilation, j * stride + b * dilation), less the forward padding."""
    channels_first = data_format.startswith("NC")
    y = _channels_last(x, 2, channels_first).astype(np.float64)
    sizes = list(output_shape)
    spatial = sizes if len(sizes) == 2 else (sizes[2:] if channels_first else sizes[1:3])
    s, d = _spatial_arg(strides, 2, channels_first), _spatial_arg(dilations, 2, channels_first)
    windows = tuple((f.shape[i] - 1) * d[i] + 1 for i in range(2))
    pads = _spatial_pads(tuple(spatial), windows, s, padding, channels_first)
    out = np.zeros((y.shape[0], spatial[0] + sum(pads[0]), spatial[1] + sum(pads[1]), f.shape[2]))
    for i, j in np.ndindex(*y.shape[1:3]):
        for a, b in np.ndindex(*f.shape[:2]):
            out[:, i * s[0] + a * d[0], j * s[1] + b * d[1]] += y[:, i, j] @ f[a, b].T
    out = out[:, pads[0][0]:pads[0][0] + spatial[0], pads[1][0]:pads[1][0] + spatial[1]]
    return _channels_back(out, 2, channels_first).astype(x.dtype)


def pool_ref(kind: str, n: int | None = None) -> Callable[..., np.ndarray]:
    """TF's max or average pooling (n spatial dimensions, or x.ndim - 2): padding never wins a max, and an
    average covers the input elements of its window only (TF's AvgPool with "SAME" divides by their count)."""

    def ref(x, ksize, strides, padding, data_format=None):
        dims = x.ndim - 2 if n is None else n
        channels_first = data_format is not None and data_format.startswith("NC")
        y = _channels_last(x, dims, channels_first).astype(np.float64)
        k, s = _spatial_arg(ksize, dims, channels_first), _spatial_arg(strides, dims, channels_first)
        pads = _spatial_pads(y.shape[1:-1], k, s, padding, channels_first)
        y = np.pad(y, [(0, 0), *pads, (0, 0)], constant_values=-np.inf if kind == "max" else np.nan)
        out_sizes = [(y.shape[1 + i] - k[i]) // s[i] + 1 for i in range(dims)]
        out = np.empty((y.shape[0], *out_sizes, y.shape[-1]))
        axes = tuple(range(1, dims + 1))
        for index in np.ndindex(*out_sizes):
            window = y[(slice(None), *(slice(i * st, i * st + kk) for i, st, kk in zip(index, s, k)))]
            out[(slice(None), *index)] = window.max(axis=axes) if kind == "max" else np.nanmean(window, axis=axes)
        return _channels_back(out, dims, channels_first).astype(x.dtype)

    return ref


def bias_add_ref(value, bias, data_format=None):
    if data_format is not None and data_format.startswith("NC"):
        bias = bias.reshape((-1,) + (1,) * (value.ndim - 2))
    return value + bias


def _call_channels_last(module_path: str, n: int) -> Callable[..., Any]:
    """TF's CPU kernels have no gradient of channels-first max pooling (MaxPoolGrad: "only supports NHWC on device
    type CPU"), so a channels-first case is compared with TF through its channels-last op on the transposed
    input (the case's window arguments are ints, the same in either layout). tapejax's channels-first path is
    tested against the numpy reference, which test_reference_matches_tf checks against this same call."""

    def call(m, args, kwargs):
        fn = m.nn
        for part in module_path.split("."):
            fn = getattr(fn, part)
        to_last = [0, *range(2, n + 2), 1]
        to_first = [0, n + 1, *range(1, n + 1)]
        options = {k: v for k, v in kwargs.items() if k != "data_format"}
        return m.transpose(fn(m.transpose(args[0], to_last), **options), to_first)

    return call


# A 3x3 image with tied maxima: TF's MaxPoolGrad gives a window's whole gradient to its first maximum (row-major).
_TIES = np.array([[1, 1, 0], [1, 1, 2], [2, 2, 2]], F32).reshape(1, 3, 3, 1)


SPEC.update({
    "nn.conv1d": Spec(lambda rng: (normal(rng, (2, 7, 3)), normal(rng, (3, 3, 4))), conv1d_ref,
                      kwargs=dict(stride=1, padding="SAME")),
    "nn.conv2d": Spec(lambda rng: (normal(rng, (2, 5, 5, 2)), normal(rng, (3, 3, 2, 3))), conv_ref,
                      kwargs=dict(strides=1, padding="SAME")),
    "nn.conv3d": Spec(lambda rng: (normal(rng, (1, 3, 4, 4, 2)), normal(rng, (2, 2, 2, 2, 3))), conv3d_ref,
                      kwargs=dict(strides=(1, 1, 1, 1, 1), padding="SAME")),
    # output_shape 6x6 with stride 2: the forward conv2d maps 6x6 to the input's 3x3
    "nn.conv2d_transpose": Spec(lambda rng: (normal(rng, (1, 3, 3, 3)), normal(rng, (3, 3, 2, 3))),
                                conv2d_transpose_ref, kwargs=dict(output_shape=(1, 6, 6, 2), strides=2,
                                                                     padding="SAME")),
    "nn.depthwise_conv2d": Spec(lambda rng: (normal(rng, (1, 5, 5, 2)), normal(rng, (3, 3, 2, 2))),
                                depthwise_conv2d_ref, kwargs=dict(strides=(1, 1, 1, 1), padding="SAME"), atol=1e-5),
    # random normals: no two elements of a window tie (ties have their own cases below)
    "nn.max_pool": Spec(lambda rng: (normal(rng, (1, 5, 5, 2)),), pool_ref("max"),
                        kwargs=dict(ksize=2, strides=2, padding="SAME")),
    "nn.max_pool1d": Spec(lambda rng: (normal(rng, (2, 7, 3)),), pool_ref("max", 1),
                          kwargs=dict(ksize=3, strides=2, padding="VALID")),
    "nn.max_pool2d": Spec(lambda rng: (normal(rng, (2, 5, 5, 2)),), pool_ref("max", 2),
                          kwargs=dict(ksize=3, strides=2, padding="SAME")),
    "nn.max_pool3d": Spec(lambda rng: (normal(rng, (1, 4, 3, 4, 2)),), pool_ref("max", 3),
                          kwargs=dict(ksize=2, strides=2, padding="SAME")),
    "nn.avg_pool": Spec(lambda rng: (normal(rng, (2, 7, 3)),), pool_ref("avg"),
                        kwargs=dict(ksize=3, strides=2, padding="SAME")),
    "nn.avg_pool1d": Spec(lambda rng: (normal(rng, (2, 7, 3)),), pool_ref("avg", 1),
                          kwargs=dict(ksize=2, strides=2, padding="SAME")),
    # 5x5 in 3x3 windows with stride 2, "SAME": the border windows cover 4 or 6 elements, not 9
    "nn.avg_pool2d": Spec(lambda rng: (normal(rng, (2, 5, 5, 2)),), pool_ref("avg", 2),
                          kwargs=dict(ksize=3, strides=2, padding="SAME")),
    "nn.avg_pool3d": Spec(lambda rng: (normal(rng, (1, 3, 4, 5, 2)),), pool_ref("avg", 3),
                          kwargs=dict(ksize=2, strides=2, padding="SAME")),
    "nn.bias_add": Spec(lambda rng: (normal(rng, (2, 3, 4)), normal(rng, (4,))), bias_add_ref),
})

EXTRA_CASES.extend([
    # convolutions: strides, dilations, padding forms, channels first, groups, extra batch dimensions
    ("nn.conv2d[VALID_strides]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 7, 6, 2)), normal(rng, (3, 2, 2, 4))), conv_ref,
          kwargs=dict(strides=(2, 3), padding="VALID"))),
    ("nn.conv2d[SAME_strides_odd]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 7, 6, 2)), normal(rng, (4, 3, 2, 3))), conv_ref,
          kwargs=dict(strides=(1, 2, 3, 1), padding="SAME"))),
    ("nn.conv2d[dilations]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 6, 7, 2)), normal(rng, (3, 2, 2, 3))), conv_ref,
          kwargs=dict(strides=1, padding="SAME", dilations=(2, 3)))),
    ("nn.conv2d[dilations_strides_VALID]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 8, 7, 2)), normal(rng, (2, 2, 2, 3))), conv_ref,
          kwargs=dict(strides=(1, 2, 1, 1), padding="VALID", dilations=(1, 1, 2, 1)))),
    ("nn.conv2d[NCHW]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (2, 2, 6, 5)), normal(rng, (3, 3, 2, 3))), conv_ref,
          kwargs=dict(strides=(1, 1, 2, 2), padding="SAME", data_format="NCHW"))),
    ("nn.conv2d[NCHW_dilations]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 2, 6, 5)), normal(rng, (2, 2, 2, 3))), conv_ref,
          kwargs=dict(strides=1, padding="VALID", data_format="NCHW", dilations=2))),
    ("nn.conv2d[explicit]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 5, 4, 2)), normal(rng, (3, 3, 2, 3))), conv_ref,
          kwargs=dict(strides=1, padding=((0, 0), (1, 2), (0, 1), (0, 0))))),
    ("nn.conv2d[groups]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (1, 5, 5, 4)), normal(rng, (3, 3, 2, 4))), conv_ref,
          kwargs=dict(strides=1, padding="SAME"))),
    ("nn.conv2d[batch_dims]", "nn.conv2d",
     Spec(lambda rng: (normal(rng, (2, 1, 4, 4, 2)), normal(rng, (2, 2, 2, 3))), conv_ref,
          kwargs=dict(strides=1, padding="VALID"))),
    ("nn.conv1d[NCW_strides]", "nn.conv1d",
     Spec(lambda rng: (normal(rng, (2, 3, 8)), normal(rng, (3, 3, 2))), conv1d_ref,
          kwargs=dict(stride=2, padding="SAME", data_format="NCW"))),
    ("nn.conv1d[dilations_VALID]", "nn.conv1d",
     Spec(lambda rng: (normal(rng, (2, 9, 3)), normal(rng, (3, 3, 2))), conv1d_ref,
          kwargs=dict(stride=1, padding="VALID", dilations=2))),
    ("nn.conv3d[NCDHW_strides]", "nn.conv3d",
     Spec(lambda rng: (normal(rng, (1, 2, 4, 5, 4)), normal(rng, (2, 3, 2, 2, 3))), conv3d_ref,
          kwargs=dict(strides=(1, 1, 2, 2, 1), padding="SAME", data_format="NCDHW"))),
    ("nn.conv3d[VALID_dilations]", "nn.conv3d",
     Spec(lambda rng: (normal(rng, (1, 5, 4, 4, 2)), normal(rng, (2, 2, 2, 2, 3))), conv3d_ref,
          kwargs=dict(strides=(1, 1, 1, 1, 1), padding="VALID", dilations=(1, 2, 1, 2, 1)))),
    ("nn.conv2d_transpose[odd_SAME]", "nn.conv2d_transpose",
     Spec(lambda rng: (normal(rng, (1, 3, 3, 3)), normal(rng, (3, 3, 2, 3))), conv2d_transpose_ref,
          kwargs=dict(output_shape=(1, 5, 5, 2), strides=2, padding="SAME"))),
    ("nn.conv2d_transpose[VALID]", "nn.conv2d_transpose",
     Spec(lambda rng: (normal(rng, (2, 3, 2, 3)), normal(rng, (3, 2, 2, 3))), conv2d_transpose_ref,
          kwargs=dict(output_shape=(2, 8, 5, 2), strides=(2, 2), padding="VALID"))),
    ("nn.conv2d_transpose[NCHW]", "nn.conv2d_transpose",
     Spec(lambda rng: (normal(rng, (1, 3, 3, 3)), normal(rng, (3, 3, 2, 3))), conv2d_transpose_ref,
          kwargs=dict(output_shape=(1, 2, 6, 6), strides=2, padding="SAME", data_format="NCHW"))),
    ("nn.conv2d_transpose[spatial_shape_dilations]", "nn.conv2d_transpose",
     Spec(lambda rng: (normal(rng, (1, 4, 4, 3)), normal(rng, (2, 2, 2, 3))), conv2d_transpose_ref,
          kwargs=dict(output_shape=(4, 4), strides=1, padding="SAME", dilations=2))),
    ("nn.conv2d_transpose[explicit]", "nn.conv2d_transpose",
     Spec(lambda rng: (normal(rng, (1, 3, 3, 3)), normal(rng, (3, 3, 2, 3))), conv2d_transpose_ref,
          kwargs=dict(output_shape=(1, 6, 6, 2), strides=2, padding=((0, 0), (1, 1), (1, 0), (0, 0))))),
    ("nn.depthwise_conv2d[strides_VALID]", "nn.depthwise_conv2d",
     Spec(lambda rng: (normal(rng, (1, 7, 6, 3)), normal(rng, (3, 2, 3, 2))), depthwise_conv2d_ref,
          kwargs=dict(strides=(1, 2, 1, 1), padding="VALID"))),
    ("nn.depthwise_conv2d[dilations]", "nn.depthwise_conv2d",
     Spec(lambda rng: (normal(rng, (1, 6, 6, 2)), normal(rng, (2, 3, 2, 2))), depthwise_conv2d_ref,
          kwargs=dict(strides=(1, 1, 1, 1), padding="SAME", dilations=(2, 1)))),
    ("nn.depthwise_conv2d[NCHW]", "nn.depthwise_conv2d",
     Spec(lambda rng: (normal(rng, (1, 2, 5, 5)), normal(rng, (3, 3, 2, 2))), depthwise_conv2d_ref,
          kwargs=dict(strides=(1, 1, 2, 2), padding="SAME", data_format="NCHW"))),
    # pooling: VALID vs SAME, overlapping windows, explicit padding, channels first, ties
    ("nn.max_pool2d[VALID]", "nn.max_pool2d",
     Spec(lambda rng: (normal(rng, (1, 6, 5, 2)),), pool_ref("max", 2),
          kwargs=dict(ksize=(2, 3), strides=(2, 1), padding="VALID"))),
    ("nn.max_pool2d[explicit]", "nn.max_pool2d",
     Spec(lambda rng: (normal(rng, (1, 5, 5, 2)),), pool_ref("max", 2),
          kwargs=dict(ksize=3, strides=2, padding=((0, 0), (1, 1), (2, 0), (0, 0))))),
    ("nn.max_pool2d[NCHW]", "nn.max_pool2d",
     Spec(lambda rng: (normal(rng, (1, 2, 5, 5)),), pool_ref("max", 2),
          kwargs=dict(ksize=2, strides=2, padding="SAME", data_format="NCHW"),
          tf_call=_call_channels_last("max_pool2d", 2))),
    ("nn.max_pool2d[ties]", "nn.max_pool2d",
     fixed(_TIES, ref=pool_ref("max", 2), kwargs=dict(ksize=2, strides=1, padding="VALID"))),
    ("nn.max_pool2d[ties_SAME]", "nn.max_pool2d",
     fixed(_TIES, ref=pool_ref("max", 2), kwargs=dict(ksize=2, strides=1, padding="SAME"))),
    ("nn.max_pool1d[NCW]", "nn.max_pool1d",
     Spec(lambda rng: (normal(rng, (2, 3, 7)),), pool_ref("max", 1),
          kwargs=dict(ksize=2, strides=2, padding="SAME", data_format="NCW"),
          tf_call=_call_channels_last("max_pool1d", 1))),
    ("nn.max_pool3d[VALID]", "nn.max_pool3d",
     Spec(lambda rng: (normal(rng, (1, 4, 5, 3, 2)),), pool_ref("max", 3),
          kwargs=dict(ksize=(2, 3, 2), strides=1, padding="VALID"))),
    ("nn.max_pool[rank5]", "nn.max_pool",
     Spec(lambda rng: (normal(rng, (1, 3, 4, 4, 2)),), pool_ref("max"),
          # data_format given: TF's gradient of max_pool on rank 5 fails with None ('NoneType' object has no
          # attribute 'decode'), where tapejax takes None for "NDHWC"
          kwargs=dict(ksize=2, strides=(1, 2, 2), padding="VALID", data_format="NDHWC"))),
    ("nn.avg_pool2d[VALID]", "nn.avg_pool2d",
     Spec(lambda rng: (normal(rng, (1, 6, 5, 2)),), pool_ref("avg", 2),
          kwargs=dict(ksize=(2, 3), strides=(2, 1), padding="VALID"))),
    ("nn.avg_pool2d[SAME_overlapping]", "nn.avg_pool2d",
     Spec(lambda rng: (normal(rng, (1, 4, 5, 2)),), pool_ref("avg", 2),
          kwargs=dict(ksize=3, strides=1, padding="SAME"))),
    ("nn.avg_pool2d[NCHW]", "nn.avg_pool2d",
     Spec(lambda rng: (normal(rng, (1, 2, 5, 5)),), pool_ref("avg", 2),
          kwargs=dict(ksize=(1, 1, 3, 2), strides=(1, 1, 2, 2), padding="SAME", data_format="NCHW"))),
    ("nn.avg_pool1d[NCW]", "nn.avg_pool1d",
     Spec(lambda rng: (normal(rng, (2, 3, 7)),), pool_ref("avg", 1),
          kwargs=dict(ksize=3, strides=2, padding="SAME", data_format="NCW"))),
    ("nn.avg_pool3d[NCDHW]", "nn.avg_pool3d",
     Spec(lambda rng: (normal(rng, (1, 2, 3, 4, 5)),), pool_ref("avg", 3),
          kwargs=dict(ksize=2, strides=2, padding="SAME", data_format="NCDHW"))),
    ("nn.avg_pool[rank4_VALID]", "nn.avg_pool",
     Spec(lambda rng: (normal(rng, (1, 5, 6, 2)),), pool_ref("avg"),
          kwargs=dict(ksize=(2, 2), strides=2, padding="VALID"))),
    ("nn.bias_add[NCHW]", "nn.bias_add",
     Spec(lambda rng: (normal(rng, (2, 3, 2, 2)), normal(rng, (3,))), bias_add_ref,
          kwargs={"data_format": "NCHW"})),
])


# -- tf.nn: losses, normalisations, embeddings --------------------------------------------------------------


def distributions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Rows of positive values summing to one (float32 rounding aside): labels for softmax cross-entropy."""
    u = rng.uniform(0.1, 1.0, shape)
    return (u / u.sum(axis=-1, keepdims=True)).astype(F32)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def softmax_cross_entropy_ref(labels, logits, axis=-1):
    return -np.sum(labels * _log_softmax(logits.astype(np.float64), axis), axis=axis).astype(logits.dtype)


def sparse_softmax_cross_entropy_ref(labels, logits):
    log_probs = _log_softmax(logits.astype(np.float64), -1)
    return -np.take_along_axis(log_probs, labels[..., None].astype(np.int64), axis=-1)[..., 0].astype(logits.dtype)


def sigmoid_cross_entropy_ref(labels, logits):
    return (np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))).astype(logits.dtype)


def log_poisson_loss_ref(targets, log_input, compute_full_loss=False):
    loss = np.exp(log_input) - log_input * targets
    if compute_full_loss:  # Stirling's log(t!) ~ t log t - t + log(2 pi t) / 2, where t > 1
        t = targets.astype(np.float64)
        stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss = loss + np.where(t > 1, stirling, 0)
    return loss.astype(log_input.dtype)


def l2_normalize_ref(x, axis=None, epsilon=1e-12):
    square_sum = np.sum(np.abs(x) ** 2, axis=axis, keepdims=True)
    return (x / np.sqrt(np.maximum(square_sum, epsilon))).astype(x.dtype)


def moments_ref(x, axes, keepdims=False):
    axes = tuple(axes) if isinstance(axes, list | tuple) else axes
    mean = np.mean(x.astype(np.float64), axis=axes, keepdims=True)
    if x.dtype.kind in "iu":  # TF keeps integer dtypes: the mean truncates, then the variance uses it
        mean = np.trunc(mean)
    variance = np.mean((x - mean) ** 2, axis=axes, keepdims=keepdims)
    if not keepdims:
        mean = np.squeeze(mean, axis=axes)
    cast = (lambda v: np.trunc(v).astype(x.dtype)) if x.dtype.kind in "iu" else (lambda v: np.asarray(v, x.dtype))
    return cast(mean), cast(variance)


def batch_normalization_ref(x, mean, variance, offset, scale, variance_epsilon):
    normalised = (x - mean) / np.sqrt(variance + variance_epsilon)
    if scale is not None:
        normalised = normalised * scale
    if offset is not None:
        normalised = normalised + offset
    return normalised.astype(x.dtype)


def embedding_lookup_ref(params, ids, max_norm=None):
    found = params[ids]
    if max_norm is None:
        return found
    axes = tuple(range(ids.ndim, found.ndim))  # each embedding on its own
    norm = np.sqrt(np.sum(found.astype(np.float64) ** 2, axis=axes, keepdims=True))
    return (found * np.minimum(1, max_norm / norm)).astype(params.dtype)


def _moments_int32(rng: np.random.Generator) -> tuple[np.ndarray]:
    return (rng.integers(-5, 6, (3, 4)).astype(np.int32),)


SPEC.update({
    # labels summing to one, where TF's logits gradient softmax - labels is the derivative of the loss
    "nn.softmax_cross_entropy_with_logits": Spec(lambda rng: (distributions(rng, (2, 4)), normal(rng, (2, 4))),
                                                 softmax_cross_entropy_ref, mixed="", grad_order=1),
    "nn.sparse_softmax_cross_entropy_with_logits": Spec(
        lambda rng: (np.array([2, 0, 3], np.int32), normal(rng, (3, 4))), sparse_softmax_cross_entropy_ref),
    "nn.sigmoid_cross_entropy_with_logits": Spec(
        lambda rng: (rng.uniform(0, 1, (2, 3)).astype(F32), normal(rng, (2, 3))), sigmoid_cross_entropy_ref),
    "nn.log_poisson_loss": Spec(lambda rng: (positive(rng, (2, 3)), normal(rng, (2, 3))), log_poisson_loss_ref),
    "nn.l2_loss": Spec(lambda rng: (normal(rng, (2, 3)),), lambda t: np.asarray(np.sum(t * t) / 2, t.dtype)),
    "nn.l2_normalize": Spec(lambda rng: (normal(rng, (2, 3)),), l2_normalize_ref, kwargs={"axis": 1}),
    "nn.moments": Spec(lambda rng: (normal(rng, (3, 4)),), moments_ref, kwargs={"axes": [0]}, grad_order=1),
    "nn.batch_normalization": Spec(
        lambda rng: (normal(rng, (2, 3)), normal(rng, (3,)), positive(rng, (3,)), normal(rng, (3,)),
                     positive(rng, (3,))),
        batch_normalization_ref, kwargs={"variance_epsilon": 1e-3}, mixed=""),  # TF casts to x's dtype
    # a repeated id: the gradient adds both rows' contributions
    "nn.embedding_lookup": Spec(lambda rng: (normal(rng, (4, 3)), np.array([2, 0, 2], np.int32)),
                                embedding_lookup_ref),
})

EXTRA_CASES.extend([
    # TF's logits gradient is softmax - labels also where the labels do not sum to one; labels' gradient is
    # -log_softmax(logits)
    ("nn.softmax_cross_entropy_with_logits[unnormalised]", "nn.softmax_cross_entropy_with_logits",
     Spec(lambda rng: (rng.uniform(0, 1, (2, 4)).astype(F32), normal(rng, (2, 4))), softmax_cross_entropy_ref,
          mixed="")),
    ("nn.softmax_cross_entropy_with_logits[axis0_rank3]", "nn.softmax_cross_entropy_with_logits",
     Spec(lambda rng: (np.moveaxis(distributions(rng, (2, 3, 4)), -1, 0).copy(), normal(rng, (4, 2, 3))),
          softmax_cross_entropy_ref, kwargs={"axis": 0}, mixed="")),
    ("nn.sparse_softmax_cross_entropy_with_logits[int64_rank3]", "nn.sparse_softmax_cross_entropy_with_logits",
     Spec(lambda rng: (np.array([[1, 0], [2, 2]], np.int64), normal(rng, (2, 2, 3))),
          sparse_softmax_cross_entropy_ref)),
    # logits 0 exactly: both of TF's `where`s take the >= branch
    ("nn.sigmoid_cross_entropy_with_logits[zero]", "nn.sigmoid_cross_entropy_with_logits",
     fixed([0.0, 1.0, 0.3, 0.0], [0.0, 0.0, -2.0, 3.0], ref=sigmoid_cross_entropy_ref)),
    # targets on both sides of 1: Stirling's term only above
    ("nn.log_poisson_loss[full]", "nn.log_poisson_loss",
     fixed([0.5, 1.0, 1.5, 3.0], [0.2, -0.4, 1.1, 0.7], ref=log_poisson_loss_ref,
           kwargs={"compute_full_loss": True})),
    ("nn.l2_normalize[all_axes]", "nn.l2_normalize", Spec(lambda rng: (normal(rng, (2, 3)),), l2_normalize_ref)),
    ("nn.l2_normalize[complex64]", "nn.l2_normalize", fixed(_COMPLEX, ref=l2_normalize_ref, kwargs={"axis": 0})),
    ("nn.moments[keepdims]", "nn.moments",
     Spec(lambda rng: (normal(rng, (2, 3, 4)),), moments_ref, kwargs={"axes": [0, 2], "keepdims": True})),
    ("nn.moments[int32]", "nn.moments", Spec(_moments_int32, moments_ref, kwargs={"axes": 1})),
    ("nn.batch_normalization[no_offset_scale]", "nn.batch_normalization",
     Spec(lambda rng: (normal(rng, (2, 2, 3)), normal(rng, (3,)), positive(rng, (3,))), batch_normalization_ref,
          kwargs={"offset": None, "scale": None, "variance_epsilon": 1e-3}, mixed="")),
    # ids of rank 2: each looked-up embedding is clipped to l2-norm 2.2 on its own (rows 0 and 2 are shorter)
    ("nn.embedding_lookup[max_norm]", "nn.embedding_lookup",
     Spec(lambda rng: (normal(rng, (4, 3)), np.array([[3, 0], [1, 3]], np.int32)), embedding_lookup_ref,
          kwargs={"max_norm": 2.2})),
])


def all_cases() -> list[tuple[str, str, Spec]]:
    """Every (case id, row name, spec): the main case of each row under its own name, then the extra cases."""
    return [(name, name, spec) for name, spec in SPEC.items()] + list(EXTRA_CASES)


# -- helpers shared by the registry tests and the TF comparison ---------------------------------------------


def is_float(array: Any) -> bool:
    """Whether gradients flow through values of this dtype (TF: floating or complex)."""
    dtype = getattr(array, "dtype", None)  # arrays and tracers; Python scalars go through numpy
    return np.dtype(dtype if dtype is not None else np.asarray(array).dtype).kind in "fc"


def grad_positions(args: tuple[np.ndarray, ...]) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if is_float(a))


def as_outputs(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def to_float64(args: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    def widen(a: np.ndarray) -> np.ndarray:
        if a.dtype == np.float32:
            return a.astype(np.float64)
        if a.dtype == np.complex64:
            return a.astype(np.complex128)
        return a

    return tuple(widen(a) for a in args)


def weights_for(outputs: tuple[np.ndarray, ...], case_id: str) -> tuple[np.ndarray, ...]:
    """A fixed random weight per output (same shape and dtype), for the loss sum(out * w).

    Non-float outputs (bool, int) get a float32 weight: the loss casts them to float32 first.
    """
    rng = np.random.default_rng(zlib.crc32(("w:" + case_id).encode()))
    weights = []
    for o in outputs:
        o = np.asarray(o)
        w = rng.normal(size=o.shape)
        if o.dtype.kind == "c":
            w = w + 1j * rng.normal(size=o.shape)
        weights.append(np.asarray(w, o.dtype if o.dtype.kind in "fc" else F32))
    return tuple(weights)


def loss(m: Any, outputs: tuple[Any, ...], weights: tuple[np.ndarray, ...]) -> Any:
    """sum_i reduce_sum(out_i * w_i) in module `m` (tapejax or tensorflow); non-float outputs cast to float32."""
    total = None
    for o, w in zip(outputs, weights):
        if not o.dtype.is_floating and not o.dtype.is_complex:
            o = m.cast(o, m.float32)
        term = m.reduce_sum(o * m.constant(w))
        total = term if total is None else total + term
    return total


def tape_gradient(m: Any, call: Callable[[list[Any]], Any], args: tuple[np.ndarray, ...], case_id: str,
                  *, through_cast: bool = False) -> tuple[tuple[Any, ...], list[Any]]:
    """Runs `call(tensors)` under `m.GradientTape`; returns (outputs, gradient of `loss` per source).

    The sources are the float arguments, watched. With `through_cast`, every argument is instead computed on the
    tape as `cast(source, its dtype)` from a watched float64 (complex128) source: the op itself is then the only
    thing that can cut the gradient, also for ops whose inputs are bool or int.
    """
    if through_cast:
        sources = [m.constant(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)) for a in args]
    else:
        sources = [m.constant(args[i]) for i in grad_positions(args)]
    with m.GradientTape() as tape:
        for s in sources:
            tape.watch(s)
        if through_cast:
            tensors = [m.cast(s, a.dtype) for s, a in zip(sources, args)]
        else:
            it = iter(sources)
            tensors = [next(it) if is_float(a) else m.constant(a) for a in args]
        outputs = as_outputs(call(tensors))
        target = loss(m, outputs, weights_for(tuple(o.numpy() for o in outputs), case_id))
    return outputs, tape.gradient(target, sources)


# -- the areas' tables ---------------------------------------------------------------------------------------
# One file per area of the op table (tests/ops/specs_<area>.py, each with its own SPEC and EXTRA_CASES, built from
# the helpers above), merged here, so each area's rows are written and reviewed on their own.
_AREAS = ("specs_math", "specs_linalg", "specs_array", "specs_random", "specs_nn", "specs_image")


def _merge_areas() -> None:
    import importlib  # noqa: PLC0415 (only here: the area modules import this one)

    for area in _AREAS:
        try:
            module = importlib.import_module(area)
        except ModuleNotFoundError as e:
            if e.name == area:
                continue
            raise
        SPEC.update(module.SPEC)
        EXTRA_CASES.extend(getattr(module, "EXTRA_CASES", []))


_merge_areas()
