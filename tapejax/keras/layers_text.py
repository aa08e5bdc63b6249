"""tf.keras.layers.TextVectorization: strings to token indices (or to multi-hot, count and TF-IDF vectors), as
Keras 3 in TF 2.21 computes them.

>>> import tapejax as tf
>>> vectorize = tf.keras.layers.TextVectorization(output_sequence_length=4)
>>> vectorize.adapt(["The cat sat.", "The dog sat!", "a cat"])
>>> vectorize.get_vocabulary()
['', '[UNK]', 'the', 'sat', 'cat', 'dog', 'a']
>>> vectorize(["the cat sat on the mat"]).numpy()
array([[2, 4, 3, 1]])

A call standardizes the text (`tf.strings.lower`, then Keras's punctuation class removed with
`tf.strings.regex_replace`, or a callable), splits it into tokens, adds the `ngrams` and looks the tokens up in a
StringLookup (`_lookup_layer`, as in Keras, so weights files have Keras's layout). `adapt` counts tokens and
orders them as Keras does: by decreasing count, ties by decreasing token (bytewise), truncated to `max_tokens`.

Strings live on the host (tapejax/_src/string_values.py): the layer computes with NumPy on the strings' values,
so it runs eagerly, in a `tf.data` `map` (which runs a function of strings element by element, eagerly), and in
a `tf.function` on strings known when it is traced.

Differences from TensorFlow: tapejax has no RaggedTensor, so a callable `split` is called on each string alone
(a scalar tensor) and returns that string's tokens (rank 1), and `ragged=True`, `sparse=True` and
`output_mode="one_hot"` raise NotImplementedError.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np

import tapejax as tf
from tapejax.keras.layers import KerasTensor, Layer, _unique_name
from tapejax.keras.layers_lookup import StringLookup

# Keras's class of punctuation, removed by "strip_punctuation" (`,-\.` is the range of `,`, `-` and `.`).
_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
_STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = ("whitespace", "character")
_MODES = ("int", "multi_hot", "count", "tf_idf")


def _check_choice(value: Any, allowed: tuple, arg: str, allow_none: bool = True) -> None:
    if (value is None and allow_none) or callable(value) or value in allowed:
        return
    raise ValueError(f"Unknown value for `{arg}` argument of TextVectorization. Allowed values are: {allowed}. "
                     f"Received: {arg}={value}")


def _ngrams(tokens: list[bytes], widths: tuple[int, ...]) -> list[bytes]:
    """tf.strings.ngrams(tokens, widths, separator=" "): each width's n-grams in turn, none for a short text."""
    return [b" ".join(tokens[i:i + n]) for n in widths for i in range(len(tokens) - n + 1)]


