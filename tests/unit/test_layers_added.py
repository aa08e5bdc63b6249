"""EinsumDense's reading of equations, UnitNormalization, Identity, AlphaDropout, CategoryEncoding and Discretization
without TensorFlow: shapes and values derived by hand (shown in each test), JAX's einsum as the oracle, and config
and JSON round trips. tests/compat/test_layers_added_vs_tf.py compares them with TF's Keras."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax.keras.layers_einsum import analyze


@pytest.mark.parametrize("equation, bias_axes, input_shape, output_shape, expected", [
    # kernel axes take the output's size for output letters (d, e), the input's for contracted ones (c); the
    # output's b stays None as output_shape says, whatever the input's size (Keras's static shape)
    ("abc,cde->abde", "de", (None, 5, 8), (None, 2, 3), ([8, 2, 3], [2, 3], [None, None, 2, 3], [0], [1, 2])),
    # a bias over d only broadcasts over e: shape (2, 1)
    ("abc,cde->abde", "d", (None, 5, 8), (None, 2, 3), ([8, 2, 3], [2, 1], [None, None, 2, 3], [0], [1, 2])),
    ("ab,bc->ac", "c", (4, 8), 6, ([8, 6], [6], [4, 6], [0], [1])),
    # a leading ellipsis: the passed-through axes follow the batch axis, in order
    ("...b,bc->...c", "c", (2, 5, 7, 8), (6,), ([8, 6], [6], [2, 5, 7, 6], [0], [1])),
    # a trailing ellipsis: the passed-through axes end the output, and the bias gets a 1 for each
    ("ab...,bc->ac...", "c", (2, 8, 7, 3), 6, ([8, 6], [6, 1, 1], [2, 6, 7, 3], [0], [1])),
])
def test_analyze_reads_the_equation(equation, bias_axes, input_shape, output_shape, expected):
    assert analyze(equation, bias_axes, input_shape, output_shape) == expected


@pytest.mark.parametrize("equation, bias_axes, output_shape", [
    ("ab,bc,cd->ad", None, 4), ("ab,bc->az", None, 4), ("ab,bz->ab", None, 8), ("ab,bc->ac", "z", 4),
    ("abc,cd->abd", "d", (4, 6)),
])
def test_analyze_refuses_what_does_not_fit(equation, bias_axes, output_shape):
    with pytest.raises(ValueError):
        analyze(equation, bias_axes, (2, 3, 8) if equation.startswith("abc") else (2, 8), output_shape)


def test_einsum_dense_is_einsum_plus_bias():
    layer = tf.keras.layers.EinsumDense("abc,cde->abde", (None, 2, 3), bias_axes="de", activation="relu",
                                        bias_initializer="random_normal")
    x = np.random.default_rng(0).normal(size=(2, 5, 4)).astype(np.float32)
    y = layer(tf.constant(x))
    kernel, bias = (np.asarray(w) for w in layer.weights)
    expected = jnp.maximum(jnp.einsum("abc,cde->abde", x, kernel) + bias, 0)
    np.testing.assert_allclose(y.numpy(), np.asarray(expected), rtol=1e-5, atol=1e-6)
    assert [w.path for w in layer.weights] == [f"{layer.name}/kernel", f"{layer.name}/bias"]
    assert tf.keras.layers.EinsumDense("abc,cd->abd", (None, 4))(tf.keras.Input((7, 5))).shape.as_list() == \
        [None, None, 4]
    again = tf.keras.layers.EinsumDense.from_config(layer.get_config())
    assert again.get_config() == {**layer.get_config(), "name": again.name}


def test_unit_normalization_rows_and_the_zero_row():
    """Rows get norm 1; a zero row stays zero, and its gradient is 1e12 times the incoming one (the bound on
    1 / norm, which is constant there)."""
    x = tf.constant([[3.0, 4.0], [0.0, 0.0]])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.keras.layers.UnitNormalization()(x)
        loss = tf.reduce_sum(y * tf.constant([1.0, 2.0]))
    np.testing.assert_allclose(y.numpy(), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy()[1], [1e12, 2e12], rtol=1e-6)
    layer = tf.keras.layers.UnitNormalization(axis=(1, 2))
    assert layer.get_config()["axis"] == [1, 2]
    assert tf.keras.layers.UnitNormalization.from_config(layer.get_config()).axis == [1, 2]


def test_identity_returns_its_inputs():
    x = {"a": tf.constant([1.0]), "b": [tf.constant([2, 3])]}
    y = tf.keras.layers.Identity()(x)
    assert y["a"].numpy().tolist() == [1.0] and y["b"][0].numpy().tolist() == [2, 3]


def test_alpha_dropout_keeps_mean_and_variance_when_training_only():
    x = tf.random.normal([100_000], seed=1)
    layer = tf.keras.layers.AlphaDropout(0.3, seed=4)
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())
    y = layer(x, training=True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.var() - 1.0) < 0.03 and not np.allclose(y, x.numpy())


def test_category_encoding_modes_by_hand():
    ids = tf.constant([[0, 2, 2], [3, 3, 9]])  # 9 >= num_tokens counts nowhere
    encode = lambda mode: tf.keras.layers.CategoryEncoding(4, mode)(ids).numpy().tolist()  # noqa: E731
    assert encode("multi_hot") == [[1, 0, 1, 0], [0, 0, 0, 1]]
    assert encode("count") == [[1, 0, 2, 0], [0, 0, 0, 2]]
    assert encode("one_hot")[1] == [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.keras.layers.CategoryEncoding(4)(tf.constant([[0, -1]]))
    layer = tf.keras.layers.CategoryEncoding(4, "count")
    assert tf.function(layer)(ids).numpy().tolist() == encode("count")
    assert layer(ids, count_weights=tf.constant([[0.5, 1.0, 2.0], [1.0, 1.0, 1.0]])).numpy().tolist() == \
        [[0.5, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 2.0]]


def test_discretization_bins_and_adapt_by_hand():
    layer = tf.keras.layers.Discretization(bin_boundaries=[0.0, 1.0])
    y = layer(tf.constant([-1.0, 0.0, 0.5, 1.0, float("nan")]))
    assert y.dtype == tf.int32 and y.numpy().tolist() == [0, 1, 1, 2, 2]
    # 7 values each weighing 1: the 1/3 quantile interpolates between 2 (at 2/7) and 3 (at 3/7): 2 + 1/3 * 7 - 2
    adapted = tf.keras.layers.Discretization(num_bins=3)
    adapted.adapt(np.arange(1.0, 8.0))
    np.testing.assert_allclose(adapted.bin_boundaries, [7 / 3, 14 / 3], rtol=1e-6)
    again = tf.keras.layers.Discretization.from_config(adapted.get_config())
    assert again.bin_boundaries == adapted.bin_boundaries and again.num_bins == 3


def test_new_layers_survive_a_json_round_trip():
    inputs = tf.keras.Input((4,))
    x = tf.keras.layers.EinsumDense("ab,bc->ac", 3, bias_axes="c")(inputs)
    x = tf.keras.layers.UnitNormalization()(tf.keras.layers.Identity()(x))
    x = tf.keras.layers.AlphaDropout(0.2)(x)
    ids = tf.keras.layers.Discretization(bin_boundaries=[0.0])(x)
    model = tf.keras.Model(inputs, tf.keras.layers.CategoryEncoding(2, "count")(ids))
    rebuilt = tf.keras.models.model_from_json(model.to_json())
    rebuilt.set_weights(model.get_weights())
    data = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(rebuilt(data).numpy(), model(data).numpy())
    assert [type(layer).__name__ for layer in rebuilt.layers] == [type(layer).__name__ for layer in model.layers]
