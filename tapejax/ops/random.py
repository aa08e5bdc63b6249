"""tf.random with TF's global/op seed semantics on JAX keys.

The key of every sample is explicit: it is derived from (global seed, op seed, call count), so
`tf.random.set_seed(s)` makes a program's sequence of samples reproducible, and an op that must replay (shuffle)
takes its key as an input (DESIGN invariant 3). The numbers differ from TF's: the generators differ.
"""

from __future__ import annotations

import math
import os
from typing import Any

import jax
import jax.numpy as jnp
from jax._src import config as jax_config  # eager_constant_folding: ensure_compile_time_eval's switch
import numpy as np

from tapejax._src import caches, checking, dtypes, errors, function
from tapejax._src.convert import to_array
from tapejax._src.registry import hashable, op
from tapejax._src.tensor import EagerTensor, OPERATORS, Tensor
from tapejax._src.context import CONTEXT
from tapejax._src.variable import Variable
from tapejax.ops import random_host

_DEFAULT_GLOBAL_SEED = 87654321  # TF uses a fixed global seed when only an op seed is given




def set_seed(seed: int | None) -> None:
    """Sets the global random seed (`tf.random.set_seed`): later random ops draw a reproducible sequence."""
    CONTEXT.global_seed = None if seed is None else int(seed)
    CONTEXT.seed_counter = 0
    CONTEXT.seed_calls = {}
    function.new_seed_epoch()


# The third datum of a key drawn without an op seed. An op seed given by the user counts its calls there from 0,
# so the two never share a key: after `set_seed(5)`, `normal(seed=0)` and the first unseeded op would otherwise
# both draw from (5, 0, 0), and their samples would be the same bits (AlphaDropout's mask and its inputs, correlated).
_COUNTER_CALL = 2**32 - 1


def next_key(seed: int | None = None) -> jax.Array:
    """The key for one random op call, by TF's rules for global and op seeds."""
    state = CONTEXT
    call = 0
    if state.global_seed is None and seed is None:
        global_seed, op_seed, call = state.entropy, state.seed_counter, _COUNTER_CALL
        state.seed_counter += 1
    elif seed is None:
        global_seed, op_seed, call = state.global_seed, state.seed_counter, _COUNTER_CALL
        state.seed_counter += 1
    else:
        global_seed = _DEFAULT_GLOBAL_SEED if state.global_seed is None else state.global_seed
        op_seed = int(seed)
        # a fixed op seed draws a new sequence on each call (TF); counted per (global, op) seed pair. Counter
        # seeds are new on every call, so they need no count (counting them grew without bound).
        call = state.seed_calls.get((global_seed, op_seed), 0)
        state.seed_calls[(global_seed, op_seed)] = call + 1
    words = random_host.key(global_seed, op_seed, call)
    if words is not None:  # JAX's key, computed without its four compiles
        key = jax.device_put(words)
    else:
        key = jax.random.fold_in(jax.random.fold_in(jax.random.PRNGKey(global_seed), op_seed), call)
    trace = CONTEXT.trace
    if trace is not None:  # inside tf.function: each call of the compiled step draws new numbers, as in TF
        key = jax.random.fold_in(key, trace.call_count())
    return key


def _shape(shape: Any, op_type: str = "RandomUniform") -> tuple[int, ...]:
    shape = hashable(shape, op_type, "shape")  # a shape tensor must have a value at trace time (static_values.py)
    dims = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    for d in dims:
        if d < 0:
            raise errors.invalid_argument(op_type, f"Dimension {d} must be >= 0")
    return dims


def _float_dtype(dtype: Any) -> np.dtype:
    """A float dtype for a normal sample; TF converts its float mean to another dtype, a TypeError."""
    tf_dtype = dtypes.as_dtype(dtype)
    if not (tf_dtype.is_floating or tf_dtype.is_complex):
        raise TypeError(f"Cannot convert 0.0 to EagerTensor of dtype {tf_dtype.name}")
    return tf_dtype._np


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Samples from a normal distribution; differentiable with respect to `mean` and `stddev`, as in TF."""
    np_dtype = _float_dtype(dtype)
    sample = EagerTensor(jax.random.normal(next_key(seed), _shape(shape, "RandomStandardNormal"), np_dtype))
    return _affine(sample, stddev, mean, np_dtype)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Samples uniformly from [minval, maxval); integers need `maxval`, as in TF."""
    tf_dtype = dtypes.as_dtype(dtype)
    key = next_key(seed)
    if tf_dtype.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {tf_dtype!r}")
        return EagerTensor(jax.random.randint(key, _shape(shape), int(minval), int(maxval), tf_dtype._np))
    sample = EagerTensor(_uniform(key, _shape(shape), tf_dtype._np))
    minval, maxval = _bound(minval, tf_dtype._np), _bound(1.0 if maxval is None else maxval, tf_dtype._np)
    return _affine(sample, OPERATORS["math.subtract"](maxval, minval) if not _is_number(maxval, minval)
                   else maxval - minval, minval, tf_dtype._np)


