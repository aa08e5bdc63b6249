"""Background compilation cannot change answers: a random tape program asked four times with background
compilation on (the second run queues the compile and runs op by op, the third and fourth run the executable) gives what
it gives with background compilation off (the second run compiles at once), in None-ness and to float tolerance."""

from __future__ import annotations

import numpy as np
import random_programs as P
from hypothesis import given, note, settings, strategies as st
from test_gradient_properties import NO_EXPLAIN, SEED
from test_history_properties import MODES, _ask, _fresh_state, _same

import tapejax as tf
from tapejax._src import background, executables


def _runs(program: P.Program, mode: str, on: bool) -> list[list]:
    _fresh_state()
    saved = background.FLAG.on, executables.POLICY.runs_while_compiling
    background.FLAG.on = on
    executables.POLICY.runs_while_compiling = 1  # the third run switches to the executable
    try:
        runs = [_ask(program, mode), _ask(program, mode)]
        tf.debugging.wait_for_compiles()
        runs += [_ask(program, mode), _ask(program, mode)]
    finally:
        background.FLAG.on, executables.POLICY.runs_while_compiling = saved
    return runs


@settings(phases=NO_EXPLAIN)
@given(program=P.programs(), mode=st.sampled_from(MODES))
def test_background_compilation_gives_the_synchronous_answers(program, mode):
    note(f"session seed: {SEED}")
    on = _runs(program, mode, True)
    off = _runs(program, mode, False)
    for r, (a, b) in enumerate(zip(on, off)):
        _same(a, b, program.rtol, f"{mode}, run {r + 1}")
    assert all(isinstance(x, (np.ndarray, type(None))) for run in on for x in run)
