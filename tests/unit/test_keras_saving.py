"""Keras weights files and `.keras` archives (tapejax/keras/saving_*.py): round trips, Keras's errors (and no
variable changed when a file does not fit), get_config/from_config, clone_model, ModelCheckpoint's files.
The files' interoperability with real Keras is in tests/compat/test_keras_saving_vs_tf.py."""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf

pytest.importorskip("h5py")

X = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
Y = np.stack([X.sum(1), X[:, 0]], 1)


def _model(units=2, seed=0, extra=False):
    layers = [tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="tanh"),
              tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(units)]
    if extra:
        layers.append(tf.keras.layers.Dense(1))
    model = tf.keras.Sequential(layers)
    rng = np.random.default_rng(seed)
    model.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    return model


def _trained(seed=0):
    model = _model(seed=seed)
    model.compile(tf.keras.optimizers.Adam(0.01), "mse")
    model.fit(X, Y, epochs=2, batch_size=4, verbose=0)
    return model


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def _optimizer_state(model):
    from tapejax.keras.saving_weights import _read, optimizer_variables

    return [_read(v) for v in optimizer_variables(model.optimizer)]


def test_weights_round_trip_with_optimizer_state(tmp_path):
    model = _trained()
    model.save_weights(tmp_path / "m.weights.h5")
    other = _trained(seed=1)
    other.load_weights(tmp_path / "m.weights.h5")
    _same(other.get_weights(), model.get_weights())
    _same([v.numpy() for v in other.optimizer.variables], [v.numpy() for v in model.optimizer.variables])
    assert int(other.optimizer.iterations.numpy()) == 4


@pytest.mark.parametrize("target", [lambda: _model(units=5), lambda: _model(extra=True)], ids=["shape", "missing"])
def test_a_file_that_does_not_fit_raises_and_changes_nothing(tmp_path, target):
    _model().save_weights(tmp_path / "m.weights.h5")
    model = target()
    before = model.get_weights()
    with pytest.raises(ValueError, match="could not be loaded"):
        model.load_weights(tmp_path / "m.weights.h5")
    _same(model.get_weights(), before)
    with pytest.warns(UserWarning, match="could not be loaded"):
        model.load_weights(tmp_path / "m.weights.h5", skip_mismatch=True)
    _same(model.get_weights()[:4], _model().get_weights()[:4])  # the layers that fit are loaded


def test_unbuilt_optimizer_is_skipped_with_keras_warning(tmp_path):
    saved = _trained()
    saved.save_weights(tmp_path / "m.weights.h5")
    model = _model(seed=1)
    model.compile("adam", "mse")
    with pytest.warns(UserWarning, match="Skipping variable loading for optimizer"):
        model.load_weights(tmp_path / "m.weights.h5")
    _same(model.get_weights(), saved.get_weights())
    assert int(model.optimizer.iterations.numpy()) == 0


def test_file_names_as_keras_checks_them(tmp_path):
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        _model().save_weights(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="File format not supported"):
        _model().load_weights(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="Invalid filepath extension"):
        _model().save(tmp_path / "m")
    with pytest.raises(NotImplementedError, match="legacy HDF5"):
        _model().save(tmp_path / "m.h5")


def test_keras_archive_round_trip_compiled(tmp_path):
    model = _trained()
    model.save(tmp_path / "m.keras")
    loaded = tf.keras.models.load_model(tmp_path / "m.keras")
    _same(loaded.get_weights(), model.get_weights())
    np.testing.assert_array_equal(loaded(X).numpy(), model(X).numpy())
    assert isinstance(loaded.optimizer, tf.keras.optimizers.Adam) and loaded.optimizer.learning_rate == np.float32(0.01)
    _same(_optimizer_state(loaded), _optimizer_state(model))
    loaded.fit(X, Y, epochs=1, batch_size=4, verbose=0)  # compiled as saved
    assert not tf.keras.models.load_model(tmp_path / "m.keras", compile=False).__dict__.get("compiled")


def test_functional_config_round_trip_and_clone():
    a, b = tf.keras.Input((4,), name="a"), tf.keras.Input((3,), name="b")
    shared = tf.keras.layers.Dense(2, activation="relu", kernel_initializer="ones")
    x = tf.keras.layers.Concatenate()([shared(a), shared(tf.keras.layers.Dense(4)(b))])
    model = tf.keras.Model([a, b], {"out": tf.keras.layers.Dense(1)(x)})
    config = model.get_config()
    assert [entry["name"] for entry in config["layers"]] == [layer.name for layer in model.layers]
    clone = tf.keras.models.clone_model(model)
    assert [type(layer) for layer in clone.layers] == [type(layer) for layer in model.layers]
    assert clone.layers[3].get_config() == model.layers[3].get_config()
    clone.set_weights(model.get_weights())
    inputs = [X, X[:, :3]]
    np.testing.assert_array_equal(clone(inputs)["out"].numpy(), model(inputs)["out"].numpy())
    rebuilt = tf.keras.models.model_from_json(model.to_json())
    assert len(rebuilt.weights) == len(model.weights)


def test_layer_config_is_its_arguments():
    layer = tf.keras.layers.Conv2D(4, 3, padding="same", activation=tf.nn.relu, name="c")
    config = layer.get_config()
    assert config == {"name": "c", "trainable": True, "dtype": "float32", "filters": 4, "kernel_size": 3,
                      "padding": "same", "activation": "relu"}
    again = tf.keras.layers.Conv2D.from_config(config)
    assert again.get_config() == config and again is not layer


def test_custom_classes_need_registration(tmp_path):
    class Scale(tf.keras.layers.Layer):
        def __init__(self, factor, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def build(self, shape):
            self.w = self.add_weight(shape=(shape[-1],), initializer="ones", name="w")

        def call(self, x):
            return x * self.w * self.factor

    model = tf.keras.Sequential([tf.keras.Input((4,)), Scale(2.0)])
    model.layers[0].w.assign(np.arange(4, dtype=np.float32))
    model.save(tmp_path / "m.keras")
    with pytest.raises(TypeError, match="Could not locate class 'Scale'"):
        tf.keras.models.load_model(tmp_path / "m.keras")
    loaded = tf.keras.models.load_model(tmp_path / "m.keras", custom_objects={"Scale": Scale})
    np.testing.assert_array_equal(loaded(X).numpy(), model(X).numpy())
    tf.keras.saving.register_keras_serializable("Tests")(Scale)
    model.save(tmp_path / "r.keras")
    np.testing.assert_array_equal(tf.keras.models.load_model(tmp_path / "r.keras")(X).numpy(), model(X).numpy())


def test_model_checkpoint_names_and_best_only(tmp_path, capsys):
    model = _model()
    model.compile(tf.keras.optimizers.SGD(0.01), "mse")
    path = str(tmp_path / "w_{epoch:02d}_{loss:.3f}.weights.h5")
    checkpoint = tf.keras.callbacks.ModelCheckpoint(path, monitor="loss", save_best_only=True,
                                                    save_weights_only=True, verbose=1)
    history = model.fit(X, Y, epochs=3, batch_size=8, verbose=0, callbacks=[checkpoint])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"w_{e + 1:02d}_{loss:.3f}.weights.h5" for e, loss in enumerate(history.history["loss"])]
    assert "loss improved from None to" in capsys.readouterr().out
    restored = _model(seed=1)
    restored.load_weights(tmp_path / names[-1])
    _same(restored.get_weights(), model.get_weights())
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "w.h5"), save_weights_only=True)
    with pytest.raises(ValueError, match="must end in `.keras`"):
        tf.keras.callbacks.ModelCheckpoint(str(tmp_path / "ck"))