def _is_number(*values: Any) -> bool:
    return all(isinstance(v, int | float) for v in values)


def _bound(value: Any, np_dtype: np.dtype) -> Any:
    """A mean, stddev, minval or maxval as TF converts it, to the sample's dtype: a numpy value is cast to it
    (`minval=np.int32(0)` is fine), a tensor of another dtype is TF's ValueError."""
    if _is_number(value):
        return float(value) if isinstance(value, bool) else value  # a bool operand would not take the float hint
    array = to_array(value, dtype=dtypes.from_numpy(np_dtype))  # raises for a tensor of another dtype
    return value if isinstance(value, Tensor | Variable) else EagerTensor(jnp.asarray(array))


def _affine(sample: Tensor, scale: Any, shift: Any, np_dtype: np.dtype) -> Tensor:
    # Through recorded ops, so gradients reach tensor-valued scale and shift (TF: rnd * stddev + mean).
    scale, shift = _bound(scale, np_dtype), _bound(shift, np_dtype)
    if _is_number(scale, shift):
        host = _affine_on_host(sample._value, scale, shift, np_dtype)
        if host is not None:
            return EagerTensor(host)
        return EagerTensor(sample._value * np.asarray(scale, np_dtype) + np.asarray(shift, np_dtype))
    return OPERATORS["math.add"](OPERATORS["math.multiply"](sample, scale), shift)


# A variable's initial value draws each weight shape once (a few times: initializers draw power-of-two sizes), so
# its sampler's XLA compile is paid before a program's first step and rarely again. So a shape's first draws run
# JAX's float32 sampler in numpy (random_host.py: no compile), or, for other dtypes and large shapes, JAX's
# sampler compiled without LLVM's optimisations (half the compile; 2-4x slower to run). Both give JAX's bits
# (integer threefry, then exact float steps: tests/unit/test_random_samplers.py). A shape drawn more often (a
# loop) takes JAX's own optimised sampler: after `_FEW` draws for the cheaply compiled one; for the numpy one, once
# its draws would have cost about that compile (a weight shape drawn by each of many layers, as a transformer's
# attention projections are, compiled it before the first step). The normal samplers' polynomials round
# differently: they take JAX's.
_FEW = 4  # draws of one shape by the cheaply compiled sampler
# What a numpy draw costs over a compiled one, per draw and per element, and the compile (on the 2-core machine):
# numpy's draw of one element took 147 us against 10 us, of a million 38 ms against 14 ms; the compile 0.15 s.
_HOST_EXTRA_S, _HOST_EXTRA_S_PER_ELEMENT, _SAMPLER_COMPILE_S = 1.3e-4, 2.2e-8, 0.15
_UNIFORM = caches.Memo("uniform samplers by shape (random.py)", 256)  # signature -> [executable, draws] or None


def _uniform(key: Any, dims: tuple[int, ...], np_dtype: Any) -> Any:
    signature = (dims, np.dtype(np_dtype), key.dtype, key.shape)
    entry = _UNIFORM.get(signature, False)
    if isinstance(key, jax.core.Tracer) or entry is None:
        return jax.random.uniform(key, dims, np_dtype)
    if entry is False:
        few = _FEW
        if random_host.supported(key, dims, np_dtype):
            draw = lambda k: jax.device_put(random_host.uniform(k, dims))  # noqa: E731 (device_put: no compile)
            extra = _HOST_EXTRA_S + math.prod(dims) * _HOST_EXTRA_S_PER_ELEMENT
            few = max(_FEW, math.ceil(_SAMPLER_COMPILE_S / extra))  # at most 1,154 draws
        else:
            draw = jax.jit(lambda k: jax.random.uniform(k, dims, np_dtype))
            # Lowered without eager constant folding (a weight built inside a trace is drawn under it), which
            # would write the sampler's counter iota into the program as a literal: 16 MB of text for 2**21 draws.
            with jax_config.eager_constant_folding(False):
                lowered = draw.lower(key)
            draw = lowered.compile({"xla_backend_optimization_level": 0})
        entry = _UNIFORM[signature] = [draw, 0, few]
    entry[1] += 1
    if entry[1] == entry[2]:
        _UNIFORM[signature] = None  # drawn often: JAX's optimised sampler from the next draw on
    sample = entry[0](key)
    if checking.FLAG.on:
        checking.require("uniform sampler (random.py)", lambda: np.array_equal(
            np.asarray(sample), np.asarray(jax.random.uniform(key, dims, np_dtype)), equal_nan=True), str(dims))
    return sample


