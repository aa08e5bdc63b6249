"""Layer methods of Keras 3 that programs call and that `Layer` gets from here: `add_variable` (Keras 3's
positional order), `metrics`, `add_metric` (which Keras 3 removed, with its message), and `trainable` (set on the
sublayers too).

>>> import tapejax as tf
>>> layer = tf.keras.layers.Layer()
>>> layer.add_variable((2,), "ones", name="w").numpy()
array([1., 1.], dtype=float32)
"""

from __future__ import annotations

from typing import Any


class LayerNames:
    """Mixed into `tf.keras.layers.Layer`."""

    @property
    def trainable(self) -> bool:
        """Whether the layer's weights are trained (`trainable_weights`); settable, and as in Keras 3 setting it
        sets it on every sublayer too: in a frozen model, a BatchNormalization called with `training=True`
        normalises by its moving statistics and leaves them as they are."""
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        self._trainable = bool(value)
        for layer in self._sublayers():
            layer.trainable = value

    def add_variable(self, shape: Any, initializer: Any, dtype: Any = None, trainable: bool = True,
                     autocast: bool = True, regularizer: Any = None, constraint: Any = None,
                     name: str | None = None) -> Any:
        """Keras 3's `add_variable(shape, initializer, dtype, trainable, autocast, regularizer, constraint, name)`:
        `add_weight` with these arguments."""
        return self.add_weight(shape=shape, initializer=initializer, dtype=dtype, trainable=trainable,
                               autocast=autocast, regularizer=regularizer, constraint=constraint, name=name)

    @property
    def metrics(self) -> list[Any]:
        """The metrics this layer holds in its attributes (in assignment order), then its sublayers' metrics."""
        from tapejax.keras.metrics import Metric

        found: list[Any] = []
        for value in vars(self).values():
            for item in value if isinstance(value, list | tuple) else [value]:
                if isinstance(item, Metric) and not any(item is m for m in found):
                    found.append(item)
        for layer in self._sublayers():
            found.extend(layer.metrics)
        return found

    def add_metric(self, *args: Any, **kwargs: Any) -> None:
        """Removed in Keras 3: raises its NotImplementedError, which says what to do instead."""
        raise NotImplementedError("Layer `add_metric()` method is deprecated. Add your metric in "
                                  "`Model.compile(metrics=[...])`, or create metric trackers in init() or build() "
                                  "when subclassing the layer or model, then call `metric.update_state()` whenever "
                                  "necessary.")
