"""UnitNormalization, Identity, EinsumDense, AlphaDropout, CategoryEncoding, Discretization and MultiHeadAttention's
`query_mask=` against TF 2.21's Keras 3: values, dtypes, shapes (eager and symbolic), input and weight gradients
from the same weights, configurations (keys, round trips, .keras archives both ways) and exception types."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

BOTH = (tf_real, tapejax)


def _error(fn):
    """The name of the exception `fn()` raises (None if it returns): TF's and tapejax's classes differ."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (any type: the test compares them)
        return type(e).__name__
    return None


def _same_error(make):
    """`make(tf)` raises the same exception type in TF and tapejax (and does raise)."""
    names = [_error(lambda tf=tf: make(tf)) for tf in BOTH]
    assert names[0] is not None and names[1] == names[0], names


def _dense(value):
    if isinstance(value, (tf_real.SparseTensor, tapejax.SparseTensor)):
        value = (tf_real if isinstance(value, tf_real.SparseTensor) else tapejax).sparse.to_dense(value)
    return np.asarray(value)


def _mask(tensor):
    """The Keras mask a layer attached to `tensor` (TF keeps it on the tensor, tapejax in keras.masks), or None."""
    if isinstance(tensor, tf_real.Tensor):
        mask = getattr(tensor, "_keras_mask", None)
    else:
        mask = tapejax.keras.masks.get_mask(tensor)
    return None if mask is None else np.asarray(mask).tolist()


def _config_keys(make):
    return [set(make(tf).get_config()) for tf in BOTH]


# -- UnitNormalization and Identity ----------------------------------------------------------------------

_ZERO_ROWS = np.array([[3.0, 4.0], [0.0, 0.0], [1e-7, 0.0], [1e-30, 1e-30], [-2.0, 0.5]], np.float32)


@pytest.mark.parametrize("axis, x", [
    (-1, _ZERO_ROWS),
    (0, _ZERO_ROWS),
    ([1, 2], np.random.default_rng(0).normal(size=(3, 2, 4)).astype(np.float32)),
    ((0, 2), np.concatenate([np.zeros((1, 2, 3)), np.ones((1, 2, 3))]).astype(np.float32)),
    (-1, np.float32(3.0)),
    (-1, np.array([[1e20, 1e20], [1e-20, 0.0]], np.float32)),
], ids=["rows_with_zeros", "axis0", "two_axes", "tuple_axes_zero_block", "scalar", "huge_and_tiny"])
def test_unit_normalization_values_and_gradients_agree(axis, x):
    """Keras 3: x * min(rsqrt(sum x^2), 1e12); an all-zero row stays 0 and its gradient is 1e12 * upstream."""
    results = []
    for tf in BOTH:
        layer = tf.keras.layers.UnitNormalization(axis=axis)
        inputs = tf.constant(x)
        weights = tf.constant(np.linspace(1.0, 2.0, max(np.size(x), 1), dtype=np.float32)[:max(np.size(x), 1)])
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            y = layer(inputs)
            loss = tf.reduce_sum(tf.reshape(y, [-1]) * weights)
        results.append((y.numpy(), tape.gradient(loss, inputs).numpy(), y.dtype.name))
    (y_tf, g_tf, d_tf), (y_tj, g_tj, d_tj) = results
    assert d_tj == d_tf and y_tj.shape == y_tf.shape
    assert np.isfinite(g_tj).all() == np.isfinite(g_tf).all()
    np.testing.assert_allclose(y_tj, y_tf, rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(g_tj, g_tf, rtol=1e-5)


def test_unit_normalization_under_function_mask_dtype_and_config_agree():
    x = np.array([[1.0, 2.0], [0.0, 0.0]], np.float64)  # float64 in: the layer computes in float32
    outs = []
    for tf in BOTH:
        layer = tf.keras.layers.UnitNormalization(axis=(1,))
        embedded = tf.keras.layers.Embedding(5, 3, mask_zero=True)(tf.constant([[1, 0]]))
        outs.append((tf.function(layer)(tf.constant(x)).numpy(), layer(tf.constant(x)).dtype.name,
                     _mask(layer(embedded)), layer.get_config()["axis"], layer.built))
    for got, expected in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(got, expected)
    config = tapejax.keras.layers.UnitNormalization(axis=[1, 2], name="unit").get_config()
    again = tapejax.keras.layers.UnitNormalization.from_config(config)
    assert again.get_config() == config
    assert tf_real.keras.layers.UnitNormalization.from_config(config).get_config()["axis"] == [1, 2]
    keys = _config_keys(lambda tf: tf.keras.layers.UnitNormalization())
    assert keys[1] == keys[0]


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.UnitNormalization(axis="a"),
    lambda tf: tf.keras.layers.UnitNormalization()(tf.constant([[3, 4]])),
    lambda tf: tf.keras.layers.UnitNormalization(axis=3)(tf.constant([[3.0, 4.0]])),
    lambda tf: tf.keras.layers.UnitNormalization(axis=3)(tf.keras.Input((2,))),
], ids=["axis_type", "integer_input", "axis_out_of_range_eager", "axis_out_of_range_symbolic"])
def test_unit_normalization_errors_agree(make):
    _same_error(make)


