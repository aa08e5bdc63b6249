"""tf.keras.Model (subclassed and functional), Sequential, Input and summary(): building, tracking, training."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras.layers import _snake_case
from tapejax.keras.models import _column_widths, _wrap

L = tf.keras.layers
# The tests share shapes (3 features -> 4 hidden -> 2 outputs, batches of 2, which the build probes also use), so
# that the ops each compiles are compiled once.


class _Regressor(tf.keras.Model):
    """Attributes assigned out of alphabetical order, a list of layers, and a layer that takes `training`."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.z_hidden = L.Dense(4, activation="tanh", name="z_hidden")
        self.blocks = [L.Dense(4, activation="tanh", name="block_0"), L.Dropout(0.5, name="drop")]
        self.a_out = L.Dense(2, name="a_out")

    def call(self, inputs, training=None):
        x = self.z_hidden(inputs)
        for block in self.blocks:
            x = block(x)  # no training=: Dropout gets the model call's value, as in Keras
        return self.a_out(x)


def _data():
    x = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], np.float32)
    return x, (x @ np.array([[1.0, 0.0], [-2.0, 1.0], [0.5, 0.2]], np.float32) + 0.3).astype(np.float32)


def test_subclassed_model_tracks_layers_in_assignment_order_and_trains_with_a_tape():
    model = _Regressor(name="regressor")
    assert model.name == "regressor" and not model.built and model.weights == []
    assert [layer.name for layer in model.layers] == ["z_hidden", "block_0", "drop", "a_out"]
    x, y = _data()
    tf.random.set_seed(0)
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    losses = []
    for _ in range(20):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=False) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        losses.append(float(loss))
    assert model.built and losses[-1] < 0.2 * losses[0]
    names = ["regressor/z_hidden/kernel", "regressor/z_hidden/bias", "regressor/block_0/kernel",
             "regressor/block_0/bias", "regressor/a_out/kernel", "regressor/a_out/bias"]
    assert [v.path for v in model.trainable_variables] == names
    assert [v.path for v in model.variables] == names and model.weights == model.trainable_weights
    assert model.non_trainable_variables == [] and model.count_params() == 3 * 4 + 4 + 4 * 4 + 4 + 4 * 2 + 2


def test_training_flows_from_the_model_call_to_the_layers_that_take_it():
    model = _Regressor()
    x = tf.ones([2, 3])
    np.testing.assert_array_equal(model(x).numpy(), model(x, training=False).numpy())
    tf.random.set_seed(1)
    assert not np.allclose(model(x, training=True).numpy(), model(x).numpy())  # dropout on


def test_subclassed_model_names_are_snake_case_and_unique():
    class NamingCheckModel(tf.keras.Model):
        pass

    first, second = NamingCheckModel(), NamingCheckModel()
    assert (first.name, second.name) == ("naming_check_model", "naming_check_model_1")
    assert [_snake_case(n) for n in ("MaxPooling2D", "GlobalAveragePooling2D", "Conv2D", "BatchNormalization",
                                     "MyModel", "HTTPLayer")] == [
        "max_pooling2d", "global_average_pooling2d", "conv2d", "batch_normalization", "my_model", "http_layer"]


def test_non_trainable_layers_and_batch_norm_statistics_are_non_trainable():
    class Frozen(tf.keras.Model):
        def __init__(self):
            super().__init__(name="frozen")
            self.body = L.Dense(4, name="body")
            self.norm = L.BatchNormalization(name="norm")
            self.head = L.Dense(2, name="head")
            self.body.trainable = False

        def call(self, x, training=None):
            return self.head(self.norm(self.body(x)))

    model = Frozen()
    model(np.ones((2, 3)))  # NumPy float64 is converted to the layers' float32
    assert [v.path for v in model.weights] == [
        "frozen/body/kernel", "frozen/body/bias", "frozen/norm/gamma", "frozen/norm/beta",
        "frozen/norm/moving_mean", "frozen/norm/moving_variance", "frozen/head/kernel", "frozen/head/bias"]
    assert [v.path for v in model.trainable_weights] == [
        "frozen/norm/gamma", "frozen/norm/beta", "frozen/head/kernel", "frozen/head/bias"]
    assert [v.path.split("/", 1)[1] for v in model.non_trainable_weights] == [
        "body/kernel", "body/bias", "norm/moving_mean", "norm/moving_variance"]


