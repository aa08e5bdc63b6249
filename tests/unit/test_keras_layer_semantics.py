"""Keras 3 layer semantics in tapejax (issue 20 item 2): names and paths, training/mask only to calls that take
them, attributes set after construction, functional graphs reused (Grad-CAM), regularizer losses, constraints,
masks, and shape inference that computes nothing. Values against TF are in tests/compat/test_*layers*_vs_tf.py."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf


def test_weights_have_keras_3_names_and_paths():
    inputs = tf.keras.Input(shape=(3,))
    outputs = tf.keras.layers.Dense(2, name="head")(tf.keras.layers.Dense(4, name="body")(inputs))
    model = tf.keras.Model(inputs, outputs)
    assert [w.name for w in model.weights] == ["kernel", "bias", "kernel", "bias"]
    assert [w.path for w in model.weights] == ["body/kernel", "body/bias", "head/kernel", "head/bias"]
    assert [w.name for w in model.weights if "kernel" in w.name] == ["kernel", "kernel"]
    assert repr(model.weights[1]).startswith("<Variable path=body/bias, shape=(4,), dtype=float32, value=")


def test_training_and_mask_reach_only_calls_that_take_them():
    seen = []

    class Plain(tf.keras.layers.Layer):
        def call(self, x):
            return inner(x)

    class Inner(tf.keras.layers.Layer):
        def call(self, x, training=None, mask=None):
            seen.append((training, mask))
            return x

    inner = Inner()
    plain = Plain()
    x = tf.ones([2, 3])
    assert plain(x, training=True, mask=tf.ones([2, 3])).shape == (2, 3)  # Keras drops both; no TypeError
    assert seen[-1] == (True, None)  # the training value still reaches the layers it calls


def test_activation_and_trainable_can_be_set_after_construction():
    layer = tf.keras.layers.Dense(2, activation="relu", kernel_initializer="ones", bias_initializer="ones")
    x = -tf.ones([1, 3])
    assert float(tf.reduce_sum(layer(x))) == 0.0
    layer.activation = None
    np.testing.assert_allclose(layer(x).numpy(), [[-2.0, -2.0]])
    layer.activation = "tanh"
    np.testing.assert_allclose(layer(x).numpy(), np.tanh([[-2.0, -2.0]]), rtol=1e-6)
    layer.trainable = False
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 2


def test_freezing_a_model_freezes_its_layers_and_its_batch_normalization_statistics():
    # Keras 3: `trainable` set on a model is set on every sublayer, and a frozen BatchNormalization normalises by
    # its moving statistics even with training=True (fine-tuning a pretrained base).
    model = tf.keras.Sequential([tf.keras.layers.Dense(3), tf.keras.layers.BatchNormalization()])
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    model(x)
    model.trainable = False
    assert [layer.trainable for layer in model.layers] == [False, False] and model.trainable_weights == []
    norm = model.layers[1]
    moving = norm.moving_mean.numpy().copy()
    frozen = model(x, training=True).numpy()
    np.testing.assert_array_equal(norm.moving_mean.numpy(), moving)
    np.testing.assert_array_equal(frozen, model(x, training=False).numpy())
    model.trainable = True
    assert [layer.trainable for layer in model.layers] == [True, True]
    model(x, training=True)
    assert not np.array_equal(norm.moving_mean.numpy(), moving)


def test_an_argument_a_layer_does_not_take_is_keras_3s_error_not_ignored():
    # Keras 3's ValueError: an option tapejax does not know (or a typo) must not be dropped silently.
    with pytest.raises(ValueError, match=r"Unrecognized keyword arguments passed to Dense: \{'units_': 3\}"):
        tf.keras.layers.Dense(2, units_=3)
    assert tf.keras.layers.Dense(2, autocast=False, input_shape=(3,)).units == 2  # Keras 3's own arguments


def test_feature_extraction_and_grad_cam_models_from_intermediate_outputs():
    inputs = tf.keras.Input(shape=(6, 6, 1))
    conv = tf.keras.layers.Conv2D(2, 3, name="last_conv")(inputs)
    outputs = tf.keras.layers.Dense(3)(tf.keras.layers.GlobalAveragePooling2D()(conv))
    model = tf.keras.Model(inputs, outputs)
    grad_model = tf.keras.Model(model.inputs, [model.get_layer("last_conv").output, model.output])
    x = tf.constant(np.random.default_rng(0).normal(size=(1, 6, 6, 1)).astype(np.float32))
    with tf.GradientTape() as tape:
        maps, predictions = grad_model(x)
        score = predictions[:, 1]
    grads = tape.gradient(score, maps)
    assert maps.shape == (1, 4, 4, 2) and grads.shape == (1, 4, 4, 2)
    # The same layers' values, to float rounding: the taped call's come op by op or from the gradient's fused
    # executable (which, depends on the ops compiled before), the plain calls' from one executable
    # (compiled_calls.py); a prediction of 1e-3 is a sum of terms of 0.1 (absolute 5e-9 seen).
    np.testing.assert_allclose(predictions.numpy(), model(x).numpy(), rtol=1e-5, atol=1e-7)
    features = tf.keras.Model(model.input, model.layers[1].output)
    np.testing.assert_allclose(features(x).numpy(), maps.numpy(), rtol=1e-5, atol=1e-7)
    assert model.layers[1].input is inputs and model.count_params() == 20 + 9


def test_shape_inference_computes_nothing_and_assigns_nothing():
    calls = []

    def record(x):
        calls.append(type(x.value).__name__)
        return x * 2.0

    inputs = tf.keras.Input(shape=(4,))
    bn = tf.keras.layers.BatchNormalization()
    outputs = bn(tf.keras.layers.Lambda(record)(inputs), training=True)
    assert outputs.shape == (None, 4)
    assert calls and all("Tracer" in name for name in calls)  # abstract values: nothing computed
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(4))  # the probe's assignments are dropped


def test_shape_inference_falls_back_to_values_when_a_call_needs_them():
    def needs_values(x):
        return x[:, : int(np.asarray(tf.shape(x)[1].numpy())) // 2]

    inputs = tf.keras.Input(shape=(6,))
    assert tf.keras.layers.Lambda(needs_values)(inputs).shape == (None, 3)


def test_regularizer_losses_join_model_losses_and_constraints_apply_after_updates():
    layer = tf.keras.layers.Dense(2, kernel_initializer="ones", kernel_regularizer=tf.keras.regularizers.L2(0.5),
                                  activity_regularizer="l1", kernel_constraint=tf.keras.constraints.MaxNorm(1.0))
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), layer])
    x = tf.ones([4, 3])
    with tf.GradientTape() as tape:
        y = model(x)
        loss = tf.reduce_sum(model.losses)
    activity, weight = (float(v) for v in model.losses)
    assert activity == pytest.approx(0.01 * float(tf.reduce_sum(tf.abs(y))) / 4)
    assert weight == pytest.approx(0.5 * 6.0)
    tf.keras.optimizers.SGD(0.1).apply_gradients(zip(tape.gradient(loss, model.trainable_weights),
                                                     model.trainable_weights))
    norms = np.linalg.norm(layer.kernel.numpy(), axis=0)
    assert np.all(norms <= 1.0 + 1e-6)


def test_masks_follow_tensors_and_merge():
    embedding = tf.keras.layers.Embedding(5, 2, mask_zero=True)
    ids = tf.constant([[1, 0], [2, 3]])
    embedded = embedding(ids)
    np.testing.assert_array_equal(tf.keras.masks.get_mask(embedded).numpy(), [[True, False], [True, True]])
    dense = tf.keras.layers.Dense(3)(embedded)  # Dense supports masking: the mask passes on
    np.testing.assert_array_equal(tf.keras.masks.get_mask(dense).numpy(), [[True, False], [True, True]])
    # Keras 3: a merge keeps a step that any input keeps, and has no mask if an input has none
    summed = tf.keras.layers.Add()([embedded, embedding(tf.constant([[1, 0], [0, 3]]))])
    np.testing.assert_array_equal(tf.keras.masks.get_mask(summed).numpy(), [[True, False], [True, True]])
    assert tf.keras.masks.get_mask(tf.keras.layers.Add()([embedded, tf.ones([2, 2, 2])])) is None
    joined = tf.keras.layers.Concatenate(axis=1)([embedded, tf.ones([2, 1, 2])])
    np.testing.assert_array_equal(tf.keras.masks.get_mask(joined).numpy(), [[True, False, True], [True, True, True]])


@pytest.mark.parametrize("path", ["keras.NoSuchModule", "keras.layers.NoSuchLayer", "keras.regularizers.nope",
                                  "keras.models.no_such_function", "keras.initializers.NoSuch",
                                  "keras.callbacks.NoSuch", "keras.losses.nope", "keras.utils.nope"])
def test_missing_keras_names_raise_not_implemented_naming_them(path):
    obj = tf
    with pytest.raises(NotImplementedError, match=path.rsplit(".", 1)[-1]) as info:
        for part in path.split("."):
            obj = getattr(obj, part)
    assert isinstance(info.value, AttributeError)


def test_layers_work_inside_tf_function_and_build_there():
    model = tf.keras.Sequential([tf.keras.layers.Conv1D(2, 3), tf.keras.layers.LSTM(3),
                                 tf.keras.layers.Dense(1)])
    step = tf.function(lambda x: model(x))
    x = tf.constant(np.random.default_rng(1).normal(size=(2, 5, 4)).astype(np.float32))
    np.testing.assert_allclose(step(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert [w.path for w in model.weights][:2] == ["sequential/conv1d/kernel", "sequential/conv1d/bias"] or \
        all(w.path.split("/")[0] == model.name for w in model.weights)
