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

A text batch is as long as its longest text, so every new length would compile the step again (XLA compiles for
static shapes; TF's graph runs any length). Where padding cannot change the answer, the step is given the token
ids padded with more zeros to one of a few lengths instead (`bucket`: a quarter of an octave apart, at most 25%
more steps): a `Sequential` of a `TextVectorization` (int, no fixed length), an `Embedding(mask_zero=True)`, whose
mask marks the new steps as padding, and recurrent layers that skip masked steps (keeping their state) until one
returns no sequence; any layers after that see no time axis. The outputs are the same up to the rounding of sums
over the padded axis (a kernel's gradient sums over every step). `TAPEJAX_TEXT_LENGTH_BUCKETS=0` turns it off.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jax
import numpy as np

import tapejax as tf
from tapejax._src.string_values import is_text

class _Flag:
    on = os.environ.get("TAPEJAX_TEXT_LENGTH_BUCKETS", "").strip().lower() not in ("0", "false", "no", "off")


BUCKETS = _Flag()
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


def has_strings(data: Any) -> bool:
    """Whether a batch holds string tensors (`split` reads the inputs' before the step)."""
    return any(_is_string(v) for v in jax.tree_util.tree_leaves(data, is_leaf=lambda v: isinstance(v, tf.Tensor)))


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
    if BUCKETS.on and _ignores_padding(model):
        outputs = [_padded(outputs[0])]
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


def bucket(length: int) -> int:
    """The padded length of a text batch: `length` rounded up to m * 2**k, m in 4..7 (from 8 on: 8, 10, 12, 14, 16,
    20, ...), so at most 25% longer, and four lengths per doubling."""
    if length <= 8:
        return length
    shift = length.bit_length() - 3  # 2**shift * m with m in 4..7
    m = -(-length // (1 << shift))
    return m << shift


def _padded(ids: Any) -> Any:
    """Token ids `[batch, length]` with zeros appended up to `bucket(length)` (numpy's: no XLA compile)."""
    length = ids.shape[1]
    if bucket(length) == length:
        return ids
    return tf.constant(np.pad(ids.numpy(), ((0, 0), (0, bucket(length) - length))))


def _ignores_padding(model: Any) -> bool:
    """Whether `model` (its string reader first) gives the same outputs for token ids padded with more zeros: see
    the module docstring. Exact types only (a subclass may read the padding), checked at every batch (a layer's
    attributes may change between fits)."""
    from tapejax.keras.layers import Embedding
    from tapejax.keras.layers_rnn import GRU, LSTM, SimpleRNN
    from tapejax.keras.layers_text import TextVectorization
    from tapejax.keras.layers_wrappers import Bidirectional
    from tapejax.keras.models import Sequential

    if type(model) is not Sequential:
        return False
    layers = model.layers
    if (len(layers) < 3 or type(layers[0]) is not TextVectorization or layers[0]._output_mode != "int"
            or layers[0]._output_sequence_length is not None or type(layers[1]) is not Embedding
            or not layers[1].mask_zero):
        return False

    def skips_masked_steps(rnn: Any) -> bool:
        return type(rnn) in (LSTM, GRU, SimpleRNN) and not rnn.stateful and not rnn.return_state

    for layer in layers[2:]:
        if type(layer) is Bidirectional:
            halves = (layer.forward_layer, layer.backward_layer)
            if layer.merge_mode is None or layer.return_state or not all(map(skips_masked_steps, halves)):
                return False
        elif not skips_masked_steps(layer) or (layer.go_backwards and layer.return_sequences):
            return False  # go_backwards' sequence stays reversed: its padding would come first
        if not layer.return_sequences:
            return True  # the time axis ends here
    return False  # the outputs have the time axis
