"""The Keras behaviour of tests/unit/test_keras_program_fixes.py in tapejax and in TensorFlow 2.21's Keras: model
shapes, what `train_step` receives, a PyDataset's shuffled batch order, a symbolic call slicing by `tf.shape`,
`keras.ops.softmax`, and the progress bar's last line with a callback's added key."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import tapejax

from .compare import assert_same, assert_same_outcome

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat


def _shapes(tf):
    keras, layers = tf.keras, tf.keras.layers
    called = keras.Sequential([layers.Dense(3)])
    called(tf.zeros([2, 4]))
    built = keras.Sequential([keras.Input((4,)), layers.Dense(3), layers.Reshape((3, 1))])
    inputs = keras.Input((5,))
    outputs = layers.Dense(2)(inputs)
    pair = keras.Model([inputs], [outputs, layers.Dense(3)(outputs)])
    return [called.input_shape, called.output_shape, built.input_shape, built.output_shape, pair.input_shape,
            pair.output_shape, keras.Model(inputs, {"a": outputs}).output_shape]


def test_model_shapes_agree_with_tensorflow():
    assert_same(_shapes(tapejax), _shapes(tf_real))
    assert_same_outcome(lambda tf: tf.keras.Sequential([tf.keras.layers.Dense(3)]).output_shape, tapejax, tf_real)


def _train_step_data(tf, run_eagerly):
    keras = tf.keras

    class Recorder(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense, self.seen = keras.layers.Dense(1), []

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            if isinstance(data, tuple | list):
                self.seen.append((type(data).__name__, [tuple(d.shape) for d in data]))
            else:  # compiled, the batch size is unknown (None) when the last batch is partial, as TF traces it
                self.seen.append(("tensor", isinstance(data, tf.Tensor), tuple(data.shape)))
            return {"seen": 1.0}

    model = Recorder()
    model.compile(optimizer="sgd", run_eagerly=run_eagerly)
    x = np.zeros((6, 3), np.float32)
    model.fit(x, epochs=1, batch_size=4, verbose=0, shuffle=False)
    model.fit(x, x[:, :1], epochs=1, batch_size=6, verbose=0)
    return model.seen


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_train_step_receives_what_keras_passes(run_eagerly):
    assert_same(_train_step_data(tapejax, run_eagerly), _train_step_data(tf_real, run_eagerly))


def _pydataset_order(tf):
    keras = tf.keras

    class Batches(keras.utils.PyDataset):
        def __len__(self):
            return 5

        def __getitem__(self, index):
            return np.full((1, 2), index, np.float32), np.zeros((1, 1), np.float32)

    class Recorder(keras.Model):  # the batches the steps see (TF also reads batches ahead to learn their specs)
        def __init__(self):
            super().__init__()
            self.dense, self.seen = keras.layers.Dense(1), []

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            self.seen.append(int(data[0][0, 0]))
            return {"seen": 1.0}

        def test_step(self, data):
            self.seen.append(-int(data[0][0, 0]))
            return {"seen": 1.0}

    model = Recorder()
    model.compile(optimizer="sgd", run_eagerly=True)
    random.seed(7)
    model.fit(Batches(), epochs=2, verbose=0, validation_data=Batches())
    return model.seen


def test_a_pydatasets_shuffled_order_is_kerass():
    assert _pydataset_order(tapejax) == _pydataset_order(tf_real)


def _slice_by_shape(tf):
    keras = tf.keras
    table = np.arange(16, dtype=np.float32).reshape(8, 2)

    class Noise(keras.layers.Layer):
        def call(self, inputs):
            mean, log_var = inputs
            batch, dim = tf.shape(mean)[0], tf.shape(mean)[1]
            return mean + tf.exp(0.5 * log_var) * tf.slice(table, [0, 0], [batch, dim])

    class TokenAndPosition(keras.layers.Layer):
        def __init__(self):
            super().__init__(name="token_and_position")
            self.token_emb = keras.layers.Embedding(input_dim=10, output_dim=4, name="token")
            self.pos_emb = keras.layers.Embedding(input_dim=6, output_dim=4, name="position")

        def call(self, x):
            positions = tf.range(start=0, limit=tf.shape(x)[-1], delta=1)
            return self.token_emb(x) + self.pos_emb(positions)

    embedding = TokenAndPosition()
    embedded = embedding(keras.Input((6,)))
    inputs = keras.Input((2,))
    z = Noise()([inputs, inputs])
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(3, 2)
    softmax_input = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
    return [tuple(embedded.shape), [w.path for w in embedding.weights], tuple(z.shape), keras.Model(inputs, z)(x), keras.ops.softmax(softmax_input, axis=1)]


def test_symbolic_slicing_and_softmax_agree_with_tensorflow():
    assert_same(_slice_by_shape(tapejax), _slice_by_shape(tf_real))


def _last_bar_keys(tf, capsys):
    keras = tf.keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x, y = np.ones((8, 3), np.float32), np.ones((8, 1), np.float32)
    capsys.readouterr()
    model.fit(x, y, epochs=1, validation_split=0.25, callbacks=[keras.callbacks.ReduceLROnPlateau()])
    final = capsys.readouterr().out.replace("\r", "\n").splitlines()[-1]
    return re.findall(r"(\w+): ", final)


def test_the_progress_bar_shows_keys_in_kerass_order(capsys):
    assert _last_bar_keys(tapejax, capsys) == _last_bar_keys(tf_real, capsys)
