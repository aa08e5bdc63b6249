"""tf.keras.layers.EinsumDense: `activation(einsum(equation, inputs, kernel) + bias)`, with the kernel's and the
bias's shapes read off the equation and the partial `output_shape`, as Keras 3 reads them.

An equation is `<inputs>,<kernel>-><outputs>`, each side a string of letters, optionally with `...` at the start
of the inputs and outputs (the leading axes pass through) or at the end of both (the trailing axes pass through).
`output_shape` gives the sizes of the output's axes after the batch axis (None: the same as the input's); a kernel
axis takes its size from the output axis of the same letter, else from the input axis. MultiHeadAttention's
projections are EinsumDense layers too.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import tapejax as tf
from tapejax.keras import initializers
from tapejax.keras.attributes import built_weight
from tapejax.keras.layers import KerasTensor, Layer

# (pattern of the equation with `...` written as `0`, whether the ellipsis leads)
_FORMS = ((re.compile(r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)"), False),
          (re.compile(r"0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)"), True),
          (re.compile(r"([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0"), False))


def analyze(equation: str, bias_axes: str | None, input_shape: Any,
            output_shape: Any) -> tuple[list, list | None, list, list[int], list[int]]:
    """Keras 3's reading of an EinsumDense equation for inputs of `input_shape`.

    Returns:
      (kernel shape, bias shape or None, full output shape, the kernel's input axes, its output axes); the axes
      give the fans of variance-scaling initializers (glorot_uniform: the input axes' sizes are the fan in).

    Raises:
      ValueError: an equation of another form, or letters and sizes that do not fit together (Keras's messages).
    """
    written = equation.replace("...", "0")
    for pattern, leading in _FORMS:
        found = pattern.fullmatch(written)
        if found:
            break
    else:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                         "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    inputs_spec, kernel_spec, outputs_spec = found.groups()
    input_shape = list(tf.TensorShape(input_shape).as_list())
    rank = len(input_shape)
    elided = rank - len(inputs_spec)
    if elided < 0:
        raise ValueError(f"EinsumDense's equation '{equation}' takes inputs of rank {len(inputs_spec)} or more; "
                         f"received an input of shape {tuple(input_shape)}.")
    partial = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    # the batch axis is always the input's; the axes an ellipsis stands for follow it (leading) or end the output
    full = [input_shape[0], *(input_shape[1:elided] if leading else []), *partial,
            *([] if leading else input_shape[rank - elided:])]
    shift = elided if leading else 0  # where the spelled-out axes start
    in_axis = {letter: i + shift for i, letter in enumerate(inputs_spec)}
    out_axis = {letter: i + shift for i, letter in enumerate(outputs_spec)}
    for letter in inputs_spec:
        size, wanted = input_shape[in_axis[letter]], full[out_axis[letter]] if letter in out_axis else None
        if wanted is not None and wanted != size:
            raise ValueError(f"Input shape and output shape do not match at shared dimension '{letter}'. Input "
                             f"shape is {size}, and output shape is {wanted}.")
    for letter in outputs_spec:
        if letter not in inputs_spec and letter not in kernel_spec:
            raise ValueError(f"Dimension '{letter}' was specified in the output '{outputs_spec}' but has no "
                             f"corresponding dim in the input spec '{inputs_spec}' or weight spec '{kernel_spec}'")
    kernel, input_axes, output_axes = [], [], []
    for i, letter in enumerate(kernel_spec):
        if letter in out_axis:
            kernel.append(full[out_axis[letter]])
            output_axes.append(i)
        elif letter in in_axis:
            kernel.append(input_shape[in_axis[letter]])
            input_axes.append(i)
        else:
            raise ValueError(f"Weight dimension '{letter}' did not have a match in either the input spec "
                             f"'{inputs_spec}' or the output spec '{outputs_spec}'. For this layer, the weight must "
                             "be fully specified.")
    bias = None
    if bias_axes is not None:
        for letter in bias_axes:
            if letter not in outputs_spec:
                raise ValueError(f"Bias dimension '{letter}' was requested, but is not part of the output spec "
                                 f"'{outputs_spec}'")
        # the bias broadcasts from its first axis on: the output axes after it that it lacks have size 1
        first = min(outputs_spec.index(letter) for letter in bias_axes)
        bias = [full[out_axis[letter]] if letter in bias_axes else 1 for letter in outputs_spec[first:]]
        bias += [] if leading else [1] * elided
    return kernel, bias, full, input_axes, output_axes


class EinsumDense(Layer):
    """A dense layer of any rank (`tf.keras.layers.EinsumDense`): `activation(einsum(equation, inputs, kernel)
    + bias)`, the bias over the output axes named in `bias_axes` (see the module docstring).

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")
    >>> layer(tf.ones([4, 5, 8])).shape
    TensorShape([4, 5, 2, 3])
    >>> [tuple(w.shape) for w in layer.weights]
    [(8, 2, 3), (2, 3)]

    Differences from TensorFlow: LoRA (`lora_rank`, `enable_lora`) and quantization are not implemented (a
    `lora_rank` or `quantization_config` raises NotImplementedError). With a leading `...` standing for two or more
    axes after the batch axis, Keras's `compute_output_shape` lists those axes in reverse order (its call does
    not); tapejax's lists them in order.
    """

    _casts_integer_inputs = True  # Keras's einsum promotes integer inputs against the float kernel
    kernel = built_weight("The weight contracted with the inputs, of the shape the equation gives; made by `build`.")

    def __init__(self, equation: str, output_shape: Any, activation: Any = None, bias_axes: str | None = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, lora_rank: int | None = None, lora_alpha: float | None = None,
                 quantization_config: Any = None, **kwargs: Any):
        if lora_rank or quantization_config is not None:
            raise NotImplementedError("tapejax's EinsumDense does not implement LoRA or quantization yet "
                                      "(lora_rank=None, quantization_config=None).")
        super().__init__(**kwargs)
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activation
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.lora_rank, self.lora_alpha, self.lora_enabled = None, None, False

    def build(self, input_shape: tf.TensorShape) -> None:
        kernel_shape, bias_shape, _, input_axes, output_axes = analyze(
            self.equation, self.bias_axes, input_shape, self.partial_output_shape)
        kernel_init = self.kernel_initializer
        if getattr(kernel_init, "input_axes", 0) is None or getattr(kernel_init, "output_axes", 0) is None:
            # Keras 3: a variance-scaling initializer counts the fans over the equation's input and output axes
            kernel_init = copy.copy(kernel_init)
            kernel_init.input_axes, kernel_init.output_axes = input_axes, output_axes
        self.kernel = self._weight("kernel", kernel_shape, kernel_init, self.kernel_regularizer,
                                   self.kernel_constraint)
        self.bias = None if bias_shape is None else self._weight(
            "bias", bias_shape, self.bias_initializer, self.bias_regularizer, self.bias_constraint)

    def _weight(self, name: str, shape: list, initializer: Any, regularizer: Any, constraint: Any) -> tf.Variable:
        if any(d is None for d in shape):
            raise ValueError("Shapes used to initialize variables must be fully-defined (no `None` dimensions). "
                             f"Received: shape={tuple(shape)} for variable path='{self.name}/{name}'")
        return self.add_weight(name=name, shape=shape, initializer=initializer, regularizer=regularizer,
                               constraint=constraint)

    def call(self, inputs: Any) -> Any:
        outputs = tf.einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            outputs = outputs + self.bias
        return self._activate(outputs)

    def compute_output_shape(self, input_shape: Any) -> tuple:
        """Keras's static output shape: None where `output_shape` says None, whatever the input's size."""
        return tuple(analyze(self.equation, self.bias_axes, input_shape, self.partial_output_shape)[2])

    def _call_symbolically(self, inputs: Any, args: tuple, kwargs: dict) -> Any:
        outputs = super()._call_symbolically(inputs, args, kwargs)
        if isinstance(inputs, KerasTensor) and isinstance(outputs, KerasTensor):
            # Keras's KerasTensor has compute_output_shape's shape, not the shape of a run on example sizes
            outputs.shape = self._output_shape = tf.TensorShape(self.compute_output_shape(inputs.shape))
        return outputs

    def get_config(self) -> dict[str, Any]:
        """Keras 3's keys: every argument, defaults included (`output_shape` as a tuple)."""
        config = {k: v for k, v in super().get_config().items() if k not in ("lora_rank", "lora_alpha")}
        config.update(output_shape=self.partial_output_shape, equation=self.equation)
        for key, default in _CONFIG_DEFAULTS.items():
            config.setdefault(key, default)
        if config["activation"] is None:
            config["activation"] = "linear"
        return config


_CONFIG_DEFAULTS = {"activation": "linear", "bias_axes": None, "kernel_initializer": "glorot_uniform",
                    "bias_initializer": "zeros", "kernel_regularizer": None, "bias_regularizer": None,
                    "activity_regularizer": None, "kernel_constraint": None, "bias_constraint": None,
                    "quantization_config": None}
