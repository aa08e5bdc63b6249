"""The confusion-matrix metrics of tf.keras.metrics: TruePositives..FalseNegatives, Precision, Recall, AUC, MeanIoU.

Counts are accumulated per threshold in Variables: a prediction is positive above a threshold, a label when it
is non-zero, each weighted by `sample_weight`, as Keras 3 counts them.

>>> import tapejax as tf
>>> precision = tf.keras.metrics.Precision()
>>> precision.update_state([0, 1, 1, 1], [1, 0, 1, 1])
>>> round(float(precision.result()), 4)
0.6667

Differences from TensorFlow: Keras compares a prediction equal to one of AUC's evenly spaced thresholds through
its bucketing shortcut; tapejax compares `y_pred > threshold` directly, which differs only at those exact values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras import backend
from tapejax.keras.loss_functions import squeeze_or_expand_to_same_rank
from tapejax.keras.layers import _unique_name
from tapejax.keras.metrics import Metric

NEG_INF = -1e10  # Keras's stand-in for the scores that top_k filters out


def _filter_top_k(x: Any, k: int) -> Any:
    _, indices = tf.math.top_k(x, k)
    mask = tf.reduce_sum(tf.one_hot(indices, x.shape[-1], dtype=x.dtype), axis=-2)
    return x * mask + NEG_INF * (1.0 - mask)


def confusion_counts(y_true: Any, y_pred: Any, thresholds: Any, dtype: Any, top_k: int | None = None,
                     class_id: int | None = None, sample_weight: Any = None) -> dict[str, Any]:
    """{'tp', 'fp', 'tn', 'fn'}: the weighted counts at each threshold (vectors of len(thresholds))."""
    y_true, y_pred = tf.cast(y_true, dtype), tf.cast(y_pred, dtype)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
    weights = tf.ones_like(y_pred)
    if sample_weight is not None:
        sample_weight = tf.cast(sample_weight, dtype)
        if sample_weight.shape.rank and sample_weight.shape.rank < y_pred.shape.rank:
            extra = [1] * (y_pred.shape.rank - sample_weight.shape.rank)
            sample_weight = tf.reshape(sample_weight, sample_weight.shape.as_list() + extra)
        weights = weights * sample_weight
    predictions, weights = tf.reshape(y_pred, [1, -1]), tf.reshape(weights, [1, -1])
    labels = tf.reshape(tf.cast(tf.not_equal(y_true, 0.0), dtype), [1, -1])
    above = tf.cast(predictions > tf.reshape(tf.constant(thresholds, dtype), [-1, 1]), dtype)
    return {"tp": tf.reduce_sum(above * labels * weights, axis=1),
            "fp": tf.reduce_sum(above * (1.0 - labels) * weights, axis=1),
            "tn": tf.reduce_sum((1.0 - above) * (1.0 - labels) * weights, axis=1),
            "fn": tf.reduce_sum((1.0 - above) * labels * weights, axis=1)}


def _thresholds(thresholds: Any, default: float) -> tuple[list[float], bool]:
    if thresholds is None:
        return [default], True
    single = not isinstance(thresholds, list | tuple | np.ndarray)
    values = [float(thresholds)] if single else [float(t) for t in thresholds]
    for t in values:
        if t != NEG_INF and not 0.0 <= t <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {thresholds}")
    return values, single


class _Confusion(Metric):
    """The counts of one confusion-matrix cell at each threshold."""

    _cells: tuple[str, ...] = ()

    def __init__(self, thresholds: Any = None, name: str | None = None, dtype: Any = None, top_k: int | None = None,
                 class_id: int | None = None):
        super().__init__(name, dtype)
        default = 0.5 if top_k is None else NEG_INF
        self.thresholds, self._single = _thresholds(thresholds, default)
        self.init_thresholds = thresholds
        self.top_k, self.class_id = top_k, class_id
        for cell in self._cells:
            setattr(self, _CELL_NAMES[cell], self.add_variable((len(self.thresholds),), name=_CELL_NAMES[cell]))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        counts = confusion_counts(y_true, y_pred, self.thresholds, self.dtype, self.top_k, self.class_id,
                                  sample_weight)
        for cell in self._cells:
            getattr(self, _CELL_NAMES[cell]).assign_add(counts[cell])

    def _scalar(self, value: Any) -> Any:
        return value[0] if self._single else value


_CELL_NAMES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}


def _cell_class(class_name: str, cell: str) -> type[_Confusion]:
    def __init__(self, thresholds: Any = None, name: str | None = None, dtype: Any = None):
        _Confusion.__init__(self, thresholds, name, dtype)

    def result(self) -> Any:
        return self._scalar(tf.identity(getattr(self, _CELL_NAMES[cell])))

    return type(class_name, (_Confusion,), {"_cells": (cell,), "__init__": __init__, "result": result,
                                            "__module__": __name__,
                                            "__doc__": f"The weighted count of {_CELL_NAMES[cell]}."})


TruePositives = _cell_class("TruePositives", "tp")
FalsePositives = _cell_class("FalsePositives", "fp")
TrueNegatives = _cell_class("TrueNegatives", "tn")
FalseNegatives = _cell_class("FalseNegatives", "fn")


class Precision(_Confusion):
    """tp / (tp + fp) at `thresholds` (0.5 by default; a list gives one value per threshold), among the `top_k`
    scores or for one `class_id` if given."""

    _cells = ("tp", "fp")

    def __init__(self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(thresholds, name, dtype, top_k, class_id)

    def result(self) -> Any:
        return self._scalar(tf.math.divide_no_nan(tf.identity(self.true_positives),
                                                  self.true_positives + self.false_positives))


class Recall(_Confusion):
    """tp / (tp + fn) at `thresholds` (0.5 by default), among the `top_k` scores or for one `class_id`."""

    _cells = ("tp", "fn")

    def __init__(self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(thresholds, name, dtype, top_k, class_id)

    def result(self) -> Any:
        return self._scalar(tf.math.divide_no_nan(tf.identity(self.true_positives),
                                                  self.true_positives + self.false_negatives))


class AUC(_Confusion):
    """The area under the ROC (or PR) curve, from counts at `num_thresholds` evenly spaced thresholds (plus
    -epsilon and 1 + epsilon), summed by Keras's `summation_method` ('interpolation', 'minoring', 'majoring').

    Differences from TensorFlow: `multi_label=True` and `label_weights` raise NotImplementedError.
    """

    _cells = ("tp", "fp", "tn", "fn")

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC", summation_method: str = "interpolation",
                 name: str | None = None, dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: int | None = None, label_weights: Any = None, from_logits: bool = False):
        if multi_label or label_weights is not None:
            raise NotImplementedError("tf.keras.metrics.AUC(multi_label=True / label_weights) is not implemented "
                                      "in tapejax.")
        if curve.upper() not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["ROC", "PR"]')
        if summation_method.lower() not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". Expected values are '
                             '["interpolation", "majoring", "minoring"]')
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. Received: "
                                 f"num_thresholds={num_thresholds}")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        all_thresholds = [0.0 - backend.epsilon(), *inner, 1.0 + backend.epsilon()]
        self.num_thresholds = len(all_thresholds)
        self.curve, self.summation_method = curve.upper(), summation_method.lower()
        self.multi_label, self.label_weights, self._from_logits = False, None, from_logits
        Metric.__init__(self, name, dtype)
        self.thresholds, self._single, self.top_k, self.class_id = all_thresholds, False, None, None
        for cell in self._cells:
            setattr(self, _CELL_NAMES[cell], self.add_variable((self.num_thresholds,), name=_CELL_NAMES[cell]))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self._from_logits:
            y_pred = tf.sigmoid(tf.cast(y_pred, self.dtype))
        super().update_state(y_true, y_pred, sample_weight)

    def result(self) -> Any:
        tp, fp, tn, fn = (tf.identity(v) for v in (self.true_positives, self.false_positives,
                                                    self.true_negatives, self.false_negatives))
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return _interpolated_pr_auc(tp, fp, fn, n)
        recall = tf.math.divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = tf.math.divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, tf.math.divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = tf.minimum(y[:n - 1], y[1:])
        else:
            heights = tf.maximum(y[:n - 1], y[1:])
        return tf.reduce_sum((x[:n - 1] - x[1:]) * heights)


def _interpolated_pr_auc(tp: Any, fp: Any, fn: Any, n: int) -> Any:
    """Davis & Goadrich's interpolation of the PR curve between thresholds, as Keras computes it."""
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    slope = tf.math.divide_no_nan(dtp, tf.maximum(p[:n - 1] - p[1:], 0.0))
    intercept = tp[1:] - slope * p[1:]
    ratio = tf.where(tf.logical_and(p[:n - 1] > 0, p[1:] > 0),
                     tf.math.divide_no_nan(p[:n - 1], tf.maximum(p[1:], 0.0)), tf.ones_like(p[1:]))
    increments = tf.math.divide_no_nan(slope * (dtp + intercept * tf.math.log(ratio)),
                                       tf.maximum(tp[1:] + fn[1:], 0.0))
    return tf.reduce_sum(increments)


