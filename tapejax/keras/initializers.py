"""tf.keras.initializers (the subset custom training loops use), on tf.random: seeded by tf.random.set_seed."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tapejax as tf


def _sample(draw: Any, shape: Any, dtype: Any) -> tf.Tensor:
    """`draw([n])` reshaped to `shape`, n rounded up to a power of two (at least 2**16): every new weight shape of a
    model would otherwise compile its own random-number executable (a third of a second each, on CPU), where
    a few sizes serve them all. Seeded as the plain draw is; the numbers differ from TF's in any case."""
    shape = [int(d) for d in shape]
    n = math.prod(shape)
    bucket = 1 << max(n - 1, 0).bit_length()
    flat = np.asarray(draw([max(bucket, 1 << 16)], tf.as_dtype(dtype or tf.float32)))
    return tf.constant(flat[:n].reshape(shape))


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
        return _sample(lambda s, d: tf.random.normal(s, self.mean, self.stddev, d, seed=self.seed), shape, dtype)


class RandomUniform(Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None):
        return _sample(lambda s, d: tf.random.uniform(s, self.minval, self.maxval, d, seed=self.seed), shape, dtype)


def _fans(shape: Any, input_axes: Any = None, output_axes: Any = None) -> tuple[int, int]:
    """Keras's fan-in and fan-out: the last two dimensions, times the receptive field for convolutions; or, given
    both `input_axes` and `output_axes` (EinsumDense's kernels), the products of those dimensions."""
    shape = tuple(int(d) for d in shape)
    if input_axes is not None and output_axes is not None:
        return math.prod(shape[a] for a in input_axes), math.prod(shape[a] for a in output_axes)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class GlorotUniform(Initializer):
    """Uniform in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out)) (Keras's default for kernels)."""

    def __init__(self, seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        self.seed, self.input_axes, self.output_axes = seed, input_axes, output_axes

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(shape, self.input_axes, self.output_axes)
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        return _sample(lambda s, d: tf.random.uniform(s, -limit, limit, d, seed=self.seed), shape, dtype)


class HeNormal(Initializer):
    """Truncated normal with stddev sqrt(2 / fan_in)."""

    def __init__(self, seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        self.seed, self.input_axes, self.output_axes = seed, input_axes, output_axes

    def __call__(self, shape, dtype=None):
        fan_in, _ = _fans(shape, self.input_axes, self.output_axes)
        # Keras divides by the stddev of a normal truncated at two standard deviations.
        stddev = math.sqrt(2.0 / fan_in) / 0.87962566103423978
        return _sample(lambda s, d: tf.random.truncated_normal(s, 0.0, stddev, d, seed=self.seed), shape, dtype)


class VarianceScaling(Initializer):
    """Keras's family: variance `scale / n` with n the fan in, out or their mean; a truncated normal, an
    untruncated normal, or a uniform draw."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
                 seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.input_axes, self.output_axes = input_axes, output_axes

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(shape, self.input_axes, self.output_axes)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return _sample(lambda s, d: tf.random.uniform(s, -limit, limit, d, seed=self.seed), shape, dtype)
        if self.distribution == "untruncated_normal":
            stddev = math.sqrt(variance)
            return _sample(lambda s, d: tf.random.normal(s, 0.0, stddev, d, seed=self.seed), shape, dtype)
        stddev = math.sqrt(variance) / 0.87962566103423978
        return _sample(lambda s, d: tf.random.truncated_normal(s, 0.0, stddev, d, seed=self.seed), shape, dtype)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, input_axes, output_axes)


class HeUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        super().__init__(2.0, "fan_in", "uniform", seed, input_axes, output_axes)


class LecunNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed, input_axes, output_axes)


class LecunUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, input_axes: Any = None, output_axes: Any = None):
        super().__init__(1.0, "fan_in", "uniform", seed, input_axes, output_axes)


class TruncatedNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None):
        return _sample(lambda s, d: tf.random.truncated_normal(s, self.mean, self.stddev, d, seed=self.seed),
                       shape, dtype)


class Orthogonal(Initializer):
    """An orthogonal matrix (the Q of a QR decomposition of a normal draw, signs fixed by R's diagonal), times
    `gain`; the leading dimensions are flattened into rows (Keras's recurrent kernels)."""

    def __init__(self, gain: float = 1.0, seed: int | None = None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None):
        shape = [int(d) for d in shape]
        rows, columns = math.prod(shape[:-1]), shape[-1]
        normal = np.asarray(_sample(lambda s, d: tf.random.normal(s, dtype=d, seed=self.seed),
                                    [max(rows, columns), min(rows, columns)], tf.float64))
        q, r = np.linalg.qr(normal)
        q = q * np.sign(np.diag(r))
        if rows < columns:
            q = q.T
        return tf.constant((self.gain * q).reshape(shape), dtype or tf.float32)


class Identity(Initializer):
    def __init__(self, gain: float = 1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        return tf.constant(self.gain * np.eye(*[int(d) for d in shape]), dtype or tf.float32)


_BY_NAME = {"zeros": Zeros, "ones": Ones, "constant": Constant, "glorot_uniform": GlorotUniform,
            "glorot_normal": GlorotNormal, "he_normal": HeNormal, "he_uniform": HeUniform,
            "lecun_normal": LecunNormal, "lecun_uniform": LecunUniform, "orthogonal": Orthogonal,
            "identity": Identity, "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
            "random_normal": RandomNormal, "random_uniform": RandomUniform, "uniform": RandomUniform,
            "normal": RandomNormal}
_BY_NAME.update({cls.__name__: cls for cls in list(_BY_NAME.values())})


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


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.initializers")
