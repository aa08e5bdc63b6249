"""tf.keras.layers convolutions: Conv1D/2D/3D, their transposes, depthwise and separable convolutions.

All are channels-last convolutions on `tf.nn.conv1d`/`conv2d`/`conv3d` and `tf.nn.depthwise_conv2d`
(channels_first inputs are transposed around them). A transposed convolution is the convolution whose
gradient it is: the input spread out by the strides (zeros between its elements), padded, and convolved with
the flipped kernel, so that 1-D, 2-D and 3-D share one formula and Keras's output sizes.
"""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax._src import dispatch
from tapejax._src.registry import OpDef
from tapejax.keras import activations
from tapejax.keras.attributes import built_weight
from tapejax.keras.layers import Layer
from tapejax.keras.layers_util import channel_axis, from_channels_last, padding_mode, to_channels_last, tuple_of
from tapejax.keras.layers_util import data_format as _data_format
from tapejax.ops.conv_transpose import transposed as _transposed


def _convolve(x: Any, kernel: Any, strides: tuple, padding: str, dilations: tuple) -> Any:
    """A channels-last convolution of spatial rank len(strides), kernel (*size, in, out)."""
    rank = len(strides)
    if rank == 1:
        return tf.nn.conv1d(x, kernel, stride=strides[0], padding=padding.upper(), dilations=dilations[0])
    if rank == 2:
        return tf.nn.conv2d(x, kernel, strides=[1, *strides, 1], padding=padding.upper(),
                            dilations=[1, *dilations, 1])
    return tf.nn.conv3d(x, kernel, strides=[1, *strides, 1], padding=padding.upper(), dilations=[1, *dilations, 1])


