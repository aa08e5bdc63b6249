"""tf.keras.datasets.mnist: 60,000 training and 10,000 test handwritten digits, 28x28 uint8."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapejax.keras.datasets import _common

FILE_HASH = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"


def load_data(path: str = "mnist.npz") -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`: uint8 images (n, 28, 28) and uint8 labels (n,), read from
    `mnist.npz` in Keras's cache (downloaded from Keras's URL when missing)."""
    with np.load(_common.fetch(path, "mnist.npz", FILE_HASH), allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
