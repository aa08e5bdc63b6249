"""Lowering: only what connects is replayed, replay is exact, and what repeats is compiled once (bounded)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import executables, lowering
from tapejax._src import dispatch
from tapejax._src.registry import OpDef

_calls = {"n": 0}


def _counted_sin(x):
    _calls["n"] += 1
    return jnp.sin(x)


# An op of this test only: an OpDef applied directly, so the op table (and its coverage test) never sees it.
_COUNTED_SIN = OpDef("testing.counted_sin", _counted_sin)


def counted_sin(x):
    return dispatch.apply(_COUNTED_SIN, (x,), {})


def test_only_the_connecting_slice_is_replayed():
    x = tf.constant(0.5)
    u = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        tape.watch(u)
        unrelated = counted_sin(u)  # depends on a watched value, but does not lead to the target
        constant_part = counted_sin(tf.constant(1.0)) * 3.0  # depends on no source: a captured constant
        y = counted_sin(x) * constant_part
    before = _calls["n"]
    g = tape.gradient(y, x)
    assert _calls["n"] - before == 1  # only sin(x) is replayed
    np.testing.assert_allclose(g.numpy(), np.cos(0.5) * np.sin(1.0) * 3.0, rtol=1e-6)
    assert unrelated is not None


def test_slice_keeps_entries_between_sources_and_targets():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        a = x * 2.0
        b = tf.sin(a)
        c = tf.exp(x)  # leads to no target
        y = tf.reduce_sum(b)
    sl = lowering.slice_trace(tape._tape.entries, [x._tid], [y._tid])
    names = [step.op.name for step in sl.program.steps]
    assert names == ["math.multiply", "math.sin", "math.reduce_sum"]
    assert sl.program.n_leaves == 1
    assert sl.program.n_consts == 0 and sl.program.baked == (("<f4", 2.0),)  # a Python literal: baked in
    assert c is not None


def test_tensor_constants_are_arguments_and_literals_are_baked():
    x, scale = tf.constant([1.0, 2.0]), tf.constant(np.float32(3.0))  # from numpy: not a cached literal
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * scale + 0.5)
    sl = lowering.slice_trace(tape._tape.entries, [x._tid], [y._tid])
    assert sl.const_tids == (scale._tid,)  # a tensor's value may change between runs of a loop
    assert sl.program.baked == (("<f4", 0.5),)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, 3.0])


def test_replay_is_exact():
    x = tf.constant(np.linspace(-2, 2, 7, dtype=np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.softplus(tf.sin(x) * x) / (1.0 + x * x)
    sl = lowering.slice_trace(tape._tape.entries, [x._tid], [y._tid])
    (replayed,) = lowering.replay_fn(sl.program)([x._value], sl.const_vals)
    np.testing.assert_array_equal(np.asarray(replayed), y.numpy())


def test_a_structure_seen_once_runs_without_compiling_and_a_repeated_one_compiles_once():
    executables.CACHE.clear()
    w = tf.Variable(np.ones(3, np.float32))

    def step(scale):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(w * tf.constant(np.float32(scale))))
        return tape.gradient(loss, w)

    first = step(2.0)
    (lowered,) = executables.CACHE._items.values()
    kind = next(iter(lowered._compiled))
    assert not lowered.is_compiled(kind)
    second = step(2.0)
    assert lowered.is_compiled(kind)
    (compiled,) = lowered._compiled[kind].values()  # one executable (it also returns the loss's value)
    third = step(3.0)  # a new tensor value, same structure: the same executable
    assert list(lowered._compiled[kind].values()) == [compiled] and len(executables.CACHE) == 1
    assert compiled[0]._cache_size() == 1  # (jitted function, where its own outputs end, value spans)
    np.testing.assert_allclose(first.numpy(), second.numpy())
    np.testing.assert_allclose(third.numpy(), 3.0 / np.cosh(3.0) ** 2, rtol=1e-5)  # float32 tanh


def test_the_cache_is_bounded():
    cache = executables.Cache(maxsize=2)
    programs = []
    for n in range(3):
        x = tf.constant(1.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n + 1):
                y = tf.sin(y)
        programs.append(lowering.slice_trace(tape._tape.entries, [x._tid], [y._tid]).program)
    for p in programs:
        cache.get(p, ())
    assert len(cache) == 2
    assert (programs[0], ()) not in cache._items


def test_a_gradient_under_an_outer_tape_is_one_recorded_entry():
    x = tf.Variable(1.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x * x * x
        g = inner.gradient(y, x)
        n_entries = len(outer._tape.entries)
    assert n_entries == 3  # two multiplies and the gradient
    assert outer._tape.entries[-1].op.name == "GradientTape.vjp"
    assert float(outer.gradient(g, x)) == pytest.approx(6.0)
