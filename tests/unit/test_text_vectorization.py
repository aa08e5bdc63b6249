"""tf.keras.layers.TextVectorization (tapejax/keras/layers_text.py): vocabulary order, the output modes, use in
tf.function, tf.data map and models, configs and `.keras` round trips. Real Keras's values: tests/compat."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapejax as tf

CORPUS = ["The cat sat.", "the DOG sat!", "a cat, a dog", "zeta alpha beta", "beta alpha"]


def _adapted(**kwargs):
    layer = tf.keras.layers.TextVectorization(**kwargs)
    layer.adapt(CORPUS)
    return layer


def test_vocabulary_by_count_then_decreasing_token():
    # every word but "zeta" occurs twice: ties go by decreasing token, "zeta" (once) last
    assert _adapted().get_vocabulary() == ["", "[UNK]", "the", "sat", "dog", "cat", "beta", "alpha", "a", "zeta"]
    assert _adapted(max_tokens=5).get_vocabulary() == ["", "[UNK]", "the", "sat", "dog"]
    assert _adapted(output_mode="count").get_vocabulary()[0] == "[UNK]"  # no mask index outside "int"


def test_int_output_pads_truncates_and_maps_oov_to_one():
    layer = _adapted(output_sequence_length=3)
    vocabulary = layer.get_vocabulary()
    out = layer(["The cat", "a b c d e"])
    assert out.dtype == tf.int64 and out.shape == (2, 3)
    assert out.numpy().tolist() == [[vocabulary.index("the"), vocabulary.index("cat"), 0],
                                    [vocabulary.index("a"), 1, 1]]
    assert _adapted()(["a", "zeta alpha beta"]).shape == (2, 3)  # the longest text's length


def test_vector_modes_follow_their_definitions():
    counts = _adapted(output_mode="count")(["dog dog zz qq"]).numpy()
    vocabulary = _adapted(output_mode="count").get_vocabulary()
    assert counts[0, vocabulary.index("dog")] == 2 and counts[0, 0] == 2 and counts.sum() == 4
    assert _adapted(output_mode="multi_hot")(["dog dog zz"]).numpy().max() == 1
    tfidf = _adapted(output_mode="tf_idf")(["dog dog zz"]).numpy()[0]
    idf_dog = math.log(1 + 5 / (1 + 2))  # 5 texts, 2 of them with "dog"
    idf = [math.log(1 + 5 / (1 + d)) for d in (2, 2, 2, 2, 2, 2, 1, 1)]  # "a": twice in one text
    np.testing.assert_allclose(tfidf[vocabulary.index("dog")], 2 * idf_dog, rtol=1e-6)
    np.testing.assert_allclose(tfidf[0], np.mean(idf), rtol=1e-6)  # OOV: the mean weight
    assert _adapted(output_mode="multi_hot", max_tokens=20, pad_to_max_tokens=True)(["a"]).shape == (1, 20)


def test_standardize_split_and_ngrams():
    layer = _adapted(ngrams=2, standardize="lower", split="whitespace")
    assert "cat," in layer.get_vocabulary() and "the dog" in layer.get_vocabulary()
    chars = _adapted(split="character", standardize=None).get_vocabulary()
    assert " " in chars and "T" in chars
    custom = tf.keras.layers.TextVectorization(standardize=lambda x: tf.strings.regex_replace(x, "-", " "),
                                               split=lambda x: tf.strings.split(x), vocabulary=["a", "b"])
    assert custom(["a-b-c"]).numpy().tolist() == [[2, 3, 1]]


def test_errors():
    with pytest.raises(ValueError, match="output_sequence_length"):
        tf.keras.layers.TextVectorization(output_mode="count", output_sequence_length=2)
    with pytest.raises(ValueError, match="Cannot adapt"):
        tf.keras.layers.TextVectorization(vocabulary=["a"]).adapt(CORPUS)
    with pytest.raises(ValueError, match="last shape dimension must be 1"):
        tf.keras.layers.TextVectorization(vocabulary=["a"])(tf.constant([["a", "b"]]))
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tf.keras.layers.TextVectorization(ragged=True)


def test_in_tf_function_dataset_map_and_model():
    layer = _adapted(output_sequence_length=4)
    eager = layer(CORPUS).numpy()
    np.testing.assert_array_equal(tf.function(lambda: layer(tf.constant(CORPUS)))().numpy(), eager)
    ds = tf.data.Dataset.from_tensor_slices((CORPUS, np.arange(5))).batch(2).map(lambda x, y: (layer(x), y))
    assert ds.element_spec[0].shape.as_list() == [None, 4]
    np.testing.assert_array_equal(np.concatenate([x for x, _ in ds.as_numpy_iterator()]), eager)
    inputs = tf.keras.Input(shape=(1,), dtype="string")
    outputs = layer(inputs)
    assert outputs.shape.as_list() == [None, 4] and outputs.dtype == tf.int64
    model = tf.keras.Model(inputs, outputs)
    np.testing.assert_array_equal(model.predict(tf.constant([[c] for c in CORPUS]), verbose=0), eager)


def test_config_and_keras_file_round_trip(tmp_path):
    layer = _adapted(output_mode="tf_idf", max_tokens=8)
    clone = tf.keras.layers.TextVectorization.from_config(layer.get_config())
    assert clone.get_config() == {**layer.get_config(), "name": clone.name, "vocabulary_size": 1}
    inputs = tf.keras.Input(shape=(1,), dtype="string")
    model = tf.keras.Model(inputs, layer(inputs))
    model.save(tmp_path / "m.keras")
    loaded = tf.keras.models.load_model(tmp_path / "m.keras")
    assert loaded.layers[1].get_vocabulary() == layer.get_vocabulary()
    texts = tf.constant([[c] for c in CORPUS])
    np.testing.assert_array_equal(loaded.predict(texts, verbose=0), model.predict(texts, verbose=0))
