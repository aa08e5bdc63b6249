"""tf.SparseTensor and tf.sparse (tapejax/sparse.py) against numpy's dense arrays and jax.grad."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf

IDX = np.array([[2, 1], [0, 3], [1, 0], [0, 0]])
VALS = np.array([1.5, -2.0, 3.0, 4.0], np.float32)
SHAPE = (3, 4)


def _dense(indices=IDX, values=VALS, shape=SHAPE, add=False):
    out = np.zeros(shape, values.dtype)
    for i, v in zip(indices, values):
        out[tuple(i)] = out[tuple(i)] + v if add else v
    return out


def test_to_dense_reorder_and_from_dense_round_trip():
    st = tf.sparse.reorder(tf.SparseTensor(IDX, VALS, SHAPE))
    order = np.lexsort(IDX.T[::-1])
    np.testing.assert_array_equal(st.indices.numpy(), IDX[order])
    np.testing.assert_array_equal(st.values.numpy(), VALS[order])
    dense = tf.sparse.to_dense(st)
    np.testing.assert_array_equal(dense.numpy(), _dense())
    back = tf.sparse.from_dense(dense)
    np.testing.assert_array_equal(back.indices.numpy(), IDX[order])
    assert st.indices.dtype == tf.int64 and st.shape == tf.TensorShape(SHAPE) and st.dtype == tf.float32


def test_matmul_reduce_sum_and_add_are_the_dense_ones():
    st = tf.SparseTensor(IDX, VALS, SHAPE)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(tf.sparse.sparse_dense_matmul(st, b).numpy(), _dense() @ b)
    np.testing.assert_allclose(tf.sparse.reduce_sum(st, axis=0).numpy(), _dense().sum(0))
    total = tf.sparse.add(tf.sparse.reorder(st), tf.SparseTensor([[0, 0], [2, 3]], [1.0, 1.0], SHAPE))
    np.testing.assert_allclose(tf.sparse.to_dense(total).numpy(), _dense() + _dense([[0, 0], [2, 3]],
                                                                                     np.ones(2, np.float32)))
    assert sorted(map(tuple, total.indices.numpy())) == list(map(tuple, total.indices.numpy()))


def test_gradient_to_the_values_is_jaxs():
    weights = np.arange(12, dtype=np.float32).reshape(SHAPE)
    v = tf.Variable(VALS)
    with tf.GradientTape() as tape:
        dense = tf.sparse.to_dense(tf.sparse.reorder(tf.SparseTensor(IDX, v * v, SHAPE)))
        y = tf.reduce_sum(dense * weights)
    want = jax.grad(lambda x: jnp.sum(jnp.zeros(SHAPE).at[tuple(IDX.T)].set(x * x) * weights))(VALS)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), want, rtol=1e-6)


def test_kernel_index_checks():
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of order"):
        tf.sparse.to_dense(tf.SparseTensor(IDX, VALS, SHAPE))
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        tf.sparse.to_dense(tf.SparseTensor([[0, 0], [3, 0]], [1.0, 2.0], SHAPE))
    with pytest.raises(ValueError, match="not compatible"):
        tf.SparseTensor([[0, 0]], [1.0, 2.0], SHAPE)
    with pytest.raises(ValueError, match="not compatible"):
        tf.constant([1.0, 2.0]).set_shape([3])
