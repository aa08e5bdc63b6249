"""tf.keras.utils: `Progbar` (Keras 3's progress bar, character for character), `to_categorical`, `normalize`,
`set_random_seed`, `plot_model` (where pydot is installed), and the data helpers `fit` uses.

>>> import tapejax as tf
>>> tf.keras.utils.to_categorical([0, 2], num_classes=3)
array([[1., 0., 0.],
       [0., 0., 1.]])
"""

from __future__ import annotations

import math
import random
import sys
import time
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.data_adapter import pack_x_y_sample_weight, unpack_x_y_sample_weight  # noqa: F401


def _write(message: str) -> None:
    sys.stdout.write(message)
    sys.stdout.flush()


class Progbar:
    """Keras 3's progress bar: `update(current, values)`, `add(n, values)`.

    verbose=1 redraws one line (a bold step count, a 20-cell bar, the time, then each value as `name: 0.1234`);
    Keras redraws with backspaces and a carriage return on every POSIX system, and so does this. verbose=2
    prints one line when the bar reaches its target: `3/3 - 0s - 12ms/step - loss: 0.1234`. Values named in
    `stateful_metrics` are shown as given; the others are averaged over the steps, weighted by step counts.
    """

    def __init__(self, target: int | None, width: int = 20, verbose: int = 1, interval: float = 0.05,
                 stateful_metrics: Any = None, stateless_metrics: Any = None, unit_name: str = "step"):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError("Only one of `stateful_metrics` or `stateless_metrics` can be provided.")
        self.target, self.width, self.verbose, self.interval, self.unit_name = (target, width, verbose, interval,
                                                                                unit_name)
        self.stateful_metrics = set(stateful_metrics or ()) if stateless_metrics is None else None
        self.stateless_metrics = set(stateless_metrics) if stateless_metrics is not None else None
        self._values: dict[str, list[Any]] = {}
        self._seen_so_far = 0
        self._start = time.time()
        self._last_update = 0.0
        self._time_after_first_step: float | None = None
        self._prev_total_width = 0

    def _stateless(self, name: str) -> bool:
        if self.stateful_metrics is not None:
            return name not in self.stateful_metrics
        return name in self.stateless_metrics

    def update(self, current: int, values: Any = None, finalize: bool | None = None) -> None:
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or []:
            if self._stateless(name):
                if finalize:
                    self._values[name] = [value, 1]
                else:
                    weight = max(current - self._seen_so_far, 1)
                    total = self._values.setdefault(name, [0.0, 0])
                    total[0] += value * weight
                    total[1] += weight
            else:
                self._values[name] = [value, 1]
        self._seen_so_far = current
        now = time.time()
        per_unit = self._step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, per_unit, finalize)
        elif self.verbose == 2 and finalize and self.target:
            digits = int(math.log10(self.target)) + 1
            line = f"{current:{digits}d}/{self.target} - {now - self._start:.0f}s -{self._format_time(per_unit)}"
            _write(line + self._values_text(signed=False) + "\n")
        self._last_update = now

    def _draw(self, current: int, now: float, per_unit: float, finalize: bool) -> None:
        message = "\b" * self._prev_total_width + "\r"
        hidden = 0  # the escape codes' characters, which take no width on the screen
        if self.target:
            digits = int(math.log10(self.target)) + 1
            bar = f"\x1b[1m{current:{digits}d}/{self.target}\x1b[0m "
            hidden += 8
            done = int(self.width * current / self.target)
            if done > 0:
                bar += f"\x1b[32m{'━' * done}\x1b[0m"
                hidden += 9
            bar += f"\x1b[37m{'━' * (self.width - done)}\x1b[0m"
            hidden += 9
        else:
            bar = f"{current:7d}/Unknown"
        if self.target and not finalize:
            eta = per_unit * (self.target - current)
            if eta > 3600:
                text = f"{int(eta // 3600)}:{int((eta % 3600) // 60):02d}:{int(eta % 60):02d}"
            elif eta > 60:
                text = f"{int(eta // 60)}:{int(eta % 60):02d}"
            else:
                text = f"{int(eta)}s"
            info = f" \x1b[1m{text}\x1b[0m"
        else:
            info = f" \x1b[1m{now - self._start:.0f}s\x1b[0m"
        hidden += 8
        info += self._format_time(per_unit) + self._values_text(signed=True)
        total_width = len(bar) + len(info) - hidden
        message += bar + info
        if self._prev_total_width > total_width:
            message += " " * (self._prev_total_width - total_width)
        if finalize:
            message += "\n"
        _write(message)
        self._prev_total_width = total_width

    def _values_text(self, signed: bool) -> str:
        text = ""
        for name, (total, count) in self._values.items():
            average = float(np.mean(total)) / max(1, count)
            # Keras's verbose=1 line tests abs(value), its verbose=2 line the value itself
            small = abs(average) <= 1e-3 if signed else average <= 1e-3
            text += f" - {name}: {average:.4e}" if small else f" - {name}: {average:.4f}"
        return text

    def add(self, n: int, values: Any = None) -> None:
        self.update(self._seen_so_far + n, values)

    def _format_time(self, per_unit: float) -> str:
        if per_unit >= 1 or per_unit == 0:
            return f" {per_unit:.0f}s/{self.unit_name}"
        if per_unit >= 1e-3:
            return f" {per_unit * 1000.0:.0f}ms/{self.unit_name}"
        return f" {per_unit * 1000000.0:.0f}us/{self.unit_name}"

    def _step_duration(self, current: int, now: float) -> float:
        """Seconds per step, leaving out the first step (compilation) once there are others."""
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit


