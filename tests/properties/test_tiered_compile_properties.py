"""Tiered compilation cannot change answers: a random program's value and gradient, taken in a tf.function called
five times (its quick executable for calls 1-3, the optimised one from call 4 on, queued at call 2), are what one
compile with XLA's defaults gives, to float tolerance; and bit for bit the same whether the optimised compile ran on
the background worker or on the caller's thread."""

from __future__ import annotations

import numpy as np
import random_programs as P
from hypothesis import given, note, settings
from test_gradient_properties import NO_EXPLAIN, SEED, watch_inputs
from test_history_properties import _same

import tapejax as tf
from tapejax._src import background, tiers


def _calls(program: P.Program, tiered: bool, worker: bool) -> list[list]:
    saved = tiers.FLAG.on, tiers.OPTIMISE_AT, tiers.SWITCH_AT, tiers.MIN_EQUATIONS, background.FLAG.on
    tiers.FLAG.on, tiers.OPTIMISE_AT, tiers.SWITCH_AT, tiers.MIN_EQUATIONS, background.FLAG.on = tiered, 2, 4, 0, worker
    try:
        leaves = program.leaves(tf)

        @tf.function
        def step(scale):
            with tf.GradientTape(watch_accessed_variables=program.watch_accessed_variables) as tape:
                watch_inputs(tape, program, leaves)
                nodes = program.tf_nodes(tf, leaves)
                target = tf.reduce_sum(nodes[-1]) if program.reduce else nodes[-1]
                target = target * tf.cast(scale, target.dtype)
            return [target, *tape.gradient(target, leaves)]

        runs = [step(tf.constant(1.0 + k / 8)) for k in range(5)]
        tf.debugging.wait_for_compiles()
    finally:
        tiers.FLAG.on, tiers.OPTIMISE_AT, tiers.SWITCH_AT, tiers.MIN_EQUATIONS, background.FLAG.on = saved
    return [[None if a is None else np.asarray(a) for a in run] for run in runs]


@settings(phases=NO_EXPLAIN, max_examples=25)
@given(program=P.programs())
def test_tiered_compilation_gives_one_compiles_answers(program):
    note(f"session seed: {SEED}")
    worker = _calls(program, True, True)
    caller = _calls(program, True, False)
    once = _calls(program, False, False)
    for k, (a, b, c) in enumerate(zip(worker, caller, once)):
        assert len(a) == len(b) and all((x is None) == (y is None) for x, y in zip(a, b))
        for x, y in zip(a, b):
            if x is not None:
                np.testing.assert_array_equal(x, y, err_msg=f"call {k + 1}: the worker against the caller")
        _same(a, c, program.rtol, f"call {k + 1} against one default compile")
