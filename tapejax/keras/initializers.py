"""tf.keras.initializers (the subset custom training loops use), on tf.random: seeded by tf.random.set_seed."""

from __future__ import annotations

import math
from typing import Any

import tapejax as tf


class Initializer:
    """Base class: `initializer(shape, dtype)` returns a tensor."""

    def __call__(self, shape: Any, dtype: Any = None) -> tf.Tensor:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return tf.zeros(shape, dtype or tf.float32)


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return tf.ones(shape, dtype or tf.float32)


class Constant(Initializer):
    def __init__(self, value: float = 0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return tf.fill(shape, tf.cast(self.value, dtype or tf.float32))


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return tf.random.normal(shape, self.mean, self.stddev, dtype or tf.float32, seed=self.seed)


class RandomUniform(Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None):
        return tf.random.uniform(shape, self.minval, self.maxval, dtype or tf.float32, seed=self.seed)


def _fans(shape: Any) -> tuple[int, int]:
    """Keras's fan-in and fan-out: the last two dimensions, times the receptive field for convolutions."""
    shape = tuple(int(d) for d in shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class GlorotUniform(Initializer):
    """Uniform in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)) (Keras's default for kernels)."""

    def __init__(self, seed: int | None = None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(shape)
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return tf.random.uniform(shape, -limit, limit, dtype or tf.float32, seed=self.seed)


class HeNormal(Initializer):
    """Truncated normal with stddev sqrt(2 / fan_in)."""

    def __init__(self, seed: int | None = None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        fan_in, _ = _fans(shape)
        # Keras divides by the stddev of a normal truncated at two standard deviations.
        stddev = math.sqrt(2.0 / fan_in) / 0.87962566103423978
        return tf.random.truncated_normal(shape, 0.0, stddev, dtype or tf.float32, seed=self.seed)


_BY_NAME = {"zeros": Zeros, "ones": Ones, "glorot_uniform": GlorotUniform, "he_normal": HeNormal,
            "random_normal": RandomNormal, "random_uniform": RandomUniform, "uniform": RandomUniform}


def get(identifier: Any) -> Initializer:
    """An initializer from a name ('glorot_uniform'), an Initializer, or a callable `(shape, dtype)`."""
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]()
        except KeyError:
            raise ValueError(f"Unknown initializer {identifier!r}; tapejax has {sorted(_BY_NAME)}.") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