class MeanIoU(Metric):
    """The mean over classes of intersection over union, from a `num_classes` x `num_classes` confusion matrix
    (rows: labels, columns: predictions); classes never seen are left out of the mean. As in Keras, the matrix
    is int64 by default, so float sample weights are truncated to integers (Keras warns about it)."""

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_true: bool = True, sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(name or _unique_name("mean_io_u"), dtype or tf.int64)
        self.num_classes, self.ignore_class, self.axis = num_classes, ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.total_cm = self.add_variable((num_classes, num_classes), name="total_confusion_matrix")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)
        if not self.sparse_y_true:
            y_true = tf.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = tf.argmax(y_pred, axis=self.axis)
        y_true = tf.reshape(tf.cast(y_true, self.dtype), [-1])
        y_pred = tf.reshape(tf.cast(y_pred, self.dtype), [-1])
        weights = tf.ones_like(y_true) if sample_weight is None else \
            tf.cast(tf.broadcast_to(tf.reshape(tf.convert_to_tensor(sample_weight), [-1]), y_true.shape), self.dtype)
        valid = tf.logical_and(tf.logical_and(y_true >= 0, y_true < self.num_classes),
                               tf.logical_and(y_pred >= 0, y_pred < self.num_classes))
        if self.ignore_class is not None:
            valid = tf.logical_and(valid, tf.not_equal(y_true, tf.cast(self.ignore_class, self.dtype)))
        weights = tf.where(valid, weights, tf.zeros_like(weights))
        y_true = tf.where(valid, y_true, tf.zeros_like(y_true))
        y_pred = tf.where(valid, y_pred, tf.zeros_like(y_pred))
        true_1h = tf.one_hot(tf.cast(y_true, tf.int32), self.num_classes, dtype=tf.float64)
        pred_1h = tf.one_hot(tf.cast(y_pred, tf.int32), self.num_classes, dtype=tf.float64)
        counts = tf.matmul(true_1h * tf.expand_dims(tf.cast(weights, tf.float64), -1), pred_1h, transpose_a=True)
        self.total_cm.assign_add(tf.cast(counts, self.dtype))

    def result(self) -> Any:
        cm = tf.cast(tf.identity(self.total_cm), tf.float32)
        true_positives = tf.linalg.diag_part(cm)
        denominator = tf.reduce_sum(cm, axis=0) + tf.reduce_sum(cm, axis=1) - true_positives
        valid = tf.reduce_sum(tf.cast(tf.not_equal(denominator, 0.0), tf.float32))
        return tf.math.divide_no_nan(tf.reduce_sum(tf.math.divide_no_nan(true_positives, denominator)), valid)
