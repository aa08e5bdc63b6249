"""Keras names of issue 20's coverage target in tapejax and in TensorFlow's Keras: `Callback.model`/`params`,
`Model.compiled_loss`/`compiled_metrics` in a Keras-2 style `train_step`, the short namespaces
(`tf.optimizers`, `tf.losses`, ...), the image utilities, and `kernel` before a layer is built."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import tapejax
from tests.compat.compare import assert_same, assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _fit_keras2_style(tf, shuffle_seed=None):
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
    hidden = tf.keras.layers.Dense(4, activation="relu", kernel_initializer=tf.keras.initializers.Constant(0.1),
                                   kernel_regularizer=tf.keras.regularizers.L2(0.01))(inputs)
    model = Custom(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(hidden))
    model.compile(tf.keras.optimizers.SGD(0.05), "mse", metrics=["mae", tf.keras.metrics.MeanSquaredError()])
    x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
    y = x.sum(axis=1, keepdims=True) ** 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        history = model.fit(x, y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    return {k: np.array(v, "float32") for k, v in history.history.items()}, model.get_weights()


def test_keras2_style_train_step_gives_keras_history_and_weights():
    got, expected = _fit_keras2_style(tapejax), _fit_keras2_style(tf_real)
    assert_same(got[0], expected[0])
    assert_same(got[1], expected[1])


def _callback_record(tf):
    records = []

    class Probe(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            records.append((self.model is model, self.params))

    probe = Probe()
    before = (probe.model, probe.params)
    inputs = tf.keras.Input((2,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
    model.compile("sgd", "mse")
    model.fit(np.ones((6, 2)), np.ones((6, 1)), batch_size=4, epochs=2, verbose=0, callbacks=[probe])
    model.evaluate(np.ones((6, 2)), np.ones((6, 1)), verbose=0, callbacks=[probe])
    try:
        probe.model = None
        assigned = "assigned"
    except Exception as e:  # noqa: BLE001
        assigned = type(e).__name__
    return before, records, probe.params, assigned


def test_callback_model_and_params_match_keras():
    assert _callback_record(tapejax) == _callback_record(tf_real)


SHORT_NAMES = [
    lambda tf: tf.losses.categorical_crossentropy(tf.constant([[0.0, 1.0]]), tf.constant([[0.3, 0.7]])),
    lambda tf: tf.losses.binary_crossentropy(tf.constant([[0.0, 1.0]]), tf.constant([[0.3, 0.7]])),
    lambda tf: tf.losses.MSE(tf.constant([[0.0, 1.0]]), tf.constant([[0.3, 0.7]])),
    lambda tf: tf.losses.SparseCategoricalCrossentropy()(tf.constant([1]), tf.constant([[0.3, 0.7]])),
    lambda tf: tf.losses.MeanAbsoluteError()(tf.constant([1.0]), tf.constant([0.25])),
    lambda tf: tf.initializers.RandomNormal(seed=1)((2, 2)).shape,
    lambda tf: tf.optimizers.schedules.LearningRateSchedule.__name__,
    lambda tf: type(tf.optimizers.Adam(0.1)).__name__,
    lambda tf: float(tf.metrics.Mean()(tf.constant([1.0, 3.0]))),
]


@pytest.mark.parametrize("snippet", range(len(SHORT_NAMES)))
def test_short_namespaces_match_tf(snippet):
    assert_same_outcome(lambda tf: _numpy(SHORT_NAMES[snippet](tf)), tapejax, tf_real)


def _numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value if not hasattr(value, "as_list") else \
        tuple(value.as_list())


def _sgd_steps(tf):
    v = tf.Variable([1.0, 2.0])
    opt = tf.optimizers.SGD(0.1, momentum=0.5)
    for _ in range(3):
        opt.apply_gradients([(tf.constant([1.0, -1.0]), v)])
    return v.numpy(), int(opt.iterations.numpy()), getattr(opt.iterations.dtype, "name", opt.iterations.dtype)


def test_optimizer_alias_and_iterations_match_keras():
    assert_same(_sgd_steps(tapejax), _sgd_steps(tf_real))


KERNEL_BEFORE_BUILD = [
    lambda tf: tf.keras.layers.Dense(2).kernel,
    lambda tf: tf.keras.layers.Conv2D(2, 3).kernel,
    lambda tf: tf.keras.layers.Dense(2).bias,
]


@pytest.mark.parametrize("snippet", range(len(KERNEL_BEFORE_BUILD)))
def test_kernel_before_build_raises_as_keras(snippet):
    errors = []
    for module in (tapejax, tf_real):
        with pytest.raises(AttributeError) as e:
            KERNEL_BEFORE_BUILD[snippet](module)
        errors.append(str(e.value))
    if snippet < 2:
        assert errors[0] == errors[1]


RNG = np.random.default_rng(0)
ARRAYS = [RNG.normal(size=(4, 5, 3)), RNG.normal(size=(4, 5, 1)) * 100, RNG.normal(size=(3, 4, 6)),
          RNG.normal(size=(4, 6, 4)), np.full((3, 2, 1), 500.0), RNG.normal(size=(5, 5)), np.zeros((2, 2, 3))]


def _image(img):
    return img.mode, img.size, np.asarray(img)


@pytest.mark.parametrize("k", range(len(ARRAYS)))
@pytest.mark.parametrize("kwargs", [{}, {"scale": False}, {"data_format": "channels_first"}])
def test_array_to_img_and_back_match_keras(k, kwargs):
    def snippet(tf):
        img = tf.keras.utils.array_to_img(ARRAYS[k], **kwargs)
        return _image(img), tf.keras.utils.img_to_array(img, data_format=kwargs.get("data_format"))

    assert_same_outcome(snippet, tapejax, tf_real)


LOADS = [{}, {"color_mode": "grayscale"}, {"color_mode": "rgba"}, {"target_size": (3, 5)},
         {"target_size": (6, 4), "interpolation": "bilinear"}, {"target_size": (4, 4), "keep_aspect_ratio": True},
         {"target_size": (2, 7), "keep_aspect_ratio": True, "interpolation": "lanczos"},
         {"color_mode": "hsv"}, {"target_size": (2, 2), "interpolation": "cubic"}]


@pytest.mark.parametrize("fmt", ["png", "jpg", "bmp"])
@pytest.mark.parametrize("kwargs", LOADS)
def test_save_img_and_load_img_match_keras(tmp_path, fmt, kwargs):
    pixels = RNG.integers(0, 256, (6, 9, 3)).astype("float32")

    def snippet(tf):
        path = tmp_path / f"{tf.__name__}.{fmt}"
        tf.keras.utils.save_img(str(path), pixels, scale=False)
        with open(path, "rb") as f:
            from_bytes = tf.keras.preprocessing.image.load_img(io.BytesIO(f.read()), **kwargs)
        return _image(tf.keras.utils.load_img(path, **kwargs)), _image(from_bytes)

    assert_same_outcome(snippet, tapejax, tf_real)


def test_rgba_saved_as_jpeg_warns_as_keras(tmp_path):
    for module in (tapejax, tf_real):
        with pytest.warns(UserWarning, match="JPEG format does not support RGBA"):
            module.keras.utils.save_img(tmp_path / f"{module.__name__}.jpg", np.ones((2, 2, 4)))
    assert_same(np.asarray(tapejax.keras.utils.load_img(tmp_path / "tapejax.jpg")),
                np.asarray(tf_real.keras.utils.load_img(tmp_path / "tensorflow.jpg")))


OUTPUT_SHAPES = [
    lambda tf: tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)]).output_shape,
    lambda tf: tf.keras.Sequential([tf.keras.Input((4, 4, 1)), tf.keras.layers.Conv2D(2, 3),
                                    tf.keras.layers.Flatten()]).output_shape,
    lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(2)]).output_shape,
    lambda tf: (lambda m: (m(tf.ones([3, 5])), m.output_shape)[1])(tf.keras.Sequential([tf.keras.layers.Dense(2)])),
    lambda tf: (lambda m: (m.build((None, 5)), m.output_shape)[1])(tf.keras.Sequential([tf.keras.layers.Dense(2)])),
    lambda tf: (lambda i: tf.keras.Model(i, [tf.keras.layers.Dense(2)(i), tf.keras.layers.Dense(3)(i)]).output_shape)(
        tf.keras.Input((4,))),
    lambda tf: (lambda i: tf.keras.Model(i, tf.keras.layers.Dense(2)(i)).output_shape)(tf.keras.Input((4,))),
]


@pytest.mark.parametrize("k", range(len(OUTPUT_SHAPES)))
def test_output_shape_matches_keras(k):
    assert_same_outcome(OUTPUT_SHAPES[k], tapejax, tf_real)


LAYER_NAMES = [
    lambda tf: tf.keras.layers.Layer().add_variable((2,), "ones", name="w").numpy(),
    lambda tf: tf.keras.layers.Layer().add_variable((1, 2), "zeros", "float64", False).numpy(),
    lambda tf: tf.keras.layers.Layer().add_metric(1.0),
    lambda tf: tf.keras.Layer.__name__,
]


@pytest.mark.parametrize("k", range(len(LAYER_NAMES)))
def test_layer_names_match_keras(k):
    assert_same_outcome(LAYER_NAMES[k], tapejax, tf_real)


def _layer_metrics(tf):
    class Inner(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.seen = tf.keras.metrics.Sum(name="seen")

    class Outer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.tracker = tf.keras.metrics.Mean(name="tracker")
            self.inner = Inner()
            self.more = [tf.keras.metrics.Mean(name="listed")]

    return [m.name for m in Outer().metrics], tf.keras.layers.Dense(2).metrics


def test_layer_metrics_match_keras():
    assert _layer_metrics(tapejax) == _layer_metrics(tf_real)
