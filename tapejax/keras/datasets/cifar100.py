"""tf.keras.datasets.cifar100: 50,000 training and 10,000 test 32x32 colour images in 100 (or 20) classes."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tapejax.keras import backend
from tapejax.keras.datasets import _common

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
FILE_HASH = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"


def load_data(label_mode: str = "fine") -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`: uint8 images (n, 32, 32, 3) and int64 labels (n, 1), "fine"
    (100 classes) or "coarse" (20 superclasses), from the archive Keras downloads, extracted in its cache as
    `datasets/cifar-100-python-target/cifar-100-python/`."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    root = _common.get_file(fname="cifar-100-python-target", origin=ORIGIN, extract=True, file_hash=FILE_HASH)
    root = os.path.join(root, "cifar-100-python")
    x_train, y_train = _common.load_pickled_batch(os.path.join(root, "train"), f"{label_mode}_labels")
    x_test, y_test = _common.load_pickled_batch(os.path.join(root, "test"), f"{label_mode}_labels")
    y_train, y_test = np.reshape(y_train, (len(y_train), 1)), np.reshape(y_test, (len(y_test), 1))
    if backend.image_data_format() == "channels_last":
        x_train, x_test = x_train.transpose(0, 2, 3, 1), x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test, y_test)
