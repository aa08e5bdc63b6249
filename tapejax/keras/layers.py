"""tf.keras.layers: the layers custom GradientTape loops use, built only on tapejax's public API.

Layers are tf.Modules that build their weights on first call, inside a name scope of their unique name, so the
weights are named as in TF 2's Keras (`dense/kernel:0`, `dense_1/bias:0`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import tapejax as tf
from tapejax._src.module import camel_to_snake
from tapejax.keras import activations, initializers

_NAME_COUNTS: defaultdict[str, itertools.count] = defaultdict(itertools.count)


def _unique_name(base: str) -> str:
    n = next(_NAME_COUNTS[base])
    return base if n == 0 else f"{base}_{n}"


class Layer(tf.Module):
    """The base class of layers (`tf.keras.layers.Layer`): `build(input_shape)` on first call, then `call`.

    Its `trainable_weights` and `non_trainable_weights` are in creation order (its own, then its sublayers').
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name or _unique_name(camel_to_snake(type(self).__name__)))
        self.trainable = trainable
        self.built = False
        self._own_weights: list[tf.Variable] = []
        self.dtype = tf.as_dtype(dtype or tf.float32)

    def build(self, input_shape: tf.TensorShape) -> None:
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.built:
            with tf.name_scope(self.name):
                self.build(tf.TensorShape(getattr(inputs, "shape", None)))
            self.built = True
        return self.call(inputs, *args, **kwargs)

    def add_weight(self, name: str, shape: Any = (), dtype: Any = None, initializer: Any = "glorot_uniform",
                   trainable: bool = True, **kwargs: Any) -> tf.Variable:
        """Creates a weight of this layer, named `layer_name/name:0` when called from `build`."""
        init = initializers.get(initializer)
        variable = tf.Variable(init(shape, dtype or self.dtype), name=name, trainable=trainable)
        self._own_weights.append(variable)
        return variable

    def _sublayers(self) -> list[Layer]:
        return [m for m in self.submodules if isinstance(m, Layer)]

    @property
    def weights(self) -> list[tf.Variable]:
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_weights(self) -> list[tf.Variable]:
        if not self.trainable:
            return []
        own = [w for w in self._own_weights if w.trainable]
        return own + [w for layer in self._sublayers() for w in layer._own_weights if w.trainable and layer.trainable]

    @property
    def non_trainable_weights(self) -> list[tf.Variable]:
        every = self._own_weights + [w for layer in self._sublayers() for w in layer._own_weights]
        trainable = {id(w) for w in self.trainable_weights}
        return [w for w in every if id(w) not in trainable]

    @property
    def trainable_variables(self) -> list[tf.Variable]:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list[tf.Variable]:
        return self.non_trainable_weights

    @property
    def variables(self) -> list[tf.Variable]:
        return self.weights


class Dense(Layer):
    """`activation(inputs @ kernel + bias)` (`tf.keras.layers.Dense`)."""

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros", **kwargs: Any):
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape: tf.TensorShape) -> None:
        self.kernel = self.add_weight("kernel", [input_shape[-1], self.units], initializer=self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer)

    def call(self, inputs: Any) -> Any:
        outputs = tf.matmul(inputs, self.kernel) if inputs.shape.rank == 2 else tf.einsum(
            "...i,ij->...j", inputs, self.kernel)
        if self.use_bias:
            outputs = outputs + self.bias
        return self.activation(outputs)


