"""tf.keras.activations: the functions layers accept by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tapejax as tf
from tapejax.keras import logits

_BY_NAME: dict[str, Callable] = {
    "relu": tf.nn.relu, "relu6": tf.nn.relu6, "elu": tf.nn.elu, "selu": tf.nn.selu, "gelu": tf.nn.gelu,
    "sigmoid": logits.sigmoid, "tanh": tf.nn.tanh, "softmax": logits.softmax, "softplus": tf.nn.softplus,
    "softsign": tf.nn.softsign, "swish": tf.nn.silu, "silu": tf.nn.silu, "linear": lambda x: x,
}

# The functions by name, as `tf.keras.activations.relu` (TF's signatures, not Keras's extra arguments).
relu, relu6, elu, selu, gelu = (_BY_NAME[n] for n in ("relu", "relu6", "elu", "selu", "gelu"))
sigmoid, tanh, softmax, softplus, softsign = (_BY_NAME[n] for n in ("sigmoid", "tanh", "softmax", "softplus",
                                                                    "softsign"))
swish, silu, linear = _BY_NAME["swish"], _BY_NAME["silu"], _BY_NAME["linear"]


def get(identifier: Any) -> Callable:
    """An activation from a name ('relu'), a function, or None (the identity)."""
    if identifier is None:
        return _BY_NAME["linear"]
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]
        except KeyError:
            raise ValueError(f"Unknown activation {identifier!r}; tapejax has {sorted(_BY_NAME)}.") from None
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation identifier: {identifier!r}")


softmax = logits.softmax
sigmoid = logits.sigmoid


from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.keras.activations")
