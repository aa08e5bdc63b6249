"""Shape inference never compiles (issue 22): a symbolic Keras functional build and deferred ops infer shapes with
`jax.eval_shape`, and values made from numpy (a variable's initial value, a Python scalar) move to the device
without a conversion executable. Counts of XLA compiles, never timings."""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from jax._src import compiler
from tapejax._src import checking
from tapejax.ops import random as random_ops

keras = tf.keras


@contextlib.contextmanager
def counting_compiles():
    """Counts the executables JAX builds: XLA compiles, and loads from the persistent compilation cache the suite
    runs with (tests/conftest.py), which stand for one."""
    compiled = []
    original = compiler.compile_or_get_cached

    def counting(*args, **kwargs):
        compiled.append(1)
        return original(*args, **kwargs)

    compiler.compile_or_get_cached = counting
    try:
        yield compiled
    finally:
        compiler.compile_or_get_cached = original


@pytest.fixture(autouse=True)
def unchecked(monkeypatch):
    """The checking mode recomputes each cached shape the plain way, compiling: counts are taken without it."""
    monkeypatch.setattr(checking.FLAG, "on", False)


def _host_values(shape, dtype=None):
    return np.full(shape, 0.01, np.float32)


def _functional(widths, **initializers):
    inputs = keras.Input((16,))
    h = inputs
    for width in widths:
        h = keras.layers.Dense(width, activation="relu", **initializers)(h)
    return keras.Model(inputs, h)


def test_a_ten_layer_functional_build_compiles_nothing():
    widths = [101 + i for i in range(10)]  # shapes no other test makes
    with counting_compiles() as compiled:
        model = _functional(widths, kernel_initializer=_host_values, bias_initializer=_host_values)
    assert model.output_shape == (None, 110)
    assert len(compiled) == 0


def test_random_initial_values_compile_once_per_shape_and_shape_inference_never(monkeypatch):
    # Initializers draw 2**16 values for every weight this small, and random.py switches that draw to JAX's
    # compiled sampler once the suite has drawn it often enough (ski rental): counts start afresh here.
    monkeypatch.setattr(random_ops, "_UNIFORM", {})
    widths = [201 + i % 2 for i in range(10)]
    _functional(widths)  # the initial values' random kernels, per weight shape
    with counting_compiles() as compiled:
        model = _functional(widths)
    assert model.output_shape == (None, 202)
    assert len(compiled) == 0


def test_deferred_ops_of_a_new_shape_compile_nothing_until_read():
    x = tf.constant(np.ones((3, 307), np.float32))
    with counting_compiles() as compiled:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.tanh(x * 2.5) + 1.25, axis=1)
        assert y.shape == (3,) and len(compiled) == 0
    np.testing.assert_allclose(y.numpy(), np.full(3, 307 * (np.tanh(2.5) + 1.25), np.float32), rtol=1e-5)


def test_a_variable_made_and_set_from_numpy_compiles_nothing():
    with counting_compiles() as compiled:
        v = tf.Variable(np.arange(12.0, dtype=np.float32).reshape(3, 5 - 1) + 0.5)
        assert len(compiled) == 0
        v.assign(np.full((3, 4), 2.25, np.float32))  # set_weights from numpy (ddpg's)
        assert len(compiled) == 0
    assert v.dtype == tf.float32 and v.numpy()[2, 3] == 2.25


def test_a_symbolic_conv2d_transpose_stays_abstract():
    # Its implementation slices with tf.range(n): Python bounds read on the host keep the call abstract (a bound
    # traced inside jax.eval_shape made it fall back to running every op on zeros, compiling each).
    inputs = keras.Input((7, 5, 3))
    layer = keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same",
                                         kernel_initializer=_host_values, bias_initializer=_host_values)
    with counting_compiles() as compiled:
        out = layer(inputs)
    assert out.shape == (None, 14, 10, 4)
    assert len(compiled) == 0


