"""Model.compile/fit/evaluate/predict, callbacks, metrics and losses in tapejax and in TensorFlow 2.21's Keras 3, from
the same weights and data: loss histories, final weights, logs, printed lines, metric and loss values."""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pytest

import tapejax

from .compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _arrays(value):
    """Python floats (Keras's logs) as float64 arrays, so that assert_same compares them within rtol."""
    if isinstance(value, dict):
        return {k: _arrays(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_arrays(v) for v in value)
    return np.asarray(value, np.float64) if isinstance(value, float) else value


def _data(seed=0, n=100, features=4, classes=3):
    rng = np.random.default_rng(seed)
    return rng, rng.normal(size=(n, features)).astype(np.float32), rng.integers(0, classes, size=(n,))


def _mlp(tf, rng, activation="softmax"):
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(3, activation=activation)])
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    return model


FIT_CASES = [
    ("adam", "sparse_categorical_crossentropy", ["accuracy"], {}),
    ("sgd", "sparse_categorical_crossentropy", ["accuracy", "sparse_top_k_categorical_accuracy"],
     {"validation_split": 0.2}),
    ("rmsprop", "sparse_categorical_crossentropy", None, {"batch_size": 7, "initial_epoch": 1}),
    ("adam", "categorical_crossentropy", ["accuracy", "categorical_crossentropy"], {"one_hot": True}),
    ("adam", "mse", ["mae"], {"one_hot": True, "sample_weight": True}),
    ("sgd", "sparse_categorical_crossentropy", ["accuracy"], {"class_weight": {0: 1.0, 1: 2.0, 2: 0.5}}),
]


def _fit(tf, optimizer, loss, metrics, options):
    rng, x, y = _data()
    model = _mlp(tf, rng)
    options = dict(options)
    if options.pop("one_hot", False):
        y = np.eye(3, dtype=np.float32)[y]
    if options.pop("sample_weight", False):
        options["sample_weight"] = rng.uniform(size=len(x)).astype(np.float32)
    model.compile(optimizer, loss, metrics=metrics)
    history = model.fit(x, y, batch_size=options.pop("batch_size", 16), epochs=3, shuffle=False, verbose=0,
                        **options)
    return _arrays((history.history, history.epoch, model.get_weights(), model.evaluate(x, y, verbose=0),
                    model.predict(x[:7], verbose=0)))


@pytest.mark.parametrize("optimizer, loss, metrics, options", FIT_CASES, ids=lambda v: str(v))
def test_fit_gives_keras_history_and_weights(optimizer, loss, metrics, options):
    expected = _fit(tf_real, optimizer, loss, metrics, options)
    got = _fit(tapejax, optimizer, loss, metrics, options)
    assert list(got[0]) == list(expected[0])  # the keys, in Keras's (sorted) order
    assert_same(got, expected, rtol=1e-5)


def _custom_step(tf):
    keras = tf.keras

    class CustomModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(6,))
    model = CustomModel(inputs, keras.layers.Dense(1)(inputs))
    rng = np.random.default_rng(3)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    x, y = rng.random((64, 6)).astype(np.float32), rng.random((64, 1)).astype(np.float32)
    history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    return _arrays((history.history, model.get_weights(), model.evaluate(x, y, verbose=0, return_dict=True)))


def test_train_step_override_works_with_fit():
    expected, got = _custom_step(tf_real), _custom_step(tapejax)
    assert list(got[0]) == list(expected[0])
    assert_same(got, expected, rtol=1e-5)


def _printed(tf, verbose):
    rng, x, y = _data()
    model = _mlp(tf, rng)
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.fit(x, y, batch_size=32, epochs=2, verbose=verbose, validation_data=(x[:20], y[:20]), shuffle=False)
        model.evaluate(x, y, verbose=verbose)
    text = re.sub(r"\d+(ms|us|s)/step", "T/step", out.getvalue())  # timings differ by nature
    return re.sub(r"(?<![\d.])\d+s(?=\x1b| )", "Ts", text)


def test_verbose_2_prints_keras_lines():
    assert _printed(tapejax, 2) == _printed(tf_real, 2)


def test_verbose_1_final_bar_lines_match():
    # the padding after a line depends on how long the previous redraw was (its timings): compared stripped
    final = lambda text: [line.split("\r")[-1].rstrip() for line in text.split("\n") if "\r" in line]
    assert final(_printed(tapejax, 1)) == final(_printed(tf_real, 1))