def test_identity_agrees():
    outs = []
    for tf in BOTH:
        layer = tf.keras.layers.Identity()
        x64 = tf.constant([[3.0, 4.0]], tf.float64)
        ints = tf.constant([[3, 4]])
        nested = layer({"a": tf.constant(1.0), "b": [tf.constant([2.0])]})
        embedded = tf.keras.layers.Embedding(5, 3, mask_zero=True)(tf.constant([[1, 0]]))
        with tf.GradientTape() as tape:
            x = tf.constant([1.0, -2.0])
            tape.watch(x)
            y = layer(x)
            loss = y * y
        outs.append([layer(x64).numpy(), layer(x64).dtype.name, layer(ints).numpy(), layer(ints).dtype.name,
                     nested["a"].numpy(), nested["b"][0].numpy(), _mask(layer(embedded)),
                     tape.gradient(loss, x).numpy(), layer(np.ones(2)).dtype.name, layer.built])
    for got, expected in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(got, expected)
    keys = _config_keys(lambda tf: tf.keras.layers.Identity())
    assert keys[1] == keys[0]


# -- EinsumDense ------------------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ab,bc->ac", 5, (3, 4), "c", None),
    ("abc,cd->abd", (None, 6), (2, 3, 4), "d", "relu"),
    ("abc,cd->abd", (3, 6), (2, 3, 4), None, None),
    ("abc,cde->abde", (None, 2, 3), (2, 5, 4), "de", None),
    ("abc,cde->abde", [None, 2, 3], (2, 5, 4), "e", "tanh"),
    ("abc,cde->abde", (None, 2, 3), (2, 5, 4), "d", None),
    ("...b,bc->...c", 3, (2, 4), "c", None),
    ("...b,bc->...c", 3, (2, 5, 4), "c", None),
    ("...b,bc->...c", 3, (2, 5, 6, 4), "c", None),
    ("ab...,bc->ac...", 3, (2, 4, 5, 2), "c", None),
    ("ab...,bc->ac...", 3, (2, 4, 5), None, "sigmoid"),
    ("abcd,cde->abe", (None, 3), (2, 3, 4, 5), "e", None),
]


@pytest.mark.parametrize("equation, output_shape, shape, bias_axes, activation", EINSUM_CASES,
                         ids=[f"{c[0]}|{c[1]}|{c[3]}|{len(c[2])}" for c in EINSUM_CASES])
def test_einsum_dense_agrees_with_keras(equation, output_shape, shape, bias_axes, activation):
    x0 = np.random.default_rng(5).normal(size=shape).astype(np.float32)
    layers = []
    for tf in BOTH:
        layer = tf.keras.layers.EinsumDense(equation, output_shape, activation=activation, bias_axes=bias_axes,
                                            bias_initializer="random_normal", name="einsum")
        layer(tf.constant(x0))
        layers.append(layer)
    described = [[(w.name, w.path, tuple(w.shape)) for w in layer.weights] for layer in layers]
    assert described[1] == described[0]
    layers[1].set_weights(layers[0].get_weights())
    results = []
    for tf, layer in zip(BOTH, layers):
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            loss = tf.reduce_sum(y * y * 0.5 + y)
        grads = tape.gradient(loss, [x] + layer.trainable_weights)
        results.append([y.numpy()] + [g.numpy() for g in grads])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    elided = len(shape) - len(equation.split(",")[0].replace("...", ""))
    reversed_by_keras = equation.startswith("...") and elided >= 3
    if not reversed_by_keras:  # Keras lists 2+ leading elided axes in reverse (see EinsumDense's docstring)
        assert layers[1].compute_output_shape(shape) == tuple(layers[0].compute_output_shape(shape))
    symbolic = [tf.keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)(
        tf.keras.Input(shape[1:])).shape for tf in BOTH]
    if not reversed_by_keras:
        assert tuple(symbolic[1].as_list()) == tuple(symbolic[0])


