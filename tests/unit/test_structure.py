"""Slices memoized by the trace's structure (tapejax/_src/structure.py).

The oracle is `lowering.slice_trace` itself: for a trace whose structure was seen before, the memoized slice
must be exactly the slice computed from scratch (same program, same ids, the very same captured values).
"""

from __future__ import annotations

import numpy as np
import pytest

import tapejax as tf
from tapejax._src import lowering, structure


def _record(f, *values, watch_all=True):
    """Records `f` on a persistent tape; returns (tape state, source tids, target tids, sources, target)."""
    sources = [tf.constant(v) for v in values]
    with tf.GradientTape(persistent=True) as tape:
        if watch_all:
            tape.watch(sources)
        target = f(*sources)
    state = tape._tape
    return state, [s._tid for s in sources], [target._tid], tape, sources, target


def _assert_same_slice(memo: lowering.Slice, fresh: lowering.Slice) -> None:
    assert memo.program == fresh.program
    assert memo.leaf_tids == fresh.leaf_tids
    assert memo.perturbed == fresh.perturbed
    assert memo.const_tids == fresh.const_tids
    assert len(memo.const_vals) == len(fresh.const_vals)
    assert all(a is b for a, b in zip(memo.const_vals, fresh.const_vals))
    assert memo.connected_targets == fresh.connected_targets
    assert all(a is b for a, b in zip(memo.entries, fresh.entries)) and len(memo.entries) == len(fresh.entries)


def _check_repeat(f, first, second):
    """Slices f's trace on `first`, then on `second`: the second is memoized and equals a fresh slice."""
    structure.clear()
    state, leaves, targets, *_ = _record(f, *first)
    structure.slice_trace(state.entries, leaves, targets)
    state, leaves, targets, *_ = _record(f, *second)
    memo = structure.slice_trace(state.entries, leaves, targets)
    fresh = lowering.slice_trace(state.entries, leaves, targets)
    _assert_same_slice(memo, fresh)
    return memo


def test_a_repeated_structure_reuses_the_program_object():
    f = lambda x: tf.reduce_sum(tf.tanh(x * 1.5) * x)  # noqa: E731
    structure.clear()
    state, leaves, targets, *_ = _record(f, np.ones(3, np.float32))
    first = structure.slice_trace(state.entries, leaves, targets)
    state, leaves, targets, *_ = _record(f, np.full(3, 2.0, np.float32))
    second = structure.slice_trace(state.entries, leaves, targets)
    assert second.program is first.program  # the executable cache finds it by identity first
    _assert_same_slice(second, lowering.slice_trace(state.entries, leaves, targets))


def test_a_different_literal_is_a_different_structure():
    structure.clear()
    state, leaves, targets, *_ = _record(lambda x: x * 1.5, np.ones(2, np.float32))
    a = structure.slice_trace(state.entries, leaves, targets)
    state, leaves, targets, *_ = _record(lambda x: x * 2.5, np.ones(2, np.float32))
    b = structure.slice_trace(state.entries, leaves, targets)
    assert a.program.baked != b.program.baked
    _assert_same_slice(b, lowering.slice_trace(state.entries, leaves, targets))


def test_a_captured_constant_comes_from_the_new_trace():
    # y is watched but not a source: y * y is recorded and captured, as an input of the step that uses it.
    def f(x, y):
        return x * (y * y)

    memo = _check_repeat(f, [np.float32(1.0), np.float32(2.0)], [np.float32(3.0), np.float32(4.0)])
    assert len(memo.const_vals) == 0  # both are sources here; the next test slices from x alone


def test_an_entry_that_depends_on_no_source_is_captured_at_its_new_value():
    def slice_from_x(values):
        state, leaves, targets, *_ = _record(lambda x, y: x * tf.sin(y * y), *values)
        return state, leaves[:1], targets

    structure.clear()
    state, leaves, targets = slice_from_x([np.float32(1.0), np.float32(2.0)])
    structure.slice_trace(state.entries, leaves, targets)
    state, leaves, targets = slice_from_x([np.float32(3.0), np.float32(5.0)])
    memo = structure.slice_trace(state.entries, leaves, targets)
    _assert_same_slice(memo, lowering.slice_trace(state.entries, leaves, targets))
    assert len(memo.const_vals) == 1


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_gradients_on_a_repeated_structure_are_the_new_values(scale):
    x = tf.Variable([1.0, 2.0])
    for step in range(3):
        x.assign([scale * (step + 1), 2.0])
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(x * x * 3.0)
        got = tape.gradient(y, x).numpy()
        np.testing.assert_allclose(got, 6.0 * x.numpy())


