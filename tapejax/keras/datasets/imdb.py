"""tf.keras.datasets.imdb: 25,000 training and 25,000 test movie reviews as word-index sequences, labelled 0/1."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from tapejax.keras.datasets import _common

FILE_HASH = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_HASH = "bfafd718b763782e994055a2d397834f"


def load_data(path: str = "imdb.npz", num_words: int | None = None, skip_top: int = 0, maxlen: int | None = None,
              seed: int = 113, start_char: int | None = 1, oov_char: int | None = 2, index_from: int = 3,
              **kwargs: Any) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`: object arrays of lists of word indices and int64 labels, each set
    shuffled with Keras's seed; indices are shifted by `index_from` after `start_char`, those outside
    [skip_top, num_words) become `oov_char` (dropped when it is None), and with `maxlen` the reviews of
    `maxlen` words or more are left out."""
    data = _common.load_npz(_common.fetch(path, "imdb.npz", FILE_HASH))
    rng = np.random.RandomState(seed)
    sets = []
    for x, y in ((data["x_train"], data["y_train"]), (data["x_test"], data["y_test"])):
        order = np.arange(len(x))
        rng.shuffle(order)  # one generator for both sets, in this order, as Keras draws them
        sets.append((x[order], y[order]))
    (x_train, labels_train), (x_test, labels_test) = sets
    if start_char is not None or index_from:
        x_train, x_test = (_common.offset(x, start_char, index_from) for x in (x_train, x_test))
    else:
        x_train, x_test = ([list(s) for s in x] for x in (x_train, x_test))
    if maxlen:
        x_train, labels_train = _common.shorter_than(maxlen, x_train, labels_train)
        x_test, labels_test = _common.shorter_than(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                             "Increase maxlen.")
    xs = _common.encode(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    n = len(x_train)
    return (np.array(xs[:n], dtype="object"), labels[:n]), (np.array(xs[n:], dtype="object"), labels[n:])


def get_word_index(path: str = "imdb_word_index.json") -> dict[str, int]:
    """The dictionary from words to their indices (before `index_from` shifts them)."""
    with open(_common.fetch(path, "imdb_word_index.json", WORD_INDEX_HASH)) as f:
        return json.load(f)
