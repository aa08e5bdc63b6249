"""keras.ops in tapejax and in TensorFlow's Keras 3: the same values, dtypes (Keras's promotion rules) and
exception types."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

F = np.array([[1.0, -3.0, 0.5], [4.0, 0.0, -0.0]])
I = np.array([[1, 7, 3], [2, 2, 9]], dtype="int32")

SNIPPETS = [
    lambda o: o.array([1.0, 2.0]), lambda o: o.array([1, 2]), lambda o: o.array(F), lambda o: o.array([1, 2], "float16"),
    lambda o: o.array(True), lambda o: o.array(I, dtype="float32"),
    lambda o: o.convert_to_numpy(o.array([1.0, 2.0])), lambda o: o.convert_to_numpy([1, 2]),
    lambda o: o.convert_to_numpy(3.0), lambda o: o.convert_to_numpy(F.astype("float32")),
    lambda o: o.shape(o.array(F)), lambda o: o.shape(I),
    lambda o: o.argmax(F), lambda o: o.argmax(F, axis=1), lambda o: o.argmax(I, axis=0, keepdims=True),
    lambda o: o.argmax(F, keepdims=True), lambda o: o.argmin(F, axis=-1), lambda o: o.argmax(np.array([0.0, -0.0])),
    lambda o: o.argmin(np.array([0.0, -0.0])),
    lambda o: o.matmul(F, F.T), lambda o: o.matmul(F.astype("float32"), F.T), lambda o: o.matmul(I, I.T),
    lambda o: o.matmul(I, F.T.astype("float32")), lambda o: o.matmul(np.ones((2, 3), "int8"), np.ones((3, 1), "int8")),
    lambda o: o.relu(F), lambda o: o.relu(I), lambda o: o.softmax(F), lambda o: o.softmax(I, axis=0),
    lambda o: o.sqrt(np.array([4, 9])), lambda o: o.sqrt(np.array([4.0, 9.0])), lambda o: o.sqrt(np.array([4, 9], "int64")),
    lambda o: o.sum(I), lambda o: o.sum(np.array([True, True, False])), lambda o: o.sum(np.ones(3, "uint8")),
    lambda o: o.sum(F, axis=0, keepdims=True), lambda o: o.sum(np.ones(3, "int8")),
    lambda o: o.std(F), lambda o: o.std(I, axis=1), lambda o: o.std(np.array([True, False])),
    lambda o: o.clip(I, 2, 5), lambda o: o.clip(F, -1.0, 1.0), lambda o: o.clip(np.array([True, False]), 0, 1),
    lambda o: o.ones((2, 3)), lambda o: o.ones((2,), "int32"), lambda o: o.zeros([3]),
    lambda o: o.one_hot(np.array([0, 2, -1]), 3), lambda o: o.one_hot(np.array([1]), 2, dtype="int32"),
    lambda o: o.one_hot(np.array([[0, 1]]), 3, axis=0),
    lambda o: o.normalize(F), lambda o: o.normalize(I), lambda o: o.normalize(F, axis=0, order=1),
    lambda o: o.normalize(np.zeros((2, 2))), lambda o: o.normalize(np.array(3.0)), lambda o: o.normalize(F, order=0),
    lambda o: o.normalize(F, epsilon=10.0),
]


@pytest.mark.parametrize("k", range(len(SNIPPETS)))
def test_ops_match_keras(k):
    assert_same_outcome(lambda tf: SNIPPETS[k](tf.keras.ops), tapejax, tf_real)
