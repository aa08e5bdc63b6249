"""tf.keras.layers that move values around: Reshape, Permute, RepeatVector, Lambda, UpSampling1D/2D/3D,
ZeroPadding1D/2D/3D and Cropping1D/2D/3D."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.layers import Layer
from tapejax.keras.layers_util import data_format as _data_format
from tapejax.keras.layers_util import tuple_of


class Reshape(Layer):
    """Reshapes each example to `target_shape` (one entry may be -1) (`tf.keras.layers.Reshape`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Reshape((3, -1))(tf.ones([2, 12])).shape
    TensorShape([2, 3, 4])
    """

    _built_at_init = True

    def __init__(self, target_shape: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in (target_shape if isinstance(target_shape, list | tuple)
                                                   else (target_shape,)))

    def call(self, inputs: Any) -> Any:
        known = int(np.prod([d for d in self.target_shape if d != -1]))
        size = int(np.prod(inputs.shape.as_list()[1:])) if None not in inputs.shape.as_list()[1:] else None
        if size is not None and (size % known if -1 in self.target_shape else size != known):
            raise ValueError(f"The total size of the tensor must be unchanged. Received: input_shape="
                             f"{tuple(inputs.shape.as_list()[1:])}, target_shape={self.target_shape}")
        target = self.target_shape
        if -1 in target and size is not None:  # resolved here, so that the batch axis can be the -1
            target = tuple(size // known if d == -1 else d for d in target)
        if -1 not in target:
            return tf.reshape(inputs, [-1, *target])
        return tf.reshape(inputs, [tf.shape(inputs)[0], *target])


class Permute(Layer):
    """Permutes the axes of each example: `dims` counts from 1 (`tf.keras.layers.Permute`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Permute((2, 1))(tf.ones([2, 3, 4])).shape
    TensorShape([2, 4, 3])
    """

    _built_at_init = True

    def __init__(self, dims: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={dims}")

    def call(self, inputs: Any) -> Any:
        return tf.transpose(inputs, [0, *self.dims])


class RepeatVector(Layer):
    """Repeats each example vector `n` times: (batch, features) -> (batch, n, features)
    (`tf.keras.layers.RepeatVector`)."""

    _built_at_init = True

    def __init__(self, n: int, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(n, int | np.integer):
            raise TypeError(f"Expected an integer value for `n`, got {type(n)}.")
        self.n = int(n)

    def call(self, inputs: Any) -> Any:
        if inputs.shape.rank != 2:
            raise ValueError(f"Input of RepeatVector must be 2-D (batch, features). Received: input_shape={inputs.shape}")
        return tf.tile(tf.expand_dims(inputs, 1), [1, self.n, 1])


class Lambda(Layer):
    """Wraps a function of tensors as a layer (`tf.keras.layers.Lambda`): `function(inputs, **arguments)`, also
    given `mask` and `training` when it takes them.

    >>> import tapejax as tf
    >>> tf.keras.layers.Lambda(lambda x: x * 2)(tf.ones([1, 2])).numpy()
    array([[2., 2.]], dtype=float32)
    """

    _built_at_init = True

    def __init__(self, function: Any, output_shape: Any = None, mask: Any = None, arguments: dict | None = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.function, self.arguments, self._mask = function, dict(arguments or {}), mask
        self._output_shape_arg = output_shape
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            parameters = {}
        self._fn_takes = {name for name in ("mask", "training") if name in parameters}

    def call(self, inputs: Any, mask: Any = None, training: Any = None) -> Any:
        kwargs = dict(self.arguments)
        if "mask" in self._fn_takes:
            kwargs["mask"] = mask
        if "training" in self._fn_takes:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return self._mask(inputs, mask) if callable(self._mask) else self._mask


class _Spatial(Layer):
    """A layer over the spatial axes of channels-last or channels-first inputs."""

    _built_at_init = True
    rank = 2

    def _spatial_axes(self) -> list[int]:
        first = 1 if getattr(self, "data_format", "channels_last") == "channels_last" else 2
        return list(range(first, first + self.rank))


class _UpSampling(_Spatial):
    def __init__(self, size: Any = 2, data_format: str | None = None, interpolation: str = "nearest",
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.size = tuple_of(size, self.rank, "size")
        self.data_format = _data_format(data_format)
        if interpolation not in ("nearest", "bilinear", "bicubic", "lanczos3", "lanczos5", "area"):
            raise ValueError(f"Invalid value for argument `interpolation`: {interpolation}")
        self.interpolation = interpolation

    def call(self, inputs: Any) -> Any:
        if self.interpolation != "nearest":  # Keras resizes with tf.image.resize (2-D only)
            x = inputs if self.data_format == "channels_last" else tf.transpose(inputs, [0, 2, 3, 1])
            height, width = x.shape[1], x.shape[2]
            resized = tf.image.resize(x, [height * self.size[0], width * self.size[1]], method=self.interpolation)
            if not x.dtype.is_floating:  # Keras 3 keeps integer images integers, rounded, as Resizing does
                from tapejax.keras.layers_preprocessing import _saturate
                resized = _saturate(tf.round(resized), x.dtype)
            return resized if self.data_format == "channels_last" else tf.transpose(resized, [0, 3, 1, 2])
        for axis, factor in zip(self._spatial_axes(), self.size):
            if factor != 1:
                inputs = tf.repeat(inputs, factor, axis=axis)
        return inputs


class UpSampling1D(_UpSampling):
    """Repeats each step `size` times (`tf.keras.layers.UpSampling1D`)."""

    rank = 1

    def __init__(self, size: int = 2, **kwargs: Any):
        super().__init__(size, **kwargs)


class UpSampling2D(_UpSampling):
    """Repeats rows and columns `size` times ("nearest"), or resizes ("bilinear") (`tf.keras.layers.UpSampling2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.UpSampling2D()(tf.ones([1, 3, 4, 2])).shape
    TensorShape([1, 6, 8, 2])
    """

    rank = 2


class UpSampling3D(_UpSampling):
    """Repeats along the three spatial axes (`tf.keras.layers.UpSampling3D`)."""

    rank = 3

    def __init__(self, size: Any = (2, 2, 2), data_format: str | None = None, **kwargs: Any):
        super().__init__(size, data_format, **kwargs)


def _pairs(value: Any, rank: int, what: str) -> tuple[tuple[int, int], ...]:
    """An int, `rank` ints (symmetric), or `rank` pairs, as `rank` (before, after) pairs."""
    if isinstance(value, int | np.integer):
        return ((int(value), int(value)),) * rank
    value = tuple(value)
    if rank == 1 and len(value) == 2 and all(isinstance(v, int | np.integer) for v in value):
        return ((int(value[0]), int(value[1])),)
    if len(value) != rank:
        raise ValueError(f"`{what}` should have {rank} elements. Received: {what}={value}.")
    return tuple(tuple_of(v, 2, what) if not isinstance(v, int | np.integer) else (int(v), int(v)) for v in value)


class _ZeroPadding(_Spatial):
    def __init__(self, padding: Any = 1, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, self.rank, "padding")
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        pads = [[0, 0]] * inputs.shape.rank
        for axis, pair in zip(self._spatial_axes(), self.padding):
            pads[axis] = list(pair)
        return tf.pad(inputs, pads)


class ZeroPadding1D(_ZeroPadding):
    """Zeros before and after the steps (`tf.keras.layers.ZeroPadding1D`)."""

    rank = 1

    def __init__(self, padding: Any = 1, **kwargs: Any):
        super().__init__(padding, **kwargs)


class ZeroPadding2D(_ZeroPadding):
    """Zeros around the rows and columns (`tf.keras.layers.ZeroPadding2D`): an int, (rows, columns), or
    ((top, bottom), (left, right)).

    >>> import tapejax as tf
    >>> tf.keras.layers.ZeroPadding2D(((1, 0), (2, 3)))(tf.ones([1, 3, 3, 1])).shape
    TensorShape([1, 4, 8, 1])
    """

    rank = 2

    def __init__(self, padding: Any = (1, 1), data_format: str | None = None, **kwargs: Any):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(_ZeroPadding):
    """Zeros around the three spatial axes (`tf.keras.layers.ZeroPadding3D`)."""

    rank = 3

    def __init__(self, padding: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None, **kwargs: Any):
        super().__init__(padding, data_format, **kwargs)


class _Cropping(_Spatial):
    def __init__(self, cropping: Any, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.cropping = _pairs(cropping, self.rank, "cropping")
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        slices = [slice(None)] * inputs.shape.rank
        for axis, (before, after) in zip(self._spatial_axes(), self.cropping):
            length = inputs.shape[axis]
            if length is not None and before + after >= length:
                raise ValueError(f"Values in `cropping` argument should be smaller than the corresponding spatial "
                                 f"dimension of the input. Received: input_shape={tuple(inputs.shape.as_list())}, "
                                 f"cropping={self.cropping}")
            slices[axis] = slice(before, -after if after else None)
        return inputs[tuple(slices)]


class Cropping1D(_Cropping):
    """Drops steps at the start and end (`tf.keras.layers.Cropping1D`)."""

    rank = 1

    def __init__(self, cropping: Any = (1, 1), **kwargs: Any):
        super().__init__(cropping, **kwargs)


class Cropping2D(_Cropping):
    """Drops rows and columns at the borders (`tf.keras.layers.Cropping2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Cropping2D(((1, 0), (2, 2)))(tf.ones([1, 5, 6, 1])).shape
    TensorShape([1, 4, 2, 1])
    """

    rank = 2

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: str | None = None, **kwargs: Any):
        super().__init__(cropping, data_format, **kwargs)


class Cropping3D(_Cropping):
    """Drops values at the borders of the three spatial axes (`tf.keras.layers.Cropping3D`)."""

    rank = 3

    def __init__(self, cropping: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None, **kwargs: Any):
        super().__init__(cropping, data_format, **kwargs)


