"""TextVectorization in tapejax and in TensorFlow's Keras on the same corpus: vocabularies (order of ties
included), indices, vectors, dtypes and shapes, errors, configs, inside tf.function and tf.data `map`, in a
model, and `.keras` files written by one and read by the other."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same, assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

CORPUS = ["The cat sat on the mat.", "The DOG sat!", "a cat, a dog; and a bird", "zeta alpha beta",
          "beta alpha   gamma", "Don't stop-me now", "", "naïve café", "cat cat dog dog"]
QUERIES = ["the cat and the hat", "a bird!", "unknown words only", "", "zeta, beta: alpha?"]


def _numpy(value):
    if isinstance(value, list | tuple):
        return type(value)(_numpy(v) for v in value)
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _adapted(tf, data=CORPUS, **kwargs):
    layer = tf.keras.layers.TextVectorization(**kwargs)
    layer.adapt(data)
    return layer


def _both(layer, queries=QUERIES):
    return layer.get_vocabulary(), layer.vocabulary_size(), layer(queries)


CONFIGS = [
    {}, {"max_tokens": 8}, {"output_sequence_length": 5}, {"output_sequence_length": 2},
    {"standardize": "lower"}, {"standardize": "strip_punctuation"}, {"standardize": None},
    {"split": "character"}, {"split": "character", "max_tokens": 12}, {"ngrams": 2}, {"ngrams": (1, 3)},
    {"ngrams": (2,), "max_tokens": 10}, {"output_mode": "multi_hot"}, {"output_mode": "count"},
    {"output_mode": "tf_idf"}, {"output_mode": "multi_hot", "max_tokens": 6, "pad_to_max_tokens": True},
    {"output_mode": "count", "ngrams": 2, "max_tokens": 20, "pad_to_max_tokens": True},
    {"output_mode": "tf_idf", "max_tokens": 9, "pad_to_max_tokens": True}, {"output_mode": "binary"},
    {"max_tokens": 6, "pad_to_max_tokens": True},
]


@pytest.mark.parametrize("k", range(len(CONFIGS)))
def test_adapted_layer_matches_keras(k):
    assert_same_outcome(lambda tf: _numpy(_both(_adapted(tf, **CONFIGS[k]))), tapejax, tf_real)


SNIPPETS = [
    # inputs of other forms: a column, a scalar, an array; adapt on a dataset (batched, unbatched), an array
    lambda tf: _adapted(tf)(tf.constant([[q] for q in QUERIES])),
    lambda tf: _adapted(tf)(tf.constant("the cat")),
    lambda tf: _adapted(tf, output_mode="multi_hot")("the cat"),
    lambda tf: _adapted(tf)(np.array(QUERIES)),
    lambda tf: _both(_adapted(tf, tf.data.Dataset.from_tensor_slices(CORPUS).batch(4))),
    lambda tf: _both(_adapted(tf, tf.data.Dataset.from_tensor_slices(CORPUS), output_mode="tf_idf")),
    lambda tf: _both(_adapted(tf, np.array(CORPUS), max_tokens=7)),
    lambda tf: _both(_adapted(tf, tf.constant([[c] for c in CORPUS]), output_mode="count")),
    # split=None: every string is a token
    lambda tf: _both(_adapted(tf, ["a b", "", "c", "a b"], split=None), ["a b", "", "zz"]),
    lambda tf: _both(_adapted(tf, ["a", "b", "", "a"], split=None, output_mode="multi_hot"), [["a"], [""], ["z"]]),
    lambda tf: _both(_adapted(tf, [["a", "b", "a"]], split=None, ngrams=2), [["a", "b", "a"]]),
    lambda tf: _both(_adapted(tf, ["x", "y"], split=None, output_sequence_length=2), [["x"], ["y"]]),
    # a given vocabulary, with or without its special tokens; idf weights
    lambda tf: _both(tf.keras.layers.TextVectorization(vocabulary=["cat", "dog", "the"])),
    lambda tf: _both(tf.keras.layers.TextVectorization(vocabulary=["", "[UNK]", "cat", "dog"])),
    lambda tf: _both(tf.keras.layers.TextVectorization(vocabulary=["cat", "dog"], output_mode="count")),
    lambda tf: _both(tf.keras.layers.TextVectorization(vocabulary=["cat", "the"], idf_weights=[0.5, 2.0],
                                                       output_mode="tf_idf")),
    lambda tf: tf.keras.layers.TextVectorization().get_vocabulary(),
    lambda tf: (lambda v: (v.set_vocabulary(["a", "cat"]), _both(v))[1])(tf.keras.layers.TextVectorization()),
    lambda tf: _adapted(tf).get_vocabulary(include_special_tokens=False),
    # callables
    lambda tf: _both(_adapted(tf, standardize=lambda x: tf.strings.regex_replace(x, "a", "X"))),
    lambda tf: _both(_adapted(tf, split=lambda x: tf.strings.split(x, sep="a"), standardize=None), ["banana"]),
    # errors
    lambda tf: tf.keras.layers.TextVectorization(max_tokens=1),
    lambda tf: tf.keras.layers.TextVectorization(standardize="upper"),
    lambda tf: tf.keras.layers.TextVectorization(split="comma"),
    lambda tf: tf.keras.layers.TextVectorization(output_mode="multi_hot", output_sequence_length=3),
    lambda tf: tf.keras.layers.TextVectorization(output_mode="tf_idf", vocabulary=["a"]),
    lambda tf: tf.keras.layers.TextVectorization(ngrams=[1, 2]),
    lambda tf: tf.keras.layers.TextVectorization(vocabulary=["a", "a"]),
    lambda tf: tf.keras.layers.TextVectorization(vocabulary=["a"]).adapt(CORPUS),
    lambda tf: tf.keras.layers.TextVectorization(vocabulary=["a"])(tf.constant([["a", "b"]])),
    lambda tf: tf.keras.layers.TextVectorization(vocabulary=["a", "b", "c"], max_tokens=3),
]


@pytest.mark.parametrize("k", range(len(SNIPPETS)))
def test_text_vectorization_matches_keras(k):
    assert_same_outcome(lambda tf: _numpy(SNIPPETS[k](tf)), tapejax, tf_real)


def test_vocabulary_file_as_keras(tmp_path):
    path = tmp_path / "vocabulary.txt"
    path.write_text("cat\ndog\nthe\n", encoding="utf-8")
    run = lambda tf: _numpy(_both(tf.keras.layers.TextVectorization(vocabulary=str(path))))
    assert_same_outcome(run, tapejax, tf_real)
    bad = tmp_path / "bad.txt"
    bad.write_text("cat\n\ndog\n", encoding="utf-8")
    assert_same_outcome(lambda tf: tf.keras.layers.TextVectorization(vocabulary=str(bad)), tapejax, tf_real)


def test_config_as_keras():
    def run(tf):
        layer = _adapted(tf, max_tokens=9, ngrams=(1, 2), output_sequence_length=6)
        config = {k: v for k, v in layer.get_config().items() if k not in ("name", "dtype")}
        given = tf.keras.layers.TextVectorization(vocabulary=["cat", "dog"], output_mode="tf_idf", idf_weights=[1.0, 2.0])
        config2 = {k: v for k, v in given.get_config().items() if k not in ("name", "dtype")}
        clone = tf.keras.layers.TextVectorization.from_config(given.get_config())
        return config, config2, clone.get_vocabulary(), clone(["the cat dog dog"])
    assert_same_outcome(lambda tf: _numpy(run(tf)), tapejax, tf_real)


def test_in_tf_function_and_dataset_map_as_keras():
    def run(tf):
        layer = _adapted(tf, max_tokens=10, output_sequence_length=4)
        compiled = tf.function(lambda: layer(tf.constant(QUERIES)))()
        labels = np.arange(len(CORPUS), dtype=np.int32)
        ds = tf.data.Dataset.from_tensor_slices((CORPUS, labels)).batch(4).map(lambda x, y: (layer(x), y))
        spec = [(s.shape.as_list(), s.dtype.name) for s in ds.element_spec]
        return compiled, spec, [(x, y) for x, y in ds.as_numpy_iterator()]
    assert_same_outcome(lambda tf: _numpy(run(tf)), tapejax, tf_real)


def test_first_layer_of_a_model_as_keras():
    def run(tf):
        tf.keras.utils.set_random_seed(0)
        layer = _adapted(tf, max_tokens=12, output_sequence_length=5)
        inputs = tf.keras.Input(shape=(1,), dtype="string")
        x = layer(inputs)
        shapes = [(x.shape.as_list() if hasattr(x.shape, "as_list") else list(x.shape)), x.dtype]
        embedded = tf.keras.layers.Embedding(12, 3, embeddings_initializer="ones")(x)
        model = tf.keras.Model(inputs, tf.keras.layers.GlobalAveragePooling1D()(embedded))
        multi = _adapted(tf, output_mode="multi_hot")(tf.keras.Input(shape=(1,), dtype="string"))
        return (str(shapes[1]).replace("<dtype: '", "").replace("'>", ""), shapes[0],
                list(multi.shape), model.predict(tf.constant([[q] for q in QUERIES]), verbose=0))
    assert_same_outcome(lambda tf: _numpy(run(tf)), tapejax, tf_real)


@pytest.mark.parametrize("mode", ["int", "tf_idf"])
@pytest.mark.parametrize("writer", ["tapejax", "keras"])
def test_keras_file_both_ways(tmp_path, mode, writer):
    """A model whose first layer is an adapted TextVectorization, saved by one and loaded by the other: the
    vocabulary travels as Keras's asset, the TF-IDF weights in the weights file."""
    modules = {"tapejax": tapejax, "keras": tf_real}
    reader = "keras" if writer == "tapejax" else "tapejax"
    tf = modules[writer]
    layer = _adapted(tf, output_mode=mode, max_tokens=11)
    inputs = tf.keras.Input(shape=(1,), dtype="string")
    model = tf.keras.Model(inputs, layer(inputs))
    path = str(tmp_path / "text.keras")
    model.save(path)
    queries = [[q] for q in QUERIES]
    expected = np.asarray(model.predict(tf.constant(queries), verbose=0))
    loaded = modules[reader].keras.models.load_model(path)
    got = np.asarray(loaded.predict(modules[reader].constant(queries), verbose=0))
    assert_same(got, expected)
    assert [str(t) for t in loaded.layers[1].get_vocabulary()] == [str(t) for t in layer.get_vocabulary()]
