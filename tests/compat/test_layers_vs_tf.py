"""Dense and BatchNormalization in tapejax and in TensorFlow's Keras, from the same weights."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _copy_weights(source_layer, target_layer):
    for s, t in zip(source_layer.weights, target_layer.weights):
        t.assign(np.asarray(s))


@pytest.mark.parametrize("training", [True, False])
def test_dense_and_batch_normalization_agree(training):
    x0 = np.random.default_rng(0).normal(size=(8, 5)).astype(np.float32)
    results = []
    layers = {}
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        dense = tf.keras.layers.Dense(6, activation="elu")
        bn = tf.keras.layers.BatchNormalization()
        x = tf.constant(x0)
        dense(x), bn(dense(x), training=False)  # build
        layers[name] = (dense, bn)
    for source, target in zip(layers["tensorflow"], layers["tapejax"]):
        _copy_weights(source, target)
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        dense, bn = layers[name]
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            y = bn(dense(x), training=training)
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, dense.trainable_variables + bn.trainable_variables)
        results.append((y.numpy(), [g.numpy() for g in grads], bn.moving_mean.numpy(), bn.moving_variance.numpy()))
    (y_tf, g_tf, mm_tf, mv_tf), (y_tj, g_tj, mm_tj, mv_tj) = results
    np.testing.assert_allclose(y_tj, y_tf, rtol=1e-4, atol=1e-5)
    for got, expected in zip(g_tj, g_tf):
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(mm_tj, mm_tf, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv_tj, mv_tf, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("make, input_shape", [
    (lambda tf: tf.keras.layers.Flatten(), (3, 2, 4)),
    (lambda tf: tf.keras.layers.Activation("tanh"), (3, 2, 4)),
    (lambda tf: tf.keras.layers.LayerNormalization(), (3, 2, 4)),
    (lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(2)]),
     (3, 8)),
], ids=["Flatten", "Activation", "LayerNormalization", "Sequential"])
def test_layers_agree_with_tensorflow(make, input_shape):
    x0 = np.random.default_rng(2).normal(size=input_shape).astype(np.float32)
    layers = {name: make(tf) for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax))}
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        layers[name](tf.constant(x0))
    _copy_weights(layers["tensorflow"], layers["tapejax"])
    outs = []
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layers[name](x)
            loss = tf.reduce_sum(y * y)
        outs.append((y.numpy(), tape.gradient(loss, x).numpy()))
    for got, expected in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_embedding_agrees_with_tensorflow():
    ids = np.array([[0, 3], [2, 2]], np.int32)
    table = np.random.default_rng(3).normal(size=(4, 5)).astype(np.float32)
    results = []
    for tf in (tf_real, tapejax):
        layer = tf.keras.layers.Embedding(4, 5)
        layer(tf.constant(ids))
        layer.embeddings.assign(table)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(tf.constant(ids)) ** 2)
        grad = tape.gradient(loss, layer.embeddings)
        results.append((layer(tf.constant(ids)).numpy(), tf.convert_to_tensor(grad).numpy()))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_dropout_scales_what_it_keeps_and_is_seeded():
    x = tapejax.ones([1000])
    layer = tapejax.keras.layers.Dropout(0.25)
    tapejax.random.set_seed(5)
    a = layer(x, training=True).numpy()
    tapejax.random.set_seed(5)
    b = layer(x, training=True).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)} and 0.15 < np.mean(a == 0) < 0.35
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x.numpy())


LOSSES = [
    ("MeanSquaredError", {}, "regression"),
    ("MeanAbsoluteError", {}, "regression"),
    ("BinaryCrossentropy", {}, "binary"),
    ("BinaryCrossentropy", {"from_logits": True}, "binary_logits"),
    ("CategoricalCrossentropy", {}, "categorical"),
    ("CategoricalCrossentropy", {"from_logits": True}, "logits"),
    ("SparseCategoricalCrossentropy", {}, "sparse"),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits"),
    ("MeanSquaredError", {"reduction": "sum"}, "regression"),
    ("CategoricalCrossentropy", {"from_logits": True, "reduction": "none"}, "logits"),
]


def _loss_inputs(kind):
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(6, 3)).astype(np.float32)
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    labels = rng.integers(0, 3, size=(6,)).astype(np.int32)
    one_hot = np.eye(3, dtype=np.float32)[labels]
    binary = (rng.random((6, 3)) > 0.5).astype(np.float32)
    return {"regression": (rng.normal(size=(6, 3)).astype(np.float32), logits),
            "binary": (binary, 1 / (1 + np.exp(-logits))), "binary_logits": (binary, logits),
            "categorical": (one_hot, probabilities), "logits": (one_hot, logits),
            "sparse": (labels, probabilities), "sparse_logits": (labels, logits)}[kind]


@pytest.mark.parametrize("name, kwargs, kind", LOSSES, ids=lambda v: str(v))
def test_losses_agree_with_tensorflow(name, kwargs, kind):
    y_true, y_pred0 = _loss_inputs(kind)
    results = []
    for tf in (tf_real, tapejax):
        loss_fn = getattr(tf.keras.losses, name)(**kwargs)
        y_pred = tf.constant(y_pred0)
        with tf.GradientTape() as tape:
            tape.watch(y_pred)
            value = loss_fn(tf.constant(y_true), y_pred)
            total = tf.reduce_sum(value)
        results.append((value.numpy(), tape.gradient(total, y_pred).numpy()))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", {"learning_rate": 0.1}), ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {"learning_rate": 0.05}),
    ("Adam", {"learning_rate": 0.05, "epsilon": 1e-2}),
], ids=lambda v: str(v))
def test_optimizers_agree_with_tensorflow(name, kwargs):
    rng = np.random.default_rng(5)
    w0, grads = rng.normal(size=(3,)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    results = []
    for tf in (tf_real, tapejax):
        w = tf.Variable(w0)
        optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
        for g in grads:
            optimizer.apply_gradients([(tf.constant(g), w)])
        results.append(w.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)
