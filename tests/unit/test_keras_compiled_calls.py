"""Eager calls of Keras models compiled whole (keras/compiled_calls.py): a Sequential or functional model of
built-in layers called eagerly in inference runs as one executable per input signature, with the op-by-op call's
values; anything that could behave differently (a tape, training, user code, masks, a bad input) runs op by op."""

from __future__ import annotations

import gc
import logging
import weakref

import numpy as np
import pytest
import tapejax as tf
from tapejax._src import checking
from tapejax.keras import compiled_calls, masks

from tests.unit.test_shape_inference_compiles import counting_compiles

keras = tf.keras
layers = keras.layers


@pytest.fixture
def compiles():
    """The XLA compiles made so far in the test (and loads from the suite's persistent cache, which stand for one)."""
    with counting_compiles() as seen:
        yield seen


def _generator():
    """A small DCGAN-like generator: Dense, BatchNormalization, LeakyReLU, Reshape, Conv2DTranspose, tanh."""
    model = keras.Sequential([
        keras.Input((6,)), layers.Dense(4 * 4 * 8, use_bias=False), layers.BatchNormalization(), layers.LeakyReLU(),
        layers.Reshape((4, 4, 8)), layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
        layers.BatchNormalization(), layers.Dropout(0.5), layers.Conv2DTranspose(1, 3, padding="same",
                                                                                  activation="tanh")])
    rng = np.random.default_rng(0)
    for weight in model.weights:
        weight.assign(rng.normal(size=weight.shape).astype(np.float32) * 0.3)
    return model


def _plain(model, *args, **kwargs):
    """The op-by-op call (the path compiled calls are a cache of)."""
    compiled_calls._LOCAL.bypass = True
    try:
        return model(*args, **kwargs)
    finally:
        compiled_calls._LOCAL.bypass = False


def _noise(n, seed=1):
    return np.random.default_rng(seed).normal(size=(n, 6)).astype(np.float32)


def test_an_eager_inference_call_is_one_compile_per_signature_with_the_op_by_op_values(compiles):
    model = _generator()
    plain = {n: _plain(model, tf.constant(_noise(n)), training=False).numpy() for n in (3, 5)}
    compiles.clear()
    for n in (3, 5, 3, 5):
        out = model(tf.constant(_noise(n)), training=False)
        assert out.shape == (n, 8, 8, 1) and out.dtype == tf.float32
        np.testing.assert_allclose(out.numpy(), plain[n], rtol=1e-5, atol=1e-6)
    assert len(compiles) == 2  # one executable per batch size, then none
    np.testing.assert_allclose(model(_noise(3)).numpy(), plain[3], rtol=1e-5, atol=1e-6)  # numpy; training=None


def test_a_functional_model_with_two_inputs_and_a_dict_output(compiles):
    a, b = keras.Input((3,)), keras.Input((3,))
    h = layers.Concatenate()([layers.Dense(4, activation="relu")(a), b])
    model = keras.Model([a, b], {"y": layers.Dense(2)(h), "h": h})
    x = [tf.constant(np.ones((2, 3), np.float32)), tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))]
    plain = _plain(model, x)
    compiles.clear()
    got = model(x)
    assert sorted(got) == ["h", "y"] and len(compiles) == 1
    for key in got:
        np.testing.assert_allclose(got[key].numpy(), plain[key].numpy(), rtol=1e-6)


def test_calls_that_could_behave_differently_run_op_by_op(compiles, capsys):
    model = _generator()
    x = tf.constant(_noise(4))
    model(x)  # compiled
    compiles.clear()
    variables_before = [v.numpy() for v in model.weights]
    model(x, training=True)  # training: batch statistics, moving averages updated, dropout drawn
    assert not all(np.array_equal(a, v.numpy()) for a, v in zip(variables_before, model.weights))
    with tf.GradientTape() as tape:  # under a tape: recorded op by op, gradients as before
        loss = tf.reduce_sum(model(x, training=False))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None for g in grads)

    printed = keras.Sequential([keras.Input((2,)), layers.Lambda(lambda t: (print("lambda ran"), t * 2.0)[1])])
    capsys.readouterr()  # the build's probes ran it too
    for _ in range(3):
        printed(tf.ones([1, 2]))
    assert capsys.readouterr().out.count("lambda ran") == 3  # the user's Python runs on every call, as in TF

    def activation(t):
        print("activation ran")
        return tf.nn.relu(t)

    own_activation = keras.Sequential([keras.Input((2,)), layers.Dense(3, activation=activation)])
    capsys.readouterr()
    for _ in range(2):
        own_activation(tf.ones([1, 2]))
    assert capsys.readouterr().out.count("activation ran") == 2

    class Subclassed(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, inputs):
            print("call ran")
            return self.dense(inputs)

    sub = Subclassed()
    for _ in range(2):
        sub(tf.ones([1, 2]))
    assert capsys.readouterr().out.count("call ran") == 2

    masked = keras.Sequential([keras.Input((3,), dtype="int32"), layers.Embedding(5, 2, mask_zero=True)])
    out = masked(tf.constant([[1, 0, 2]]))
    np.testing.assert_array_equal(masks.mask_of(out).numpy(), [[True, False, True]])  # Keras's mask, as op by op


