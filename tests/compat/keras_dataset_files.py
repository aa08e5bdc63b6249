"""Small stand-ins for Keras's data set files, written in Keras's formats and cache layout under a Keras home
(`<home>/datasets/...`), for the tests of tf.keras.datasets (the machine that runs the tests is offline)."""

from __future__ import annotations

import gzip
import io
import pathlib
import pickle
import tarfile

import numpy as np


def _datasets(home: pathlib.Path, *parts: str) -> pathlib.Path:
    path = home.joinpath("datasets", *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def mnist(home: pathlib.Path, rng: np.random.Generator, n_train: int = 12, n_test: int = 5) -> dict[str, np.ndarray]:
    arrays = {"x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
              "y_train": rng.integers(0, 10, n_train, dtype=np.uint8),
              "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
              "y_test": rng.integers(0, 10, n_test, dtype=np.uint8)}
    np.savez(_datasets(home) / "mnist.npz", **arrays)
    return arrays


def fashion_mnist(home: pathlib.Path, rng: np.random.Generator, n_train: int = 7, n_test: int = 3) -> dict:
    """The four gzipped IDX files (an 8-byte header before the labels, 16 before the images)."""
    folder = _datasets(home, "fashion-mnist")
    arrays = {"x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
              "y_train": rng.integers(0, 10, n_train, dtype=np.uint8),
              "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
              "y_test": rng.integers(0, 10, n_test, dtype=np.uint8)}
    for name, key, header in (("train-labels-idx1-ubyte.gz", "y_train", 8), ("train-images-idx3-ubyte.gz", "x_train", 16),
                              ("t10k-labels-idx1-ubyte.gz", "y_test", 8), ("t10k-images-idx3-ubyte.gz", "x_test", 16)):
        with gzip.open(folder / name, "wb") as f:
            f.write(b"\x00" * header + arrays[key].tobytes())
    return arrays


def _add(tar: tarfile.TarFile, name: str, payload: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def _batch(rng: np.random.Generator, n: int, **labels: list[int]) -> bytes:
    # Keras's CIFAR batches are pickled dicts with bytes keys; constant-ish data keeps the archive small
    data = np.repeat(rng.integers(0, 256, (n, 1), dtype=np.uint8), 3072, axis=1)
    data[:, :7] = rng.integers(0, 256, (n, 7), dtype=np.uint8)
    return pickle.dumps({b"data": data, **{k.encode(): v for k, v in labels.items()}}, protocol=4)


def cifar10(home: pathlib.Path, rng: np.random.Generator, per_batch: int = 10000, n_test: int = 10000) -> None:
    """The archive as Keras caches it: `cifar-10-batches-py-target_archive`, a .tar.gz holding
    `cifar-10-batches-py/data_batch_1..5` and `test_batch` (Keras itself needs 10,000 images per batch)."""
    with tarfile.open(_datasets(home) / "cifar-10-batches-py-target_archive", "w:gz", compresslevel=1) as tar:
        for i in range(1, 6):
            _add(tar, f"cifar-10-batches-py/data_batch_{i}",
                 _batch(rng, per_batch, labels=rng.integers(0, 10, per_batch).tolist()))
        _add(tar, "cifar-10-batches-py/test_batch", _batch(rng, n_test, labels=rng.integers(0, 10, n_test).tolist()))


def cifar100(home: pathlib.Path, rng: np.random.Generator, n_train: int = 9, n_test: int = 4) -> None:
    with tarfile.open(_datasets(home) / "cifar-100-python-target_archive", "w:gz") as tar:
        for name, n in (("train", n_train), ("test", n_test)):
            _add(tar, f"cifar-100-python/{name}", _batch(rng, n, fine_labels=rng.integers(0, 100, n).tolist(),
                                                         coarse_labels=rng.integers(0, 20, n).tolist()))


def _sequences(rng: np.random.Generator, n: int) -> np.ndarray:
    sequences = np.empty(n, dtype=object)
    for i in range(n):
        sequences[i] = rng.integers(1, 30, rng.integers(1, 12)).tolist()
    return sequences


def imdb(home: pathlib.Path, rng: np.random.Generator, n_train: int = 20, n_test: int = 15) -> None:
    np.savez(_datasets(home) / "imdb.npz", x_train=_sequences(rng, n_train), y_train=rng.integers(0, 2, n_train),
             x_test=_sequences(rng, n_test), y_test=rng.integers(0, 2, n_test))


def reuters(home: pathlib.Path, rng: np.random.Generator, n: int = 30) -> None:
    np.savez(_datasets(home) / "reuters.npz", x=_sequences(rng, n), y=rng.integers(0, 46, n))


def housing(home: pathlib.Path, rng: np.random.Generator, name: str = "boston_housing.npz", n: int = 40,
            features: int = 13) -> dict[str, np.ndarray]:
    arrays = {"x": rng.normal(size=(n, features)), "y": rng.normal(size=n)}
    np.savez(_datasets(home) / name, **arrays)
    return arrays
