"""tf.keras.datasets.boston_housing: 506 samples of 13 features and a house price, split 80/20."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapejax.keras.datasets import _common

FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path: str = "boston_housing.npz", test_split: float = 0.2,
              seed: int = 113) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)` (float64), shuffled with Keras's seed, the last `test_split` kept
    for testing."""
    _common.check_split(test_split)
    with np.load(_common.fetch(path, "boston_housing.npz", FILE_HASH), allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    return _common.shuffled_split(x, y, test_split, seed)