def test_a_gradient_inside_a_tf_function_trace_runs_nothing_eagerly():
    # The tf.function trace folds constants (ops on concrete values run at trace time); the gradient's backward
    # pass, from its constant ones seed through mean's division and a scaling, must be staged instead: a trace of a
    # new shape compiles its own executable and nothing else (a first one warms JAX's one-off conversions).
    def make(shape):
        v = tf.Variable(np.full(shape, 0.5, np.float32))

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = -tf.reduce_mean(tf.square(v) * 3.0) / 7.0
            return tape.gradient(loss, v)

        return step

    make((2, 11)).get_concrete_function()
    step = make((3, 13))
    with counting_compiles() as compiled:
        step.get_concrete_function()
    assert len(compiled) == 1
    np.testing.assert_allclose(step().numpy(), np.full((3, 13), -2 * 0.5 * 3.0 / 7.0 / 39, np.float32), rtol=1e-6)


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop", "Adagrad", "AdamW", "Nadam"])
def test_optimizer_slots_of_a_new_shape_compile_nothing(name):
    # optax's init only fills (zeros, Adagrad's 0.1) and computes one dead value: it runs on the host.
    optimizer = getattr(keras.optimizers, name)(learning_rate=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
    warm = tf.Variable(np.ones((2, 3), np.float32))
    optimizer.apply_gradients([(tf.ones_like(warm), warm)])
    shape = (5, 411 + len(name))  # a shape no other test makes: a compile of its zeros would be a fresh one
    v = tf.Variable(np.ones(shape, np.float32))
    with counting_compiles() as compiled:
        optimizer.build([warm, v])
    assert len(compiled) == 0
    expected = 0.1 if name == "Adagrad" else 0.0  # Keras's initial_accumulator_value
    slots = [s for s in optimizer.variables if tuple(s.shape) == shape]
    assert slots and all(np.all(s.numpy() == expected) for s in slots)


def test_an_eager_conv2d_transpose_call_is_one_executable():
    # The transposed convolution is one op: an eager call of a new shape compiles it once (and the bias add),
    # not each step of its formula (expand, pad, reshape, slice, pad, flip, transpose, convolve: 9 compiles).
    layer = keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same", use_bias=False,
                                         kernel_initializer=_host_values)
    x = tf.constant(np.ones((2, 9, 7, 5), np.float32))
    layer.build(x.shape)
    with counting_compiles() as compiled:
        y = layer(x)
    assert y.shape == (2, 18, 14, 3)
    assert len(compiled) == 1


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_an_integer_range_compiles_nothing(dtype, monkeypatch):
    # Positions in a Keras call (`tf.range(maxlen)`): jnp.arange's eager ops compiled four executables per dtype and
    # length; an integer range is exact in numpy.
    monkeypatch.setattr(checking.FLAG, "on", False)
    tf.range(2, dtype=dtype)  # whatever a first array of this dtype costs, once per process
    with counting_compiles() as compiled:
        got = tf.range(3, 1003, 7, dtype=dtype)
    assert len(compiled) == 0
    assert got.dtype == dtype and got._value.dtype == dtype.as_numpy_dtype and not got._value.weak_type
    np.testing.assert_array_equal(got.numpy(), np.arange(3, 1003, 7))


def test_numpy_arrays_of_new_shapes_become_tensors_without_a_compile_or_an_alias(monkeypatch):
    # jnp.asarray compiles a copy (JAX's jit(stage)) for each new shape: convert_to_tensor of an environment's
    # state (deep_q_network_breakout) and tf.data's elements met one per shape.
    monkeypatch.setattr(checking.FLAG, "on", False)
    tf.convert_to_tensor(np.ones((1, 1), np.float32))  # whatever a first transfer costs, once per process
    state = np.arange(6 * 35, dtype=np.float32).reshape(6, 35)  # 64-byte aligned: XLA would alias it
    with counting_compiles() as compiled:
        converted = tf.convert_to_tensor(state)
        elements = list(tf.data.Dataset.from_tensor_slices(np.ones((5, 9, 2), np.float32)).batch(3))
    assert len(compiled) == 0
    assert [tuple(e.shape) for e in elements] == [(3, 9, 2), (2, 9, 2)]
    state[0, 0] = 99.0  # TF copies a numpy value into a tensor
    assert converted.numpy()[0, 0] == 0.0 and converted.dtype == tf.float32


@pytest.mark.parametrize("index", [lambda x, i: x[i], lambda x, i: x[:, i], lambda x, i: x[i:i + 3],
                                   lambda x, i: x[..., i - 6, 1:]],
                         ids=["row", "column", "window", "negative and slice"])
