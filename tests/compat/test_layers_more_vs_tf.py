"""The layers of tapejax/keras/layers_*.py against TF 2.21's Keras 3, from the same weights (set_weights of
Keras's own): outputs, gradients (inputs and weights), weight names and paths, eagerly and inside tf.function."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from tests.compat.compare import assert_same

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

LAYERS = [
    ("ReLU", {}, (2, 5)), ("ReLU", {"max_value": 1.0, "negative_slope": 0.1, "threshold": 0.2}, (2, 5)),
    ("ReLU", {"max_value": 6.0}, (2, 5)), ("LeakyReLU", {}, (2, 5)), ("LeakyReLU", {"negative_slope": 0.2}, (2, 5)),
    ("PReLU", {"alpha_initializer": "ones"}, (2, 3, 4)), ("PReLU", {"shared_axes": [1]}, (2, 3, 4)),
    ("ELU", {}, (2, 5)), ("ELU", {"alpha": 0.5}, (2, 5)), ("Softmax", {}, (2, 5)), ("Softmax", {"axis": 1}, (2, 3, 4)),
    ("Reshape", {"target_shape": (4, -1)}, (2, 3, 4)), ("Reshape", {"target_shape": (12,)}, (2, 3, 4)),
    ("Permute", {"dims": (2, 1)}, (2, 3, 4)), ("RepeatVector", {"n": 3}, (2, 4)),
    ("Conv1D", {"filters": 3, "kernel_size": 3}, (2, 7, 2)),
    ("Conv1D", {"filters": 3, "kernel_size": 3, "padding": "causal", "dilation_rate": 2}, (2, 7, 2)),
    ("Conv1D", {"filters": 4, "kernel_size": 2, "strides": 2, "padding": "same", "groups": 2}, (2, 7, 2)),
    ("Conv3D", {"filters": 2, "kernel_size": 2}, (2, 4, 5, 3, 2)),
    ("Conv3D", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (2, 4, 5, 3, 2)),
    ("Conv2D", {"filters": 3, "kernel_size": 3, "kernel_regularizer": "l2"}, (2, 6, 5, 2)),
    ("Conv1DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2}, (2, 5, 2)),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 3}, (2, 5, 4, 2)),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 4, "strides": 2, "padding": "same"}, (2, 5, 4, 2)),
    ("Conv2DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"}, (2, 5, 4, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 2, "strides": 3}, (2, 3, 4, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "output_padding": 1}, (2, 3, 4, 2)),
    ("Conv2DTranspose", {"filters": 2, "kernel_size": (3, 2), "strides": (1, 2), "padding": "same",
                         "data_format": "channels_first"}, (2, 2, 4, 5)),
    ("Conv3DTranspose", {"filters": 2, "kernel_size": 3, "strides": 2, "padding": "same"}, (2, 3, 2, 3, 2)),
    ("DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2}, (2, 6, 5, 3)),
    ("DepthwiseConv2D", {"kernel_size": 3, "strides": 2, "padding": "same"}, (2, 6, 5, 3)),
    ("SeparableConv2D", {"filters": 4, "kernel_size": 3, "padding": "same"}, (2, 6, 5, 3)),
    ("SeparableConv1D", {"filters": 4, "kernel_size": 3, "depth_multiplier": 2}, (2, 7, 3)),
    ("DepthwiseConv1D", {"kernel_size": 3}, (2, 7, 3)),
    ("UpSampling1D", {"size": 3}, (2, 4, 3)), ("UpSampling2D", {}, (2, 3, 4, 2)),
    ("UpSampling2D", {"size": (2, 3), "interpolation": "bilinear"}, (2, 3, 4, 2)),
    ("UpSampling3D", {"size": 2}, (1, 2, 3, 2, 2)),
    ("ZeroPadding1D", {"padding": (1, 2)}, (2, 4, 3)), ("ZeroPadding2D", {"padding": ((1, 0), (2, 3))}, (2, 3, 4, 2)),
    ("ZeroPadding2D", {}, (2, 3, 4, 2)), ("ZeroPadding3D", {"padding": 1}, (1, 2, 3, 2, 2)),
    ("Cropping1D", {"cropping": (1, 2)}, (2, 6, 3)), ("Cropping2D", {"cropping": ((1, 0), (1, 2))}, (2, 5, 6, 2)),
    ("Cropping3D", {"cropping": 1}, (1, 4, 4, 3, 2)),
    ("MaxPooling1D", {}, (2, 7, 3)), ("AveragePooling1D", {"pool_size": 3, "strides": 1, "padding": "same"}, (2, 7, 3)),
    ("MaxPool2D", {"pool_size": 3, "strides": 2}, (2, 7, 6, 3)), ("AvgPool2D", {"pool_size": 2}, (2, 7, 6, 3)),
    ("MaxPooling3D", {}, (1, 4, 5, 4, 2)), ("AveragePooling3D", {"pool_size": 2, "padding": "same"}, (1, 4, 5, 3, 2)),
    ("GlobalMaxPooling1D", {}, (2, 7, 3)), ("GlobalAveragePooling1D", {"keepdims": True}, (2, 7, 3)),
    ("GlobalMaxPooling2D", {}, (2, 5, 4, 3)), ("GlobalAveragePooling3D", {}, (1, 4, 3, 2, 2)),
    ("GlobalMaxPool3D", {"data_format": "channels_first"}, (1, 4, 3, 2, 2)),
    ("ActivityRegularization", {"l1": 0.1, "l2": 0.01}, (3, 4)),
    ("Dense", {"units": 3, "kernel_regularizer": "l1", "bias_regularizer": tf_real.keras.regularizers.L2(0.1)
               if False else "l2", "activity_regularizer": "l2", "bias_initializer": "ones"}, (3, 4)),
    ("Masking", {"mask_value": 0.5}, (2, 3, 2)),
]


def _make(tf, name, kwargs):
    kwargs = {k: (getattr(tf.keras.regularizers, v.__class__.__name__)(**v.get_config())
                  if hasattr(v, "get_config") else v) for k, v in kwargs.items()}
    return getattr(tf.keras.layers, name)(name="probe", **kwargs)  # named: the name counters differ per process


def _run(tf, layer, x0, watch_weights=True):
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        loss = tf.reduce_sum(y * tf.sin(y)) + sum(layer.losses)
    grads = tape.gradient(loss, [x] + (list(layer.trainable_weights) if watch_weights else []))
    return [y.numpy(), *[g.numpy() for g in grads], [float(v) for v in layer.losses]]


@pytest.mark.parametrize("name, kwargs, shape", LAYERS, ids=lambda v: str(v))
def test_layer_agrees_with_keras(name, kwargs, shape):
    x0 = np.random.default_rng(11).normal(size=shape).astype(np.float32)
    if name == "Masking":
        x0[:, 1] = 0.5
    theirs, ours = _make(tf_real, name, kwargs), _make(tapejax, name, kwargs)
    theirs(tf_real.constant(x0)), ours(tapejax.constant(x0))
    assert [(w.name, w.path) for w in ours.weights] == [(w.name, w.path) for w in theirs.weights]
    ours.set_weights(theirs.get_weights())
    expected = _run(tf_real, theirs, x0)
    got = _run(tapejax, ours, x0)
    assert [np.shape(g) for g in got] == [np.shape(e) for e in expected]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=2e-5)
    compiled = tapejax.function(lambda x: ours(x))(tapejax.constant(x0))
    np.testing.assert_allclose(compiled.numpy(), expected[0], rtol=2e-4, atol=2e-5)


def test_merge_layers_agree_with_keras():
    rng = np.random.default_rng(12)
    a, b, c = (rng.normal(size=(2, 3, 4)).astype(np.float32) for _ in range(3))
    for name, kwargs, n in [("Add", {}, 3), ("Subtract", {}, 2), ("Multiply", {}, 3), ("Average", {}, 3),
                            ("Maximum", {}, 3), ("Minimum", {}, 2), ("Dot", {"axes": 2}, 2),
                            ("Dot", {"axes": (1, 1), "normalize": True}, 2), ("Concatenate", {"axis": 1}, 3)]:
        results = []
        for tf in (tf_real, tapejax):
            inputs = [tf.constant(v) for v in (a, b, c)[:n]]
            with tf.GradientTape() as tape:
                tape.watch(inputs)
                y = getattr(tf.keras.layers, name)(**kwargs)(inputs)
                loss = tf.reduce_sum(y * y)
            results.append([y.numpy()] + [g.numpy() for g in tape.gradient(loss, inputs)])
        for got, expected in zip(results[1], results[0]):
            assert_same(got, expected, name, rtol=1e-5)


def test_functional_merge_and_lambda_model_agrees_with_keras():
    x0 = np.random.default_rng(13).normal(size=(3, 4)).astype(np.float32)
    models = {}
    for tf in (tf_real, tapejax):
        layers = tf.keras.layers
        inputs = tf.keras.Input(shape=(4,), name="x")
        h = layers.Dense(4, name="h")(inputs)
        skip = layers.add([inputs, h], name="skip")
        scaled = layers.Lambda(lambda t: t * 2.0, name="double")(skip)
        out = layers.Reshape((2, 2), name="square")(layers.LeakyReLU(negative_slope=0.2, name="leaky")(scaled))
        models[tf] = tf.keras.Model(inputs, out, name="merged")
    models[tapejax].set_weights(models[tf_real].get_weights())
    assert [layer.name for layer in models[tapejax].layers] == [layer.name for layer in models[tf_real].layers]
    assert models[tapejax].output.shape == tuple(models[tf_real].output.shape)
    np.testing.assert_allclose(models[tapejax](x0).numpy(), models[tf_real](x0).numpy(), rtol=1e-5, atol=1e-6)


def _two_embeddings(tf):
    ids = tf.keras.Input(shape=(5,), dtype="int32")
    positions = tf.keras.layers.Embedding(7, 3)(ids)
    tokens = tf.keras.layers.Embedding(9, 3, mask_zero=True)(ids)
    other = tf.keras.layers.Embedding(9, 3)(ids)
    merged = tf.keras.layers.add([tokens, tf.keras.layers.Dense(3)(other), positions])
    return tf.keras.Model(ids, tf.keras.layers.LSTM(2)(merged))


def _shared_layer_at_two_depths(tf):
    x = tf.keras.Input(shape=(4,))
    shared = tf.keras.layers.Dense(4)
    side = tf.keras.layers.Dense(4)(x)
    deep = shared(tf.keras.layers.Dense(4)(shared(x)))
    return tf.keras.Model(x, tf.keras.layers.concatenate([deep, side, tf.keras.layers.Dense(4)(x)]))


def _two_inputs_two_outputs(tf):
    a, b = tf.keras.Input(shape=(3,), name="a"), tf.keras.Input(shape=(2,), name="b")
    hb = tf.keras.layers.Dense(3)(b)
    ha = tf.keras.layers.Dense(3)(a)
    joined = tf.keras.layers.multiply([ha, hb])
    return tf.keras.Model([a, b], [tf.keras.layers.Dense(1)(hb), tf.keras.layers.Dense(2)(joined)])


@pytest.mark.parametrize("make", [_two_embeddings, _shared_layer_at_two_depths, _two_inputs_two_outputs],
                         ids=["same_depth_branches", "shared_layer", "two_outputs"])
def test_a_functional_models_layers_and_weights_are_in_keras_order(make):
    # get_weights/set_weights between a Keras and a tapejax model pair weights by this order.
    models = {}
    for tf in (tf_real, tapejax):
        tf.keras.backend.clear_session()
        models[tf] = make(tf)
    ours, theirs = models[tapejax], models[tf_real]
    assert [layer.name for layer in ours.layers] == [layer.name for layer in theirs.layers]
    assert [w.path for w in ours.weights] == [w.path for w in theirs.weights]
    ours.set_weights(theirs.get_weights())
    inputs = [np.random.default_rng(14).integers(0, 7, size=(2, *t.shape[1:])).astype(t.dtype)
              for t in theirs.inputs]
    inputs = inputs[0] if len(inputs) == 1 else inputs
    for got, expected in zip(tapejax.nest.flatten(ours(inputs)), tf_real.nest.flatten(theirs(inputs))):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-6)


def test_leaky_relu_alpha_is_keras_2s_name_with_a_warning():
    with pytest.warns(UserWarning, match="alpha"):
        ours = tapejax.keras.layers.LeakyReLU(alpha=0.2)
    assert ours.negative_slope == pytest.approx(tf_real.keras.layers.LeakyReLU(negative_slope=0.2).negative_slope)


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.Reshape((5,)), lambda tf: tf.keras.layers.Permute((1, 3)),
    lambda tf: tf.keras.layers.Subtract(), lambda tf: tf.keras.layers.ReLU(negative_slope=-1.0),
    lambda tf: tf.keras.layers.Cropping1D((3, 3)),
], ids=["Reshape size", "Permute dims", "Subtract of 3", "ReLU slope", "Cropping too much"])
def test_errors_have_keras_types(make):
    x0 = [np.ones((2, 4), np.float32)] * 3
    errors = []
    for tf in (tf_real, tapejax):
        try:
            layer = make(tf)
            layer(x0 if isinstance(layer, tf.keras.layers.Subtract) else tf.constant(np.ones((2, 4, 3), np.float32)))
            errors.append(None)
        except Exception as e:  # noqa: BLE001 - the types are what is compared
            errors.append(type(e))
    assert errors[0] is not None and errors[1] is errors[0]


def _generator(tf):
    layers = tf.keras.layers
    return tf.keras.Sequential([
        tf.keras.Input(shape=(8,)), layers.Dense(4 * 4 * 8, use_bias=False, name="project"),
        layers.LeakyReLU(name="leaky"), layers.Reshape((4, 4, 8), name="grid"),
        layers.Conv2DTranspose(4, 3, strides=2, padding="same", name="up_conv"),
        layers.UpSampling2D(name="up"), layers.ZeroPadding2D(1, name="pad"), layers.Cropping2D(2, name="crop"),
        layers.SeparableConv2D(2, 3, name="sep"), layers.GlobalMaxPool2D(name="gmp"),
    ], name="generator")


def _recurrent(tf):
    layers = tf.keras.layers
    inputs = tf.keras.Input(shape=(6,), dtype="int32", name="ids")
    x = layers.Embedding(10, 4, mask_zero=True, name="embed")(inputs)
    x = layers.Bidirectional(layers.LSTM(3, return_sequences=True, name="lstm"), name="bi")(x)
    attended = layers.MultiHeadAttention(num_heads=2, key_dim=2, name="mha")(x, x)
    x = layers.GRU(2, name="gru")(layers.Add(name="residual")([x, attended]))
    return tf.keras.Model(inputs, layers.Dense(1, name="out")(x), name="recurrent")


@pytest.mark.parametrize("make", [_generator, _recurrent], ids=["generator", "recurrent"])
def test_summaries_and_weights_of_models_with_new_layers_agree_with_keras(make):
    models = {tf: make(tf) for tf in (tf_real, tapejax)}
    texts = []
    for model in models.values():
        out = []
        model.summary(print_fn=out.append)
        texts.append(out[0])
    if make is _generator:  # Keras 3 also shows the ops that compute masks (NotEqual, LogicalOr) as rows
        assert texts[1] == texts[0]
    assert [w.path for w in models[tapejax].weights] == [w.path for w in models[tf_real].weights]
    assert models[tapejax].count_params() == models[tf_real].count_params()
