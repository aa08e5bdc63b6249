"""tf.saved_model against TensorFlow 2.21: the variables tapejax saves are a checkpoint TF reads (the same keys
and values as TF's own SavedModel of the same module), and a SavedModel TF wrote is refused with advice that
works (its variables restore into the tapejax module with tf.train.Checkpoint)."""

from __future__ import annotations

import os

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402


def _module(tf):
    class Net(tf.Module):
        def __init__(self):
            self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
            self.b = tf.Variable(np.float32([0.5, -0.5, 1.0]))
            self.steps = tf.Variable(np.int64(7))
            self.parts = [tf.Variable(np.float64(2.5))]

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    return Net()


def _variables(path):
    reader = tf_real.train.load_checkpoint(path)
    return {k: reader.get_tensor(k) for k, _ in tf_real.train.list_variables(path) if "OBJECT_GRAPH" not in k}


def test_tf_reads_the_variables_tapejax_saves(tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    tapejax.saved_model.save(_module(tapejax), ours)
    tf_real.saved_model.save(_module(tf_real), theirs)
    got = _variables(os.path.join(ours, "variables", "variables"))
    expected = _variables(os.path.join(theirs, "variables", "variables"))
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert got[key].dtype == expected[key].dtype
        np.testing.assert_array_equal(got[key], expected[key])
    restored = _module(tf_real)
    for v in restored.trainable_variables:
        v.assign(tf_real.zeros_like(v))
    tf_real.train.Checkpoint(restored).restore(os.path.join(ours, "variables", "variables")).expect_partial()
    x = np.float32([[1.0, 2.0]])
    np.testing.assert_allclose(restored(x).numpy(), tapejax.saved_model.load(ours)(x).numpy(), rtol=1e-6)


def test_a_savedmodel_written_by_tf_is_refused_and_its_variables_restore(tmp_path):
    path = str(tmp_path / "tf_model")
    tf_real.saved_model.save(_module(tf_real), path)
    with pytest.raises(NotImplementedError, match="tf.train.Checkpoint"):
        tapejax.saved_model.load(path)
    module = _module(tapejax)
    for v in module.trainable_variables:
        v.assign(tapejax.zeros_like(v))
    tapejax.train.Checkpoint(module).restore(os.path.join(path, "variables", "variables")).expect_partial()
    np.testing.assert_array_equal(module.w.numpy(), _module(tf_real).w.numpy())
    np.testing.assert_array_equal(module.parts[0].numpy(), 2.5)
