"""Specs of the tf.random rows added for issue #6 (merged into op_specs.SPEC and op_specs.EXTRA_CASES).

A random row takes its key (a raw JAX key, uint32[2]) or its stateless seed (int32[2]) as a tensor input. TF
draws other numbers, so where the value is random the spec sets `permutation` (the TF comparison then checks
shapes and dtypes only) and the reference is JAX's draw from the same key: the registry test then checks that the
row's public callable, static parameters and dtypes give that draw. What the draws are worth (distributions, seed
reproducibility, the gamma quantile against scipy, its gradient against TF's) is tested in
tests/unit/test_nest_and_random.py.

Where the outcome is certain the reference is that outcome, and TF is compared value for value: categorical rows
whose logits leave one class per row (the others are 100 nats behind: probability e^-100), poisson rates of 0.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from op_specs import F32, Spec, fixed, positive

KEY = np.array([0, 7], np.uint32)  # a raw JAX PRNG key: the key input of the keyed rows
SEED = np.array([3, 11], np.int32)  # a TF stateless seed

# One certain class per row: 0 and 2.
CERTAIN_LOGITS = np.array([[0.0, -100.0, -100.0], [-100.0, -100.0, 0.0]], F32)


def _jax_draw(row: str, *args: Any, **kwargs: Any) -> np.ndarray:
    """The row's own draw, as its public callable computes it (one jitted executable, so the same bits)."""
    import jax  # noqa: PLC0415 (tests import this table without importing JAX for it)

    from tapejax._src.registry import REGISTRY  # noqa: PLC0415

    return np.asarray(jax.jit(functools.partial(REGISTRY[row].impl, **kwargs))(*args))


def _certain_samples(logits, *rest, num_samples, dtype=np.int64):
    return np.repeat(np.argmax(logits, axis=-1)[:, None], num_samples, axis=1).astype(dtype)


# -- TF's calling conventions (the rows take the key or seed as an input) -----------------------------------


def _call_categorical(m, args, kwargs):
    return m.random.categorical(args[0], kwargs["num_samples"], dtype=kwargs.get("dtype"))


def _call_stateless_categorical(m, args, kwargs):
    return m.random.stateless_categorical(args[0], kwargs["num_samples"], args[1], dtype=kwargs.get("dtype", np.int64))


def _call_poisson(m, args, kwargs):
    return m.random.poisson(kwargs["shape"], args[1], dtype=kwargs["dtype"])


def _call_gamma(m, args, kwargs):
    return m.random.gamma(kwargs["shape"], args[1], dtype=args[1].dtype)


def _call_stateless(fn: str):
    def call(m, args, kwargs):
        kwargs = dict(kwargs)
        return getattr(m.random, fn)(kwargs.pop("shape"), args[0], **kwargs)

    return call


def _draw(row: str):
    return lambda *args, **kwargs: _jax_draw(row, *args, **kwargs)


SPEC: dict[str, Spec] = {
    "random.categorical": fixed(CERTAIN_LOGITS, KEY, ref=_certain_samples, kwargs={"num_samples": 4},
                                tf_call=_call_categorical),
    "random.stateless_categorical": fixed(CERTAIN_LOGITS, SEED, ref=_certain_samples, kwargs={"num_samples": 3},
                                          tf_call=_call_stateless_categorical),
    # A rate of 0 draws 0. dtype float64: TF's output dtype is `dtype`, whatever the rate's.
    "random.poisson": fixed(KEY, [0.0, 0.0], ref=lambda key, lam, shape, dtype: np.zeros(shape + lam.shape, dtype),
                            kwargs={"shape": (3,), "dtype": np.float64}, tf_call=_call_poisson),
    # alpha from 0.5 to 2: below and above 1, where the quantile's start and tail change
    "random.gamma": Spec(lambda rng: (KEY, positive(rng, (3,))), _draw("random.gamma"), kwargs={"shape": (2,)},
                         permutation=True, tf_call=_call_gamma),
    "random.stateless_normal": fixed(SEED, ref=_draw("random.stateless_normal"),
                                     kwargs={"shape": (2, 3), "dtype": np.float32}, permutation=True,
                                     tf_call=_call_stateless("stateless_normal")),
    "random.stateless_uniform": fixed(SEED, ref=_draw("random.stateless_uniform"),
                                      kwargs={"shape": (2, 3), "dtype": np.float32}, permutation=True,
                                      tf_call=_call_stateless("stateless_uniform")),
    "random.stateless_truncated_normal": fixed(SEED, ref=_draw("random.stateless_truncated_normal"),
                                               kwargs={"shape": (3, 2), "dtype": np.float32}, permutation=True,
                                               tf_call=_call_stateless("stateless_truncated_normal")),
}


EXTRA_CASES: list[tuple[str, str, Spec]] = [
    ("random.categorical[int32]", "random.categorical",
     fixed(CERTAIN_LOGITS, KEY, ref=_certain_samples, kwargs={"num_samples": 2, "dtype": np.int32},
           tf_call=_call_categorical)),
    ("random.gamma[small_alpha]", "random.gamma",
     fixed(KEY, [[0.05, 0.2]], ref=_draw("random.gamma"), kwargs={"shape": (3,)}, permutation=True,
           tf_call=_call_gamma)),
    ("random.stateless_uniform[int32]", "random.stateless_uniform",
     fixed(SEED, ref=_draw("random.stateless_uniform"),
           kwargs={"shape": (4, 2), "dtype": np.int32, "minval": -5, "maxval": 5}, permutation=True,
           tf_call=_call_stateless("stateless_uniform"))),
    ("random.stateless_normal[int64_seed]", "random.stateless_normal",
     fixed(SEED.astype(np.int64), ref=_draw("random.stateless_normal"),
           kwargs={"shape": (2, 2), "dtype": np.float64}, permutation=True,
           tf_call=_call_stateless("stateless_normal"))),
]
