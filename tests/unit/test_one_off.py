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


def test_a_growing_concat_never_compiles(unchecked):
    # concat has numpy's implementation of its own (OpDef.host): a new signature runs it from the first call
    row = tf.constant(np.arange(8, dtype=np.float32).reshape(1, 8) / 7)
    x = tf.zeros([0, 8])
    expected = np.zeros((0, 8), np.float32)
    with counting_compiles() as compiled:
        for _ in range(50):  # each call a new shape
            x = tf.concat([x, row], 0)
            expected = np.concatenate([expected, row.numpy()], 0)
        assert len(compiled) == 0
    _same_bits(x, expected)


def _grown(n):
    return tf.constant(np.arange(2 * n, dtype=np.float32).reshape(n, 2) / 3)  # a constant: no compile


def test_a_transpose_of_changing_shapes_stops_compiling_once_they_churn(unchecked):
    # transpose has no numpy implementation of its own: its first signatures compile, as any op's do, then a
    # new one runs its jaxpr on the host
    for n in range(1, one_off.CHURN + 1):
        tf.transpose(_grown(n))
    with counting_compiles() as compiled:
        for n in range(one_off.CHURN + 1, one_off.CHURN + 40):
            _same_bits(tf.transpose(_grown(n)), _grown(n).numpy().T)
        assert len(compiled) == 0


def test_a_repeated_signature_compiles_once(unchecked):
    p = _grown(3)
    with counting_compiles() as compiled:
        first = tf.concat([p, p], 0)
        for _ in range(one_off.HOST_REPEATS - 1):  # concat's host runs: a compile is worth it only after these
            tf.concat([p, p], 0)
        assert len(compiled) == 0
        second = tf.concat([p, p], 0)  # it keeps repeating: its executable is compiled
        assert len(compiled) == 1
        tf.concat([p, p], 0)
        assert len(compiled) == 1
    _same_bits(first, second)

    for n in range(1, one_off.CHURN + 1):
        tf.transpose(_grown(n + 10))
    p = _grown(5)
    with counting_compiles() as compiled:
        first = tf.transpose(p)  # a one-off so far: the host
        assert len(compiled) == 0
        second = tf.transpose(p)  # it repeats, and its host run traced a jaxpr: compiled now
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
    monkeypatch.setattr(one_off.Churning, "_direct",  # a wrong numpy implementation of concat's
                        lambda self, vals: np.concatenate([np.asarray(v) for v in vals][::-1], 0))
    with pytest.raises(checking.CheckError, match="one-off op"):
        tf.concat([tf.ones([1, 2]), tf.zeros([1, 2])], 0)
    monkeypatch.setitem(one_off._RULES, "transpose", lambda x, permutation: np.array(x))
    with pytest.raises(checking.CheckError, match="one-off op"):
        for n in range(1, 2 * one_off.CHURN):
            tf.transpose(_grown(n))


def test_numpy_refusing_a_host_call_leaves_the_error_to_the_executable():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.concat([tf.ones([2, 3]), tf.ones([2, 4])], 0)  # numpy refuses too: TF's error, from the contract
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.tile(tf.ones([2, 3]), [2])  # numpy would pad the multiples: tapejax's host rule refuses first
    np.testing.assert_array_equal(tf.stack([tf.ones([2]), tf.zeros([2])], axis=-1).numpy(), [[1, 0], [1, 0]])


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


def test_host_values_are_compared_bit_for_bit():
    # moved values must be exact: a NaN equals itself, a sign of zero or a dtype is a difference
    nan = np.array([np.nan, 1.0], np.float32)
    assert checking.same_bits([nan, np.arange(3)], [nan.copy(), np.arange(3)])
    assert not checking.same_bits([np.array([0.0], np.float32)], [np.array([-0.0], np.float32)])
    assert not checking.same_bits([np.arange(3, dtype=np.int32)], [np.arange(3, dtype=np.int64)])
    assert not checking.same_bits([np.zeros((2, 1))], [np.zeros((1, 2))])
    assert not checking.same_bits([np.zeros(2)], [np.zeros(2), np.zeros(2)])
