"""Eager `x[key]` with integer positions and unit-step windows as arguments of one executable
(ops/array.py `_positions_as_arguments`): the values are numpy's, the tape gradient is `jax.grad`'s, and a position
out of range raises TF's error, whatever positions, windows (clamped as Python clamps them) and new axes the key
mixes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tapejax as tf

SHAPE = (4, 5, 3)


def _entry(size: int):
    bound = st.none() | st.integers(-size - 2, size + 2)
    return (st.integers(-size, size - 1) | st.builds(slice, bound, bound)
            | st.builds(slice, bound, bound, st.sampled_from([None, 1, 2, -1])))


keys = st.tuples(*(_entry(n) for n in SHAPE)).flatmap(
    lambda key: st.integers(0, len(key)).flatmap(
        lambda cut: st.sampled_from([key[:cut], key[:cut] + (None,) + key[cut:], key[:cut] + (Ellipsis,)])))


@settings(max_examples=60, deadline=None)
@given(keys)
@example((None, 0, 0, slice(1, 0)))  # a stop before the start: empty, not a window of size -1
@example((slice(-9, 2), Ellipsis))  # a start clamped to 0
@example((slice(None, None, -1), slice(3, 9), -1))
def test_an_eager_index_is_numpys_and_its_gradient_is_jaxs(key):
    x = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) / 7.0
    value = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(value)
        y = value[key]
        loss = tf.reduce_sum(tf.sin(y))
    np.testing.assert_array_equal(y.numpy(), x[key])
    expected = jax.grad(lambda a: jnp.sum(jnp.sin(a[key])))(jnp.asarray(x))
    np.testing.assert_allclose(tape.gradient(loss, value).numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("key", [5, -6, (0, 7), (Ellipsis, 3)])
def test_a_position_out_of_range_raises_tfs_error(key):
    x = tf.constant(np.zeros((5, 6, 3), np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"slice index -?\d+ of dimension \d out of bounds"):
        x[key]


def test_a_variable_and_a_loop_of_windows_read_the_same_rows():
    v = tf.Variable(np.arange(12.0).reshape(6, 2))
    rows = [v[i:i + 2].numpy() for i in range(5)]
    for i, row in enumerate(rows):
        np.testing.assert_array_equal(row, np.arange(12.0).reshape(6, 2)[i:i + 2])