def _affine_on_host(sample: Any, scale: float, shift: float, np_dtype: Any) -> Any:
    """`sample * scale + shift` by numpy, or None: float32 and float64 only, where each numpy op rounds once as
    XLA's does, and no value is subnormal (XLA on a CPU may flush those to zero). One XLA compile less per shape."""
    if np.dtype(np_dtype) not in (np.float32, np.float64) or isinstance(sample, jax.core.Tracer):
        return None
    if any(d.platform != "cpu" for d in sample.devices()):
        return None
    kind = np.dtype(np_dtype).type
    product = np.asarray(sample) * kind(scale)
    result = product + kind(shift)
    tiny = np.finfo(np_dtype).tiny
    if np.any((np.abs(product) < tiny) & (product != 0)) or np.any((np.abs(result) < tiny) & (result != 0)):
        return None
    value = jax.device_put(result)
    if checking.FLAG.on:
        checking.require("sample scaled on the host (random.py)", lambda: np.array_equal(
            result, np.asarray(sample * np.asarray(scale, np_dtype) + np.asarray(shift, np_dtype)), equal_nan=True),
            str(sample.shape))
    return value


def _shuffle(value, key):
    return jax.random.permutation(key, value, axis=0, independent=False)


# TF 2.21 declares RandomShuffle non-differentiable: its gradient is None (older TF raised LookupError).
_shuffle_op = op("random.shuffle", _shuffle, differentiable=False, same_dtype=False, op_type="RandomShuffle")


def shuffle(value, seed=None, name=None) -> Tensor:
    """Shuffles along the first dimension. Not differentiable: gradients through it are None, as in TF."""
    return _shuffle_op(value, EagerTensor(next_key(seed)))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    np_dtype = dtypes.as_dtype(dtype)._np
    dims = _shape(shape, "TruncatedNormal")
    sample = EagerTensor(jax.random.truncated_normal(next_key(seed), -2.0, 2.0, dims, np_dtype))
    return _affine(sample, stddev, mean, np_dtype)


# -- categorical and poisson --------------------------------------------------------------------------------

def _categorical(logits, key, num_samples, dtype=np.int64):
    # Gumbel-max per row of `logits`: [batch, classes] -> [batch, num_samples]
    samples = jax.random.categorical(key, logits[:, None, :], axis=-1,
                                     shape=(logits.shape[0], num_samples))
    return samples.astype(dtypes.as_dtype(dtype)._np)


_categorical_op = op("random.categorical", _categorical, static=("num_samples", "dtype"), differentiable=False,
                     same_dtype=False, op_type="Multinomial")


def categorical(logits, num_samples, dtype=None, seed=None, name=None) -> Tensor:
    """Draws `num_samples` class indices per row of `logits` [batch, classes] (`tf.random.categorical`).

    Not differentiable, as in TF. `dtype` is int64 unless given.

    >>> import tapejax as tf
    >>> tf.random.categorical([[0.0, -1e9, -1e9]], 3).numpy().tolist()
    [[0, 0, 0]]
    """
    dtype = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    return _categorical_op(logits, EagerTensor(next_key(seed)), num_samples=int(hashable(num_samples)),
                           dtype=dtype)


def _poisson(key, lam, shape, dtype=np.float32):
    rate = lam.astype(np.float64) if not jnp.issubdtype(lam.dtype, jnp.floating) else lam
    counts = jax.random.poisson(key, rate, shape + lam.shape, dtype=np.int64)
    return counts.astype(dtypes.as_dtype(dtype)._np)


