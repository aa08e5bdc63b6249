"""tf.TensorArray (tensor_array.py): values against numpy, gradients against JAX, eagerly and in traced loops, and
the clear errors where a traced loop cannot carry it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tapejax as tf

ROWS = hnp.arrays(np.float32, st.tuples(st.integers(1, 5), st.integers(1, 3)), elements=st.floats(-2, 2, width=32, allow_subnormal=False))  # XLA:CPU flushes denormals


@settings(max_examples=15, deadline=None)
@given(ROWS, st.randoms(use_true_random=False))
def test_operations_match_numpy(rows, rnd):
    n = rows.shape[0]
    order = list(range(n))
    rnd.shuffle(order)
    ta = tf.TensorArray(tf.float32, size=n, clear_after_read=False)
    for i in order:
        ta = ta.write(i, rows[i])
    np.testing.assert_array_equal(ta.stack().numpy(), rows)
    np.testing.assert_array_equal(ta.gather(order).numpy(), rows[order])
    np.testing.assert_array_equal(ta.concat().numpy(), rows.reshape(-1))
    scattered = tf.TensorArray(tf.float32, size=n).scatter(order, rows).stack()
    expected = np.zeros_like(rows)
    expected[order] = rows
    np.testing.assert_array_equal(scattered.numpy(), expected)


@settings(max_examples=10, deadline=None)
@given(ROWS)
def test_traced_loop_matches_numpy(rows):
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=x.shape[0])
        for i in tf.range(x.shape[0]):
            ta = ta.write(i, tf.gather(x, i) * tf.cast(i, tf.float32))
        return ta.stack(), ta.gather(tf.range(x.shape[0] - 1, -1, -1))

    stacked, reversed_ = f(tf.constant(rows))
    expected = rows * np.arange(rows.shape[0], dtype=np.float32)[:, None]
    np.testing.assert_allclose(stacked.numpy(), expected)
    np.testing.assert_allclose(reversed_.numpy(), expected[::-1])


def _jax_rnn(x):
    h, out = jnp.zeros(2), []
    for i in range(4):
        h = jnp.tanh(h * x + i)
        out.append(h)
    return jnp.sum(jnp.stack(out) ** 2)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("dynamic", [False, True])
def test_gradient_through_writes_is_jax_gradient(compiled, dynamic):
    def rnn(x):
        ta = tf.TensorArray(tf.float32, size=0 if dynamic else 4, dynamic_size=dynamic)
        h = tf.zeros([2])
        for i in tf.range(4):
            h = tf.tanh(h * x + tf.cast(i, tf.float32))
            ta = ta.write(i, h)
        return tf.reduce_sum(ta.stack() ** 2)

    x = tf.constant([0.5, -0.7])
    rnn = tf.function(rnn) if compiled else rnn
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = rnn(x)
    np.testing.assert_allclose(y.numpy(), _jax_rnn(jnp.asarray(x.numpy())), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), jax.grad(_jax_rnn)(jnp.asarray(x.numpy())), rtol=1e-5)


def test_eager_copies_share_and_traced_copies_do_not():
    ta = tf.TensorArray(tf.float32, size=2, clear_after_read=False)
    ta.write(0, 1.0)
    assert float(ta.read(0)) == 1.0  # eagerly the write changed `ta` too, as TF's eager TensorArray

    @tf.function
    def f():
        ta = tf.TensorArray(tf.float32, size=2, element_shape=[])
        ta.write(0, 1.0)  # the new array is dropped: inside tf.function TF's TensorArray is functional
        return ta.stack()
    np.testing.assert_array_equal(f().numpy(), [0.0, 0.0])


def test_dynamic_size_in_a_loop_of_unknown_trip_count_raises_clearly():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        i = tf.constant(0)
        while tf.reduce_sum(x) > tf.cast(i, tf.float32):
            ta = ta.write(i, 1.0)
            i += 1
        return ta.stack()
    with pytest.raises(ValueError, match="trip count"):
        f(tf.constant([3.0]))


def test_unknown_element_shape_read_before_write_in_a_loop_raises_clearly():
    @tf.function
    def f():
        ta = tf.TensorArray(tf.float32, size=3)
        for i in tf.range(3):
            ta = ta.write(i, ta.read(i) + 1.0)
        return ta.stack()
    with pytest.raises(ValueError, match="element_shape"):
        f()


def test_traced_index_out_of_range_outside_loops_fails_the_step():
    @tf.function
    def f(x):
        ta = tf.TensorArray(tf.float32, size=3).unstack(x)
        return ta.write(tf.argmax(x, output_type=tf.int32) + 5, 1.0).stack()
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant([1.0, 2.0, 3.0]))
