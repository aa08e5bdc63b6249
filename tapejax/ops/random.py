"""tf.random with TF's global/op seed semantics on JAX keys.

The key of every sample is explicit: it is derived from (global seed, op seed, call count), so
`tf.random.set_seed(s)` makes a program's sequence of samples reproducible, and an op that must replay (shuffle)
takes its key as an input (DESIGN invariant 3). The numbers differ from TF's: the generators differ.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import jax
import numpy as np

from tapejax._src import dtypes, function
from tapejax._src.registry import op
from tapejax._src.tensor import EagerTensor, OPERATORS, Tensor
from tapejax._src.variable import OVERRIDES

_DEFAULT_GLOBAL_SEED = 87654321  # TF uses a fixed global seed when only an op seed is given


class _SeedState(threading.local):
    def __init__(self):
        self.global_seed: int | None = None
        self.counter = 0  # ops without an op seed draw successive seeds after set_seed, as in TF
        self.calls: dict[tuple[int, int], int] = {}
        self.entropy = int.from_bytes(os.urandom(4), "little")


_STATE = _SeedState()


def set_seed(seed: int | None) -> None:
    """Sets the global random seed (`tf.random.set_seed`): later random ops draw a reproducible sequence."""
    _STATE.global_seed = None if seed is None else int(seed)
    _STATE.counter = 0
    _STATE.calls = {}
    function.new_seed_epoch()


def next_key(seed: int | None = None) -> jax.Array:
    """The key for one random op call, by TF's rules for global and op seeds."""
    state = _STATE
    if state.global_seed is None and seed is None:
        global_seed, op_seed = state.entropy, state.counter
        state.counter += 1
    elif seed is None:
        global_seed, op_seed = state.global_seed, state.counter
        state.counter += 1
    else:
        global_seed = _DEFAULT_GLOBAL_SEED if state.global_seed is None else state.global_seed
        op_seed = int(seed)
    call = state.calls.get((global_seed, op_seed), 0)
    state.calls[(global_seed, op_seed)] = call + 1
    key = jax.random.fold_in(jax.random.fold_in(jax.random.PRNGKey(global_seed), op_seed), call)
    trace = OVERRIDES.trace
    if trace is not None:  # inside tf.function: each call of the compiled step draws new numbers, as in TF
        key = jax.random.fold_in(key, trace.call_count())
    return key


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Tensor):
        shape = np.asarray(shape._value).tolist()
    return (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Samples from a normal distribution; differentiable with respect to `mean` and `stddev`, as in TF."""
    np_dtype = dtypes.as_dtype(dtype)._np
    sample = EagerTensor(jax.random.normal(next_key(seed), _shape(shape), np_dtype))
    return _affine(sample, stddev, mean, np_dtype)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    """Samples uniformly from [minval, maxval); integers need `maxval`, as in TF."""
    tf_dtype = dtypes.as_dtype(dtype)
    key = next_key(seed)
    if tf_dtype.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {tf_dtype!r}")
        return EagerTensor(jax.random.randint(key, _shape(shape), int(minval), int(maxval), tf_dtype._np))
    sample = EagerTensor(jax.random.uniform(key, _shape(shape), tf_dtype._np))
    maxval = 1.0 if maxval is None else maxval
    return _affine(sample, OPERATORS["math.subtract"](maxval, minval) if not _is_number(maxval, minval)
                   else maxval - minval, minval, tf_dtype._np)


def _is_number(*values: Any) -> bool:
    return all(isinstance(v, int | float) for v in values)


def _affine(sample: Tensor, scale: Any, shift: Any, np_dtype: np.dtype) -> Tensor:
    # Through recorded ops, so gradients reach tensor-valued scale and shift (TF: rnd * stddev + mean).
    if _is_number(scale, shift):
        return EagerTensor(sample._value * np.asarray(scale, np_dtype) + np.asarray(shift, np_dtype))
    return OPERATORS["math.add"](OPERATORS["math.multiply"](sample, scale), shift)


def _shuffle(value, key):
    return jax.random.permutation(key, value, axis=0, independent=False)


# TF 2.21 declares RandomShuffle non-differentiable: its gradient is None (older TF raised LookupError).
_shuffle_op = op("random.shuffle", _shuffle, differentiable=False, same_dtype=False, op_type="RandomShuffle")


def shuffle(value, seed=None, name=None) -> Tensor:
    """Shuffles along the first dimension. Not differentiable: gradients through it are None, as in TF."""
    return _shuffle_op(value, EagerTensor(next_key(seed)))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None) -> Tensor:
    np_dtype = dtypes.as_dtype(dtype)._np
    sample = EagerTensor(jax.random.truncated_normal(next_key(seed), -2.0, 2.0, _shape(shape), np_dtype))
    return _affine(sample, stddev, mean, np_dtype)


