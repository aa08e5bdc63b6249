"""Keras's gradient clipping (`clipnorm`, `clipvalue`, `global_clipnorm`) is one op over all the gradients
(keras/optimizers.py): the values of TF's per-gradient formulas, one compile for the whole list (issue 22: a
program's first step compiled clip_by_norm once per variable shape), TF's error for mixed dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tapejax as tf
from tapejax._src import checking

from tests.unit.test_shape_inference_compiles import counting_compiles

_KINDS = {"norm": "clipnorm", "value": "clipvalue", "global": "global_clipnorm"}


def _per_gradient(kind, limit, grads):
    """The plain path: TF's formulas, op by op, the limit converted to each gradient's dtype."""
    if kind == "norm":
        return [tf.clip_by_norm(g, tf.constant(limit, g.dtype)) for g in grads]
    if kind == "value":
        return [tf.clip_by_value(g, tf.constant(-limit, g.dtype), tf.constant(limit, g.dtype)) for g in grads]
    norm = tf.sqrt(sum(tf.reduce_sum(tf.square(g)) for g in grads))
    bound = tf.constant(limit, norm.dtype)
    return [g * tf.cast(bound / tf.maximum(norm, bound), g.dtype) for g in grads]


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(sorted(_KINDS)), limit=st.floats(1e-3, 10.0),
       shapes=st.lists(st.lists(st.integers(1, 5), max_size=3).map(tuple), min_size=1, max_size=4),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**31 - 1))
def test_clipping_all_gradients_at_once_gives_the_per_gradient_formulas(kind, limit, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    grads = [tf.constant(rng.normal(0, 3, shape).astype(dtype)) for shape in shapes]
    optimizer = tf.keras.optimizers.SGD(0.1, **{_KINDS[kind]: limit})
    clipped = optimizer._clip(grads)
    expected = _per_gradient(kind, limit, grads)
    for got, want in zip(clipped, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_clipping_gradients_of_new_shapes_is_one_compile(kind, monkeypatch):
    monkeypatch.setattr(checking.FLAG, "on", False)  # the checking mode recomputes, compiling
    shapes = [(31, 7), (7,), (3, 3, 5, 2), (2, 17), (17,), (1, 29)]  # shapes no other test clips
    grads = [tf.constant(np.full(shape, 0.5, np.float32)) for shape in shapes]
    optimizer = tf.keras.optimizers.Adam(0.1, **{_KINDS[kind]: 1.0})
    with counting_compiles() as compiled:
        clipped = optimizer._clip(grads)
        again = optimizer._clip(grads)
    assert len(compiled) == 1
    assert [tuple(c.shape) for c in clipped] == shapes
    for a, b in zip(clipped, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_global_norm_over_mixed_dtypes_raises_and_changes_nothing():
    w32, w64 = tf.Variable([1.0, 2.0]), tf.Variable(np.array([3.0], np.float64))
    optimizer = tf.keras.optimizers.SGD(0.1, global_clipnorm=1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="AddV2"):
        optimizer.apply_gradients([(tf.constant([1.0, 1.0]), w32), (tf.constant([1.0], tf.float64), w64)])
    np.testing.assert_array_equal(w32.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(w64.numpy(), [3.0])
    assert int(optimizer.iterations) == 0


def test_clipping_inside_a_tf_function_step_matches_the_eager_step():
    def train(step):
        w = tf.Variable([3.0, -4.0])
        optimizer = tf.keras.optimizers.SGD(0.5, clipnorm=1.0)
        for _ in range(3):
            step(w, optimizer)
        return w.numpy()

    def step(w, optimizer):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * w)
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])

    np.testing.assert_allclose(train(tf.function(step)), train(step), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_clip_by_norm_takes_a_python_number_in_the_tensors_dtype(dtype):
    # TF multiplies by a Python (or numpy) scalar clip_norm as a number of t's dtype: in float64, 2.2 is not the
    # float32 2.2000000476837158 (the error was 2e-8 relative, and it reached embedding_lookup's max_norm).
    x = np.array([3.0, 4.0], dtype)
    expected = x * np.asarray(2.2, dtype) / np.asarray(5.0, dtype)
    got = tf.clip_by_norm(tf.constant(x), 2.2).numpy()
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps)
    as_float32 = tf.clip_by_norm(tf.constant(x), np.float32(2.2)).numpy()  # a float32 scalar keeps its own value
    np.testing.assert_allclose(as_float32, x * np.asarray(np.float32(2.2), dtype) / 5, rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_array_equal(tf.clip_by_norm(tf.constant(x), -1).numpy(), np.zeros(2, dtype))  # TF: 0
    lookup = tf.nn.embedding_lookup(tf.constant(x.reshape(1, 2)), [0, 0], max_norm=2.2).numpy()
    np.testing.assert_allclose(lookup, np.stack([expected, expected]), rtol=4 * np.finfo(dtype).eps)
