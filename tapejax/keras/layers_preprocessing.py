"""tf.keras.layers preprocessing: Rescaling, Resizing, CenterCrop, Normalization (with `adapt`), and the image
augmentations RandomFlip, RandomRotation, RandomZoom, RandomTranslation, RandomContrast.

The augmentations act only when training (`training=True`, as in `fit`), with JAX's random numbers (so not
TF's) under `tf.random.set_seed`; otherwise they return their input unchanged, as Keras does. Rotation, zoom and
translation resample the image through one affine map per image (bilinear or nearest), filling outside points
by `fill_mode` ("reflect", "wrap", "constant", "nearest") as Keras's `affine_transform` does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.layers import Layer
from tapejax.keras.layers_util import data_format as _data_format


class Rescaling(Layer):
    """`inputs * scale + offset`, in the layer's float dtype (`tf.keras.layers.Rescaling`).

    >>> import tapejax as tf
    >>> tf.keras.layers.Rescaling(1 / 255)(tf.constant([[0.0, 255.0]])).numpy()
    array([[0., 1.]], dtype=float32)
    """

    _built_at_init = True
    _casts_integer_inputs = True

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs: Any) -> Any:
        return inputs * tf.cast(self.scale, self.dtype) + tf.cast(self.offset, self.dtype)


def _as_tensor(inputs: Any, dtype: tf.DType) -> Any:
    """A tensor as it is (`Layer._convert_input` cast it already); nested lists in `dtype`, as Keras's ops cast."""
    return inputs if isinstance(inputs, tf.Tensor | tf.Variable) else tf.cast(inputs, dtype)


def _images_last(inputs: Any, data_format: str) -> tuple[Any, bool]:
    """Channels-last images with a batch axis, and whether one was added."""
    x = inputs if data_format == "channels_last" else tf.transpose(
        inputs, [0, 2, 3, 1] if inputs.shape.rank == 4 else [1, 2, 0])
    if x.shape.rank == 3:
        return tf.expand_dims(x, 0), True
    return x, False


def _images_back(x: Any, data_format: str, added: bool) -> Any:
    if added:
        x = x[0]
    if data_format == "channels_last":
        return x
    return tf.transpose(x, [0, 3, 1, 2] if x.shape.rank == 4 else [2, 0, 1])