# TF registers no gradient for RandomPoissonV2: a gradient through it raises LookupError.
_poisson_op = op("random.poisson", _poisson, static=("shape", "dtype"), has_gradient=False, same_dtype=False,
                 op_type="RandomPoissonV2")


def poisson(shape, lam, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Samples `shape + lam.shape` counts from Poisson distributions of rates `lam` (`tf.random.poisson`).

    >>> import tapejax as tf
    >>> tf.random.poisson([2], [0.0, 0.0]).numpy().tolist()
    [[0.0, 0.0], [0.0, 0.0]]
    """
    return _poisson_op(EagerTensor(next_key(seed)), lam, shape=_shape(shape), dtype=dtypes.as_dtype(dtype))


# -- gamma: the inverse CDF of a uniform draw ----------------------------------------------------------------
# A sample is x = F^-1(u; alpha) for a uniform u drawn from the key, so at a fixed key it is a smooth function of
# alpha, and its derivative is the implicit reparameterization gradient of TF's RandomGamma (Figurnov et al.,
# 2018). The root of P(alpha, x) = u is found without derivatives; one Halley step from it, on the incomplete gamma
# function written below in jnp, then carries the derivatives: the step's value is the root, and its first and
# second derivatives in alpha are the quantile's (Halley's method converges cubically).


def _log_lower_series(a, t, terms):
    """log P(a, e^t) from the power series of the lower incomplete gamma function (used for e^t < a + 1).

    It takes t = log x: x may underflow to 0 where log P is still finite (tiny alpha).
    """
    x = jnp.exp(t)

    def add_term(n, carry):
        term, total = carry
        term = term * x / (a + n)
        return term, total + term

    _, total = jax.lax.fori_loop(1, terms, add_term, (jnp.ones_like(x), jnp.ones_like(x)))
    return a * t - x - jax.scipy.special.gammaln(a + 1) + jnp.log(total)


def _log_upper_fraction(a, t, terms):
    """log Q(a, e^t) from the continued fraction of the upper incomplete gamma function, by Lentz's method (used
    for e^t >= a + 1)."""
    x = jnp.exp(t)
    floor = jnp.finfo(x.dtype).tiny / jnp.finfo(x.dtype).eps  # keeps the recurrences off zero

    def add_level(i, carry):
        b, c, d, h = carry
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / jnp.where(jnp.abs(d) < floor, floor, d)
        c = b + an / c
        c = jnp.where(jnp.abs(c) < floor, floor, c)
        return b, c, d, h * d * c

    b = x + 1 - a
    h = jax.lax.fori_loop(1, terms, add_level, (b, jnp.full_like(x, 1 / floor), 1 / b, 1 / b))[3]
    return a * t - x - jax.scipy.special.gammaln(a) + jnp.log(h)


def _log_tail(a, t, upper, terms):
    """log P(a, e^t), or log Q(a, e^t) where `upper`, and its derivative in t.

    Both expansions are evaluated everywhere, each on inputs inside its own domain, so that the one not selected
    has finite cotangents (a NaN there would poison the gradient through jnp.where).
    """
    x = jnp.exp(t)
    far = x >= a + 1
    log_p = _log_lower_series(a, jnp.where(far, jnp.log1p(a), t), terms)
    log_q = _log_upper_fraction(a, jnp.where(far, t, jnp.log1p(a)), terms)
    lower = jnp.where(far, jnp.log1p(-jnp.exp(log_q)), log_p)
    value = jnp.where(upper, jnp.where(far, log_q, jnp.log1p(-jnp.exp(log_p))), lower)
    # d/dt log P = x p(x) / P, with p the gamma density; log Q's is minus x p(x) / Q.
    slope = jnp.where(upper, -1.0, 1.0) * jnp.exp(a * t - x - jax.scipy.special.gammaln(a) - value)
    return value, slope


def _newton_step(a, t, upper, log_target, terms):
    value, slope = _log_tail(a, t, upper, terms)
    return t - (value - log_target) / slope


def _halley_step(a, t, upper, log_target, terms):
    value, slope = _log_tail(a, t, upper, terms)
    h = value - log_target
    curve = slope * (a - jnp.exp(t) - slope)  # d2/dt2 of log P (and of log Q)
    return t - 2 * h * slope / (2 * slope * slope - h * curve)


def _tail_root(a, log_target, upper, terms):
    """t = log x where log P(a, x) (log Q where `upper`) equals log_target, by Newton's method (no derivatives).

    log P and log Q are concave in t, so Newton's method converges monotonically from the left of the root for
    P (increasing) and from its right for Q (decreasing), and after its first step from anywhere. The starts: the
    lower tail from the left (P <= x^a / Gamma(a+1)), the upper tail for a < 1 from the right (Q <= e^-x), and
    for a >= 1 Wilson and Hilferty's cube-root approximation, which is close.
    """
    u = jnp.where(upper, -jnp.expm1(log_target), jnp.exp(log_target))
    base = 1 - 1 / (9 * a) + jax.scipy.special.ndtri(u) / (3 * jnp.sqrt(a))
    t_wh = jnp.log(a) + 3 * jnp.log(jnp.where(base > 0, base, 1.0))
    t_left = (log_target + jax.scipy.special.gammaln(a + 1)) / a
    t_right = jnp.log(-log_target)
    close = (a >= 1) & (base > 0.2)
    t = jnp.where(upper, jnp.where(close, t_wh, t_right), jnp.where(close, jnp.maximum(t_wh, t_left), t_left))

    def unsettled(carry):
        i, _, change = carry
        return (i < 50) & (change > 1e-9)  # quadratic convergence: the next step lands at float64 precision

    def step(t):
        new = _newton_step(a, t, upper, log_target, terms)
        return jnp.clip(jnp.where(jnp.isfinite(new), new, t), -1e4, 1e3)

    def iterate(carry):
        i, t, _ = carry
        new = step(t)
        change = jnp.where(jnp.isfinite(new), jnp.abs(new - t) / jnp.maximum(jnp.abs(t), 1.0), 0.0)
        return i + 1, new, jnp.max(change, initial=0.0)

    return step(jax.lax.while_loop(unsettled, iterate, (0, t, jnp.inf))[1])


def _gamma_quantile(u, a, terms):
    """x with P(a, x) = u, in float64; differentiable in `a`, to second order exactly."""
    # The upper tail's equation, log Q = log(1 - u), keeps the precision of u near 1. For a < 1 the lower one
    # serves up to 0.9: its start is then close (x is small), and the upper tail's far.
    upper = u > jnp.where(a < 1, 0.9, 0.5)
    log_target = jnp.where(upper, jnp.log1p(-u), jnp.log(u))
    t0 = jax.lax.stop_gradient(_tail_root(jax.lax.stop_gradient(a), log_target, upper, terms))
    t1 = _halley_step(a, t0, upper, log_target, terms)
    return jnp.exp(t0 + (t1 - jax.lax.stop_gradient(t1)))  # the root's value, the step's derivatives


def _gamma(key, alpha, shape, terms=256):
    full = tuple(shape) + alpha.shape
    u = jax.random.uniform(key, full, np.float64, minval=2.0 ** -60)  # u > 0: the quantile of 0 is 0
    x = _gamma_quantile(u, jnp.broadcast_to(alpha.astype(np.float64), full), terms)
    return x.astype(alpha.dtype)


def _series_terms(alpha: Any) -> int:
    """Terms the expansions need for float64 precision up to max(alpha): about 6 sqrt(alpha) + 40, in steps of 64
    (a few executables in all); 256 (alpha up to about 1000) for values not known at trace time."""
    value = to_array(alpha)
    if isinstance(value, jax.core.Tracer) or np.size(value) == 0:
        return 256
    largest = float(np.nanmax(np.asarray(value, np.float64)))
    needed = 6 * np.sqrt(max(largest, 0.0)) + 40 if np.isfinite(largest) else 64
    return int(64 * np.ceil(needed / 64))


_gamma_op = op("random.gamma", _gamma, static=("shape", "terms"), same_dtype=False, op_type="RandomGamma")


def gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Samples `shape + broadcast(alpha, beta).shape` values from Gamma(alpha, rate=beta) (`tf.random.gamma`).

    Differentiable with respect to `alpha` (implicit reparameterization, as in TF) and `beta`.

    >>> import tapejax as tf
    >>> tf.random.gamma([10], [1.0, 5.0], seed=1).shape
    TensorShape([10, 2])

    Differences from TensorFlow: the sample is the inverse CDF of a uniform draw (TF uses rejection sampling), so
    the numbers differ, not the distribution. Samples take more time the larger alpha is (about sqrt(alpha)).
    """
    tf_dtype = dtypes.as_dtype(dtype)
    alpha = _as_tensor_of(alpha, tf_dtype)
    beta = _as_tensor_of(1 if beta is None else beta, tf_dtype)
    shape_ab = np.broadcast_shapes(tuple(alpha.shape), tuple(beta.shape))
    if tuple(alpha.shape) != shape_ab:
        alpha = OPERATORS["broadcast_to"](alpha, shape_ab)
    sample = _gamma_op(EagerTensor(next_key(seed)), alpha, shape=_shape(shape), terms=_series_terms(alpha))
    scaled = OPERATORS["math.divide"](sample, beta)
    return OPERATORS["math.maximum"](scaled, np.asarray(np.finfo(tf_dtype._np).tiny, tf_dtype._np))