def test_a_source_computed_inside_the_trace_repeats():
    # gradient with respect to an intermediate tensor: its slot is perturbed (Step.adds)
    for value in (1.0, 2.0, 3.0):
        x = tf.constant(value)
        with tf.GradientTape() as tape:
            tape.watch(x)
            h = x * x
            y = h * h
        assert float(tape.gradient(y, h)) == pytest.approx(2 * value**2)


def test_a_variable_read_twice_repeats():
    v = tf.Variable(2.0)
    for value in (2.0, 3.0, 4.0):
        v.assign(value)
        with tf.GradientTape() as tape:
            y = v * v + v
        assert float(tape.gradient(y, v)) == pytest.approx(2 * value + 1)


def test_a_new_shape_on_the_same_structure():
    for n in (2, 3, 2):
        x = tf.constant(np.arange(n, dtype=np.float32))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.sin(x))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(np.arange(n, dtype=np.float32)), rtol=1e-6)


def test_an_op_without_a_gradient_still_raises_on_a_repeat():
    for _ in range(2):
        x = tf.constant([1.0, 2.0, 3.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.truncatemod(x, 2.0))  # TF registers no gradient for TruncateMod
        with pytest.raises(LookupError):
            tape.gradient(y, x)


def test_the_sign_of_a_zero_literal_is_kept():
    # -0.0 == 0.0 and they hash alike: a cache of Python scalars (or a structure key holding literals) keyed by
    # value alone would hand one back for the other. IEEE's answer is the oracle (TF's own scalar cache conflates
    # them, so its answer depends on which zero it met first).
    x = tf.Variable([1.0, -2.0])
    for _ in range(3):  # eagerly, then a structure that repeats (compiled)
        for scale in (0.0, -0.0):
            with tf.GradientTape() as tape:
                y = x * scale
            grad = tape.gradient(y, x).numpy()
            np.testing.assert_array_equal(np.signbit(y.numpy()), np.signbit(np.array([1.0, -2.0]) * scale))
            np.testing.assert_array_equal(np.signbit(grad), np.signbit(np.full(2, scale)))


def test_a_target_that_is_its_source_is_not_an_unconnected_pair():
    """Both are empty traces: the key must tell `gradient(a, a)` (1) from an unconnected pair (None), whichever
    ran first (issue 16: a stale memo hit gave 1.0 for the unconnected pair)."""
    for order in (0, 1):
        structure.clear()
        a, x = tf.constant(1.0), tf.constant(3.0)
        results = {}
        for case in ((0, 1) if order == 0 else (1, 0)):
            with tf.GradientTape() as tape:
                tape.watch(a if case == 0 else x)
            results[case] = tape.gradient(a, a) if case == 0 else tape.gradient(tf.constant(7.0), x)
        assert results[0].numpy() == 1.0
        assert results[1] is None


def test_an_unread_variable_after_a_self_gradient_is_none():
    structure.clear()
    a = tf.constant(1.0)
    with tf.GradientTape() as t0:
        t0.watch(a)
    assert t0.gradient(a, a).numpy() == 1.0
    x, v0 = tf.constant(1.0), tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:  # the intro guide's control-flow example
        tape.watch(x)
        result = v0
    assert tape.gradient(result, x) is None
    assert tape.gradient(tf.constant(7.0), x) is None


def test_several_loose_sources_and_targets_keep_their_identities():
    structure.clear()
    a, b = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
    first = tape.gradient([a, b], [a, b])
    second = tape.gradient([a, a], [a, b])
    third = tape.gradient([b, b], [a, b])
    assert [g.numpy() for g in first] == [1.0, 1.0]
    assert second[0].numpy() == 2.0 and second[1] is None
    assert third[0] is None and third[1].numpy() == 2.0
