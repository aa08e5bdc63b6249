"""What Keras's data sets share: where their files come from, reading them safely, and the train/test splits."""

from __future__ import annotations

import io
import pickle
import zipfile
from typing import Any

import numpy as np

from tapejax.keras.file_utils import get_file

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"

# An object array (the ragged sequences of imdb and reuters, cifar's batches) is a pickle: only the numpy names
# that rebuild arrays may be loaded from it, so a tampered file cannot run code.
_ARRAY_GLOBALS = {("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
                  ("numpy._core.multiarray", "_reconstruct")}


class ArrayUnpickler(pickle.Unpickler):
    """An unpickler that rebuilds NumPy arrays and plain Python values, and refuses every other global."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ARRAY_GLOBALS:
            raise pickle.UnpicklingError(f"Refusing to deserialize `{module}.{name}` while loading a Keras dataset. "
                                         "The file may be corrupted or malicious.")
        return super().find_class(module, name)


def _read_npy(member: io.BytesIO) -> np.ndarray:
    try:
        return np.lib.format.read_array(member, allow_pickle=False)
    except ValueError:  # an object array: its data is a pickle after the header
        member.seek(0)
        major, _ = np.lib.format.read_magic(member)
        if major == 1:
            np.lib.format.read_array_header_1_0(member)
        else:  # versions 2 and 3 share the header's layout
            np.lib.format.read_array_header_2_0(member)
        return ArrayUnpickler(member).load()


def load_npz(path: str) -> dict[str, np.ndarray]:
    """The arrays of an .npz file, object arrays included, without `np.load(allow_pickle=True)`."""
    with zipfile.ZipFile(path) as archive:
        return {name[:-4]: _read_npy(io.BytesIO(archive.read(name))) for name in archive.namelist()
                if name.endswith(".npy")}


def fetch(fname: str, origin_name: str, file_hash: str, **kwargs: Any) -> str:
    return get_file(fname=fname, origin=ORIGIN + origin_name, file_hash=file_hash, **kwargs)


def check_split(test_split: float) -> None:
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")


def shuffled_split(x: np.ndarray, y: np.ndarray, test_split: float, seed: int) -> tuple[tuple[Any, Any], ...]:
    """x and y in Keras's seeded order (NumPy's RandomState(seed).shuffle), the last `test_split` as the test set."""
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    cut = int(len(x) * (1 - test_split))
    return (np.array(x[:cut]), np.array(y[:cut])), (np.array(x[cut:]), np.array(y[cut:]))


def encode(sequences: list[list[int]], num_words: int | None, skip_top: int, oov_char: int | None) -> list[list[int]]:
    """Words outside [skip_top, num_words) become `oov_char`, or are dropped when it is None (Keras's rule;
    num_words defaults to the largest index)."""
    if not num_words:
        num_words = max(max(s) for s in sequences)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in s] for s in sequences]
    return [[w for w in s if skip_top <= w < num_words] for s in sequences]


def offset(sequences: Any, start_char: int | None, index_from: int) -> list[list[int]]:
    """Each sequence's indices shifted by `index_from`, after `start_char` when it is not None."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in s] for s in sequences]
    return [[w + index_from for w in s] for s in sequences]


def shorter_than(maxlen: int, sequences: list[Any], labels: Any) -> tuple[list[Any], list[Any]]:
    kept = [(s, label) for s, label in zip(sequences, labels) if len(s) < maxlen]
    return [s for s, _ in kept], [label for _, label in kept]


def load_pickled_batch(path: str, label_key: str = "labels") -> tuple[np.ndarray, Any]:
    """A CIFAR batch file: its images as (n, 3, 32, 32) uint8 and its labels."""
    with open(path, "rb") as f:
        batch = {k.decode("utf8"): v for k, v in ArrayUnpickler(f, encoding="bytes").load().items()}
    data = batch["data"]
    return data.reshape(data.shape[0], 3, 32, 32), batch[label_key]
