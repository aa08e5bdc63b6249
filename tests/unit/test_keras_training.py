"""Model.compile/fit/evaluate/predict, callbacks, the data the loop takes, and keras.utils/backend/applications:
the properties that need no TensorFlow (the values themselves are checked against TF in
tests/compat/test_fit_vs_tf.py)."""

from __future__ import annotations

import contextlib
import io
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def _model(seed=0):
    rng = np.random.default_rng(seed)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(3)])
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    return model


def _data(n=100, seed=1):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)).astype(np.float32), rng.integers(0, 3, size=(n,))


def _fit(run_eagerly, epochs=2, **kwargs):
    x, y = _data()
    model = _model()
    model.compile(tf.keras.optimizers.SGD(0.1), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=32, epochs=epochs, shuffle=False, verbose=0, **kwargs)
    return model, history


def test_compiled_fit_equals_eager_fit_and_the_loss_is_jaxs():
    compiled, history = _fit(run_eagerly=False)
    eager, eager_history = _fit(run_eagerly=True)
    for a, b in zip(compiled.get_weights(), eager.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(history.history["loss"], eager_history.history["loss"], rtol=1e-5)
    # the first epoch's loss is the batch-size-weighted mean of each step's loss, computed here with JAX
    x, y = _data()
    weights = [w for w in _model().get_weights()]
    total = 0.0
    for start in range(0, 100, 32):
        xb, yb = x[start:start + 32], y[start:start + 32]

        def loss_fn(ws):
            logits = jnp.maximum(xb @ ws[0] + ws[1], 0) @ ws[2] + ws[3]
            return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(yb)), yb])

        value, grads = jax.value_and_grad(loss_fn)(weights)
        total += float(value) * len(xb)
        weights = [w - 0.1 * g for w, g in zip(weights, grads)]
    np.testing.assert_allclose(history.history["loss"][0], total / 100, rtol=1e-5)