def test_input_first_builds_a_sequential_at_construction():
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(4, name="d1"), L.Dense(2, name="d2")],
                                name="seq_built")
    assert model.built and [layer.name for layer in model.layers] == ["d1", "d2"]
    assert [v.path for v in model.variables] == ["seq_built/d1/kernel", "seq_built/d1/bias",
                                                 "seq_built/d2/kernel", "seq_built/d2/bias"]
    assert model.count_params() == 3 * 4 + 4 + 4 * 2 + 2
    assert model.layers[0]._output_shape == tf.TensorShape([None, 4])
    model.add(L.Dense(4, name="d3"))  # rebuilt at once
    assert model.layers[-1].built and model.layers[-1]._output_shape == tf.TensorShape([None, 4])
    assert model(tf.ones([2, 3])).shape == (2, 4)
    assert model.pop().name == "d3" and model(tf.ones([2, 3])).shape == (2, 2)


def test_build_with_an_input_shape_builds_sequential_and_subclassed_models():
    sequential = tf.keras.Sequential([L.Dense(4), L.Flatten()])
    assert not sequential.built
    sequential.build((None, 2, 3))
    assert sequential.built and sequential.layers[0].kernel.shape == (3, 4)
    assert [layer._output_shape.as_list() for layer in sequential.layers] == [[None, 2, 4], [None, 8]]
    model = _Regressor()
    model.build((None, 3))
    assert model.built and len(model.trainable_variables) == 6
    assert model.a_out._output_shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="no layers"):
        tf.keras.Sequential().build((None, 3))


def test_unknown_inner_dimensions_are_inferred_as_none():
    model = tf.keras.Sequential([tf.keras.Input(shape=(None, 3)), L.Dense(4), L.LayerNormalization()])
    assert [layer._output_shape.as_list() for layer in model.layers] == [[None, None, 4], [None, None, 4]]


def test_functional_model_replays_its_graph():
    inputs = tf.keras.Input(shape=(3,), name="features")
    hidden = L.Dense(4, activation="relu", name="hidden")(inputs)
    outputs = [L.Dense(2, name="score")(hidden), L.Dense(4, name="logits")(inputs)]
    model = tf.keras.Model(inputs=inputs, outputs=outputs)
    assert type(model).__name__ == "Functional" and model.built
    assert [layer.name for layer in model.layers] == ["features", "hidden", "score", "logits"]
    assert hidden.shape.as_list() == [None, 4] and repr(inputs).startswith("<KerasTensor shape=(None, 3)")
    x = np.random.default_rng(1).normal(size=(2, 3)).astype(np.float32)
    score, logits = model(x)
    h = np.maximum(x @ model.layers[1].kernel.numpy() + model.layers[1].bias.numpy(), 0)
    np.testing.assert_allclose(score.numpy(), h @ model.layers[2].kernel.numpy() + model.layers[2].bias.numpy(),
                               rtol=1e-5, atol=1e-6)
    assert logits.shape == (2, 4) and len(model.trainable_variables) == 6
    text = []
    model.summary(print_fn=text.append)  # two layers at one depth: Keras adds the "Connected to" column
    assert "Connected to" in text[0] and "hidden[0][0]" in text[0] and "features[0][0]" in text[0]


def _summary(model, **kwargs):
    out = []
    model.summary(print_fn=out.append, **kwargs)
    assert len(out) == 1  # one call with the whole text, as Keras 3 does
    return out[0]


