"""Keras behaviour the keras-io programs of tests/programs need (DCGAN, VAE, U-Net, timeseries, distillation):
`input_shape`/`output_shape` of Sequential and functional models, a Model subclass constructed from two models,
`train_step` receiving `x` itself from `fit(x)`, a PyDataset's batch order under `shuffle`, a symbolic call that
slices by `tf.shape`, `keras.ops.softmax`, and the progress bar's order of keys a callback adds. The same calls are
compared with TensorFlow's Keras in tests/compat/test_keras_program_fixes_vs_tf.py."""

from __future__ import annotations

import random

import jax
import numpy as np
import pytest

import tapejax as tf

keras = tf.keras
layers = keras.layers


def test_sequential_shapes_are_known_once_built_and_raise_attribute_error_before():
    model = keras.Sequential([layers.Dense(3)])
    for name in ("input_shape", "output_shape"):
        with pytest.raises(AttributeError, match=f"has no defined {name.replace('_', ' ')} yet"):
            getattr(model, name)
    assert not hasattr(model, "output_shape")
    model(tf.zeros([2, 4]))
    assert (model.input_shape, model.output_shape) == ((2, 4), (2, 3))
    built = keras.Sequential([keras.Input((4,)), layers.Dense(3), layers.Reshape((3, 1))])
    assert (built.input_shape, built.output_shape) == ((None, 4), (None, 3, 1))
    growing = keras.Sequential()
    growing.add(layers.Dense(7 * 2, use_bias=False, input_shape=(5,)))
    growing.add(layers.Reshape((7, 2)))
    assert growing.output_shape == (None, 7, 2)  # the DCGAN tutorial's asserts after each add


def test_functional_shapes_are_tuples_or_a_list_of_them():
    inputs = keras.Input((5,))
    outputs = layers.Dense(2)(inputs)
    assert keras.Model(inputs, {"a": outputs}).output_shape == (None, 2)
    pair = keras.Model([inputs], [outputs, layers.Dense(3)(outputs)])
    assert pair.input_shape == (None, 5) and pair.output_shape == [(None, 2), (None, 3)]


def test_a_subclass_given_two_models_is_a_plain_subclass_and_given_tensors_a_functional_one():
    class Pair(keras.Model):
        def __init__(self, first, second, **kwargs):
            super().__init__(**kwargs)
            self.first, self.second = first, second

        def call(self, x):
            return self.second(self.first(x))

    first, second = keras.Sequential([layers.Dense(3)]), keras.Sequential([layers.Dense(2)])
    pair = Pair(first, second)
    assert pair(tf.ones([4, 5])).shape == (4, 2) and len(pair.trainable_weights) == 4

    class Custom(keras.Model):
        pass

    inputs = keras.Input((3,))
    functional = Custom(inputs, layers.Dense(1)(inputs))
    assert isinstance(functional, keras.models.Functional) and functional(np.ones((2, 3))).shape == (2, 1)


class _Recorder(keras.Model):
    """Records the type and shape of what `train_step` receives, and trains nothing."""

    def __init__(self):
        super().__init__()
        self.dense, self.seen = layers.Dense(1), []

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.seen.append(jax.tree_util.tree_map(lambda v: (isinstance(v, tf.Tensor), tuple(v.shape)), data,
                                                  is_leaf=lambda v: isinstance(v, tf.Tensor)))
        return {"seen": 1.0}


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_fit_on_x_alone_passes_x_itself_to_train_step_as_a_tensor(run_eagerly):
    model = _Recorder()
    model.compile(optimizer="sgd", run_eagerly=run_eagerly)
    x = np.zeros((6, 3), np.float32)
    model.fit(x, epochs=1, batch_size=4, verbose=0, shuffle=False)
    model.fit(x, x[:, :1], epochs=1, batch_size=6, verbose=0)
    # compiled, as Keras on TF: traced once for batches of 4 and a partial 2 (the batch size unknown), and for
    # full batches alone with their size
    first = [(True, (4, 3)), (True, (2, 3))] if run_eagerly else [(True, (None, 3))]
    assert model.seen == [*first, ((True, (6, 3)), (True, (6, 1)))]


class _Batches(keras.utils.PyDataset):
    def __len__(self):
        return 5

    def __getitem__(self, index):
        return np.full((1, 2), index, np.float32), np.zeros((1, 1), np.float32)


def test_fit_shuffles_a_pydatasets_batch_order_with_pythons_random_and_validation_keeps_it():
    model = keras.Sequential([keras.Input((2,)), layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    seen = []
    original = _Batches.__getitem__
    _Batches.__getitem__ = lambda self, index: (seen.append(index), original(self, index))[1]
    try:
        random.seed(7)
        model.fit(_Batches(), epochs=2, verbose=0, validation_data=_Batches())
    finally:
        _Batches.__getitem__ = original
    random.seed(7)
    first, second = list(range(5)), list(range(5))
    random.shuffle(first)
    random.shuffle(second)
    assert seen == first + list(range(5)) + second + list(range(5))


def test_a_symbolic_call_may_slice_by_sizes_from_tf_shape():
    table = np.arange(16, dtype=np.float32).reshape(8, 2)

    class Noise(layers.Layer):
        def call(self, inputs):
            mean, log_var = inputs
            batch, dim = tf.shape(mean)[0], tf.shape(mean)[1]
            return mean + tf.exp(0.5 * log_var) * tf.slice(table, [0, 0], [batch, dim])

    inputs = keras.Input((2,))
    z = Noise()([inputs, inputs])
    assert z.shape == (None, 2)
    x = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(keras.Model(inputs, z)(x).numpy(), 1.0 + np.exp(0.5) * table[:3], rtol=1e-6)


def test_keras_ops_softmax_over_an_axis():
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(keras.ops.softmax(x).numpy(), jax.nn.softmax(x, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(keras.ops.softmax(x, axis=1).numpy(), jax.nn.softmax(x, axis=1), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError):
        keras.ops.softmax(np.array([1, 2]))


def test_a_key_a_callback_adds_is_shown_last_by_the_progress_bar(capsys):
    model = keras.Sequential([keras.Input((3,)), layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x, y = np.ones((8, 3), np.float32), np.ones((8, 1), np.float32)
    model.fit(x, y, epochs=1, validation_split=0.25, callbacks=[keras.callbacks.ReduceLROnPlateau()])
    final = capsys.readouterr().out.replace("\r", "\n").splitlines()[-1]
    assert final.index("loss:") < final.index("val_loss:") < final.index("learning_rate:")


class _TokenAndPosition(layers.Layer):  # keras-io's TokenAndPositionEmbedding: positions from tf.shape
    def __init__(self):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=10, output_dim=4)
        self.pos_emb = layers.Embedding(input_dim=6, output_dim=4)

    def call(self, x):
        positions = tf.range(start=0, limit=tf.shape(x)[-1], delta=1)
        return self.token_emb(x) + self.pos_emb(positions)


def test_sublayers_built_by_a_symbolic_call_that_needs_values_are_under_the_layers_path():
    layer = _TokenAndPosition()
    assert layer(keras.Input((6,))).shape == (None, 6, 4)
    assert [w.path for w in layer.weights] == [f"{layer.name}/{layer.token_emb.name}/embeddings",
                                               f"{layer.name}/{layer.pos_emb.name}/embeddings"]
