"""The trace a tape records, and the per-thread stack of tapes that are recording.

A tape holds data, not closures: each entry names an op (a pure JAX function plus static params), the ids of
its inputs and outputs, and the input values (the residuals a replay needs for inputs that are not sources). One
exception, inside a trace only: a loop keeps the VJP its forward pass was linearized with (`pullback`), so that
its gradient does not run the loop's forward pass a second time (capture.run_recorded, sweep.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from .context import CONTEXT

if TYPE_CHECKING:
    import jax

    from .registry import OpDef


class TapeEntry(NamedTuple):
    """One recorded op application: `out_tids = op.impl(*in_vals, **params)`."""

    op: OpDef
    params: tuple[tuple[str, Any], ...]  # (name, hashable value) pairs in OpDef.static order, passed as keywords
    in_tids: tuple[int, ...]
    in_vals: tuple[jax.Array, ...]
    out_tids: tuple[int, ...]
    multiple_results: bool  # impl returns a tuple (even of length one)
    app: Any = None  # the deferred.Application computing the outputs, if the op was deferred
    # traced loops only: `pullback(output cotangents, None where none) -> input cotangents`, at the recorded inputs
    pullback: Any = None


class Tape:
    """The recording state behind a GradientTape (or a ForwardAccumulator).

    `tracked` is the set of tensor ids the tape follows: watched tensors, reads of watched variables and the
    float outputs of ops recorded from them. An op is recorded only if one of its inputs is tracked, which is
    TF's rule ("operations that touch watched values").
    """

    __slots__ = ("entries", "tracked", "reads", "variables", "watch_accessed_variables", "persistent",
                 "history", "__weakref__")  # weakly referenced by the accumulators nested in it (forward.py)

    records_all = False  # True for the tape that captures a traced branch or loop body (capture.py)

    def __init__(self, persistent: bool, watch_accessed_variables: bool):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self.entries: list[TapeEntry] = []
        self.tracked: set[int] = set()
        # variable uid -> [(read tid, read value)]: every read is its own leaf (DESIGN invariant 6).
        self.reads: dict[int, list[tuple[int, jax.Array]]] = {}
        # variable uid -> Variable, in the order they were first watched (`watched_variables()`).
        self.variables: dict[int, Any] = {}
        # What explains a None gradient later (debugging.py): ("assign", variable name, ids its new value came
        # from), ("reset",), ("stop_recording",). Rare events only: nothing is added per op.
        self.history: list[tuple] = []

    def watches_variable(self, variable: Any) -> bool:
        return variable._uid in self.variables or (self.watch_accessed_variables and variable.trainable)

    def watch_variable(self, variable: Any) -> None:
        self.variables.setdefault(variable._uid, variable)

    def record_read(self, variable: Any, tid: int, value: jax.Array) -> None:
        self.variables.setdefault(variable._uid, variable)
        self.reads.setdefault(variable._uid, []).append((tid, value))
        self.tracked.add(tid)

    def clear(self) -> None:
        self.entries = []
        self.tracked = set()
        self.reads = {}
        self.variables = {}
        self.history.append(("reset",))




def push(tape: Tape) -> None:
    CONTEXT.tapes.append(tape)


def pop(tape: Tape) -> None:
    """Removes `tape` from the recording stack wherever it is (a tape may stop recording out of order)."""
    tapes = CONTEXT.tapes
    for i in range(len(tapes) - 1, -1, -1):
        if tapes[i] is tape:
            del tapes[i]
            return


@contextlib.contextmanager
def recording_only(tapes: list[Tape]) -> Iterator[None]:
    """Inside the block, only `tapes` record on this thread (none, for `[]`); the stack is restored after."""
    saved = CONTEXT.tapes
    CONTEXT.tapes = tapes
    try:
        yield
    finally:
        CONTEXT.tapes = saved
