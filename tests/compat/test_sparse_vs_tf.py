"""tf.SparseTensor and tf.sparse against TensorFlow 2.21: values, dtypes, shapes, printed forms, gradients to the
values and the kernels' index checks (exception types)."""

from __future__ import annotations

import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same, assert_same_outcome  # noqa: E402

ST = dict(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
UNSORTED = dict(indices=[[1, 2], [0, 0]], values=[1.0, 2.0], dense_shape=[3, 4])
OTHER = dict(indices=[[0, 1], [1, 2]], values=[5.0, 6.0], dense_shape=[3, 4])


def _parts(st):
    return (st.indices, st.values, st.dense_shape)


CASES = {
    "to_dense": lambda tf: tf.sparse.to_dense(tf.SparseTensor(**ST)),
    "to_dense_default": lambda tf: tf.sparse.to_dense(tf.SparseTensor([[0, 0]], [1], [2, 2]), default_value=7),
    "to_dense_repeated_unvalidated": lambda tf: tf.sparse.to_dense(
        tf.SparseTensor([[0, 0], [0, 0]], [1.0, 2.0], [2, 2]), validate_indices=False),
    "from_dense": lambda tf: _parts(tf.sparse.from_dense(tf.constant([[0, 1], [2, 0]]))),
    "reorder": lambda tf: _parts(tf.sparse.reorder(tf.SparseTensor(**UNSORTED))),
    "matmul": lambda tf: tf.sparse.sparse_dense_matmul(tf.SparseTensor(**ST), tf.reshape(tf.range(8.0), [4, 2])),
    "matmul_adjoint": lambda tf: tf.sparse.sparse_dense_matmul(tf.SparseTensor(**ST), tf.ones([2, 4]),
                                                               adjoint_b=True),
    "reduce_sum": lambda tf: tf.sparse.reduce_sum(tf.SparseTensor(**ST)),
    "reduce_sum_axis": lambda tf: tf.sparse.reduce_sum(tf.SparseTensor(**ST), axis=1, keepdims=True),
    "add_sparse": lambda tf: _parts(tf.sparse.add(tf.SparseTensor(**ST), tf.SparseTensor(**OTHER))),
    "add_dense": lambda tf: tf.sparse.add(tf.SparseTensor(**ST), tf.ones([3, 4])),
    "shape": lambda tf: (tuple(tf.SparseTensor(**ST).shape), tf.SparseTensor(**ST).dtype.name),
}


@pytest.mark.parametrize("name", CASES)
def test_sparse_op_agrees_with_tensorflow(name):
    assert_same(CASES[name](tapejax), CASES[name](tf_real))


def test_printed_form_is_tensorflows():
    assert str(tapejax.SparseTensor(**ST)) == str(tf_real.SparseTensor(**ST))
    assert str(tapejax.float32) == str(tf_real.float32) and repr(tapejax.float32) == repr(tf_real.float32)


def test_gradient_reaches_the_values():
    def grad(tf):
        v = tf.Variable([1.0, 2.0])
        with tf.GradientTape() as tape:
            dense = tf.sparse.to_dense(tf.SparseTensor([[0, 0], [1, 2]], v * 2.0, [3, 4]))
            y = tf.reduce_sum(dense * dense * tf.reshape(tf.range(12.0), [3, 4]))
        return tape.gradient(y, v)

    assert_same(grad(tapejax), grad(tf_real))


BAD = {
    "out_of_order": lambda tf: tf.sparse.to_dense(tf.SparseTensor(**UNSORTED)),
    "out_of_bounds": lambda tf: tf.sparse.to_dense(tf.SparseTensor([[0, 0], [5, 0]], [1.0, 2.0], [2, 2])),
    "repeated": lambda tf: tf.sparse.to_dense(tf.SparseTensor([[0, 0], [0, 0]], [1.0, 2.0], [2, 2])),
    "values_mismatch": lambda tf: tf.SparseTensor([[0, 0]], [1.0, 2.0], [2, 2]),
    "set_shape": lambda tf: tf.constant([1.0, 2.0]).set_shape([3]),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_raises_tensorflows_error(name):
    assert_same_outcome(BAD[name], tapejax, tf_real)
