"""History cannot change answers (issue 16): a sequence of random tape programs gives, at every position, what
the same program gives in a fresh state (every cache cleared).

Each element of a sequence is a random program (random_programs.py) and a way of asking the tape: a plain gradient, a
target that is also a source, an unconnected target, a variable that is watched but never read, an intermediate
tensor as a source, a persistent tape asked twice, or nested tapes. Each element runs three times in the sequence
(its second run reuses the first one's memoized slice and compiles it; its third takes the plan of a repeated
gradient call, repeated.py, where the call is one it covers), then alone in a fresh state: the fast paths' caches
cleared (slices by structure, lowered programs and their executables, plans of repeated calls). The op-by-op
path's own compiled kernels are kept (each is one op's jitted function: recompiling them would only make the test
slow). The answers are None-or-array per source; they must agree exactly in None-ness and to float tolerance in
value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import random_programs as P
from hypothesis import given, note, settings, strategies as st
from test_gradient_properties import NO_EXPLAIN, SEED, watch_inputs

import tapejax as tf
from tapejax._src import executables, repeated, structure

MODES = ("plain", "target_is_source", "unconnected", "unread_variable", "intermediate", "persistent", "nested")


def _ask(program: P.Program, mode: str) -> list[Any]:
    """Runs `program` on a fresh tape and asks it in `mode`; returns every answer (None or a numpy array)."""
    leaves = program.leaves(tf)
    persistent = mode in ("persistent", "target_is_source", "intermediate")
    spare = tf.Variable(np.ones((2,), program.dtype))  # watched, never read
    with tf.GradientTape(persistent=persistent,
                         watch_accessed_variables=program.watch_accessed_variables) as outer:
        watch_inputs(outer, program, leaves)
        outer.watch(spare)
        if mode == "nested":
            with tf.GradientTape(watch_accessed_variables=program.watch_accessed_variables) as inner:
                watch_inputs(inner, program, leaves)
                target = program.run_tf(tf, leaves)
            inner_grads = inner.gradient(target, leaves)
            parts = [tf.reduce_sum(g * g) for g in inner_grads if g is not None]
            target = tf.add_n(parts) if parts else target
            answers = list(inner_grads)
        else:
            nodes = program.tf_nodes(tf, leaves)
            target = tf.reduce_sum(nodes[-1]) if program.reduce else nodes[-1]
            answers = []
    loose = tf.constant(np.ones((), program.dtype))  # on an empty tape: its trace has no entry at all
    with tf.GradientTape(persistent=True) as empty:
        empty.watch(loose)
    if mode == "target_is_source":
        answers += outer.gradient(target, [target, *leaves])
        answers += outer.gradient(leaves[0], [leaves[0], spare])
        answers.append(empty.gradient(loose, loose))
    elif mode == "unconnected":
        answers += outer.gradient(tf.constant(np.ones((), program.dtype)), [*leaves, spare])
        answers.append(empty.gradient(tf.constant(np.ones((), program.dtype)), loose))
    elif mode == "unread_variable":
        answers += outer.gradient(target, [spare, *leaves])
    elif mode == "intermediate":
        middle = nodes[len(program.inputs)] if program.steps else leaves[0]
        answers += outer.gradient(target, [*leaves, middle])
    elif mode == "persistent":
        answers += outer.gradient(target, leaves) + outer.gradient(target, leaves[::-1])
    else:
        answers += outer.gradient(target, leaves)
    return [None if a is None else np.asarray(a.numpy() if hasattr(a, "numpy") else a) for a in answers]


def _same(got: list[Any], fresh: list[Any], rtol: float, what: str) -> None:
    assert len(got) == len(fresh), what
    for i, (a, b) in enumerate(zip(got, fresh)):
        assert (a is None) == (b is None), f"{what}, answer {i}: {a!r} after history, {b!r} in a fresh state"
        if a is not None:
            assert a.shape == b.shape and a.dtype == b.dtype, f"{what}, answer {i}"
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"{what}, answer {i}")


def _fresh_state() -> None:
    structure.clear()
    executables.CACHE.clear()
    repeated.clear()


@settings(phases=NO_EXPLAIN)
@given(sequence=st.lists(st.tuples(P.programs(), st.sampled_from(MODES)), min_size=2, max_size=3))
def test_a_sequence_gives_each_program_its_fresh_answer(sequence):
    note(f"session seed: {SEED}")
    _fresh_state()
    history = [tuple(_ask(p, m) for _ in range(3)) for p, m in sequence]
    for k, ((program, mode), runs) in enumerate(zip(sequence, history)):
        _fresh_state()
        fresh = _ask(program, mode)
        for r, got in enumerate(runs):
            _same(got, fresh, program.rtol, f"element {k} ({mode}), run {r + 1}")


@settings(phases=NO_EXPLAIN)
@given(program=P.programs(max_inputs=2, kinds=(P.VARIABLE,), vary_watch_accessed_variables=False))
def test_a_repeated_training_step_gives_the_fresh_answer_every_run(program):
    """Variables only, asked the same way every run, as a training loop asks: from the third run on, a call that
    repeated.py covers is answered by the plan of the repeated call."""
    note(f"session seed: {SEED}")
    _fresh_state()
    runs = [_ask(program, "plain") for _ in range(4)]
    _fresh_state()
    fresh = _ask(program, "plain")
    for r, got in enumerate(runs):
        _same(got, fresh, program.rtol, f"run {r + 1}")
