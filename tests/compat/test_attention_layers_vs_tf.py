"""Attention, AdditiveAttention and MultiHeadAttention against TF 2.21's Keras 3 from the same weights:
outputs, attention scores, gradients, masks (explicit, causal, from Embedding(mask_zero=True)), tf.function."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _inputs():
    rng = np.random.default_rng(31)
    return rng.normal(size=(2, 4, 6)).astype(np.float32), rng.normal(size=(2, 5, 6)).astype(np.float32)


@pytest.mark.parametrize("kwargs, call", [
    ({"num_heads": 2, "key_dim": 3}, {}),
    ({"num_heads": 3, "key_dim": 2, "value_dim": 4, "output_shape": 7}, {"return_attention_scores": True}),
    ({"num_heads": 2, "key_dim": 3, "use_bias": False}, {"use_causal_mask": True}),
    ({"num_heads": 2, "key_dim": 3}, {"attention_mask": np.tril(np.ones((2, 4, 5), bool), 1)}),
], ids=["plain", "scores and output_shape", "causal, no bias", "attention_mask"])
def test_multi_head_attention_agrees_with_keras(kwargs, call):
    query, value = _inputs()
    if call.get("use_causal_mask"):
        value = value[:, :4]
    layers = [tf.keras.layers.MultiHeadAttention(name="mha", **kwargs) for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(query, value)
    assert [w.path for w in layers[1].weights] == [w.path for w in layers[0].weights]
    layers[1].set_weights(layers[0].get_weights())
    results = []
    for tf, layer in zip((tf_real, tapejax), layers):
        q, v = tf.constant(query), tf.constant(value)
        with tf.GradientTape() as tape:
            tape.watch([q, v])
            out = layer(q, v, **call)
            outs = out if isinstance(out, tuple) else (out,)
            loss = tf.reduce_sum(outs[0] ** 2)
        results.append([o.numpy() for o in outs] + [g.numpy() for g in tape.gradient(loss, [q, v])])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    compiled = tapejax.function(lambda q, v: layers[1](q, v, **call))(query, value)
    compiled = compiled if isinstance(compiled, tuple) else (compiled,)
    np.testing.assert_allclose(compiled[0].numpy(), results[0][0], rtol=1e-4, atol=1e-5)


_IMAGE = np.random.default_rng(32).normal(size=(2, 3, 4, 5)).astype(np.float32)
_OTHER = np.random.default_rng(33).normal(size=(2, 2, 3, 5)).astype(np.float32)


@pytest.mark.parametrize("kwargs, inputs, call", [
    ({"attention_axes": (1, 2)}, (_IMAGE, _IMAGE), {}),
    ({"attention_axes": (1, 2), "output_shape": (2, 3)}, (_IMAGE, _OTHER), {"return_attention_scores": True}),
    ({"attention_axes": 2}, (_IMAGE, _IMAGE), {"attention_mask": np.random.default_rng(34).random((2, 3, 4, 4)) > 0.3}),
    ({"attention_axes": (2,), "dropout": 0.5}, (_IMAGE, _IMAGE), {"return_attention_scores": True}),
    ({}, (_IMAGE, _IMAGE), {}),
    ({"attention_axes": (-3, -2)}, (_IMAGE, _IMAGE), {}),
    ({"attention_axes": 1}, _inputs(), {"attention_mask": np.tril(np.ones((4, 5), bool), 1)}),
], ids=["two_axes", "two_axes_cross_scores_output_shape", "one_axis_masked", "dropout_in_inference",
        "rank4_default", "negative_axes", "rank3_axis1_mask_without_batch"])
def test_multi_head_attention_over_other_axes_agrees_with_keras(kwargs, inputs, call):
    # attention_axes: video/image attention over several axes, the other axes as batch axes
    layers = [tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, name="mha", **kwargs)
              for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(*inputs)
    assert [(w.path, tuple(w.shape)) for w in layers[1].weights] == [(w.path, tuple(w.shape)) for w in
                                                                      layers[0].weights]
    layers[1].set_weights(layers[0].get_weights())
    results = []
    for tf, layer in zip((tf_real, tapejax), layers):
        q, v = tf.constant(inputs[0]), tf.constant(inputs[1])
        with tf.GradientTape() as tape:
            tape.watch([q, v])
            out = layer(q, v, training=False, **call)
            loss = sum(tf.reduce_sum(t * tf.cos(t)) for t in tf.nest.flatten(out))
        results.append([t.numpy() for t in tf.nest.flatten(out)] +
                       [g.numpy() for g in tape.gradient(loss, [q, v] + layer.trainable_weights)])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, kwargs, call", [
    ("Attention", {}, {}), ("Attention", {"use_scale": True}, {"return_attention_scores": True}),
    ("Attention", {"score_mode": "concat"}, {"use_causal_mask": True}), ("AdditiveAttention", {}, {}),
    ("AdditiveAttention", {"use_scale": False}, {"mask": "value"}),
], ids=lambda v: str(v))
def test_attention_agrees_with_keras(name, kwargs, call):
    query, value = _inputs()
    if call.get("use_causal_mask"):
        value = value[:, :4]
    value_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)[:, :value.shape[1]]
    results, layers = [], []
    for tf in (tf_real, tapejax):
        layer = getattr(tf.keras.layers, name)(**kwargs)
        layer([tf.constant(query), tf.constant(value)])
        layers.append(layer)
    layers[1].set_weights([w + 0.5 for w in layers[0].get_weights()])
    layers[0].set_weights([w + 0.5 for w in layers[0].get_weights()])
    for tf, layer in zip((tf_real, tapejax), layers):
        options = dict(call)
        if options.get("mask") == "value":
            options["mask"] = [None, tf.constant(value_mask)]
        out = layer([tf.constant(query), tf.constant(value)], **options)
        results.append([o.numpy() for o in (out if isinstance(out, tuple | list) else [out])])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_transformer_block_with_padding_mask_agrees_with_keras():
    ids = np.array([[3, 1, 2, 0], [4, 2, 0, 0]], np.int32)
    models = {}
    for tf in (tf_real, tapejax):
        layers = tf.keras.layers
        inputs = tf.keras.Input(shape=(4,), dtype="int32")
        x = layers.Embedding(6, 8, mask_zero=True)(inputs)
        attended = layers.MultiHeadAttention(num_heads=2, key_dim=4)(x, x)
        x = layers.LayerNormalization()(layers.Add()([x, attended]))
        outputs = layers.Dense(3)(layers.GlobalAveragePooling1D()(x))
        models[tf] = tf.keras.Model(inputs, outputs)
    models[tapejax].set_weights(models[tf_real].get_weights())
    np.testing.assert_allclose(models[tapejax](ids).numpy(), models[tf_real](ids).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dropout, kwargs", [(0.0, {}), (0.0, {"return_attention_scores": True}),
                                             (0.1, {"training": False})], ids=["fast_path", "scores", "dropout"])
def test_fully_masked_query_rows_agree_with_keras(dropout, kwargs):
    # Keras 3 has two paths: without dropout or returned scores, dot_product_attention (a fully masked row averages
    # the values, and no gradient reaches its masked scores); otherwise its Softmax layer (the row is zeros).
    x0 = np.sin(np.arange(2 * 4 * 6, dtype=np.float32)).reshape(2, 4, 6) * 1.5
    attention_mask = np.array([[[1, 1, 0, 0]] * 2 + [[0, 0, 0, 0]] * 2] * 2, bool)
    weight = np.linspace(0.3, 1.7, x0.size, dtype=np.float32).reshape(x0.shape)
    results = []
    for tf in (tf_real, tapejax):
        layer = tf.keras.layers.MultiHeadAttention(2, 3, dropout=dropout)
        layer(tf.constant(x0), tf.constant(x0))
        for k, w in enumerate(layer.weights):
            w.assign(np.cos(np.arange(np.prod(w.shape)) + k).reshape(w.shape).astype(np.float32) * 0.5)
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = layer(x, x, attention_mask=tf.constant(attention_mask), **kwargs)
            y = out[0] if isinstance(out, tuple) else out
            loss = tf.reduce_sum(y * y * weight)
        grads = tape.gradient(loss, [x] + layer.trainable_weights)
        results.append([np.asarray(t) for t in (*(out if isinstance(out, tuple) else (out,)), *grads)])
    for got, expected in zip(*results[::-1]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_softmax_layer_zeroes_masked_positions_as_keras():
    logits = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    mask = np.array([[1, 1, 0], [0, 0, 0]], bool)
    got, expected = (tf.keras.layers.Softmax()(tf.constant(logits), mask=tf.constant(mask)).numpy()
                     for tf in (tapejax, tf_real))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert (got[1] == 0).all()


@pytest.mark.parametrize("merge", ["add", "concatenate"])
def test_merged_masks_reach_a_recurrent_layer_as_in_keras(merge):
    # Token embeddings (mask_zero) merged with embeddings with no mask, then an LSTM: Keras 3's Add has no mask
    # when an input has none, so the LSTM runs over every step; Concatenate joins its inputs' masks.
    ids = np.array([[3, 1, 0, 0], [2, 4, 1, 0]], np.int32)
    models = []
    for tf in (tf_real, tapejax):
        layers = tf.keras.layers
        inputs = tf.keras.Input(shape=(4,), dtype="int32")
        tokens = layers.Embedding(6, 5, mask_zero=True)(inputs)
        merged = (layers.Add() if merge == "add" else layers.Concatenate(axis=1))(
            [tokens, layers.Embedding(6, 5)(inputs)])
        models.append(tf.keras.Model(inputs, layers.LSTM(3)(merged)))
    weights = [np.cos(np.arange(w.size) + k).reshape(w.shape).astype(np.float32) * 0.4
               for k, w in enumerate(models[0].get_weights())]
    for model in models:
        model.set_weights(weights)
    np.testing.assert_allclose(np.asarray(models[1](ids)), np.asarray(models[0](ids)), rtol=1e-4, atol=1e-5)
