"""Text models in fit, evaluate and predict (tapejax/keras/host_inputs.py): the layers that read a batch's strings
run before the compiled step, which is then traced once per shape of their outputs instead of once per batch, and
gives the values the plain path gives."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import host_inputs

WORDS = ["good", "bad", "movie", "plot", "the", "a", "great", "awful", "fine", "story"]


def _texts(n, seed=0):
    rng = np.random.default_rng(seed)
    texts = np.array([" ".join(rng.choice(WORDS, size=rng.integers(2, 9))) for _ in range(n)])
    return texts, rng.integers(0, 2, size=n).astype(np.float32)


def _encoder(texts):
    encoder = tf.keras.layers.TextVectorization(max_tokens=12, output_sequence_length=8)
    encoder.adapt(texts)
    return encoder


def _sequential(texts):
    return tf.keras.Sequential([_encoder(texts), tf.keras.layers.Embedding(12, 4, mask_zero=True),
                                tf.keras.layers.GRU(3), tf.keras.layers.Dense(1)])


def _functional(texts):
    inputs = tf.keras.Input(shape=(), dtype="string")
    side = tf.keras.Input(shape=(2,))
    hidden = tf.keras.layers.GRU(3)(tf.keras.layers.Embedding(12, 4, mask_zero=True)(_encoder(texts)(inputs)))
    return tf.keras.Model([inputs, side], tf.keras.layers.Dense(1)(tf.keras.layers.concatenate([hidden, side])))


def _train(make, monkeypatch, split):
    texts, labels = _texts(96)
    model = make(texts)
    functional = len(model.inputs) == 2 if hasattr(model, "_input_tensors") else False
    side = np.linspace(-1, 1, 192, dtype=np.float32).reshape(96, 2)
    x = (texts, side) if functional else texts
    model(tf.nest.map_structure(lambda a: tf.constant(a[:2]), x))  # built: its weights are the ones set below
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(scale=0.3, size=w.shape).astype(w.dtype) if w.dtype.kind == "f" else w
                       for w in model.get_weights()])
    if not split:
        monkeypatch.setattr(host_inputs, "split", lambda model, data: None)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    data = tf.data.Dataset.from_tensor_slices((x, labels)).batch(16)
    history = model.fit(data, epochs=2, verbose=0).history
    evaluated = model.evaluate(data, verbose=0)
    predicted = model.predict(data.map(lambda features, label: (features,)), verbose=0)
    monkeypatch.undo()
    return model, history, evaluated, predicted


@pytest.mark.parametrize("make", [_sequential, _functional], ids=["Sequential", "Functional"])
def test_a_text_model_trains_as_on_the_plain_path_with_one_trace_for_every_batch(make, monkeypatch):
    plain = _train(make, monkeypatch, split=False)
    model, *results = _train(make, monkeypatch, split=True)
    for got, expected in zip(results, plain[1:]):
        got_leaves, expected_leaves = tf.nest.flatten(got), tf.nest.flatten(expected)
        np.testing.assert_allclose(np.asarray(got_leaves, np.float64), np.asarray(expected_leaves, np.float64),
                                   rtol=1e-6)
    for got, expected in zip(model.get_weights(), plain[0].get_weights()):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    # 6 batches of new texts, twice: one trace of the step (the plain path traces once per batch)
    assert model.train_function.compiled_with_given.experimental_get_tracing_count() == 1
    assert model.train_function.compiled.experimental_get_tracing_count() == 0
    assert plain[0].train_function.compiled.experimental_get_tracing_count() == 6


def test_a_string_input_read_by_two_layers_keeps_the_plain_path():
    texts, labels = _texts(8)
    inputs = tf.keras.Input(shape=(), dtype="string")
    words = tf.keras.layers.Embedding(12, 2)(_encoder(texts)(inputs))
    other = tf.keras.layers.Embedding(12, 2)(_encoder(texts[::-1])(inputs))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(tf.keras.layers.Flatten()(
        tf.keras.layers.concatenate([words, other]))))
    assert host_inputs.split(model, (tf.constant(texts), tf.constant(labels))) is None
    model.compile(loss="mse")
    expected = model(tf.constant(texts)).numpy()
    np.testing.assert_allclose(model.predict(texts, verbose=0), expected, rtol=1e-6)


def test_a_train_step_of_the_users_own_keeps_the_plain_path():
    texts, labels = _texts(8)

    class Own(tf.keras.Sequential):
        def train_step(self, data):  # may read the strings themselves
            return super().train_step(data)

    model = Own([_encoder(texts), tf.keras.layers.Embedding(12, 2), tf.keras.layers.Flatten(),
                 tf.keras.layers.Dense(1)])
    assert host_inputs.split(model, (tf.constant(texts), tf.constant(labels))) is None
