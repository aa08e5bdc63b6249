"""tf.keras.layers pooling: max and average pooling in 1-D, 2-D and 3-D, their global forms, and Keras's aliases
(`MaxPool2D`, `GlobalAvgPool2D`, ...), on `tf.nn.max_pool1d/2d/3d` and `avg_pool1d/2d/3d`."""

from __future__ import annotations

from typing import Any

import tapejax as tf
from tapejax.keras.layers import Layer
from tapejax.keras.layers_util import data_format as _data_format
from tapejax.keras.layers_util import from_channels_last, padding_mode, to_channels_last, tuple_of

_MAX = {1: tf.nn.max_pool1d, 2: tf.nn.max_pool2d, 3: tf.nn.max_pool3d}
_AVERAGE = {1: tf.nn.avg_pool1d, 2: tf.nn.avg_pool2d, 3: tf.nn.avg_pool3d}


class _Pooling(Layer):
    """A window of `pool_size` moved by `strides` (default: `pool_size`); with "same" padding, an average at
    the border covers only the inputs in its window, as in TF."""

    _built_at_init = True
    rank = 2
    _ops = _MAX

    def __init__(self, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: str | None = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.pool_size = tuple_of(pool_size, self.rank, "pool_size")
        self.strides = self.pool_size if strides is None else tuple_of(strides, self.rank, "strides")
        self.padding = padding_mode(padding)
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        op = type(self)._ops[self.rank]
        outputs = op(to_channels_last(inputs, self.data_format), ksize=list(self.pool_size),
                     strides=list(self.strides), padding=self.padding.upper())
        return from_channels_last(outputs, self.data_format)


def _pooling(name: str, rank: int, ops: dict, default: Any, doc: str) -> type[_Pooling]:
    def __init__(self, pool_size: Any = default, strides: Any = None, padding: str = "valid",
                 data_format: str | None = None, **kwargs: Any):
        if pool_size is None:
            raise TypeError(f"{name}.__init__() missing 1 required positional argument: 'pool_size'")
        _Pooling.__init__(self, pool_size, strides, padding, data_format, **kwargs)
    return type(name, (_Pooling,), {"rank": rank, "_ops": ops, "__init__": __init__, "__doc__": doc,
                                    "__module__": __name__})


# Keras 3: max pooling's window defaults to 2 per axis; average pooling's is required.
MaxPooling1D = _pooling("MaxPooling1D", 1, _MAX, 2, "The maximum over each window of steps (`tf.keras.layers.MaxPooling1D`).")
MaxPooling2D = _pooling("MaxPooling2D", 2, _MAX, (2, 2), """The maximum over each window (`tf.keras.layers.MaxPooling2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.MaxPooling2D()(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 2, 2, 3])
    """)
MaxPooling3D = _pooling("MaxPooling3D", 3, _MAX, (2, 2, 2), "The maximum over each window (`tf.keras.layers.MaxPooling3D`).")
AveragePooling1D = _pooling("AveragePooling1D", 1, _AVERAGE, None,
                            "The mean over each window of steps (`tf.keras.layers.AveragePooling1D`).")
AveragePooling2D = _pooling("AveragePooling2D", 2, _AVERAGE, None, """The mean over each window
    (`tf.keras.layers.AveragePooling2D`); `pool_size` is required, as in Keras 3.

    >>> import tapejax as tf
    >>> tf.keras.layers.AveragePooling2D(2, padding="same")(tf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 3])
    """)
AveragePooling3D = _pooling("AveragePooling3D", 3, _AVERAGE, None,
                            "The mean over each window (`tf.keras.layers.AveragePooling3D`).")


class _GlobalPooling(Layer):
    """The mean or maximum over every spatial axis; `keepdims` keeps them as size 1."""

    _built_at_init = True
    rank = 2
    _reduce = staticmethod(tf.reduce_mean)

    def __init__(self, data_format: str | None = None, keepdims: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format, self.keepdims = _data_format(data_format), keepdims

    def _axes(self) -> list[int]:
        return list(range(1, self.rank + 1)) if self.data_format == "channels_last" else list(
            range(2, self.rank + 2))

    def call(self, inputs: Any) -> Any:
        return type(self)._reduce(inputs, axis=self._axes(), keepdims=self.keepdims)


class _GlobalAveraging(_GlobalPooling):
    """The mean over every spatial axis: of integers too, in the layer's float dtype, as in Keras 3 (TF's
    average pooling kernels take only floats, so `AveragePooling*D` rejects integers there as here)."""

    _casts_integer_inputs = True


class GlobalAveragePooling1D(_GlobalAveraging):
    """The mean over the steps (`tf.keras.layers.GlobalAveragePooling1D`); masked steps are left out.

    >>> import tapejax as tf
    >>> tf.keras.layers.GlobalAveragePooling1D()(tf.ones([2, 5, 3])).shape
    TensorShape([2, 3])
    """

    rank = 1
    supports_masking = True

    def call(self, inputs: Any, mask: Any = None) -> Any:
        if mask is None:
            return super().call(inputs)
        weights = tf.cast(mask, inputs.dtype)
        weights = tf.expand_dims(weights, 2 if self.data_format == "channels_last" else 1)
        axis = self._axes()
        return (tf.reduce_sum(inputs * weights, axis=axis, keepdims=self.keepdims)
                / tf.reduce_sum(weights, axis=axis, keepdims=self.keepdims))

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None


class GlobalAveragePooling2D(_GlobalAveraging):
    """The mean over the spatial axes (`tf.keras.layers.GlobalAveragePooling2D`).

    >>> import tapejax as tf
    >>> tf.keras.layers.GlobalAveragePooling2D()(tf.ones([2, 5, 5, 3])).shape
    TensorShape([2, 3])
    """

    rank = 2


class GlobalAveragePooling3D(_GlobalAveraging):
    """The mean over the spatial axes (`tf.keras.layers.GlobalAveragePooling3D`)."""

    rank = 3


class GlobalMaxPooling1D(_GlobalPooling):
    """The maximum over the steps (`tf.keras.layers.GlobalMaxPooling1D`)."""

    rank = 1
    _reduce = staticmethod(tf.reduce_max)


class GlobalMaxPooling2D(_GlobalPooling):
    """The maximum over the spatial axes (`tf.keras.layers.GlobalMaxPooling2D`)."""

    rank = 2
    _reduce = staticmethod(tf.reduce_max)


class GlobalMaxPooling3D(_GlobalPooling):
    """The maximum over the spatial axes (`tf.keras.layers.GlobalMaxPooling3D`)."""

    rank = 3
    _reduce = staticmethod(tf.reduce_max)


# Keras's aliases (`MaxPool2D` is MaxPooling2D itself).
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (GlobalAveragePooling1D, GlobalAveragePooling2D,
                                                     GlobalAveragePooling3D)
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D