def _as_tensor_of(value: Any, dtype: dtypes.DType) -> Any:
    """`value` as a tensor of `dtype` (TF's convert_to_tensor(value, dtype)): tensors are checked, not cast."""
    if isinstance(value, Tensor | Variable):
        to_array(value, dtype=dtype)  # TF's ValueError for another dtype
        return value
    return EagerTensor(jnp.asarray(to_array(value, dtype=dtype)))


# -- stateless sampling: the seed, a shape-[2] integer tensor, is the key -----------------------------------

def _seed_key(seed):
    """The JAX key of a TF stateless seed: both 64-bit words of it matter, so distinct seeds give distinct keys."""
    words = seed.astype(np.int64)
    key = jax.random.PRNGKey(words[0])
    low = (words[1] & 0xFFFFFFFF).astype(np.uint32)
    high = (words[1] >> 32).astype(np.uint32)
    return jax.random.fold_in(jax.random.fold_in(key, low), high)


def _check_seed(seed, *args, **params):
    if seed.shape != (2,):
        raise errors.invalid_argument("StatelessRandomGetKeyCounter",
                                      f"seed must have shape [2], not {list(seed.shape)}")
    if not jnp.issubdtype(seed.dtype, jnp.integer):
        raise TypeError(f"seed must be an integer tensor (int32 or int64), got {dtypes.from_numpy(seed.dtype)!r}")