def _callbacks(tf):
    rng, x, y = _data(seed=5)
    model = _mlp(tf, rng)
    model.compile(tf.keras.optimizers.SGD(0.5), "sparse_categorical_crossentropy")
    seen = []
    callbacks = [tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=10.0),
                 tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True),
                 tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append((epoch, logs)))]
    history = model.fit(x, y, epochs=8, batch_size=25, shuffle=False, verbose=0, callbacks=callbacks,
                        validation_data=(x[:30], y[:30]))
    schedule = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch else lr)
    more = model.fit(x, y, epochs=3, batch_size=50, shuffle=False, verbose=0, callbacks=[schedule])
    return _arrays((history.history, seen, model.get_weights(), more.history))


def test_callbacks_agree_with_keras():
    expected, got = _callbacks(tf_real), _callbacks(tapejax)
    assert_same(got, expected, rtol=1e-5)


LOSSES = [("MeanSquaredError", {}), ("MeanAbsoluteError", {}), ("MeanAbsolutePercentageError", {}),
          ("MeanSquaredLogarithmicError", {}), ("CosineSimilarity", {}), ("Huber", {"delta": 0.3}),
          ("LogCosh", {}), ("Hinge", {}), ("SquaredHinge", {}), ("CategoricalHinge", {}), ("KLDivergence", {}),
          ("Poisson", {}), ("BinaryCrossentropy", {}), ("BinaryCrossentropy", {"from_logits": True}),
          ("BinaryCrossentropy", {"label_smoothing": 0.2}), ("BinaryFocalCrossentropy", {"gamma": 1.5}),
          ("BinaryFocalCrossentropy", {"apply_class_balancing": True, "from_logits": True}),
          ("CategoricalCrossentropy", {}), ("CategoricalCrossentropy", {"from_logits": True, "label_smoothing": 0.1}),
          ("CategoricalFocalCrossentropy", {}), ("Dice", {}), ("Tversky", {"alpha": 0.3, "beta": 0.7}),
          ("MeanSquaredError", {"reduction": "sum"}), ("MeanSquaredError", {"reduction": None}),
          ("Huber", {"reduction": "mean_with_sample_weight"})]


def _loss_values(tf, name, kwargs):
    rng = np.random.default_rng(11)
    y_true = rng.integers(0, 2, size=(6, 4)).astype(np.float32)
    y_pred = rng.uniform(0.05, 0.95, size=(6, 4)).astype(np.float32)
    weights = rng.uniform(size=(6,)).astype(np.float32)
    loss = getattr(tf.keras.losses, name)(**kwargs)
    return [loss(y_true, y_pred), loss(y_true, y_pred, sample_weight=weights), loss.name]


@pytest.mark.parametrize("name, kwargs", LOSSES, ids=lambda v: str(v))
def test_losses_agree_with_keras(name, kwargs):
    assert_same(_loss_values(tapejax, name, kwargs), _loss_values(tf_real, name, kwargs), rtol=1e-5)


def _sparse_and_shapes(tf):
    rng = np.random.default_rng(2)
    labels, scores = rng.integers(0, 4, size=(5,)), rng.uniform(0.01, 1, size=(5, 4)).astype(np.float32)
    out = [tf.keras.losses.SparseCategoricalCrossentropy()(labels, scores),
           tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)(labels, scores),
           tf.keras.losses.sparse_categorical_crossentropy(labels[:, None], scores),
           tf.keras.losses.MeanSquaredError()(rng.normal(size=(5,)).astype(np.float32), scores[:, :1]),
           tf.keras.losses.mse(scores, scores[::-1]), tf.keras.losses.kld(scores, scores[::-1])]
    # a saturated softmax/sigmoid output: Keras 3 takes the loss from the cached logits (60, 40), not the clip
    logits = np.array([[30.0, -30.0, 0.0]], np.float32)
    softmax = tf.keras.layers.Dense(3, activation="softmax", use_bias=False)
    softmax.build((None, 3))
    softmax.set_weights([np.eye(3, dtype=np.float32)])
    sigmoid = tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer="ones", use_bias=False)
    onehot = np.array([[0.0, 1.0, 0.0]], np.float32)
    out += [tf.keras.losses.CategoricalCrossentropy()(onehot, softmax(logits)),
            tf.function(lambda: tf.keras.losses.SparseCategoricalCrossentropy()(np.array([1]), softmax(logits)))(),
            tf.keras.losses.BinaryCrossentropy()(np.zeros((1, 1), np.float32),
                                                 sigmoid(np.full((1, 1), 40.0, np.float32))),
            tf.keras.metrics.CategoricalCrossentropy()(onehot, softmax(logits))]
    return out


