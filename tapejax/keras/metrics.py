"""tf.keras.metrics: the streaming metrics custom training loops use (`Mean`, `Sum`, `Accuracy`,
`SparseCategoricalAccuracy`, `CategoricalAccuracy`), as Keras 3 computes them.

A metric keeps its state in non-trainable float32 Variables, so `update_state` works eagerly and inside
`tf.function` (the step's compiled update writes them back). `result()` is the state's current value,
`reset_state()` zeroes it, and calling the metric updates it and returns the result. issue 20 brings the rest.

>>> import tapejax as tf
>>> accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
>>> accuracy.update_state([1, 0], [[0.2, 0.8], [0.4, 0.6]])
>>> float(accuracy.result())
0.5
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras.layers import _snake_case, _unique_name


class Metric:
    """The base class: state in Variables, `update_state`, `result`, `reset_state`."""

    def __init__(self, name: str | None = None, dtype: Any = None):
        self.name = name or _unique_name(_snake_case(type(self).__name__))
        self.dtype = tf.as_dtype(dtype or tf.float32)
        self._variables: list[tf.Variable] = []

    def add_variable(self, shape: Any, initializer: str = "zeros", dtype: Any = None, name: str | None = None):
        with tf.init_scope():  # made on a first tf.function call too
            variable = tf.Variable(tf.zeros(shape, dtype or self.dtype), trainable=False, name=name)
        self._variables.append(variable)
        return variable

    @property
    def variables(self) -> list[tf.Variable]:
        return list(self._variables)

    def reset_state(self) -> None:
        for variable in self._variables:
            variable.assign(tf.zeros(variable.shape, variable.dtype))

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def result(self) -> tf.Tensor:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> tf.Tensor:
        self.update_state(*args, **kwargs)
        return self.result()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


class _Reduce(Metric):
    def __init__(self, name: str | None = None, dtype: Any = None):
        super().__init__(name, dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        # Keras 3 counts samples, not elements: values of rank > 1 are first averaged over all but the batch axis.
        values = tf.cast(values, self.dtype)
        if sample_weight is not None:
            weights = tf.broadcast_to(tf.cast(sample_weight, self.dtype), tf.shape(values))
            values = values * weights
        axes = list(range(1, values.shape.rank or 0))
        if axes:
            values = tf.reduce_mean(values, axis=axes)
        self.total.assign_add(tf.reduce_sum(values))
        if sample_weight is None:
            self.count.assign_add(tf.cast(tf.size(values), self.dtype))
        else:
            self.count.assign_add(tf.reduce_sum(tf.reduce_mean(weights, axis=axes) if axes else weights))


class Mean(_Reduce):
    """The (weighted) mean of every value given to `update_state` since the last reset; 0 before any."""

    def result(self) -> tf.Tensor:
        return tf.math.divide_no_nan(tf.identity(self.total), tf.identity(self.count))


class Sum(_Reduce):
    """The (weighted) sum of every value given to `update_state` since the last reset."""

    def result(self) -> tf.Tensor:
        return tf.identity(self.total)


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred)` over every example seen."""

    def __init__(self, fn: Any, name: str | None = None, dtype: Any = None):
        super().__init__(name, dtype)
        self._fn = fn

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        super().update_state(self._fn(y_true, y_pred), sample_weight)


def accuracy(y_true: Any, y_pred: Any) -> tf.Tensor:
    """1.0 where `y_true == y_pred`, else 0.0 (`y_pred` cast to `y_true`'s dtype)."""
    y_true, y_pred = tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)
    return tf.cast(tf.equal(y_true, tf.cast(y_pred, y_true.dtype)), tf.float32)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> tf.Tensor:
    """1.0 where the integer label `y_true` is the arg max of the scores `y_pred`, else 0.0."""
    y_true, y_pred = tf.convert_to_tensor(y_true), tf.convert_to_tensor(y_pred)
    if y_true.shape.rank == y_pred.shape.rank and y_true.shape[-1] == 1:
        y_true = tf.squeeze(y_true, -1)  # labels given as a column
    predicted = tf.argmax(y_pred, axis=-1)
    return tf.cast(tf.equal(tf.cast(y_true, predicted.dtype), predicted), tf.float32)


def categorical_accuracy(y_true: Any, y_pred: Any) -> tf.Tensor:
    """1.0 where the one-hot `y_true` and the scores `y_pred` have the same arg max, else 0.0."""
    return tf.cast(tf.equal(tf.argmax(y_true, axis=-1), tf.argmax(y_pred, axis=-1)), tf.float32)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels."""

    def __init__(self, name: str = "accuracy", dtype: Any = None):
        super().__init__(accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is the arg max of the predicted scores."""

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label's arg max is the predicted scores' arg max."""

    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None):
        super().__init__(categorical_accuracy, name, dtype)
