"""IndexedSlices in tapejax and in TensorFlow: which gradients are slices (gathers on the first axis, through
identity, cast and variable reads) and which are dense, their indices, values, dense_shape and printed form; and
Keras's optimizers applying them, repeated rows included, eagerly and in a tf.function, with each clipping."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

TABLE = np.arange(12, dtype=np.float32).reshape(4, 3) / 7.0


def _tensor(tf):
    return tf.constant(TABLE)


def _variable(tf):
    return tf.Variable(TABLE)


# (what is differentiated, the source): each a function of tf and a source made by _tensor or _variable
CASES = {
    "gather_repeats": (lambda tf, x: tf.reduce_sum(tf.gather(x, [0, 0, 3]) ** 2), _variable),
    "gather_matrix_indices": (lambda tf, x: tf.reduce_sum(tf.gather(x, [[1], [1]]) * 3.0), _tensor),
    "gather_scalar_index": (lambda tf, x: tf.reduce_sum(tf.gather(x, 2)), _tensor),
    "gather_int64_indices": (lambda tf, x: tf.reduce_sum(tf.gather(x, tf.constant([3, 1], tf.int64))), _tensor),
    "gather_axis_1_is_dense": (lambda tf, x: tf.reduce_sum(tf.gather(x, [1, 0], axis=1)), _tensor),
    "gather_axis_minus_rank_is_dense": (lambda tf, x: tf.reduce_sum(tf.gather(x, [1], axis=-2)), _tensor),
    "gather_batch_dims_is_dense": (
        lambda tf, x: tf.reduce_sum(tf.gather(x, [[1], [0], [2], [1]], batch_dims=1, axis=1)), _tensor),
    "gather_and_dense_use_is_dense": (lambda tf, x: tf.reduce_sum(tf.gather(x, [1])) + tf.reduce_sum(x), _variable),
    "two_lookups": (lambda tf, x: tf.reduce_sum(tf.gather(x, [0, 2])) + tf.reduce_sum(
        tf.nn.embedding_lookup(x, [2]) * 2.0), _variable),
    "through_identity": (lambda tf, x: tf.reduce_sum(tf.gather(tf.identity(x), [3])), _variable),
    "through_cast": (lambda tf, x: tf.reduce_sum(tf.gather(tf.cast(x, tf.float64), [1]) ** 2), _tensor),
    "identity_used_twice_is_dense": (
        lambda tf, x: (lambda y: tf.reduce_sum(tf.gather(y, [1])) + tf.reduce_sum(y))(tf.identity(x)), _tensor),
    "gather_of_intermediate_is_dense": (lambda tf, x: tf.reduce_sum(tf.gather(x * 2.0, [1])), _tensor),
    "gather_of_gather": (lambda tf, x: tf.reduce_sum(tf.gather(tf.gather(x, [3, 1]), [0]) ** 3), _tensor),
    "gather_nd_rows": (lambda tf, x: tf.reduce_sum(tf.gather_nd(x, [[2], [0], [2]]) ** 2), _variable),
    "gather_nd_elements_is_dense": (lambda tf, x: tf.reduce_sum(tf.gather_nd(x, [[2, 1], [0, 0]])), _tensor),
    "sparse_read": (lambda tf, x: tf.reduce_sum(x.sparse_read([1, 1]) * tf.gather(x, [0, 2])), _variable),
    "lookup_with_max_norm_is_slices": (
        lambda tf, x: tf.reduce_sum(tf.nn.embedding_lookup(x, [3, 1], max_norm=1.0)), _tensor),
    "lookup_with_max_norm_rank2_ids_repeated": (
        lambda tf, x: tf.reduce_sum(tf.nn.embedding_lookup(x, [[3, 1], [3, 0]], max_norm=2.0) ** 3), _variable),
}


def _gradient(tf, name):
    fn, make = CASES[name]
    x = make(tf)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = fn(tf, x)
    return tape.gradient(loss, x)


def _as_numpy(tf, g):
    if isinstance(g, tf.IndexedSlices):
        return ("slices", g.indices.numpy(), g.values.numpy(), g.dense_shape.numpy(), g.values.dtype.name,
                tf.convert_to_tensor(g).numpy())
    return ("dense", g.numpy(), g.dtype.name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gradient_is_what_tf_gives(name):
    ours, theirs = _as_numpy(tapejax, _gradient(tapejax, name)), _as_numpy(tf_real, _gradient(tf_real, name))
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        if isinstance(a, str):
            assert a == b
        else:
            assert a.dtype == b.dtype
            # a clip_by_norm's gradient cancels terms: float32 rounding of the difference, not of the values
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6 if "max_norm" in name else 0)


def test_printed_form_is_tfs():
    ours, theirs = _gradient(tapejax, "gather_repeats"), _gradient(tf_real, "gather_repeats")
    assert str(ours) == str(theirs)
    assert str(-ours) == str(-theirs)
    assert (ours.shape, ours.dtype.name) == (tuple(theirs.shape), theirs.dtype.name)


def test_targets_and_unconnected_gathers():
    for tf in (tapejax, tf_real):
        x = tf.constant(TABLE)
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            z = tf.gather(x, [1])
            unused = tf.gather(x, [2])  # noqa: F841 (reaches no target: no slice of it)
            loss = tf.reduce_sum(z)
        g = tape.gradient(loss, x)
        assert isinstance(g, tf.IndexedSlices) and g.indices.numpy().tolist() == [1]
        assert isinstance(tape.gradient(z, x), tf.IndexedSlices)
        assert not isinstance(tape.gradient(z, z), tf.IndexedSlices)
        both = tape.gradient([z, loss], x)  # two paths into one gather: one slice, their sum
        assert both.indices.numpy().tolist() == [1] and both.values.numpy().tolist() == [[2.0, 2.0, 2.0]]


OPTIMIZERS = [("SGD", {}), ("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("RMSprop", {}),
              ("RMSprop", {"momentum": 0.5, "centered": True}), ("Adagrad", {}), ("Nadam", {}), ("Adamax", {}),
              ("Lion", {}), ("Adadelta", {"learning_rate": 1.0})]
CLIPS = [{}, {"clipnorm": 2.0}, {"clipvalue": 1.5}, {"global_clipnorm": 2.0}]


def _trajectory(tf, name, kwargs, clip, compiled):
    v = tf.Variable(np.ones((5, 2), np.float32))
    w = tf.Variable(np.full((2,), 0.5, np.float32))
    optimizer = getattr(tf.keras.optimizers, name)(**{"learning_rate": 0.1, **kwargs, **clip})

    def step(scale):
        rows = tf.constant([[1.0, 2.0], [3.0, -4.0], [0.5, 0.5], [-1.0, 0.25]]) * scale
        g = tf.IndexedSlices(rows, tf.constant([0, 0, 2, 0]), tf.constant([5, 2]))
        optimizer.apply_gradients([(g, v), (tf.constant([0.3, -0.2]) * scale, w)])

    run = tf.function(step) if compiled else step
    for i in range(4):
        run(tf.constant(float(i + 1)))
    return v.numpy(), w.numpy()


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("clip", range(len(CLIPS)))
@pytest.mark.parametrize("case", range(len(OPTIMIZERS)))
def test_optimizers_apply_slices_as_keras_does(case, clip, compiled):
    """Repeated rows: Keras squares (or takes the absolute value of) each row of an IndexedSlices before adding
    them, and clips its values row by row; a dense gradient would give other figures (checked below)."""
    name, kwargs = OPTIMIZERS[case]
    ours = _trajectory(tapejax, name, kwargs, CLIPS[clip], compiled)
    theirs = _trajectory(tf_real, name, kwargs, CLIPS[clip], compiled)
    for a, b in zip(ours, theirs):
        # Adam's tolerance: Keras's float32 beta_2 in the bias correction (see tf.keras.optimizers.Adam)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


def test_a_dense_gradient_would_differ():
    """The test above can fail: Adam on the dense sum of the same rows moves the variable elsewhere."""
    v_sparse, v_dense = tf_real.Variable(np.ones((5, 2), np.float32)), tf_real.Variable(np.ones((5, 2), np.float32))
    opt_sparse, opt_dense = tf_real.keras.optimizers.Adam(0.1), tf_real.keras.optimizers.Adam(0.1)
    g = tf_real.IndexedSlices(tf_real.constant([[1.0, 2.0], [3.0, -4.0]]), tf_real.constant([0, 0]),
                              tf_real.constant([5, 2]))
    opt_sparse.apply_gradients([(g, v_sparse)])
    opt_dense.apply_gradients([(tf_real.convert_to_tensor(g), v_dense)])
    assert np.abs(v_sparse.numpy() - v_dense.numpy()).max() > 1e-3


def _clipped(tf):
    g = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, -4.0], [0.5, 0.5]]), tf.constant([0, 0, 2]),
                         tf.constant([4, 2]))
    dense = tf.constant([0.3, -4.0])
    results = [tf.clip_by_value(g, -1.5, 1.5), tf.clip_by_norm(g, 2.0), tf.clip_by_norm(g, 2.0, axes=[1])]
    clipped, norm = tf.clip_by_global_norm([g, None, dense], 2.0)
    results += [clipped[0], clipped[2], norm, tf.linalg.global_norm([g, dense])]
    return [(type(r).__name__ == "IndexedSlices", np.asarray(r.values if hasattr(r, "values") else r),
             np.asarray(r.indices) if hasattr(r, "indices") else None) for r in results], clipped[1]


def test_clip_ops_clip_the_values_of_slices():
    """TF's clip ops and global norm read an IndexedSlices' values, repeated rows each on its own, and give
    IndexedSlices back: the norms here are not those of the dense sum."""
    (ours, none_ours), (theirs, none_theirs) = _clipped(tapejax), _clipped(tf_real)
    assert none_ours is None and none_theirs is None
    for (a_slices, a, a_rows), (b_slices, b, b_rows) in zip(ours, theirs):
        assert a_slices == b_slices
        np.testing.assert_allclose(a, b, rtol=1e-6)
        if a_rows is not None:
            np.testing.assert_array_equal(a_rows, b_rows)


def _scattered(tf):
    v = tf.Variable(TABLE)
    v.scatter_add(tf.IndexedSlices(tf.constant([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]), tf.constant([0, 0])))
    v.scatter_sub(tf.IndexedSlices(tf.constant([[0.5, 0.5, 0.5]]), tf.constant([3])))
    v.scatter_update(tf.IndexedSlices(tf.constant([7.0, 7.0, 7.0]), tf.constant(1)))
    v.scatter_max(tf.IndexedSlices(tf.constant([[0.0, 9.0, 0.0]]), tf.constant([2])))
    v.scatter_nd_add([[2]], [[1.0, 1.0, 1.0]])
    v.scatter_nd_update([[3]], [[-1.0, -2.0, -3.0]])
    out = v.numpy().copy()
    for bad in (lambda: v.scatter_add(tf.IndexedSlices(tf.constant([[1.0, 1.0, 1.0]]), tf.constant([5]))),
                lambda: v.scatter_add(tf.constant(1.0))):
        with pytest.raises((tf.errors.InvalidArgumentError, TypeError)) as info:
            bad()
        out = (out, type(info.value).__name__) if isinstance(out, np.ndarray) else (*out, type(info.value).__name__)
    np.testing.assert_array_equal(v.numpy(), out[0])  # the failed scatters changed nothing
    return out


def test_variable_scatter_methods():
    ours, theirs = _scattered(tapejax), _scattered(tf_real)
    np.testing.assert_allclose(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


def _trained_in_a_loop(tf):
    v = tf.Variable(np.ones((4, 2), np.float32))
    optimizer = tf.keras.optimizers.Adam(0.1, clipnorm=1.0)

    @tf.function
    def train(n):
        for i in tf.range(n):  # a loop body tapejax captures: the optimizer's step is one recorded op
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.gather(v, [0, 0, 3]) ** 2 * tf.cast(i + 1, tf.float32))
            optimizer.apply_gradients(zip(tape.gradient(loss, [v]), [v]))

    train(tf.constant(3))
    return v.numpy()


def test_slices_applied_inside_a_traced_loop():
    np.testing.assert_allclose(_trained_in_a_loop(tapejax), _trained_in_a_loop(tf_real), rtol=1e-4, atol=2e-5)
