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
