"""What the layer modules share: argument checks in Keras's words, and the channels_first <-> last transposes."""

from __future__ import annotations

from typing import Any

import numpy as np

import tapejax as tf


def tuple_of(value: Any, rank: int, what: str) -> tuple[int, ...]:
    """An int or a sequence of `rank` ints, as a tuple of `rank` ints (Keras's `standardize_tuple`)."""
    values = (value,) * rank if isinstance(value, int | np.integer) else tuple(value)
    if len(values) != rank or not all(isinstance(v, int | np.integer) for v in values):
        raise ValueError(f"The `{what}` argument must be a tuple of {rank} integers. Received {what}={value}")
    return tuple(int(v) for v in values)


def padding_mode(padding: str, allowed: tuple[str, ...] = ("valid", "same")) -> str:
    mode = str(padding).lower()
    if mode not in allowed:
        raise ValueError(f"The `padding` argument must be one of {list(allowed)}. Received: padding={padding}")
    return mode


def data_format(value: str | None) -> str:
    value = (value or "channels_last").lower()  # keras.config.image_data_format()'s default
    if value not in ("channels_last", "channels_first"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={value}")
    return value


def to_channels_last(inputs: Any, data_format: str) -> Any:
    # tf.nn's ops take channels last here; channels_first inputs are transposed around them, as Keras's TF
    # backend does on CPU.
    if data_format == "channels_last":
        return inputs
    rank = inputs.shape.rank
    return tf.transpose(inputs, [0, *range(2, rank), 1])


def from_channels_last(outputs: Any, data_format: str) -> Any:
    if data_format == "channels_last":
        return outputs
    rank = outputs.shape.rank
    return tf.transpose(outputs, [0, rank - 1, *range(1, rank - 1)])


def channel_axis(data_format: str) -> int:
    return -1 if data_format == "channels_last" else 1
