"""`for x in dataset:` / `for x in iterator:` / `next(iterator)` inside tf.function (data/graph_loop.py): a graph
loop whose body is traced once per element shape, with the eager loop's values, TF's break and return rules,
and a new pass per call."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax.data import graph_loop


def _data(n=100):
    rng = np.random.RandomState(0)
    x = rng.randn(n, 8).astype(np.float32)
    y = (x @ rng.randn(8).astype(np.float32) > 0).astype(np.int64)
    return x, y


def _variables():
    return tf.Variable(np.full((8, 2), 0.01, np.float32)), tf.Variable(np.zeros(2, np.float32))


def _sgd(w, b, xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(yb, xb @ w + b))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.5 * gw)
    b.assign_sub(0.5 * gb)
    return loss


def test_a_training_epoch_inside_one_function_traces_the_body_once_per_shape_and_matches_the_eager_loop():
    x, y = _data()

    def pipeline():  # two equal pipelines: the same seed gives the same order in each pass
        return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(100, seed=3).map(
            lambda a, b: (a * 0.5, tf.one_hot(b, 2))).batch(32).prefetch(2)

    ds, same = pipeline(), pipeline()
    w, b = _variables()
    eager = [float(_sgd(w, b, xb, yb)) for _ in range(3) for xb, yb in same]
    w2, b2 = _variables()
    shapes = []

    @tf.function
    def epoch(dataset):
        total = tf.constant(0.0)
        for xb, yb in dataset:
            shapes.append(tuple(xb.shape))  # a Python side effect: once per trace of the body
            total += _sgd(w2, b2, xb, yb)
        return total

    totals = [float(epoch(ds)) for _ in range(3)]
    assert epoch.experimental_get_tracing_count() == 1
    assert sorted(shapes) == [(4, 8), (32, 8)]  # the full batch, and once more for the short last batch
    np.testing.assert_allclose(totals, [sum(eager[i:i + 4]) for i in (0, 4, 8)], rtol=1e-5)
    np.testing.assert_allclose(w2.numpy(), w.numpy(), rtol=1e-5, atol=1e-7)


def test_each_call_starts_a_new_pass_and_reshuffles():
    ds = tf.data.Dataset.range(20).shuffle(20, seed=1)

    @tf.function
    def order(dataset):
        out = tf.constant(0, tf.int64)
        for x in dataset:
            out = out * 3 + x
        return out

    same = tf.data.Dataset.range(20).shuffle(20, seed=1)
    expected = [sum(int(v) * 3 ** (19 - i) for i, v in enumerate(same.as_numpy_iterator())) for _ in range(2)]
    assert [int(order(ds)), int(order(ds))] == expected
    assert expected[0] != expected[1]  # reshuffled per pass, as TF's loop
    assert order.experimental_get_tracing_count() == 1


def test_break_stops_the_loop_and_an_infinite_dataset_is_read_lazily():
    @tf.function
    def until(dataset, limit):
        s = tf.constant(0, tf.int64)
        for x in dataset:
            if x > limit:
                break
            s += x
        return s

    assert int(until(tf.data.Dataset.range(10), tf.constant(5, tf.int64))) == 15
    assert int(until(tf.data.Dataset.range(10).repeat(), tf.constant(3, tf.int64))) == 6


def test_return_inside_a_dataset_loop_raises_tfs_error():
    @tf.function
    def first_big(dataset):
        for x in dataset:
            if x > 5:
                return x
        return tf.constant(-1, tf.int64)

    with pytest.raises(NotImplementedError, match="return statement cannot be placed inside"):
        first_big(tf.data.Dataset.range(10))


def test_a_loop_over_an_iterator_continues_it_and_break_leaves_the_rest():
    it = iter(tf.data.Dataset.range(10))

    @tf.function
    def head(iterator):
        s = tf.constant(0, tf.int64)
        for x in iterator:
            if x > 3:
                break
            s += x
        return s

    assert int(head(it)) == 6  # 0..3, and 4 ends the loop (consumed, as in TF)
    assert int(next(it)) == 5
    assert int(head(it)) == 0  # 6 ends it at once
    assert [int(v) for v in it] == [7, 8, 9]


def test_iter_and_next_inside_a_function_read_a_new_pass_per_call():
    ds = tf.data.Dataset.range(5).map(lambda x: x * 10)

    @tf.function
    def two():
        it = iter(ds)
        return next(it) + next(it)

    assert [int(two()), int(two())] == [10, 10]
    assert two.experimental_get_tracing_count() == 1


def test_next_past_the_end_inside_a_function_raises_out_of_range():
    @tf.function
    def three(it):
        return next(it) + next(it) + next(it)

    with pytest.raises(tf.errors.OutOfRangeError):
        three(iter(tf.data.Dataset.range(2)))


def test_variables_and_prints_run_per_element_in_order(capsys):
    v = tf.Variable(0.0)

    @tf.function
    def accumulate(dataset):
        for x in dataset:
            v.assign_add(tf.cast(tf.reduce_sum(x), tf.float32))
            tf.print("x", x)
        return v.read_value()

    assert float(accumulate(tf.data.Dataset.range(5).batch(2))) == 10.0
    assert capsys.readouterr().err.splitlines() == ["x [0 1]", "x [2 3]", "x [4]"]  # tf.print: stderr


def test_a_pipeline_of_unknown_shapes_falls_back_to_a_loop_at_trace_time():
    ds = tf.data.Dataset.range(10).filter(lambda x: x % 3 == 0).batch(2)
    assert graph_loop.kinds(ds) is None

    @tf.function
    def total(dataset):
        s = tf.constant(0, tf.int64)
        for x in dataset:
            s += tf.reduce_sum(x)
        return s

    assert int(total(ds)) == 18


def test_kinds_of_a_pipeline():
    ds = tf.data.Dataset.from_tensor_slices(np.zeros((10, 3), np.float32))
    assert graph_loop.kinds(ds.batch(4)) == [((4, 3),), ((2, 3),)]
    assert graph_loop.kinds(ds.batch(5)) == [((5, 3),)]
    assert graph_loop.kinds(ds.repeat().batch(4)) == [((4, 3),)]
    assert graph_loop.kinds(ds.batch(4).map(lambda x: x[:, :2]).prefetch(1)) == [((4, 2),), ((2, 2),)]
    assert graph_loop.kinds(ds.batch(4, drop_remainder=True)) == [((4, 3),)]
