"""tf.train.Checkpoint and its file format: tables round-trip, objects round-trip (variables, modules, nests,
Keras models and optimizers), deferred restoration, statuses, and the safety of saving and restoring (atomic
saves; wrong shapes, dtypes and corrupt files change no variable)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("google_crc32c")
pytest.importorskip("tensorboard")

import tapejax as tf  # noqa: E402
from tapejax._src import checkpoint_bundle, checkpoint_table  # noqa: E402


def _crc(data):
    import google_crc32c
    return google_crc32c.value(bytes(data))


@pytest.mark.parametrize("count", [0, 1, 17, 3000])
def test_table_round_trip(count, monkeypatch):
    monkeypatch.setattr(checkpoint_table, "BLOCK_SIZE", 512)  # many data blocks and index entries
    items = sorted((f"key/{i:05d}/{'x' * (i % 7)}".encode(), os.urandom(i % 13)) for i in range(count))
    data = checkpoint_table.encode_table(items, _crc)
    assert list(checkpoint_table.decode_table(data, "f", _crc)) == items


def test_masked_crc_inverts():
    for crc in (0, 1, 0xFFFFFFFF, 0x12345678):
        assert checkpoint_table.unmasked(checkpoint_table.masked(crc)) == crc


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8,
                                   np.complex64, np.float16, "bfloat16"])
def test_bundle_round_trips_dtypes(tmp_path, dtype):
    dtype = checkpoint_bundle._bfloat16() if dtype == "bfloat16" else np.dtype(dtype)
    value = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    checkpoint_bundle.write_bundle(str(tmp_path / "b"), [("a", value), ("s", [b"xy", b""])])
    reader = checkpoint_bundle.BundleReader(str(tmp_path / "b"))
    got = reader.read("a")
    assert got.dtype == dtype and np.array_equal(got, value)
    assert reader.read("s") == [b"xy", b""]


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        self.blocks = [tf.Module(), {"b": tf.Variable(5, dtype=tf.int64)}]
        self.blocks[0].v = tf.Variable(0.5, dtype=tf.float64)


def _values(module):
    return [v.numpy().copy() for v in module.variables]


def _scramble(module):
    for v in module.variables:
        v.assign(tf.zeros_like(v))


def test_module_round_trip_and_numbering(tmp_path):
    net = Net()
    ckpt = tf.train.Checkpoint(net=net)
    before = _values(net)
    first = ckpt.save(str(tmp_path / "ck"))
    second = ckpt.save(str(tmp_path / "ck"))
    assert [os.path.basename(first), os.path.basename(second)] == ["ck-1", "ck-2"]
    assert int(ckpt.save_counter.numpy()) == 2
    assert tf.train.latest_checkpoint(str(tmp_path)) == second
    assert open(tmp_path / "checkpoint").read() == 'model_checkpoint_path: "ck-2"\nall_model_checkpoint_paths: "ck-2"\n'
    _scramble(net)
    status = tf.train.Checkpoint(net=net).restore(first)
    status.assert_consumed()
    for got, want in zip(_values(net), before):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    keys = dict(tf.train.list_variables(str(tmp_path)))
    assert keys["net/blocks/1/b/.ATTRIBUTES/VARIABLE_VALUE"] == [] and keys["net/w/.ATTRIBUTES/VARIABLE_VALUE"] == [2, 2]
    assert np.array_equal(tf.train.load_variable(first, "net/w/.ATTRIBUTES/VARIABLE_VALUE"), net.w.numpy())
    reader = tf.train.load_checkpoint(first)
    assert reader.get_variable_to_dtype_map()["net/blocks/0/v/.ATTRIBUTES/VARIABLE_VALUE"] == tf.float64
    with pytest.raises(tf.errors.NotFoundError):
        reader.get_tensor("nope")


def test_write_has_no_counter_and_no_state_file(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    assert ckpt.write(str(tmp_path / "w")) == str(tmp_path / "w")
    assert not (tmp_path / "checkpoint").exists()
    assert "save_counter/.ATTRIBUTES/VARIABLE_VALUE" not in dict(tf.train.list_variables(str(tmp_path / "w")))


def test_statuses(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    extra = tf.Variable(3.0)
    status = tf.train.Checkpoint(v=tf.Variable([0.0, 0.0]), extra=extra).read(path)
    status.assert_nontrivial_match()
    with pytest.raises(AssertionError, match="not bound to checkpointed values"):
        status.assert_consumed()
    with pytest.raises(AssertionError):
        status.assert_existing_objects_matched()
    assert status.expect_partial() is status
    status = tf.train.Checkpoint(other=tf.Variable([0.0, 0.0])).restore(path)
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint"):
        status.assert_consumed()
    with pytest.raises(AssertionError):
        tf.train.Checkpoint(v=tf.Variable(1.0)).restore(None).assert_consumed()
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).restore(str(tmp_path / "missing-1"))
    with pytest.raises(ValueError, match="trackable object"):
        tf.train.Checkpoint(x=3)


def test_deferred_restoration_of_a_module(tmp_path):
    path = tf.train.Checkpoint(net=Net()).write(str(tmp_path / "c"))
    holder = tf.Module()
    status = tf.train.Checkpoint(net=holder).restore(path)
    holder.w = tf.Variable(tf.zeros([2, 2]))  # created after restore: receives the saved value when attached
    assert np.array_equal(holder.w.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(AssertionError):
        status.assert_consumed()
    status.assert_existing_objects_matched()


def _train(model, optimizer, steps, x):
    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - 1.0) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    for _ in range(steps):
        step()


def _model():
    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1)])


@pytest.mark.parametrize("optimizer", ["Adam", "SGD", "RMSprop", "Adagrad"])
def test_keras_model_and_optimizer_deferred(tmp_path, optimizer):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    make = lambda: getattr(tf.keras.optimizers, optimizer)(0.05, **({"momentum": 0.9} if optimizer in ("SGD", "RMSprop") else {}))
    model, opt = _model(), make()
    _train(model, opt, 3, x)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ck"))
    _train(model, opt, 2, x)
    expected = [v.numpy() for v in model.trainable_variables]

    model2, opt2 = _model(), make()  # nothing built: every value is restored later, when created
    status = tf.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
    _train(model2, opt2, 2, x)
    status.assert_consumed()
    assert int(opt2.iterations.numpy()) == 5
    for got, want in zip(model2.trainable_variables, expected):
        np.testing.assert_array_equal(got.numpy(), want)


def test_wrong_shape_or_dtype_changes_nothing(tmp_path):
    path = tf.train.Checkpoint(a=tf.Variable([1.0, 2.0, 3.0]), b=tf.Variable(7)).write(str(tmp_path / "c"))
    a, b = tf.Variable([0.0, 0.0]), tf.Variable(0)
    with pytest.raises(ValueError, match="incompatible tensor with shape \\(3,\\).*shape \\(2,\\)"):
        tf.train.Checkpoint(a=a, b=b).restore(path)
    assert int(b.numpy()) == 0
    a, b = tf.Variable([0.0, 0.0, 0.0]), tf.Variable(0.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="b/.ATTRIBUTES/VARIABLE_VALUE; expected dtype float"):
        tf.train.Checkpoint(a=a, b=b).restore(path)
    assert np.array_equal(a.numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("damage", ["flip_data", "truncate_data", "flip_index", "truncate_index"])
def test_corrupt_files_raise_data_loss_and_change_nothing(tmp_path, damage):
    values = {f"v{i}": tf.Variable(np.full([50], i, np.float32)) for i in range(5)}
    path = tf.train.Checkpoint(**values).write(str(tmp_path / "c"))
    target = path + (checkpoint_bundle.DATA_SUFFIX if "data" in damage else ".index")
    raw = bytearray(open(target, "rb").read())
    if damage.startswith("flip"):
        raw[len(raw) // 2] ^= 0x10
    else:
        raw = raw[:len(raw) - 30]
    open(target, "wb").write(bytes(raw))
    fresh = {name: tf.Variable(np.zeros([50], np.float32)) for name in values}
    with pytest.raises(tf.errors.DataLossError, match=os.path.basename(target)):
        tf.train.Checkpoint(**fresh).restore(path)
    assert all(not v.numpy().any() for v in fresh.values())


def test_interrupted_save_leaves_the_last_checkpoint(tmp_path, monkeypatch):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0), w=tf.Variable(2.0))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3)
    good = manager.save()
    real = checkpoint_bundle.dtype_enum
    calls = []

    def failing(dtype):  # fails while the data file of the second save is half written
        calls.append(dtype)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(dtype)

    monkeypatch.setattr(checkpoint_bundle, "dtype_enum", failing)
    with pytest.raises(KeyboardInterrupt):
        manager.save()
    assert tf.train.latest_checkpoint(str(tmp_path)) == good
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1.data-00000-of-00001", "ckpt-1.index"]


def test_manager(tmp_path, monkeypatch):
    step = tf.Variable(0, dtype=tf.int64)
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0), step=step)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2, step_counter=step, checkpoint_interval=3)
    saved = []
    for _ in range(8):
        saved.append(manager.save())
        step.assign_add(1)
    names = [p and os.path.basename(p) for p in saved]
    assert names == ["ckpt-1", None, None, "ckpt-2", None, None, "ckpt-3", None]  # TF 2.21's sequence
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-2", "ckpt-3"]
    assert not os.path.exists(tmp_path / "ckpt-1.index")
    state = open(tmp_path / "checkpoint").read().splitlines()
    assert state[:3] == ['model_checkpoint_path: "ckpt-3"', 'all_model_checkpoint_paths: "ckpt-2"',
                         'all_model_checkpoint_paths: "ckpt-3"']
    assert [line.split(":")[0] for line in state[3:]] == ["all_model_checkpoint_timestamps"] * 2 + [
        "last_preserved_timestamp"]
    again = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)  # takes over the directory
    assert again.checkpoints == manager.checkpoints and again.latest_checkpoint == manager.latest_checkpoint
    assert os.path.basename(again.save(checkpoint_number=10)) == "ckpt-10"
    assert not os.path.exists(tmp_path / "ckpt-2.index")
    ckpt.v.assign(9.0)
    assert again.restore_or_initialize() == again.latest_checkpoint and float(ckpt.v.numpy()) == 1.0
    called = []
    fresh = tf.train.CheckpointManager(ckpt, str(tmp_path / "new"), 1, init_fn=lambda: called.append(1))
    assert fresh.restore_or_initialize() is None and called == [1]
    with pytest.raises(ValueError, match="step_counter"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), 2, checkpoint_interval=3)


def test_manager_keeps_one_every_n_hours(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("time.time", lambda: clock[0])
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1, keep_checkpoint_every_n_hours=1)
    for _ in range(4):
        clock[0] += 1800  # half an hour per save: ckpt-2 (an hour after the start) is kept for good
        manager.save()
    assert sorted(p for p in os.listdir(tmp_path) if p.endswith(".index")) == ["ckpt-2.index", "ckpt-4.index"]


def test_missing_crc32c_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "google_crc32c", None)
    with pytest.raises(ImportError, match="pip install"):
        tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / "c"))