class _Normalization(Layer):
    """What batch and layer normalisation share: `gamma` and `beta` over `axis`, and the affine output."""

    def __init__(self, axis: int, epsilon: float, center: bool, scale: bool, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis, self.epsilon, self.center, self.scale = axis, epsilon, center, scale

    def build(self, input_shape: tf.TensorShape) -> None:
        size = [input_shape[self.axis]]
        if self.scale:
            self.gamma = self.add_weight("gamma", size, initializer="ones")
        if self.center:
            self.beta = self.add_weight("beta", size, initializer="zeros")

    def _normalize(self, inputs: Any, mean: Any, variance: Any) -> Any:
        outputs = (inputs - mean) * tf.math.rsqrt(variance + self.epsilon)
        if self.scale:
            outputs = outputs * self.gamma
        if self.center:
            outputs = outputs + self.beta
        return outputs


class BatchNormalization(_Normalization):
    """Normalises over every axis but `axis` (`tf.keras.layers.BatchNormalization`).

    With `training=True`, the batch's statistics are used and the moving statistics (non-trainable variables)
    are updated by assignment: `moving = moving * momentum + batch * (1 - momentum)`. Otherwise the moving
    statistics are used.
    """

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, **kwargs)
        self.momentum = momentum

    def build(self, input_shape: tf.TensorShape) -> None:
        super().build(input_shape)
        size = [input_shape[self.axis]]
        self.moving_mean = self.add_weight("moving_mean", size, initializer="zeros", trainable=False)
        self.moving_variance = self.add_weight("moving_variance", size, initializer="ones", trainable=False)

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        rank = inputs.shape.rank
        reduce_axes = [a for a in range(rank) if a != self.axis % rank]
        if training:
            mean = tf.reduce_mean(inputs, axis=reduce_axes)
            variance = tf.reduce_mean(tf.square(inputs - mean), axis=reduce_axes)
            self.moving_mean.assign(self.moving_mean * self.momentum + mean * (1.0 - self.momentum))
            self.moving_variance.assign(
                self.moving_variance * self.momentum + variance * (1.0 - self.momentum))
        else:
            mean, variance = self.moving_mean, self.moving_variance
        return self._normalize(inputs, mean, variance)


class Activation(Layer):
    """Applies an activation, given by name or function (`tf.keras.layers.Activation`)."""

    def __init__(self, activation: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)


class Flatten(Layer):
    """Flattens every axis but the first (`tf.keras.layers.Flatten`)."""

    def call(self, inputs: Any) -> Any:
        return tf.reshape(inputs, [inputs.shape[0], -1])


class Dropout(Layer):
    """Zeroes inputs with probability `rate` when training, scaling the rest by 1 / (1 - rate); deterministic
    under `tf.random.set_seed` (`tf.keras.layers.Dropout`). The mask is a constant on the tape, so a replay
    uses the same mask."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.rate, self.noise_shape, self.seed = float(rate), noise_shape, seed

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        if not training or self.rate == 0.0:
            return tf.identity(inputs)
        shape = self.noise_shape if self.noise_shape is not None else inputs.shape
        keep = tf.cast(tf.random.uniform(shape, seed=self.seed) >= self.rate, inputs.dtype)
        return inputs * keep / (1.0 - self.rate)


class LayerNormalization(_Normalization):
    """Normalises each example over `axis` (`tf.keras.layers.LayerNormalization`)."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, **kwargs)

    def call(self, inputs: Any) -> Any:
        mean = tf.reduce_mean(inputs, axis=self.axis, keepdims=True)
        variance = tf.reduce_mean(tf.square(inputs - mean), axis=self.axis, keepdims=True)
        return self._normalize(inputs, mean, variance)


class Embedding(Layer):
    """A lookup table of `output_dim` vectors for `input_dim` ids (`tf.keras.layers.Embedding`)."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer or initializers.RandomUniform(-0.05, 0.05)

    def build(self, input_shape: tf.TensorShape) -> None:
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer)

    def call(self, inputs: Any) -> Any:
        return tf.gather(self.embeddings, tf.cast(inputs, tf.int32))


class Sequential(Layer):
    """Layers applied in order (`tf.keras.Sequential`); `training=` reaches the layers that take it."""

    def __init__(self, layers: list[Layer] | None = None, name: str | None = None):
        super().__init__(name=name)
        self.layers: list[Layer] = list(layers or [])

    def add(self, layer: Layer) -> None:
        self.layers.append(layer)

    def call(self, inputs: Any, training: bool | None = None) -> Any:
        for layer in self.layers:
            if isinstance(layer, Dropout | BatchNormalization | Sequential):
                inputs = layer(inputs, training=training)
            else:
                inputs = layer(inputs)
        return inputs
