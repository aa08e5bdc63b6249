"""tf.keras.datasets.california_housing: 20,640 samples of 8 features and a house value (600 in "small")."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapejax.keras.datasets import _common

FILE_HASH = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"


def load_data(version: str = "large", path: str = "california_housing.npz", test_split: float = 0.2,
              seed: int = 113) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`, the first 600 samples only for `version="small"`, shuffled with
    Keras's seed, the last `test_split` kept for testing."""
    _common.check_split(test_split)
    with np.load(_common.fetch(path, "california_housing.npz", FILE_HASH), allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    if version == "small":
        x, y = x[:600], y[:600]
    elif version != "large":
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version}")
    return _common.shuffled_split(x, y, test_split, seed)