class TextVectorization(Layer):
    """Text to token indices or vectors (`tf.keras.layers.TextVectorization`); see the module docstring.

    Args:
      max_tokens: the vocabulary's largest size, the mask and OOV tokens included (None: no limit).
      standardize: "lower_and_strip_punctuation", "lower", "strip_punctuation", None, or a callable of a string
        tensor.
      split: "whitespace", "character", None (each string is a token), or a callable (called per string here).
      ngrams: None, an int n (the 1- to n-grams) or a tuple of widths.
      output_mode: "int" (indices, 0 for padding, 1 for OOV), "multi_hot", "count" or "tf_idf" (a vector per
        text, index 0 for OOV; int64, and float32 for "tf_idf", as Keras's eager call returns them).
      output_sequence_length: with "int", the length every text is padded or truncated to (else the longest's).
      pad_to_max_tokens: with the vector modes, vectors of `max_tokens` entries.
      vocabulary: a list of tokens, or the path of a text file of one token per line.
      idf_weights: with "tf_idf" and a given vocabulary, each token's weight.
    """

    def __init__(self, max_tokens: int | None = None, standardize: Any = "lower_and_strip_punctuation",
                 split: Any = "whitespace", ngrams: Any = None, output_mode: str = "int",
                 output_sequence_length: int | None = None, pad_to_max_tokens: bool = False, vocabulary: Any = None,
                 idf_weights: Any = None, sparse: bool = False, ragged: bool = False, encoding: str = "utf-8",
                 name: str | None = None, **kwargs: Any):
        has_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("vocabulary_size", None)
        _check_choice(standardize, _STANDARDIZE, "standardize")
        _check_choice(split, _SPLIT, "split")
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        if output_mode == "one_hot" or sparse or ragged:
            raise NotImplementedError("tapejax's TextVectorization has no RaggedTensor or SparseTensor outputs: "
                                      "output_mode='one_hot', sparse=True and ragged=True are not supported.")
        _check_choice(output_mode, _MODES, "output_mode", allow_none=False)
        if not (ngrams is None or isinstance(ngrams, int) or
                isinstance(ngrams, tuple) and all(isinstance(n, int) for n in ngrams)):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        if output_mode == "int" and not (output_sequence_length is None or isinstance(output_sequence_length, int)):
            raise ValueError("`output_sequence_length` must be either None or an integer when `output_mode` is "
                             f"'int'. Received: output_sequence_length={output_sequence_length}")
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError("`output_sequence_length` must not be set if `output_mode` is not 'int'. Received "
                             f"output_sequence_length={output_sequence_length}.")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                             f"idf_weights={idf_weights} and output_mode={output_mode}")
        if output_mode == "tf_idf" and vocabulary is not None and idf_weights is None:
            raise ValueError("When specifying the `vocabulary` argument, in TF-IDF output mode, the `idf_weights` "
                             "argument must also be provided.")
        super().__init__(name=name, **kwargs)
        self._standardize, self._split, self._ngrams_arg = standardize, split, ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._output_mode, self._output_sequence_length = output_mode, output_sequence_length
        self._pad_to_max_tokens, self._encoding = pad_to_max_tokens, encoding
        self._has_input_vocabulary = has_vocabulary
        # Keras's sublayer: the mask token "" takes index 0 in "int" mode only.
        self._lookup_layer = _TextLookup(max_tokens=max_tokens, mask_token="" if output_mode == "int" else None,
                                         name=_unique_name("string_lookup"))
        self._input_vocabulary = None if isinstance(vocabulary, str | os.PathLike) else vocabulary
        self._lookup_layer._input_vocabulary = self._input_vocabulary
        self._input_idf_weights = idf_weights
        self._index: tuple[Any, dict[bytes, int]] = (None, {})
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # -- the vocabulary ------------------------------------------------------------------------------

    def get_vocabulary(self, include_special_tokens: bool = True) -> list[str]:
        """The token of each index, in order (the mask and OOV tokens first unless `include_special_tokens=False`)."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        """The number of indices, the mask and OOV tokens included."""
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Sets the vocabulary (a list, array or tensor of tokens, or the path of a file of one token per line)
        and, with "tf_idf", each token's weight (the OOV token's is their mean, as in Keras).

        Raises:
          ValueError: idf_weights missing with "tf_idf" or given without it, or of another length than the
            vocabulary; the vocabulary's own errors (StringLookup.set_vocabulary).
          tf.errors.InvalidArgumentError: a vocabulary file with an empty line.
        """
        if self._output_mode == "tf_idf" and idf_weights is None:
            raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        if self._output_mode != "tf_idf" and idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                             f"output_mode={self._output_mode} and idf_weights={idf_weights}")
        if isinstance(vocabulary, str | os.PathLike):
            vocabulary = _read_vocabulary_file(os.fspath(vocabulary))
        self._lookup_layer.set_vocabulary(vocabulary)
        self._has_input_vocabulary = True
        if idf_weights is not None:
            weights = np.asarray(idf_weights.numpy() if hasattr(idf_weights, "numpy") else idf_weights, np.float32)
            tokens = self.get_vocabulary(include_special_tokens=False)
            if weights.ndim != 1 or len(weights) != len(tokens):
                raise ValueError("`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                                 f"{len(weights)}; len(vocabulary) is {len(tokens)}")
            self._set_idf(weights)

    def _set_idf(self, weights: np.ndarray) -> None:
        # The OOV token's weight is the mean of the others (Keras cannot count its documents in one pass); with
        # pad_to_max_tokens the unused indices weigh 0.
        full = np.concatenate([np.full(1, np.mean(weights, dtype=np.float32), np.float32), weights])
        if self._pad_to_max_tokens and self._lookup_layer.max_tokens is not None:
            full = np.pad(full, (0, self._lookup_layer.max_tokens - len(full)))
        self._lookup_layer.idf_weights = full.astype(np.float32)

    def adapt(self, data: Any, batch_size: Any = None, steps: int | None = None) -> None:
        """Learns the vocabulary (and, with "tf_idf", the document frequencies) from `data`: an array, list or
        tensor of strings, a `tf.data` dataset (batched or not) or an iterable of batches.

        Raises:
          ValueError: the layer was given a vocabulary (Keras's message).
        """
        if self._has_input_vocabulary:
            raise ValueError(f"Cannot adapt layer '{self._lookup_layer.name}' after setting a static vocabulary "
                             "via `vocabulary` argument or `set_vocabulary()` method.")
        counts: Counter = Counter()
        documents: Counter = Counter()
        n_documents = 0
        for batch in _batches(data, steps):
            texts, _ = self._texts(batch)
            for text in texts:
                counts.update(text)
                if self._output_mode == "tf_idf":
                    documents.update(set(text))
            n_documents += len(texts)
        counts.pop(b"", None)  # the mask token is never learned
        self._lookup_layer._learn(Counter({self._lookup_layer._key(t): n for t, n in counts.items()}))
        if self._output_mode == "tf_idf":
            tokens = [t.encode("utf-8") for t in self.get_vocabulary(include_special_tokens=False)]
            frequency = np.asarray([documents[t] for t in tokens], np.int64)
            # Keras: log(1 + documents / (1 + document frequency)), in float64, then floatx
            self._set_idf(np.log(1 + n_documents / (1 + frequency)).astype(np.float32))

    # -- the call ------------------------------------------------------------------------------------

    def _standardized(self, inputs: Any) -> Any:
        x = _string_tensor(inputs)
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            x = tf.strings.lower(x)
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            x = tf.strings.regex_replace(x, _PUNCTUATION, "")
        if callable(self._standardize):
            x = _string_tensor(self._standardize(x))
        return x

    def _tokens(self, text: bytes) -> list[bytes]:
        if self._split == "whitespace":
            return text.split()  # runs of ASCII whitespace, as tf.strings.split
        if self._split == "character":
            return [c.encode("utf-8") for c in text.decode("utf-8", "replace")]
        return list(np.ravel(self._split(tf.constant(text, tf.string)).numpy()))

    def _texts(self, inputs: Any) -> tuple[list[list[bytes]], tuple[int, ...]]:
        """The token lists of the texts in `inputs` (n-grams added), and the shape the texts are arranged in."""
        values = np.asarray(self._standardized(inputs).numpy(), dtype=object)
        if self._split is None:  # the strings are the tokens; each row of the last axis is one text
            values = values.reshape(1) if values.ndim == 0 else values
            shape = values.shape[:-1]
            texts = [list(row) for row in values.reshape(-1, values.shape[-1])]
        else:
            if values.ndim > 1:
                if values.shape[-1] != 1:
                    raise ValueError("When using `TextVectorization` to tokenize strings, the input rank must be 1 "
                                     "or the last shape dimension must be 1. Received: "
                                     f"inputs.shape={tuple(values.shape)} with rank={values.ndim}")
                values = values[..., 0]
            shape = values.shape
            texts = [self._tokens(v) for v in values.reshape(-1)]
        if self._ngrams is not None:
            texts = [_ngrams(text, self._ngrams) for text in texts]
        return texts, shape

    def _indices(self) -> dict[bytes, int]:
        tokens = self._lookup_layer._tokens  # replaced, never mutated, when the vocabulary changes
        if self._index[0] is not tokens:
            start = self._lookup_layer._token_start_index()
            self._index = (tokens, {t.encode("utf-8"): start + i for i, t in enumerate(tokens)})
        return self._index[1]

    def call(self, inputs: Any) -> Any:
        texts, shape = self._texts(inputs)
        index, oov = self._indices(), self._lookup_layer._token_start_index() - 1
        if self._output_mode == "int":
            index = {**index, b"": 0}
            width = self._output_sequence_length
            if width is None:
                width = max((len(t) for t in texts), default=0)
            out = np.zeros((len(texts), width), np.int64)
            for row, text in zip(out, texts):
                found = [index.get(token, oov) for token in text[:width]]
                row[:len(found)] = found
            return tf.constant(out.reshape(*shape, width))
        depth = self._depth()
        counts = np.zeros((len(texts), depth), np.int64)
        for row, text in zip(counts, texts):
            np.add.at(row, [index.get(token, oov) for token in text if token != b""], 1)
        counts = counts.reshape(*shape, depth)
        if self._output_mode == "multi_hot":
            return tf.constant(np.minimum(counts, 1))
        if self._output_mode == "count":
            return tf.constant(counts)
        if self._lookup_layer.idf_weights is None:
            raise ValueError("When `output_mode` is `'tf_idf'`, `idf_weights` must be provided.")
        return tf.constant(counts.astype(np.float32) * self._lookup_layer.idf_weights)

    def _depth(self) -> int:
        if self._pad_to_max_tokens and self._lookup_layer.max_tokens is not None:
            return self._lookup_layer.max_tokens
        return self.vocabulary_size()

    def compute_output_shape(self, input_shape: Any) -> tf.TensorShape:
        """Keras's static shape: (batch, output_sequence_length) with "int"; else the input's shape, with a
        token axis when the text is split, its last axis replaced by the vector's size."""
        shape = list(tf.TensorShape(input_shape).as_list())
        if self._output_mode == "int":
            return tf.TensorShape([shape[0], self._output_sequence_length])
        shape = (shape + [1] if len(shape) <= 1 else shape) if self._split is None else shape + [None]
        return tf.TensorShape(shape[:-1] + [self._depth()])

    def _call_symbolically(self, inputs: Any, args: tuple, kwargs: dict) -> Any:
        # A call on a KerasTensor needs no probe (the strings of one would be made up): Keras's static shape.
        if not isinstance(inputs, KerasTensor) or args or kwargs:
            return super()._call_symbolically(inputs, args, kwargs)
        from tapejax.keras.layers import _Node

        self.built = True
        node = _Node(self, len(self._inbound_nodes), inputs)
        dtype = tf.int64 if self._output_mode == "int" else tf.float32
        output = KerasTensor(self.compute_output_shape(inputs.shape), dtype)
        output._keras_history = (self, node.index, 0)
        node.outputs = output
        self._inbound_nodes.append(node)
        self._output_shape = output.shape
        return output

    # -- configuration and saving --------------------------------------------------------------------

    def get_config(self) -> dict[str, Any]:
        """Keras 3's configuration: a vocabulary given as a list is in it; a learned one (or a file's) is saved
        as an asset of a `.keras` file."""
        lookup = self._lookup_layer
        listed = [str(v) for v in np.ravel(self._input_vocabulary)] if self._input_vocabulary is not None else None
        weights = self._input_idf_weights
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype.name,
                "max_tokens": lookup.max_tokens, "standardize": self._standardize, "split": self._split,
                "ngrams": self._ngrams_arg, "output_mode": self._output_mode,
                "output_sequence_length": self._output_sequence_length, "pad_to_max_tokens": self._pad_to_max_tokens,
                "sparse": False, "ragged": False, "vocabulary": listed,
                "idf_weights": None if weights is None else [float(w) for w in np.ravel(weights)],
                "encoding": self._encoding, "vocabulary_size": self.vocabulary_size()}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TextVectorization:
        """The layer of `get_config()`'s dictionary (tapejax's or real Keras's)."""
        config = dict(config)
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = config["dtype"].get("config", {}).get("name", "float32")
        return cls(**config)

    def save_own_variables(self, store: dict) -> None:
        """Keras's weights-file entries of the layer: the TF-IDF weights (its `vars/idf_weights`)."""
        self._lookup_layer.save_own_variables(store)

    def load_own_variables(self, store: Any) -> None:
        self._lookup_layer.load_own_variables(store)

    def save_assets(self, dir_path: str) -> None:
        """Keras's asset: a learned vocabulary as `vocabulary.txt` (the StringLookup's, as Keras writes both)."""
        self._lookup_layer.save_assets(dir_path)

    def load_assets(self, dir_path: str) -> None:
        self._lookup_layer.load_assets(dir_path)


