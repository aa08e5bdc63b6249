"""SimpleRNN, GRU, LSTM, RNN(cell), Bidirectional and TimeDistributed against TF 2.21's Keras 3 from the same
weights: outputs, states, gradients, masks (Embedding(mask_zero=True)), go_backwards, inside tf.function."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

RNNS = [
    ("LSTM", {"units": 3}), ("LSTM", {"units": 3, "return_sequences": True, "return_state": True}),
    ("LSTM", {"units": 2, "go_backwards": True, "return_sequences": True}),
    ("LSTM", {"units": 2, "unit_forget_bias": False, "activation": "relu"}),
    ("GRU", {"units": 3}), ("GRU", {"units": 3, "return_sequences": True, "return_state": True}),
    ("GRU", {"units": 3, "reset_after": False, "return_sequences": True}),
    ("GRU", {"units": 2, "go_backwards": True}), ("SimpleRNN", {"units": 3, "return_sequences": True}),
    ("SimpleRNN", {"units": 3, "use_bias": False, "return_state": True}),
]


def _flat(y):
    return [t.numpy() for t in (y if isinstance(y, list | tuple) else [y])]


def _run(tf, layer, x0, mask=None):
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x) if mask is None else layer(x, mask=tf.constant(mask))
        outs = y if isinstance(y, list | tuple) else [y]
        loss = sum(tf.reduce_sum(o * tf.cos(o)) for o in outs)
    grads = tape.gradient(loss, [x] + list(layer.trainable_weights))
    return _flat(y) + [g.numpy() for g in grads]


@pytest.mark.parametrize("masked", [False, True], ids=["plain", "masked"])
@pytest.mark.parametrize("name, kwargs", RNNS, ids=lambda v: str(v))
def test_recurrent_layer_agrees_with_keras(name, kwargs, masked):
    rng = np.random.default_rng(21)
    x0 = rng.normal(size=(3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool) if masked else None
    theirs, ours = (getattr(tf.keras.layers, name)(name="rnn_probe", **kwargs) for tf in (tf_real, tapejax))
    theirs(x0), ours(x0)
    assert [(w.name, w.path) for w in ours.weights] == [(w.name, w.path) for w in theirs.weights]
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in theirs.get_weights()]
    theirs.set_weights(weights), ours.set_weights(weights)
    expected, got = _run(tf_real, theirs, x0, mask), _run(tapejax, ours, x0, mask)
    assert [g.shape for g in got] == [e.shape for e in expected]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    compiled = tapejax.function(lambda x: ours(x))(tapejax.constant(x0))
    np.testing.assert_allclose(_flat(compiled)[0], _flat(theirs(x0))[0], rtol=1e-4, atol=1e-5)


def test_embedding_mask_reaches_the_lstm_in_a_model():
    ids = np.array([[3, 1, 2, 0, 0], [4, 0, 0, 0, 0]], np.int32)
    results, models = [], {}
    for tf in (tf_real, tapejax):
        layers = tf.keras.layers
        models[tf] = tf.keras.Sequential([tf.keras.Input(shape=(5,), dtype="int32"),
                                          layers.Embedding(6, 4, mask_zero=True),
                                          layers.LSTM(3, return_sequences=True), layers.GlobalAveragePooling1D(),
                                          layers.Dense(2)])
    models[tapejax].set_weights(models[tf_real].get_weights())
    for tf in (tf_real, tapejax):
        embedded = models[tf].layers[0](tf.constant(ids))
        mask = getattr(embedded, "_keras_mask", None) if tf is tf_real else tapejax.keras.masks.get_mask(embedded)
        results.append((models[tf](tf.constant(ids)).numpy(), np.asarray(mask)))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "ave", "mul", None])
def test_bidirectional_agrees_with_keras(merge_mode):
    rng = np.random.default_rng(22)
    x0 = rng.normal(size=(2, 4, 3)).astype(np.float32)
    layers = [tf.keras.layers.Bidirectional(tf.keras.layers.GRU(2, return_sequences=True, name="inner"),
                                            merge_mode=merge_mode, name="both_ways") for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(x0)
    assert [w.path for w in layers[1].weights] == [w.path for w in layers[0].weights]
    layers[1].set_weights(layers[0].get_weights())
    for got, expected in zip(_flat(layers[1](x0)), _flat(layers[0](x0))):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 1, 1, 0]], bool)


@pytest.mark.parametrize("inner", ["LSTM", "GRU", "SimpleRNN"])
@pytest.mark.parametrize("merge_mode", ["concat", "sum", None])
def test_a_masked_bidirectional_sequence_is_zeros_at_masked_steps_as_in_keras(inner, merge_mode):
    # Keras sets zero_output_for_mask = return_sequences on both halves: the forward half outputs zeros at a
    # masked step instead of repeating its last output.
    rng = np.random.default_rng(24)
    x0 = rng.normal(size=(3, 5, 4)).astype(np.float32)
    layers = [tf.keras.layers.Bidirectional(getattr(tf.keras.layers, inner)(3, return_sequences=True),
                                            merge_mode=merge_mode) for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(x0)
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in layers[0].get_weights()]
    for layer in layers:
        layer.set_weights(weights)
    expected, got = _run(tf_real, layers[0], x0, MASK), _run(tapejax, layers[1], x0, MASK)
    assert layers[1].forward_layer.zero_output_for_mask and layers[1].backward_layer.zero_output_for_mask
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "SimpleRNN"])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_zero_output_for_mask_agrees_with_keras(name, return_sequences):
    rng = np.random.default_rng(25)
    x0 = rng.normal(size=(3, 5, 4)).astype(np.float32)
    layers = [getattr(tf.keras.layers, name)(3, return_sequences=return_sequences, return_state=True,
                                             zero_output_for_mask=True) for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(x0)
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in layers[0].get_weights()]
    for layer in layers:
        layer.set_weights(weights)
    mask = MASK.copy()
    mask[2, -1] = False  # a last step masked: the last output
    expected, got = _run(tf_real, layers[0], x0, mask), _run(tapejax, layers[1], x0, mask)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda tf: tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2, return_sequences=True)),
    lambda tf: tf.keras.layers.TimeDistributed(tf.keras.layers.Dense(2)),
], ids=["Bidirectional", "TimeDistributed"])
def test_building_a_wrapper_builds_the_wrapped_layers_weights_as_keras(make):
    # Code that builds, then loads weights before the first call needs the weights and their paths.
    paths = []
    for tf in (tf_real, tapejax):
        tf.keras.backend.clear_session()
        layer = make(tf)
        layer.build((2, 5, 3))
        paths.append([(w.path, tuple(w.shape)) for w in layer.weights])
        layer(np.ones((2, 5, 3), np.float32))
        assert [(w.path, tuple(w.shape)) for w in layer.weights] == paths[-1]
    assert paths[1] == paths[0] and paths[0]


def test_bidirectional_of_a_built_layer_makes_new_weights_as_keras():
    x0 = np.random.default_rng(26).normal(size=(2, 5, 3)).astype(np.float32)
    gru = tapejax.keras.layers.GRU(2, return_sequences=True, name="forward_gru")
    gru(x0)
    both = tapejax.keras.layers.Bidirectional(gru)
    assert both(x0).shape == (2, 5, 4)
    assert both.forward_layer.name == "forward_gru" and both.backward_layer.name == "backward_forward_gru"
    assert not any(w is v for w in both.weights for v in gru.weights)
    assert not gru.zero_output_for_mask  # the given layer is left as it was


class _Scaled(tapejax.keras.layers.Layer):
    """A cell of the user's own: h = tanh(x @ w) + 0.5 * h."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = self.state_size = self.output_size = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), name="w")

    def call(self, inputs, states):
        h = tapejax.tanh(tapejax.matmul(inputs, self.w)) + 0.5 * states[0]
        return h, [h]


class _ScaledTF(tf_real.keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = self.state_size = self.output_size = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), name="w")

    def call(self, inputs, states):
        h = tf_real.tanh(tf_real.matmul(inputs, self.w)) + 0.5 * states[0]
        return h, [h]


def test_a_cell_of_ones_own_reads_its_one_state_from_a_list_as_in_keras():
    # Keras's guide cell (`prev_output = states[0]`): given the state tensor itself, states[0] is its first row.
    rng = np.random.default_rng(28)
    x0 = rng.normal(size=(3, 5, 4)).astype(np.float32)
    layers = [tf.keras.layers.RNN(own(4, name="own"), return_sequences=True)
              for tf, own in ((tf_real, _ScaledTF), (tapejax, _Scaled))]
    layers[0](x0), layers[1](x0)
    layers[1].set_weights(layers[0].get_weights())
    for got, expected in zip(_run(tapejax, layers[1], x0, MASK), _run(tf_real, layers[0], x0, MASK)):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("return_sequences", [True, False])
@pytest.mark.parametrize("own_cell", [False, True], ids=["builtin_cells", "with_own_cell"])
def test_stacked_cells_agree_with_keras(return_sequences, own_cell):
    rng = np.random.default_rng(27)
    x0 = rng.normal(size=(3, 5, 4)).astype(np.float32)
    initial = [rng.normal(size=(3, 3)).astype(np.float32) for _ in range(2)] + [
        rng.normal(size=(3, 2)).astype(np.float32)]
    layers = []
    for tf, own in ((tf_real, _ScaledTF), (tapejax, _Scaled)):
        tf.keras.backend.clear_session()
        cells = [tf.keras.layers.LSTMCell(3), tf.keras.layers.GRUCell(2)] + ([own(4, name="own")] if own_cell else [])
        layers.append(tf.keras.layers.RNN(cells, return_sequences=return_sequences, return_state=True))
        layers[-1].build((3, 5, 4))
    assert [(w.path, tuple(w.shape)) for w in layers[1].weights] == [(w.path, tuple(w.shape)) for w in
                                                                      layers[0].weights]
    weights = [rng.normal(scale=0.5, size=w.shape).astype(np.float32) for w in layers[0].get_weights()]
    results = []
    for layer, tf in zip(layers, (tf_real, tapejax)):
        layer.set_weights(weights)
        x = tf.constant(x0)
        state = [[tf.constant(initial[0]), tf.constant(initial[1])], [tf.constant(initial[2])]]
        if own_cell:
            state.append([tf.zeros([3, 4])])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, initial_state=state, mask=tf.constant(MASK))
            loss = sum(tf.reduce_sum(t * tf.cos(t)) for t in tf.nest.flatten(y))
        assert [len(s) for s in y[1:]] == [2, 1] + ([1] if own_cell else [])  # one list of states per cell
        results.append([t.numpy() for t in tf.nest.flatten(y)] +
                       [g.numpy() for g in tape.gradient(loss, [x] + layer.trainable_weights)])
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    rebuilt = tapejax.keras.layers.RNN.from_config(layers[1].get_config()) if not own_cell else None
    assert rebuilt is None or [type(c).__name__ for c in rebuilt.cell.cells] == ["LSTMCell", "GRUCell"]


def test_time_distributed_agrees_with_keras():
    x0 = np.random.default_rng(23).normal(size=(2, 3, 5, 4, 2)).astype(np.float32)
    layers = [tf.keras.layers.TimeDistributed(tf.keras.layers.Conv2D(3, 2, name="conv"), name="steps")
              for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(x0)
    assert [w.path for w in layers[1].weights] == [w.path for w in layers[0].weights]
    layers[1].set_weights(layers[0].get_weights())
    np.testing.assert_allclose(layers[1](x0).numpy(), layers[0](x0).numpy(), rtol=1e-5, atol=1e-5)


def test_stateful_lstm_carries_its_states_like_keras():
    x0 = np.random.default_rng(24).normal(size=(2, 3, 4)).astype(np.float32)
    layers = [tf.keras.layers.LSTM(2, stateful=True) for tf in (tf_real, tapejax)]
    for layer in layers:
        layer(x0)
    layers[1].set_weights(layers[0].get_weights())
    for layer in layers:
        layer.reset_states()
    outs = [[layer(x0).numpy() for _ in range(2)] for layer in layers]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)
    assert not np.allclose(outs[1][0], outs[1][1])
