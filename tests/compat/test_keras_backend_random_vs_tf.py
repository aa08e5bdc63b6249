"""tf.keras.backend's random tensors (shapes, dtypes, the bernoulli limits) and batch value helpers in tapejax and
in TensorFlow's Keras. The random values themselves differ (tapejax's streams are JAX's)."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _spec(x):
    return tuple(x.shape.as_list()), x.dtype.name


SNIPPETS = [
    lambda tf: _spec(tf.keras.backend.random_normal((2, 3))),
    lambda tf: _spec(tf.keras.backend.random_normal([4], dtype="float64", seed=2)),
    lambda tf: _spec(tf.keras.backend.random_uniform((3,), 1, 2)),
    lambda tf: _spec(tf.keras.backend.truncated_normal((2, 2), dtype="float16")),
    lambda tf: tf.keras.backend.random_bernoulli((2, 2), p=1.0).numpy(),
    lambda tf: tf.keras.backend.random_bernoulli((3,), p=0.0, dtype="float64").numpy(),
    lambda tf: tf.keras.backend.batch_get_value([tf.constant([1, 2]), tf.Variable(2.5)]),
    lambda tf: (lambda v: (tf.keras.backend.batch_set_value([(v, [[1, 2]])]), v.numpy())[1])(tf.Variable([[0.0, 0.0]])),
    lambda tf: (lambda v: (tf.keras.backend.moving_average_update(v, 1.0, 0.9), v.numpy())[1])(tf.Variable([3.0])),
]


@pytest.mark.parametrize("k", range(len(SNIPPETS)))
def test_backend_helpers_match_keras(k):
    assert_same_outcome(SNIPPETS[k], tapejax, tf_real)
