"""tf.keras.datasets.fashion_mnist: 60,000 training and 10,000 test 28x28 uint8 images of 10 kinds of clothing."""

from __future__ import annotations

import gzip
import os
from typing import Any

import numpy as np

from tapejax.keras.datasets import _common

FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz")


def _read(path: str, header: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), np.uint8, offset=header)


def load_data() -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`: uint8 images (n, 28, 28) and uint8 labels (n,), read from the
    four IDX files in Keras's cache directory `datasets/fashion-mnist` (Keras checks no hash for them)."""
    subdir = os.path.join("datasets", "fashion-mnist")
    paths = [_common.get_file(name, origin=_common.ORIGIN + name, cache_subdir=subdir) for name in FILES]
    y_train, y_test = _read(paths[0], 8), _read(paths[2], 8)
    x_train = _read(paths[1], 16).reshape(len(y_train), 28, 28)
    x_test = _read(paths[3], 16).reshape(len(y_test), 28, 28)
    return (x_train, y_train), (x_test, y_test)