def test_a_model_called_at_many_sizes_stops_compiling_and_never_warns_of_retracing(compiles, caplog):
    model = keras.Sequential([keras.Input((6,)), layers.Dense(3)])
    with caplog.at_level(logging.WARNING):
        for n in range(1, 9):
            out = model(tf.constant(_noise(n)))
            np.testing.assert_allclose(out.numpy(), _plain(model, tf.constant(_noise(n))).numpy(), rtol=1e-6)
    assert "retracing" not in caplog.text, caplog.text
    entry = compiled_calls._ENTRIES[model]
    assert len(entry.signatures) == compiled_calls.MAX_SIGNATURES


def test_a_bad_input_raises_as_op_by_op_and_the_model_runs_op_by_op_after(compiles):
    model = keras.Sequential([keras.Input((6,)), layers.Dense(3)])
    with pytest.raises(Exception) as compiled_error:
        model(tf.ones([2, 5]))
    with pytest.raises(Exception) as plain_error:
        _plain(keras.Sequential([keras.Input((6,)), layers.Dense(3)]), tf.ones([2, 5]))
    assert type(compiled_error.value) is type(plain_error.value)
    assert compiled_calls._ENTRIES[model].declined
    np.testing.assert_allclose(model(tf.constant(_noise(2))).numpy(), _plain(model, tf.constant(_noise(2))).numpy())


def test_checking_mode_compares_the_compiled_call_with_the_op_by_op_one(monkeypatch):
    monkeypatch.setattr(checking.FLAG, "on", True)
    model = _generator()
    model(tf.constant(_noise(2)))  # compared inside: no CheckError

    def wrong(inputs, **kwargs):
        return tf.zeros([2, 8, 8, 1])

    compiled_calls._ENTRIES[model].function = wrong
    with pytest.raises(checking.CheckError, match="compiled_calls.py"):
        model(tf.constant(_noise(2)))


def test_the_compiled_call_does_not_keep_the_model_alive():
    model = _generator()
    model(tf.constant(_noise(2)))
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None


def test_a_layer_reconfigured_after_a_compiled_call_is_seen_by_the_next_call(compiles):
    """Grad-CAM (keras-io) sets `model.layers[-1].activation = None` on a model it has already called."""
    model = keras.Sequential([keras.Input((6,)), layers.Dense(4, activation="relu"),
                              layers.Dense(3, activation="softmax")])
    x = tf.constant(_noise(2))
    probabilities = model(x).numpy()
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    model.layers[-1].activation = None
    logits = model(x).numpy()
    np.testing.assert_allclose(logits, _plain(model, x).numpy(), rtol=1e-6)
    assert not np.allclose(logits.sum(axis=1), 1.0)
    compiles.clear()
    model(x)
    assert compiles == []  # unchanged since: the same trace
    for k in range(compiled_calls.MAX_SIGNATURES + 2):  # reconfigured before every call: op by op after a few
        model.layers[-1].activation = [None, "relu"][k % 2]
        np.testing.assert_allclose(model(x).numpy(), _plain(model, x).numpy(), rtol=1e-6)
    assert compiled_calls._ENTRIES[model].declined


def test_a_model_with_deterministic_preprocessing_layers_is_compiled_and_reads_its_adapted_statistics(compiles):
    """TF's audio tutorial: Resizing and an adapted Normalization before the convolutions, called eagerly."""
    rng = np.random.default_rng(2)
    norm = layers.Normalization()
    norm.adapt(rng.normal(3.0, 2.0, size=(16, 12, 10, 1)).astype(np.float32))
    model = keras.Sequential([keras.Input((12, 10, 1)), layers.Resizing(6, 6), norm, layers.Rescaling(0.5, 1.0),
                              layers.CenterCrop(4, 4), layers.Conv2D(2, 3), layers.UnitNormalization(),
                              layers.Flatten(), layers.Dense(3)])
    x = rng.normal(size=(2, 12, 10, 1)).astype(np.float32)
    plain = _plain(model, x).numpy()
    compiles.clear()
    np.testing.assert_allclose(model(x).numpy(), plain, rtol=1e-5, atol=1e-6)
    assert len(compiles) == 1 and compiled_calls._ENTRIES[model].signatures
    norm.adapt(rng.normal(-1.0, 0.5, size=(16, 12, 10, 1)).astype(np.float32))  # new statistics: the next call's
    np.testing.assert_allclose(model(x).numpy(), _plain(model, x).numpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(model(x).numpy(), plain)

    augmenting = keras.Sequential([keras.Input((4, 4, 1)), layers.RandomFlip()])  # random when training: op by op
    augmenting(x[:, :4, :4])
    assert augmenting not in compiled_calls._ENTRIES
