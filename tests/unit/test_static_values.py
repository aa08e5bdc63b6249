"""Shapes under tf.function (static_values.py): tf.shape, tf.size, tf.rank and what is computed from them have
values at trace time, so the public functions that take a shape, size, depth, count or bound accept them inside
tf.function and under an input_signature with None dimensions; a value that depends on a tensor's contents raises
InvalidArgumentError naming the op. The registry's rows are swept in tests/ops/test_shape_arguments.py."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax._src import deferred
from tapejax._src.deferred import Pending

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4)).astype(np.float32)
Y = RNG.normal(size=(2, 3, 5)).astype(np.float32)
IDS = np.array([0, 3, 1], np.int32)

# What real programs write, each a function of (x [2, 3, 4], y [2, 3, 5], i [3] int32).
PATTERNS = {
    "reshape_to_shape_slice": lambda x, y, i: tf.reshape(x, tf.concat([tf.shape(y)[:-1], [4]], 0)),
    "reshape_dim_and_minus_one": lambda x, y, i: tf.reshape(x, [tf.shape(x)[0], -1]),
    "reshape_product": lambda x, y, i: tf.reshape(x, (tf.shape(x)[0], tf.shape(x)[1] * tf.shape(x)[2])),
    "zeros_of_shape": lambda x, y, i: tf.zeros(tf.shape(x)),
    "ones_of_shape_slice": lambda x, y, i: tf.ones(tf.shape(x)[1:], tf.int32),
    "zeros_list_of_dims": lambda x, y, i: tf.zeros([tf.shape(x)[0], 7]),
    "zeros_of_stacked_dims": lambda x, y, i: tf.zeros(tf.stack([tf.shape(x)[0], 2])),
    "zeros_of_size": lambda x, y, i: tf.zeros(tf.size(x)),
    "zeros_of_rank": lambda x, y, i: tf.zeros(tf.rank(x)),
    "zeros_of_static_shape": lambda x, y, i: tf.zeros(x.shape),
    "fill": lambda x, y, i: tf.fill(tf.shape(x), 2.0),
    "tile_by_shape": lambda x, y, i: tf.tile(x, [1, tf.shape(x)[0], 1]),
    "broadcast_to_shape": lambda x, y, i: tf.broadcast_to(x[:, :, :1], tf.shape(x)),
    "one_hot_depth": lambda x, y, i: tf.one_hot(i, depth=tf.shape(x)[-1]),
    "range_of_dim": lambda x, y, i: tf.range(tf.shape(x)[0]),
    "range_with_delta": lambda x, y, i: tf.range(1, tf.size(x), tf.shape(x)[0] + 3),
    "slice_stop": lambda x, y, i: x[:tf.shape(x)[0] - 1],
    "slice_start_step": lambda x, y, i: x[:, tf.shape(x)[0] - 1::tf.shape(x)[0]],
    "index_by_dim": lambda x, y, i: x[tf.shape(x)[0] - 1],
    "pad_by_dim": lambda x, y, i: tf.pad(x, [[0, tf.shape(x)[0]], [0, 0], [1, 0]]),
    "transpose_reversed_range": lambda x, y, i: tf.transpose(x, tf.range(tf.rank(x))[::-1]),
    "expand_dims_at_rank": lambda x, y, i: tf.expand_dims(x, tf.rank(x)),
    "reduce_last_axis": lambda x, y, i: tf.reduce_sum(x, axis=tf.rank(x) - 1),
    "split_sizes": lambda x, y, i: tf.split(x, [1, tf.shape(x)[2] - 1], axis=2),
    "unstack_num": lambda x, y, i: tf.unstack(x, num=tf.shape(x)[0]),
    "slice_op_size": lambda x, y, i: tf.slice(x, [0, 0, 0], tf.shape(x) - 1),
    "strided_slice_end": lambda x, y, i: tf.strided_slice(x, [0, 0, 0], tf.shape(x), [1, 1, 2]),
    "gather_range": lambda x, y, i: tf.gather(x, tf.range(tf.shape(x)[1]), axis=1),
    "eye_of_dim": lambda x, y, i: tf.eye(tf.shape(x)[1], batch_shape=tf.shape(x)[:1]),
    "linspace_num": lambda x, y, i: tf.linspace(0.0, 1.0, tf.shape(x)[2]),
    "sequence_mask_maxlen": lambda x, y, i: tf.sequence_mask(i, tf.shape(x)[-1]),
    "roll_by_dim": lambda x, y, i: tf.roll(x, shift=tf.shape(x)[0], axis=tf.rank(x) - 1),
    "cast_shape": lambda x, y, i: tf.cast(tf.shape(x), tf.float32) / 2.0,
    "shape_int64": lambda x, y, i: tf.zeros(tf.shape(x, out_type=tf.int64)[1:]),
    "random_normal_shape": lambda x, y, i: tf.shape(tf.random.normal(tf.shape(x))),
    "random_uniform_dims": lambda x, y, i: tf.shape(tf.random.uniform([tf.shape(x)[0], 3])),
    "random_truncated_normal": lambda x, y, i: tf.shape(tf.random.truncated_normal(tf.shape(y)[1:])),
    "stateless_normal": lambda x, y, i: tf.random.stateless_normal(tf.shape(x), seed=[1, 2]),
    "mean_over_size": lambda x, y, i: tf.reduce_sum(x) / tf.cast(tf.size(x), tf.float32),
}


def _same(got, expected):
    got, expected = tf.nest.flatten(got), tf.nest.flatten(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and tuple(g.shape) == tuple(e.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_pattern_inside_tf_function_matches_eager(name):
    f = PATTERNS[name]
    traced = tf.function(f)
    _same(traced(X, Y, IDS), f(tf.constant(X), tf.constant(Y), tf.constant(IDS)))
    assert traced.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("name", sorted(set(PATTERNS) - {"zeros_of_static_shape"}))
def test_pattern_under_input_signature_with_none_dimensions(name):
    f = PATTERNS[name]
    traced = tf.function(f, input_signature=[tf.TensorSpec([None, None, None], tf.float32),
                                             tf.TensorSpec([None, 3, None], tf.float32),
                                             tf.TensorSpec([None], tf.int32)])
    for x, y in ((X, Y), (np.concatenate([X, X]), np.concatenate([Y, Y]))):
        _same(traced(x, y, IDS), f(tf.constant(x), tf.constant(y), tf.constant(IDS)))
    assert traced.experimental_get_tracing_count() == 1  # traced per size, counted once (as TF traces once)


def test_a_partially_known_static_shape_as_a_shape_raises_value_error_as_in_tf():
    traced = tf.function(lambda x: tf.zeros(x.shape), input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    with pytest.raises(ValueError, match=r"Cannot convert a partially known TensorShape \(None, 4\) to a Tensor"):
        traced(X[0])


def test_shape_size_and_rank_are_constants_inside_a_trace():
    seen = []

    @tf.function
    def f(x):
        seen.extend([tf.shape(x).numpy().tolist(), int(tf.size(x)), int(tf.rank(x)), int(tf.shape(x)[0] * 2)])
        return x

    f(X)
    assert seen == [[2, 3, 4], 24, 3, 4]


def test_shape_of_a_deferred_tensor_does_not_compute_it():
    x = tf.Variable(X)
    with tf.GradientTape() as tape:
        y = tf.sin(x) * 2.0
        assert type(deferred.raw(y)) is Pending
        s, n = tf.shape(y), tf.size(y)
        assert type(deferred.raw(y)) is Pending  # its value is still deferred
    assert s.numpy().tolist() == [2, 3, 4] and int(n) == 24
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * np.cos(X), rtol=1e-6)


def test_shape_arguments_inside_traced_control_flow():
    @tf.function
    def f(x, n):
        def body(k, acc):
            return k + 1, acc + tf.reduce_sum(tf.reshape(x, [tf.shape(x)[0], -1]), axis=tf.rank(x) - 3)

        total = tf.while_loop(lambda k, acc: k < n, body, (0, tf.zeros(tf.shape(x)[1] * tf.shape(x)[2])))[1]
        return tf.cond(n > 1, lambda: tf.reshape(total, tf.shape(x)[1:]), lambda: tf.zeros(tf.shape(x)[1:]))

    expected = 3 * np.sum(X.reshape(2, -1), axis=0).reshape(3, 4)
    np.testing.assert_allclose(f(X, tf.constant(3)).numpy(), expected, rtol=1e-5)


def test_autograph_loop_over_a_range_of_a_dimension():
    @tf.function
    def f(x):
        total = tf.zeros(tf.shape(x)[1:])
        for _ in tf.range(tf.shape(x)[0]):
            total += tf.ones(tf.shape(x)[1:])
        return total

    np.testing.assert_array_equal(f(X).numpy(), np.full((3, 4), 2.0, np.float32))


# -- traced indices ----------------------------------------------------------------------------------------------


def test_a_traced_index_is_a_dynamic_slice():
    @tf.function
    def f(x, j):
        total = tf.zeros(tf.shape(x)[1:])
        for k in tf.range(tf.shape(x)[0]):
            total += x[k]
        return total, x[:, j], x[..., j, 1:], x[j - 3, None, j], x[-1, j]

    got = f(X, tf.constant(1))
    expected = (X.sum(0), X[:, 1], X[..., 1, 1:], X[1 - 3, None, 1], X[-1, 1])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-6)


def test_the_gradient_through_a_traced_index_is_jaxs():
    v = tf.Variable(X)

    @tf.function
    def f(j):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v[j] ** 2)
        return tape.gradient(y, v)

    expected = np.zeros_like(X)
    expected[1] = 2 * X[1]
    np.testing.assert_allclose(f(tf.constant(1)).numpy(), expected, rtol=1e-6)


def test_a_traced_index_out_of_range_raises_when_the_step_runs_and_writes_nothing():
    w = tf.Variable(0.0)

    @tf.function
    def f(j):
        w.assign_add(1.0)
        return tf.constant(X[0])[j]

    assert f(tf.constant(-3)).numpy().tolist() == X[0, 0].tolist()  # -3 is the first of 3 rows, as in TF
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        f(tf.constant(3))
    assert float(w.numpy()) == 1.0


# -- values that depend on a tensor's contents -----------------------------------------------------------------

DATA_DEPENDENT = {
    "Fill": lambda x: tf.zeros(tf.cast(tf.reduce_sum(x), tf.int32)),
    "Range": lambda x: tf.range(tf.cast(x[0], tf.int32)),
    "Reshape": lambda x: tf.reshape(x, [tf.cast(x[0], tf.int32), -1]),
    "StridedSlice": lambda x: x[:tf.cast(x[0], tf.int32)],
    "OneHot": lambda x: tf.one_hot([0], tf.cast(x[1], tf.int32)),
    "RandomStandardNormal": lambda x: tf.random.normal([tf.cast(x[1], tf.int32)]),
    "Tile": lambda x: tf.tile(x, tf.cast(x[:1], tf.int32)),
}


@pytest.mark.parametrize("signature", [None, [tf.TensorSpec([None], tf.float32)]], ids=["shapes", "none_dims"])
@pytest.mark.parametrize("op", sorted(DATA_DEPENDENT))
def test_a_value_from_a_tensors_contents_raises_invalid_argument_naming_the_op(op, signature):
    x = np.array([2.0, 3.0], np.float32)
    DATA_DEPENDENT[op](tf.constant(x))  # eagerly it works, as in TF
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"to {op} must be a compile-time constant") as info:
        tf.function(DATA_DEPENDENT[op], input_signature=signature)(x)
    assert "outside the tf.function" in str(info.value)


def test_a_variable_as_a_shape_raises_and_leaves_the_variables_unchanged():
    n = tf.Variable(3)
    w = tf.Variable(1.0)

    @tf.function
    def f():
        w.assign_add(1.0)
        return tf.zeros(n)

    with pytest.raises(tf.errors.InvalidArgumentError, match="Fill must be a compile-time constant"):
        f()
    assert float(w.numpy()) == 1.0
    assert tf.zeros(n).shape == (3,)  # eagerly a variable's value is read


# -- the standard training step ----------------------------------------------------------------------------------


def _classifier(weights=None):
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(5)])
    model(tf.zeros([1, 8]))
    if weights is not None:
        for variable, value in zip(model.variables, weights):
            variable.assign(value)
    optimizer = tf.keras.optimizers.Adam(0.01)
    optimizer.build(model.trainable_variables)
    return model, optimizer


def test_sparse_categorical_crossentropy_training_step_in_tf_function_matches_eager():
    features = RNG.normal(size=(16, 8)).astype(np.float32)
    labels = RNG.integers(0, 5, size=(16,)).astype(np.int32)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def make_step(model, optimizer):
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        return step

    eager_model, eager_optimizer = _classifier()
    model, optimizer = _classifier([v.numpy() for v in eager_model.variables])
    eager_step = make_step(eager_model, eager_optimizer)
    step = tf.function(make_step(model, optimizer))
    signature = [tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None], tf.int32)]
    signature_step = tf.function(make_step(*_classifier([v.numpy() for v in eager_model.variables])),
                                 input_signature=signature)
    for _ in range(3):
        expected = eager_step(tf.constant(features), tf.constant(labels))
        np.testing.assert_allclose(step(features, labels).numpy(), expected.numpy(), rtol=1e-5)
        np.testing.assert_allclose(signature_step(features, labels).numpy(), expected.numpy(), rtol=1e-5)
    for got, want in zip(model.variables, eager_model.variables):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    assert step.experimental_get_tracing_count() == 1
    signature_step(features[:5], labels[:5])  # another batch size: the same trace
    assert signature_step.experimental_get_tracing_count() == 1


def test_an_abandoned_symbolic_trace_prints_nothing(capsys):
    """A step whose symbolic trace needs a concrete size is traced per size instead; what it prints while
    tracing is shown once, by the trace kept (TF traces it once)."""

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def step(x):
        print("Tracing")
        return tf.reshape(x, [x.shape[0] * x.shape[1]])  # a product of two None dimensions: per size

    step(tf.ones([2, 3]))
    assert capsys.readouterr().out == "Tracing\n"