def test_summary_layout():
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(4, name="dense_a"),
                                 L.BatchNormalization(name="batch_normalization_a")], name="tiny")
    lines = _summary(model, line_length=76).splitlines()
    assert lines[0] == 'Model: "tiny"'
    assert lines[1] == "┏" + "━" * 33 + "┳" + "━" * 24 + "┳" + "━" * 15 + "┓"
    assert lines[2] == "┃ Layer (type)" + " " * 20 + "┃ Output Shape" + " " * 11 + "┃       Param # ┃"
    assert lines[4].startswith("│ dense_a (Dense)") and lines[4].endswith("│            16 │")
    assert "(None, 4)" in lines[4]
    # A name too long for its cell wraps at the space before the class name.
    assert lines[6].startswith("│ batch_normalization_a   ") and lines[7].startswith("│ (BatchNormalization) ")
    assert lines[8].startswith("└") and all(len(line) == 76 for line in lines[1:9])
    assert lines[9:] == [" Total params: 32 (128.00 B)", " Trainable params: 24 (96.00 B)",
                         " Non-trainable params: 8 (32.00 B)"]


def test_summary_before_building_and_for_a_model_called_once(capsys):
    model = tf.keras.Sequential([L.Dense(4, name="late"), L.Dropout(0.1, name="drop_late")], name="late_model")
    text = _summary(model)
    assert "│ late (Dense)" in text and "?" in text and "0 (unbuilt)" in text
    assert "│ drop_late (Dropout)" in text and " Total params: 0 (0.00 B)" in text
    model(tf.ones([2, 3]))
    model.summary()  # print_fn=None prints
    printed = capsys.readouterr().out
    assert printed.startswith('Model: "late_model"') and "(2, 4)" in printed and "0 (unbuilt)" not in printed


def test_summary_options_and_sizes():
    model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), L.Dense(1000, name="wide")], name="wide_model")
    text = _summary(model, line_length=60, show_trainable=True)
    assert " Total params: 4,000 (15.62 KB)" in text and "(None, 1000)" in text
    assert "│   4,000 │  Y  │" in text and "┃ Tr… ┃" in text  # a header too wide for its cell is cut
    assert all(len(line) == 60 for line in text.splitlines()[1:-3])
    nested = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.Sequential([L.Dense(4, name="inner")])])
    assert "└ inner (Dense)" in _summary(nested, expand_nested=True)
    with pytest.raises(ValueError, match="Insufficient console width"):
        _summary(model, line_length=8)


def test_table_cell_wrapping_follows_rich():
    assert _wrap("dense_1 (Dense)", 31) == ["dense_1 (Dense)"]
    assert _wrap("batch_normalization (BatchNormalization)", 31) == ["batch_normalization", "(BatchNormalization)"]
    assert _wrap("a_really_long_layer_name_for_wrapping_tests (Conv2D)", 31) == [
        "a_really_long_layer_name_for_w…", "(Conv2D)"]
    assert _column_widths(76, [0.45, 0.80, 1.0]) == [33, 24, 15]  # padding included, as rich fits them


def test_training_by_position_and_a_helpful_error_without_super_init():
    class Noisy(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.drop = L.Dropout(0.9)

        def call(self, inputs, training=None):
            return self.drop(inputs)

    class Outer(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.inner = Noisy()

        def call(self, inputs, training=None):
            return self.inner(inputs, None)  # None by position: the outer call's value applies

    x = tf.ones([2, 32])
    tf.random.set_seed(2)
    assert np.mean(Noisy()(x, True).numpy() == 0) > 0.5 and np.mean(Outer()(x, training=True).numpy() == 0) > 0.5
    np.testing.assert_array_equal(Outer()(x).numpy(), x.numpy())

    class Forgetful(tf.keras.Model):
        def __init__(self):
            self.dense = L.Dense(2)

    with pytest.raises(RuntimeError, match="super\\(\\).__init__"):
        Forgetful()(x)


def test_an_explicit_build_names_weights_in_the_layer_scope_and_builds_once():
    class Scaled(tf.keras.Model):
        def __init__(self):
            super().__init__(name="scaled")
            self.dense = L.Dense(2, name="proj")

        def build(self, input_shape):
            self.scale = self.add_weight("scale", [], initializer="ones")
            super().build(input_shape)

        def call(self, inputs):
            return self.dense(inputs) * self.scale

    model = Scaled()
    model.build((None, 3))
    assert [w.path for w in model.weights] == ["scaled/scale", "scaled/proj/kernel", "scaled/proj/bias"]
    dense = L.Dense(4, name="manual")
    dense.build((None, 3))
    assert dense.built and dense(tf.ones([2, 3])).shape == (2, 4) and len(dense.weights) == 2