def test_the_step_is_traced_once_and_compiled_once_per_batch_shape():
    first, _ = _fit(run_eagerly=False, epochs=1)
    detector = first.train_function.compiled._detector  # shared by every model's step (one Python function)
    compiles = detector.compiles
    model, _ = _fit(run_eagerly=False, epochs=3)
    # 100 samples in batches of 32: one trace for an unknown batch size, as Keras on TF traces it, compiled for
    # 32 and for the partial 4; three epochs trace and compile nothing new
    assert model.train_function.compiled.experimental_get_tracing_count() == 1
    assert detector.compiles - compiles == 2
    # without a partial batch the size is known, as in TF
    x, y = _data(96)
    exact = _model()
    exact.compile(tf.keras.optimizers.SGD(0.1), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    exact.fit(x, y, batch_size=32, epochs=2, verbose=0)
    (concrete,) = set(exact.train_function.compiled._concrete.values())
    assert not concrete.symbolic


def test_history_and_evaluate_and_predict_shapes():
    model, history = _fit(run_eagerly=False, validation_split=0.25)
    assert list(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.epoch == [0, 1] and model.history is history
    x, y = _data()
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert model.evaluate(x, y, verbose=0, return_dict=True) == {"accuracy": accuracy, "loss": loss}
    predictions = model.predict(x, batch_size=30, verbose=0)
    assert isinstance(predictions, np.ndarray) and predictions.shape == (100, 3)
    np.testing.assert_allclose(predictions, model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert model.predict_on_batch(x[:3]).shape == (3, 3)
    assert model.metrics_names == ["loss", "compile_metrics"]


def test_fit_takes_datasets_generators_and_pydatasets():
    x, y = _data(64)

    def losses(data, **kwargs):
        model = _model()
        model.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model.fit(data, epochs=2, verbose=0, shuffle=False, **kwargs).history["loss"]

    class Batches(tf.keras.utils.PyDataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return x[16 * i:16 * (i + 1)], y[16 * i:16 * (i + 1)]

    def generator():
        while True:
            for i in range(4):
                yield x[16 * i:16 * (i + 1)], y[16 * i:16 * (i + 1)]

    from_arrays = losses(x, y=y, batch_size=16)
    np.testing.assert_allclose(losses(tf.data.Dataset.from_tensor_slices((x, y)).batch(16)), from_arrays, rtol=1e-5)
    np.testing.assert_allclose(losses(Batches()), from_arrays, rtol=1e-5)
    np.testing.assert_allclose(losses(generator(), steps_per_epoch=4), from_arrays, rtol=1e-5)


def test_train_on_batch_and_a_custom_train_step():
    class Custom(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1)
            self.tracker = tf.keras.metrics.Mean(name="my_loss")

        def call(self, x, training=None):
            return self.dense(x)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.tracker.update_state(loss)
            return {"my_loss": self.tracker.result()}

    model = Custom()
    model.compile(tf.keras.optimizers.SGD(0.1))
    x = np.ones((8, 2), np.float32)
    history = model.fit(x, 3 * np.ones((8, 1), np.float32), epochs=3, verbose=0)
    assert list(history.history) == ["my_loss"] and history.history["my_loss"][2] < history.history["my_loss"][0]
    assert model.metrics[-1] is model.tracker  # tracked as an attribute, reset each epoch


def test_callbacks_early_stopping_csv_logger_and_checkpoint(tmp_path):
    x, y = _data()
    model = _model()
    model.compile(tf.keras.optimizers.SGD(0.0), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    csv_path, ckpt_path = tmp_path / "log.csv", tmp_path / "w_{epoch:02d}.weights.h5"
    calls = []
    history = model.fit(x, y, epochs=10, verbose=0, callbacks=[
        tf.keras.callbacks.EarlyStopping(monitor="loss", patience=2, min_delta=1e-3),
        tf.keras.callbacks.CSVLogger(csv_path), tf.keras.callbacks.ModelCheckpoint(str(ckpt_path), save_weights_only=True),
        tf.keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: calls.append(sorted(logs)))])
    assert len(history.epoch) == 3  # a learning rate of 0 never improves: stops after `patience` epochs
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "epoch,loss" and len(lines) == 4
    restored = _model(seed=1)
    restored.load_weights(tmp_path / "w_03.weights.h5")
    np.testing.assert_array_equal(restored.get_weights()[0], model.get_weights()[0])
    assert calls[0] == ["loss"] and len(calls) == 3 * 4


def test_one_callback_not_in_a_list():
    # Keras flattens `callbacks`: TF's simple_audio tutorial passes `callbacks=EarlyStopping(...)` alone
    x, y = _data()
    model = _model()
    model.compile(tf.keras.optimizers.SGD(0.0), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, epochs=10, verbose=0,
                        callbacks=tf.keras.callbacks.EarlyStopping(monitor="loss", patience=2, min_delta=1e-3))
    assert len(history.epoch) == 3


def test_learning_rate_callbacks_reach_the_compiled_step():
    x, y = _data()
    model = _model()
    model.compile(tf.keras.optimizers.SGD(0.1), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = model.get_weights()
    history = model.fit(x, y, epochs=2, verbose=0, callbacks=[tf.keras.callbacks.LearningRateScheduler(
        lambda epoch: 0.0)])
    assert history.history["learning_rate"] == [0.0, 0.0]
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_progbar_lines():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bar = tf.keras.utils.Progbar(3, verbose=2)
        bar.update(1, [("loss", 1.0)])
        bar.update(2, [("loss", 0.5)])
        assert bar._values["loss"] == [1.5, 2]  # averaged over steps until the last update...
        bar.update(3, [("loss", 0.25), ("tiny", 1e-5)])
    line = out.getvalue()  # ...which, as in Keras, shows its own values
    assert line.startswith("3/3 - ") and line.endswith(" - loss: 0.2500 - tiny: 1.0000e-05\n")


def test_compile_resolves_names():
    model = _model()
    model.compile("adam", "mse", metrics=["accuracy", "mae"])
    assert type(model.optimizer).__name__ == "Adam"
    model.fit(np.ones((4, 4), np.float32), np.ones((4, 3), np.float32), verbose=0)
    names = [type(m).__name__ for m in model._compile_metrics.metrics]
    assert names == ["CategoricalAccuracy", "MeanMetricWrapper"]
    with pytest.raises(ValueError, match="compile"):
        _model().fit(np.ones((4, 4)), np.ones((4, 3)))


def test_backend_utils_and_applications():
    backend = tf.keras.backend
    assert (backend.floatx(), backend.epsilon(), backend.image_data_format()) == ("float32", 1e-7, "channels_last")
    backend.set_floatx("float64")
    try:
        assert backend.floatx() == "float64"
    finally:
        backend.set_floatx("float32")
    backend.clear_session()
    assert tf.keras.layers.Dense(1).name == "dense"
    np.testing.assert_array_equal(tf.keras.utils.to_categorical([1, 0]), [[0.0, 1.0], [1.0, 0.0]])
    tf.keras.utils.set_random_seed(3)
    a = np.random.rand()
    tf.keras.utils.set_random_seed(3)
    assert np.random.rand() == a
    image = np.full((1, 1, 1, 3), 255.0, np.float32)
    np.testing.assert_allclose(tf.keras.applications.inception_v3.preprocess_input(image), 1.0)
    missing = not os.path.exists(tf.keras.applications.imagenet_utils.decode_predictions.__globals__[
        "_class_index_path"]())
    if missing:
        with pytest.raises(RuntimeError, match="downloads nothing"):
            tf.keras.applications.resnet50.decode_predictions(np.zeros((1, 1000)))


def test_metrics_keep_state_in_variables_inside_tf_function():
    metric = tf.keras.metrics.AUC(num_thresholds=5)
    update = tf.function(metric.update_state)
    update([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3])
    update([1, 0], [0.9, 0.2])
    assert float(metric.result()) == 1.0 and all(isinstance(v, tf.Variable) for v in metric.variables)
    metric.reset_state()
    assert float(metric.result()) == 0.0


def test_a_flatten_step_is_one_trace_for_every_batch_size():
    # Flatten reshapes to (batch, size): with the batch unknown the batch is the -1, so the step's symbolic trace
    # (for a partial last batch) holds, without the per-size fallback
    model = tf.keras.Sequential([tf.keras.Input((4, 3)), tf.keras.layers.Flatten(), tf.keras.layers.Dense(2)])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    x, y = np.ones((10, 4, 3), np.float32), np.ones((10, 2), np.float32)
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    function = model.train_function.compiled
    assert [c.symbolic for c in set(function._concrete.values())] == [True] and not function._per_size
    np.testing.assert_allclose(model.predict(x, batch_size=4, verbose=0), model(x).numpy(), rtol=1e-6)


class _ZerosLike(tf.keras.layers.Layer):
    def call(self, inputs):
        return inputs + tf.zeros(inputs.shape)  # needs the batch size: a known shape only


def test_a_step_that_needs_the_batch_size_is_traced_per_size():
    # Keras on TF would raise here (the batch is None in its trace); tapejax traces such a step per batch size
    model = tf.keras.Sequential([tf.keras.Input((3,)), _ZerosLike(), tf.keras.layers.Dense(1)])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    x, y = np.ones((10, 3), np.float32), np.ones((10, 1), np.float32)
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    function = model.train_function.compiled
    assert function._per_size and not any(c.symbolic for c in set(function._concrete.values()))
    assert np.all(np.isfinite(history.history["loss"]))
