"""tf.saved_model.save/load on tapejax: round trips of a tf.Module with tf.functions and of a Keras model (values
equal to the original's), state written back, gradients through loaded functions, and the errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tapejax as tf


class Counter(tf.Module):
    def __init__(self):
        self.w = tf.Variable([[1.0, -2.0], [0.5, 3.0]])
        self.calls = tf.Variable(0)
        self.blocks = [tf.Variable(2.0), {"b": tf.Variable([0.1, 0.2])}]

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def __call__(self, x):
        self.calls.assign_add(1)
        y = tf.matmul(x, self.w) * self.blocks[0] + self.blocks[1]["b"]
        return {"y": y, "total": tf.reduce_sum(y)}

    @tf.function
    def shifted(self, x, shift=1.0, mode="add"):
        return x + shift if mode == "add" else x - shift


def _saved(module, tmp_path, **kwargs):
    path = str(tmp_path / "model")
    tf.saved_model.save(module, path, **kwargs)
    return path, tf.saved_model.load(path)


def test_module_round_trip(tmp_path):
    module = Counter()
    x = tf.constant(np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32))
    module.shifted(tf.constant([1.0, 2.0]))
    module.shifted(tf.constant([1.0, 2.0]), 3.0, mode="sub")
    expected = {k: v.numpy() for k, v in module(x).items()}
    path, loaded = _saved(module, tmp_path)
    assert sorted(os.listdir(path)) == ["assets", "tapejax", "variables"]
    got = loaded(x)
    for k in expected:
        np.testing.assert_allclose(got[k].numpy(), expected[k], rtol=1e-6)
    assert int(loaded.calls.numpy()) == 2  # saved as 1, and the loaded call assigned it
    np.testing.assert_array_equal(loaded.w.numpy(), module.w.numpy())
    np.testing.assert_array_equal(loaded.blocks[1]["b"].numpy(), module.blocks[1]["b"].numpy())
    np.testing.assert_array_equal(loaded.shifted(tf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(loaded.shifted(tf.constant([1.0, 2.0]), 3.0, mode="sub").numpy(), [-2.0, -1.0])
    signature = loaded.signatures["serving_default"](x=x)
    np.testing.assert_allclose(signature["y"].numpy(), expected["y"], rtol=1e-6)


def test_loaded_function_rejects_an_untraced_signature(tmp_path):
    module = Counter()
    module.shifted(tf.constant([1.0, 2.0]))
    _, loaded = _saved(module, tmp_path)
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.shifted(tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="Could not find matching concrete function"):
        loaded.shifted(tf.constant([1.0, 2.0]), 5.0)


def test_gradients_and_tf_function_through_loaded_functions(tmp_path):
    module = Counter()
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        expected = module(x)["total"]
    expected_grad = tape.gradient(expected, module.w)
    _, loaded = _saved(module, tmp_path)
    with tf.GradientTape() as tape:
        total = loaded(x)["total"]
    np.testing.assert_allclose(tape.gradient(total, loaded.w).numpy(), expected_grad.numpy(), rtol=1e-6)
    step = tf.function(lambda x: loaded(x)["total"])
    np.testing.assert_allclose(step(x).numpy(), expected.numpy(), rtol=1e-6)


def test_keras_model_serving_signature(tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    x = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    _, loaded = _saved(model, tmp_path)
    out = loaded.signatures["serving_default"](inputs=tf.constant(x))
    assert list(out) == ["output_0"]
    np.testing.assert_allclose(out["output_0"].numpy(), model(x).numpy(), rtol=1e-6)


def test_explicit_signatures(tmp_path):
    module = Counter()
    fn = tf.function(lambda x: module.w * x, input_signature=[tf.TensorSpec([], tf.float32, name="scale")])
    _, loaded = _saved(module, tmp_path, signatures={"scaled": fn})
    np.testing.assert_array_equal(loaded.signatures["scaled"](scale=tf.constant(2.0))["output_0"].numpy(),
                                  module.w.numpy() * 2)


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="Trackable"):
        tf.saved_model.save(object(), str(tmp_path / "a"))
    outside = tf.Variable(1.0)

    class Untracked(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def __call__(self, x):
            return x * outside

    with pytest.raises(AssertionError, match="untracked"):
        tf.saved_model.save(Untracked(), str(tmp_path / "b"))
    tf_written = tmp_path / "tf_written"
    tf_written.mkdir()
    (tf_written / "saved_model.pb").write_bytes(b"")
    with pytest.raises(NotImplementedError, match="tf.train.Checkpoint"):
        tf.saved_model.load(str(tf_written))
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        tf.saved_model.load(str(tmp_path / "nothing"))
