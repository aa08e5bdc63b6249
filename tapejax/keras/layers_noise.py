"""tf.keras.layers that regularize: GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D,
ActivityRegularization, Masking. The noise layers act only when training, and are deterministic under
`tf.random.set_seed`, with JAX's random numbers (so not TF's)."""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras.layers import Dropout, Layer
from tapejax.keras.layers_util import data_format as _data_format
from tapejax.keras.regularizers import L1L2


class GaussianNoise(Layer):
    """Adds zero-mean Gaussian noise of `stddev` when training (`tf.keras.layers.GaussianNoise`)."""

    _built_at_init = True
    supports_masking = True

    def __init__(self, stddev: float, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if not 0 <= stddev <= 1:
            raise ValueError(f"Invalid value received for argument `stddev`. Expected a float value between 0 and "
                             f"1. Received: stddev={stddev}")
        self.stddev, self.seed = float(stddev), seed

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or self.stddev == 0:
            return inputs
        return inputs + tf.random.normal(tf.shape(inputs), stddev=self.stddev, dtype=inputs.dtype, seed=self.seed)


class GaussianDropout(Layer):
    """Multiplies by Gaussian noise of mean 1 and variance `rate / (1 - rate)` when training
    (`tf.keras.layers.GaussianDropout`)."""

    _built_at_init = True
    supports_masking = True

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate, self.seed = float(rate), seed

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or not 0 < self.rate < 1:
            return inputs
        stddev = (self.rate / (1.0 - self.rate)) ** 0.5
        return inputs * tf.random.normal(tf.shape(inputs), mean=1.0, stddev=stddev, dtype=inputs.dtype,
                                         seed=self.seed)


# SELU's constants: AlphaDropout sets dropped units to SELU's negative saturation value, -scale * alpha.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class AlphaDropout(Layer):
    """Dropout that keeps SELU's self-normalisation (`tf.keras.layers.AlphaDropout`): when training, each unit is
    dropped with probability `rate` to SELU's saturation value `-alpha * scale` instead of zero, then all are
    mapped by `a * x + b`, with `a` and `b` chosen to keep a zero mean and unit variance. Units are dropped
    together along the axes where `noise_shape` is 1. Not training, it returns its inputs.

    >>> import tapejax as tf
    >>> tf.keras.layers.AlphaDropout(0.2)(tf.ones([2, 3])).numpy()
    array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)

    As TF 2.21's (Keras 3's legacy layer): `rate` is not checked, `noise_shape` must be fully given, and the
    configuration has `rate` and `seed` only.
    """

    _built_at_init = True
    supports_masking = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or not self.rate > 0:
            return inputs
        saturated = -_SELU_ALPHA * _SELU_SCALE
        shape = self.noise_shape if self.noise_shape is not None else \
            inputs.shape if inputs.shape.is_fully_defined() else tf.shape(inputs)
        kept = tf.cast(tf.random.uniform(shape, seed=self.seed) >= self.rate, inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * saturated ** 2)) ** -0.5
        b = -a * saturated * self.rate
        return a * (inputs * kept + saturated * (1 - kept)) + b

    def get_config(self) -> dict[str, Any]:
        """Keras's keys: `rate` and `seed` (its legacy layer leaves `noise_shape` out)."""
        config = {k: v for k, v in super().get_config().items() if k != "noise_shape"}
        return {**config, "rate": self.rate, "seed": self.seed}


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: one draw per example and channel, shared along the other axes."""

    rank = 1

    def __init__(self, rate: float, data_format: str | None = None, seed: int | None = None, **kwargs: Any):
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or self.rate == 0.0:
            return tf.identity(inputs)
        shape = inputs.shape.as_list()
        ones = [1] * self.rank
        noise_shape = [shape[0], *ones, shape[-1]] if self.data_format == "channels_last" else [
            shape[0], shape[1], *ones]
        keep = tf.cast(tf.random.uniform(noise_shape, seed=self.seed) >= self.rate, inputs.dtype)
        return inputs * keep / (1.0 - self.rate)


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of (batch, steps, channels) inputs (`tf.keras.layers.SpatialDropout1D`)."""

    rank = 1

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any):
        super().__init__(rate, seed=seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    """Drops whole feature maps of images (`tf.keras.layers.SpatialDropout2D`)."""

    rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drops whole feature maps of volumes (`tf.keras.layers.SpatialDropout3D`)."""

    rank = 3


class ActivityRegularization(Layer):
    """Passes its inputs through and adds `l1 * sum|x| + l2 * sum x**2` over the batch size to `losses`
    (`tf.keras.layers.ActivityRegularization`)."""

    _built_at_init = True
    supports_masking = True

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any):
        super().__init__(activity_regularizer=L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs: Any) -> Any:
        return inputs


class Masking(Layer):
    """Masks the timesteps whose features all equal `mask_value` (`tf.keras.layers.Masking`): they are zeroed,
    and the layers downstream (RNNs, pooling) skip them."""

    _built_at_init = True
    supports_masking = True

    def __init__(self, mask_value: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return tf.reduce_any(tf.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs: Any) -> Any:
        keep = tf.reduce_any(tf.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return inputs * tf.cast(keep, inputs.dtype)