def test_einsum_dense_symbolic_none_output_axis_is_none_as_in_keras():
    shapes = [tuple(tf.keras.layers.EinsumDense("abc,cd->abd", (None, 4))(tf.keras.Input((7, 5))).shape)
              for tf in BOTH]
    assert shapes[1] == tuple(shapes[0])


@pytest.mark.parametrize("equation, output_shape, shape, bias_axes", [
    ("ab,bc,cd->ad", 4, (2, 3), None),
    ("ab,bc->az", 4, (2, 3), None),
    ("ab,bz->ab", 3, (2, 3), None),
    ("ab,bc->ac", 4, (2, 3), "z"),
    ("abc,cd->abd", (4, 6), (2, 3, 5), "d"),
    ("ab,bc->ac", [None], (2, 3), "c"),
    ("abc,cde->abde", (None, 2, 3), (2, 5, 4), "b"),
], ids=["three_operands", "output_letter_unknown", "weight_letter_unknown", "bias_letter_unknown",
        "shared_axis_mismatch", "kernel_axis_none", "bias_axis_none"])
def test_einsum_dense_errors_agree(equation, output_shape, shape, bias_axes):
    _same_error(lambda tf: tf.keras.layers.EinsumDense(equation, output_shape, bias_axes=bias_axes)(
        tf.ones(shape)))


def test_einsum_dense_config_round_trips_both_ways():
    kwargs = {"activation": "relu", "bias_axes": "de", "kernel_regularizer": "l2"}
    layers = [tf.keras.layers.EinsumDense("abc,cde->abde", (None, 2, 3), **kwargs) for tf in BOTH]
    configs = [layer.get_config() for layer in layers]
    assert set(configs[1]) == set(configs[0])
    for key in ("output_shape", "equation", "activation", "bias_axes"):
        assert configs[1][key] == configs[0][key], key
    assert tapejax.keras.layers.EinsumDense("ab,bc->ac", 4).get_config()["output_shape"] == \
        tf_real.keras.layers.EinsumDense("ab,bc->ac", 4).get_config()["output_shape"]
    x = np.random.default_rng(1).normal(size=(2, 5, 4)).astype(np.float32)
    for source, target in ((tf_real, tapejax), (tapejax, tf_real)):
        layer = source.keras.layers.EinsumDense("abc,cde->abde", (None, 2, 3), **kwargs)
        layer(source.constant(x))
        copy = target.keras.layers.EinsumDense.from_config(layer.get_config())
        copy(target.constant(x))
        copy.set_weights(layer.get_weights())
        np.testing.assert_allclose(np.asarray(copy(target.constant(x))), np.asarray(layer(source.constant(x))),
                                   rtol=1e-5, atol=1e-6)
        assert len(copy.losses) == len(layer.losses) == 1  # the kernel's L2 penalty


def test_einsum_dense_kernel_fans_follow_the_equation():
    """Keras 3's glorot_uniform counts EinsumDense's fans over the equation's axes: limit sqrt(6 / (512 + 8*16))
    here, not the convolution rule's (TF's kernel shows the limit: it has 65536 draws)."""
    limits = []
    for tf in BOTH:
        layer = tf.keras.layers.EinsumDense("abc,cde->abde", (None, 8, 16))
        layer.build((2, 5, 512))
        limits.append(float(np.abs(layer.kernel.numpy()).max()))
    np.testing.assert_allclose(limits[1], limits[0], rtol=0.01)


def test_einsum_dense_activity_regularizer_and_integer_inputs_agree():
    x = np.arange(6).reshape(2, 3)
    results = []
    for tf in BOTH:
        layer = tf.keras.layers.EinsumDense("ab,bc->ac", 2, bias_axes="c", activity_regularizer="l2",
                                            kernel_initializer="ones", bias_initializer="ones")
        y = layer(tf.constant(x))
        results.append((y.numpy(), y.dtype.name, [float(v) for v in layer.losses]))
    assert results[1][1] == results[0][1]
    np.testing.assert_allclose(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-6)


# -- MultiHeadAttention ----------------------------------------------------------------------------------