def test_an_eager_loop_over_positions_is_one_executable(index):
    # A Python loop over a tensor's rows (an eager tf.scan, a per-example loop): each position compiled its own
    # slice (30 ms each on CPU); the positions are now arguments of one executable.
    x = tf.constant(np.arange(6 * 6 * 5, dtype=np.float32).reshape(6, 6, 5))
    index(x, 0)
    with counting_compiles() as compiled:
        got = [index(x, i).numpy() for i in range(1, 4)]
    assert len(compiled) == 0
    for i, value in enumerate(got, start=1):
        np.testing.assert_array_equal(value, index(x.numpy(), i))


def test_fit_builds_the_model_without_running_it():
    # Keras builds the model and the compiled loss and metrics from the outputs' shapes (its symbolic build: the
    # layers' calls run in a graph); an eager forward pass on the first batch compiled each op for the batch's
    # shapes, only for their shapes.
    class Positions(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.eagerly = []

        def call(self, x):
            self.eagerly.append(tf.executing_eagerly())
            return x + tf.cast(tf.range(tf.shape(x)[-1]), x.dtype)  # a size from tf.shape, as in keras-io's models

    positions = Positions()
    model = keras.Sequential([positions, keras.layers.Dense(3, kernel_initializer=_host_values)])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    data = (tf.constant(np.ones((4, 6), np.float32)), tf.constant(np.arange(4) % 3))
    model._build_for_data(data, training=True)
    assert positions.eagerly == [False]
    assert model.built and model.layers[1].kernel.shape == (6, 3)
    assert isinstance(model._compile_metrics.metrics[0], keras.metrics.SparseCategoricalAccuracy)
    history = model.fit(*data, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0]) and "accuracy" in history.history


