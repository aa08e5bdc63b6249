"""tf.keras.datasets.reuters: 11,228 newswires as word-index sequences, labelled with 46 topics."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from tapejax.keras.datasets import _common

FILE_HASH = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"
LABEL_NAMES = ("cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee",
               "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx",
               "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock",
               "retail", "ipi", "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem",
               "dlr", "gas", "silver", "wpi", "hog", "lead")


def load_data(path: str = "reuters.npz", num_words: int | None = None, skip_top: int = 0, maxlen: int | None = None,
              test_split: float = 0.2, seed: int = 113, start_char: int | None = 1, oov_char: int | None = 2,
              index_from: int = 3) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """`(x_train, y_train), (x_test, y_test)`: object arrays of lists of word indices and int64 topic labels,
    shuffled with Keras's seed, the last `test_split` kept for testing; `num_words`, `skip_top`, `maxlen`,
    `start_char`, `oov_char` and `index_from` as in `imdb.load_data`."""
    data = _common.load_npz(_common.fetch(path, "reuters.npz", FILE_HASH))
    order = np.arange(len(data["x"]))
    np.random.RandomState(seed).shuffle(order)
    xs, labels = data["x"][order], data["y"][order]
    if start_char is not None or index_from:
        xs = _common.offset(xs, start_char, index_from)
    if maxlen:
        xs, labels = _common.shorter_than(maxlen, xs, labels)
    xs = _common.encode(xs, num_words, skip_top, oov_char)
    n = int(len(xs) * (1 - test_split))
    return ((np.array(xs[:n], dtype="object"), np.array(labels[:n])),
            (np.array(xs[n:], dtype="object"), np.array(labels[n:])))


def get_word_index(path: str = "reuters_word_index.json") -> dict[str, int]:
    """The dictionary from words to their indices (before `index_from` shifts them)."""
    with open(_common.fetch(path, "reuters_word_index.json", WORD_INDEX_HASH)) as f:
        return json.load(f)


def get_label_names() -> tuple[str, ...]:
    """The 46 topics' names, by label."""
    return LABEL_NAMES
