"""The Keras surface the real programs in tests/programs use: `keras.ops`, `keras.metrics`, `get_weights` and
`set_weights`, `Concatenate`, arithmetic on KerasTensors, input dtype conversion, `add_loss`/`losses`,
`optimizer.apply`, and `import keras` under `python -m tapejax`. Values are checked against numpy; the same
calls are compared with TensorFlow's Keras in tests/compat/test_keras_program_surface_vs_tf.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import ops

keras = tf.keras


def test_keras_ops_follow_numpy_with_keras_dtypes():
    x = np.array([[1.0, 3.0]])
    assert ops.convert_to_tensor(x).dtype == tf.float64
    assert ops.cast(x, "float32").dtype == tf.float32
    np.testing.assert_allclose(ops.mean(ops.square(x)).numpy(), np.mean(x**2))
    assert ops.mean(np.array([1, 2])).dtype == tf.float32 and float(ops.mean(np.array([1, 2]))) == 1.5
    assert ops.squeeze(ops.expand_dims(tf.ones([3]), 0)).shape == (3,)


def test_mean_and_accuracy_metrics_stream_and_reset():
    mean = keras.metrics.Mean()
    assert float(mean.result()) == 0.0  # no division by zero before any update
    mean.update_state([1.0, 2.0])
    assert float(mean(6.0)) == 3.0
    mean.reset_state()
    assert float(mean.result()) == 0.0
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    scores = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
    accuracy.update_state(np.array([[1], [1], [1]]), scores)
    assert float(accuracy.result()) == pytest.approx(np.mean(np.argmax(scores, -1) == 1))
    exact = keras.metrics.Accuracy()
    exact(tf.constant([1, 2, 3], tf.int64), tf.constant([1, 0, 3], tf.int64))
    assert float(exact.result()) == pytest.approx(2 / 3)
    assert all(not v.trainable for v in mean.variables)


def test_metrics_update_inside_tf_function():
    accuracy = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def step(labels, scores):
        accuracy.update_state(labels, scores)

    step(tf.constant([0, 1]), tf.constant([[1.0, 0.0], [1.0, 0.0]]))
    step(tf.constant([0, 1]), tf.constant([[1.0, 0.0], [0.0, 1.0]]))
    assert float(accuracy.result()) == 0.75


def test_get_and_set_weights_copy_values_and_refuse_wrong_shapes():
    source, target = keras.layers.Dense(3), keras.layers.Dense(3)
    source(tf.ones([1, 2])), target(tf.ones([1, 2]))
    target.set_weights(source.get_weights())
    for a, b in zip(source.get_weights(), target.get_weights()):
        np.testing.assert_array_equal(a, b)
    before = target.get_weights()
    with pytest.raises(ValueError, match="expecting 2 weights"):
        target.set_weights(before[:1])
    with pytest.raises(ValueError, match="not compatible"):
        target.set_weights([np.zeros((2, 3)), np.zeros(4)])  # the bias is wrong: the kernel must not change
    np.testing.assert_array_equal(target.get_weights()[0], before[0])


def test_functional_model_with_concatenate_and_arithmetic_on_keras_tensors():
    a, b = keras.Input(shape=(2,)), keras.Input(shape=(1,))
    joined = keras.layers.Concatenate()([a, b])
    out = 1.0 - keras.layers.Dense(1, kernel_initializer="ones")(joined) * 2.0
    model = keras.Model([a, b], out)
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "InputLayer", "Concatenate", "Dense"]
    x, y = np.array([[1.0, 2.0]], np.float32), np.array([[3.0]], np.float32)
    np.testing.assert_allclose(model([x, y]).numpy(), 1.0 - 2.0 * (x.sum() + y.sum()))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model([x, y]))
    grads = tape.gradient(loss, model.trainable_variables)
    np.testing.assert_allclose(grads[0].numpy(), -2.0 * np.array([[1.0], [2.0], [3.0]]))
    summary = _summary(model)  # the operations are rows of the summary, as in Keras 3 (names count per process)
    assert re.search(r"multiply(_\d+)?\b.*?\(Multiply\)", summary, re.S)  # a long name wraps in its cell
    assert re.search(r"subtract(_\d+)?\b.*?\(Subtract\)", summary, re.S)


def _summary(model) -> str:
    lines: list[str] = []
    model.summary(print_fn=lines.append)
    return "\n".join(lines)


def test_inputs_are_converted_to_the_model_and_layer_dtypes():
    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, keras.layers.Dense(2)(inputs))
    assert model(np.zeros((1, 3), np.uint8)).dtype == tf.float32  # MNIST's pixels
    assert model(tf.zeros((1, 3), tf.float64)).dtype == tf.float32  # a replay buffer's float64 batch
    assert keras.layers.Dense(2)(tf.zeros((1, 3), tf.float64)).dtype == tf.float32


def test_layer_output_and_model_input_build_a_model_on_a_models_inner_layers():
    inputs = keras.Input(shape=(4,))
    hidden = keras.layers.Dense(3, name="hidden")(inputs)
    base = keras.Model(inputs, keras.layers.Dense(2)(hidden))
    tap = keras.Model(inputs=base.input, outputs=[base.get_layer("hidden").output])
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(tap(x)[0].numpy(), base.get_layer("hidden")(x).numpy())
    with pytest.raises(AttributeError, match="has never been called"):
        keras.layers.Dense(1).output


def test_a_tf_module_holding_a_functional_model_finds_its_variables():
    class Holder(tf.Module):
        def __init__(self, model):
            self.model = model

    inputs = keras.Input(shape=(2,))
    model = keras.Model(inputs, keras.layers.Dense(3)(keras.layers.Dense(2)(inputs)))
    assert len(Holder(model).trainable_variables) == 4


def test_add_loss_collects_the_last_forward_pass_only():
    class Regularized(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_sum(inputs))
            return inputs

    inputs = keras.Input(shape=(2,))
    model = keras.Model(inputs, Regularized()(inputs))
    assert model.losses == []  # building the functional graph adds none
    model(tf.ones([1, 2]))
    model(tf.ones([1, 2]) * 2)
    assert [float(x) for x in model.losses] == [4.0]


def test_optimizer_apply_pairs_gradients_with_the_variables_it_was_given_or_built_for():
    v, w = tf.Variable(1.0), tf.Variable(2.0)
    optimizer = keras.optimizers.SGD(0.5)
    with pytest.raises(ValueError, match="must already be built"):
        optimizer.apply([tf.constant(1.0)])
    optimizer.apply([tf.constant(1.0), tf.constant(2.0)], [v, w])
    optimizer.apply([tf.constant(1.0), tf.constant(2.0)])
    assert (float(v.numpy()), float(w.numpy())) == (0.0, 0.0)


def test_import_keras_is_tapejax_keras_under_the_runner(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import keras
        from keras import layers, ops
        print(keras.__name__, layers.Dense.__module__, ops.__name__)
    """))
    repo = str(Path(tf.__file__).resolve().parents[1])  # this checkout's tapejax, not another installed one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "tapejax", str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tapejax.keras", "tapejax.keras.layers", "tapejax.keras.ops"]
