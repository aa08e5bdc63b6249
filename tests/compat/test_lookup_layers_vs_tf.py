"""StringLookup and IntegerLookup in tapejax and in TensorFlow's Keras: indices, inverted lookups, vocabularies
(given, with special tokens, adapted), sizes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

VOCAB = ["a", "b", "c", "d"]
WORDS = [["a", "z", "c"], ["d", "", "b"]]
TEXT = ["the", "cat", "the", "dog", "a", "cat", "the", "emu", "[UNK]", "bat", "ant"]


def _numpy(value):
    if isinstance(value, list):
        return [_numpy(v) for v in value]
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.dtype == object:  # strings: compared as nested lists of bytes
        return _numpy(value.tolist())
    if isinstance(value, bytes):
        return "bytes:" + value.decode("utf-8")
    return value


SNIPPETS = [
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB)(tf.constant(WORDS)),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, mask_token="")(tf.constant(WORDS)),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB)(tf.constant("b")),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, num_oov_indices=0)(tf.constant(["a", "d"])),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, num_oov_indices=0)(tf.constant(["a", "q"])),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB).get_vocabulary(),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, mask_token="[M]").get_vocabulary(),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, mask_token="[M]").get_vocabulary(False),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=["[UNK]"] + VOCAB).get_vocabulary(),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, oov_token="?").vocabulary_size(),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, invert=True)(tf.constant([[0, 1, 4], [2, 9, 3]])),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, mask_token="", invert=True)(tf.constant([0, 1, 5])),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB + ["a"]),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=[]),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=VOCAB, max_tokens=3),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=["a", "[M]"], mask_token="[M]"),
    lambda tf: tf.keras.layers.StringLookup(vocabulary=["a", "[UNK]"], invert=True),
    lambda tf: tf.keras.layers.StringLookup(max_tokens=1),
    lambda tf: tf.keras.layers.StringLookup(num_oov_indices=-1),
    lambda tf: (lambda l: (l.adapt(TEXT), l.get_vocabulary())[1])(tf.keras.layers.StringLookup()),
    lambda tf: (lambda l: (l.adapt(np.array(TEXT).reshape(-1, 1)), l.get_vocabulary())[1])(
        tf.keras.layers.StringLookup(max_tokens=4)),
    lambda tf: (lambda l: (l.adapt(tf.data.Dataset.from_tensor_slices(TEXT).batch(3)), l(tf.constant(["cat", "x"])))[1])(
        tf.keras.layers.StringLookup(mask_token="")),
    lambda tf: tf.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138])(tf.constant([[12, 1138, 42], [0, 36, 7]])),
    lambda tf: tf.keras.layers.IntegerLookup(vocabulary=[12, 36], mask_token=0)(tf.constant([12, 0, 5])),
    lambda tf: tf.keras.layers.IntegerLookup(vocabulary=[12, 36], num_oov_indices=2)(tf.constant([12, 7, 8, 36])),
    lambda tf: tf.keras.layers.IntegerLookup(vocabulary=[12, 36]).get_vocabulary(),
    lambda tf: tf.keras.layers.IntegerLookup(vocabulary=[12, 36], invert=True)(tf.constant([0, 1, 2, 5])),
    lambda tf: (lambda l: (l.adapt([3, 3, 5, 7, 7, 7, 1]), l.get_vocabulary())[1])(tf.keras.layers.IntegerLookup()),
]


@pytest.mark.parametrize("k", range(len(SNIPPETS)))
def test_lookup_matches_keras(k):
    assert_same_outcome(lambda tf: _numpy(SNIPPETS[k](tf)), tapejax, tf_real)


def test_in_a_compiled_function_as_keras():
    def run(tf):
        lookup = tf.keras.layers.IntegerLookup(vocabulary=[4, 8, 15])
        strings = tf.keras.layers.StringLookup(vocabulary=VOCAB)
        ints = tf.function(lambda x: lookup(x) * 2)(tf.constant([8, 16, 15]))
        return ints.numpy(), tf.function(lambda: strings(tf.constant(["c", "a"])))().numpy()

    assert_same_outcome(run, tapejax, tf_real)
