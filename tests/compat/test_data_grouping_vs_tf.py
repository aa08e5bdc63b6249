"""The tf.data methods added for issue 19's second part side by side with TensorFlow: group_by_window,
bucket_by_sequence_length, choose_from_datasets and sample_from_datasets (elements, orders, element_spec,
cardinality), make_csv_dataset, save/load, the file cache, Options.threading; and the semantics of a loop over
a dataset or an iterator inside tf.function (break, the iterator's rest, return)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tapejax

from .compare import assert_same, assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

SEQS = [[1] * n for n in [3, 1, 5, 2, 7, 4, 6, 2, 8, 1]]


def _sequences(tf):
    return tf.data.Dataset.from_generator(lambda: iter(SEQS), output_signature=tf.TensorSpec([None], tf.int32))


def _value(x):
    x = np.asarray(x)
    return [b.decode() for b in x.reshape(-1).tolist()] if x.dtype.kind in "OS" else x  # strings: compared as str


def _run(tf, build):
    ds = build(tf)
    elements = [tf.nest.map_structure(_value, e) for e in ds.as_numpy_iterator()]
    spec = tf.nest.map_structure(lambda s: (tuple(s.shape.as_list()) if s.shape.rank is not None else None,
                                            s.dtype.name), ds.element_spec)
    return elements, spec, int(ds.cardinality())


PIPELINES = {
    "window_size": lambda tf: tf.data.Dataset.range(20).group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda k, w: w.batch(4), window_size=4),
    "window_size_func": lambda tf: tf.data.Dataset.range(20).group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda k, w: w.batch(10).map(lambda b: (k, b)),
        window_size_func=lambda k: k + 2),
    "flush_in_key_order": lambda tf: tf.data.Dataset.range(10).group_by_window(
        key_func=lambda x: (10 - x) % 3 * 7, reduce_func=lambda k, w: w.batch(4), window_size=4),
    "bucket": lambda tf: _sequences(tf).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], bucket_boundaries=[3, 5], bucket_batch_sizes=[2, 3, 2]),
    "bucket_to_boundary": lambda tf: _sequences(tf).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], bucket_boundaries=[3, 9], bucket_batch_sizes=[2, 2, 2],
        pad_to_bucket_boundary=True, padding_values=-1),
    "bucket_drop": lambda tf: _sequences(tf).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], bucket_boundaries=[3, 5], bucket_batch_sizes=[3, 3, 3], drop_remainder=True),
    "bucket_no_padding": lambda tf: tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2))
    .bucket_by_sequence_length(lambda x: tf.cast(x[0] % 4, tf.int32), bucket_boundaries=[2],
                               bucket_batch_sizes=[2, 2], no_padding=True),
    "choose": lambda tf: tf.data.Dataset.choose_from_datasets(
        [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 15)],
        tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0, 0, 0, 1], tf.int64))),
    "choose_no_stop": lambda tf: tf.data.Dataset.choose_from_datasets(
        [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 15)],
        tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0, 0, 0, 1], tf.int64)),
        stop_on_empty_dataset=False),
    "choose_nest": lambda tf: tf.data.experimental.choose_from_datasets(
        [tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0]}), tf.data.Dataset.from_tensor_slices({"a": [5.0]})],
        tf.data.Dataset.range(2).repeat(2)),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_pipeline_matches_tf(name):
    assert_same(_run(tapejax, PIPELINES[name]), _run(tf_real, PIPELINES[name]), any_sequence=True)


def test_sample_from_datasets_gives_tfs_elements_and_spec():
    def build(tf):
        return tf.data.Dataset.sample_from_datasets([tf.data.Dataset.range(3), tf.data.Dataset.range(10, 15)],
                                                    weights=[0.3, 0.7], seed=4)
    (mine, spec, card), (theirs, tf_spec, tf_card) = _run(tapejax, build), _run(tf_real, build)
    assert sorted(int(x) for x in mine) == sorted(int(x) for x in theirs)
    assert (spec, card) == (tf_spec, tf_card)


def test_bucket_batch_sizes_must_match_the_boundaries():
    def build(tf):
        return tf.data.Dataset.range(3).bucket_by_sequence_length(lambda x: 1, [2], [2])
    assert_same_outcome(build, tapejax, tf_real)


def _csv(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("x,y,name,label\n1,2.5,a,0\n3,4.5,b,1\n5,,c,0\n7,1e3,d,1\n9,0.5,e,1\n")
    return str(path)


@pytest.mark.parametrize("kwargs", [dict(label_name="label"), dict(select_columns=["x", "label"]),
                                    dict(column_defaults=[0.0, 0.0, "?", 0], label_name="label")])
def test_make_csv_dataset_matches_tf(tmp_path, kwargs):
    path = _csv(tmp_path)

    def build(tf):
        return tf.data.experimental.make_csv_dataset(path, batch_size=2, num_epochs=1, shuffle=False, **kwargs)

    assert_same(_run(tapejax, build)[:2], _run(tf_real, build)[:2], any_sequence=True)


def test_make_csv_dataset_repeats_shuffled_by_default(tmp_path):
    path = _csv(tmp_path)

    def spec(tf):
        ds = tf.data.experimental.make_csv_dataset(path, batch_size=2, label_name="label")
        return _run(tf, lambda _: ds.take(1))[1], int(ds.cardinality())

    assert spec(tapejax) == spec(tf_real)


def test_save_and_load_round_trip_as_in_tf(tmp_path):
    def round_trip(tf):
        path = str(tmp_path / tf.__name__)
        tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2)).map(
            lambda x: {"x": x, "y": tf.cast(x, tf.float32) / 2}).save(path)
        return _run(tf, lambda _: tf.data.Dataset.load(path))
    assert_same(round_trip(tapejax), round_trip(tf_real), any_sequence=True)


def test_a_file_cache_is_read_by_later_datasets_of_that_name(tmp_path):
    def cached(tf):
        path = str(tmp_path / f"cache_{tf.__name__}")
        first = list(tf.data.Dataset.range(3).map(lambda x: x * 2).cache(path).as_numpy_iterator())
        return first, list(tf.data.Dataset.range(7).cache(path).as_numpy_iterator())
    assert_same(cached(tapejax), cached(tf_real), any_sequence=True)


def test_options_threading_is_a_class_attribute_and_a_group_per_options():
    for tf in (tapejax, tf_real):
        assert tf.data.Options.threading is not None
        options = tf.data.Options()
        options.threading.private_threadpool_size = 2
        assert options.threading.private_threadpool_size == 2
        assert tf.data.Options().threading.max_intra_op_parallelism is None


def _loops(tf):
    ds = tf.data.Dataset.range(10)

    @tf.function
    def until(dataset):
        s = tf.constant(0, tf.int64)
        for x in dataset:
            if x > 5:
                break
            s += x
        return s

    @tf.function
    def head(iterator):
        s = tf.constant(0, tf.int64)
        for x in iterator:
            if x > 3:
                break
            s += x
        return s

    @tf.function
    def pairs():
        it = iter(ds.batch(3))
        return next(it) + next(it)

    @tf.function
    def last(dataset):
        out = tf.zeros([1], tf.int64)
        for x in dataset:  # batches of 4 and a last one of 2: two element shapes
            out = x[-1:] + out
        return out

    it = iter(ds)
    return (until(ds), until(ds.repeat()), head(it), next(it), pairs(), pairs(), last(ds.batch(4)))


def test_loops_over_datasets_inside_tf_function_match_tf():
    assert_same(_loops(tapejax), _loops(tf_real))


def test_return_inside_a_dataset_loop_raises_as_in_tf():
    def snippet(tf):
        @tf.function
        def first_big(dataset):
            for x in dataset:
                if x > 5:
                    return x
            return tf.constant(-1, tf.int64)
        return first_big(tf.data.Dataset.range(10))
    assert_same_outcome(snippet, tapejax, tf_real)
