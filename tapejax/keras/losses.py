"""tf.keras.losses: the loss classes (per-example losses reduced over the batch) and functions of Keras 3.

A `Loss` converts `y_true` and `y_pred` to its dtype (`floatx()`), computes one loss per example with `call`,
weights it by `sample_weight` (aligned to the losses' rank as Keras aligns it) and reduces it.

>>> import tapejax as tf
>>> loss = tf.keras.losses.MeanSquaredError()
>>> float(loss([[0.], [1.]], [[1.], [1.]]))
0.5
>>> tf.keras.losses.get("mse") is tf.keras.losses.mean_squared_error
True

Differences from TensorFlow: `CTC` and `Circle` (and their functions) raise NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tapejax as tf
from tapejax._src.context import CONTEXT
from tapejax.keras import backend, distribution
from tapejax.keras import loss_functions as F
from tapejax.keras.layers import _snake_case
from tapejax.keras.loss_functions import (MAE, MAPE, MSE, MSLE, KLD, binary_crossentropy,  # noqa: F401
                                          binary_focal_crossentropy, categorical_crossentropy,
                                          categorical_focal_crossentropy, categorical_generalized_cross_entropy,
                                          categorical_hinge, cosine_similarity, dice, hinge, huber, kl_divergence,
                                          kld, kullback_leibler_divergence, log_cosh, logcosh, mae, mape,
                                          mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                                          mean_squared_logarithmic_error, mse, msle, poisson,
                                          sparse_categorical_crossentropy, squared_hinge, tversky)

EPSILON = 1e-7  # Keras's backend epsilon (kept for code that imported it; see backend.epsilon())

# Keras 3's reductions, and the Keras 2 name "auto" that tf.keras.losses.Reduction.AUTO still gives.
_REDUCTIONS = {"sum_over_batch_size": "sum_over_batch_size", "mean": "sum_over_batch_size",
               "auto": "sum_over_batch_size", "sum": "sum", "none": "none",
               "mean_with_sample_weight": "mean_with_sample_weight"}


class Loss:
    """`loss(y_true, y_pred, sample_weight=None)`: the per-example loss of `call`, weighted and reduced.

    Args:
      reduction: "sum_over_batch_size" (the mean over examples, Keras's default; "mean" and `Reduction.AUTO` are
        the same), "sum", "none" (or None), or "mean_with_sample_weight" (the weighted sum over the sum of the
        weights).
      name: the loss's name (its class name in snake case by default).
      dtype: the dtype it computes in (`floatx()` by default).
    """

    def __init__(self, name: str | None = None, reduction: str | None = "sum_over_batch_size", dtype: Any = None):
        if reduction not in (*_REDUCTIONS, None):
            raise ValueError("Invalid value for argument `reduction`. Expected one of {'sum_over_batch_size', "
                             "'sum', None, 'none', 'mean', 'mean_with_sample_weight'}. Received: "
                             f"reduction={reduction!r}")
        self.reduction = _REDUCTIONS[reduction] if reduction is not None else "none"
        self.name = name or _snake_case(type(self).__name__)
        self.dtype = tf.as_dtype(dtype or backend.floatx()).name

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define call(y_true, y_pred).")

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = _as(y_pred, self.dtype)
        y_true = _as(y_true, self.dtype)
        losses = _as(self.call(y_true, y_pred), self.dtype)
        return reduce_weighted_values(losses, sample_weight, self.reduction)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Loss:
        return cls(**config)


def _as(x: Any, dtype: Any) -> Any:
    """x as a tensor of dtype: the same object when it already is one (so its cached logits are found)."""
    if isinstance(x, tf.Tensor) and x.dtype == dtype:
        return x
    x = tf.convert_to_tensor(x)
    return x if x.dtype == dtype else tf.cast(x, dtype)


def reduce_weighted_values(values: Any, sample_weight: Any = None, reduction: str = "sum_over_batch_size") -> Any:
    """Keras's reduction: weights aligned to the losses' rank, then the sum, divided as `reduction` says."""
    if sample_weight is not None:
        sample_weight = _as(sample_weight, values.dtype)
        values, sample_weight = F.squeeze_or_expand_to_same_rank(values, sample_weight)
        values = values * sample_weight
    if reduction == "none" or values.shape.rank == 0 or (tuple(values.shape) == (0,) and not _in_replicas()):
        return values
    total = tf.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = tf.reduce_sum(sample_weight)
    else:
        divisor = tf.cast(tf.size(values), values.dtype)
    # under a strategy of several replicas, Keras divides by them too: the optimizer sums their gradients
    return distribution.scale_loss(tf.math.divide_no_nan(total, divisor))


def _in_replicas() -> bool:
    """Whether this runs for one of several replicas (`strategy.run`): there an empty batch (a partial batch's
    last replicas) is reduced to 0, as in TF, whose replicas' batch size is unknown (None) when the step is traced;
    Keras's shortcut that returns an empty loss as it is only fires on a known size of 0."""
    context = CONTEXT.replica
    return context is not None and context.num_replicas_in_sync > 1


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


class LossFunctionWrapper(Loss):
    """A loss from a function `fn(y_true, y_pred, **kwargs)`; `y_true` and `y_pred` are first aligned in rank."""

    def __init__(self, fn: Callable, reduction: str | None = "sum_over_batch_size", name: str | None = None,
                 dtype: Any = None, **kwargs: Any):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true: Any, y_pred: Any) -> Any:
        y_true, y_pred = F.squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._fn_kwargs}

    def __repr__(self) -> str:
        return f"<LossFunctionWrapper({self.fn}, kwargs={self._fn_kwargs})>"


