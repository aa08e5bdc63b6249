"""tf.keras.datasets.cifar10: 50,000 training and 10,000 test 32x32 colour images in 10 classes."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tapejax.keras import backend
from tapejax.keras.datasets import _common

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
FILE_HASH = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"


def load_data() -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`: uint8 images (n, 32, 32, 3) (channels first under
    `image_data_format() == "channels_first"`) and uint8 labels (n, 1), from the archive Keras downloads,
    extracted in its cache as `datasets/cifar-10-batches-py-target/cifar-10-batches-py/`.

    Differences from TensorFlow: Keras expects 10,000 images in each of the five training batches; tapejax
    takes the batches as they are."""
    root = _common.get_file(fname="cifar-10-batches-py-target", origin=ORIGIN, extract=True, file_hash=FILE_HASH)
    root = os.path.join(root, "cifar-10-batches-py")
    batches = [_common.load_pickled_batch(os.path.join(root, f"data_batch_{i}")) for i in range(1, 6)]
    x_train = np.concatenate([x for x, _ in batches]).astype("uint8")
    y_train = np.concatenate([np.asarray(y, dtype="uint8").reshape(-1) for _, y in batches])
    x_test, y_test = _common.load_pickled_batch(os.path.join(root, "test_batch"))
    y_train = y_train.reshape(len(y_train), 1)
    y_test = np.reshape(y_test, (len(y_test), 1)).astype(y_train.dtype)
    x_test = x_test.astype(x_train.dtype)
    if backend.image_data_format() == "channels_last":
        x_train, x_test = x_train.transpose(0, 2, 3, 1), x_test.transpose(0, 2, 3, 1)
    return (x_train, y_train), (x_test, y_test)
