"""The engine's per-thread state, in one object (TF keeps its tape stack and name scopes per thread too).

Everything that changes what an op does while it runs — which tapes record it, which values variable reads
return while a pure function is traced, which tf.function trace is in progress, the enclosing name scopes and
the random seed state — lives here, so that one thread's recording, tracing or scoping never leaks into
another's, and so that there is one place to look for hidden state.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any


class Context(threading.local):
    """The state of one thread (each thread sees its own attributes, initialised afresh).

    Attributes:
      tapes: the tapes recording on this thread, innermost last (tape.py).
      values: variable uid -> the array its reads return while a pure function of it is traced (variable.py:
        a custom gradient replayed by JAX).
      trace: the tf.function trace in progress on this thread, if any (function.py): while it is set, variables
        are read from, assigned in and created through it, so a compiled step touches no variable until it returns.
      name_scopes: the enclosing `tf.name_scope` names, innermost last.
      global_seed, seed_counter, seed_calls, entropy: `tf.random`'s seed state (ops/random.py).
      global_generator: `tf.random.get_global_generator()`'s generator, made on first use.
      strategies: the `tf.distribute` strategies whose `scope()` is entered, innermost last (tapejax/distribute).
      variable_creator: called as `(variable, synchronization, aggregation)` by every tf.Variable made while a
        strategy's scope is entered: the strategy mirrors it (a replicated sharding) and keeps its aggregation.
      replica: the `tf.distribute` replica context of the `strategy.run` being traced, or None (the default one).
    """

    def __init__(self):
        self.tapes: list[Any] = []
        self.values: dict[int, Any] = {}
        self.trace: Any = None
        self.name_scopes: list[str] = []
        self.global_seed: int | None = None
        self.seed_counter = 0  # ops without an op seed draw successive seeds after set_seed, as in TF
        self.seed_calls: dict[tuple[int, int], int] = {}
        self.entropy = int.from_bytes(os.urandom(4), "little")
        self.global_generator: Any = None
        self.strategies: list[Any] = []
        self.variable_creator: Any = None
        self.replica: Any = None


CONTEXT = Context()


def seed_snapshot() -> tuple:
    """This thread's random seed state, to trace again later with the same seeds (`seeds`)."""
    state = CONTEXT
    return (state.global_seed, state.entropy, state.seed_counter, dict(state.seed_calls))


@contextlib.contextmanager
def seeds(snapshot: tuple | None) -> Iterator[None]:
    """Runs a trace with the random seed state `snapshot` (None: the current one, left advanced)."""
    if snapshot is None:
        yield
        return
    state = CONTEXT
    saved = (state.global_seed, state.entropy, state.seed_counter, state.seed_calls)
    state.global_seed, state.entropy, state.seed_counter, calls = snapshot
    state.seed_calls = dict(calls)
    try:
        yield
    finally:
        state.global_seed, state.entropy, state.seed_counter, state.seed_calls = saved