class _Conv(Layer):
    """What every convolution layer shares: its arguments, its bias and activation, channels_first."""

    kernel = built_weight("The convolution kernel, made by `build`.")
    rank = 2
    _transpose = False

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        rank = self.rank
        self.filters, self.groups = int(filters), int(groups)
        self.kernel_size = tuple_of(kernel_size, rank, "kernel_size")
        self.strides, self.dilation_rate = tuple_of(strides, rank, "strides"), tuple_of(dilation_rate, rank,
                                                                                        "dilation_rate")
        self.padding = padding_mode(padding, ("valid", "same", "causal") if rank == 1 else ("valid", "same"))
        self.data_format = _data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        if self.filters <= 0 or self.filters % self.groups:
            raise ValueError(f"The number of filters must be evenly divisible by the number of groups. Received: "
                             f"groups={self.groups}, filters={self.filters}.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1 and not self._transpose:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")

    def _channels(self, input_shape: tf.TensorShape) -> int:
        channels = input_shape[channel_axis(self.data_format)]
        if channels is None:
            raise ValueError(f"{type(self).__name__} needs a known number of input channels; the input shape is "
                             f"{input_shape}.")
        return int(channels)

    def _kernel_shape(self, channels: int) -> list[int]:
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the number of groups. "
                             f"Received groups={self.groups}, but the input has {channels} channels.")
        return [*self.kernel_size, channels // self.groups, self.filters]

    def build(self, input_shape: tf.TensorShape) -> None:
        self.kernel = self.add_weight(name="kernel", shape=self._kernel_shape(self._channels(input_shape)),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _finish(self, outputs: Any) -> Any:
        if self.use_bias:
            outputs = outputs + self.bias
        return self._activate(from_channels_last(outputs, self.data_format))

    def call(self, inputs: Any) -> Any:
        x = to_channels_last(inputs, self.data_format)
        padding = self.padding
        if padding == "causal":  # Conv1D: pad the start so that no output sees a later input
            x = tf.pad(x, [[0, 0], [self.dilation_rate[0] * (self.kernel_size[0] - 1), 0], [0, 0]])
            padding = "valid"
        if self.groups == 1:
            outputs = _convolve(x, self.kernel, self.strides, padding, self.dilation_rate)
        else:  # each group of input channels meets its own slice of the filters
            outputs = tf.concat([_convolve(part, kernel, self.strides, padding, self.dilation_rate)
                                 for part, kernel in zip(tf.split(x, self.groups, axis=-1),
                                                         tf.split(self.kernel, self.groups, axis=-1))], axis=-1)
        return self._finish(outputs)


class Conv1D(_Conv):
    """A 1-D convolution (`tf.keras.layers.Conv1D`); `padding` may also be "causal".

    >>> import tapejax as tf
    >>> tf.keras.layers.Conv1D(4, 3, padding="causal")(tf.ones([2, 7, 3])).shape
    TensorShape([2, 7, 4])
    """

    rank = 1


class Conv2D(_Conv):
    """A 2-D convolution, `activation(conv2d(inputs, kernel) + bias)` (`tf.keras.layers.Conv2D`).

    The kernel has shape `kernel_size + (input_channels // groups, filters)`; `padding` is "valid" or "same".

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Conv2D(4, 3, strides=2, padding="same")
    >>> layer(tf.ones([1, 9, 9, 2])).shape, layer.kernel.shape
    (TensorShape([1, 5, 5, 4]), TensorShape([3, 3, 2, 4]))
    """

    rank = 2


class Conv3D(_Conv):
    """A 3-D convolution (`tf.keras.layers.Conv3D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Conv3D(2, 3)(tf.ones([1, 5, 5, 5, 1])).shape
    TensorShape([1, 3, 3, 3, 2])
    """

    rank = 3


def _transposed_length(length: int, kernel: int, stride: int, padding: str, dilation: int,
                       output_padding: int | None) -> int:
    """Keras's output length of a transposed convolution."""
    kernel = kernel + (kernel - 1) * (dilation - 1)
    if output_padding is None:
        return length * stride + max(kernel - stride, 0) if padding == "valid" else length * stride
    pad = kernel // 2 if padding == "same" else 0
    return (length - 1) * stride + kernel - 2 * pad + output_padding


# Keras's own op, not one of TF's public rows (the registry's sweep tests those): applied through dispatch directly.
_CONV_TRANSPOSE = OpDef("keras.layers.conv_transpose", _transposed,
                        static=("strides", "padding", "dilations", "lengths"), op_type="Conv2DBackpropInput")


def _conv_transpose(x: Any, kernel: Any, strides: tuple, padding: str, dilations: tuple, lengths: list[int]) -> Any:
    params = {"strides": tuple(strides), "padding": padding, "dilations": tuple(dilations), "lengths": tuple(lengths)}
    return dispatch.apply(_CONV_TRANSPOSE, (x, kernel), params)


class _ConvTranspose(_Conv):
    _transpose = True

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 output_padding: Any = None, data_format: str | None = None, dilation_rate: Any = 1,
                 activation: Any = None, use_bias: bool = True, **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias, **kwargs)
        self.output_padding = None if output_padding is None else tuple_of(output_padding, self.rank,
                                                                           "output_padding")
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(f"Strides must be greater than output padding. Received strides={self.strides}, "
                             f"output_padding={self.output_padding}.")

    def _kernel_shape(self, channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, channels]

    def call(self, inputs: Any) -> Any:
        x = to_channels_last(inputs, self.data_format)
        spatial = x.shape.as_list()[1:-1]
        if None in spatial:
            raise ValueError(f"{type(self).__name__} needs known spatial sizes; the input shape is {inputs.shape}.")
        paddings = self.output_padding or (None,) * self.rank
        lengths = [_transposed_length(n, k, s, self.padding, d, p) for n, k, s, d, p in zip(
            spatial, self.kernel_size, self.strides, self.dilation_rate, paddings)]
        return self._finish(_conv_transpose(x, self.kernel, self.strides, self.padding, self.dilation_rate, lengths))


class Conv1DTranspose(_ConvTranspose):
    """A transposed 1-D convolution (`tf.keras.layers.Conv1DTranspose`): kernel (size, filters, in)."""

    rank = 1


class Conv2DTranspose(_ConvTranspose):
    """A transposed 2-D convolution (`tf.keras.layers.Conv2DTranspose`), the upsampling of DCGANs and U-Nets.

    >>> import tapejax as tf
    >>> layer = tf.keras.layers.Conv2DTranspose(3, 4, strides=2, padding="same")
    >>> layer(tf.ones([1, 5, 5, 2])).shape, layer.kernel.shape
    (TensorShape([1, 10, 10, 3]), TensorShape([4, 4, 3, 2]))
    """

    rank = 2


class Conv3DTranspose(_ConvTranspose):
    """A transposed 3-D convolution (`tf.keras.layers.Conv3DTranspose`)."""

    rank = 3


class _DepthwiseMixin:
    def _depthwise(self, x: Any, kernel: Any, padding: str) -> Any:
        if self.rank == 1:  # a 1-D depthwise convolution is a 2-D one over a height of 1
            out = tf.nn.depthwise_conv2d(tf.expand_dims(x, 1), tf.expand_dims(kernel, 0),
                                         strides=[1, 1, self.strides[0], 1], padding=padding.upper(),
                                         dilations=[1, self.dilation_rate[0]])
            return tf.squeeze(out, 1)
        return tf.nn.depthwise_conv2d(x, kernel, strides=[1, *self.strides, 1], padding=padding.upper(),
                                      dilations=list(self.dilation_rate))


class _DepthwiseConv(_DepthwiseMixin, _Conv):
    def __init__(self, kernel_size: Any, strides: Any = 1, padding: str = "valid", depth_multiplier: int = 1,
                 data_format: str | None = None, dilation_rate: Any = 1, activation: Any = None,
                 use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", depthwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None, bias_constraint: Any = None,
                 **kwargs: Any):
        super().__init__(1, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.depthwise_regularizer = depthwise_initializer, depthwise_regularizer
        self.depthwise_constraint = depthwise_constraint

    def build(self, input_shape: tf.TensorShape) -> None:
        channels = self._channels(input_shape)
        self.kernel = self.add_weight(name="kernel", shape=[*self.kernel_size, channels, self.depth_multiplier],
                                      initializer=self.depthwise_initializer,
                                      regularizer=self.depthwise_regularizer, constraint=self.depthwise_constraint)
        self.filters = channels * self.depth_multiplier
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def call(self, inputs: Any) -> Any:
        return self._finish(self._depthwise(to_channels_last(inputs, self.data_format), self.kernel, self.padding))


class DepthwiseConv1D(_DepthwiseConv):
    """A 1-D depthwise convolution (`tf.keras.layers.DepthwiseConv1D`): kernel (size, channels, multiplier)."""

    rank = 1


class DepthwiseConv2D(_DepthwiseConv):
    """A depthwise 2-D convolution (`tf.keras.layers.DepthwiseConv2D`): each channel its own `depth_multiplier`
    filters; kernel (h, w, channels, multiplier).

    >>> import tapejax as tf
    >>> tf.keras.layers.DepthwiseConv2D(3, depth_multiplier=2)(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 6])
    """

    rank = 2


class _SeparableConv(_DepthwiseMixin, _Conv):
    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, depth_multiplier: int = 1,
                 activation: Any = None, use_bias: bool = True, depthwise_initializer: Any = "glorot_uniform",
                 pointwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 pointwise_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer
        self.depthwise_regularizer, self.pointwise_regularizer = depthwise_regularizer, pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = depthwise_constraint, pointwise_constraint

    def build(self, input_shape: tf.TensorShape) -> None:
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel", shape=[*self.kernel_size, channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel", shape=[1] * self.rank + [channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=[self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def call(self, inputs: Any) -> Any:
        depthwise = self._depthwise(to_channels_last(inputs, self.data_format), self.depthwise_kernel, self.padding)
        return self._finish(_convolve(depthwise, self.pointwise_kernel, (1,) * self.rank, "valid",
                                      (1,) * self.rank))


class SeparableConv1D(_SeparableConv):
    """A depthwise 1-D convolution then a pointwise one (`tf.keras.layers.SeparableConv1D`)."""

    rank = 1


class SeparableConv2D(_SeparableConv):
    """A depthwise 2-D convolution then a 1x1 one (`tf.keras.layers.SeparableConv2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.SeparableConv2D(4, 3, padding="same")(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 5, 5, 4])
    """

    rank = 2


# Keras's aliases.
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution2DTranspose, Convolution3DTranspose = Conv2DTranspose, Conv3DTranspose
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
