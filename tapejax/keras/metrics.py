"""tf.keras.metrics: streaming metrics as Keras 3 computes them.

A metric keeps its state in non-trainable Variables, so `update_state` works eagerly and inside `tf.function`
(the step's compiled update writes them back). `result()` is the state's current value, `reset_state()` zeroes
it, and calling the metric updates it and returns the result. The confusion-matrix metrics (`Precision`,
`Recall`, `AUC`, `MeanIoU`, ...) live in `confusion_metrics.py`.

>>> import tapejax as tf
>>> accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
>>> accuracy.update_state([1, 0], [[0.2, 0.8], [0.4, 0.6]])
>>> float(accuracy.result())
0.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tapejax as tf
from tapejax.keras import backend
from tapejax.keras.attributes import Declared
from tapejax.keras import loss_functions as F
from tapejax.keras.layers import _snake_case, _unique_name
from tapejax.keras.loss_functions import squeeze_or_expand_to_same_rank


class Metric:
    """The base class: state in Variables (`add_variable`), `update_state`, `result`, `reset_state`."""

    dtype = Declared("The dtype of the metric's state and result (`floatx()` by default).")

    def __init__(self, name: str | None = None, dtype: Any = None):
        self.name = name or _unique_name(_snake_case(type(self).__name__))
        self.dtype = tf.as_dtype(dtype or backend.floatx())
        self._variables: list[tf.Variable] = []

    def add_variable(self, shape: Any, initializer: Any = "zeros", dtype: Any = None, aggregation: str = "sum",
                     name: str | None = None) -> tf.Variable:
        dtype = tf.as_dtype(dtype or self.dtype)
        with tf.init_scope():  # made on a first tf.function call too
            if callable(initializer):
                value = initializer(shape, dtype)
            else:
                value = (tf.ones if initializer == "ones" else tf.zeros)(shape, dtype)
            # Keras's metric state: each replica counts its own examples, summed when read (ON_READ, SUM)
            variable = tf.Variable(value, trainable=False, name=name, synchronization="on_read",
                                   aggregation=aggregation)
        self._variables.append(variable)
        return variable

    add_weight = add_variable

    @property
    def variables(self) -> list[tf.Variable]:
        found = list(self._variables)
        for value in vars(self).values():  # metrics held by this one (a compiled list of metrics)
            for inner in value if isinstance(value, list) else [value]:
                if isinstance(inner, Metric):
                    found += inner.variables
        return found

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

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Metric:
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


def _samplewise(values: Any, sample_weight: Any, reduce: Callable, dtype: Any) -> tuple[Any, Any]:
    """Keras's reduction to one value per sample: weights aligned to the values' rank, the values reduced to
    the weights' rank and weighted, then every axis but the first reduced."""
    values = tf.cast(values, dtype)
    if sample_weight is not None:
        sample_weight = tf.cast(sample_weight, dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_rank, value_rank = sample_weight.shape.rank, values.shape.rank
        if value_rank > weight_rank:
            values = reduce(values, axis=list(range(weight_rank, value_rank)))
        sample_weight = tf.broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        if weight_rank > 1:
            sample_weight = reduce(sample_weight, axis=list(range(1, weight_rank)))
    if values.shape.rank > 1:
        values = reduce(values, axis=list(range(1, values.shape.rank)))
    return values, sample_weight


class Sum(Metric):
    """The (weighted) sum of every value given to `update_state` since the last reset."""

    def __init__(self, name: str = "sum", dtype: Any = None):
        super().__init__(name, dtype)
        self.total = self.add_variable((), name="total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values, _ = _samplewise(values, sample_weight, tf.reduce_sum, self.dtype)
        self.total.assign_add(tf.reduce_sum(values))

    def result(self) -> tf.Tensor:
        return tf.identity(self.total)


class Mean(Metric):
    """The (weighted) mean of every value given to `update_state` since the last reset; 0 before any. Values of
    rank > 1 count one per sample (averaged over all but the first axis), as in Keras 3."""

    def __init__(self, name: str = "mean", dtype: Any = None):
        super().__init__(name, dtype)
        self.total = self.add_variable((), name="total")
        self.count = self.add_variable((), name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values, sample_weight = _samplewise(values, sample_weight, tf.reduce_mean, self.dtype)
        self.total.assign_add(tf.reduce_sum(values))
        if sample_weight is not None:
            samples = tf.reduce_sum(sample_weight)
        elif values.shape.rank:
            samples = tf.shape(values)[0]
        else:
            samples = 1
        self.count.assign_add(tf.cast(samples, self.dtype))

    def result(self) -> tf.Tensor:
        return tf.math.divide_no_nan(tf.identity(self.total), tf.identity(self.count))


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over every example seen."""

    def __init__(self, fn: Callable, name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name or _unique_name("mean_metric_wrapper"), dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


def accuracy(y_true: Any, y_pred: Any) -> tf.Tensor:
    """1.0 where `y_true == y_pred`, else 0.0."""
    y_pred = tf.convert_to_tensor(y_pred)
    y_true = tf.cast(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return tf.cast(tf.equal(y_true, y_pred), backend.floatx())


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> tf.Tensor:
    """1.0 where `y_pred > threshold` matches the 0/1 label, else 0.0."""
    y_pred, y_true = tf.convert_to_tensor(y_pred), tf.convert_to_tensor(y_true)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    predicted = tf.cast(y_pred > tf.cast(threshold, y_pred.dtype), y_true.dtype)
    return tf.cast(tf.equal(y_true, predicted), backend.floatx())


def _argmax_matches(labels: Any, y_pred: Any) -> tf.Tensor:
    shape = labels.shape
    squeeze = labels.shape.rank == y_pred.shape.rank and labels.shape[-1] == 1
    if squeeze:
        labels = tf.squeeze(labels, -1)
    predicted = tf.cast(tf.argmax(y_pred, axis=-1), labels.dtype)
    matches = tf.cast(tf.equal(labels, predicted), backend.floatx())
    if squeeze:
        matches = tf.reshape(matches, shape)
    if matches.shape.rank > 1 and matches.shape[-1] == 1:
        matches = tf.squeeze(matches, -1)
    return matches


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> tf.Tensor:
    """1.0 where the integer label `y_true` is the arg max of the scores `y_pred`, else 0.0."""
    y_pred = tf.convert_to_tensor(y_pred)
    return _argmax_matches(tf.cast(y_true, y_pred.dtype), y_pred)


def categorical_accuracy(y_true: Any, y_pred: Any) -> tf.Tensor:
    """1.0 where the one-hot `y_true` and the scores `y_pred` have the same arg max, else 0.0."""
    y_pred = tf.convert_to_tensor(y_pred)
    return _argmax_matches(tf.cast(tf.argmax(y_true, axis=-1), y_pred.dtype), y_pred)


def _in_top_k(labels: Any, y_pred: Any, k: int) -> tf.Tensor:
    shape = labels.shape
    if y_pred.shape.rank > 2:
        y_pred = tf.reshape(y_pred, [-1, y_pred.shape[-1]])
    flat = labels.shape.rank > 1
    if flat:
        labels = tf.reshape(labels, [-1])
    matches = tf.cast(tf.math.in_top_k(tf.cast(labels, tf.int32), y_pred, k), backend.floatx())
    return tf.reshape(matches, shape) if flat else matches


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> tf.Tensor:
    """1.0 where the one-hot label's class is among the k highest scores."""
    y_pred = tf.convert_to_tensor(y_pred)
    return _in_top_k(tf.argmax(tf.cast(y_true, y_pred.dtype), axis=-1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5, from_sorted_ids: bool = False):
    """1.0 where the integer label is among the k highest scores (or, `from_sorted_ids`, among the first k
    ids of `y_pred`)."""
    y_pred = tf.convert_to_tensor(y_pred)
    if not from_sorted_ids:
        return _in_top_k(tf.cast(y_true, tf.int32), y_pred, k)
    y_true = tf.cast(y_true, y_pred.dtype)
    return tf.cast(tf.reduce_any(tf.equal(tf.reshape(y_true, [-1, 1]), y_pred[:, :k]), axis=1), backend.floatx())


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> tf.Tensor:
    return -F.cosine_similarity(y_true, y_pred, axis)


def _wrapper(class_name: str, fn: Callable, default_name: str, **defaults: Any) -> type[MeanMetricWrapper]:
    """A Keras metric class: the mean of `fn`, its options (`defaults`) given as keyword arguments."""
    def __init__(self, name: str = default_name, dtype: Any = None, **kwargs: Any):
        options = {**defaults, **{k: kwargs.pop(k) for k in list(kwargs) if k in defaults}}
        if kwargs:
            raise TypeError(f"{class_name}.__init__() got unexpected keyword arguments {sorted(kwargs)}")
        MeanMetricWrapper.__init__(self, fn, name=name, dtype=dtype, **options)
        for key, value in options.items():
            setattr(self, key, value)

    return type(class_name, (MeanMetricWrapper,), {"__init__": __init__, "__module__": __name__,
                                                    "__doc__": f"`tf.keras.metrics.{class_name}`: the mean of "
                                                               f"`{getattr(fn, '__name__', fn)}`."})


Accuracy = _wrapper("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy", threshold=0.5)
CategoricalAccuracy = _wrapper("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy")
_TopK = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy, "top_k_categorical_accuracy", k=5)
_SparseTopK = _wrapper("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                       "sparse_top_k_categorical_accuracy", k=5, from_sorted_ids=False)


class TopKCategoricalAccuracy(_TopK):
    """How often the one-hot label's class is among the `k` highest scores."""

    def __init__(self, k: int = 5, name: str = "top_k_categorical_accuracy", dtype: Any = None):
        super().__init__(name=name, dtype=dtype, k=k)


class SparseTopKCategoricalAccuracy(_SparseTopK):
    """How often the integer label is among the `k` highest scores."""

    def __init__(self, k: int = 5, name: str = "sparse_top_k_categorical_accuracy", dtype: Any = None,
                 from_sorted_ids: bool = False):
        super().__init__(name=name, dtype=dtype, k=k, from_sorted_ids=from_sorted_ids)


MeanSquaredError = _wrapper("MeanSquaredError", F.mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", F.mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _wrapper("MeanAbsolutePercentageError", F.mean_absolute_percentage_error,
                                       "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper("MeanSquaredLogarithmicError", F.mean_squared_logarithmic_error,
                                       "mean_squared_logarithmic_error")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity", axis=-1)
LogCoshError = _wrapper("LogCoshError", F.log_cosh, "logcosh")
Hinge = _wrapper("Hinge", F.hinge, "hinge")
SquaredHinge = _wrapper("SquaredHinge", F.squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper("CategoricalHinge", F.categorical_hinge, "categorical_hinge")
KLDivergence = _wrapper("KLDivergence", F.kl_divergence, "kl_divergence")
Poisson = _wrapper("Poisson", F.poisson, "poisson")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", F.binary_crossentropy, "binary_crossentropy",
                              from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", F.categorical_crossentropy,
                                   "categorical_crossentropy", from_logits=False, label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper("SparseCategoricalCrossentropy", F.sparse_categorical_crossentropy,
                                         "sparse_categorical_crossentropy", from_logits=False, ignore_class=None,
                                         axis=-1)


class RootMeanSquaredError(Mean):
    """The square root of the (weighted) mean squared error over every example seen."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None):
        super().__init__(name, dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = squeeze_or_expand_to_same_rank(tf.cast(y_true, self.dtype), tf.cast(y_pred, self.dtype))
        super().update_state(tf.square(y_pred - y_true), sample_weight)

    def result(self) -> tf.Tensor:
        return tf.sqrt(super().result())


# the functions tf.keras.metrics exports (the loss functions among them)
from tapejax.keras.loss_functions import (KLD, MAE, MAPE, MSE, MSLE, binary_crossentropy,  # noqa: E402,F401
                                          binary_focal_crossentropy, categorical_crossentropy,
                                          categorical_focal_crossentropy, categorical_hinge, hinge, huber, kld,
                                          kullback_leibler_divergence, logcosh, mae, mape, mse, msle, poisson,
                                          sparse_categorical_crossentropy, squared_hinge)
from tapejax.keras.confusion_metrics import (AUC, FalseNegatives, FalsePositives, MeanIoU,  # noqa: E402,F401
                                             Precision, Recall, TrueNegatives, TruePositives)

_BY_NAME: dict[str, Any] = {
    "accuracy": accuracy, "acc": accuracy, "binary_accuracy": binary_accuracy,
    "categorical_accuracy": categorical_accuracy, "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    "mse": F.mse, "MSE": F.mse, "mean_squared_error": F.mse, "mae": F.mae, "MAE": F.mae,
    "mean_absolute_error": F.mae, "mape": F.mape, "MAPE": F.mape, "mean_absolute_percentage_error": F.mape,
    "msle": F.msle, "MSLE": F.msle, "mean_squared_logarithmic_error": F.msle, "hinge": F.hinge,
    "squared_hinge": F.squared_hinge, "categorical_hinge": F.categorical_hinge, "kld": F.kld, "KLD": F.kld,
    "kl_divergence": F.kld, "poisson": F.poisson, "logcosh": F.log_cosh, "huber": F.huber,
    "binary_crossentropy": F.binary_crossentropy, "categorical_crossentropy": F.categorical_crossentropy,
    "sparse_categorical_crossentropy": F.sparse_categorical_crossentropy,
}
_CLASSES = {cls.__name__: cls for cls in (
    Mean, Sum, MeanMetricWrapper, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
    TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError,
    MeanAbsolutePercentageError, MeanSquaredLogarithmicError, CosineSimilarity, LogCoshError, Hinge, SquaredHinge,
    CategoricalHinge, KLDivergence, Poisson, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, RootMeanSquaredError, AUC, Precision, Recall, MeanIoU, TruePositives,
    TrueNegatives, FalsePositives, FalseNegatives)}


def get(identifier: Any) -> Any:
    """A metric from a name ('mae', 'AUC'), a Metric or a function; a class name gives a new instance."""
    if isinstance(identifier, Metric) or identifier is None:
        return identifier
    if isinstance(identifier, str):
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
        if identifier in _BY_NAME:
            return _BY_NAME[identifier]
        raise ValueError(f"Could not interpret metric identifier: {identifier}")
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret metric identifier: {identifier}")


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.metrics")