def test_multi_head_attention_ignores_an_explicit_query_mask_as_keras():
    """Keras 3.15 takes the query's mask from the query tensor only; value_mask and key_mask still apply."""
    rng = np.random.default_rng(7)
    q, v = rng.normal(size=(2, 4, 6)).astype(np.float32), rng.normal(size=(2, 5, 6)).astype(np.float32)
    query_mask = np.array([[1, 1, 1, 0], [1, 0, 1, 1]], bool)
    value_mask = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 0]], bool)
    layers = [tf.keras.layers.MultiHeadAttention(2, 3, name="mha") for tf in BOTH]
    for tf, layer in zip(BOTH, layers):
        layer(tf.constant(q), tf.constant(v))
    layers[1].set_weights(layers[0].get_weights())
    results = []
    for tf, layer in zip(BOTH, layers):
        x, y = tf.constant(q), tf.constant(v)
        with tf.GradientTape() as tape:
            tape.watch(x)
            out = layer(x, y, query_mask=tf.constant(query_mask), value_mask=tf.constant(value_mask))
            loss = tf.reduce_sum(out ** 2)
        results.append((out.numpy(), tape.gradient(loss, x).numpy(), _mask(out)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-4, atol=1e-5)
    assert results[0][2] is None and results[1][2] is None


def test_multi_head_attention_activity_regularizer_is_the_projections_as_keras():
    q = np.random.default_rng(8).normal(size=(2, 4, 5)).astype(np.float32)
    layers = [tf.keras.layers.MultiHeadAttention(2, 3, activity_regularizer="l2", name="mha") for tf in BOTH]
    for tf, layer in zip(BOTH, layers):
        layer(tf.constant(q), tf.constant(q))
    layers[1].set_weights(layers[0].get_weights())
    losses = []
    for tf, layer in zip(BOTH, layers):
        layer(tf.constant(q), tf.constant(q))
        losses.append([float(v) for v in layer.losses])
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)


# -- AlphaDropout ----------------------------------------------------------------------------------------

def _fixed_uniform(monkeypatch, draws):
    """Both libraries' uniform draws replaced by `draws` (reshaped to the requested shape): the layers then drop
    the same units, so their outputs must agree exactly. Returns the list of shapes each side asked for."""
    from keras.src.legacy import layers as legacy  # TF 2.21's tf.keras.layers.AlphaDropout

    asked = {"tensorflow": [], "tapejax": []}

    def fake(lib):
        def uniform(shape, *args, **kwargs):
            shape = [int(d) for d in np.asarray(shape).reshape(-1)]
            asked[lib.__name__].append(shape)
            return lib.constant(draws[:int(np.prod(shape))].reshape(shape))
        return uniform

    monkeypatch.setattr(legacy.backend.random, "uniform", fake(tf_real))
    monkeypatch.setattr(tapejax.random, "uniform", fake(tapejax))
    return asked


@pytest.mark.parametrize("rate, noise_shape", [(0.3, None), (0.6, (4, 1)), (0.5, [1, 3])])
def test_alpha_dropout_is_keras_formula_given_the_same_draws(monkeypatch, rate, noise_shape):
    x0 = np.random.default_rng(3).normal(size=(4, 3)).astype(np.float32)
    draws = np.random.default_rng(4).uniform(size=64).astype(np.float32)
    asked = _fixed_uniform(monkeypatch, draws)
    results = []
    for tf in BOTH:
        layer = tf.keras.layers.AlphaDropout(rate, noise_shape=noise_shape, seed=1)
        x = tf.constant(x0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=True)
            loss = tf.reduce_sum(y * tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3)))
        results.append((y.numpy(), tape.gradient(loss, x).numpy(), layer(x).numpy(), layer(x, training=False).numpy()))
    assert asked["tapejax"] == asked["tensorflow"] and asked["tensorflow"]  # the same draws were used
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(results[1][2], x0)  # not training: the inputs


