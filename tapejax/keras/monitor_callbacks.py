"""The tf.keras.callbacks that watch the logs: EarlyStopping, ModelCheckpoint, LearningRateScheduler,
ReduceLROnPlateau, CSVLogger, TerminateOnNaN and TensorBoard (exported by `tapejax.keras.callbacks`)."""

from __future__ import annotations

import csv
import math
import os
import warnings
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.callbacks import Callback


def _monitor_op(mode: str, monitor: str) -> Any:
    if mode == "min" or (mode == "auto" and not any(k in monitor for k in ("acc", "auc", "precision", "recall"))):
        return np.less
    return np.greater


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by more than `min_delta` for `patience` epochs;
    `restore_best_weights` puts back the best epoch's weights, `start_from_epoch` waits before watching."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor, self.patience, self.verbose, self.baseline = monitor, patience, verbose, baseline
        self.min_delta, self.mode = abs(min_delta), mode
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self.monitor_op = None

    def on_train_begin(self, logs=None):
        self.monitor_op = _monitor_op(self.mode, self.monitor)
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self.best = np.inf if self.monitor_op is np.less else -np.inf

    def _improved(self, value, reference):
        delta = -self.min_delta if self.monitor_op is np.less else self.min_delta
        return reference is None or self.monitor_op(value - delta, reference)

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                          f"Available metrics are: {','.join(logs or {})}", stacklevel=2)
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._improved(value, self.best):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improved(value, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        return (logs or {}).get(self.monitor)


class ModelCheckpoint(Callback):
    """Saves the model after each epoch to `filepath`, formatted with `epoch` and the logs
    (`"w_{epoch:02d}_{val_loss:.2f}.weights.h5"`): its weights (`save_weights_only=True`: a `.weights.h5` file)
    or the whole model (a `.keras` file), both in Keras 3's formats, which real Keras reads
    (tapejax/keras/saving_weights.py, saving_archive.py). With `save_best_only`, only when `monitor` improves
    (`mode` "min", "max", or "auto": max for accuracies, AUC, precision and recall), starting from
    `initial_value_threshold`.

    Differences from TensorFlow: `save_freq` must be "epoch" (a number of batches is not implemented).
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        if save_freq != "epoch":
            raise NotImplementedError("ModelCheckpoint(save_freq=<int>) is not implemented in tapejax.")
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only, self.save_freq = save_best_only, save_weights_only, save_freq
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"ModelCheckpoint mode '{mode}' is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        self.monitor_op = _monitor_op(mode, monitor)
        self.best = initial_value_threshold
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must "
                             f"end in `.weights.h5` (Keras weights format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith(".keras"):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format). Received: "
                             f"filepath={self.filepath}")

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if not self._should_save(epoch, logs, path):
            return
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {path}")

    def _should_save(self, epoch, logs, path):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {path}")
            return True
        value = logs.get(self.monitor)
        if value is None:  # Keras 3 warns, then saves
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self.best is None or self.monitor_op(value, self.best):
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to {value:.5f}, saving model "
                      f"to {path}")
            self.best = value
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at each epoch's start to `schedule(epoch, lr)` (or `schedule(epoch)`)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            lr = self.schedule(epoch, float(optimizer.learning_rate))
        except TypeError:  # a schedule of the epoch alone, as Keras allows
            lr = self.schedule(epoch)
        if not isinstance(lr, float | int | np.floating | np.integer | tf.Tensor):
            raise ValueError(f'The output of the "schedule" function should be a float. Got: {lr}')
        optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(lr)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` has not improved (by `min_delta`) for `patience`
    epochs, waiting `cooldown` epochs after each cut, never below `min_lr`."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.monitor, self.factor, self.patience, self.verbose = monitor, factor, patience, verbose
        self.min_delta, self.cooldown, self.min_lr, self.mode = min_delta, cooldown, min_lr, mode
        self.wait, self.cooldown_counter = 0, 0
        self._reset()

    def _reset(self):
        less = self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor)
        self.monitor_op = (lambda a, b: np.less(a, b - self.min_delta)) if less else \
            (lambda a, b: np.greater(a, b + self.min_delta))
        self.best = np.inf if less else -np.inf
        self.wait, self.cooldown_counter = 0, 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}.", stacklevel=2)
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best, self.wait = current, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(optimizer.learning_rate)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    optimizer.learning_rate = new
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter, self.wait = self.cooldown, 0


class CSVLogger(Callback):
    """Writes each epoch's logs as a CSV row (`epoch` first, then the keys sorted) to `filename`."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self.keys, self._file, self._writer = None, None, None

    def on_train_begin(self, logs=None):
        existed = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename) > 0
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._append_header = not existed

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
        if self._writer is None:
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch", *self.keys], delimiter=self.sep,
                                          lineterminator="\n")
            if self._append_header:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update((k, logs.get(k, "NA")) for k in self.keys)
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
        self._file, self._writer = None, None


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class TensorBoard(Callback):
    """Writes each epoch's logs as scalars (`epoch_loss`, ...) to `log_dir/train` and `log_dir/validation`
    (the `val_` logs) with `tf.summary`, as Keras's TensorBoard callback names them.

    Differences from TensorFlow: only the epoch scalars (and, with `update_freq="batch"` or an int, the
    `batch_*` scalars) are written; histograms, images, graphs and profiles are not.
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        self.log_dir, self.update_freq = os.fspath(log_dir), update_freq
        self._writers: dict[str, Any] = {}
        self._step = 0

    def _writer(self, kind):
        if kind not in self._writers:
            self._writers[kind] = tf.summary.create_file_writer(os.path.join(self.log_dir, kind))
        return self._writers[kind]

    def _wants_batch_logs(self):
        return self.update_freq != "epoch"

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1
        every = 1 if self.update_freq == "batch" else self.update_freq
        if isinstance(every, int) and self._step % every == 0:
            with self._writer("train").as_default():
                for key, value in (logs or {}).items():
                    tf.summary.scalar(f"batch_{key}", value, step=self._step)

    def on_epoch_end(self, epoch, logs=None):
        for kind, prefix in (("train", ""), ("validation", "val_")):
            items = {k[len(prefix):]: v for k, v in (logs or {}).items()
                     if (k.startswith("val_") if prefix else not k.startswith("val_"))}
            if items:
                with self._writer(kind).as_default():
                    for key, value in items.items():
                        tf.summary.scalar(f"epoch_{key}", value, step=epoch)
                self._writer(kind).flush()

    def on_train_end(self, logs=None):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}