class _TextLookup(StringLookup):
    """TextVectorization's StringLookup, which also holds the TF-IDF weights: Keras stores them in the vars of
    both layers."""

    idf_weights: np.ndarray | None = None

    def save_own_variables(self, store: dict) -> None:
        if self.idf_weights is not None:
            store["idf_weights"] = self.idf_weights

    def load_own_variables(self, store: Any) -> None:
        if "idf_weights" in store:
            self.idf_weights = np.asarray(store["idf_weights"], np.float32)


def _string_tensor(value: Any) -> Any:
    x = value if isinstance(value, tf.Tensor) else tf.constant(value, tf.string)
    if x.dtype != tf.string:
        raise TypeError(f"TextVectorization expects strings; got a {x.dtype.name} tensor.")
    return x


def _read_vocabulary_file(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for position, line in enumerate(lines):
        if line == "":
            offset = sum(len(x.encode("utf-8")) + 1 for x in lines[:position])
            raise tf.errors.InvalidArgumentError(None, None, f"Invalid content in {path}: empty line found at "
                                                 f"position {offset}.")
    return lines


def _batches(data: Any, steps: int | None) -> Any:
    """The batches `adapt` reads: a dataset's elements, an iterable's items, or an array (a rank-1 one is a
    column of texts, as Keras reads it)."""
    if hasattr(data, "as_numpy_iterator"):
        if steps is not None:
            data = data.take(steps)
        yield from data.as_numpy_iterator()
    elif hasattr(data, "__iter__") and not isinstance(data, list | tuple | np.ndarray | str | bytes | tf.Tensor):
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                break
            yield batch
    else:
        values = _string_tensor(data)
        yield tf.expand_dims(values, -1) if values.shape.rank == 1 else values
