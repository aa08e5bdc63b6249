"""Keras names real TF programs use that issue 20's coverage target brought in: `Callback.model`/`params`, the
Keras 2 `Model.compiled_loss`/`compiled_metrics` shims, the `tf.optimizers`/`tf.losses`/`tf.initializers`/
`tf.metrics` aliases, the image utilities, and attributes declared on the class (`Dense.kernel`,
`optimizer.iterations`). tests/compat/test_keras_compat_names_vs_tf.py compares them with Keras."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import tapejax as tf


def _model():
    inputs = tf.keras.Input((3,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(inputs))
    model.compile("sgd", "mse", metrics=["mae"])
    return model


def test_callback_model_and_params_are_set_by_fit_and_model_is_read_only():
    seen = []

    class Probe(tf.keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            seen.append((self.model, dict(self.params)))

    probe = Probe()
    assert probe.model is None and probe.params is None
    model = _model()
    model.fit(np.ones((4, 3)), np.ones((4, 1)), epochs=2, batch_size=2, verbose=0, callbacks=[probe])
    assert seen == [(model, {"verbose": 0, "epochs": 2, "steps": 2})]
    assert probe.model is model
    with pytest.raises(AttributeError):
        probe.model = None
    assert isinstance(tf.keras.callbacks.Callback.model, property)


def test_compiled_loss_is_compute_loss_and_warns():
    model = _model()
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.array([[1.0], [2.0]], "float32")
    y_pred = model(x)
    with pytest.warns(UserWarning, match="compiled_loss"):
        loss = model.compiled_loss(y, y_pred, regularization_losses=[tf.constant(5.0)])
    np.testing.assert_allclose(loss.numpy(), model.compute_loss(x, y, y_pred).numpy())
    np.testing.assert_allclose(loss.numpy(), np.mean((y - y_pred.numpy()) ** 2), rtol=1e-6)


def test_compiled_metrics_give_mean_metrics_the_predictions():
    model = _model()
    x, y = np.arange(6, dtype="float32").reshape(2, 3), np.array([[1.0], [2.0]], "float32")
    model.fit(x, y, epochs=1, verbose=0)  # builds the compiled metrics
    model.reset_metrics()
    y_pred = model(x).numpy()
    with pytest.warns(UserWarning, match="compiled_metrics"):
        assert model.compiled_metrics.update_state(y, y_pred) is None
    results = model.get_metrics_result()
    # Keras 3's shim: the loss tracker (a Mean) averages y_pred; the compiled metrics see (y, y_pred)
    np.testing.assert_allclose(float(results["loss"]), y_pred.mean(), rtol=1e-6)
    np.testing.assert_allclose(float(results["mae"]), np.abs(y - y_pred).mean(), rtol=1e-6)


def test_keras2_style_train_step_runs_in_fit():
    class Custom(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = tf.keras.Input((3,))
    model = Custom(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
    model.compile(tf.keras.optimizers.SGD(0.1), "mse", metrics=["mae"])
    x, y = np.ones((4, 3), "float32"), np.ones((4, 1), "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    # one step from zero weights: y_pred was 0, so "loss" (the mean prediction, as in Keras 3) is 0, mae is 1
    assert history.history["loss"] == [0.0] and history.history["mae"] == [1.0]
    np.testing.assert_allclose(model.layers[-1].kernel.numpy(), np.full((3, 1), 0.2), rtol=1e-6)


def test_keras_short_namespaces_are_the_keras_ones():
    assert tf.optimizers is tf.keras.optimizers and tf.losses is tf.keras.losses
    assert tf.initializers is tf.keras.initializers and tf.metrics is tf.keras.metrics
    assert tf.optimizers.Adam is tf.keras.optimizers.Adam
    assert tf.losses.categorical_crossentropy is tf.keras.losses.categorical_crossentropy


def test_declared_attributes_are_found_on_the_class_and_raise_before_they_exist():
    assert tf.keras.layers.Dense.kernel.__doc__ and tf.keras.layers.Conv2D.kernel.__doc__
    for layer in (tf.keras.layers.Dense(2), tf.keras.layers.Conv2D(2, 3)):
        with pytest.raises(AttributeError, match="You must build the layer before accessing `kernel`"):
            layer.kernel
        assert not hasattr(layer, "kernel")
    layer = tf.keras.layers.Dense(2)
    layer(tf.ones([1, 3]))
    assert layer.kernel is layer.trainable_weights[0]
    optimizer = tf.keras.optimizers.SGD(0.1)
    v = tf.Variable(1.0)
    optimizer.apply_gradients([(tf.constant(1.0), v)])
    assert int(optimizer.iterations) == 1 and tf.keras.optimizers.Adam.iterations.__doc__


def test_image_round_trip_through_a_png_file(tmp_path):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (5, 7, 3)).astype("float32")
    path = tmp_path / "a.png"
    tf.keras.utils.save_img(path, pixels, scale=False)
    img = tf.keras.utils.load_img(path)
    assert img.mode == "RGB" and img.size == (7, 5)
    np.testing.assert_array_equal(tf.keras.utils.img_to_array(img), pixels)
    gray = tf.keras.preprocessing.image.load_img(str(path), color_mode="grayscale", target_size=(3, 4))
    assert gray.mode == "L" and tf.keras.preprocessing.image.img_to_array(gray).shape == (3, 4, 1)
    with open(path, "rb") as f:
        rgba = tf.keras.utils.load_img(io.BytesIO(f.read()), color_mode="rgba")
    assert tf.keras.utils.img_to_array(rgba, data_format="channels_first").shape == (4, 5, 7)


def test_array_to_img_scales_and_picks_the_mode():
    x = np.array([[[-1.0], [0.0]], [[1.0], [3.0]]])
    img = tf.keras.utils.array_to_img(x)
    np.testing.assert_array_equal(np.asarray(img), ((x[..., 0] + 1) / 4 * 255).astype("uint8"))
    assert tf.keras.utils.array_to_img(np.full((2, 2, 1), 1000.0), scale=False).mode == "I"
    assert tf.keras.utils.array_to_img(np.zeros((4, 2, 2)), data_format="channels_first").mode == "RGBA"
    with pytest.raises(ValueError, match="rank 3"):
        tf.keras.utils.array_to_img(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="Unsupported channel number"):
        tf.keras.utils.array_to_img(np.zeros((2, 2, 2)))


def test_load_img_errors(tmp_path):
    tf.keras.utils.save_img(tmp_path / "b.png", np.zeros((2, 2, 3)))
    with pytest.raises(TypeError, match="path should be path-like"):
        tf.keras.utils.load_img(3)
    with pytest.raises(ValueError, match="color_mode"):
        tf.keras.utils.load_img(tmp_path / "b.png", color_mode="cmyk")
    with pytest.raises(ValueError, match="Invalid interpolation"):
        tf.keras.utils.load_img(tmp_path / "b.png", target_size=(3, 3), interpolation="cubic")


def test_output_shape_of_sequential_and_functional_models():
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2), tf.keras.layers.Reshape((2, 1))])
    assert model.output_shape == (None, 2, 1)
    called = tf.keras.Sequential([tf.keras.layers.Dense(4)])
    with pytest.raises(AttributeError, match="has no defined output shape yet"):
        called.output_shape
    called(tf.ones([5, 3]))
    assert called.output_shape == (5, 4)  # Keras: built by a call, the call's batch size
    inputs = tf.keras.Input((3,))
    two = tf.keras.Model(inputs, [tf.keras.layers.Dense(2)(inputs), tf.keras.layers.Dense(4)(inputs)])
    assert two.output_shape == [(None, 2), (None, 4)]


def test_layer_add_variable_add_metric_and_class_level_names():
    layer = tf.keras.layers.Layer()
    w = layer.add_variable((2, 3), "ones", dtype="float64", trainable=False, name="w")
    assert w.dtype == tf.float64 and not w.trainable and w in layer.non_trainable_weights
    np.testing.assert_array_equal(w.numpy(), np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="add_metric"):
        layer.add_metric(tf.constant(1.0))
    assert tf.keras.Layer is tf.keras.layers.Layer
    assert tf.keras.Model.trainable.__doc__ and tf.keras.metrics.Metric.dtype.__doc__
    assert tf.keras.metrics.Mean().dtype == tf.float32


def test_layer_metrics_are_its_own_then_its_sublayers():
    class Block(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.tracker = tf.keras.metrics.Mean(name="tracker")
            self.dense = tf.keras.layers.Dense(1)
            self.child = tf.keras.layers.Layer()
            self.child.counter = tf.keras.metrics.Sum(name="counter")

    block = Block()
    assert [m.name for m in block.metrics] == ["tracker", "counter"]
    assert tf.keras.layers.Dense(1).metrics == []
