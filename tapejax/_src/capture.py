"""Capture: a Python branch or loop body, traced inside tf.function, as a pure function of its inputs.

Inside a tf.function trace, a branch or loop body whose condition or inputs are traced is *captured*: run once on
placeholders while a tape records every op, which makes it a pure function of its inputs (the placeholders, the
outer tensors it uses and the variables it reads). control_flow.py and loops.py hand that function to
`jax.lax.cond` / `switch` / `while_loop` / `scan` or `jax.vmap`, and `run_recorded` records the construct on the
tapes outside as one op: gradients flow through it because JAX differentiates lax's control flow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from .context import CONTEXT
from . import dispatch, lowering, sweep, tape as tape_lib
from .convert import to_array
from .registry import OpDef
from .tensor import EagerTensor, Tensor, _Operators, new_tid
from .variable import Variable

_WHILE_NEEDS_BOUND = (
    "Reverse-mode differentiation of a tf.while_loop traced inside tf.function needs a bound on its trip count: "
    "pass maximum_iterations=N (the loop then stops at N iterations at most, and its gradient can be computed).")


def unbounded_loop_message() -> str:
    return _WHILE_NEEDS_BOUND


# -- capture: a Python body as a pure function of its inputs ---------------------------------------------------


class _Everything(set):
    """The tracked ids of a capturing tape: every id."""

    def __contains__(self, tid: object) -> bool:
        return True


class _CaptureTape(tape_lib.Tape):
    __slots__ = ()
    records_all = True

    def __init__(self):
        super().__init__(persistent=True, watch_accessed_variables=True)
        self.tracked = _Everything()

    def watches_variable(self, variable: Any) -> bool:
        return True


class _Capture:
    """What one body does to variables while it is captured (concrete_function._Trace forwards its assignments)."""

    def __init__(self):
        self.tape = _CaptureTape()
        self.latest: dict[int, int] = {}  # variable uid -> id of the value last assigned in the body
        self.assigned: dict[int, Variable] = {}
        self.constants: dict[int, Any] = {}  # ids given to assigned values that were not tensors

    def read_tid(self, uid: int) -> int:
        return self.latest.get(uid, 0)

    def assign(self, variable: Variable, value: Any, tid: int) -> None:
        if not tid:
            tid = new_tid()
            self.constants[tid] = value
        self.latest[variable._uid] = tid
        self.assigned[variable._uid] = variable


class Body(NamedTuple):
    """A captured body: a `lowering.Program` whose inputs are the placeholders, then the outer tensors it uses,
    then its variable reads, and whose outputs are the body's, then the variables' final values."""

    program: lowering.Program
    placeholders: tuple[int, ...]
    externals: dict[int, Any]  # id -> value: outer tensors (and constants) the body uses
    reads: dict[int, int]  # read id -> variable uid
    variables: dict[int, Variable]  # uid -> variable, for every variable read or assigned
    assigned: dict[int, int]  # variable uid -> id of its final value
    outputs: tuple[int, ...]
    out_avals: tuple[tuple[tuple[int, ...], Any], ...]
    treedef: Any

    def run(self, placeholder_vals: Sequence[Any], external_vals: dict[int, Any],
            variable_vals: dict[int, Any]) -> tuple[list[Any], dict[int, Any]]:
        """(outputs, new variable values): a pure function, replayed by JAX inside lax's control flow (by the one
        interpreter of traces, lowering.replay_fn)."""
        leaves = [*placeholder_vals, *[external_vals[t] for t in self.externals],
                  *[variable_vals[uid] for uid in self.reads.values()]]
        values = lowering.replay_fn(self.program)(leaves, ())
        n = len(self.outputs)
        return values[:n], dict(zip(self.assigned, values[n:]))


def is_leaf(x: Any) -> bool:
    return isinstance(x, _Operators)


def as_tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        return x.read_value()
    return EagerTensor(to_array(x, on_device=not isinstance(x, jax.core.Tracer)))


def capture(fn: Callable, placeholders: Sequence[Tensor], trace: Any, star: bool = True) -> Body:
    """Runs `fn(*placeholders)` once, recording every op it runs, and returns it as a Body."""
    cap = _Capture()
    trace.captures.append(cap)
    try:
        with tape_lib.recording_only([cap.tape]):
            result = fn(*placeholders) if star else fn(placeholders[0])
            leaves, treedef = jax.tree_util.tree_flatten(result, is_leaf=is_leaf)
            outs = [as_tensor(x) for x in leaves]
    finally:
        trace.captures.pop()
    tape = cap.tape
    produced = {t for e in tape.entries for t in e.out_tids}
    own = set(a._tid for a in placeholders)
    reads = {tid: uid for uid, rs in tape.reads.items() for tid, _ in rs}
    externals: dict[int, Any] = dict(cap.constants)
    for e in tape.entries:
        for t, v in zip(e.in_tids, e.in_vals):
            if t and t not in produced and t not in own and t not in reads:
                externals.setdefault(t, v)
    for o in outs:
        if o._tid not in produced and o._tid not in own and o._tid not in reads:
            externals.setdefault(o._tid, o._value)
    variables = {**tape.variables, **cap.assigned}
    placeholder_tids = tuple(a._tid for a in placeholders)
    output_tids = tuple(o._tid for o in outs)
    program = _program(tape.entries, (*placeholder_tids, *externals, *reads), (*output_tids, *cap.latest.values()))
    return Body(program, placeholder_tids, externals, reads, variables, dict(cap.latest), output_tids,
                tuple((tuple(o._value.shape), o._value.dtype) for o in outs), treedef)


def _program(entries: Sequence[tape_lib.TapeEntry], input_tids: Sequence[int],
             output_tids: Sequence[int]) -> lowering.Program:
    """Every entry of a captured body, in order, as a Program over `input_tids` (no slicing: a body replays
    whole, side effects included)."""
    slot = {0: -1}  # an absent optional input (None)
    slot.update((t, i) for i, t in enumerate(input_tids))
    steps, n = [], len(input_tids)
    for e in entries:
        ins = tuple(slot[t] for t in e.in_tids)
        slot.update(zip(e.out_tids, range(n, n + len(e.out_tids))))
        n += len(e.out_tids)
        steps.append(lowering.Step(e.op, e.params, ins, e.multiple_results, len(e.out_tids), ()))
    return lowering.Program(tuple(steps), len(input_tids), 0, tuple(slot[t] for t in output_tids))


def traced(*values: Any) -> bool:
    return any(isinstance(getattr(v, "_value", v), jax.core.Tracer) for v in values)


def symbolic(value: Any) -> Any:
    """`value` as a tracer of the tf.function trace being built, even where it is a constant.

    A trace folds ops on constants (concrete_function._tracing), so a loop variable started from `tf.constant(0)` would
    reach a captured body as a concrete array, and Python decisions on it (an AutoGraph `if`) would be taken
    once at trace time. A graph tensor has no value while it is traced, in TF: this gives the body the same.
    """
    if isinstance(value, jax.core.Tracer):
        return value
    # jax exposes constant folding only as a switch-on context (ensure_compile_time_eval); switching it off
    # for one op needs its config state.
    from jax._src import config as jax_config  # noqa: PLC0415
    with jax_config.eager_constant_folding(False):
        return jax.lax.optimization_barrier(jnp.asarray(value))


def current_trace() -> Any:
    return CONTEXT.trace


class Inputs(NamedTuple):
    """The operands of a captured construct: outer tensors by id, then the variables it reads or assigns."""

    external_tids: tuple[int, ...]
    external_vals: tuple[Any, ...]
    variables: tuple[Variable, ...]


def inputs_of(bodies: Sequence[Body]) -> Inputs:
    externals: dict[int, Any] = {}
    variables: dict[int, Variable] = {}
    for b in bodies:
        externals.update(b.externals)
        variables.update(b.variables)
    return Inputs(tuple(externals), tuple(externals.values()), tuple(variables.values()))


def run_recorded(name: str, impl: Callable, leading: Sequence[Tensor], inputs: Inputs,
                  assigned: Sequence[Variable], has_gradient: bool = True, forward_impl: Callable | None = None,
                  ) -> list[EagerTensor]:
    """Runs `impl(*leading, *externals, *variable values)` -> (outputs..., assigned values...), records it on
    the tapes outside as one op, and assigns the variables it changed (through the trace: still no write)."""
    reads = [v._read() for v in inputs.variables]  # leaves on the tapes outside, as any read
    vals = (*[t._value for t in leading], *inputs.external_vals, *[value for _, value in reads])
    trace = CONTEXT.trace
    tapes = CONTEXT.tapes
    tids = (*[t._tid for t in leading], *inputs.external_tids, *[tid for tid, _ in reads])
    pullback = None
    if trace is not None and trace.captures:
        # inside a body being captured, the outputs are placeholders: running `impl` here would stage its side
        # effects (a tf.print in a branch) into the enclosing trace, where they would run once more
        outs = [symbolic(jnp.zeros(a.shape, a.dtype)) for a in jax.eval_shape(forward_impl or impl, *vals)]
    elif forward_impl is None and has_gradient and _differentiated(tapes, tids, vals):
        outs, pullback = _linearized(impl, vals)
    else:
        outs = (forward_impl or impl)(*vals)
    tensors = [EagerTensor(o) for o in outs]
    if tapes:
        opdef = OpDef(name, impl, op_type=name.rsplit(".", 1)[-1], jit=False, has_gradient=has_gradient,
                      no_gradient="" if has_gradient else _WHILE_NEEDS_BOUND)
        dispatch.record_call(opdef, tids, vals, tensors, tapes, pullback=pullback)
    n = len(tensors) - len(assigned)
    for variable, tensor in zip(assigned, tensors[n:]):
        variable._set(tensor._value, False, tensor._tid)
    return tensors[:n]


def _differentiated(tapes: Sequence[tape_lib.Tape], tids: Sequence[int], vals: Sequence[Any]) -> bool:
    """Whether a GradientTape (not a capturing tape) records this traced call: then its gradient will need the
    call's VJP at these inputs."""
    if not tapes or not any(isinstance(v, jax.core.Tracer) for v in vals):
        return False
    return any(not t.records_all and any(tid in t.tracked for tid in tids) for t in tapes)


