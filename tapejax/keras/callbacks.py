"""tf.keras.callbacks: the hooks `fit`, `evaluate` and `predict` call, with Keras 3's behaviour.

`CallbackList` hands each callback the logs as Python floats, keys sorted (nested dicts flattened), as Keras 3
does. A batch's logs are converted (a device sync) only when a callback other than the progress bar and
`History` overrides a batch hook; the progress bar reads them only when it redraws.

>>> import tapejax as tf
>>> seen = []
>>> callback = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch))
>>> model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
>>> model.compile("sgd", "mse")
>>> _ = model.fit(tf.ones([4, 2]), tf.ones([4, 1]), epochs=2, verbose=0, callbacks=[callback])
>>> seen
[0, 1]
"""

from __future__ import annotations

import time
from typing import Any

import jax
import numpy as np

from tapejax.keras.utils import Progbar


def pythonify_logs(logs: Any, sort: bool = True) -> dict[str, Any]:
    """The logs as Keras 3 passes them: keys sorted (unless `sort` is False), nested dicts flattened, tensors as
    Python floats."""
    result: dict[str, Any] = {}
    items = (logs or {}).items()
    for key, value in sorted(items) if sort else items:
        if isinstance(value, dict):
            result.update(pythonify_logs(value, sort))
            continue
        try:
            value = float(np.asarray(value))
        except (TypeError, ValueError):
            pass
        result[key] = value
    return result


class Callback:
    """The base class: override any of the `on_*` hooks. `fit`, `evaluate` and `predict` call `set_model` and
    `set_params` first: `self.model` is then the model (None before; read-only, as in Keras 3: `set_model`
    sets it) and `self.params` the run's `{"verbose", "epochs", "steps"}` (None before)."""

    def __init__(self):
        self.validation_data = None
        self.params: dict[str, Any] | None = None
        self._model = None

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = params

    def set_model(self, model: Any) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        """The model this callback was given by `set_model` (None before)."""
        return self.__dict__.get("_model")

    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): self.on_batch_begin(batch, logs=logs)
    def on_train_batch_end(self, batch, logs=None): self.on_batch_end(batch, logs=logs)
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass
    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass


_BATCH_HOOKS = ("on_batch_end", "on_train_batch_end", "on_test_batch_end", "on_predict_batch_end")


class History(Callback):
    """Records each epoch's logs: `history.history["loss"]` is the list of epoch losses, `history.epoch` the
    epochs. `fit` returns it."""

    def __init__(self):
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: list[int] = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)
        self.model.history = self


class ProgbarLogger(Callback):
    """Prints Keras 3's progress: `Epoch 1/3` (when there are several epochs), then the bar (verbose=1) or
    one line per epoch (verbose=2). Validation inside `fit` prints nothing of its own."""

    def __init__(self):
        super().__init__()
        self.seen, self.progbar, self.target, self.verbose, self.epochs = 0, None, None, 1, 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs, self.target = params.get("epochs", 1), params.get("steps")

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _reset(self):
        self.seen = 0
        self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step", stateless_metrics=set())

    def _update(self, batch, logs):
        if self.progbar is None:
            self._reset()
        self.seen = batch + 1
        if self.verbose == 1:
            # Only the latest values are shown (every metric is "stateful" here), so they are read only on a
            # redraw: Progbar redraws at most every 0.05 s.
            bar = self.progbar
            now_due = bar._last_update == 0 or time.time() - bar._last_update >= bar.interval
            bar.update(self.seen, list(pythonify_logs(logs).items()) if now_due else None, finalize=False)

    def _finalize(self, logs):
        if self.progbar is None:
            self._reset()
        if self.target is None:
            self.target = self.progbar.target = self.seen
        # Not sorted again: a callback before this one may have added a key (ReduceLROnPlateau's learning_rate),
        # which Keras shows last.
        self.progbar.update(self.target, list(pythonify_logs(logs, sort=False).items()), finalize=True)


