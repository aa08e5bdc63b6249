"""tf.keras.layers that merge a list of inputs: Add, Subtract, Multiply, Average, Maximum, Minimum, Dot, and
their functional forms (`tf.keras.layers.add([a, b])`). Masks merge as their logical AND."""

from __future__ import annotations

import functools
from typing import Any

import tapejax as tf
from tapejax.keras.layers import Layer


class _Merge(Layer):
    """Elementwise merges of two or more inputs, broadcast as Keras broadcasts them."""

    _built_at_init = True
    supports_masking = True
    _exactly_two = False

    def _check(self, inputs: Any) -> list[Any]:
        name = type(self).__name__
        if not isinstance(inputs, list | tuple):
            raise ValueError(f"A merge layer should be called on a list of inputs. Received: inputs={inputs} "
                             "(not a list of tensors)")
        if self._exactly_two and len(inputs) != 2:
            raise ValueError(f"A `{name}` layer should be called on exactly 2 inputs. Received: inputs={inputs}")
        if len(inputs) < 1:
            raise ValueError(f"A merge layer should be called on a list of at least 1 input. Got {len(inputs)} inputs.")
        return list(inputs)

    def call(self, inputs: Any) -> Any:
        inputs = self._check(inputs)
        return self._merge(inputs)

    def _merge(self, inputs: list[Any]) -> Any:
        raise NotImplementedError

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """Keras 3's: a step is kept where any input keeps it, and nothing is masked if one input has no mask."""
        if mask is None or any(m is None for m in mask):
            return None
        kept = mask[0]
        for m in mask[1:]:
            kept = tf.logical_or(kept, m)
        return kept


class Add(_Merge):
    """The sum of the inputs (`tf.keras.layers.Add`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Add()([tf.ones([2, 3]), tf.ones([2, 3])]).numpy()[0]
    array([2., 2., 2.], dtype=float32)
    """

    def _merge(self, inputs: list[Any]) -> Any:
        return functools.reduce(tf.add, inputs)


class Subtract(_Merge):
    """The first input minus the second (`tf.keras.layers.Subtract`)."""

    _exactly_two = True

    def _merge(self, inputs: list[Any]) -> Any:
        return tf.subtract(inputs[0], inputs[1])


class Multiply(_Merge):
    """The elementwise product of the inputs (`tf.keras.layers.Multiply`)."""

    def _merge(self, inputs: list[Any]) -> Any:
        return functools.reduce(tf.multiply, inputs)


class Average(_Merge):
    """The elementwise mean of the inputs (`tf.keras.layers.Average`)."""

    def _merge(self, inputs: list[Any]) -> Any:
        return functools.reduce(tf.add, inputs) / len(inputs)


class Maximum(_Merge):
    """The elementwise maximum of the inputs (`tf.keras.layers.Maximum`)."""

    def _merge(self, inputs: list[Any]) -> Any:
        return functools.reduce(tf.maximum, inputs)


class Minimum(_Merge):
    """The elementwise minimum of the inputs (`tf.keras.layers.Minimum`)."""

    def _merge(self, inputs: list[Any]) -> Any:
        return functools.reduce(tf.minimum, inputs)


class Dot(_Merge):
    """The dot product of two inputs over `axes` (batched), optionally of their L2-normalised forms (cosine
    proximity) (`tf.keras.layers.Dot`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Dot(axes=1)([tf.ones([2, 3]), tf.ones([2, 3])]).numpy()
    array([[3.],
           [3.]], dtype=float32)
    """

    _exactly_two = True
    supports_masking = False

    def __init__(self, axes: Any, normalize: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.axes, self.normalize = axes, normalize

    def _merge(self, inputs: list[Any]) -> Any:
        x, y = inputs
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else tuple(self.axes)
        axes = tuple(a % t.shape.rank for a, t in zip(axes, (x, y)))
        if self.normalize:
            x, y = tf.math.l2_normalize(x, axis=axes[0]), tf.math.l2_normalize(y, axis=axes[1])
        # Keras's batch_dot: contract axes[0] of x with axes[1] of y, the batch axis shared
        letters = "abcdefghijklmnopq"
        xs = "z" + letters[:x.shape.rank - 1]
        ys = "z" + letters[x.shape.rank - 1:x.shape.rank - 1 + y.shape.rank - 1]
        ys = ys[:axes[1]] + xs[axes[0]] + ys[axes[1] + 1:]
        out = "z" + "".join(c for c in xs[1:] if c != xs[axes[0]]) + "".join(c for c in ys[1:] if c != xs[axes[0]])
        result = tf.einsum(f"{xs},{ys}->{out}", x, y)
        return tf.expand_dims(result, 1) if result.shape.rank == 1 else result

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None


def add(inputs: list[Any], **kwargs: Any) -> Any:
    """`Add(**kwargs)(inputs)`."""
    return Add(**kwargs)(inputs)


def subtract(inputs: list[Any], **kwargs: Any) -> Any:
    """`Subtract(**kwargs)(inputs)`."""
    return Subtract(**kwargs)(inputs)


def multiply(inputs: list[Any], **kwargs: Any) -> Any:
    """`Multiply(**kwargs)(inputs)`."""
    return Multiply(**kwargs)(inputs)


def average(inputs: list[Any], **kwargs: Any) -> Any:
    """`Average(**kwargs)(inputs)`."""
    return Average(**kwargs)(inputs)


def maximum(inputs: list[Any], **kwargs: Any) -> Any:
    """`Maximum(**kwargs)(inputs)`."""
    return Maximum(**kwargs)(inputs)


def minimum(inputs: list[Any], **kwargs: Any) -> Any:
    """`Minimum(**kwargs)(inputs)`."""
    return Minimum(**kwargs)(inputs)


def dot(inputs: list[Any], axes: Any = -1, **kwargs: Any) -> Any:
    """`Dot(axes, **kwargs)(inputs)`."""
    return Dot(axes=axes, **kwargs)(inputs)


def concatenate(inputs: list[Any], axis: int = -1, **kwargs: Any) -> Any:
    """`Concatenate(axis, **kwargs)(inputs)`."""
    from tapejax.keras.layers import Concatenate
    return Concatenate(axis=axis, **kwargs)(inputs)


