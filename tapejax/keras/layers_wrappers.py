"""tf.keras.layers wrappers: Bidirectional (a recurrent layer run forwards and backwards) and TimeDistributed
(a layer applied to every step)."""

from __future__ import annotations

import copy
from typing import Any

import tapejax as tf
from tapejax.keras.layers import Layer


def _copy_layer(layer: Layer, name: str, **changes: Any) -> Layer:
    """A new, unbuilt layer like `layer`, named `name`: Keras recreates it from its config, so a built layer's
    weights are not shared with the copy (an unbuilt one is copied as it is, with whatever it was given)."""
    if layer.built:
        clone = type(layer).from_config({**layer.get_config(), "name": name})
    else:
        clone = copy.deepcopy(layer)
        clone._name = name
    for key, value in changes.items():
        setattr(clone, key, value)
    return clone


def _removeprefix(name: str, prefix: str) -> str:
    return name[len(prefix):] if name.startswith(prefix) else name


class Bidirectional(Layer):
    """Runs a recurrent layer forwards (`forward_<name>`) and backwards (`backward_<name>`) and merges the two
    outputs with `merge_mode` ("concat", "sum", "mul", "ave", or None for a list) (`tf.keras.layers.Bidirectional`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3))(tf.ones([2, 5, 4])).shape
    TensorShape([2, 6])
    """

    supports_masking = True

    def __init__(self, layer: Layer, merge_mode: str | None = "concat", weights: Any = None,
                 backward_layer: Layer | None = None, **kwargs: Any):
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                             '{"sum", "mul", "ave", "concat", None}')
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `keras.layers.Layer` instance. Received: "
                             f"{backward_layer}")
        super().__init__(**kwargs)
        self.forward_layer = _copy_layer(layer, f"forward_{_removeprefix(layer.name, 'forward_')}")
        if backward_layer is None:
            self.backward_layer = _copy_layer(layer, f"backward_{_removeprefix(layer.name, 'backward_')}",
                                              go_backwards=not layer.go_backwards)
        else:
            self.backward_layer = backward_layer
        for half in (self.forward_layer, self.backward_layer):  # as Keras: a masked step of a sequence is zeros
            if getattr(half, "zero_output_for_mask", None) is not None:
                half.zero_output_for_mask = half.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state
        self._initial_weights = weights

    def build(self, input_shape: tf.TensorShape) -> None:
        for half in (self.forward_layer, self.backward_layer):
            if not half.built:
                half.build(input_shape)

    def call(self, sequences: Any, initial_state: Any = None, mask: Any = None, training: Any = None) -> Any:
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        forward = self.forward_layer(sequences, initial_state=forward_state, mask=mask, training=training)
        backward = self.backward_layer(sequences, initial_state=backward_state, mask=mask, training=training)
        states: list[Any] = []
        if self.return_state:
            states = [*forward[1:], *backward[1:]]
            forward, backward = forward[0], backward[0]
        if self.return_sequences:
            backward = tf.reverse(backward, [1])
        if self.merge_mode == "concat":
            output = tf.concat([forward, backward], axis=-1)
        elif self.merge_mode == "sum":
            output = forward + backward
        elif self.merge_mode == "ave":
            output = (forward + backward) / 2
        elif self.merge_mode == "mul":
            output = forward * backward
        else:
            output = [forward, backward]
        if self.return_state:
            return (*output, *states) if isinstance(output, list) else (output, *states)
        return output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        output_mask = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        if self.return_state:
            states = [None] * (len(self.forward_layer._state_sizes()) * 2)
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + states
        return output_mask


class TimeDistributed(Layer):
    """Applies `layer` to every step of the inputs (axis 1), as one call on the steps folded into the batch
    (`tf.keras.layers.TimeDistributed`).

    >>> import tapejax as tf
    >>> tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2))(tf.ones([4, 3, 5])).shape
    TensorShape([4, 3, 2])
    """

    supports_masking = True

    def __init__(self, layer: Layer, **kwargs: Any):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. "
                             f"Received: {layer}")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: tf.TensorShape) -> None:
        shape = tf.TensorShape(input_shape).as_list()
        if len(shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                             f"dimensions, received: {tuple(shape)}")
        if not self.layer.built:
            self.layer.build(tf.TensorShape([shape[0], *shape[2:]]))

    def call(self, inputs: Any, training: Any = None, mask: Any = None) -> Any:
        shape = inputs.shape.as_list()
        if len(shape) < 3:
            raise ValueError(f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                             f"dimensions, received: {tuple(shape)}")
        folded = tf.reshape(inputs, [-1, *shape[2:]])
        kwargs = {"training": training} if training is not None else {}
        outputs = self.layer(folded, **kwargs)
        return tf.reshape(outputs, [-1, shape[1], *outputs.shape.as_list()[1:]])