def _stateless_normal(seed, shape, dtype=np.float32):
    return jax.random.normal(_seed_key(seed), shape, dtypes.as_dtype(dtype)._np)


def _stateless_truncated_normal(seed, shape, dtype=np.float32):
    return jax.random.truncated_normal(_seed_key(seed), -2.0, 2.0, shape, dtypes.as_dtype(dtype)._np)


def _stateless_uniform(seed, shape, dtype=np.float32, minval=0, maxval=None):
    """Floats in [0, 1) (the public function scales them); integers in [minval, maxval)."""
    np_dtype = dtypes.as_dtype(dtype)._np
    if np.issubdtype(np_dtype, np.integer):
        return jax.random.randint(_seed_key(seed), shape, minval, maxval, np_dtype)
    return jax.random.uniform(_seed_key(seed), shape, np_dtype)


def _stateless_categorical(logits, seed, num_samples, dtype=np.int64):
    return _categorical(logits, _seed_key(seed), num_samples, dtype)


def _check_stateless_categorical(logits, seed, num_samples, dtype=np.int64):
    _check_seed(seed)


# The raw draws are rows (their seed is a tensor input, so they replay inside traced control flow); TF declares
# them non-differentiable, and the public functions apply mean/stddev or minval/maxval with recorded ops.
_stateless_normal_op = op("random.stateless_normal", _stateless_normal, static=("shape", "dtype"),
                          differentiable=False, op_type="StatelessRandomNormalV2", check=_check_seed)
_stateless_truncated_normal_op = op("random.stateless_truncated_normal", _stateless_truncated_normal,
                                    static=("shape", "dtype"), differentiable=False,
                                    op_type="StatelessTruncatedNormalV2", check=_check_seed)
_stateless_uniform_op = op("random.stateless_uniform", _stateless_uniform,
                           static=("shape", "dtype", "minval", "maxval"), differentiable=False,
                           op_type="StatelessRandomUniformV2", check=_check_seed)