def _loss_class(class_name: str, fn: Callable, default_name: str, **defaults: Any) -> type[LossFunctionWrapper]:
    """A Keras loss class: `fn` with its options (`defaults`) as keyword arguments, as Keras declares each."""
    option_names = tuple(defaults)

    def __init__(self, *args: Any, reduction: str | None = "sum_over_batch_size", name: str | None = default_name,
                 dtype: Any = None, **kwargs: Any):
        options = dict(defaults)
        for key, value in zip(option_names, args):  # the options may be given by position, in Keras's order
            options[key] = value
        for key in list(kwargs):
            if key in options:
                options[key] = kwargs.pop(key)
        if kwargs:
            raise TypeError(f"{class_name}.__init__() got unexpected keyword arguments {sorted(kwargs)}")
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype, **options)
        for key, value in options.items():
            setattr(self, key, value)

    doc = f"`tf.keras.losses.{class_name}`: `{fn.__name__}` reduced over the batch."
    return type(class_name, (LossFunctionWrapper,), {"__init__": __init__, "__doc__": doc,
                                                      "__module__": __name__})


MeanSquaredError = _loss_class("MeanSquaredError", mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _loss_class("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = _loss_class("MeanAbsolutePercentageError", mean_absolute_percentage_error,
                                          "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _loss_class("MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
                                          "mean_squared_logarithmic_error")
CosineSimilarity = _loss_class("CosineSimilarity", cosine_similarity, "cosine_similarity", axis=-1)
Huber = _loss_class("Huber", huber, "huber_loss", delta=1.0)
LogCosh = _loss_class("LogCosh", log_cosh, "log_cosh")
Hinge = _loss_class("Hinge", hinge, "hinge")
SquaredHinge = _loss_class("SquaredHinge", squared_hinge, "squared_hinge")
CategoricalHinge = _loss_class("CategoricalHinge", categorical_hinge, "categorical_hinge")
KLDivergence = _loss_class("KLDivergence", kl_divergence, "kl_divergence")
Poisson = _loss_class("Poisson", poisson, "poisson")
BinaryCrossentropy = _loss_class("BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
                                 from_logits=False, label_smoothing=0.0, axis=-1)
BinaryFocalCrossentropy = _loss_class("BinaryFocalCrossentropy", binary_focal_crossentropy,
                                      "binary_focal_crossentropy", apply_class_balancing=False, alpha=0.25,
                                      gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy", categorical_crossentropy,
                                      "categorical_crossentropy", from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalFocalCrossentropy = _loss_class("CategoricalFocalCrossentropy", categorical_focal_crossentropy,
                                           "categorical_focal_crossentropy", alpha=0.25, gamma=2.0,
                                           from_logits=False, label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _loss_class("SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
                                            "sparse_categorical_crossentropy", from_logits=False,
                                            ignore_class=None, axis=-1)
Dice = _loss_class("Dice", dice, "dice", axis=None)
Tversky = _loss_class("Tversky", tversky, "tversky", alpha=0.5, beta=0.5, axis=None)
CategoricalGeneralizedCrossEntropy = _loss_class("CategoricalGeneralizedCrossEntropy",
                                                 categorical_generalized_cross_entropy,
                                                 "categorical_generalized_cross_entropy", q=0.5)


def _sparse_call(self: Any, y_true: Any, y_pred: Any) -> Any:
    return self.fn(y_true, y_pred, **self._fn_kwargs)  # Keras aligns no ranks for sparse labels


SparseCategoricalCrossentropy.call = _sparse_call


def _not_implemented(name: str) -> Any:
    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"tf.keras.losses.{name} is not implemented in tapejax.")
    unavailable.__name__ = name
    return unavailable


CTC, ctc, Circle, circle = (_not_implemented(n) for n in ("CTC", "ctc", "Circle", "circle"))

_BY_NAME: dict[str, Any] = {
    name: fn for name, fn in vars(F).items()
    if callable(fn) and not name.startswith("_") and name not in ("squeeze_or_expand_to_same_rank", "l2_normalize")
    and getattr(fn, "__module__", None) == F.__name__}
_BY_NAME.update({cls.__name__: cls for cls in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
    CosineSimilarity, Huber, LogCosh, Hinge, SquaredHinge, CategoricalHinge, KLDivergence, Poisson,
    BinaryCrossentropy, BinaryFocalCrossentropy, CategoricalCrossentropy, CategoricalFocalCrossentropy,
    SparseCategoricalCrossentropy, Dice, Tversky, CategoricalGeneralizedCrossEntropy)})


def get(identifier: Any) -> Any:
    """A loss from its name ('mse', 'categorical_crossentropy', 'CategoricalCrossentropy'), a config dict, a
    Loss or a function; None gives None. A class name gives an instance with the default options."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, dict):
        return _BY_NAME[identifier["class_name"]](**identifier.get("config", {}))
    if isinstance(identifier, str):
        found = _BY_NAME.get(identifier)
        if found is None:
            raise ValueError(f"Could not interpret loss identifier: {identifier}")
        return found() if isinstance(found, type) else found
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier}")


def serialize(loss: Any) -> Any:
    if isinstance(loss, Loss):
        return {"module": "keras.losses", "class_name": type(loss).__name__, "config": loss.get_config(),
                "registered_name": None}
    return getattr(loss, "__name__", loss)


def deserialize(name: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    if isinstance(name, str) and custom_objects and name in custom_objects:
        return custom_objects[name]
    return get(name)


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.losses")
