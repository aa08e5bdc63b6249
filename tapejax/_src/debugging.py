"""Why is my gradient None? The reasons TF users meet (the guides' pitfalls), found on the tape.

TF answers a None gradient with silence. `explain_none(tape, target, source)` names the reason, and
`enable_none_gradient_warnings()` logs it whenever `GradientTape.gradient` returns None. The explanation reads
what the tape already keeps (its trace, its watched ids, its variable reads) and a short history of the rare
events that cut gradients (assignments, `reset`, `stop_recording`); nothing is added to the per-op path.
"""

from __future__ import annotations

from typing import Any

from . import caches, lowering, tape as tape_lib
from .problem import is_float
from .tensor import Tensor
from .variable import Variable

_WARNINGS = {"enabled": False}


def clear_caches() -> None:
    """Forgets every memo, compiled executable and inferred shape, so the next call runs as in a fresh process
    (a tapejax extension, for tests and for memory: tapejax's caches are bounded, and all of them are caches of
    the plain computation, so clearing never changes an answer).

    >>> import tapejax as tf
    >>> tf.debugging.clear_caches()
    """
    caches.clear_all()

NEVER_WATCHED = (
    "the tensor was never watched by this tape: call tape.watch(x) inside the `with tf.GradientTape()` block "
    "(a tape watches trainable variables by itself, not tensors). If `x` was a tf.Variable that became a tensor "
    "through `x = x + 1`, the variable was replaced by a tensor: use `x.assign_add(1)` to keep the variable."
)
NEVER_READ = (
    "the variable was never read while the tape was recording: compute the target from it inside the "
    "`with tf.GradientTape()` block."
)
NOT_TRAINABLE = (
    "the variable is not trainable (trainable=False), and a tape watches only the trainable variables it reads: "
    "call tape.watch(v)."
)
UNWATCHED_ACCESS = (
    "the tape was created with watch_accessed_variables=False and never watched this variable: call "
    "tape.watch(v)."
)
ASSIGNED = (
    "its value reached the target only through an assignment ({method}) on this tape: an assignment is not "
    "differentiable, so state stops gradients. Compute with the values instead (e.g. `x2 = x1 + x0`)."
)
STOPPED = " The tape also stopped recording (stop_recording) for a while: ops inside that block are not on it."
RESET = " The tape was also reset: what it recorded before `reset()` is gone."
NON_FLOAT_SOURCE = (
    "the source has dtype {dtype}: gradients flow only through floating-point (and complex) values; cast it "
    "with tf.cast(x, tf.float32) before the computation."
)
NON_FLOAT_TARGET = (
    "the target has dtype {dtype}: gradients flow only through floating-point (and complex) values."
)
TARGET_UNFOLLOWED = (
    "the target depends on no value this tape followed: it was computed outside the tape's recording (before "
    "the `with` block, inside stop_recording, or before a reset), or from values that left tapejax (numpy or "
    "Python, e.g. np.mean(x)) and came back as new constants. Keep the computation in tapejax ops inside the "
    "tape."
)
INTEGER_PATH = (
    "the path from the source to the target goes through an integer or bool value (a cast to an integer type, "
    "argmax, a comparison): such values carry no gradient."
)
UNCONNECTED = "the target does not depend on the source: none of the ops that use it lead to the target."
NONE_FROM_GRAD_FN = (
    "every path from the source to the target passes through a tf.custom_gradient whose grad_fn returned None "
    "for it (TF's 'no gradient'): return a gradient (or zeros) there instead."
)


def enable_none_gradient_warnings(enabled: bool = True) -> None:
    """Log the reason whenever GradientTape.gradient returns None for a source (a tapejax extension)."""
    _WARNINGS["enabled"] = bool(enabled)


def warnings_enabled() -> bool:
    return _WARNINGS["enabled"]


def explain_none(tape: Any, target: Any, source: Any) -> str | None:
    """Why `tape.gradient(target, source)` is None, in words; None if it is not None.

    A tapejax extension. On a non-persistent tape whose one gradient call has freed the trace, the
    explanations of that call's None gradients are kept and returned.

    >>> import tapejax as tf
    >>> x = tf.Variable(2.0)
    >>> y = tf.Variable(3.0)
    >>> with tf.GradientTape(persistent=True) as tape:
    ...     z = y * y
    >>> print(tape.gradient(z, x))
    None
    >>> tf.debugging.explain_none(tape, z, x).startswith("the variable was never read while the tape was")
    True
    """
    state = tape._tape
    if state is None:
        return tape._none_reasons.get(id(source), "this non-persistent tape was freed by its gradient call and "
                                      "that call gave this source a gradient; create it with persistent=True to "
                                      "ask again.")
    return reason(state, target, source)


def reason(state: tape_lib.Tape, target: Any, source: Any) -> str | None:
    """The reason on a live tape (`state`), or None if the gradient is connected."""
    hints = ""
    if any(event[0] == "stop_recording" for event in state.history):
        hints += STOPPED
    if any(event[0] == "reset" for event in state.history):
        hints += RESET
    if isinstance(source, Variable):
        variable = getattr(source, "_target", source)
        reads = state.reads.get(variable._uid)
        if not reads:
            for event in state.history:
                if event[0] == "assign" and event[2] == variable._uid:
                    return ASSIGNED.format(method=event[1]) + hints
            if variable._uid not in state.variables and state.watch_accessed_variables and not variable.trainable:
                return NOT_TRAINABLE
            if variable._uid not in state.variables and not state.watch_accessed_variables:
                return UNWATCHED_ACCESS
            return NEVER_READ + hints
        if not is_float(variable):
            return NON_FLOAT_SOURCE.format(dtype=variable.dtype.name)
        leaves = [tid for tid, _ in reads]
    elif isinstance(source, Tensor):
        if source._tid not in state.tracked:
            return NEVER_WATCHED + hints
        if not is_float(source):
            return NON_FLOAT_SOURCE.format(dtype=source.dtype.name)
        leaves = [source._tid]
    else:
        return f"the source is a {type(source).__name__}, not a tensor or variable: a tape follows only those."
    if not isinstance(target, Tensor | Variable):
        return f"the target is a {type(target).__name__}, not a tensor."
    if not is_float(target):
        return NON_FLOAT_TARGET.format(dtype=target.dtype.name)
    if isinstance(target, Variable) or target._tid not in state.tracked:
        return INTEGER_PATH if _through_integers(state, leaves) else TARGET_UNFOLLOWED
    try:
        sl = lowering.slice_trace(state.entries, leaves, [target._tid])
    except LookupError:
        return None  # connected, through an op without a gradient: not None, an error
    if sl.connected_targets:
        return None
    return (INTEGER_PATH if _through_integers(state, leaves) else UNCONNECTED) + hints


def _through_integers(state: tape_lib.Tape, leaves: list[int]) -> bool:
    """Whether an op that depends on the source produced an integer or bool value (where gradients stop)."""
    depends = set(leaves)
    for e in state.entries:
        if not depends.isdisjoint(e.in_tids):
            depends.update(e.out_tids)
            if not all(t in state.tracked for t in e.out_tids):
                return True
    return False
