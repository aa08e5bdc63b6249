"""tf.keras.losses: per-example losses reduced over the batch, as Keras computes them."""

from __future__ import annotations

from typing import Any

import tapejax as tf

EPSILON = 1e-7  # Keras's backend epsilon: probabilities are clipped to [EPSILON, 1 - EPSILON]


class Loss:
    """`loss(y_true, y_pred, sample_weight=None)`: the per-example loss, reduced.

    Args:
      reduction: "sum_over_batch_size" (the mean over examples, Keras's default), "sum", or "none".
    """

    def __init__(self, reduction: str = "sum_over_batch_size", name: str | None = None):
        if reduction not in ("sum_over_batch_size", "sum", "none", "auto"):
            raise ValueError(f"Invalid reduction {reduction!r}: use 'sum_over_batch_size', 'sum' or 'none'.")
        self.reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        self.name = name or type(self).__name__

    def per_example(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = tf.convert_to_tensor(y_pred)
        losses = self.per_example(y_true, y_pred)
        if sample_weight is not None:
            losses = losses * tf.cast(sample_weight, losses.dtype)
        if self.reduction == "none":
            return losses
        total = tf.reduce_sum(losses)
        if self.reduction == "sum":
            return total
        return total / tf.cast(tf.size(losses), losses.dtype)


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
