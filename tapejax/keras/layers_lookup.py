"""tf.keras.layers.StringLookup and IntegerLookup: tokens to indices (and back, with `invert`), in Keras 3's
layout: the mask token at 0 (when there is one), then the OOV indices, then the vocabulary.

>>> import tapejax as tf
>>> lookup = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c"])
>>> lookup(tf.constant([["a", "c", "z"]])).numpy()
array([[1, 3, 0]])
>>> lookup.get_vocabulary()
['[UNK]', 'a', 'b', 'c']
>>> tf.keras.layers.StringLookup(vocabulary=lookup.get_vocabulary(), invert=True)(tf.constant([3, 0])).numpy()
array([b'c', b'[UNK]'], dtype=object)

Differences from TensorFlow: only `output_mode="int"` is implemented (others raise NotImplementedError), and
StringLookup hashes no OOV buckets (`num_oov_indices` > 1 raises NotImplementedError). String values live on the
host (tapejax/_src/string_values.py), so a StringLookup in a `tf.function` works on strings known when it is
traced, and `invert=True` needs concrete indices; IntegerLookup runs compiled.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.layers import Layer


class _IndexLookup(Layer):
    _strings = True

    def __init__(self, max_tokens: int | None, num_oov_indices: int, mask_token: Any, oov_token: Any,
                 vocabulary: Any, invert: bool, output_mode: str, **kwargs: Any):
        for unused in ("idf_weights", "pad_to_max_tokens", "sparse", "encoding", "vocabulary_dtype"):
            kwargs.pop(unused, None)
        super().__init__(**kwargs)
        if output_mode != "int":
            raise NotImplementedError(f"tapejax's {type(self).__name__} implements output_mode='int' only; got "
                                      f"output_mode={output_mode!r}.")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("`num_oov_indices` must be greater than or equal to 0. Received: "
                             f"num_oov_indices={num_oov_indices}")
        if self._strings and num_oov_indices > 1:
            raise NotImplementedError("tapejax's StringLookup does not hash OOV tokens into buckets: use "
                                      "num_oov_indices=0 or 1.")
        self.max_tokens, self.num_oov_indices, self.invert = max_tokens, num_oov_indices, invert
        self.mask_token, self.oov_token, self.output_mode = mask_token, oov_token, output_mode
        self._tokens: list[Any] = []
        self._input_vocabulary = vocabulary  # in the config; a learned vocabulary is a `.keras` file's asset
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    # -- the vocabulary ------------------------------------------------------------------------------

    def _token_start_index(self) -> int:
        return (self.mask_token is not None) + self.num_oov_indices

    def _special_tokens(self) -> list[Any]:
        return [self.mask_token] * (self.mask_token is not None) + [self.oov_token] * self.num_oov_indices

    def _key(self, token: Any) -> Any:
        if self._strings:
            return token.decode("utf-8") if isinstance(token, bytes) else str(token)
        return int(token)

    def vocabulary_size(self) -> int:
        """The number of indices: the special tokens' and the vocabulary's."""
        return self._token_start_index() + len(self._tokens)

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[Any]:
        """The token of each index, in order (the special tokens first unless `include_special_tokens=False`)."""
        return (self._special_tokens() if include_special_tokens else []) + list(self._tokens)

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Sets the vocabulary (a list, array or tensor of tokens; it may start with the special tokens in their
        order, which are then skipped).

        Raises:
          ValueError: an empty vocabulary, repeated tokens, a special token elsewhere than at the start, more
            tokens than `max_tokens` (Keras's messages).
        """
        if isinstance(vocabulary, str):
            raise NotImplementedError("tapejax's lookup layers take the vocabulary as a list, not a file.")
        values = vocabulary.numpy() if hasattr(vocabulary, "numpy") else np.asarray(vocabulary)
        tokens = [self._key(v) for v in np.ravel(values)]
        if not tokens:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        special, start = self._special_tokens(), self._token_start_index()
        if tokens[:start] == special:
            tokens = tokens[start:]
        repeated = sorted({t for t, n in Counter(tokens).items() if n > 1}, key=tokens.index)
        if repeated:
            raise ValueError("The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                             f"The repeated terms are: {repeated}")
        for token, name, checked in ((self.mask_token, "mask", True), (self.oov_token, "OOV", self.invert)):
            if checked and token is not None and token in tokens:
                raise ValueError(f"Found reserved {name} token at unexpected location in `vocabulary`. Note that "
                                 "passed `vocabulary` does not need to include the OOV and mask tokens. Either "
                                 "remove all mask and OOV tokens, or include them only at the start of the "
                                 f"vocabulary in precisely this order: {special}.")
        if self.max_tokens is not None and start + len(tokens) > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                             f"size is {start + len(tokens)}; `max_tokens` is {self.max_tokens}.")
        self._tokens = tokens

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        """Learns the vocabulary from `data` (an array, list, tensor or dataset of tokens): the tokens by
        decreasing count, ties broken by decreasing token (Keras's order), at most `max_tokens` in all."""
        if hasattr(data, "as_numpy_iterator"):
            batches = list(data.as_numpy_iterator())[:steps]
            values = np.concatenate([np.ravel(np.asarray(b, dtype=object)) for b in batches]) if batches else []
        else:
            values = np.ravel(data.numpy() if hasattr(data, "numpy") else np.asarray(data, dtype=object))
        self._learn(Counter(self._key(v) for v in values))

    def _learn(self, counts: Counter) -> None:
        """Sets the vocabulary from token counts (keys as `_key` makes them): Keras's order and truncation."""
        for special in (self.mask_token, self.oov_token):
            counts.pop(special, None)
        ordered = sorted(counts, key=lambda t: (counts[t], t.encode("utf-8") if self._strings else t), reverse=True)
        if self.max_tokens:
            ordered = ordered[:self.max_tokens - self._token_start_index()]
        self._tokens = ordered

    def save_assets(self, dir_path: str) -> None:
        """Keras's asset of a learned vocabulary: `vocabulary.txt`, special tokens included, one per line."""
        if self._input_vocabulary is None:
            with open(os.path.join(dir_path, "vocabulary.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(str(token) for token in self.get_vocabulary()))

    def load_assets(self, dir_path: str) -> None:
        if self._input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        self.set_vocabulary(lines if self._strings else [int(line) for line in lines])

    # -- the lookup ----------------------------------------------------------------------------------

    def call(self, inputs: Any) -> Any:
        return self._invert(inputs) if self.invert else self._lookup(inputs)

    def _index_of(self) -> dict[Any, int]:
        start = self._token_start_index()
        index = {token: start + i for i, token in enumerate(self._tokens)}
        if self.mask_token is not None:
            index[self._key(self.mask_token)] = 0
        return index

    def _check_oov(self, oov: Any, inputs: Any) -> None:
        if self.num_oov_indices == 0 and np.any(oov):
            raise tf.errors.InvalidArgumentError(
                None, None, "When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                f"{np.asarray(inputs)[oov]}, consider setting `num_oov_indices=1`.")


class StringLookup(_IndexLookup):
    """Strings to int64 indices (`tf.keras.layers.StringLookup`); with `invert=True`, indices to strings (an
    index out of range gives the OOV token). See the module docstring."""

    def __init__(self, max_tokens: int | None = None, num_oov_indices: int = 1, mask_token: str | None = None,
                 oov_token: str = "[UNK]", vocabulary: Any = None, idf_weights: Any = None, invert: bool = False,
                 output_mode: str = "int", pad_to_max_tokens: bool = False, sparse: bool = False,
                 encoding: str = "utf-8", name: str | None = None, **kwargs: Any):
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, invert, output_mode,
                         name=name, **kwargs)

    def _lookup(self, inputs: Any) -> Any:
        values = tf.convert_to_tensor(inputs, tf.string).numpy()
        index = self._index_of()
        flat = [index.get(self._key(v), -1) for v in np.ravel(values)]
        result = np.asarray(flat, np.int64).reshape(np.shape(values))
        self._check_oov(result < 0, values)
        return tf.constant(np.where(result < 0, self._token_start_index() - self.num_oov_indices, result))

    def _invert(self, inputs: Any) -> Any:
        indices = np.asarray(tf.convert_to_tensor(inputs).numpy())
        vocabulary = [t.encode("utf-8") for t in self.get_vocabulary()]
        oov = str(self.oov_token).encode("utf-8")
        flat = [vocabulary[i] if 0 <= i < len(vocabulary) else oov for i in np.ravel(indices)]
        return tf.constant(np.asarray(flat, dtype=object).reshape(indices.shape), dtype=tf.string)


class IntegerLookup(_IndexLookup):
    """Integers to int64 indices (`tf.keras.layers.IntegerLookup`): OOV values go to index
    `value mod num_oov_indices` after the mask; with `invert=True`, indices to values. Runs compiled (one
    comparison per vocabulary entry)."""

    _strings = False

    def __init__(self, max_tokens: int | None = None, num_oov_indices: int = 1, mask_token: int | None = None,
                 oov_token: int = -1, output_mode: str = "int", pad_to_max_tokens: bool = False,
                 sparse: bool = False, vocabulary: Any = None, vocabulary_dtype: str = "int64",
                 idf_weights: Any = None, invert: bool = False, name: str | None = None, **kwargs: Any):
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, invert, output_mode,
                         name=name, **kwargs)

    def _lookup(self, inputs: Any) -> Any:
        x = tf.cast(inputs, tf.int64)
        index = self._index_of()
        keys = tf.constant(np.asarray(list(index) or [0], np.int64))
        values = tf.constant(np.asarray(list(index.values()) or [-1], np.int64))
        hits = tf.equal(tf.expand_dims(x, -1), keys)
        found = tf.reduce_any(hits, axis=-1)
        looked_up = tf.gather(values, tf.argmax(tf.cast(hits, tf.int32), axis=-1))
        oov_start = int(self.mask_token is not None)
        if self.num_oov_indices == 0:
            if tf.executing_eagerly():
                self._check_oov(~found.numpy(), x.numpy())
            oov = tf.fill(tf.shape(x), tf.constant(-1, tf.int64))
        else:
            oov = tf.math.floormod(x, self.num_oov_indices) + oov_start
        return tf.where(found, looked_up, oov)

    def _invert(self, inputs: Any) -> Any:
        vocabulary = tf.constant(np.asarray(self.get_vocabulary(), np.int64))
        indices = tf.cast(inputs, tf.int64)
        inside = tf.logical_and(indices >= 0, indices < self.vocabulary_size())
        values = tf.gather(vocabulary, tf.clip_by_value(indices, 0, self.vocabulary_size() - 1))
        return tf.where(inside, values, tf.constant(self.oov_token, tf.int64))