def test_sparse_losses_rank_alignment_and_cached_logits():
    assert_same(_sparse_and_shapes(tapejax), _sparse_and_shapes(tf_real), rtol=1e-5)


METRICS = [("Mean", {}), ("Sum", {}), ("MeanSquaredError", {}), ("MeanAbsoluteError", {}),
           ("RootMeanSquaredError", {}), ("Accuracy", {}), ("BinaryAccuracy", {"threshold": 0.4}),
           ("CategoricalAccuracy", {}), ("SparseCategoricalAccuracy", {}), ("TopKCategoricalAccuracy", {"k": 2}),
           ("SparseTopKCategoricalAccuracy", {"k": 2}), ("Precision", {}), ("Precision", {"thresholds": [0.3, 0.7]}),
           ("Precision", {"top_k": 2}), ("Recall", {"class_id": 1}), ("AUC", {}), ("AUC", {"curve": "PR"}),
           ("AUC", {"num_thresholds": 13, "summation_method": "minoring"}), ("MeanIoU", {"num_classes": 4}),
           ("BinaryCrossentropy", {}), ("CategoricalCrossentropy", {}), ("SparseCategoricalCrossentropy", {}),
           ("TruePositives", {}), ("FalseNegatives", {"thresholds": [0.2, 0.5]}), ("KLDivergence", {}),
           ("CosineSimilarity", {}), ("LogCoshError", {}), ("Hinge", {})]


def _metric_values(tf, name, kwargs, compiled):
    rng = np.random.default_rng(4)
    scores = rng.uniform(0.01, 1, size=(8, 4)).astype(np.float32)
    onehot = np.eye(4, dtype=np.float32)[rng.integers(0, 4, size=8)]
    labels = np.argmax(onehot, -1)
    weights = rng.uniform(size=(8,)).astype(np.float32)
    metric = getattr(tf.keras.metrics, name)(**kwargs)
    if name in ("Mean", "Sum"):
        args = (scores,)
    elif name in ("SparseCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "SparseCategoricalCrossentropy"):
        args = (labels, scores)
    elif name == "MeanIoU":
        args = (labels, rng.integers(0, 4, size=8))
    elif name == "Accuracy":
        args = (labels, rng.integers(0, 4, size=8))
    else:
        args = (onehot, scores)
    update = tf.function(metric.update_state) if compiled else metric.update_state
    update(*args)
    first = np.array(metric.result().numpy())  # a copy: Keras returns a multi-threshold count's Variable itself
    update(*args, sample_weight=weights)
    second = np.array(metric.result().numpy())
    metric.reset_state()
    # names Keras numbers per process (`auc_1`) depend on the tests run before: compared without the number
    return [first, second, np.array(metric.result().numpy()), re.sub(r"_\d+$", "", metric.name)]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("name, kwargs", METRICS, ids=lambda v: str(v))
def test_metrics_agree_with_keras(name, kwargs, compiled):
    assert_same(_metric_values(tapejax, name, kwargs, compiled), _metric_values(tf_real, name, kwargs, compiled),
                rtol=1e-5)


def _utilities(tf):
    image = np.arange(2 * 3 * 3 * 3, dtype=np.float32).reshape(2, 3, 3, 3)
    apps = tf.keras.applications
    return [tf.keras.utils.to_categorical([0, 2, 1], 3), tf.keras.utils.to_categorical(np.array([[1], [0]])),
            apps.resnet50.preprocess_input(image.copy()), apps.vgg16.preprocess_input(image.astype(np.uint8)),
            apps.mobilenet_v2.preprocess_input(image.copy()), apps.inception_v3.preprocess_input(image.copy()),
            apps.efficientnet.preprocess_input(image.copy()), apps.densenet.preprocess_input(image.copy()),
            apps.resnet50.preprocess_input(image.copy(), data_format="channels_first"),
            tf.keras.backend.floatx(), tf.keras.backend.epsilon(), tf.keras.backend.image_data_format()]


def test_utils_backend_and_preprocessing_agree_with_keras():
    assert_same(_utilities(tapejax), _utilities(tf_real))


def test_decode_predictions_rejects_what_keras_rejects():
    for tf in (tf_real, tapejax):
        with pytest.raises(ValueError, match="expects a batch of predictions"):
            tf.keras.applications.resnet50.decode_predictions(np.zeros((2, 10)))
