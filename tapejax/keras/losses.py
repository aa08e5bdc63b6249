"""tf.keras.losses: per-example losses reduced over the batch, as Keras computes them."""

from __future__ import annotations

from typing import Any

import tapejax as tf

EPSILON = 1e-7  # Keras's backend epsilon: probabilities are clipped to [EPSILON, 1 - EPSILON]


class Loss:
    """`loss(y_true, y_pred, sample_weight=None)`: the per-example loss, reduced.

    Args:
      reduction: "sum_over_batch_size" (the mean over examples, Keras's default; "mean" and `Reduction.AUTO` are
        the same), "sum", "none" (or None), or "mean_with_sample_weight" (the weighted sum over the sum of the
        weights).
    """

    def __init__(self, reduction: str | None = "sum_over_batch_size", name: str | None = None):
        if reduction not in (*_REDUCTIONS, None):
            raise ValueError(f"Invalid value for argument `reduction`. Expected one of {sorted(_REDUCTIONS)} or "
                             f"None. Received: reduction={reduction!r}")
        self.reduction = _REDUCTIONS[reduction] if reduction is not None else "none"
        self.name = name or type(self).__name__

    def per_example(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = tf.convert_to_tensor(y_pred)
        losses = self.per_example(y_true, y_pred)
        weights = None
        if sample_weight is not None:
            weights = tf.cast(sample_weight, losses.dtype) * tf.ones_like(losses)
            losses = losses * weights
        if self.reduction == "none":
            return losses
        total = tf.reduce_sum(losses)
        if self.reduction == "sum":
            return total
        if self.reduction == "mean_with_sample_weight" and weights is not None:
            return total / tf.reduce_sum(weights)
        return total / tf.cast(tf.size(losses), losses.dtype)


# Keras 3's reductions, and the Keras 2 name "auto" that tf.keras.losses.Reduction.AUTO still gives.
_REDUCTIONS = {"sum_over_batch_size": "sum_over_batch_size", "mean": "sum_over_batch_size",
               "auto": "sum_over_batch_size", "sum": "sum", "none": "none",
               "mean_with_sample_weight": "mean_with_sample_weight"}


class Reduction:
    """`tf.keras.losses.Reduction`: the reduction names as constants (Keras 3 keeps this Keras 2 class).

    >>> import tapejax as tf
    >>> tf.keras.losses.Reduction.NONE, tf.keras.losses.Reduction.all()
    ('none', ('auto', 'none', 'sum', 'sum_over_batch_size'))
    """

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


def _true(y_true: Any, y_pred: Any) -> Any:
    return tf.cast(y_true, y_pred.dtype)


class MeanSquaredError(Loss):
    def per_example(self, y_true, y_pred):
        return tf.reduce_mean(tf.square(y_pred - _true(y_true, y_pred)), axis=-1)


class MeanAbsoluteError(Loss):
    def per_example(self, y_true, y_pred):
        return tf.reduce_mean(tf.abs(y_pred - _true(y_true, y_pred)), axis=-1)


class BinaryCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.from_logits = from_logits

    def per_example(self, y_true, y_pred):
        y = _true(y_true, y_pred)
        if self.from_logits:  # max(x, 0) - x y + log(1 + exp(-|x|)), stable for any logit
            terms = tf.nn.relu(y_pred) - y_pred * y + tf.math.log1p(tf.exp(-tf.abs(y_pred)))
        else:
            p = tf.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
            terms = -(y * tf.math.log(p) + (1.0 - y) * tf.math.log(1.0 - p))
        return tf.reduce_mean(terms, axis=-1)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.from_logits = from_logits

    def per_example(self, y_true, y_pred):
        y = _true(y_true, y_pred)
        if self.from_logits:
            return -tf.reduce_sum(y * tf.nn.log_softmax(y_pred, axis=-1), axis=-1)
        p = y_pred / tf.reduce_sum(y_pred, axis=-1, keepdims=True)
        return -tf.reduce_sum(y * tf.math.log(tf.clip_by_value(p, EPSILON, 1.0 - EPSILON)), axis=-1)


class SparseCategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.from_logits = from_logits

    def per_example(self, y_true, y_pred):
        labels = tf.cast(tf.reshape(y_true, [-1]), tf.int32)
        if self.from_logits:
            log_p = tf.nn.log_softmax(y_pred, axis=-1)
        else:
            p = y_pred / tf.reduce_sum(y_pred, axis=-1, keepdims=True)
            log_p = tf.math.log(tf.clip_by_value(p, EPSILON, 1.0 - EPSILON))
        picked = tf.gather(log_p, labels, axis=-1, batch_dims=1)
        return -tf.reshape(picked, tf.shape(y_pred)[:-1])


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    """The Huber loss per example (`tf.keras.losses.huber`): the mean over the last axis of 0.5 * e**2 where
    |e| <= delta and delta * (|e| - 0.5 * delta) elsewhere, for the error e = y_pred - y_true.

    >>> import tapejax as tf
    >>> print(tf.keras.losses.huber([[0., 1.]], [[0.5, 3.]]))
    tf.Tensor([0.8125], shape=(1,), dtype=float32)
    """
    y_pred = tf.convert_to_tensor(y_pred)
    error = tf.abs(y_pred - _true(y_true, y_pred))
    delta = tf.cast(delta, y_pred.dtype)
    return tf.reduce_mean(tf.where(error <= delta, 0.5 * tf.square(error), delta * (error - 0.5 * delta)), axis=-1)


class Huber(Loss):
    """`tf.keras.losses.Huber(delta=1.0, reduction=..., name="huber_loss")`: `huber` reduced over the batch."""

    def __init__(self, delta: float = 1.0, reduction: str | None = "sum_over_batch_size",
                 name: str = "huber_loss", **kwargs: Any):
        super().__init__(reduction=reduction, name=name, **kwargs)
        self.delta = delta

    def per_example(self, y_true, y_pred):
        return huber(y_true, y_pred, self.delta)
