"""keras.ops' NumPy-like ops (tapejax/keras/ops_numpy.py) against NumPy, eagerly and inside tf.function;
tests/compat/test_keras_ops_vs_tf.py checks Keras's dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import ops

X = np.array([[1.0, -3.0, 0.5], [4.0, 2.0, -1.0]], dtype="float32")

CASES = [
    (lambda x: ops.argmax(x, axis=1), lambda x: np.argmax(x, axis=1)),
    (lambda x: ops.argmin(x), lambda x: np.argmin(x)),
    (lambda x: ops.matmul(x, tf.transpose(x)), lambda x: x @ x.T),
    (lambda x: ops.relu(x), lambda x: np.maximum(x, 0)),
    (lambda x: ops.softmax(x), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (lambda x: ops.sqrt(ops.relu(x)), lambda x: np.sqrt(np.maximum(x, 0))),
    (lambda x: ops.sum(x, axis=0), lambda x: x.sum(0)),
    (lambda x: ops.std(x, axis=1, keepdims=True), lambda x: x.std(1, keepdims=True)),
    (lambda x: ops.clip(x, -1.0, 1.0), lambda x: np.clip(x, -1, 1)),
    (lambda x: ops.normalize(x), lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)),
    (lambda x: ops.normalize(x, axis=0, order=1), lambda x: x / np.abs(x).sum(0, keepdims=True)),
]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("k", range(len(CASES)))
def test_ops_agree_with_numpy(k, compiled):
    ours, reference = CASES[k]
    run = tf.function(ours) if compiled else ours
    np.testing.assert_allclose(ops.convert_to_numpy(run(tf.constant(X))), reference(X), rtol=1e-6, atol=1e-7)


def test_dtypes_follow_keras_rules():
    assert ops.array([1, 2]).dtype == tf.int32 and ops.array(X.astype("float64")).dtype == tf.float64
    assert ops.sum(np.array([True, True])).dtype == tf.int32 and ops.sqrt(np.array([4])).dtype == tf.float32
    assert ops.matmul(X.astype("float64"), tf.constant(X.T)).dtype == tf.float64
    assert ops.argmax(X).dtype == tf.int32 and ops.ones((2,)).dtype == tf.float32
    assert ops.one_hot(np.array([0, -1]), 2).numpy().tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert ops.shape(X) == (2, 3) and isinstance(ops.convert_to_numpy(tf.constant(X)), np.ndarray)
    with pytest.raises(ValueError, match="order"):
        ops.normalize(X, order=0)
