"""The Keras surface of tests/programs (keras.ops, metrics, set_weights, Concatenate, KerasTensor arithmetic, input
dtype conversion, add_loss, optimizer.apply) in tapejax and in TensorFlow 2.21's Keras, from the same weights."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _run(tf):
    keras = tf.keras
    rng = np.random.default_rng(0)
    out = {}
    x64 = rng.normal(size=(4, 3))
    out["ops"] = [keras.ops.mean(keras.ops.square(keras.ops.convert_to_tensor(x64))),
                  keras.ops.mean(np.array([1, 2, 4])), keras.ops.cast(x64, "float32"),
                  keras.ops.squeeze(keras.ops.expand_dims(keras.ops.convert_to_tensor(x64[0]), 0))]
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(2,))
    hidden = keras.layers.Dense(4, activation="relu")(keras.layers.Concatenate()([a, b]))
    outputs = 2.0 - keras.layers.Dense(1)(hidden) * 3.0 / 4.0
    model = keras.Model([a, b], outputs)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    inputs = [x64, rng.integers(0, 3, size=(4, 2)).astype(np.uint8)]  # float64 and uint8 both become float32
    with tf.GradientTape() as tape:
        y = model(inputs)
        loss = tf.reduce_sum(y * y)
    grads = tape.gradient(loss, model.trainable_variables)
    out["model"] = [y, grads, [layer.name for layer in model.layers]]
    optimizer = keras.optimizers.Adam(0.1)
    optimizer.apply(grads, model.trainable_variables)
    optimizer.apply(grads)
    out["weights"] = model.get_weights()
    labels, scores = rng.integers(0, 3, size=6), rng.normal(size=(6, 3)).astype(np.float32)
    accuracy, mean, exact = (keras.metrics.SparseCategoricalAccuracy(), keras.metrics.Mean(),
                             keras.metrics.Accuracy())
    accuracy.update_state(labels, scores)
    mean.update_state(scores)
    exact(np.argmax(scores, -1), labels)
    out["metrics"] = [accuracy.result(), mean.result(), exact.result(), mean(np.float32(1.0))]

    class Regularized(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(0.5 * tf.reduce_sum(inputs))
            return inputs

    i = keras.Input(shape=(2,))
    regularized = keras.Model(i, Regularized()(i))
    out["losses"] = [len(regularized.losses)]
    regularized(np.ones((1, 2), np.float32))
    out["losses"].append(regularized.losses)
    return out


def test_keras_program_surface_agrees_with_tensorflow():
    got, expected = _run(tapejax), _run(tf_real)
    got["model"][2] = [name.split("_")[0] for name in got["model"][2]]  # Keras numbers names per process
    expected["model"][2] = [name.split("_")[0] for name in expected["model"][2]]
    assert_same(got, expected, rtol=1e-4)  # two Adam steps of lr 0.1 carry last-bit differences along
