"""An op whose input shapes keep changing stops compiling one executable per shape (one_off.py): a one-off shape
of a data-movement op runs on the host, bit-identical to its executable; a repeated one compiles; arithmetic
still runs its executable. Counts of XLA compiles, never timings."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import checking, dispatch, executables, one_off
from tests.unit.test_shape_inference_compiles import counting_compiles


@pytest.fixture
def unchecked(monkeypatch):
    """Counts of compiles are taken outside the checking mode, which compiles each executable to compare."""
    monkeypatch.setattr(checking.FLAG, "on", False)


@pytest.fixture(autouse=True)
def fresh():
    tf.debugging.clear_caches()
    yield
    tf.debugging.clear_caches()


def _same_bits(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_a_growing_concat_stops_compiling_once_its_shapes_churn(unchecked):
    row = tf.constant(np.arange(8, dtype=np.float32).reshape(1, 8) / 7)
    x = tf.zeros([0, 8])
    expected = np.zeros((0, 8), np.float32)
    for _ in range(one_off.CHURN):  # the first signatures compile, as any op's do
        x = tf.concat([x, row], 0)
        expected = np.concatenate([expected, row.numpy()], 0)
    with counting_compiles() as compiled:
        for _ in range(50):  # each call a new shape: none compiles
            x = tf.concat([x, row], 0)
            expected = np.concatenate([expected, row.numpy()], 0)
        assert len(compiled) == 0
    _same_bits(x, expected)


def test_a_repeated_signature_of_a_churning_op_compiles_once(unchecked):
    parts = [tf.ones([n, 2]) for n in range(1, one_off.CHURN + 3)]
    for p in parts[:one_off.CHURN]:
        tf.concat([p, p], 0)
    p = parts[-1]
    with counting_compiles() as compiled:
        first = tf.concat([p, p], 0)  # a one-off so far: the host
        assert len(compiled) == 0
        second = tf.concat([p, p], 0)  # it repeats: its executable is compiled
        assert len(compiled) == 1
        tf.concat([p, p], 0)
        assert len(compiled) == 1
    _same_bits(first, second)


def test_arithmetic_of_a_churning_op_still_runs_its_executable():
    for n in range(1, one_off.CHURN + 4):
        x = np.linspace(-3, 3, n, dtype=np.float32)
        _same_bits(tf.sin(tf.constant(x)), jax.jit(jnp.sin)(x))
    sin = [f for (opdef, _), f in dispatch._EXECUTABLES.items() if opdef.name == "math.sin"]
    assert len(sin) == 1 and not isinstance(sin[0], one_off.Churning)  # its plain executable again


def test_the_checking_mode_compares_the_host_with_the_executable(monkeypatch):
    monkeypatch.setattr(checking.FLAG, "on", True)
    monkeypatch.setitem(one_off._RULES, "concatenate", lambda *xs, dimension: np.concatenate(xs[::-1], dimension))
    x = tf.ones([1, 2])
    with pytest.raises(checking.CheckError, match="one-off op"):
        for _ in range(2 * one_off.CHURN):
            x = tf.concat([x, tf.zeros([1, 2])], 0)


MOVES = {
    "concat": lambda x: tf.concat([x, x[:1]], 0),
    "reshape": lambda x: tf.reshape(x, [-1]),
    "transpose": lambda x: tf.transpose(x),
    "strided slice": lambda x: x[::2, 1:],
    "reverse": lambda x: tf.reverse(x, [0]),
    "tile": lambda x: tf.tile(x, [2, 1]),
    "pad": lambda x: tf.pad(x, [[1, 2], [0, 1]], constant_values=-1.5),
    "expand and squeeze": lambda x: tf.squeeze(tf.expand_dims(x, 0), 0),
    "where": lambda x: tf.where(x > 0.5, x, tf.zeros_like(x)),
    "cast int to float": lambda x: tf.cast(tf.cast(x * 100, tf.int32), tf.float32),
    "stack": lambda x: tf.stack([x, x], axis=1),
    "broadcast": lambda x: tf.broadcast_to(x[:1], tf.shape(x)),
    "scalar": lambda x: x[1, 2],
    "split": lambda x: tf.split(x, [1, x.shape[0] - 1])[1],
    "bfloat16": lambda x: tf.reverse(tf.cast(x, tf.bfloat16), [1]),
    "size of the first dimension": lambda x: tf.cast(tf.shape(x)[0], tf.float32),
}


@pytest.mark.parametrize("move", MOVES.values(), ids=MOVES.keys())
def test_one_off_shapes_of_data_movement_ops_are_bit_identical_to_their_executables(move):
    rng = np.random.default_rng(0)
    for n in range(2, one_off.CHURN + 8):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        got = move(tf.constant(x))
        expected = jax.jit(lambda v: move(tf.constant(v))._value)(x)  # the same ops, traced and compiled
        _same_bits(got, expected)


def test_a_growing_structure_on_a_tape_never_compiles_a_structure():
    w = tf.Variable([[1.0, 2.0]])
    executables.CACHE.clear()
    for n in range(1, 16):  # a structure one concat longer on every call
        with tf.GradientTape() as tape:
            x = w
            for i in range(n):
                x = tf.concat([x, w * float(i)], 0)
            loss = tf.reduce_sum(x * x)
        grad = tape.gradient(loss, w)
        expected = 2 * w.numpy() * (1 + sum(float(i) ** 2 for i in range(n)))
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6)
    assert "compiled" not in executables.CACHE.stats
    assert executables.CACHE.stats.get("eager: history", 0) == 15


def test_a_churning_op_inside_an_outer_jax_trace_is_part_of_that_program(monkeypatch):
    # A Keras symbolic call runs layers under jax.eval_shape, where `tf.shape(x)[0]` slices a concrete shape: the
    # host path's device_put gave tracers there, which the checking mode could not compare (TracerArrayConversion).
    monkeypatch.setattr(checking.FLAG, "on", True)
    for n in range(1, one_off.CHURN + 2):  # the slice churns: its host path is on
        tf.constant(np.arange(n, dtype=np.int32) + 1)[0]

    def probe(x):
        return tf.cast(tf.shape(tf.constant(np.ones([n + 5, 2], np.float32)))[0], tf.float32) * x

    out = jax.eval_shape(lambda x: probe(tf.constant(x))._value, jax.ShapeDtypeStruct((), jnp.float32))
    assert out.shape == () and out.dtype == jnp.float32
    assert float(probe(tf.constant(2.0))) == 2.0 * (n + 5)


@pytest.mark.parametrize("dtype", ["float32", "string"])
def test_a_growing_concat_with_a_python_row_stops_compiling(dtype, unchecked):
    # The tf.data performance guide's timeline: `acc = tf.concat((acc, [(start, elapsed)]), 0)` in its loop. The
    # Python row converts to a numpy array (a string tensor's to the ids of its strings): a one-off signature with
    # a numpy input runs on the host too.
    row = [["Train"]] if dtype == "string" else [(0.25, 1.5)]
    x = tf.zeros([0, 1], dtype=tf.string) if dtype == "string" else tf.zeros([0, 2])
    as_numpy = np.asarray([[b"Train"]], object) if dtype == "string" else np.asarray(row, np.float32)
    expected = np.asarray(x.numpy())
    for _ in range(one_off.CHURN):  # the first signatures compile, as any op's do
        x = tf.concat((x, row), axis=0)
        expected = np.concatenate([expected, as_numpy], 0)
    with counting_compiles() as compiled:
        for _ in range(20):
            x = tf.concat((x, row), axis=0)
            expected = np.concatenate([expected, as_numpy], 0)
    assert len(compiled) == 0
    assert x.dtype == (tf.string if dtype == "string" else tf.float32)
    np.testing.assert_array_equal(x.numpy(), expected)
