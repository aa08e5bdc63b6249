"""Keras weights files against TF 2.21's Keras 3, both ways: `.weights.h5` files and `.keras` archives that real
Keras writes load into tapejax with the same values and outputs, and files tapejax writes load into real
Keras; the HDF5 layout (group paths, dataset shapes) is Keras's for Sequential, functional, subclassed and
nested models, with and without optimizer state."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
h5py = pytest.importorskip("h5py")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same  # noqa: E402

RNG = np.random.default_rng(0)


def _dense_bn(tf):
    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"),
                                tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(2)]), (8, 4)


def _text(tf):
    L = tf.keras.layers
    inputs = tf.keras.Input((5,), dtype="int32")
    x = L.Embedding(10, 4)(inputs)
    x = L.LSTM(3, return_sequences=True)(x)
    x = L.GRU(2)(x)
    return tf.keras.Model(inputs, L.Dense(1)(x)), (2, 5)


def _conv(tf):
    L = tf.keras.layers
    return tf.keras.Sequential([tf.keras.Input((8, 8, 2)), L.Conv2D(3, 3, padding="same"), L.MaxPooling2D(),
                                L.Conv2D(2, 2), L.BatchNormalization(), L.Flatten(), L.Dropout(0.1),
                                L.Dense(2)]), (2, 8, 8, 2)


def _attention(tf):
    L = tf.keras.layers
    inputs = tf.keras.Input((6, 4))
    x = L.Bidirectional(L.LSTM(3, return_sequences=True))(inputs)
    x = L.TimeDistributed(L.Dense(2))(x)
    x = L.MultiHeadAttention(2, 3)(x, x)
    x = L.LayerNormalization()(x)
    x = L.SimpleRNN(2)(x)
    return tf.keras.Model(inputs, L.Dense(1)(x)), (2, 6, 4)


def _two_inputs(tf):
    L = tf.keras.layers
    a, b = tf.keras.Input((4,)), tf.keras.Input((3,))
    shared = L.Dense(2, activation="tanh")
    x, y = shared(a), shared(L.Dense(4)(b))
    return tf.keras.Model([a, b], L.Dense(1)(L.Concatenate()([x, y]))), [(2, 4), (2, 3)]


def _nested(tf):
    L = tf.keras.layers
    inner = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(3), L.Dense(3)])
    inputs = tf.keras.Input((4,))
    block = tf.keras.Model(inputs, L.Dense(4)(inner(inputs)))
    return tf.keras.Sequential([tf.keras.Input((4,)), block, L.Dense(2)]), (2, 4)


def _subclassed(tf):
    L = tf.keras.layers

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.zed = L.Dense(3)
            self.inner = tf.keras.Sequential([L.Dense(2), L.Dense(2)])
            self.heads = [L.Dense(2), L.Dense(1)]
            self._private = L.Dense(4)
            self.alpha = L.BatchNormalization()

        def call(self, x):
            x = self.zed(self.alpha(self._private(x)))
            x = self.inner(x)
            return self.heads[1](self.heads[0](x))

    model = Net()
    model(np.zeros((1, 4), np.float32))
    return model, (2, 4)


MODELS = [_dense_bn, _text, _conv, _attention, _two_inputs, _nested, _subclassed]
OPTIMIZERS = [("adam", {}), ("SGD", {"momentum": 0.9}), ("RMSprop", {"momentum": 0.5, "centered": True}),
              ("Adagrad", {}), ("AdamW", {}), ("Nadam", {}), ("Adamax", {}), ("Lion", {}), ("Adadelta", {})]


def _inputs(spec, dtype=np.float32):
    if isinstance(spec, list):
        return [_inputs(s) for s in spec]
    if len(spec) == 2 and spec[1] == 5:  # the token ids of _text
        return RNG.integers(0, 10, spec).astype(np.int32)
    return RNG.normal(size=spec).astype(dtype)


def _layout(path):
    """{dataset path: shape} of a weights file. Groups without datasets (the state of a layer that has no
    variables, such as MultiHeadAttention's inner Softmax) change nothing when a file loads: left out, and so
    are the `name` attributes (per-process names)."""
    return {name: value.shape for name, value in _values(path).items()}


def _values(path):
    with h5py.File(path, "r") as f:
        found = {}
        f.visititems(lambda name, obj: found.__setitem__(name, np.asarray(obj)) if isinstance(obj, h5py.Dataset)
                     else None)
        return found


def _fit(tf, build, optimizer=None):
    model, spec = build(tf)
    x = _inputs(spec)
    y = np.asarray(model(x)) * 0 + 1  # any target of the output's shape
    if optimizer is not None:
        name, kwargs = optimizer
        model.compile(getattr(tf.keras.optimizers, name)(**kwargs) if kwargs or name != "adam" else name, "mse")
        model.fit(x, y, epochs=2, verbose=0)
    return model, x


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__.strip("_"))
def test_layout_is_keras(tmp_path, build):
    tapejax_model, _ = _fit(tapejax, build)
    keras_model, _ = _fit(tf_real, build)
    tapejax_model.save_weights(tmp_path / "t.weights.h5")
    keras_model.save_weights(tmp_path / "k.weights.h5")
    assert _layout(tmp_path / "t.weights.h5") == _layout(tmp_path / "k.weights.h5")


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__.strip("_"))
def test_keras_file_loads_in_tapejax(tmp_path, build):
    keras_model, x = _fit(tf_real, build, ("adam", {}))
    keras_model.save_weights(tmp_path / "k.weights.h5")
    model, _ = _fit(tapejax, build, ("adam", {}))
    model.load_weights(tmp_path / "k.weights.h5")
    model.save_weights(tmp_path / "t.weights.h5")
    assert_same(_values(tmp_path / "t.weights.h5"), _values(tmp_path / "k.weights.h5"), rtol=0)
    assert_same(np.asarray(model(x)), np.asarray(keras_model(x)), rtol=1e-4)


@pytest.mark.parametrize("build", MODELS, ids=lambda f: f.__name__.strip("_"))
def test_tapejax_file_loads_in_keras(tmp_path, build):
    model, x = _fit(tapejax, build, ("adam", {}))
    model.save_weights(tmp_path / "t.weights.h5")
    keras_model, _ = _fit(tf_real, build, ("adam", {}))
    keras_model.load_weights(tmp_path / "t.weights.h5")
    keras_model.save_weights(tmp_path / "k.weights.h5")
    assert_same(_values(tmp_path / "k.weights.h5"), _values(tmp_path / "t.weights.h5"), rtol=0)
    assert_same(np.asarray(keras_model(x)), np.asarray(model(x)), rtol=1e-4)


@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=lambda o: o[0])
def test_optimizer_state_both_ways(tmp_path, optimizer):
    for source, target in ((tf_real, tapejax), (tapejax, tf_real)):
        model, _ = _fit(source, _dense_bn, optimizer)
        model.save_weights(tmp_path / "a.weights.h5")
        other, _ = _fit(target, _dense_bn, optimizer)
        other.load_weights(tmp_path / "a.weights.h5")
        other.save_weights(tmp_path / "b.weights.h5")
        assert _layout(tmp_path / "a.weights.h5") == _layout(tmp_path / "b.weights.h5")
        assert_same(_values(tmp_path / "b.weights.h5"), _values(tmp_path / "a.weights.h5"), rtol=0)


def _optimizer_edges(path):
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
        tf_real.train.load_checkpoint(path).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    node = next(c.node_id for c in graph.nodes[0].children if c.local_name == "optimizer")
    return {c.local_name: len(graph.nodes[c.node_id].children) for c in graph.nodes[node].children}


@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=lambda o: o[0])
def test_optimizer_checkpoint_edges_as_keras(tmp_path, optimizer):
    """tf.train.Checkpoint of a fitted model's optimizer: the same named edges as Keras 3's (slot lists by
    Keras's names, Nadam's `_u_product`), each with as many entries, but Keras's `_variables` list (see
    tapejax/keras/checkpointing.py), and values that restore both ways."""
    edges = []
    for module in (tapejax, tf_real):
        model, _ = _fit(module, _dense_bn, optimizer)
        path = module.train.Checkpoint(model=model, optimizer=model.optimizer).write(str(tmp_path / module.__name__))
        edges.append(_optimizer_edges(path))
    for name in ("_variables", "_trainable_variables_indices", "_exclude_from_weight_decay_cache"):  # no state
        edges[1].pop(name, None)
    assert edges[0] == edges[1]
    model, _ = _fit(tf_real, _dense_bn, optimizer)
    status = tf_real.train.Checkpoint(model=model, optimizer=model.optimizer).read(str(tmp_path / "tapejax"))
    status.assert_consumed()


ARCHIVED = [_dense_bn, _text, _conv, _attention, _two_inputs, _nested]


def _outputs(model, x):
    return [np.asarray(y) for y in tf_real.nest.flatten(model(x))]


@pytest.mark.parametrize("build", ARCHIVED, ids=lambda f: f.__name__.strip("_"))
def test_keras_archive_both_ways(tmp_path, build):
    for source, target in ((tf_real, tapejax), (tapejax, tf_real)):
        model, x = _fit(source, build, ("adam", {}))
        model.save(tmp_path / "m.keras")
        loaded = target.keras.models.load_model(tmp_path / "m.keras")
        assert_same(_outputs(loaded, x), _outputs(model, x), rtol=1e-4)
        assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())
        assert type(loaded.optimizer).__name__ == type(model.optimizer).__name__
        loaded.save_weights(tmp_path / "b.weights.h5")
        model.save_weights(tmp_path / "a.weights.h5")
        assert_same(_values(tmp_path / "b.weights.h5"), _values(tmp_path / "a.weights.h5"), rtol=0)
        assert [type(layer).__name__ for layer in loaded.layers] == [type(layer).__name__ for layer in model.layers]


def test_tapejax_config_rebuilds_in_keras():
    model, x = _fit(tapejax, _two_inputs)
    rebuilt = tf_real.keras.Model.from_config(model.get_config())
    assert [layer.name for layer in rebuilt.layers] == [layer.name for layer in model.layers]
    assert_same(_outputs(rebuilt, x)[0].shape, _outputs(model, x)[0].shape)


def test_model_checkpoint_files_load_in_keras(tmp_path):
    model, x = _fit(tapejax, _dense_bn, ("adam", {}))
    y = np.ones((8, 2), np.float32)
    callbacks = [tapejax.keras.callbacks.ModelCheckpoint(str(tmp_path / "w{epoch:02d}.weights.h5"),
                                                         save_weights_only=True, monitor="loss"),
                 tapejax.keras.callbacks.ModelCheckpoint(str(tmp_path / "best.keras"), save_best_only=True,
                                                         monitor="loss")]
    model.fit(x, y, epochs=2, verbose=0, callbacks=callbacks)
    keras_model, _ = _fit(tf_real, _dense_bn)
    keras_model.load_weights(tmp_path / "w02.weights.h5")
    assert_same(_outputs(keras_model, x), _outputs(model, x), rtol=1e-4)
    assert_same(_outputs(tf_real.keras.models.load_model(tmp_path / "best.keras"), x), _outputs(model, x),
                rtol=1e-4)
