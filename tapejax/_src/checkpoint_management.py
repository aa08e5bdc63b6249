"""tf.train.CheckpointManager, the `checkpoint` state file, and the functions that read checkpoints.

The state file is TF's `CheckpointState` message in protobuf text format (written by hand: five fields, paths
relative to the directory), replaced atomically so that a crash never leaves it half-written.
"""

from __future__ import annotations

import codecs
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .checkpoint_bundle import DATA_SUFFIX, BundleReader
from .errors import NotFoundError

STATE_FILE = "checkpoint"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _relative(directory: str, path: str) -> str:
    return os.path.relpath(path, directory) if os.path.dirname(path) == directory else path


def update_checkpoint_state(directory: str, latest: str, paths: list[str], timestamps: list[float] | None = None,
                            last_preserved: float | None = None) -> None:
    """Writes `directory/checkpoint` (TF's CheckpointState), via a temporary file and a rename."""
    lines = [f"model_checkpoint_path: {_quoted(_relative(directory, latest))}"]
    lines += [f"all_model_checkpoint_paths: {_quoted(_relative(directory, p))}" for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in timestamps or []]
    if last_preserved is not None:
        lines.append(f"last_preserved_timestamp: {last_preserved!r}")
    target = os.path.join(directory, STATE_FILE)
    temp = f"{target}.tmp{os.getpid()}"
    with open(temp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(temp, target)


def get_checkpoint_state(directory: str, latest_filename: str | None = None) -> dict[str, list] | None:
    """The fields of `directory/checkpoint` (each a list of values, paths made absolute), or None."""
    path = os.path.join(os.fspath(directory), latest_filename or STATE_FILE)
    if not os.path.isfile(path):
        return None
    fields: dict[str, list] = {}
    with open(path) as f:
        for line in f:
            name, _, value = line.strip().partition(":")
            value = value.strip()
            if not name:
                continue
            if value.startswith('"'):
                text = codecs.escape_decode(value[1:-1].encode())[0].decode()
                fields.setdefault(name, []).append(
                    text if os.path.isabs(text) else os.path.join(os.fspath(directory), text))
            else:
                fields.setdefault(name, []).append(float(value))
    return fields


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint recorded in `checkpoint_dir/checkpoint`, or None if there is none
    (or its files are gone) (`tf.train.latest_checkpoint`)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if not state or "model_checkpoint_path" not in state:
        return None
    path = state["model_checkpoint_path"][-1]
    return path if os.path.exists(path + ".index") else None


def _remove_checkpoint(prefix: str) -> None:
    for path in (prefix + ".index", prefix + DATA_SUFFIX):
        if os.path.exists(path):
            os.remove(path)


class CheckpointManager:
    """Keeps the last `max_to_keep` checkpoints of a `tf.train.Checkpoint` in a directory
    (`tf.train.CheckpointManager`), numbered by the checkpoint's `save_counter` unless `save` is given a number,
    plus one every `keep_checkpoint_every_n_hours`; records them in the directory's `checkpoint` file.

    >>> import tapejax as tf, tempfile, os
    >>> ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    >>> manager = tf.train.CheckpointManager(ckpt, tempfile.mkdtemp(), max_to_keep=2)
    >>> [os.path.basename(manager.save()) for _ in range(3)]
    ['ckpt-1', 'ckpt-2', 'ckpt-3']
    >>> [os.path.basename(p) for p in manager.checkpoints]
    ['ckpt-2', 'ckpt-3']
    """

    def __init__(self, checkpoint: Any, directory: str, max_to_keep: int | None,
                 keep_checkpoint_every_n_hours: float | None = None, checkpoint_name: str = "ckpt",
                 step_counter: Any = None, checkpoint_interval: int | None = None,
                 init_fn: Callable[[], Any] | None = None):
        if not hasattr(checkpoint, "save_counter"):
            raise TypeError(f"Expected checkpoint to be a tf.train.Checkpoint, got {type(checkpoint).__name__}.")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_every = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter, self._checkpoint_interval = step_counter, checkpoint_interval
        self._init_fn = init_fn
        self._last_step: int | None = None
        state = get_checkpoint_state(self._directory)
        self._last_preserved = time.time()
        self._kept: dict[str, float] = {}  # path -> timestamp, oldest first: the checkpoints it may delete
        self._latest = None
        if state:  # a manager over an existing directory takes over the checkpoints recorded there
            paths = state.get("all_model_checkpoint_paths", [])
            stamps = state.get("all_model_checkpoint_timestamps", [])
            self._kept = {p: (stamps[i] if i < len(stamps) else self._last_preserved) for i, p in enumerate(paths)}
            self._last_preserved = state.get("last_preserved_timestamp", [self._last_preserved])[-1]
            self._latest = latest_checkpoint(self._directory)

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint_interval(self) -> int | None:
        return self._checkpoint_interval

    @property
    def checkpoints(self) -> list[str]:
        """The prefixes of the checkpoints it keeps, oldest first."""
        return list(self._kept)

    @property
    def latest_checkpoint(self) -> str | None:
        return self._latest

    def save(self, checkpoint_number: int | None = None, check_interval: bool = True, options: Any = None
             ) -> str | None:
        """Writes a checkpoint `<directory>/<checkpoint_name>-<number>` and deletes the ones past `max_to_keep`;
        returns its path, or None when `checkpoint_interval` steps have not passed since the last save."""
        if self._checkpoint_interval is not None and check_interval:
            step = int(np.asarray(getattr(self._step_counter, "numpy", lambda: self._step_counter)()))
            if self._last_step is not None and step < self._last_step + self._checkpoint_interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        number = int(counter.numpy()) if checkpoint_number is None else int(np.asarray(checkpoint_number))
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        self._kept.pop(path, None)  # saved again: it moves to the end of the queue
        self._kept[path] = time.time()
        self._latest = path
        self._sweep()
        update_checkpoint_state(self._directory, path, list(self._kept), list(self._kept.values()),
                                self._last_preserved)
        return path

    def _sweep(self) -> None:
        if self._max_to_keep is None:
            return
        while len(self._kept) > self._max_to_keep:
            path = next(iter(self._kept))
            stamp = self._kept.pop(path)
            if self._keep_every is not None and stamp - self._last_preserved >= self._keep_every * 3600:
                self._last_preserved = stamp  # kept for good, and no longer managed
                continue
            _remove_checkpoint(path)

    def restore_or_initialize(self) -> str | None:
        """Restores the latest checkpoint and returns its path; with none, calls `init_fn` and returns None."""
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None


# -- reading checkpoints ---------------------------------------------------------------------------------


def _prefix_of(ckpt_dir_or_file: str) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return latest
    return path


class CheckpointReader:
    """Reads the values of a checkpoint by key (what `tf.train.load_checkpoint` returns)."""

    def __init__(self, prefix: str):
        self._bundle = BundleReader(prefix)

    def has_tensor(self, key: str) -> bool:
        return key in self._bundle.entries

    def get_tensor(self, key: str) -> Any:
        """The value under `key`: a numpy array, or bytes for a string scalar."""
        if key not in self._bundle.entries:
            raise NotFoundError(None, None, f"Key {key} not found in checkpoint")
        value = self._bundle.read(key)
        if isinstance(value, list):
            return value[0] if not self._bundle.shape(key) else np.array(value, dtype=object)
        return value[()] if value.ndim == 0 else value

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {key: self._bundle.shape(key) for key in self._bundle.entries}

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        """Each key's dtype (the object graph's string dtype is `"string"`: tapejax has no string DType)."""
        from . import dtypes
        from .checkpoint_bundle import numpy_dtype

        out: dict[str, Any] = {}
        for key, entry in self._bundle.entries.items():
            np_dtype = numpy_dtype(entry.dtype)
            out[key] = "string" if np_dtype is None else dtypes.from_numpy(np_dtype)
        return out


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader of the checkpoint (or of a directory's latest checkpoint) (`tf.train.load_checkpoint`)."""
    return CheckpointReader(_prefix_of(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """The (key, shape) of every value in the checkpoint, sorted by key (`tf.train.list_variables`)."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The value under key `name` (a trailing `:0` is dropped) (`tf.train.load_variable`)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
