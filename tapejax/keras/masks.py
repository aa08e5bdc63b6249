"""Keras masks: which timesteps of a tensor are padding (`Embedding(mask_zero=True)`, `Masking`).

Keras 3 keeps a tensor's mask in its `_keras_mask` attribute. tapejax Tensors have fixed slots, so the mask is
kept here, by tensor, for as long as the tensor lives (a weak reference drops the entry with it). A layer whose
`call` takes `mask` receives its input's mask; its `compute_mask` gives its output's.
"""

from __future__ import annotations

import weakref
from typing import Any

import jax

import tapejax as tf

_MASKS: dict[int, tuple[Any, Any]] = {}  # id(tensor) -> (weak reference to it, its mask)


def _forget(key: int) -> Any:
    return lambda _: _MASKS.pop(key, None)


def set_mask(tensor: Any, mask: Any) -> None:
    """Gives `tensor` the mask `mask` (None: no mask)."""
    if not isinstance(tensor, tf.Tensor):
        return
    key = id(tensor)
    if mask is None:
        _MASKS.pop(key, None)
    else:
        _MASKS[key] = (weakref.ref(tensor, _forget(key)), mask)


def get_mask(tensor: Any) -> Any:
    """The mask of `tensor`, or None."""
    entry = _MASKS.get(id(tensor))
    return entry[1] if entry is not None and entry[0]() is tensor else None


def mask_of(inputs: Any) -> Any:
    """The mask of the inputs of a call: a tensor's, or for a list of tensors the list of theirs (None if none
    has one), as Keras hands masks to `call` and `compute_mask`."""
    if isinstance(inputs, list | tuple):
        masks = [get_mask(x) for x in inputs]
        return None if all(m is None for m in masks) else masks
    return get_mask(inputs)


def attach(outputs: Any, mask: Any) -> None:
    """Sets the mask of each output tensor (a list of masks goes with a list of outputs)."""
    leaves = jax.tree_util.tree_leaves(outputs, is_leaf=lambda x: isinstance(x, tf.Tensor | tf.Variable))
    masks = mask if isinstance(mask, list | tuple) and len(mask) == len(leaves) else [mask] * len(leaves)
    for tensor, m in zip(leaves, masks):
        set_mask(tensor, m)