class Resizing(Layer):
    """Resizes images to (height, width) with `tf.image.resize` (`tf.keras.layers.Resizing`);
    `crop_to_aspect_ratio` crops the largest centred window of the target's aspect ratio first.

    Integer images keep their dtype, as in Keras 3: resampled in the layer's float dtype, then rounded half to
    even and clipped to the dtype's range ("nearest" copies the integers exactly).

    >>> import numpy as np, tapejax as tf
    >>> tf.keras.layers.Resizing(1, 8)(np.array([0, 2, 4, 6], np.uint8).reshape(1, 1, 4, 1)).numpy().ravel()
    array([0, 0, 2, 2, 4, 4, 6, 6], dtype=uint8)

    Differences from TensorFlow:
      An int32 or int64 result that reaches 2**31 (2**63) in float32 is clipped to the largest float32 below it;
      TF's cast makes it the dtype's minimum. Where the float resample lies within an ulp of a half, the rounding
      can differ by 1 (`tf.image.resize` computes with one weight matrix per axis, not TF's kernels' arithmetic).
    """

    _built_at_init = True

    def __init__(self, height: int, width: int, interpolation: str = "bilinear", crop_to_aspect_ratio: bool = False,
                 pad_to_aspect_ratio: bool = False, fill_mode: str = "constant", fill_value: float = 0.0,
                 antialias: bool = False, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.height, self.width, self.interpolation = int(height), int(width), interpolation
        self.crop_to_aspect_ratio, self.antialias = crop_to_aspect_ratio, antialias
        if pad_to_aspect_ratio:
            raise NotImplementedError("tapejax's Resizing does not implement pad_to_aspect_ratio yet.")
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        x, added = _images_last(tf.convert_to_tensor(inputs), self.data_format)  # a nested list keeps its dtype
        if self.crop_to_aspect_ratio:
            x = _aspect_crop(x, self.height, self.width)
        size = [self.height, self.width]
        if x.dtype.is_integer and self.interpolation == "nearest":
            return _images_back(tf.image.resize(x, size, method="nearest"), self.data_format, added)
        # A float input has the layer's dtype already (`_convert_input`); resize makes float32 of other dtypes.
        y = tf.image.resize(x if x.dtype == self.dtype else tf.cast(x, self.dtype), size, method=self.interpolation,
                            antialias=self.antialias)
        if x.dtype.is_integer:
            return _images_back(_saturate(tf.round(y), x.dtype), self.data_format, added)
        return _images_back(y if y.dtype == self.dtype else tf.cast(y, self.dtype), self.data_format, added)


def _saturate(x: Any, dtype: tf.DType) -> Any:
    """Float `x` cast to the integer `dtype`, clipped first to the dtype's range as `x`'s dtype holds it (the
    largest float below int32's maximum is 2**31 - 128)."""
    info, floating = np.iinfo(dtype.as_numpy_dtype), x.dtype.as_numpy_dtype
    low, high = np.array(info.min, floating), np.array(info.max, floating)
    if int(high) > info.max:
        high = np.nextafter(high, floating(0))
    return tf.cast(tf.clip_by_value(x, low, high), dtype)


class CenterCrop(Layer):
    """Crops the centre (height, width) window of images, resizing up first if they are smaller
    (`tf.keras.layers.CenterCrop`); integer images come out in the layer's float dtype, as in Keras 3."""

    _built_at_init = True
    _casts_integer_inputs = True

    def __init__(self, height: int, width: int, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.height, self.width = int(height), int(width)
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        x, added = _images_last(_as_tensor(inputs, self.dtype), self.data_format)
        h, w = x.shape[1], x.shape[2]
        if h < self.height or w < self.width:  # Keras resizes (cropped to the aspect ratio) instead
            x = tf.image.resize(_aspect_crop(x, self.height, self.width), [self.height, self.width])
            return _images_back(x, self.data_format, added)
        top, left = (h - self.height) // 2, (w - self.width) // 2
        return _images_back(x[:, top:top + self.height, left:left + self.width], self.data_format, added)


def _aspect_crop(x: Any, height: int, width: int) -> Any:
    """The largest centred window of the batched channels-last images `x` with the aspect ratio of (height,
    width), sized as Keras 3 sizes it: `w * height / width` rows in float32, truncated (not rounded), at least 1;
    the columns alike."""
    h, w = x.shape[1], x.shape[2]
    crop_h = max(1, min(h, int(np.float32(w * height) / np.float32(width))))
    crop_w = max(1, min(w, int(np.float32(h * width) / np.float32(height))))
    top, left = (h - crop_h) // 2, (w - crop_w) // 2
    return x[:, top:top + crop_h, left:left + crop_w]


class Normalization(Layer):
    """`(inputs - mean) / sqrt(variance)` per feature along `axis` (`tf.keras.layers.Normalization`): the
    statistics are given, or learned from data by `adapt` (arrays, tensors or a tf.data dataset); `invert`
    maps back.

    >>> import numpy as np, tapejax as tf
    >>> layer = tf.keras.layers.Normalization()
    >>> layer.adapt(np.array([[0.0], [2.0]], np.float32))
    >>> layer(tf.constant([[1.0], [3.0]])).numpy()
    array([[0.],
           [2.]], dtype=float32)
    """

    _casts_integer_inputs = True

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None, invert: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis or ())
        if (mean is None) != (variance is None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be set. Received: "
                             f"mean={mean} and variance={variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert

    def _stat_shape(self, input_shape: tf.TensorShape) -> list[int]:
        rank = input_shape.rank
        axes = {a % rank for a in self.axis}
        return [int(input_shape[a]) if a in axes else 1 for a in range(rank)]

    def build(self, input_shape: tf.TensorShape) -> None:
        shape = self._stat_shape(tf.TensorShape(input_shape))
        if self.input_mean is not None:
            self.mean = tf.constant(np.broadcast_to(np.asarray(self.input_mean, np.float32), shape))
            self.variance = tf.constant(np.broadcast_to(np.asarray(self.input_variance, np.float32), shape))
        else:
            size = [d for d, a in zip(shape, range(len(shape))) if a in {x % len(shape) for x in self.axis}]
            self.adapt_mean = self.add_weight(name="mean", shape=size, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=size, initializer="ones", trainable=False)
            self.add_weight(name="count", shape=(), dtype=tf.int64, initializer="zeros", trainable=False)
            self._shape = shape

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        """Sets the mean and variance to those of `data` over every axis but `axis`."""
        if hasattr(data, "as_numpy_iterator"):
            batches = list(data.as_numpy_iterator())
            if steps is not None:
                batches = batches[:steps]
            values = np.concatenate([np.asarray(b) for b in batches], axis=0)
        else:
            values = np.asarray(data)
        values = values.astype(np.float64)
        if not self.built:
            self.input_mean = None
            with self._own_name_scope():
                self.build(tf.TensorShape(values.shape))
            self.built = True
        rank = values.ndim
        axes = tuple(a for a in range(rank) if a not in {x % rank for x in self.axis})
        self.adapt_mean.assign(np.mean(values, axis=axes).reshape(self.adapt_mean.shape).astype(np.float32))
        self.adapt_variance.assign(np.var(values, axis=axes).reshape(self.adapt_variance.shape).astype(np.float32))
        self.weights[-1].assign(np.int64(values.size // max(1, int(np.prod(self.adapt_mean.shape)))))

    def _stats(self) -> tuple[Any, Any]:
        if self.input_mean is not None:
            return self.mean, self.variance
        return tf.reshape(self.adapt_mean, self._shape), tf.reshape(self.adapt_variance, self._shape)

    def call(self, inputs: Any) -> Any:
        mean, variance = self._stats()
        if self.invert:
            return mean + inputs * tf.maximum(tf.sqrt(variance), 1e-7)
        return (inputs - mean) / tf.maximum(tf.sqrt(variance), 1e-7)


class _RandomImage(Layer):
    """An augmentation of images: `augment` when training, the inputs (integers cast) otherwise."""

    _built_at_init = True
    _casts_integer_inputs = True

    def __init__(self, seed: int | None = None, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.seed, self.data_format = seed, _data_format(data_format)

    def call(self, inputs: Any, training: bool = True) -> Any:
        inputs = _as_tensor(inputs, self.dtype)
        if not training:
            return inputs
        images, added = _images_last(inputs, self.data_format)
        return _images_back(self.augment(images), self.data_format, added)


class RandomFlip(_RandomImage):
    """Flips each image left-right and/or up-down with probability 1/2 (`tf.keras.layers.RandomFlip`)."""

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None, **kwargs: Any):
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {kwargs.get('name')} received an unknown mode argument {mode}")
        super().__init__(seed, **kwargs)
        self.mode = mode

    def augment(self, images: Any) -> Any:
        batch = images.shape[0]
        for axis, flag in ((2, "horizontal"), (1, "vertical")):
            if flag in self.mode:
                flip = tf.reshape(tf.random.uniform([batch], seed=self.seed) < 0.5, [batch, 1, 1, 1])
                images = tf.where(flip, tf.reverse(images, [axis]), images)
        return images


class RandomContrast(_RandomImage):
    """Scales each image's contrast about its per-channel mean by a factor in [1 - lower, 1 + upper], clipped
    to `value_range` (`tf.keras.layers.RandomContrast`)."""

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None, **kwargs: Any):
        super().__init__(seed, **kwargs)
        self.lower, self.upper = (factor, factor) if isinstance(factor, int | float) else tuple(factor)
        self.value_range = tuple(value_range)

    def augment(self, images: Any) -> Any:
        batch = images.shape[0]
        factor = tf.random.uniform([batch, 1, 1, 1], 1.0 - self.lower, 1.0 + self.upper, seed=self.seed)
        mean = tf.reduce_mean(images, axis=[1, 2], keepdims=True)
        return tf.clip_by_value((images - mean) * factor + mean, *[float(v) for v in self.value_range])


def _factor_pair(factor: Any, name: str) -> tuple[float, float]:
    if isinstance(factor, int | float):
        return -abs(float(factor)), abs(float(factor))
    lower, upper = (float(f) for f in factor)
    if lower > upper:
        raise ValueError(f"`{name}` lower bound {lower} must not exceed its upper bound {upper}.")
    return lower, upper


def _map_coordinate(c: Any, size: int, mode: str) -> Any:
    """Where a continuous sampling coordinate outside [0, size - 1] reads, by TF's fill-mode rules (applied
    before interpolation, as TF's ImageProjectiveTransform kernel does)."""
    if mode == "constant":
        return c
    if mode == "nearest" or size <= 1:
        return tf.clip_by_value(c, 0.0, size - 1.0) if size > 1 else tf.zeros_like(c)
    trunc = lambda v: tf.cast(tf.cast(v, tf.int32), c.dtype)  # C's (int) cast
    if mode == "reflect":  # (d c b a | a b c d | d c b a), about the pixel edges
        period = 2.0 * size
        low = tf.where(c < -period, period * trunc(-c / period) + c, c)
        low = tf.where(low < -size, low + period, -low - 1.0)
        high = c - period * trunc(c / period)
        high = tf.where(high >= size, period - high - 1.0, high)
        mapped = tf.where(c < 0, low, tf.where(c > size - 1, high, c))
    else:  # wrap: (a b c d | a b c d | a b c d)
        low = c + size * (trunc(-c / (size - 1.0)) + 1.0)  # TF's kernel divides by size - 1 here
        high = c - size * trunc(c / (size - 1.0))
        mapped = tf.where(c < 0, low, tf.where(c > size - 1, high, c))
    return tf.clip_by_value(mapped, 0.0, size - 1.0)


class _RandomAffine(_RandomImage):
    """Resamples each image through an affine map drawn per image (`transforms`, output -> input pixel)."""

    def __init__(self, fill_mode: str = "reflect", interpolation: str = "bilinear", seed: int | None = None,
                 fill_value: float = 0.0, **kwargs: Any):
        if fill_mode not in ("reflect", "wrap", "constant", "nearest"):
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one ['reflect', 'wrap', "
                                      "'constant', 'nearest'].")
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one ['nearest', "
                                      "'bilinear'].")
        super().__init__(seed, **kwargs)
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, float(fill_value)

    def augment(self, images: Any) -> Any:
        batch, height, width = images.shape[0], images.shape[1], images.shape[2]
        a = self.transforms(batch, height, width)  # (batch, 6): x_in = a0 x + a1 y + a2, y_in = a3 x + a4 y + a5
        ys, xs = np.meshgrid(np.arange(height, dtype=np.float32), np.arange(width, dtype=np.float32), indexing="ij")
        xs, ys = tf.constant(xs.reshape(1, -1)), tf.constant(ys.reshape(1, -1))
        column = lambda i: a[:, i:i + 1]
        x_in = column(0) * xs + column(1) * ys + column(2)
        y_in = column(3) * xs + column(4) * ys + column(5)
        return tf.reshape(self._sample(images, x_in, y_in), tf.shape(images))

    def _sample(self, images: Any, x: Any, y: Any) -> Any:
        batch, height, width, channels = images.shape.as_list()
        flat = tf.reshape(images, [batch, height * width, channels])
        x, y = _map_coordinate(x, width, self.fill_mode), _map_coordinate(y, height, self.fill_mode)

        def read(xi: Any, yi: Any) -> Any:  # integer-valued coordinates; fill_value outside the image
            inside = (xi >= 0) & (xi <= width - 1) & (yi >= 0) & (yi <= height - 1)
            xc = tf.cast(tf.clip_by_value(xi, 0.0, width - 1.0), tf.int32)
            yc = tf.cast(tf.clip_by_value(yi, 0.0, height - 1.0), tf.int32)
            values = tf.gather(flat, yc * width + xc, batch_dims=1)
            return tf.where(tf.expand_dims(inside, -1), values, tf.cast(self.fill_value, values.dtype))

        if self.interpolation == "nearest":  # C's round: halves away from zero
            half_away = lambda v: tf.sign(v) * tf.floor(tf.abs(v) + 0.5)
            return read(half_away(x), half_away(y))
        x0, y0 = tf.floor(x), tf.floor(y)
        wx, wy = tf.expand_dims(x - x0, -1), tf.expand_dims(y - y0, -1)
        top = read(x0, y0) * (1 - wx) + read(x0 + 1, y0) * wx
        bottom = read(x0, y0 + 1) * (1 - wx) + read(x0 + 1, y0 + 1) * wx
        return top * (1 - wy) + bottom * wy


class RandomRotation(_RandomAffine):
    """Rotates each image by a random fraction of a full turn in `factor` (`tf.keras.layers.RandomRotation`)."""

    def __init__(self, factor: Any, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: int | None = None, fill_value: float = 0.0, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.factor = factor
        self.lower, self.upper = _factor_pair(factor, "factor")

    def transforms(self, batch: int, height: int, width: int) -> Any:
        angle = tf.random.uniform([batch], self.lower * 2 * math.pi, self.upper * 2 * math.pi, seed=self.seed)
        cos, sin = tf.cos(angle), tf.sin(angle)
        cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
        return tf.stack([cos, -sin, cx - cos * cx + sin * cy, sin, cos, cy - sin * cx - cos * cy], axis=1)


class RandomZoom(_RandomAffine):
    """Zooms each image in or out by a random factor of its height (and width) (`tf.keras.layers.RandomZoom`):
    a negative factor zooms in."""

    def __init__(self, height_factor: Any, width_factor: Any = None, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None, fill_value: float = 0.0, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_range = _factor_pair(height_factor, "height_factor")
        self.width_range = None if width_factor is None else _factor_pair(width_factor, "width_factor")

    def transforms(self, batch: int, height: int, width: int) -> Any:
        zy = 1.0 + tf.random.uniform([batch], *self.height_range, seed=self.seed)
        zx = zy if self.width_range is None else 1.0 + tf.random.uniform([batch], *self.width_range, seed=self.seed)
        cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
        zeros = tf.zeros([batch])
        return tf.stack([zx, zeros, cx - zx * cx, zeros, zy, cy - zy * cy], axis=1)


class RandomTranslation(_RandomAffine):
    """Shifts each image by random fractions of its height and width (`tf.keras.layers.RandomTranslation`)."""

    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None, fill_value: float = 0.0, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_range = _factor_pair(height_factor, "height_factor")
        self.width_range = _factor_pair(width_factor, "width_factor")
        for value in (*self.height_range, *self.width_range):
            if not -1.0 <= value <= 1.0:
                raise ValueError("The `factor` argument should be a number (or a list of two numbers) in the range "
                                 f"[-1.0, 1.0]. Received: input_number={value}")

    def transforms(self, batch: int, height: int, width: int) -> Any:
        dy = tf.random.uniform([batch], *self.height_range, seed=self.seed) * height
        dx = tf.random.uniform([batch], *self.width_range, seed=self.seed) * width
        ones, zeros = tf.ones([batch]), tf.zeros([batch])
        return tf.stack([ones, zeros, -dx, zeros, ones, -dy], axis=1)
