"""tf.keras.layers attention: Attention (dot-product, Luong), AdditiveAttention (Bahdanau) and
MultiHeadAttention, with Keras 3's weights (`query/kernel` of shape (dim, heads, key_dim), ...) and masks."""

from __future__ import annotations

import math
import string
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras import masks as _masks
from tapejax.keras.layers import Layer
from tapejax.keras.layers_activation import masked_softmax
from tapejax.keras.layers_einsum import EinsumDense


def _dropout(weights: Any, rate: float, seed: int | None) -> Any:
    """Dropout of attention weights (no sublayer: Keras's does not use up a layer name)."""
    if rate <= 0:
        return weights
    keep = tf.cast(tf.random.uniform(tf.shape(weights), seed=seed) >= rate, weights.dtype)
    return weights * keep / (1.0 - rate)


class _BaseAttention(Layer):
    """`softmax(scores(query, key)) @ value` over the value steps; masks and causal masking as Keras's."""

    supports_masking = True

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0,
                 seed: int | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.use_scale, self.score_mode, self.dropout, self.seed = use_scale, score_mode, dropout, seed

    def call(self, inputs: Any, mask: Any = None, training: Any = None, return_attention_scores: bool = False,
             use_causal_mask: bool = False) -> Any:
        if not isinstance(inputs, list | tuple) or len(inputs) not in (2, 3):
            raise ValueError(f"{type(self).__name__} layer must be called on a list of inputs, namely [query, "
                             f"value] or [query, value, key]. Received: inputs={inputs}.")
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) == 3 else value
        value_mask = mask[1] if isinstance(mask, list | tuple) and len(mask) > 1 else None
        scores = self._scores(query, key)
        if value_mask is not None:
            keep = tf.expand_dims(tf.cast(value_mask, tf.bool), -2)
        else:
            keep = None
        if use_causal_mask:
            n_q, n_v = scores.shape[-2], scores.shape[-1]
            causal = tf.cast(tf.linalg.band_part(tf.ones([1, n_q, n_v]), -1, 0), tf.bool)
            keep = causal if keep is None else tf.logical_and(keep, causal)
        if keep is not None:  # Keras: -1e9 where masked (65504 / -... for float16)
            scores = scores - 1e9 * (1.0 - tf.cast(keep, scores.dtype))
        weights = _dropout(tf.nn.softmax(scores, axis=-1), self.dropout if training else 0.0, self.seed)
        result = tf.matmul(weights, value)
        query_mask = mask[0] if isinstance(mask, list | tuple) else None
        if query_mask is not None:
            result = result * tf.expand_dims(tf.cast(query_mask, result.dtype), -1)
        return (result, weights) if return_attention_scores else result

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask[0] if isinstance(mask, list | tuple) else None


class Attention(_BaseAttention):
    """Dot-product attention (`tf.keras.layers.Attention`): scores `query @ key^T`, times a learned `scale`
    with `use_scale`; `score_mode="concat"` scores `tanh(query + key)` summed, times `concat_score_weight`.

    >>> import tapejax as tf
    >>> tf.keras.layers.Attention()([tf.ones([2, 3, 4]), tf.ones([2, 5, 4])]).shape
    TensorShape([2, 3, 4])
    """

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0,
                 seed: int | None = None, **kwargs: Any):
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of {{'dot', 'concat'}}. "
                             f"Received: score_mode={score_mode}")
        super().__init__(use_scale, score_mode, dropout, seed, **kwargs)

    def build(self, input_shape: Any) -> None:
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones")

    def _scores(self, query: Any, key: Any) -> Any:
        if self.score_mode == "dot":
            scores = tf.matmul(query, key, transpose_b=True)
            return scores * self.scale if self.use_scale else scores
        q, k = tf.expand_dims(query, -2), tf.expand_dims(key, -3)
        if self.use_scale:
            return self.concat_score_weight * tf.reduce_sum(tf.tanh(self.scale * (q + k)), axis=-1)
        return self.concat_score_weight * tf.reduce_sum(tf.tanh(q + k), axis=-1)


class AdditiveAttention(_BaseAttention):
    """Additive attention (`tf.keras.layers.AdditiveAttention`): scores `sum(scale * tanh(query + key))`."""

    _casts_integer_inputs = True  # Keras's tanh promotes integer inputs (uint8's query + key wraps first in TF)

    def __init__(self, use_scale: bool = True, dropout: float = 0.0, **kwargs: Any):
        super().__init__(use_scale, "concat", dropout, **kwargs)

    def build(self, input_shape: Any) -> None:
        if self.use_scale:
            dim = input_shape[0][-1] if isinstance(input_shape, list | tuple) else input_shape[-1]
            self.scale = self.add_weight(name="scale", shape=[dim], initializer="glorot_uniform")

    def _scores(self, query: Any, key: Any) -> Any:
        q, k = tf.expand_dims(query, -2), tf.expand_dims(key, -3)
        scale = self.scale if self.use_scale else 1.0
        return tf.reduce_sum(scale * tf.tanh(q + k), axis=-1)