def test_fit_builds_a_text_recurrent_model_without_compiling_its_weights_ops():
    # The build folds constants (a size from tf.shape), and a weight read in it was a constant too: a text model's
    # ids come from its string layers as values, so every op of the LSTM on ids and weights alone ran eagerly, one
    # compile per op and shape (text_classification_rnn: 58 compiles, 1.5 s a model). Weights now read as traced
    # stand-ins; what is left is the ids' own ops (the mask, the time-major transpose, the reversal).
    texts = np.array(["the cat sat on the mat", "a dog ran far away today", "birds fly", "the end of a story told"])
    encoder = keras.layers.TextVectorization(max_tokens=30)
    encoder.adapt(texts)
    model = keras.Sequential([encoder, keras.layers.Embedding(30, 7, mask_zero=True),
                              keras.layers.Bidirectional(keras.layers.LSTM(9)), keras.layers.Dense(1)])
    model(tf.constant(["a cat"]))  # built, as the tutorial builds it before compile
    model.compile(optimizer="adam", loss="mse")
    data = (tf.constant(texts), tf.constant(np.ones((4, 1), np.float32)))
    with counting_compiles() as compiled:
        model._build_for_data(data, training=True)
    assert len(compiled) <= 12  # 35 when the weights were folded
    assert model._compile_loss._losses is not None
    history = model.fit(*data, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


def _recording_program_sizes(monkeypatch) -> list[int]:
    """The text sizes of the programs lowered from now on (a literal of a large constant makes one large)."""
    sizes = []
    original = jax.stages.Lowered.compile

    def recording(self, *args, **kwargs):
        sizes.append(len(self.as_text()))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(jax.stages.Lowered, "compile", recording)
    return sizes


def test_a_large_weight_built_in_a_functional_build_lowers_no_literal(monkeypatch):
    # The probe that builds a layer runs under eager constant folding; a weight's sampler lowered there (float64,
    # or more draws than random_host.py takes) wrote its counter iota into the program as a literal (16 MB of text
    # for dcgan's Dense kernel, 2**21 draws).
    from tapejax.ops import random as random_ops

    sizes = _recording_program_sizes(monkeypatch)
    random_ops._UNIFORM.clear()  # the sampler is lowered on a shape's first draw in this process
    model = keras.Sequential([keras.Input((100,)), keras.layers.Dense(3 * 5 * 1031, dtype="float64")])
    assert model.layers[0].kernel.shape == (100, 3 * 5 * 1031) and model.layers[0].kernel.dtype == tf.float64
    assert sizes and max(sizes) < 100_000


def test_a_padded_max_pool_gradient_writes_no_mask_literal(monkeypatch):
    # MaxPoolGrad's masks of the positions that padding covers had the output's full shape, and each was written
    # into the step's program as a literal (knowledge_distillation: 12 of 0.4 MB).
    x = tf.constant(np.linspace(-1, 1, 32 * 27 * 27 * 16, dtype=np.float32).reshape(32, 27, 27, 16))
    pool = keras.layers.MaxPooling2D(2, strides=2, padding="same")

    @tf.function
    def gradient(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(pool(x) ** 2)
        return tape.gradient(loss, x)

    sizes = _recording_program_sizes(monkeypatch)
    got = gradient(x)
    assert sizes and max(sizes) < 50_000
    expected = jax.grad(lambda a: jnp.sum(jax.lax.reduce_window(
        jnp.pad(a, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-jnp.inf), -jnp.inf, jax.lax.max,
        (1, 2, 2, 1), (1, 2, 2, 1), "VALID") ** 2))(x.numpy())
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_a_padded_max_pool_gradient_traces_once_for_a_relaxed_batch():
    # The masks took an arange of every axis, the batch too: a symbolic (relaxed) batch size failed the trace, and
    # the step was traced again per size, running its Python twice where TF traces once.
    pool = keras.layers.MaxPooling2D(3, strides=2, padding="same")
    traces = []

    @tf.function(reduce_retracing=True)
    def gradient(x):
        traces.append(x.shape[0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(pool(x) ** 2)
        return tape.gradient(loss, x)

    for batch in (4, 3, 2):
        x = np.linspace(-1, 1, batch * 7 * 7 * 2, dtype=np.float32).reshape(batch, 7, 7, 2)
        got = gradient(tf.constant(x))
        expected = jax.grad(lambda a: jnp.sum(jax.lax.reduce_window(
            a, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") ** 2))(x)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert traces == [4, None]


def test_eager_zeros_and_ones_of_new_shapes_compile_nothing():
    x = tf.constant(np.arange(6, dtype=np.float64).reshape(2, 3))
    with counting_compiles() as compiled:
        made = [tf.zeros([3, 7]), tf.ones([5], tf.int64), tf.zeros([], tf.complex64), tf.ones([2, 1], tf.bfloat16),
                tf.zeros_like(x), tf.ones_like(x, dtype=tf.bool)]
    assert compiled == []
    expected = [np.zeros((3, 7), np.float32), np.ones(5, np.int64), np.zeros((), np.complex64),
                np.ones((2, 1), tf.bfloat16.as_numpy_dtype), np.zeros((2, 3)), np.ones((2, 3), bool)]
    for got, want in zip(made, expected):
        assert got.dtype.as_numpy_dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.numpy(), want)


def test_zeros_of_a_size_known_only_when_called_are_staged():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x + tf.ones(tf.shape(x)) + tf.zeros_like(x)

    for n in (2, 5):
        np.testing.assert_array_equal(f(tf.constant(np.arange(n, dtype=np.float32))).numpy(), np.arange(n) + 1.0)


def test_a_functional_call_that_slices_a_constant_by_its_input_shape_stays_abstract():
    """VAE's sampling layer (keras-io's vae): `tf.slice(EPSILON, [0, 0], [batch, dim])` with sizes from `tf.shape`
    needs numbers, which the abstract probe has once constants are folded; on zeros, every op of the call compiled."""
    epsilon = tf.constant(np.linspace(-1, 1, 64 * 2, dtype=np.float32).reshape(64, 2))

    class Sampling(keras.layers.Layer):
        def call(self, inputs):
            z_mean, z_log_var = inputs
            batch, dim = tf.shape(z_mean)[0], tf.shape(z_mean)[1]
            return z_mean + tf.exp(0.5 * z_log_var) * tf.slice(epsilon, [0, 0], [batch, dim])

    z_mean, z_log_var = keras.Input((2,)), keras.Input((2,))
    with counting_compiles() as compiled:
        z = Sampling()([z_mean, z_log_var])
    assert z.shape == (None, 2)
    # the folded sizes (their scalar conversions and getitem) and the constant's slice per probe size; on zeros, 12:
    # the multiplies, exp and add of both probe sizes too
    assert len(compiled) <= 5
    model = keras.Model([z_mean, z_log_var], z)
    m, v = np.ones((3, 2), np.float32), np.zeros((3, 2), np.float32)
    np.testing.assert_allclose(model([m, v]).numpy(), m + epsilon.numpy()[:3], rtol=1e-6)
