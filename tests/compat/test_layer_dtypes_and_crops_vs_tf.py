"""Against TF 2.21's Keras 3: the activations by name (values and gradients at their kinks), integer inputs into
layers (which layers compute in float32, which keep the integers, which raise), and the crop window of CenterCrop
and Resizing(crop_to_aspect_ratio=True) over input and target sizes 1..9."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

LIBRARIES = (tf_real, tapejax)

# Every activation's kinks (0, +-0.5, +-1, +-3, 6) and saturated ends, in two rows of 14 (glu halves either axis).
KINKS = np.array([-200, -6, -3, -2.5, -1, -0.5, 0, 0.5, 1, 2, 2.5, 3, 6, 200], np.float32)
KINKS = np.stack([KINKS, KINKS[::-1]])
ACTIVATIONS = [
    ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.5}), ("hard_sigmoid", {}), ("hard_silu", {}),
    ("hard_swish", {}), ("mish", {}), ("log_softmax", {}), ("log_softmax", {"axis": 0}),
    ("log_softmax", {"axis": (0, 1)}), ("exponential", {}), ("log_sigmoid", {}),
    ("relu", {}), ("relu", {"max_value": 2.0}), ("relu", {"max_value": 6.0}), ("relu", {"threshold": 0.5}),
    ("relu", {"negative_slope": 0.1}), ("relu", {"negative_slope": 0.1, "max_value": 6.0}),
    ("relu", {"negative_slope": 0.1, "threshold": 0.5, "max_value": 2.0}), ("elu", {}), ("elu", {"alpha": 0.5}),
    ("celu", {}), ("celu", {"alpha": 0.5}), ("hard_tanh", {}), ("hard_shrink", {}), ("hard_shrink", {"threshold": 1.0}),
    ("soft_shrink", {}), ("tanh_shrink", {}), ("sparse_plus", {}), ("sparse_sigmoid", {}), ("squareplus", {}),
    ("squareplus", {"b": 0}), ("threshold", {"threshold": 0.5, "default_value": -1.0}), ("glu", {}),
    ("glu", {"axis": 0}), ("gelu", {"approximate": True}), ("selu", {}), ("softsign", {}), ("silu", {}),
    ("swish", {}), ("tanh", {}), ("relu6", {}), ("softplus", {}), ("sigmoid", {}), ("softmax", {}), ("linear", {}),
]
NAMES = sorted({name for name, _ in ACTIVATIONS})


def _activation_run(tf, name, kwargs, x0):
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = getattr(tf.keras.activations, name)(x, **kwargs)
        weights = np.linspace(0.5, 1.5, int(np.prod(y.shape)), dtype=np.float32).reshape(y.shape)
        loss = tf.reduce_sum(y * tf.cast(weights, y.dtype))
    return y.dtype.name, y.numpy(), tape.gradient(loss, x).numpy()


@pytest.mark.parametrize("name, kwargs", ACTIVATIONS, ids=[f"{n}{k or ''}" for n, k in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values_and_gradients_at_kinks_agree(name, kwargs, dtype):
    x0 = KINKS.astype(dtype)
    (dtype_tf, y_tf, g_tf), (dtype_tj, y_tj, g_tj) = (_activation_run(tf, name, kwargs, x0) for tf in LIBRARIES)
    assert dtype_tj == dtype_tf
    np.testing.assert_allclose(y_tj, y_tf, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_tj, g_tf, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_activation_names_resolve_as_in_keras(name):
    x0 = KINKS
    results = []
    for tf in LIBRARIES:
        module = tf.keras.activations
        try:
            y = tf.keras.layers.Activation(name)(tf.constant(x0)).numpy()
        except TypeError:  # threshold: no defaults for its arguments
            y = None
        results.append((module.get(name) is getattr(module, name), y))
    assert results[1][0] == results[0][0]
    if results[0][1] is None:
        assert results[1][1] is None
    else:
        np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)


# The integer inputs whose result tapejax's own ops decide: tf.nn.gelu, softsign and silu take integers in tapejax
# where TF's raise, and these with relu6, leaky_relu and squareplus take booleans.
_OP_LEVEL = {(name, "int32") for name in ("gelu", "softsign", "silu", "swish")} | {
    (name, "bool") for name in ("gelu", "softsign", "silu", "swish", "relu6", "leaky_relu", "squareplus")}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["int32", "bool"])
def test_activations_of_integers_agree(name, dtype):
    if (name, dtype) in _OP_LEVEL:
        pytest.skip("decided by tapejax's tf.nn op, not by tf.keras.activations")
    x0 = np.array([[-2, 0, 3, 1]]).astype(dtype)
    kwargs = {"threshold": 0.5, "default_value": -1.0} if name == "threshold" else {}
    results = []
    for tf in LIBRARIES:
        try:
            y = getattr(tf.keras.activations, name)(tf.constant(x0), **kwargs)
            results.append((y.dtype.name, y.numpy()))
        except Exception as e:  # noqa: BLE001 (the exception's type is what is compared)
            results.append((type(e).__name__, str(e).split(" to EagerTensor")[0] if isinstance(e, TypeError) else None))
    assert results[1][0] == results[0][0]
    if isinstance(results[0][1], np.ndarray):
        np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)
    elif results[0][0] == "TypeError" and name not in ("sparse_plus", "sparse_sigmoid"):
        assert results[1][1] == results[0][1]  # "Cannot convert 3.0": the same constant fails first


def test_unknown_activation_is_keras_value_error():
    messages = []
    for tf in LIBRARIES:
        with pytest.raises(ValueError) as info:
            tf.keras.activations.get("rellu")
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_glu_odd_axis_is_a_value_error():
    messages = []
    for tf in LIBRARIES:
        with pytest.raises(ValueError) as info:
            tf.keras.activations.glu(tf.ones([2, 3]))
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def _copy_weights(source, target):
    assert [tuple(w.shape) for w in source.weights] == [tuple(w.shape) for w in target.weights]
    for s, t in zip(source.weights, target.weights):
        t.assign(np.asarray(s))


@pytest.mark.parametrize("make", [
    lambda L: L.GRU(3, recurrent_activation="hard_sigmoid", return_sequences=True),
    lambda L: L.LSTM(3, recurrent_activation="hard_sigmoid", activation="hard_silu"),
    lambda L: L.Dense(4, activation="leaky_relu"), lambda L: L.Dense(4, activation="log_softmax"),
    lambda L: L.Dense(4, activation="mish"),
], ids=["GRU-hard_sigmoid", "LSTM-hard_sigmoid-hard_silu", "Dense-leaky_relu", "Dense-log_softmax", "Dense-mish"])
def test_layers_with_the_new_activation_names_agree(make):
    # Large inputs, so that the gates' pre-activations reach the flat parts of hard_sigmoid.
    x0 = np.random.default_rng(5).normal(0.0, 3.0, size=(2, 5, 3)).astype(np.float32)
    layers = [make(tf.keras.layers) for tf in LIBRARIES]
    for tf, layer in zip(LIBRARIES, layers):
        layer(tf.constant(x0))
    _copy_weights(*layers)
    outs = []
    for tf, layer in zip(LIBRARIES, layers):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * y)
        grads = tape.gradient(loss, [x] + layer.trainable_weights)
        outs.append([y.numpy()] + [g.numpy() for g in grads])
    for got, expected in zip(*reversed(outs)):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


# Integer inputs. Keras 3 passes integers on to `call` (DTypePolicy.convert_input casts only floats); its ops then
# promote them to float32 against float weights or in means, keep them in shape and max ops, or raise.
S1, S2, S3 = (2, 4, 3), (2, 4, 4, 3), (2, 4, 4, 4, 3)
INTEGER_CASES = [
    # computed in float32
    ("Dense(3)", (2, 3), {}), ("Dense(3)", S1, {}), ("TimeDistributed(Dense(2))", S1, {}),
    ("BatchNormalization()", (2, 3), {}), ("BatchNormalization()", (2, 3), {"training": True}),
    ("BatchNormalization(axis=1)", S2, {"training": True}),
    ("LayerNormalization()", (2, 3), {}), ("LayerNormalization(axis=(1, 2))", S1, {}),
    ("GlobalAveragePooling1D()", S1, {}), ("GlobalAveragePooling2D()", S2, {}),
    ("GlobalAveragePooling2D(keepdims=True)", S2, {}), ("GlobalAveragePooling3D()", S3, {}),
    ("Normalization(mean=1.0, variance=4.0)", (2, 3), {}), ("Rescaling(0.5, offset=1)", (2, 3), {}),
    ("CenterCrop(2, 2)", S2, {}), ("CenterCrop(6, 5)", S2, {}), ("Embedding(20, 2)", (2, 3), {}),
    ("MultiHeadAttention(2, 2)", S1, {"value": "inputs"}), ("RandomFlip()", S2, {"training": False}),
    # kept as integers
    ("Flatten()", S1, {}), ("Reshape((12,))", S1, {}), ("Permute((2, 1))", S1, {}), ("RepeatVector(2)", (2, 3), {}),
    ("MaxPooling1D(2)", S1, {}), ("MaxPooling2D(2)", S2, {}), ("GlobalMaxPooling2D()", S2, {}),
    ("Cropping2D(1)", S2, {}), ("ZeroPadding2D(1)", S2, {}), ("UpSampling2D(2)", S2, {}), ("Masking(1)", S1, {}),
    ("Dropout(0.5)", (2, 3), {}), ("ReLU(max_value=2)", (2, 3), {}), ("Activation('relu')", (2, 3), {}),
    ("Concatenate()", (2, 3), {"pair": True}), ("Add()", (2, 3), {"pair": True}), ("Average()", (2, 3), {"pair": True}),
    ("Resizing(3, 3)", S2, {}), ("Resizing(7, 9)", S2, {}), ("Resizing(3, 3, interpolation='nearest')", S2, {}),
    ("Resizing(5, 7, interpolation='bicubic')", S2, {}), ("Resizing(5, 7, interpolation='lanczos3')", S2, {}),
    ("Resizing(3, 3, interpolation='area')", S2, {}), ("Resizing(3, 5, antialias=True)", S2, {}),
    ("Resizing(3, 5, crop_to_aspect_ratio=True)", S2, {}),
    # raise, as TF's kernels take only floats
    ("AveragePooling2D(2)", S2, {}), ("Softmax()", (2, 3), {}), ("Activation('sigmoid')", (2, 3), {}),
    ("ELU()", (2, 3), {}),
    ("LSTM(2)", S1, {}), ("GRU(2)", S1, {}), ("SimpleRNN(2)", S1, {}), ("Bidirectional(LSTM(2))", S1, {}),
    ("AdditiveAttention()", S1, {"pair": True}), ("GroupNormalization(groups=1)", S1, {}),
    ("LeakyReLU()", (2, 3), {}), ("UpSampling2D(2, interpolation='bilinear')", S2, {}),
]


def _integer_images(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    info = np.iinfo(dtype) if dtype != "bool" else None
    if info is None:
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.integers(max(info.min, -100), min(info.max, 255) + 1, size=shape).astype(dtype)


def _integer_call(tf, ctor, x0, kwargs, source=None):
    layers = tf.keras.layers
    layer = eval(ctor, {name: getattr(layers, name) for name in dir(layers) if not name.startswith("_")})
    kwargs = dict(kwargs)
    pair = kwargs.pop("pair", False)
    if kwargs.get("value") == "inputs":
        kwargs["value"] = tf.constant(x0)
    inputs = [tf.constant(x0), tf.constant(x0[::-1].copy())] if pair else tf.constant(x0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = layer(inputs, **kwargs)
            if source is not None and source.weights:  # the other library's weights, then call again
                _copy_weights(source, layer)
                out = layer(inputs, **kwargs)
    except Exception as e:  # noqa: BLE001 (the exception's type is what is compared)
        return layer, type(e).__name__, None
    return layer, out.dtype.name, out.numpy()


def _assert_rounded_alike(got, expected, resampled):
    """Integer images equal, except by 1 where the float resample lies on a half: there the two libraries' float32
    resize differs by an ulp (135.49998 against 135.5), which decides the rounding."""
    on_half = np.abs(np.abs(resampled - np.floor(resampled)) - 0.5) < 1e-3
    off = got.astype(np.int64) - expected.astype(np.int64)
    assert np.all((off == 0) | (on_half & (np.abs(off) == 1))), np.argwhere(off != 0)[:5]


# Known differences: each is a strict xfail, so fixing it turns the case red until its entry goes.
KNOWN_INTEGER_DIFFERENCES = {
    ("uint8", "AdditiveAttention()"): "Keras adds query and key in uint8 before its tanh promotes them (200 + 56 "
                                      "wraps to 0); tapejax promotes the inputs first",
}


@pytest.mark.parametrize("ctor, shape, kwargs", INTEGER_CASES)
@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_integer_inputs_agree(ctor, shape, kwargs, dtype, request):
    if (dtype, ctor) in KNOWN_INTEGER_DIFFERENCES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_INTEGER_DIFFERENCES[dtype, ctor]))
    x0 = _integer_images(shape, dtype)
    if "Embedding" in ctor:
        x0 = np.abs(x0) % 20
    source, dtype_tf, y_tf = _integer_call(tf_real, ctor, x0, kwargs)
    _, dtype_tj, y_tj = _integer_call(tapejax, ctor, x0, kwargs, source=source)
    assert dtype_tj == dtype_tf
    if y_tf is None:
        return
    if ctor.startswith("Resizing") and "nearest" not in ctor:
        _assert_rounded_alike(y_tj, y_tf, _integer_call(tf_real, ctor, x0.astype(np.float32), kwargs)[2])
    elif np.issubdtype(y_tf.dtype, np.integer):
        np.testing.assert_array_equal(y_tj, y_tf)
    else:
        np.testing.assert_allclose(y_tj, y_tf, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int64"])
@pytest.mark.parametrize("interpolation", ["bilinear", "bicubic", "lanczos5", "nearest"])
def test_integer_resizing_rounds_half_to_even_and_clips(dtype, interpolation):
    # Values at the dtype's extremes that the cubic and lanczos kernels overshoot, and a ramp whose bilinear
    # samples fall on halves (0.5, 1.5, 2.5: rounded to 0, 2, 2).
    info = np.iinfo(dtype)
    row = np.array([info.min, info.max, info.min, info.max, info.max, 0, 2, 4, 6], np.float64)
    x0 = np.stack([row, row[::-1]]).astype(dtype).reshape(1, 2, 9, 1)
    results = []
    for tf in LIBRARIES:
        y = tf.keras.layers.Resizing(3, 19, interpolation=interpolation)(tf.constant(x0))
        results.append((y.dtype.name, y.numpy()))
    assert results[1][0] == results[0][0]
    if dtype == "int64":  # a float32 resample of int64's extremes: equal up to float32's resolution
        np.testing.assert_allclose(results[1][1].astype(np.float64), results[0][1].astype(np.float64), rtol=1e-6)
    else:
        np.testing.assert_array_equal(results[1][1], results[0][1])


def test_integer_input_to_a_functional_model_agrees():
    x0 = np.array([[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [1, 1, 2]]], np.int32)
    results = []
    for tf in LIBRARIES:
        inputs = tf.keras.Input((2, 3), dtype="int32")
        pooled = tf.keras.layers.GlobalAveragePooling1D()(inputs)
        outputs = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(4, kernel_initializer="ones")(pooled))
        model = tf.keras.Model(inputs, outputs)
        results.append((tf.as_dtype(pooled.dtype).name, model(tf.constant(x0)).numpy()))
    assert results[1][0] == results[0][0]
    assert results[1][1].dtype == results[0][1].dtype
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make", [lambda L: L.Dense(3), lambda L: L.BatchNormalization(),
                                  lambda L: L.GlobalAveragePooling1D(), lambda L: L.Rescaling(0.5)],
                         ids=["Dense", "BatchNormalization", "GlobalAveragePooling1D", "Rescaling"])
def test_float_inputs_pass_through_untouched(make):
    # The integer cast costs a float input of the layer's dtype nothing: the same tensor reaches `call`, and the
    # tape records what `call` alone records.
    layer = make(tapejax.keras.layers)
    x = tapejax.constant(np.ones((2, 4, 3), np.float32))
    layer(x)
    assert layer._convert_input(x) is x
    counts = []
    for run in (lambda: layer(x), lambda: layer.call(x)):
        with tapejax.GradientTape() as tape:
            tape.watch(x)
            run()
        counts.append(len(tape._tape.entries))
    assert counts[0] == counts[1]


# Crop windows: each target size against every input size 1..9 (the repro sizes 4x5 -> 6x8 and 6x8 -> 5x7 among
# them), for CenterCrop (which resizes only inputs smaller than the target) and Resizing(crop_to_aspect_ratio=True).
# Targets of every parity pair, square and not, extreme aspect ratios (when the truncation was fixed, 10 targets
# agreed on all 6,561 pairs of sizes 1..9; these 5 keep each kind, at half the time).
TARGETS = [(6, 8), (5, 7), (1, 9), (4, 7), (3, 3)]


@pytest.mark.parametrize("target", TARGETS, ids=[f"{h}x{w}" for h, w in TARGETS])
@pytest.mark.parametrize("layer_name", ["CenterCrop", "Resizing"])
def test_crop_windows_agree_over_input_sizes(layer_name, target):
    kwargs = {} if layer_name == "CenterCrop" else {"crop_to_aspect_ratio": True}
    for h, w in itertools.product(range(1, 10), repeat=2):
        x0 = (np.arange(h * w * 2, dtype=np.float32).reshape(1, h, w, 2) * 1.7) % 11
        results = [getattr(tf.keras.layers, layer_name)(*target, **kwargs)(tf.constant(x0)).numpy()
                   for tf in LIBRARIES]
        assert results[1].shape == results[0].shape, (h, w)
        np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-5, err_msg=f"input {h}x{w}")


@pytest.mark.parametrize("layer_name, target, shape, data_format", [
    ("CenterCrop", (6, 8), (2, 4, 5, 3), "channels_last"), ("CenterCrop", (6, 8), (2, 3, 4, 5), "channels_first"),
    ("Resizing", (5, 7), (2, 6, 8, 3), "channels_last"), ("Resizing", (5, 7), (6, 8, 3), "channels_last"),
    ("Resizing", (5, 7), (2, 3, 6, 8), "channels_first"),
])
def test_crop_gradients_agree(layer_name, target, shape, data_format):
    kwargs = {"data_format": data_format} | ({} if layer_name == "CenterCrop" else {"crop_to_aspect_ratio": True})
    x0 = np.random.default_rng(8).normal(size=shape).astype(np.float32)
    outs = []
    for tf in LIBRARIES:
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = getattr(tf.keras.layers, layer_name)(*target, **kwargs)(x)
            weights = np.linspace(0.3, 1.7, int(np.prod(y.shape)), dtype=np.float32).reshape(y.shape)
            loss = tf.reduce_sum(y * y * weights)
        outs.append((y.numpy(), tape.gradient(loss, x).numpy()))
    for got, expected in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["uint8", "int32"])
def test_integer_crop_to_aspect_ratio_agrees(dtype):
    x0 = _integer_images((2, 6, 8, 3), dtype)
    results = []
    for tf in LIBRARIES:
        for layer in (tf.keras.layers.Resizing(5, 7, crop_to_aspect_ratio=True), tf.keras.layers.CenterCrop(9, 7)):
            y = layer(tf.constant(x0))
            results.append((y.dtype.name, y.numpy()))
    (dtype_tf, y_tf), (dtype_tf_crop, y_tf_crop), (dtype_tj, y_tj), (dtype_tj_crop, y_tj_crop) = results
    assert (dtype_tj, dtype_tj_crop) == (dtype_tf, dtype_tf_crop) == (dtype, "float32")
    resampled = tf_real.keras.layers.Resizing(5, 7, crop_to_aspect_ratio=True)(x0.astype(np.float32)).numpy()
    _assert_rounded_alike(y_tj, y_tf, resampled)
    np.testing.assert_allclose(y_tj_crop, y_tf_crop, rtol=1e-5, atol=1e-4)


def _custom_activation(x):
    return x


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.Dense(2, activation="swish"), lambda tf: tf.keras.layers.Dense(2, activation=tf.nn.relu),
    lambda tf: tf.keras.layers.Conv2D(2, 3, activation="hard_swish"), lambda tf: tf.keras.layers.Activation("swish"),
    lambda tf: tf.keras.layers.LSTM(2, activation="swish", recurrent_activation="hard_swish"),
    lambda tf: tf.keras.layers.Dense(2, activation=tf.keras.activations.swish),
], ids=["Dense-swish", "Dense-tf.nn.relu", "Conv2D-hard_swish", "Activation-swish", "LSTM-swish", "Dense-function"])
def test_configs_name_activations_as_keras(make):
    # Keras saves an activation under its function's name: "swish" is "silu", "hard_swish" "hard_silu"
    configs = [make(tf).get_config() for tf in LIBRARIES]
    for key in ("activation", "recurrent_activation"):
        assert configs[1].get(key) == configs[0].get(key), key
    for name in ("swish", "hard_swish", "gelu", "relu", "leaky_relu", "log_softmax"):
        assert (tapejax.keras.activations.serialize(tapejax.keras.activations.get(name))
                == tf_real.keras.activations.serialize(tf_real.keras.activations.get(name)))
    assert (tapejax.keras.activations.serialize(_custom_activation)
            == tf_real.keras.activations.serialize(_custom_activation))