def _projection(free: int, bound: int, output: int) -> tuple[str, str]:
    """Keras's einsum of a projection keeping `free` axes, contracting `bound` with the kernel, adding `output`:
    (equation, bias axes); (2, 1, 2) is "abc,cde->abde"."""
    kept, contracted, added = (string.ascii_lowercase[start:start + n] for start, n in
                               ((0, free), (free, bound), (free + bound, output)))
    return f"{kept}{contracted},{contracted}{added}->{kept}{added}", added


def _attention_equations(rank: int, axes: tuple[int, ...]) -> tuple[str, str]:
    """Keras's scores and combination einsums for projections of `rank` attending over `axes`: the other axes
    but the last (the heads among them) are batch axes, and the scores are (batch axes, query axes, key axes)."""
    target = string.ascii_lowercase[:rank]
    batch = [i for i in range(rank) if i not in axes and i != rank - 1]
    extra = iter(string.ascii_lowercase[rank:])
    source = "".join(target[i] if i in batch or i == rank - 1 else next(extra) for i in range(rank))
    product = "".join([target[i] for i in batch] + [target[i] for i in axes] + [source[i] for i in axes])
    return f"{source},{target}->{product}", f"{product},{source}->{target}"


class MultiHeadAttention(Layer):
    """Multi-head attention (`tf.keras.layers.MultiHeadAttention`): `mha(query, value, key=None,
    attention_mask=None, return_attention_scores=False, training=None, use_causal_mask=False)` over the steps
    (axis 1); the query, key and value masks of the inputs (Embedding(mask_zero=True)) are applied, as in Keras.
    As in Keras 3, the `value_mask=` and `key_mask=` arguments replace the inputs' masks, but `query_mask=` is
    ignored: the query's mask is always its own (Keras 3.15's call overwrites the argument). Its projections are
    EinsumDense layers named `query`, `key`, `value` and `attention_output`, each adding its own activity
    regularization loss, as in Keras.

    >>> import tapejax as tf
    >>> x = tf.ones([2, 4, 8])
    >>> tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(x, x).shape
    TensorShape([2, 4, 8])
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None, dropout: float = 0.0,
                 use_bias: bool = True, output_shape: Any = None, attention_axes: Any = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, seed: int | None = None, **kwargs: Any):
        for unsupported in ("sliding_window", "flash_attention", "use_gate"):
            if kwargs.pop(unsupported, None):
                raise NotImplementedError(f"tapejax's MultiHeadAttention does not implement `{unsupported}` yet.")
        super().__init__(**kwargs)  # Keras 3 gives the activity regularizer to the projections only
        self._attention_axes = None if attention_axes is None else tuple(
            int(a) for a in np.atleast_1d(attention_axes))
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias, self.seed = dropout, use_bias, seed
        self._output_shape_arg = output_shape
        self._sublayer_options = dict(
            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint)

    def _dense(self, name: str, equation: str, output_shape: list[Any], bias_axes: str) -> EinsumDense:
        return EinsumDense(equation, output_shape, bias_axes=bias_axes if self.use_bias else None, name=name,
                           dtype=self.dtype, **self._sublayer_options)

    def build(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> None:
        h = self.num_heads
        query_shape = tf.TensorShape(query_shape)
        value_shape = tf.TensorShape(value_shape or query_shape)
        key_shape = tf.TensorShape(key_shape or value_shape)
        out = self._output_shape_arg
        out = [query_shape[-1]] if out is None else ([out] if isinstance(out, int) else list(out))

        def projection(name: str, shape: tf.TensorShape, bound: int, output: list[Any]) -> EinsumDense:
            equation, bias_axes = _projection(shape.rank - 1, bound, len(output))
            return self._dense(name, equation, [None] * (shape.rank - 2) + output, bias_axes)

        self._query_dense = projection("query", query_shape, 1, [h, self.key_dim])
        self._key_dense = projection("key", key_shape, 1, [h, self.key_dim])
        self._value_dense = projection("value", value_shape, 1, [h, self.value_dim])
        self._output_dense = projection("attention_output", query_shape, 2, out)
        self._query_dense.build(query_shape)
        self._key_dense.build(key_shape)
        self._value_dense.build(value_shape)
        self._output_dense.build(tf.TensorShape([None] * (query_shape.rank - 1) + [h, self.value_dim]))
        rank = query_shape.rank + 1  # of the projections: (batch, ..., heads, dim)
        axes = tuple(range(1, rank - 2)) if self._attention_axes is None else tuple(
            a if a >= 0 else rank - 1 + a for a in self._attention_axes)  # Keras's normalisation of the axes
        self._attention_axes = axes
        self._dot_product_equation, self._combine_equation = _attention_equations(rank, axes)

    def _build_for_call(self, inputs: Any) -> None:
        pass  # built in `call`, which sees the value and key too

    def __call__(self, query: Any, value: Any = None, key: Any = None, **kwargs: Any) -> Any:
        if value is None:
            raise TypeError("MultiHeadAttention.call() missing 1 required positional argument: 'value'")
        return super().__call__(query, value, key, **kwargs)

    def call(self, query: Any, value: Any, key: Any = None, query_mask: Any = None, value_mask: Any = None,
             key_mask: Any = None, attention_mask: Any = None, return_attention_scores: bool = False,
             training: Any = None, use_causal_mask: bool = False) -> Any:
        key = value if key is None else key
        if not hasattr(self, "_query_dense"):
            with self._own_name_scope():
                self.build(query.shape, value.shape, key.shape)
        # Keras 3 takes the query's mask from the query tensor alone: an explicit `query_mask` is ignored
        query_mask = _masks.get_mask(query)
        value_mask = _masks.get_mask(value) if value_mask is None else value_mask
        key_mask = _masks.get_mask(key) if key_mask is None else key_mask
        mask = self._attention_mask(query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask)
        q, k, v = self._query_dense(query), self._key_dense(key), self._value_dense(value)
        scale = 1.0 / math.sqrt(float(self.key_dim))
        n_axes = len(self._attention_axes)
        scores_rank = q.shape.rank - 1 + n_axes
        if mask is not None:  # Keras: expanded before the query axes (over the heads, and batch-like axes)
            mask = tf.cast(mask, tf.bool)
            for _ in range(scores_rank - mask.shape.rank):
                mask = tf.expand_dims(mask, -2 * n_axes - 1)
        if q.shape.rank != 4:  # Keras 3's own path only, with the equations of the attention axes
            scores = tf.einsum(self._dot_product_equation, k, q * tf.cast(scale, q.dtype))
            weights = masked_softmax(scores, mask, list(range(scores_rank - n_axes, scores_rank)))
            dropped = _dropout(weights, self.dropout if training else 0.0, self.seed)
            output = self._output_dense(tf.einsum(self._combine_equation, dropped, v))
            return (output, weights) if return_attention_scores else output
        if not (self.dropout > 0.0 or return_attention_scores):
            # Keras 3's dot_product_attention: the scores scaled, masked positions set to -0.7 * float32's
            # largest (the gradient stops there); a row with every position masked averages the values.
            scores = tf.einsum("aecd,abcd->acbe", k, q) * tf.cast(scale, q.dtype)
            if mask is not None:
                large = -0.7 * (65500.0 if scores.dtype == tf.float16 else 3.38953e38)
                scores = tf.where(mask, scores, tf.cast(large, scores.dtype))
            weights = tf.nn.softmax(scores, axis=-1)
        else:
            # Keras 3's own path: the query scaled, then its Softmax layer's masking (a fully masked row is zeros)
            scores = tf.einsum("aecd,abcd->acbe", k, q * tf.cast(scale, q.dtype))
            weights = _dropout(masked_softmax(scores, mask), self.dropout if training else 0.0, self.seed)
        output = self._output_dense(tf.einsum("acbe,aecd->abcd", weights, v))
        return (output, weights) if return_attention_scores else output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """Keras 3: the output has the query's mask (padded query steps stay padded for the layers after)."""
        return mask

    def _attention_mask(self, query: Any, value: Any, query_mask: Any, value_mask: Any, key_mask: Any,
                        attention_mask: Any, use_causal_mask: bool) -> Any:
        """Keras's combined mask (batch, query steps, value steps): True where a query may attend a value."""
        mask = None
        if query_mask is not None:
            mask = tf.expand_dims(tf.cast(query_mask, tf.bool), -1)
        for extra in (value_mask, key_mask):
            if extra is not None:
                extra = tf.expand_dims(tf.cast(extra, tf.bool), -2)
                mask = extra if mask is None else tf.logical_and(mask, extra)
        if use_causal_mask:
            n_q, n_v = query.shape[1], value.shape[1]
            causal = tf.cast(tf.linalg.band_part(tf.ones([1, n_q, n_v]), -1, 0), tf.bool)
            mask = causal if mask is None else tf.logical_and(mask, causal)
        if attention_mask is not None:
            attention_mask = tf.cast(attention_mask, tf.bool)
            mask = attention_mask if mask is None else tf.logical_and(mask, attention_mask)
        return mask
