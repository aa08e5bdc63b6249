"""tf.keras.layers.GroupNormalization: each example's channels split into `groups`, each group normalised over
its channels and the other non-batch axes, then scaled by `gamma` and shifted by `beta` per channel (Keras 3).

>>> import numpy as np
>>> import tapejax as tf
>>> layer = tf.keras.layers.GroupNormalization(groups=2)
>>> y = layer(np.arange(8, dtype="float32").reshape(1, 2, 4))
>>> [w.name for w in layer.weights], y.shape
(['gamma', 'beta'], TensorShape([1, 2, 4]))
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras import constraints, initializers, regularizers
from tapejax.keras.layers import Layer


class GroupNormalization(Layer):
    """Group normalisation (Wu and He, 2018); `groups=-1` is instance normalisation (one channel per group).

    The statistics are computed in float32 at least (Keras upcasts float16 inputs) as `moments` over the group's
    axes; the output is `x * inv + (beta - mean * inv)` with `inv = gamma / sqrt(variance + epsilon)`.

    Raises:
      ValueError: `groups` not positive (nor -1), more groups than channels, or channels not a multiple of groups.
    """

    supports_masking = True

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any):
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a positive integer (or `-1` "
                             f"for instance normalization). Received: groups={groups}")
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon, self.center, self.scale = groups, axis, epsilon, center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer, self.gamma_regularizer = regularizers.get(beta_regularizer), \
            regularizers.get(gamma_regularizer)
        self.beta_constraint, self.gamma_constraint = constraints.get(beta_constraint), \
            constraints.get(gamma_constraint)

    def build(self, input_shape: tf.TensorShape) -> None:
        dim = tf.TensorShape(input_shape)[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {input_shape}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels ({dim}).")
        if dim % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({dim}).")
        self.gamma = self.add_weight(shape=(dim,), name="gamma", initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint) \
            if self.scale else None
        self.beta = self.add_weight(shape=(dim,), name="beta", initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint) \
            if self.center else None

    def call(self, inputs: Any) -> Any:
        inputs = tf.convert_to_tensor(inputs)
        if not inputs.dtype.is_floating:  # Keras 3's op casts its float result back to the integers' dtype
            return tf.cast(tf.cast(self.call(tf.cast(inputs, self.dtype)), inputs.dtype), self.dtype)
        rank = inputs.shape.rank
        axis = self.axis % rank
        dynamic = tf.shape(inputs)
        grouped_shape = [-1] + [inputs.shape[i] if inputs.shape[i] is not None else dynamic[i]
                                for i in range(1, rank)]
        grouped_shape[axis] = inputs.shape[axis] // self.groups
        grouped_shape.insert(axis, self.groups)
        compute = tf.float32 if inputs.dtype in (tf.float16, tf.bfloat16) else inputs.dtype
        grouped = tf.cast(tf.reshape(inputs, grouped_shape), compute)
        axes = [i for i in range(1, rank + 1) if i != axis]  # all but the batch and the group axis
        mean, variance = tf.nn.moments(grouped, axes=axes, keepdims=True)
        broadcast = [1] * (rank + 1)
        broadcast[axis], broadcast[axis + 1] = self.groups, inputs.shape[axis] // self.groups
        inv = tf.math.rsqrt(variance + self.epsilon)
        if self.scale:
            inv = inv * tf.cast(tf.reshape(self.gamma, broadcast), compute)
        shift = -mean * inv
        if self.center:
            shift = shift + tf.cast(tf.reshape(self.beta, broadcast), compute)
        outputs = tf.cast(grouped * inv + shift, inputs.dtype)
        return tf.reshape(outputs, dynamic)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape
