"""The per-example loss functions of `tf.keras.losses` (`mse`, `binary_crossentropy`, ...), with Keras 3's numerics.

Each takes `(y_true, y_pred)` and returns one loss per example (the last axis reduced). Probabilities are
clipped to `[epsilon(), 1 - epsilon()]`, except where `y_pred` is the output of a Keras softmax or sigmoid
activation: then the crossentropies compute from its logits, as Keras 3 does (see `tapejax/keras/logits.py`).

>>> import tapejax as tf
>>> print(tf.keras.losses.mse([[0., 1.]], [[1., 1.]]))
tf.Tensor([0.5], shape=(1,), dtype=float32)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import tapejax as tf
from tapejax.keras import backend
from tapejax.keras.logits import logits_of


def _pair(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    y_pred = tf.convert_to_tensor(y_pred)
    return tf.cast(y_true, y_pred.dtype), y_pred


def squeeze_or_expand_to_same_rank(x1: Any, x2: Any, expand_rank_1: bool = True) -> tuple[Any, Any]:
    """Keras's rank alignment: where ranks differ by one and the longer one ends in 1, squeeze it (or, if the
    other is rank 1, expand that one), so that a (N,) label meets a (N, 1) prediction as (N, 1)."""
    r1, r2 = x1.shape.rank, x2.shape.rank
    if r1 is None or r2 is None or r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = tf.expand_dims(x2, -1)
        else:
            x1 = tf.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = tf.expand_dims(x1, -1)
        else:
            x2 = tf.squeeze(x2, -1)
    return x1, x2


def _aligned(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    return squeeze_or_expand_to_same_rank(*_pair(y_true, y_pred))


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _aligned(y_true, y_pred)
    return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _aligned(y_true, y_pred)
    return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _aligned(y_true, y_pred)
    eps = tf.cast(backend.epsilon(), y_pred.dtype)
    return 100.0 * tf.reduce_mean(tf.abs((y_true - y_pred) / tf.maximum(tf.abs(y_true), eps)), axis=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _aligned(y_true, y_pred)
    eps = tf.cast(backend.epsilon(), y_pred.dtype)
    return tf.reduce_mean(tf.square(tf.math.log(tf.maximum(y_pred, eps) + 1.0)
                                    - tf.math.log(tf.maximum(y_true, eps) + 1.0)), axis=-1)


def l2_normalize(x: Any, axis: int = -1) -> Any:
    """Keras's `normalize(x, order=2)`: `x * min(rsqrt(sum(x**2)), 1 / epsilon())`."""
    inverse = tf.math.rsqrt(tf.reduce_sum(tf.square(x), axis=axis, keepdims=True))
    return x * tf.minimum(inverse, tf.cast(1.0 / backend.epsilon(), x.dtype))


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    y_true, y_pred = _aligned(y_true, y_pred)
    return -tf.reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis=axis)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    """The Huber loss per example: the mean over the last axis of 0.5 * e**2 where |e| <= delta and
    delta * |e| - 0.5 * delta**2 elsewhere, for the error e = y_pred - y_true.

    >>> import tapejax as tf
    >>> print(tf.keras.losses.huber([[0., 1.]], [[0.5, 3.]]))
    tf.Tensor([0.8125], shape=(1,), dtype=float32)
    """
    y_true, y_pred = _aligned(y_true, y_pred)
    delta = tf.cast(delta, y_pred.dtype)
    error = y_pred - y_true
    absolute = tf.abs(error)
    return tf.reduce_mean(tf.where(absolute <= delta, 0.5 * tf.square(error),
                                   delta * absolute - 0.5 * tf.square(delta)), axis=-1)