def to_categorical(x: Any, num_classes: int | None = None) -> np.ndarray:
    """One-hot rows (float64, as Keras returns for NumPy input) for integer class labels; a trailing axis of 1
    is dropped first."""
    x = np.asarray(x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    num_classes = int(num_classes if num_classes is not None else x.max() + 1)
    categorical = np.zeros((x.shape[0], num_classes))
    categorical[np.arange(x.shape[0]), x] = 1
    return categorical.reshape(shape + (num_classes,))


def normalize(x: Any, axis: int = -1, order: int = 2) -> Any:
    """x divided by its `order`-norm along `axis` (NumPy in, NumPy out)."""
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def set_random_seed(seed: int) -> None:
    """Seeds Python's `random`, NumPy's global generator and `tf.random` at once, as Keras does."""
    if not isinstance(seed, int):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)


def plot_model(model: Any, to_file: str = "model.png", **kwargs: Any) -> Any:
    """Keras's `plot_model` needs pydot and graphviz; tapejax draws nothing and says which is missing."""
    try:
        import pydot  # noqa: F401
    except ImportError:
        raise ImportError("You must install pydot (`pip install pydot`) for `plot_model` to work.") from None
    raise NotImplementedError("tf.keras.utils.plot_model is not implemented in tapejax (pydot is installed, but "
                              "tapejax does not draw model graphs).")


class PyDataset:
    """`keras.utils.PyDataset`: subclass it with `__len__` (batches per epoch) and `__getitem__(index)` (a batch);
    `fit` takes it like a dataset. `workers`, `use_multiprocessing` and `max_queue_size` are accepted and ignored."""

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10):
        self.workers, self.use_multiprocessing, self.max_queue_size = workers, use_multiprocessing, max_queue_size

    def on_epoch_end(self) -> None:
        pass


Sequence = PyDataset

from tapejax.keras.file_utils import get_file as get_file  # noqa: E402
from tapejax.keras.image_utils import array_to_img as array_to_img  # noqa: E402
from tapejax.keras.image_utils import img_to_array as img_to_array  # noqa: E402
from tapejax.keras.image_utils import load_img as load_img  # noqa: E402
from tapejax.keras.image_utils import save_img as save_img  # noqa: E402


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.utils")
