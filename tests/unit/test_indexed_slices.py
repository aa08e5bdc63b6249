"""tf.IndexedSlices: the gradient of a source that only gathers read, checked against JAX's dense gradient of the
same program; its conversion, printing and errors; outer tapes and tf.function through it; and Keras's
optimizers reading its rows one by one (the figures are computed here with numpy)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tapejax as tf

TABLE = np.arange(12, dtype=np.float32).reshape(4, 3) / 7.0


def _slices_of(loss_fn, source):
    with tf.GradientTape() as tape:
        tape.watch(source)
        loss = loss_fn(source)
    return tape.gradient(loss, source)


@settings(max_examples=40, deadline=None)
@given(indices=st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=5), min_size=1, max_size=3),
       variable=st.booleans(), power=st.sampled_from([1, 2, 3]))
def test_dense_sum_of_the_slices_is_jax_gradient(indices, variable, power):
    """Any number of gathers (repeats included), each a slice: their dense sum is jax.grad of the program."""
    def program(gather, total, x):
        return sum(total(gather(x, ids) ** power) * (k + 1) for k, ids in enumerate(indices))

    source = tf.Variable(TABLE) if variable else tf.constant(TABLE)
    g = _slices_of(lambda x: program(tf.gather, tf.reduce_sum, x), source)
    assert isinstance(g, tf.IndexedSlices)
    assert g.indices.numpy().tolist() == [i for ids in indices for i in ids]  # the gathers in the order they ran
    assert g.values.shape == (sum(map(len, indices)), 3) and g.dense_shape.numpy().tolist() == [4, 3]
    expected = jax.grad(lambda x: program(lambda a, i: a[jnp.asarray(i)], jnp.sum, x))(jnp.asarray(TABLE))
    np.testing.assert_allclose(tf.convert_to_tensor(g).numpy(), expected, rtol=1e-5, atol=1e-6)


DENSE_CASES = [  # (tapejax loss, the same in JAX)
    (lambda x: tf.reduce_sum(tf.gather(x, [1, 0], axis=1)), lambda a: jnp.sum(a[:, jnp.array([1, 0])])),
    (lambda x: tf.reduce_sum(tf.gather(x, [1]) ** 2) + tf.reduce_sum(x), lambda a: jnp.sum(a[1] ** 2) + jnp.sum(a)),
    (lambda x: tf.reduce_sum(tf.gather(x * 2.0, [1])), lambda a: jnp.sum((a * 2.0)[1])),
    (lambda x: tf.reduce_sum(tf.gather(x, [[0], [1], [2], [0]], batch_dims=1, axis=1) ** 2),
     lambda a: jnp.sum(a[jnp.arange(4), jnp.array([0, 1, 2, 0])] ** 2)),
]


@pytest.mark.parametrize("case", range(len(DENSE_CASES)))
def test_other_uses_give_a_dense_gradient(case):
    """Not the first axis, a dense use too, a gather of a computed value, batch dimensions: TF's dense gradient."""
    loss_fn, jax_loss = DENSE_CASES[case]
    g = _slices_of(loss_fn, tf.constant(TABLE))
    assert not isinstance(g, tf.IndexedSlices)
    np.testing.assert_allclose(g.numpy(), jax.grad(jax_loss)(jnp.asarray(TABLE)), rtol=1e-6)


def test_identity_and_cast_pass_the_slices_on():
    x = tf.Variable(TABLE)
    g = _slices_of(lambda v: tf.reduce_sum(tf.gather(tf.cast(tf.identity(v), tf.float64), [2, 2]) ** 2), x)
    assert isinstance(g, tf.IndexedSlices) and g.values.dtype == tf.float32
    np.testing.assert_allclose(g.values.numpy(), 2 * TABLE[[2, 2]], rtol=1e-6)


def test_a_gather_reaching_no_target_adds_no_slice():
    x = tf.constant(TABLE)
    with tf.GradientTape() as tape:
        tape.watch(x)
        tf.gather(x, [3])
        loss = tf.reduce_sum(tf.gather(x, [1]))
    assert tape.gradient(loss, x).indices.numpy().tolist() == [1]


def test_an_outer_tape_differentiates_through_the_slices():
    x = tf.Variable(TABLE)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            loss = tf.reduce_sum(tf.gather(x, [0, 3, 0]) ** 3)
        g = inner.gradient(loss, x)
        second = tf.reduce_sum(g.values ** 2)
    h = outer.gradient(second, x)

    def jax_second(a):
        values = jax.grad(lambda b: jnp.sum(b ** 3))(a[jnp.array([0, 3, 0])])
        return jnp.sum(values ** 2)

    np.testing.assert_allclose(tf.convert_to_tensor(h).numpy(), jax.grad(jax_second)(jnp.asarray(TABLE)), rtol=1e-5)