def log_cosh(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _aligned(y_true, y_pred)
    x = y_pred - y_true
    return tf.reduce_mean(x + tf.nn.softplus(-2.0 * x) - tf.cast(math.log(2.0), x.dtype), axis=-1)


def _hinge_labels(y_true: Any) -> Any:
    # Keras maps labels that are all 0 or 1 to -1 or 1; other labels are used as given.
    binary = tf.reduce_all(tf.logical_or(tf.equal(y_true, 0.0), tf.equal(y_true, 1.0)))
    return tf.where(binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(tf.square(tf.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    positive = tf.reduce_sum(y_true * y_pred, axis=-1)
    negative = tf.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return tf.maximum(negative - positive + 1.0, tf.zeros([], y_pred.dtype))


def kl_divergence(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = tf.clip_by_value(y_true, backend.epsilon(), 1.0)
    y_pred = tf.clip_by_value(y_pred, backend.epsilon(), 1.0)
    return tf.reduce_sum(y_true * tf.math.log(y_true / y_pred), axis=-1)


def poisson(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return tf.reduce_mean(y_pred - y_true * tf.math.log(y_pred + backend.epsilon()), axis=-1)


def _clipped(p: Any) -> Any:
    return tf.clip_by_value(p, backend.epsilon(), 1.0 - backend.epsilon())


def _check_axis(axis: Any) -> None:
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")


def _smooth_categorical(y_true: Any, label_smoothing: float, fn: str, y_pred: Any) -> Any:
    if y_pred.shape[-1] == 1:
        warnings.warn(f"In loss {fn}, expected y_pred.shape to be (batch_size, num_classes) with num_classes > 1. "
                      f"Received: y_pred.shape={tuple(y_pred.shape)}. Consider using 'binary_crossentropy' if you "
                      "only have 2 classes.", SyntaxWarning, stacklevel=3)
    if label_smoothing:
        classes = tf.cast(tf.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return y_true


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0,
                             axis: int = -1) -> Any:
    _check_axis(axis)
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smooth_categorical(y_true, label_smoothing, "categorical_crossentropy", y_pred)
    if y_true.shape.rank != y_pred.shape.rank:
        raise ValueError("Arguments `target` and `output` must have the same rank (ndim). Received: "
                         f"target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}")
    output, from_logits = logits_of(y_pred, from_logits, "softmax", "categorical_crossentropy")
    if from_logits:
        return tf.nn.softmax_cross_entropy_with_logits(labels=y_true, logits=output, axis=axis)
    output = _clipped(output / tf.reduce_sum(output, axis=axis, keepdims=True))
    return -tf.reduce_sum(y_true * tf.math.log(output), axis=axis)


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1) -> Any:
    _check_axis(axis)
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smooth_categorical(y_true, label_smoothing, "categorical_focal_crossentropy", y_pred)
    if from_logits:
        y_pred = tf.nn.softmax(y_pred, axis=axis)
    output = _clipped(y_pred / tf.reduce_sum(y_pred, axis=axis, keepdims=True))
    focal = tf.pow(1.0 - output, gamma) * alpha * (-y_true * tf.math.log(output))
    return tf.reduce_sum(focal, axis=axis)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    ignore_class: int | None = None, axis: int = -1) -> Any:
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.convert_to_tensor(y_true)
    if axis not in (-1, y_pred.shape.rank - 1):
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    if y_true.shape.rank == y_pred.shape.rank and y_true.shape[-1] == 1:
        y_true = tf.squeeze(y_true, -1)
    valid = None
    if ignore_class is not None:
        valid = tf.not_equal(tf.cast(y_true, y_pred.dtype), tf.cast(ignore_class, y_pred.dtype))
        y_true = tf.where(valid, y_true, tf.zeros_like(y_true))
        y_pred = tf.where(tf.expand_dims(valid, -1), y_pred, tf.zeros_like(y_pred))
    output, from_logits = logits_of(y_pred, from_logits, "softmax", "sparse_categorical_crossentropy")
    if y_true.shape.rank != output.shape.rank - 1:
        raise ValueError("Argument `output` must have rank (ndim) `target.ndim - 1`. Received: "
                         f"target.shape={tuple(y_true.shape)}, output.shape={tuple(output.shape)}")
    if not from_logits:  # Keras takes the log of the clipped probabilities as logits (so they are renormalized)
        output = tf.math.log(_clipped(output))
    result = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.cast(y_true, tf.int64), logits=output)
    if valid is not None:
        result = tf.where(valid, result, tf.zeros_like(result))
    return result


def _binary(y_true: Any, y_pred: Any, from_logits: bool) -> Any:
    if y_true.shape.rank != y_pred.shape.rank:
        raise ValueError("Arguments `target` and `output` must have the same rank (ndim). Received: "
                         f"target.shape={tuple(y_true.shape)}, output.shape={tuple(y_pred.shape)}")
    output, from_logits = logits_of(y_pred, from_logits, "sigmoid", "binary_crossentropy")
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=output)
    output = _clipped(output)
    return -(y_true * tf.math.log(output) + (1.0 - y_true) * tf.math.log(1.0 - output))


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0,
                        axis: int = -1) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return tf.reduce_mean(_binary(y_true, y_pred, from_logits), axis=axis)


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = tf.sigmoid(y_pred)
    bce = _binary(y_true, y_pred, False)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = tf.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return tf.reduce_mean(focal, axis=axis)


def dice(y_true: Any, y_pred: Any, axis: Any = None) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    intersection = tf.reduce_sum(y_true * y_pred, axis=axis)
    total = tf.reduce_sum(y_true, axis=axis) + tf.reduce_sum(y_pred, axis=axis) + backend.epsilon()
    return 1.0 - 2.0 * intersection / total


def tversky(y_true: Any, y_pred: Any, alpha: float = 0.5, beta: float = 0.5, axis: Any = None) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    intersection = tf.reduce_sum(y_true * y_pred, axis=axis)
    fp = tf.reduce_sum((1.0 - y_pred) * y_true, axis=axis)
    fn = tf.reduce_sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + fp * alpha + fn * beta + backend.epsilon())


def categorical_generalized_cross_entropy(y_true: Any, y_pred: Any, q: float) -> Any:
    y_pred = tf.convert_to_tensor(y_pred)
    one_hot = tf.one_hot(tf.cast(y_true, tf.int32), y_pred.shape[-1], dtype=y_pred.dtype)
    p = tf.reduce_sum(y_pred * one_hot, axis=-1)
    return (1.0 - tf.pow(p, q)) / q


# The short names tf.keras.losses and tf.keras.metrics also export.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
