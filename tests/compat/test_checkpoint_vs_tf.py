"""tf.train.Checkpoint against TensorFlow 2.21, both ways: checkpoints tapejax writes restore in TF with identical
values (assert_consumed passing there), and checkpoints TF writes (a tf.Module; a Keras model with Adam after
training steps) restore in tapejax with identical values, model, slots and step, also into objects built after
the restore. Also a run resumed in a new process equals an uninterrupted one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("google_crc32c")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402

from .compare import assert_same  # noqa: E402

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
Y = np.cos(X.sum(axis=1, keepdims=True))


def _keras_run(tf, steps, model=None, optimizer=None):
    model = model or tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(5, activation="tanh"),
                                          tf.keras.layers.Dense(1)])
    optimizer = optimizer or tf.keras.optimizers.Adam(0.05)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(X) - Y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return model, optimizer


def _state(model, optimizer):
    slots = [v for v in optimizer.variables if v is not optimizer.iterations and "learning_rate" not in v.name]
    return {"weights": [np.asarray(v.numpy()) for v in model.trainable_variables],
            "slots": [np.asarray(v.numpy()) for v in slots], "iterations": int(optimizer.iterations.numpy())}


def _sorted(arrays):
    """Keras orders an optimizer's variables by slot kind or by variable, depending on the optimizer."""
    return sorted(arrays, key=lambda a: (a.shape, a.tobytes()))


def test_tapejax_keras_checkpoint_restores_in_tf(tmp_path):
    model, optimizer = _keras_run(tapejax, 3)
    path = tapejax.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ck"))
    expected = _state(model, optimizer)
    tf_model, tf_optimizer = _keras_run(tf_real, 0)
    status = tf_real.train.Checkpoint(model=tf_model, optimizer=tf_optimizer).restore(path)
    tf_optimizer.build(tf_model.trainable_variables)  # slots made after the restore: deferred in TF too
    status.assert_consumed()
    got = _state(tf_model, tf_optimizer)
    assert_same(got["weights"], expected["weights"], rtol=0)
    assert_same(_sorted(got["slots"]), _sorted(expected["slots"]), rtol=0)
    assert got["iterations"] == 3 and tf_optimizer.learning_rate.numpy() == np.float32(0.05)
    assert tf_real.train.latest_checkpoint(str(tmp_path)) == path


def test_tf_keras_checkpoint_restores_in_tapejax_deferred(tmp_path):
    tf_model, tf_optimizer = _keras_run(tf_real, 3)
    path = tf_real.train.Checkpoint(model=tf_model, optimizer=tf_optimizer).save(str(tmp_path / "ck"))
    _keras_run(tf_real, 2, tf_model, tf_optimizer)
    expected = _state(tf_model, tf_optimizer)

    model = tapejax.keras.Sequential([tapejax.keras.layers.Dense(5, activation="tanh"),
                                      tapejax.keras.layers.Dense(1)])  # unbuilt: restored when built
    optimizer = tapejax.keras.optimizers.Adam(0.05)
    status = tapejax.train.Checkpoint(model=model, optimizer=optimizer).restore(path)
    _keras_run(tapejax, 2, model, optimizer)
    status.assert_consumed()
    got = _state(model, optimizer)
    assert got["iterations"] == expected["iterations"] == 5
    assert_same(got["weights"], expected["weights"], rtol=1e-4)  # 2 steps apart: Adam's float32 rounding


def test_tf_keras_checkpoint_values_in_tapejax(tmp_path):
    tf_model, tf_optimizer = _keras_run(tf_real, 3)
    path = tf_real.train.Checkpoint(model=tf_model, optimizer=tf_optimizer).write(str(tmp_path / "ck"))
    model, optimizer = _keras_run(tapejax, 0)
    status = tapejax.train.Checkpoint(model=model, optimizer=optimizer).read(path)
    optimizer.build(model.trainable_variables)
    status.assert_consumed()
    expected, got = _state(tf_model, tf_optimizer), _state(model, optimizer)
    assert_same(got["weights"], expected["weights"], rtol=0)
    # Keras orders slots by kind or by variable depending on the optimizer; compare them as sets
    assert_same(_sorted(got["slots"]), _sorted(expected["slots"]), rtol=0)