def test_alpha_dropout_statistics_seed_mask_and_config():
    x = tapejax.random.normal([200_000], seed=0)
    layer = tapejax.keras.layers.AlphaDropout(0.2)
    tapejax.random.set_seed(5)
    a = layer(x, training=True).numpy()
    tapejax.random.set_seed(5)
    b = layer(x, training=True).numpy()
    np.testing.assert_array_equal(a, b)
    # zero mean and unit variance are kept (the point of alpha dropout); about `rate` of the units dropped
    assert abs(a.mean()) < 0.01 and abs(a.var() - 1.0) < 0.02
    values, counts = np.unique(a, return_counts=True)  # the dropped units share one value
    assert 0.19 < counts.max() / a.size < 0.21 and values[counts.argmax()] < a.mean()
    outs = []
    for tf in BOTH:
        layer = tf.keras.layers.AlphaDropout(0.4, seed=2)
        embedded = tf.keras.layers.Embedding(5, 3, mask_zero=True)(tf.constant([[1, 0]]))
        outs.append((set(layer.get_config()), _mask(layer(embedded, training=True)),
                     layer.built, _error(lambda tf=tf: tf.keras.layers.AlphaDropout(1.0)(tf.ones([2]), training=True))))
    assert outs[1] == outs[0]
    again = tapejax.keras.layers.AlphaDropout.from_config(tapejax.keras.layers.AlphaDropout(0.4, seed=2).get_config())
    assert (again.rate, again.seed) == (0.4, 2)


# -- CategoryEncoding -------------------------------------------------------------------------------------

CATEGORY_INPUTS = {
    "scalar": lambda tf: tf.constant(2),
    "vector": lambda tf: tf.constant([0, 2, 2, 3]),
    "matrix": lambda tf: tf.constant([[0, 2], [2, 2]]),
    "matrix_last_1": lambda tf: tf.constant([[0], [3]]),
    "rank3": lambda tf: tf.constant([[[0, 1], [2, 2], [3, 3]]]),
    "rank3_negative": lambda tf: tf.constant([[[0, -2], [3, 3], [1, 1]]]),
    "too_large": lambda tf: tf.constant([[0, 4], [9, 1]]),
    "too_large_vector": lambda tf: tf.constant([0, 4]),
    "floats": lambda tf: tf.constant([[1.7, -0.5], [3.2, 0.0]]),
    "int64": lambda tf: tf.constant([[0, 1]], tf.int64),
    "numpy": lambda tf: np.array([[0, 1], [3, 3]]),
    "list": lambda tf: [[0, 1], [3, 2]],
}


@pytest.mark.parametrize("mode", ["multi_hot", "one_hot", "count"])
@pytest.mark.parametrize("name", list(CATEGORY_INPUTS))
def test_category_encoding_agrees(mode, name):
    results = [tf.keras.layers.CategoryEncoding(4, output_mode=mode)(CATEGORY_INPUTS[name](tf)) for tf in BOTH]
    assert results[1].dtype.name == results[0].dtype.name == "float32"
    assert tuple(results[1].shape) == tuple(results[0].shape)
    np.testing.assert_array_equal(results[1].numpy(), results[0].numpy())


@pytest.mark.parametrize("kwargs, call", [
    ({"output_mode": "count"}, {"count_weights": np.array([[0.5, 1.0, 2.0]], np.float32)}),
    ({"output_mode": "count"}, {"count_weights": np.array([[0.5, 1.0, 2.0]], np.float64)}),
    ({"output_mode": "count", "dtype": "float64"}, {}),
    ({"output_mode": "multi_hot", "dtype": "int32"}, {}),
    ({"output_mode": "count", "dtype": "int64"}, {}),
    ({"output_mode": "one_hot", "dtype": "float64"}, {}),
    ({"output_mode": "multi_hot", "sparse": True}, {}),
    ({"output_mode": "count", "sparse": True}, {}),
    ({"output_mode": "binary"}, {}),
], ids=["weights", "weights_float64", "float64", "int32", "int64", "one_hot_float64", "sparse_multi_hot",
        "sparse_count", "binary"])
def test_category_encoding_options_agree(kwargs, call):
    results = []
    for tf in BOTH:
        y = tf.keras.layers.CategoryEncoding(4, **kwargs)(tf.constant([[0, 2, 2]]), **call)
        results.append((_dense(y), y.dtype.name, type(y).__name__))
    assert results[1][1:] == results[0][1:]
    np.testing.assert_array_equal(results[1][0], results[0][0])


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.CategoryEncoding(4)(tf.constant([[0, -1]])),
    lambda tf: tf.keras.layers.CategoryEncoding(4, "count")(tf.constant([-3, 1])),
    lambda tf: tf.keras.layers.CategoryEncoding(4)(tf.constant([[0, 2]]), count_weights=tf.ones([1, 2])),
    lambda tf: tf.keras.layers.CategoryEncoding(4, output_mode="int"),
    lambda tf: tf.keras.layers.CategoryEncoding(),
    lambda tf: tf.keras.layers.CategoryEncoding(0),
], ids=["negative_multi_hot", "negative_count", "weights_not_count", "bad_mode", "no_tokens", "zero_tokens"])
def test_category_encoding_errors_agree(make):
    _same_error(make)


