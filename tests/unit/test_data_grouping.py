"""group_by_window / bucket_by_sequence_length, choose/sample_from_datasets, save/load, the file cache and
make_csv_dataset (data/grouping.py, sampling.py, snapshots.py, csv_files.py); TF's orders are checked against TF
in tests/compat/test_data_grouping_vs_tf.py."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tapejax as tf


def test_group_by_window_needs_exactly_one_window_size():
    with pytest.raises(ValueError, match="Either"):
        tf.data.Dataset.range(3).group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(ValueError, match="Either"):
        tf.data.Dataset.range(3).group_by_window(lambda x: x, lambda k, w: w, 2, lambda k: 2)


def test_group_by_window_keeps_every_element_once():
    ds = tf.data.Dataset.range(50).group_by_window(lambda x: x % 7, lambda k, w: w.batch(3), window_size=3)
    got = np.concatenate(list(ds.as_numpy_iterator()))
    assert sorted(got.tolist()) == list(range(50))


def test_bucket_pads_to_the_longest_in_each_batch():
    seqs = [np.ones(n, np.int32) for n in [4, 1, 6, 2]]
    ds = tf.data.Dataset.from_generator(lambda: iter(seqs), output_signature=tf.TensorSpec([None], tf.int32))
    out = list(ds.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3], [2, 2]).as_numpy_iterator())
    assert [b.shape for b in out] == [(2, 6), (2, 2)]
    assert [int(b.sum()) for b in out] == [10, 3]


def test_sample_from_datasets_follows_the_weights_and_its_seed():
    a, b = tf.data.Dataset.range(0, 1).repeat(), tf.data.Dataset.range(1, 2).repeat()
    ds = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.2, 0.8], seed=3).take(2000)
    draws = np.array(list(ds.as_numpy_iterator()))
    assert abs(draws.mean() - 0.8) < 0.05
    again = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.2, 0.8], seed=3).take(2000)
    assert np.array_equal(np.array(list(again.as_numpy_iterator())), draws)


def test_save_and_load_strings_and_elements_of_several_shapes(tmp_path):
    ds = tf.data.Dataset.range(4).map(lambda x: (tf.fill([x], x), tf.strings.as_string(x)))
    ds.save(str(tmp_path / "d"))
    loaded = tf.data.Dataset.load(str(tmp_path / "d"))
    assert loaded.element_spec == ds.element_spec
    got = [(a.tolist(), s) for a, s in loaded.as_numpy_iterator()]
    assert got == [([], b"0"), ([1], b"1"), ([2, 2], b"2"), ([3, 3, 3], b"3")]
    with pytest.raises(tf.errors.NotFoundError):
        tf.data.Dataset.load(str(tmp_path / "missing"))


def test_a_file_cache_is_written_only_by_a_complete_pass(tmp_path):
    calls = []

    def gen():
        for i in range(5):
            calls.append(i)
            yield i

    path = str(tmp_path / "c")
    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int32)).cache(path)
    assert [int(x) for x in ds.take(2)] == [0, 1]
    assert not any(name.startswith("c") for name in os.listdir(tmp_path))
    assert [int(x) for x in ds] == [0, 1, 2, 3, 4]
    calls.clear()
    assert [int(x) for x in ds] == [0, 1, 2, 3, 4] and calls == []  # read back, the generator not run


def test_make_csv_dataset_infers_types_and_splits_the_label(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,c,label\n1,0.5,x,3\n2,1.5,y,4\n")
    ds = tf.data.experimental.make_csv_dataset(str(path), 2, label_name="label", num_epochs=1, shuffle=False)
    features, label = next(iter(ds))
    assert [features[k].dtype for k in "abc"] == [tf.int32, tf.float32, tf.string]
    assert label.numpy().tolist() == [3, 4] and list(features) == ["a", "b", "c"]