def _linearized(impl: Callable, vals: Sequence[Any]) -> tuple[Sequence[Any], Callable | None]:
    """`impl(*vals)` and its VJP there, from one linearization (`jax.vjp`).

    A tape's gradient inside a trace replays the recorded ops under `jax.vjp`, and XLA's CSE merges that replay
    with the ops' first run, but not a loop's: the two `while` loops (one forward pass, one forward pass saving
    residuals) differ, so a traced RNN step ran and compiled every recurrent layer's forward pass twice. Computed
    here from `jax.vjp`, the outputs come from the loop that saves the residuals (XLA drops the residuals if no
    gradient reads them), and the gradient's sweep pulls back through this VJP (sweep.py, problem.Problem.run).
    """
    try:
        outs, vjp = jax.vjp(impl, *vals)
    except Exception:  # a body JAX cannot linearize while it runs (an effect it refuses): the plain forward pass
        return impl(*vals), None
    out_tree = jax.tree_util.tree_structure(outs)
    avals = [jax.ShapeDtypeStruct(o.shape, o.dtype) for o in jax.tree_util.tree_leaves(outs)]

    def pullback(cts: Sequence[Any]) -> tuple[Any, ...]:
        seeds = [sweep.zero_cotangent(a) if c is None else c for a, c in zip(avals, cts)]
        return vjp(jax.tree_util.tree_unflatten(out_tree, seeds))

    return outs, pullback


def unpack(flat: Sequence[Any], inputs: Inputs, n_leading: int) -> tuple[Sequence[Any], dict, dict]:
    n_ext = len(inputs.external_tids)
    leading = flat[:n_leading]
    external_vals = dict(zip(inputs.external_tids, flat[n_leading:n_leading + n_ext]))
    variable_vals = {v._uid: x for v, x in zip(inputs.variables, flat[n_leading + n_ext:])}
    return leading, external_vals, variable_vals


class _Snapshot:
    """The trace's variable values before a body is captured: each body starts from them."""

    def __init__(self, trace: Any):
        self.trace, self.values, self.assigned = trace, dict(trace.values), dict(trace.assigned)

    def restore(self) -> None:
        self.trace.values = dict(self.values)
        self.trace.assigned = dict(self.assigned)


def capture_each(fns: Sequence[Callable], placeholders: Sequence[Tensor], trace: Any, star: bool = True
                  ) -> list[Body]:
    snapshot = _Snapshot(trace)
    bodies = []
    for fn in fns:
        bodies.append(capture(fn, placeholders, trace, star))
        snapshot.restore()
    return bodies
