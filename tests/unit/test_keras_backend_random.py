"""tf.keras.backend's random tensors and batch value helpers (tapejax/keras/backend_random.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf

K = tf.keras.backend


@pytest.mark.parametrize("draw,mean,std", [
    (lambda: K.random_normal((4000,), 1.0, 2.0), 1.0, 2.0),
    (lambda: K.random_uniform((4000,), -1.0, 3.0), 1.0, 4.0 / np.sqrt(12.0)),
    (lambda: K.random_bernoulli((4000,), p=0.3), 0.3, np.sqrt(0.3 * 0.7)),
])
def test_samples_have_the_asked_distribution(draw, mean, std):
    x = draw().numpy()
    assert x.dtype == np.float32 and x.shape == (4000,)
    assert abs(x.mean() - mean) < 5 * std / np.sqrt(4000) and abs(x.std() - std) < 0.1 * std


def test_truncated_normal_stays_within_two_deviations_and_dtype_is_honoured():
    x = K.truncated_normal((2000,), mean=3.0, stddev=0.5, dtype="float64", seed=1).numpy()
    assert x.dtype == np.float64 and (np.abs(x - 3.0) <= 1.0).all()


def test_unseeded_draws_repeat_under_numpy_and_tf_seeds():
    def draw():
        np.random.seed(5)
        tf.random.set_seed(7)
        return K.random_normal((3,)).numpy(), K.random_uniform((2,)).numpy()

    first, second = draw(), draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_batch_values_and_moving_average():
    v, w = tf.Variable([1.0, 2.0]), tf.Variable(3, dtype=tf.int64)
    K.batch_set_value([(v, [5, 6]), (w, 4.0)])
    got = K.batch_get_value([v, w])
    np.testing.assert_array_equal(got[0], [5.0, 6.0])
    assert got[1] == 4 and got[1].dtype == np.int64
    K.moving_average_update(v, [1.0, 2.0], 0.75)
    np.testing.assert_allclose(v.numpy(), [5.0 - 4.0 * 0.25, 6.0 - 4.0 * 0.25])
