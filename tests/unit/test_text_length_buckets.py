"""Text batches padded to a few lengths (tapejax/keras/host_inputs.py, issue 22): a model that masks its padding
everywhere gets its token ids padded with more zeros to `bucket(length)`, and trains, evaluates and predicts as it
does unpadded (up to the rounding of sums over the padded axis), compiling its step once per bucket instead of
once per length; a model the padding could change keeps each batch's own length."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import host_inputs

layers = tf.keras.layers
WORDS = ["good", "bad", "movie", "plot", "the", "a", "great", "awful", "fine", "story", "was", "not"]


def test_a_bucket_is_at_most_a_quarter_longer_with_four_per_doubling():
    for n in range(1, 5000):
        b = host_inputs.bucket(n)
        assert n <= b <= max(n, 1.25 * n) and host_inputs.bucket(b) == b
    for k in range(3, 12):
        assert len({host_inputs.bucket(n) for n in range(2**k + 1, 2**(k + 1) + 1)}) == 4
    assert [host_inputs.bucket(n) for n in (8, 9, 17, 36, 41, 200)] == [8, 10, 20, 40, 48, 224]


def _texts(n, seed=0):
    """Texts of 9 to 30 words: batches of 8 whose longest text differs from batch to batch."""
    rng = np.random.default_rng(seed)
    texts = np.array([" ".join(rng.choice(WORDS, size=rng.integers(9, 31))) for _ in range(n)])
    return texts, rng.integers(0, 2, size=n).astype(np.float32)


def _lstm(**kw):
    return layers.LSTM(3, **kw)


# Models that mask their padding everywhere: recurrent layers that skip masked steps until one returns no sequence
PADDED = {
    "lstm": lambda: [_lstm(), layers.Dense(1)],
    "stacked_bidirectional": lambda: [layers.Bidirectional(_lstm(return_sequences=True)),
                                      layers.Bidirectional(_lstm()), layers.Dense(2, activation="relu"),
                                      layers.Dense(1)],
    "gru_backwards_sum": lambda: [layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode="sum"),
                                  layers.GRU(2, go_backwards=True), layers.Dense(1)],
    "simple_rnn": lambda: [layers.SimpleRNN(3), layers.Dense(1)],
}
# Models the padding could change: it would be read, or it would show in the outputs
KEPT = {
    "no_mask": lambda: ([layers.Embedding(16, 4), _lstm(), layers.Dense(1)], None),
    "pooled": lambda: ([layers.Embedding(16, 4, mask_zero=True), layers.GlobalAveragePooling1D(),
                        layers.Dense(1)], None),
    "sequence_out": lambda: ([layers.Embedding(16, 4, mask_zero=True), _lstm(return_sequences=True)], None),
    "reversed_sequence": lambda: ([layers.Embedding(16, 4, mask_zero=True),
                                   _lstm(go_backwards=True, return_sequences=True), _lstm()], None),
    "dense_before": lambda: ([layers.Embedding(16, 4, mask_zero=True), layers.Dense(3), _lstm()], None),
    "convolution": lambda: ([layers.Embedding(16, 4, mask_zero=True), layers.Conv1D(2, 3), _lstm()], None),
    "stateful": lambda: ([layers.Embedding(16, 4, mask_zero=True), _lstm(stateful=True)], None),
    "subclass": lambda: ([layers.Embedding(16, 4, mask_zero=True), type("Own", (layers.LSTM,), {})(3)], None),
    "fixed_length": lambda: ([layers.Embedding(16, 4, mask_zero=True), _lstm()], 40),
}


def _model(texts, body, length=None):
    encoder = layers.TextVectorization(max_tokens=16, output_sequence_length=length)
    encoder.adapt(texts)
    return tf.keras.Sequential([encoder, *body])


def _lengths(monkeypatch):
    """The token-id lengths the compiled steps are given, as `split` returns them."""
    seen, split = [], host_inputs.split

    def spy(model, data):
        result = split(model, data)
        if result is not None:
            seen.append(result[2][0].shape[1])
        return result

    monkeypatch.setattr(host_inputs, "split", spy)
    return seen


def _train(body, buckets, monkeypatch):
    monkeypatch.setattr(host_inputs.BUCKETS, "on", buckets)
    lengths = _lengths(monkeypatch)
    texts, labels = _texts(48)
    tf.keras.utils.set_random_seed(5)
    model = _model(texts, [layers.Embedding(16, 4, mask_zero=True), *body()])
    model(tf.constant(texts[:2]))
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(scale=0.4, size=w.shape).astype(w.dtype) for w in model.get_weights()])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.02), loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    data = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(8)
    detector = model.make_train_function().compiled_with_given._detector  # shared by every model's training step
    compiles = detector.compiles
    history = model.fit(data, epochs=2, verbose=0).history
    compiles = detector.compiles - compiles
    evaluated = model.evaluate(data, verbose=0)
    predicted = model.predict(tf.constant(texts[:5]), verbose=0)
    monkeypatch.undo()
    return model, (history, evaluated, predicted), (lengths, compiles)


@pytest.mark.parametrize("body", PADDED.values(), ids=PADDED.keys())
def test_a_model_that_masks_its_padding_trains_padded_as_unpadded_with_fewer_compiles(body, monkeypatch):
    plain, expected, (plain_lengths, plain_compiles) = _train(body, False, monkeypatch)
    model, got, (lengths, compiles) = _train(body, True, monkeypatch)
    assert lengths == [host_inputs.bucket(n) for n in plain_lengths] and lengths != plain_lengths
    for g, e in zip(tf.nest.flatten(got), tf.nest.flatten(expected)):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64), rtol=2e-5, atol=1e-6)
    for g, e in zip(model.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=1e-6)
    # the training step compiles once per length it is given (its second trace has None for the length)
    assert compiles < plain_compiles


@pytest.mark.parametrize("make", KEPT.values(), ids=KEPT.keys())
def test_a_model_the_padding_could_change_keeps_each_batch_length(make, monkeypatch):
    texts, labels = _texts(16)
    body, length = make()
    model = _model(texts, body, length)
    assert not host_inputs._ignores_padding(model)
    lengths = _lengths(monkeypatch)
    model.compile(loss="mse")
    model.predict(tf.constant(texts[:8]), verbose=0)
    longest = max(len(t.split()) for t in texts[:8])
    assert lengths == [length or longest]


def test_turned_off_every_batch_keeps_its_length(monkeypatch):
    monkeypatch.setattr(host_inputs.BUCKETS, "on", False)
    texts, _ = _texts(16)
    model = _model(texts, [layers.Embedding(16, 4, mask_zero=True), _lstm()])
    assert host_inputs._ignores_padding(model)
    lengths = _lengths(monkeypatch)
    model.compile(loss="mse")
    model.predict(tf.constant(texts[:8]), verbose=0)
    assert lengths == [max(len(t.split()) for t in texts[:8])] != [host_inputs.bucket(lengths[0])]


def test_a_model_with_dropout_is_padded_and_predicts_as_unpadded(monkeypatch):
    """Dropout's masks are drawn per text, not per step, so padding leaves them alone; but a step traced once fewer
    draws other op seeds (as TF's does), so training is compared without dropout above."""
    texts, _ = _texts(16)
    model = _model(texts, [layers.Embedding(16, 4, mask_zero=True), layers.SimpleRNN(3, dropout=0.25,
                                                                                      recurrent_dropout=0.25),
                           layers.Dropout(0.5), layers.Dense(1)])
    assert host_inputs._ignores_padding(model)
    model.compile(loss="mse")
    lengths = _lengths(monkeypatch)
    padded = model.predict(tf.constant(texts[:8]), verbose=0)
    monkeypatch.setattr(host_inputs.BUCKETS, "on", False)
    plain = model.predict(tf.constant(texts[:8]), verbose=0)
    assert lengths[0] == host_inputs.bucket(lengths[1]) != lengths[1]
    np.testing.assert_allclose(padded, plain, rtol=1e-6, atol=1e-7)
