"""tf.train: the tf.train.Example protocol buffers (tapejax/io/example.py), built on first use."""

from typing import Any as _Any

from tapejax.io import example as _example
from tapejax._src.errors import missing_symbols as _missing_symbols

_missing = _missing_symbols("tf.train")


def __getattr__(name: str) -> _Any:
    if name in _example.MESSAGES:
        return _example.messages()[name]
    return _missing(name)