class _TfNet(tf_real.Module):
    def __init__(self):
        super().__init__()
        self.w = tf_real.Variable(np.arange(6.0).reshape(2, 3))
        self.layers = [tf_real.Module(), {"b": tf_real.Variable(np.int32(4))}]
        self.layers[0].v = tf_real.Variable(np.float32(0.25))


class _Net(tapejax.Module):
    def __init__(self):
        super().__init__()
        self.w = tapejax.Variable(np.zeros((2, 3)))
        self.layers = [tapejax.Module(), {"b": tapejax.Variable(np.int32(0))}]
        self.layers[0].v = tapejax.Variable(np.float32(0.0))


def _module_values(net):
    return [np.asarray(net.w.numpy()), np.asarray(net.layers[0].v.numpy()), np.asarray(net.layers[1]["b"].numpy())]


def test_module_both_ways(tmp_path):
    tf_net = _TfNet()
    tf_path = tf_real.train.Checkpoint(net=tf_net, step=tf_real.Variable(np.int64(7))).save(str(tmp_path / "tf"))
    net, step = _Net(), tapejax.Variable(np.int64(0))
    tapejax.train.Checkpoint(net=net, step=step).restore(tf_path).assert_consumed()
    assert_same(_module_values(net), _module_values(tf_net), rtol=0)
    assert int(step.numpy()) == 7

    net.w.assign(net.w * 3.0)
    ours = tapejax.train.Checkpoint(net=net).write(str(tmp_path / "ours"))
    tf_back = _TfNet()
    tf_real.train.Checkpoint(net=tf_back).read(ours).assert_consumed()
    assert_same(_module_values(tf_back), _module_values(net), rtol=0)
    reader = tf_real.train.load_checkpoint(ours)
    assert sorted(reader.get_variable_to_shape_map()) == [k for k, _ in tapejax.train.list_variables(ours)]


RESUME = textwrap.dedent("""
    import sys
    import numpy as np
    import tapejax as tf
    sys.path.insert(0, {tests!r})
    from compat.test_checkpoint_vs_tf import X, Y, _keras_run
    model = tf.keras.Sequential([tf.keras.layers.Dense(5, activation="tanh"), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.Adam(0.05)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), {directory!r}, 3)
    assert manager.restore_or_initialize() is not None
    _keras_run(tf, 5, model, optimizer)
    np.savez({out!r}, *[v.numpy() for v in model.trainable_variables], it=optimizer.iterations.numpy())
""")


def _fresh_model():
    tapejax.random.set_seed(0)
    model = tapejax.keras.Sequential([tapejax.keras.layers.Dense(5, activation="tanh"),
                                      tapejax.keras.layers.Dense(1)])
    model(X)
    return model


def test_resumed_run_equals_uninterrupted_run(tmp_path):
    straight, straight_opt = _keras_run(tapejax, 10, _fresh_model(), tapejax.keras.optimizers.Adam(0.05))
    model, optimizer = _keras_run(tapejax, 5, _fresh_model(), tapejax.keras.optimizers.Adam(0.05))
    manager = tapejax.train.CheckpointManager(tapejax.train.Checkpoint(model=model, optimizer=optimizer),
                                              str(tmp_path), max_to_keep=3)
    manager.save()
    out = str(tmp_path / "resumed.npz")
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = os.path.dirname(tests)
    script = RESUME.format(tests=tests, directory=str(tmp_path), out=out)
    subprocess.run([sys.executable, "-c", script], check=True, cwd=root, timeout=300,
                   env={**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")})
    resumed = np.load(out)
    assert int(resumed["it"]) == 10
    for i, v in enumerate(straight.trainable_variables):
        np.testing.assert_array_equal(resumed[f"arr_{i}"], v.numpy())  # exactly the same weights