def _wants_batch_logs(callback: Callback) -> bool:
    """Whether a callback overrides a batch hook (on its class, or, as LambdaCallback does, on itself)."""
    if isinstance(callback, History | ProgbarLogger):
        return False
    if hasattr(callback, "_wants_batch_logs"):
        return callback._wants_batch_logs()
    return any(hook in vars(callback) or getattr(type(callback), hook) is not getattr(Callback, hook)
               for hook in _BATCH_HOOKS)


class CallbackList(Callback):
    """The callbacks of one `fit`/`evaluate`/`predict` call, with a History and a ProgbarLogger added as asked."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        super().__init__()
        # Keras flattens what it is given: one callback, or a nest of them (`fit(callbacks=EarlyStopping())`)
        self.callbacks = [c for c in jax.tree_util.tree_leaves(callbacks) if c is not None] if callbacks else []
        self._history = next((c for c in self.callbacks if isinstance(c, History)), None)
        self._progbar = next((c for c in self.callbacks if isinstance(c, ProgbarLogger)), None)
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        # Batch logs become floats (a device sync per step) only if some callback wants them.
        self._needs_batch_logs = any(_wants_batch_logs(c) for c in self.callbacks)
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def set_params(self, params):
        self.params = params
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model):
        self._model = model
        if self._history is not None:
            model.history = self._history
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, hook: str, *args: Any, logs: Any = None) -> None:
        logs = pythonify_logs(logs)
        for c in self.callbacks:
            getattr(c, hook)(*args, logs)

    def _batch(self, hook: str, batch: int, logs: Any) -> None:
        if self._needs_batch_logs:
            logs = pythonify_logs(logs)
        for c in self.callbacks:
            if isinstance(c, ProgbarLogger) or self._needs_batch_logs:
                getattr(c, hook)(batch, logs)

    def on_batch_begin(self, batch, logs=None): self._call("on_batch_begin", batch, logs=logs)
    def on_batch_end(self, batch, logs=None): self._batch("on_batch_end", batch, logs)
    def on_epoch_begin(self, epoch, logs=None): self._call("on_epoch_begin", epoch, logs=logs)
    def on_epoch_end(self, epoch, logs=None): self._call("on_epoch_end", epoch, logs=logs)
    def on_train_batch_begin(self, batch, logs=None): self._call("on_train_batch_begin", batch, logs=logs)
    def on_train_batch_end(self, batch, logs=None): self._batch("on_train_batch_end", batch, logs)
    def on_test_batch_begin(self, batch, logs=None): self._call("on_test_batch_begin", batch, logs=logs)
    def on_test_batch_end(self, batch, logs=None): self._batch("on_test_batch_end", batch, logs)
    def on_predict_batch_begin(self, batch, logs=None): self._call("on_predict_batch_begin", batch, logs=logs)
    def on_predict_batch_end(self, batch, logs=None): self._batch("on_predict_batch_end", batch, logs)
    def on_train_begin(self, logs=None): self._call("on_train_begin", logs=logs)
    def on_train_end(self, logs=None): self._call("on_train_end", logs=logs)
    def on_test_begin(self, logs=None): self._call("on_test_begin", logs=logs)
    def on_test_end(self, logs=None): self._call("on_test_end", logs=logs)
    def on_predict_begin(self, logs=None): self._call("on_predict_begin", logs=logs)
    def on_predict_end(self, logs=None): self._call("on_predict_end", logs=logs)


class LambdaCallback(Callback):
    """A callback from functions: `on_epoch_begin(epoch, logs)`, `on_train_batch_end(batch, logs)`, ...
    (any hook name, by keyword), `on_train_begin(logs)`, ..."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        hooks = dict(kwargs, on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end)
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)


# The callbacks that watch the logs (early stopping, checkpoints, learning-rate changes, CSV and TensorBoard
# logging) live in monitor_callbacks.py.
from tapejax.keras.monitor_callbacks import (CSVLogger, EarlyStopping, LearningRateScheduler,  # noqa: E402,F401
                                             ModelCheckpoint, ReduceLROnPlateau, TensorBoard, TerminateOnNaN)


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.callbacks")