def test_category_encoding_one_hot_negative_is_a_zero_row_and_symbolic_shapes_agree():
    outs = [tf.keras.layers.CategoryEncoding(4, "one_hot")(tf.constant([[0, -1]])).numpy() for tf in BOTH]
    np.testing.assert_array_equal(outs[1], outs[0])
    for mode in ("multi_hot", "one_hot", "count"):
        for shape in ((3,), (1,), ()):
            found = [tuple(tf.keras.layers.CategoryEncoding(5, mode)(tf.keras.Input(shape, dtype="int32")).shape)
                     for tf in BOTH]
            assert found[1] == found[0], (mode, shape)
    keys = _config_keys(lambda tf: tf.keras.layers.CategoryEncoding(4, "count", sparse=True))
    assert keys[1] == keys[0]
    config = tapejax.keras.layers.CategoryEncoding(4, "binary", name="encode").get_config()
    assert tf_real.keras.layers.CategoryEncoding.from_config(config).output_mode == "multi_hot"
    assert tapejax.keras.layers.CategoryEncoding.from_config(config).get_config() == config


def test_category_encoding_runs_under_function():
    layer = tapejax.keras.layers.CategoryEncoding(4, "count")
    expected = tf_real.keras.layers.CategoryEncoding(4, "count")(tf_real.constant([[0, 2, 2, 7]])).numpy()
    np.testing.assert_array_equal(tapejax.function(layer)(tapejax.constant([[0, 2, 2, 7]])).numpy(), expected)


# -- Discretization --------------------------------------------------------------------------------------

SPECIALS = np.array([[-1.5, 0.0, 0.5, 1.0, 2.0, np.nan, np.inf, -np.inf]], np.float32)


@pytest.mark.parametrize("mode", ["int", "one_hot", "multi_hot", "count"])
@pytest.mark.parametrize("x", [
    SPECIALS, SPECIALS[0], np.float32(1.2), np.array([[0, 1, 2]], np.int32),
    np.array([0.6999999880, 0.69999999, 0.7, 0.70000001], np.float64), np.array([[True, False]]),
    np.random.default_rng(2).normal(size=(2, 3, 4)).astype(np.float32),
], ids=["specials", "vector", "scalar", "ints", "float64_near_boundary", "bools", "rank3"])
def test_discretization_agrees(mode, x):
    results = []
    for tf in BOTH:
        layer = tf.keras.layers.Discretization(bin_boundaries=[0.0, 0.7, 1.0, 1.5], output_mode=mode)
        y = layer(tf.constant(x))
        results.append((y.numpy(), y.dtype.name))
    assert results[1][1] == results[0][1]
    np.testing.assert_array_equal(results[1][0], results[0][0])


@pytest.mark.parametrize("kwargs", [
    {"bin_boundaries": [0.0, 0.0, 1.0]}, {"bin_boundaries": []}, {"bin_boundaries": [0.5], "dtype": "float64"},
    {"bin_boundaries": [0.0, 1.0], "output_mode": "count", "dtype": "float64"},
    {"bin_boundaries": [0.0, 1.0], "output_mode": "multi_hot", "sparse": True},
    {"bin_boundaries": [0.0, 1.0], "output_mode": "one_hot", "sparse": True},
], ids=["repeated_boundary", "no_boundaries", "float64_int", "float64_count", "sparse_multi_hot", "sparse_one_hot"])
def test_discretization_options_agree(kwargs):
    x = np.array([[-1.0, 0.0, 0.5], [2.0, 2.0, 1.0]], np.float32)
    results = []
    for tf in BOTH:
        y = tf.keras.layers.Discretization(**kwargs)(tf.constant(x))
        results.append((_dense(y), y.dtype.name, type(y).__name__))
    assert results[1][1:] == results[0][1:]
    np.testing.assert_array_equal(results[1][0], results[0][0])


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.Discretization(bin_boundaries=[1.0, 0.0])(tf.constant([0.5])),
    lambda tf: tf.keras.layers.Discretization(bin_boundaries=[0.0], output_mode="tf_idf"),
    lambda tf: tf.keras.layers.Discretization(bin_boundaries=[0.0], sparse=True),
    lambda tf: tf.keras.layers.Discretization(bin_boundaries=[0.0], num_bins=3),
    lambda tf: tf.keras.layers.Discretization(),
    lambda tf: tf.keras.layers.Discretization(num_bins=-1),
    lambda tf: tf.keras.layers.Discretization(num_bins=3)(tf.constant([1.0])),
    lambda tf: tf.keras.layers.Discretization(bin_boundaries=[0.0]).adapt(np.array([1.0])),
    lambda tf: tf.keras.layers.Discretization(bin_boundaries=[0.0], trainable=False),
], ids=["unsorted", "bad_mode", "sparse_int", "both", "neither", "negative_bins", "not_adapted",
        "adapt_with_boundaries", "unknown_argument"])