_stateless_categorical_op = op("random.stateless_categorical", _stateless_categorical,
                               static=("num_samples", "dtype"), differentiable=False, same_dtype=False,
                               op_type="StatelessMultinomial", check=_check_stateless_categorical)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Normal samples determined by `seed` (shape [2], int32 or int64): the same seed gives the same numbers.

    >>> import tapejax as tf
    >>> a = tf.random.stateless_normal([3], seed=[1, 2])
    >>> b = tf.random.stateless_normal([3], seed=[1, 2])
    >>> bool(tf.reduce_all(a == b))
    True

    `alg` is accepted and ignored: the numbers come from JAX's generator, not TF's Philox or ThreeFry.
    """
    np_dtype = dtypes.as_dtype(dtype)._np
    sample = _stateless_normal_op(seed, shape=_shape(shape), dtype=dtypes.as_dtype(dtype))
    return _affine(sample, stddev, mean, np_dtype)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None) -> Tensor:
    """Class indices drawn from `logits` [batch, classes], determined by `seed` (see stateless_normal)."""
    return _stateless_categorical_op(logits, seed, num_samples=int(hashable(num_samples)),
                                     dtype=dtypes.as_dtype(dtype))


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                               alg="auto_select"):
    """Normal samples within two standard deviations of the mean, determined by `seed` (see stateless_normal)."""
    np_dtype = dtypes.as_dtype(dtype)._np
    sample = _stateless_truncated_normal_op(seed, shape=_shape(shape), dtype=dtypes.as_dtype(dtype))
    return _affine(sample, stddev, mean, np_dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None, alg="auto_select"):
    """Uniform samples in [minval, maxval) determined by `seed` (see stateless_normal); integers need both bounds.

    >>> import tapejax as tf
    >>> x = tf.random.stateless_uniform([4], seed=[3, 4], minval=0, maxval=10, dtype=tf.int32)
    >>> x.dtype, bool(tf.reduce_all((x >= 0) & (x < 10)))
    (tf.int32, True)
    """
    tf_dtype = dtypes.as_dtype(dtype)
    if tf_dtype.is_integer:
        if minval is None or maxval is None:
            raise ValueError(f"For integer `dtype` argument {tf_dtype!r}, argument `minval` and `maxval` must be "
                             f"both None or not None. Got `minval`={minval} and `maxval`={maxval}.")
        return _stateless_uniform_op(seed, shape=_shape(shape), dtype=tf_dtype, minval=int(hashable(minval)),
                                     maxval=int(hashable(maxval)))
    sample = _stateless_uniform_op(seed, shape=_shape(shape), dtype=tf_dtype)
    minval = _bound(0 if minval is None else minval, tf_dtype._np)
    maxval = _bound(1.0 if maxval is None else maxval, tf_dtype._np)
    scale = maxval - minval if _is_number(maxval, minval) else OPERATORS["math.subtract"](maxval, minval)
    return _affine(sample, scale, minval, tf_dtype._np)


# -- tf.random.Generator: the state is a tf.Variable --------------------------------------------------------

class Generator:
    """A random number generator whose state is a `tf.Variable` (`tf.random.Generator`).

    Each draw reads the state, derives a key from it and advances it, so successive draws differ, a generator
    made from the same seed repeats the same sequence, and inside tf.function the state is the compiled step's
    variable: every call of the step draws anew.

    >>> import tapejax as tf
    >>> g = tf.random.Generator.from_seed(1)
    >>> a, b = g.normal([2]), g.normal([2])
    >>> bool(tf.reduce_all(a == b))
    False
    >>> bool(tf.reduce_all(tf.random.Generator.from_seed(1).normal([2]) == a))
    True

    Inside `strategy.run` of a strategy of several replicas, each replica draws different numbers (the
    replica's id folded into the key), as TF gives each replica its own stream; the state advances once per draw.

    Differences from TensorFlow: the state is int64 [key word, key word, counter] and the numbers come from
    JAX's ThreeFry generator; `alg` is accepted and ignored. A generator made outside the strategy's scope also
    gives each replica its own numbers (TF's replicas take turns drawing from its one stream).
    """

    def __init__(self, copy_from: Generator | None = None, state: Any = None, alg: Any = None):
        if copy_from is not None:
            state = copy_from.state.read_value()
        if state is None:
            raise ValueError("Generator needs `copy_from` or `state`; use Generator.from_seed(seed) or "
                             "Generator.from_non_deterministic_state().")
        self._state = Variable(to_array(state, dtype=dtypes.int64), trainable=False, name="StateVar")
        self._alg = 1 if alg is None else alg

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        """A generator whose sequence is determined by `seed` (an integer)."""
        return cls(state=_state_from_seed(int(hashable(seed))), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        """A generator seeded from the operating system's entropy."""
        return cls(state=_state_from_seed(int.from_bytes(os.urandom(8), "little") >> 1), alg=alg)

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> Generator:
        return cls(state=state, alg=alg)

    @property
    def state(self) -> Variable:
        """The int64 state variable (read it to save the generator, assign it to restore)."""
        return self._state

    @property
    def algorithm(self) -> Any:
        return self._alg

    def reset(self, state: Any) -> None:
        self._state.assign(to_array(state, dtype=dtypes.int64))

    def reset_from_seed(self, seed: Any) -> None:
        self._state.assign(_state_from_seed(int(hashable(seed))))

    def _next_key(self) -> jax.Array:
        state = self._state.read_value()._value
        self._state.assign(state + np.array([0, 0, 1], np.int64))
        key = jnp.stack([state[0], state[1]]).astype(np.uint32)
        key = jax.random.fold_in(key, state[2].astype(np.uint32))
        replica = CONTEXT.replica  # inside a tf.distribute strategy.run: each replica draws its own numbers, as in TF
        if replica is not None and replica.num_replicas_in_sync > 1:
            key = jax.random.fold_in(key, getattr(replica.replica_id_in_sync_group, "value", 0))
        return key

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None) -> Tensor:
        np_dtype = dtypes.as_dtype(dtype)._np
        sample = EagerTensor(jax.random.normal(self._next_key(), _shape(shape), np_dtype))
        return _affine(sample, stddev, mean, np_dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None) -> Tensor:
        np_dtype = dtypes.as_dtype(dtype)._np
        sample = EagerTensor(jax.random.truncated_normal(self._next_key(), -2.0, 2.0, _shape(shape), np_dtype))
        return _affine(sample, stddev, mean, np_dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=dtypes.float32, name=None) -> Tensor:
        tf_dtype = dtypes.as_dtype(dtype)
        if tf_dtype.is_integer:
            if minval is None or maxval is None:
                raise ValueError(f"For integer `dtype` argument {tf_dtype!r}, argument `minval` and `maxval` "
                                 f"must be both None or not None. Got `minval`={minval} and `maxval`={maxval}.")
            return EagerTensor(jax.random.randint(self._next_key(), _shape(shape), int(hashable(minval)),
                                                  int(hashable(maxval)), tf_dtype._np))
        sample = EagerTensor(jax.random.uniform(self._next_key(), _shape(shape), tf_dtype._np))
        minval = 0 if minval is None else minval
        maxval = 1.0 if maxval is None else maxval
        scale = maxval - minval if _is_number(maxval, minval) else OPERATORS["math.subtract"](maxval, minval)
        return _affine(sample, scale, minval, tf_dtype._np)

    def uniform_full_int(self, shape, dtype=dtypes.uint64, name=None) -> Tensor:
        np_dtype = dtypes.as_dtype(dtype)._np
        bits = jax.random.bits(self._next_key(), _shape(shape), np.dtype(f"uint{np_dtype.itemsize * 8}"))
        return EagerTensor(jax.lax.bitcast_convert_type(bits, np_dtype))

    def make_seeds(self, count: int = 1) -> Tensor:
        """A [2, count] int64 tensor: `count` seeds for the stateless ops (tf.random.stateless_*)."""
        bits = jax.random.bits(self._next_key(), (2, int(count)), np.uint64)
        return EagerTensor(jax.lax.bitcast_convert_type(bits, np.int64))

    def split(self, count: int = 1) -> list[Generator]:
        """`count` new generators, independent of this one and of each other; this one advances."""
        bits = jax.random.bits(self._next_key(), (int(count), 2), np.uint32).astype(np.int64)
        return [Generator(state=jnp.concatenate([bits[i], jnp.zeros((1,), np.int64)]), alg=self._alg)
                for i in range(int(count))]


def _state_from_seed(seed: int) -> np.ndarray:
    key = np.asarray(jax.random.PRNGKey(seed), np.int64)
    return np.array([key[0], key[1], 0], np.int64)




def get_global_generator() -> Generator:
    """The default generator (`tf.random.get_global_generator`), seeded non-deterministically on first use."""
    if CONTEXT.global_generator is None:
        CONTEXT.global_generator = Generator.from_non_deterministic_state()
    return CONTEXT.global_generator


def set_global_generator(generator: Generator) -> None:
    CONTEXT.global_generator = generator
