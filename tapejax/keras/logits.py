"""The logits behind a softmax or sigmoid output, as Keras 3 keeps them (`output._keras_logits`).

Keras 3's `activations.softmax` and `activations.sigmoid` (so `Dense(..., activation="softmax")`) attach their
input to their output, and its crossentropies then compute from those logits instead of clipping the
probabilities at `epsilon()`: a saturated softmax gives a loss of 60, not 16.1. tapejax Tensors have slots, so
the link lives here, keyed by the output's unique id (never `id()`, which is reused) and dropped with the output.
"""

from __future__ import annotations

import weakref
from typing import Any

import tapejax as tf

_LOGITS: dict[int, tuple[str, Any]] = {}  # output tid -> (activation kind, logits); lives as long as the output


def attach(output: Any, logits: Any, kind: str) -> Any:
    """Records that `output` is `kind` ("softmax" or "sigmoid") of `logits`; returns `output`."""
    if isinstance(output, tf.Tensor):
        tid = output._tid
        _LOGITS[tid] = (kind, logits)
        weakref.finalize(output, _LOGITS.pop, tid, None)
    return output


def logits_of(output: Any, from_logits: bool, kind: str, fn_name: str) -> tuple[Any, bool]:
    """(logits, True) when `output` came from a Keras `kind` activation, else (output, from_logits); warns as
    Keras does when `from_logits=True` is given such an output."""
    found = _LOGITS.get(output._tid) if isinstance(output, tf.Tensor) else None
    if found is None or found[0] != kind:
        return output, from_logits
    if from_logits:
        import warnings
        op = {"softmax": "Softmax", "sigmoid": "Sigmoid"}[kind]
        warnings.warn(f'"`{fn_name}` received `from_logits=True`, but the `output` argument was produced by a {op} '
                      "activation and thus does not represent logits. Was this intended?", UserWarning, stacklevel=3)
    return found[1], True


def softmax(x: Any, axis: int = -1) -> Any:
    """`tf.keras.activations.softmax`: `tf.nn.softmax`, remembering `x` for the crossentropy losses."""
    x = tf.convert_to_tensor(x)
    return attach(tf.nn.softmax(x, axis=axis), x, "softmax")


def sigmoid(x: Any) -> Any:
    """`tf.keras.activations.sigmoid`: `tf.sigmoid`, remembering `x` for the crossentropy losses."""
    x = tf.convert_to_tensor(x)
    return attach(tf.sigmoid(x), x, "sigmoid")
