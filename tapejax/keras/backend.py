"""tf.keras.backend: Keras 3's global settings (`floatx`, `epsilon`, `image_data_format`) and `clear_session`.

>>> import tapejax as tf
>>> tf.keras.backend.floatx(), tf.keras.backend.epsilon(), tf.keras.backend.image_data_format()
('float32', 1e-07, 'channels_last')
>>> tf.keras.backend.backend()
'tensorflow'

Differences from TensorFlow: `set_floatx` changes what `floatx()` returns and the dtype Keras losses compute in;
the layers of tapejax still default to float32.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np

import tapejax as tf

_SETTINGS = {"floatx": "float32", "epsilon": 1e-7, "image_data_format": "channels_last"}


def floatx() -> str:
    """The default float type's name, 'float32' unless `set_floatx` changed it."""
    return _SETTINGS["floatx"]


def set_floatx(value: str) -> None:
    """Sets the default float type: 'bfloat16', 'float16', 'float32' or 'float64'."""
    if value not in {"bfloat16", "float16", "float32", "float64"}:
        raise ValueError("Unknown `floatx` value: " + str(value)
                         + ". Expected one of {'bfloat16', 'float16', 'float32', 'float64'}")
    _SETTINGS["floatx"] = str(value)


def epsilon() -> float:
    """The fuzz factor of numeric expressions (1e-7): probabilities are clipped to [epsilon, 1 - epsilon]."""
    return _SETTINGS["epsilon"]


def set_epsilon(value: float) -> None:
    _SETTINGS["epsilon"] = value


def image_data_format() -> str:
    """'channels_last' (Keras's default) or 'channels_first'."""
    return _SETTINGS["image_data_format"]


def set_image_data_format(data_format: str) -> None:
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    _SETTINGS["image_data_format"] = data_format


def backend() -> str:
    """'tensorflow': the backend tf.keras reports."""
    return "tensorflow"


def clear_session(free_memory: bool = True) -> None:
    """Resets Keras's global state: layer names count from scratch again (`dense`, then `dense_1`)."""
    from tapejax.keras.layers import _NAMES  # the per-thread name counters
    _NAMES.counts.clear()
    if free_memory:
        gc.collect()


def cast_to_floatx(x: Any) -> Any:
    if isinstance(x, tf.Tensor | tf.Variable):
        return tf.cast(x, floatx())
    return np.asarray(x, dtype=floatx())


def int_shape(x: Any) -> tuple[Any, ...]:
    return tuple(tf.TensorShape(x.shape).as_list())


def get_value(x: Any) -> Any:
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def set_value(x: tf.Variable, value: Any) -> None:
    x.assign(np.asarray(value, dtype=x.dtype.as_numpy_dtype))


def is_float_dtype(dtype: Any) -> bool:
    return tf.as_dtype(dtype).is_floating


def is_int_dtype(dtype: Any) -> bool:
    return tf.as_dtype(dtype).is_integer


def count_params(x: Any) -> int:
    return int(np.prod(x.shape))


from tapejax.keras.backend_random import batch_get_value as batch_get_value  # noqa: E402
from tapejax.keras.backend_random import batch_set_value as batch_set_value  # noqa: E402
from tapejax.keras.backend_random import moving_average_update as moving_average_update  # noqa: E402
from tapejax.keras.backend_random import random_bernoulli as random_bernoulli  # noqa: E402
from tapejax.keras.backend_random import random_normal as random_normal  # noqa: E402
from tapejax.keras.backend_random import random_uniform as random_uniform  # noqa: E402
from tapejax.keras.backend_random import truncated_normal as truncated_normal  # noqa: E402

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.backend")
