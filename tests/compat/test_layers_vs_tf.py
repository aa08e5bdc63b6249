"""Dense and BatchNormalization in tapejax and in TensorFlow's Keras, from the same weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _copy_weights(source_layer, target_layer):
    for s, t in zip(source_layer.weights, target_layer.weights):
        t.assign(np.asarray(s))


@pytest.mark.parametrize("training", [True, False])
def test_dense_and_batch_normalization_agree(training):
    x0 = np.random.default_rng(0).normal(size=(8, 5)).astype(np.float32)
    results = []
    layers = {}
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        dense = tf.keras.layers.Dense(6, activation="elu")
        bn = tf.keras.layers.BatchNormalization()
        x = tf.constant(x0)
        dense(x), bn(dense(x), training=False)  # build
        layers[name] = (dense, bn)
    for source, target in zip(layers["tensorflow"], layers["tapejax"]):
        _copy_weights(source, target)
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        dense, bn = layers[name]
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            y = bn(dense(x), training=training)
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, dense.trainable_variables + bn.trainable_variables)
        results.append((y.numpy(), [g.numpy() for g in grads], bn.moving_mean.numpy(), bn.moving_variance.numpy()))
    (y_tf, g_tf, mm_tf, mv_tf), (y_tj, g_tj, mm_tj, mv_tj) = results
    np.testing.assert_allclose(y_tj, y_tf, rtol=1e-4, atol=1e-5)
    for got, expected in zip(g_tj, g_tf):
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(mm_tj, mm_tf, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv_tj, mv_tf, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("make, input_shape", [
    (lambda tf: tf.keras.layers.Flatten(), (3, 2, 4)),
    (lambda tf: tf.keras.layers.Activation("tanh"), (3, 2, 4)),
    (lambda tf: tf.keras.layers.LayerNormalization(), (3, 2, 4)),
    (lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(2)]),
     (3, 8)),
], ids=["Flatten", "Activation", "LayerNormalization", "Sequential"])
def test_layers_agree_with_tensorflow(make, input_shape):
    x0 = np.random.default_rng(2).normal(size=input_shape).astype(np.float32)
    layers = {name: make(tf) for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax))}
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        layers[name](tf.constant(x0))
    _copy_weights(layers["tensorflow"], layers["tapejax"])
    outs = []
    for name, tf in (("tensorflow", tf_real), ("tapejax", tapejax)):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layers[name](x)
            loss = tf.reduce_sum(y * y)
        outs.append((y.numpy(), tape.gradient(loss, x).numpy()))
    for got, expected in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind, kwargs, shape, training, trainable", [
    ("batch", {"axis": 1}, (4, 3, 5, 2), True, True),
    ("batch", {"axis": 1}, (4, 3, 5, 2), False, True),
    ("batch", {"center": False, "scale": False}, (6, 4), True, True),
    ("batch", {}, (6, 4), True, False),  # frozen: Keras 3 normalises by the moving statistics, updating nothing
    ("layer", {"axis": 1}, (4, 3, 5), None, True),
    ("layer", {"axis": [1, 2]}, (4, 3, 5), None, True),
], ids=["bn_axis1_training", "bn_axis1_inference", "bn_no_affine", "bn_frozen", "ln_axis1", "ln_two_axes"])
def test_normalization_axes_and_modes_agree_with_tensorflow(kind, kwargs, shape, training, trainable):
    """Values, input and weight gradients and the moving statistics after the call, from the same weights."""
    x0 = np.random.default_rng(4).normal(size=shape).astype(np.float32) * 3 + 1
    results = []
    for tf in (tf_real, tapejax):
        layer = (tf.keras.layers.BatchNormalization if kind == "batch" else tf.keras.layers.LayerNormalization)(
            **kwargs)
        x = tf.constant(x0)
        layer(x)
        for k, w in enumerate(layer.weights):
            w.assign(np.random.default_rng(k).uniform(0.5, 1.5, size=w.shape).astype(np.float32))
        layer.trainable = trainable
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=training) if kind == "batch" else layer(x)
            loss = tf.reduce_sum(y * y * tf.constant(np.linspace(0.0, 1.0, shape[-1], dtype=np.float32)))
        grads = tape.gradient(loss, [x] + layer.weights)
        results.append([y.numpy()] + [None if g is None else g.numpy() for g in grads]
                       + [w.numpy() for w in layer.weights])
    assert [g is None for g in results[1]] == [g is None for g in results[0]]
    for got, expected in zip(results[1], results[0]):
        if expected is not None:
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_embedding_agrees_with_tensorflow():
    ids = np.array([[0, 3], [2, 2]], np.int32)
    table = np.random.default_rng(3).normal(size=(4, 5)).astype(np.float32)
    results = []
    for tf in (tf_real, tapejax):
        layer = tf.keras.layers.Embedding(4, 5)
        layer(tf.constant(ids))
        layer.embeddings.assign(table)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(tf.constant(ids)) ** 2)
        grad = tape.gradient(loss, layer.embeddings)
        results.append((layer(tf.constant(ids)).numpy(), tf.convert_to_tensor(grad).numpy()))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_dropout_scales_what_it_keeps_and_is_seeded():
    x = tapejax.ones([1000])
    layer = tapejax.keras.layers.Dropout(0.25)
    tapejax.random.set_seed(5)
    a = layer(x, training=True).numpy()
    tapejax.random.set_seed(5)
    b = layer(x, training=True).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)} and 0.15 < np.mean(a == 0) < 0.35
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x.numpy())


# Models and summary(): every layer and model is named, so the texts do not depend on the name counters. The
# models share shapes with each other and with tests/unit/test_keras_models.py (3 -> 4 -> 2, batches of 2; the CNN
# takes the convolution tests' input), so that tapejax compiles each op once.

def _summary_text(model):
    out = []
    model.summary(print_fn=out.append)
    return out[0]


def _paths(model):
    return [getattr(v, "path", None) or v.name.removesuffix(":0") for v in model.weights]


def _small_sequential(tf):
    layers = tf.keras.layers
    return tf.keras.Sequential([
        tf.keras.Input(shape=(1, 3)), layers.Flatten(name="flat"), layers.Dense(4, activation="relu", name="hidden"),
        layers.BatchNormalization(name="norm"), layers.Dropout(0.2, name="drop"), layers.Dense(2, name="logits"),
    ], name="small_sequential")


def _subclassed_model(tf):
    layers = tf.keras.layers

    class Tower(tf.keras.Model):
        def __init__(self):
            super().__init__(name="tower")
            self.stem = layers.Dense(4, activation="tanh", name="stem")
            self.blocks = [layers.Dense(4, name="block_with_a_rather_long_name"), layers.LayerNormalization(name="ln")]
            self.head = layers.Dense(2, name="head")

        def call(self, inputs, training=None):
            x = self.stem(inputs)
            for block in self.blocks:
                x = block(x)
            return self.head(x)

    return Tower()


def _conv_sequential(tf):
    layers = tf.keras.layers
    return tf.keras.Sequential([
        tf.keras.Input(shape=(7, 8, 3)), layers.Conv2D(4, 3, activation="relu", name="conv"),
        layers.MaxPooling2D(name="max_pool"), layers.Conv2D(4, 2, strides=2, padding="same", name="strided_conv"),
        layers.AveragePooling2D(2, padding="same", name="avg_pool"), layers.GlobalAveragePooling2D(name="gap"),
        layers.Dense(2, name="logits"),
    ], name="small_cnn")


def _functional_model(tf):
    layers = tf.keras.layers
    inputs = tf.keras.Input(shape=(3,), name="features")
    hidden = layers.Dense(4, name="hidden")(inputs)
    return tf.keras.Model(inputs=inputs, outputs=[layers.Dense(2, name="score")(hidden),
                                                  layers.Dense(4, name="logits")(inputs)], name="two_heads")


@pytest.mark.parametrize("make, call_shape", [
    (_small_sequential, None), (_subclassed_model, (2, 3)), (_functional_model, None), (_conv_sequential, None),
    (lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(4, name="a"), tf.keras.layers.Dropout(0.1, name="b")],
                                    name="unbuilt"), None),
], ids=["Sequential with Input", "subclassed after one call", "functional, two outputs", "CNN", "unbuilt Sequential"])
def test_summary_text_and_weights_agree_with_tensorflow(make, call_shape):
    models = {}
    for tf in (tf_real, tapejax):
        model = make(tf)
        if call_shape is not None:
            model(np.ones(call_shape, np.float32))
        models[tf] = model
    assert _summary_text(models[tapejax]) == _summary_text(models[tf_real])
    assert [layer.name for layer in models[tapejax].layers] == [layer.name for layer in models[tf_real].layers]
    assert _paths(models[tapejax]) == _paths(models[tf_real])
    for attribute in ("trainable_weights", "non_trainable_weights"):
        assert [w.shape for w in getattr(models[tapejax], attribute)] == [
            tuple(w.shape) for w in getattr(models[tf_real], attribute)]
    if models[tf_real].built:
        assert models[tapejax].count_params() == models[tf_real].count_params()


@pytest.mark.parametrize("make, input_shape", [(_small_sequential, (2, 1, 3)), (_conv_sequential, (2, 7, 8, 3))],
                         ids=["MLP", "CNN"])
def test_models_compute_what_tensorflow_computes_from_the_same_weights(make, input_shape):
    x0 = np.random.default_rng(6).normal(size=input_shape).astype(np.float32)
    models = {tf: make(tf) for tf in (tf_real, tapejax)}
    _copy_weights(models[tf_real], models[tapejax])
    for model in models.values():
        for layer in model.layers:
            if hasattr(layer, "rate"):
                layer.rate = 0.0  # Dropout's random masks differ; training=True still reaches BatchNormalization
    results = []
    for tf in (tf_real, tapejax):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = models[tf](x, training=True)
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, [x] + list(models[tf].trainable_variables))
        results.append([y.numpy()] + [g.numpy() for g in grads])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)


CONVOLUTION_AND_POOLING = [
    ("Conv2D", {"filters": 4, "kernel_size": 3}),
    ("Conv2D", {"filters": 4, "kernel_size": 3, "strides": 2, "padding": "same", "activation": "relu"}),
    ("Conv2D", {"filters": 4, "kernel_size": 3, "dilation_rate": 2, "padding": "same", "use_bias": False}),
    ("Conv2D", {"filters": 4, "kernel_size": (3, 2), "strides": (2, 1), "data_format": "channels_first"}),
    ("MaxPooling2D", {}),
    ("MaxPooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}),
    ("AveragePooling2D", {"pool_size": (2, 3), "strides": 1}),
    ("AveragePooling2D", {"pool_size": 3, "strides": 2, "padding": "same"}),
    ("GlobalAveragePooling2D", {"keepdims": True}),
]


@pytest.mark.parametrize("name, kwargs", CONVOLUTION_AND_POOLING, ids=lambda v: str(v))
def test_convolution_and_pooling_agree_with_tensorflow(name, kwargs):
    shape = (2, 3, 7, 8) if kwargs.get("data_format") == "channels_first" else (2, 7, 8, 3)
    x0 = np.random.default_rng(7).normal(size=shape).astype(np.float32)
    layers = {tf: getattr(tf.keras.layers, name)(**kwargs) for tf in (tf_real, tapejax)}
    for tf, layer in layers.items():
        layer(tf.constant(x0))
    _copy_weights(layers[tf_real], layers[tapejax])
    results = []
    for tf, layer in layers.items():
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * tf.sin(y))
        grads = tape.gradient(loss, [x] + list(layer.trainable_variables))
        results.append([y.numpy()] + [g.numpy() for g in grads])
    assert [r.shape for r in results[1]] == [r.shape for r in results[0]]
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


LOSSES = [
    ("MeanSquaredError", {}, "regression"),
    ("MeanAbsoluteError", {}, "regression"),
    ("BinaryCrossentropy", {}, "binary"),
    ("BinaryCrossentropy", {"from_logits": True}, "binary_logits"),
    ("CategoricalCrossentropy", {}, "categorical"),
    ("CategoricalCrossentropy", {"from_logits": True}, "logits"),
    ("SparseCategoricalCrossentropy", {}, "sparse"),
    ("SparseCategoricalCrossentropy", {"from_logits": True}, "sparse_logits"),
    ("MeanSquaredError", {"reduction": "sum"}, "regression"),
    ("CategoricalCrossentropy", {"from_logits": True, "reduction": "none"}, "logits"),
    ("Huber", {}, "regression"), ("Huber", {"delta": 0.3, "reduction": "sum"}, "regression"),
    ("Huber", {"delta": 2.5, "reduction": "none"}, "regression"), ("Huber", {"reduction": "mean"}, "regression"),
    ("Huber", {"reduction": None}, "regression"),
]


def _loss_inputs(kind):
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(6, 3)).astype(np.float32)
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    labels = rng.integers(0, 3, size=(6,)).astype(np.int32)
    one_hot = np.eye(3, dtype=np.float32)[labels]
    binary = (rng.random((6, 3)) > 0.5).astype(np.float32)
    return {"regression": (rng.normal(size=(6, 3)).astype(np.float32), logits),
            "binary": (binary, 1 / (1 + np.exp(-logits))), "binary_logits": (binary, logits),
            "categorical": (one_hot, probabilities), "logits": (one_hot, logits),
            "sparse": (labels, probabilities), "sparse_logits": (labels, logits)}[kind]


@pytest.mark.parametrize("name, kwargs, kind", LOSSES, ids=lambda v: str(v))
def test_losses_agree_with_tensorflow(name, kwargs, kind):
    y_true, y_pred0 = _loss_inputs(kind)
    results = []
    for tf in (tf_real, tapejax):
        loss_fn = getattr(tf.keras.losses, name)(**kwargs)
        y_pred = tf.constant(y_pred0)
        with tf.GradientTape() as tape:
            tape.watch(y_pred)
            value = loss_fn(tf.constant(y_true), y_pred)
            total = tf.reduce_sum(value)
        results.append((value.numpy(), tape.gradient(total, y_pred).numpy()))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", {"learning_rate": 0.1}), ("SGD", {"learning_rate": 0.1, "momentum": 0.9}),
    ("SGD", {"learning_rate": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {"learning_rate": 0.05}),
    ("Adam", {"learning_rate": 0.05, "epsilon": 1e-2}),
], ids=lambda v: str(v))
def test_optimizers_agree_with_tensorflow(name, kwargs):
    rng = np.random.default_rng(5)
    w0, grads = rng.normal(size=(3,)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    results = []
    for tf in (tf_real, tapejax):
        w = tf.Variable(w0)
        optimizer = getattr(tf.keras.optimizers, name)(**kwargs)
        for g in grads:
            optimizer.apply_gradients([(tf.constant(g), w)])
        results.append(w.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.Flatten(data_format="channels_first"),
    lambda tf: tf.keras.layers.LayerNormalization(rms_scaling=True),
], ids=["flatten_channels_first", "layer_normalization_rms_scaling"])
def test_layer_options_agree_with_tensorflow(make):
    """Options that tapejax once ignored silently: values, input gradients, and the weights made."""
    x0 = np.random.default_rng(5).normal(size=(2, 3, 2, 4)).astype(np.float32) + 0.5
    results = []
    for tf in (tf_real, tapejax):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Keras 3: rms_scaling is deprecated
            layer = make(tf)
        layer(tf.constant(x0))
        for k, w in enumerate(layer.weights):
            w.assign(np.linspace(0.5, 1.5, int(np.prod(w.shape)), dtype=np.float32).reshape(w.shape) + k)
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * y * np.linspace(0.0, 1.0, y.shape[-1], dtype=np.float32))
        results.append(([w.name for w in layer.weights], y.numpy(), tape.gradient(loss, x).numpy()))
    assert results[1][0] == results[0][0]
    for got, expected in zip(results[1][1:], results[0][1:]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