def test_discretization_errors_agree(make):
    _same_error(make)


@pytest.mark.parametrize("num_bins, epsilon, data", [
    (4, 0.01, lambda tf: np.random.default_rng(0).normal(size=(1000, 3)).astype(np.float32)),
    (5, 0.01, lambda tf: tf.data.Dataset.from_tensor_slices(
        np.random.default_rng(0).normal(size=(1000, 3)).astype(np.float32)).batch(64)),
    (3, 0.01, lambda tf: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]),
    (3, 0.1, lambda tf: np.random.default_rng(1).exponential(size=(357,)).astype(np.float32)),
    (7, 0.05, lambda tf: [np.random.default_rng(i).uniform(size=(50, 2)) for i in range(6)]),
    (2, 0.01, lambda tf: np.repeat(np.arange(5.0), [1, 40, 3, 3, 200])),
], ids=["array", "dataset", "list_of_numbers", "coarse_epsilon", "list_of_batches", "ties"])
def test_discretization_adapt_agrees(num_bins, epsilon, data):
    layers = []
    for tf in BOTH:
        layer = tf.keras.layers.Discretization(num_bins=num_bins, epsilon=epsilon)
        layer.adapt(data(tf))
        layers.append(layer)
    np.testing.assert_allclose(layers[1].bin_boundaries, layers[0].bin_boundaries, rtol=1e-6)
    configs = [layer.get_config() for layer in layers]
    assert {k: v for k, v in configs[1].items() if k not in ("name", "bin_boundaries", "dtype")} == \
        {k: v for k, v in configs[0].items() if k not in ("name", "bin_boundaries", "dtype")}
    assert set(configs[1]) == set(configs[0])
    for tf, config in zip((tapejax, tf_real), configs):  # each reads the other's adapted configuration
        rebuilt = tf.keras.layers.Discretization.from_config(config)
        np.testing.assert_allclose(rebuilt.bin_boundaries, layers[0].bin_boundaries, rtol=1e-6)


def test_discretization_symbolic_shapes_and_dtypes_agree():
    for mode in ("int", "one_hot", "multi_hot", "count"):
        for shape in ((3,), (3, 4), (1,)):
            found = []
            for tf in BOTH:
                y = tf.keras.layers.Discretization(bin_boundaries=[0.0], output_mode=mode)(tf.keras.Input(shape))
                found.append((tuple(y.shape), tf.as_dtype(y.dtype).name))
            assert found[1] == found[0], (mode, shape)


# -- serialization: functional models through .keras archives, both ways -----------------------------------

def _dense_model(tf):
    inputs = tf.keras.Input((6,))
    x = tf.keras.layers.EinsumDense("ab,bc->ac", 4, bias_axes="c", activation="tanh")(inputs)
    x = tf.keras.layers.UnitNormalization()(x)
    x = tf.keras.layers.Identity()(x)
    x = tf.keras.layers.AlphaDropout(0.1)(x)
    x = tf.keras.layers.EinsumDense("ab,bcd->acd", (2, 3), bias_axes="cd")(x)
    return tf.keras.Model(inputs, x), np.random.default_rng(9).normal(size=(3, 6)).astype(np.float32)


def _categorical_model(tf):
    inputs = tf.keras.Input((4,))
    ids = tf.keras.layers.Discretization(bin_boundaries=[-0.5, 0.0, 0.5])(inputs)
    counts = tf.keras.layers.CategoryEncoding(4, output_mode="count")(ids)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(2)(counts)), \
        np.random.default_rng(10).normal(size=(3, 4)).astype(np.float32)


