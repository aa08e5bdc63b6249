"""`Model.compiled_loss` and `Model.compiled_metrics`: the Keras 2 names that TF 2.21's Keras 3 still serves, so
that a custom `train_step` written for Keras 2 runs.

Keras 3 keeps them as deprecated shims with their own semantics, matched here: `compiled_loss(y, y_pred,
sample_weight, regularization_losses)` is `compute_loss(x=None, y, y_pred, sample_weight)` (the layers' losses
are added whatever `regularization_losses` says), and `compiled_metrics.update_state(y, y_pred, sample_weight)`
updates every metric of `model.metrics`, where each `Mean` metric, the loss tracker included, is given `y_pred`
as its values (so the "loss" a Keras-2 style step reports is the mean prediction, as in Keras 3). Both warn
that they are deprecated on each call.
"""

from __future__ import annotations

import warnings
from typing import Any


class _CompiledMetrics:
    """What `model.compiled_metrics` returns: `update_state(y, y_pred, sample_weight=None)` (returns None)."""

    def __init__(self, model: Any):
        self._model = model

    def update_state(self, y: Any, y_pred: Any, sample_weight: Any = None) -> None:
        from tapejax.keras.metrics import Mean

        warnings.warn("`model.compiled_metrics()` is deprecated. Instead, use e.g.:\n```\nfor metric in "
                      "self.metrics:\n    metric.update_state(y, y_pred)\n```\n", stacklevel=2)
        for metric in self._model.metrics:
            if isinstance(metric, Mean):
                metric.update_state(y_pred, sample_weight=sample_weight)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)


class Keras2Names:
    """The Keras 2 attributes of a Model (mixed into `Trainer`)."""

    def compiled_loss(self, y: Any, y_pred: Any, sample_weight: Any = None, regularization_losses: Any = None) -> Any:
        """Deprecated (Keras 3 warns): `self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=...)`."""
        warnings.warn("`model.compiled_loss()` is deprecated. Instead, use "
                      "`model.compute_loss(x, y, y_pred, sample_weight, training)`.", stacklevel=2)
        return self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=sample_weight)

    @property
    def compiled_metrics(self) -> _CompiledMetrics:
        """Deprecated (Keras 3 warns on `update_state`): an object whose `update_state(y, y_pred,
        sample_weight)` updates every metric of `self.metrics` (see the module docstring)."""
        return _CompiledMetrics(self)