def test_tf_function_returns_and_takes_slices():
    x = tf.Variable(TABLE)

    @tf.function
    def grads():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(x, [1, 1]))
        return tape.gradient(loss, x)

    @tf.function
    def dense(g):
        return tf.convert_to_tensor(g) * 2.0

    g = grads()
    assert isinstance(g, tf.IndexedSlices) and g.indices.numpy().tolist() == [1, 1]
    expected = np.zeros((4, 3), np.float32)
    expected[1] = 4.0  # two slices of ones at row 1, doubled
    np.testing.assert_array_equal(dense(g).numpy(), expected)


def test_conversion_printing_and_errors():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([2, 2]), tf.constant([3, 2]))
    assert str(s) == ("IndexedSlices(indices=tf.Tensor([2 2], shape=(2,), dtype=int32), values=tf.Tensor(\n"
                      "[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32), dense_shape=tf.Tensor([3 2], shape=(2,), "
                      "dtype=int32))")
    np.testing.assert_array_equal(tf.convert_to_tensor(s).numpy(), [[0, 0], [0, 0], [4, 6]])
    assert float(tf.reduce_sum(s)) == 10.0  # ops convert it
    np.testing.assert_array_equal((-s).values.numpy(), [[-1, -2], [-3, -4]])
    assert s.shape == (3, 2) and s.dtype == tf.float32
    with pytest.raises(ValueError, match="dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0])))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 5 is out of range \[0, 3\)"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant([[1.0, 2.0]] * 2), tf.constant([0, 5]), [3, 2]))


def _apply(optimizer, g, v):
    optimizer.apply_gradients([(g, v)])
    return v.numpy()


def test_adam_squares_each_row():
    """Keras's Adam on an IndexedSlices: v adds the squares of the rows of a repeated index."""
    rows = np.array([[1.0, 2.0], [3.0, -4.0]], np.float32)
    v = tf.Variable(np.ones((3, 2), np.float32))
    optimizer = tf.keras.optimizers.Adam(0.1)
    _apply(optimizer, tf.IndexedSlices(rows, [0, 0], [3, 2]), v)
    second = [s for s in optimizer.variables if s.shape == (3, 2)][1].numpy()
    np.testing.assert_allclose(second[0], (1 - 0.999) * (rows ** 2).sum(0), rtol=1e-6)
    np.testing.assert_allclose(second[1:], 0.0)


@pytest.mark.parametrize("compiled", [False, True])
def test_unique_rows_are_the_dense_step(compiled):
    """With no repeated index, each optimizer's step on the slices is its step on the dense gradient (Keras's
    own sparse-correctness property)."""
    for name in ["SGD", "Adam", "RMSprop", "Adagrad", "Nadam", "Adamax", "Adadelta", "Lion", "AdamW"]:
        results = []
        for sparse in (True, False):
            v = tf.Variable(np.ones((4, 2), np.float32))
            optimizer = getattr(tf.keras.optimizers, name)(0.1, clipnorm=1.0)

            def step(i, v=v, optimizer=optimizer, sparse=sparse):
                g = tf.IndexedSlices(tf.constant([[1.0, -2.0], [0.5, 3.0]]) * i, tf.constant([3, 1]), [4, 2])
                optimizer.apply_gradients([(g if sparse else tf.convert_to_tensor(g), v)])

            run = tf.function(step) if compiled else step
            for i in range(3):
                run(tf.constant(float(i + 1)))
            results.append(v.numpy())
        np.testing.assert_allclose(*results, rtol=1e-5, atol=1e-7, err_msg=name)


def test_a_bad_slice_changes_nothing():
    v, w = tf.Variable(np.ones((3, 2), np.float32)), tf.Variable([1.0, 2.0])
    optimizer = tf.keras.optimizers.Adam(0.1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 3 is not in \[0, 3\)"):
        optimizer.apply_gradients([(tf.constant([1.0, 1.0]), w),
                                   (tf.IndexedSlices(tf.ones((2, 2)), tf.constant([0, 3]), [3, 2]), v)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dense_shape"):
        optimizer.apply_gradients([(tf.IndexedSlices(tf.ones((1, 2)), tf.constant([0]), [4, 2]), v)])
    np.testing.assert_array_equal(v.numpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    assert int(optimizer.iterations) == 0