@pytest.mark.parametrize("build", [_dense_model, _categorical_model], ids=["dense", "categorical"])
def test_keras_archive_both_ways(tmp_path, build):
    for source, target in ((tf_real, tapejax), (tapejax, tf_real)):
        model, x = build(source)
        model.save(tmp_path / "m.keras")
        loaded = target.keras.models.load_model(tmp_path / "m.keras")
        assert [type(layer).__name__ for layer in loaded.layers] == [type(layer).__name__ for layer in model.layers]
        np.testing.assert_allclose(np.asarray(loaded(x)), np.asarray(model(x)), rtol=1e-5, atol=1e-6)
        rebuilt = target.keras.models.model_from_json(model.to_json())
        rebuilt.set_weights(model.get_weights())
        np.testing.assert_allclose(np.asarray(rebuilt(x)), np.asarray(model(x)), rtol=1e-5, atol=1e-6)


def test_checkpoints_of_einsum_dense_and_multi_head_attention_load_both_ways(tmp_path):
    """Keras keeps EinsumDense's kernel as `_kernel`: a tf.train.Checkpoint written by either library restores
    into the other's layers (MultiHeadAttention's projections included)."""
    q = np.random.default_rng(11).normal(size=(2, 4, 6)).astype(np.float32)
    for source, target in ((tf_real, tapejax), (tapejax, tf_real)):
        saved = [source.keras.layers.MultiHeadAttention(2, 3), source.keras.layers.EinsumDense("abc,cd->abd", (None, 4),
                                                                                               bias_axes="d")]
        restored = [target.keras.layers.MultiHeadAttention(2, 3), target.keras.layers.EinsumDense(
            "abc,cd->abd", (None, 4), bias_axes="d")]
        for layers, tf in ((saved, source), (restored, target)):
            layers[0](tf.constant(q), tf.constant(q)), layers[1](tf.constant(q))
        path = source.train.Checkpoint(mha=saved[0], dense=saved[1]).save(str(tmp_path / source.__name__))
        target.train.Checkpoint(mha=restored[0], dense=restored[1]).restore(path)
        for a, b in zip(saved[0].weights + saved[1].weights, restored[0].weights + restored[1].weights):
            np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


_WORDS = [["A"], ["B"], ["C"], ["D"], ["E"], [""], ["caf\u00e9"], ["a much longer string than sixteen bytes"]]


@pytest.mark.parametrize("kwargs, inputs", [
    ({"num_bins": 3}, _WORDS),
    ({"num_bins": 1000}, _WORDS),
    ({"num_bins": 3, "mask_value": ""}, _WORDS),
    ({"num_bins": 3, "salt": 133}, _WORDS),
    ({"num_bins": 3, "salt": [133, 137]}, _WORDS),
    ({"num_bins": 5}, np.array([[1], [22], [-3], [1000000]], np.int64)),
    ({"num_bins": 5}, np.array([[1.7], [-3.2]], np.float32)),
    ({"num_bins": 5, "mask_value": 0}, np.array([[0, 1], [2, 0]], np.int32)),
    ({"num_bins": 4, "output_mode": "one_hot"}, [["a"], ["b"], ["c"]]),
    ({"num_bins": 4, "output_mode": "multi_hot"}, [["a", "b", "a"], ["c", "d", "e"]]),
    ({"num_bins": 4, "output_mode": "count", "salt": 9}, [["a", "b", "a"], ["c", "d", "e"]]),
    ({"num_bins": 3, "dtype": "int32"}, _WORDS),
], ids=lambda v: str(v)[:40])
def test_hashing_agrees_with_keras(kwargs, inputs):
    results = []
    for tf in (tf_real, tapejax):
        y = tf.keras.layers.Hashing(**kwargs)(tf.constant(inputs))
        results.append((y.dtype.name, y.numpy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_array_equal(results[1][1], results[0][1])


@pytest.mark.parametrize("kwargs", [{"num_bins": 0}, {"num_bins": 3, "salt": "x"}, {"num_bins": 3, "output_mode": "x"},
                                    {"num_bins": 3, "sparse": True}, {"num_bins": 3, "dtype": "float32"}])
def test_hashing_rejects_what_keras_rejects(kwargs):
    with pytest.raises(ValueError):
        tf_real.keras.layers.Hashing(**kwargs)
    with pytest.raises(ValueError):
        tapejax.keras.layers.Hashing(**kwargs)
