"""Text models in `fit`, `evaluate` and `predict`: the layers that turn a batch's strings into numbers run eagerly,
before the compiled step, so that a new batch of texts does not trace and compile the step again.

Strings live on the host (tapejax/_src/string_values.py): inside tf.function a string argument is a trace-time
constant, one trace (and one XLA compile) per distinct value, so a step that takes texts would compile once per
batch. When each of a model's string inputs goes only into weightless layers called once that make numbers of it
(TextVectorization, StringLookup: Keras's preprocessing layers), the step is given those layers' outputs for the
batch as tensors, and the strings are stood in for by empty strings of the same shape: inside the step those
layers return the given outputs (`Layer.__call__` asks `given_output`), and nothing else reads the strings. The
step is then traced once per shape of those outputs, as TF's is. Anything else (a string input read by another
layer, a model subclass, a `train_step` of the user's own, which may read the strings) keeps the plain path.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax._src.string_values import is_text

_GIVEN = threading.local()  # .outputs: id(layer) -> its output in the step being traced


def given_output(layer: Any) -> Any:
    """The output given for `layer` in the step being traced, or None."""
    outputs = getattr(_GIVEN, "outputs", None)
    return None if outputs is None else outputs.get(id(layer))


@contextmanager
def given(layers: tuple[Any, ...], outputs: list[Any]) -> Iterator[None]:
    previous, _GIVEN.outputs = getattr(_GIVEN, "outputs", None), {id(k): v for k, v in zip(layers, outputs)}
    try:
        yield
    finally:
        _GIVEN.outputs = previous


def _is_string(value: Any) -> bool:
    if isinstance(value, tf.Tensor):
        return value.dtype == tf.string
    return isinstance(value, np.ndarray) and is_text(value)  # str, bytes or object arrays of them


def split(model: Any, data: Any) -> tuple[Any, tuple[Any, ...], list[Any]] | None:
    """`(data with its strings stood in for, the layers that read them, their outputs for this batch)`, or None
    when the batch has no string inputs or the model is not one this applies to."""
    from tapejax.keras.data_adapter import unpack_x_y_sample_weight

    x = unpack_x_y_sample_weight(data)[0]
    leaves = jax.tree_util.tree_leaves(x, is_leaf=lambda v: isinstance(v, tf.Tensor))
    if not any(_is_string(v) for v in leaves):
        return None
    readers = _string_readers(model, leaves)
    if readers is None:
        return None
    outputs = [layer(tf.convert_to_tensor(leaves[i])) for layer, i in readers]
    if any(not isinstance(out, tf.Tensor) or out.dtype == tf.string for out in outputs):
        return None
    stand_ins = [tf.constant(np.full(np.shape(v), b"", dtype=object)) if _is_string(v) else v for v in leaves]
    treedef = jax.tree_util.tree_structure(x, is_leaf=lambda v: isinstance(v, tf.Tensor))
    stood_in = jax.tree_util.tree_unflatten(treedef, stand_ins)
    data = stood_in if not isinstance(data, tuple | list) else (stood_in, *data[1:])
    return data, tuple(layer for layer, _ in readers), outputs


def _string_readers(model: Any, leaves: list[Any]) -> list[tuple[Any, int]] | None:
    """(layer, index of the input leaf it reads) for each string input, if each is read by one weightless layer
    only, called once in the model."""
    from tapejax.keras.models import Functional, Sequential, _parents
    from tapejax.keras.training import Trainer

    for method in ("train_step", "test_step", "predict_step"):
        if getattr(type(model), method) is not getattr(Trainer, method):
            return None
    strings = [i for i, v in enumerate(leaves) if _is_string(v)]
    if isinstance(model, Sequential):
        layers = model.layers
        if len(leaves) != 1 or len(layers) < 2 or layers[0].trainable_weights or layers.count(layers[0]) > 1:
            return None
        return [(layers[0], 0)]
    if not isinstance(model, Functional) or len(leaves) != len(model._input_tensors):
        return None
    readers = []
    for i in strings:
        symbol = model._input_tensors[i]
        nodes = [node for node in model._nodes if any(p is symbol for p in _parents(node))]
        if len(nodes) != 1 or nodes[0].inputs is not symbol or nodes[0].args or nodes[0].kwargs:
            return None
        layer = nodes[0].layer
        if layer.trainable_weights or sum(node.layer is layer for node in model._nodes) > 1 or any(
                out is symbol for out in model._output_tensors):
            return None
        readers.append((layer, i))
    return readers
