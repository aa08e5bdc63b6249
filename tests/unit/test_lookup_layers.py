"""StringLookup and IntegerLookup: Keras 3's index layout, inversion, adapt's order, compiled integer lookups."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf


def test_string_round_trip_through_invert():
    vocabulary = ["x", "y", "z"]
    forward = tf.keras.layers.StringLookup(vocabulary=vocabulary, mask_token="")
    indices = forward(tf.constant([["y", "", "q"]]))
    assert indices.dtype == tf.int64 and indices.numpy().tolist() == [[3, 0, 1]]
    back = tf.keras.layers.StringLookup(vocabulary=forward.get_vocabulary(), mask_token="", invert=True)
    assert back(indices).numpy().tolist() == [[b"y", b"", b"[UNK]"]]
    assert forward.vocabulary_size() == 5


def test_adapt_orders_by_count_then_token_and_respects_max_tokens():
    layer = tf.keras.layers.StringLookup(max_tokens=4)
    layer.adapt(tf.constant(["b", "a", "c", "a", "b", "d", "a"]))
    assert layer.get_vocabulary() == ["[UNK]", "a", "b", "d"]  # a:3, b:2, then d > c among the ties


def test_zero_oov_indices_reject_unknown_tokens():
    layer = tf.keras.layers.StringLookup(vocabulary=["a"], num_oov_indices=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_oov_indices=0"):
        layer(tf.constant(["b"]))


@pytest.mark.parametrize("compiled", [False, True])
def test_integer_lookup_with_oov_buckets(compiled):
    layer = tf.keras.layers.IntegerLookup(vocabulary=[10, 20, 30], num_oov_indices=2, mask_token=0)
    call = tf.function(layer) if compiled else layer
    x = np.array([10, 0, 7, 8, 30])
    expected = [3, 0, 1 + 7 % 2, 1 + 8 % 2, 5]  # mask 0, OOV buckets 1-2 by value mod 2, then the vocabulary
    assert call(tf.constant(x)).numpy().tolist() == expected
    inverse = tf.keras.layers.IntegerLookup(vocabulary=[10, 20, 30], invert=True)
    assert inverse(tf.constant([1, 3, 0, 9])).numpy().tolist() == [10, 30, -1, -1]


def test_only_int_output_mode():
    with pytest.raises(NotImplementedError, match="output_mode"):
        tf.keras.layers.StringLookup(output_mode="one_hot")
