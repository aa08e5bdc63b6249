"""Control flow: tf.cond, case, switch_case, while_loop, scan, foldl, foldr, map_fn and vectorized_map.

With a known condition (eager code, or a Python value inside tf.function) they are Python control flow, as in
TF's eager mode, and the tapes record the ops that ran. Inside a tf.function trace, a branch or loop body whose
condition or inputs are traced is *captured*: run once on placeholders while a tape records every op, which makes
it a pure function of its inputs (the placeholders, the outer tensors it uses and the variables it reads). That
function goes to `jax.lax.cond` / `switch` / `while_loop` / `scan` or `jax.vmap`, and the construct is recorded
on the tapes outside as one op: gradients flow through it because JAX differentiates lax's control flow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from . import dispatch, dtypes, errors, tape as tape_lib
from .convert import to_array
from .registry import OpDef
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape, _Operators, new_tid
from .variable import OVERRIDES, Variable

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
    """What one body does to variables while it is captured (function._Trace forwards its assignments)."""

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
    """A captured body: ops in order, and where its inputs and outputs are."""

    steps: tuple[tuple[Any, dict, tuple[int, ...], tuple[int, ...], bool], ...]
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
        """(outputs, new variable values): a pure function, replayed by JAX inside lax's control flow."""
        env: dict[int, Any] = dict(zip(self.placeholders, placeholder_vals))
        env.update(external_vals)
        for tid, uid in self.reads.items():
            env[tid] = variable_vals[uid]
        for impl, params, in_tids, out_tids, multiple in self.steps:
            out = impl(*[env[t] if t else None for t in in_tids], **params)
            env.update(zip(out_tids, out if multiple else (out,)))
        return [env[t] for t in self.outputs], {uid: env[t] for uid, t in self.assigned.items()}


def _is_leaf(x: Any) -> bool:
    return isinstance(x, _Operators)


def _as_tensor(x: Any) -> Tensor:
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
            leaves, treedef = jax.tree_util.tree_flatten(result, is_leaf=_is_leaf)
            outs = [_as_tensor(x) for x in leaves]
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
    steps = tuple((e.op.impl, dict(e.params), e.in_tids, e.out_tids, e.multiple_results) for e in tape.entries)
    variables = {**tape.variables, **cap.assigned}
    return Body(steps, tuple(a._tid for a in placeholders), externals, reads, variables,
                dict(cap.latest), tuple(o._tid for o in outs),
                tuple((tuple(o._value.shape), o._value.dtype) for o in outs), treedef)


def _traced(*values: Any) -> bool:
    return any(isinstance(getattr(v, "_value", v), jax.core.Tracer) for v in values)


def symbolic(value: Any) -> Any:
    """`value` as a tracer of the tf.function trace being built, even where it is a constant.

    A trace folds ops on constants (function._tracing), so a loop variable started from `tf.constant(0)` would
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


def _trace() -> Any:
    return OVERRIDES.trace


class _Inputs(NamedTuple):
    """The operands of a captured construct: outer tensors by id, then the variables it reads or assigns."""

    external_tids: tuple[int, ...]
    external_vals: tuple[Any, ...]
    variables: tuple[Variable, ...]


def _inputs(bodies: Sequence[Body]) -> _Inputs:
    externals: dict[int, Any] = {}
    variables: dict[int, Variable] = {}
    for b in bodies:
        externals.update(b.externals)
        variables.update(b.variables)
    return _Inputs(tuple(externals), tuple(externals.values()), tuple(variables.values()))


def _run_recorded(name: str, impl: Callable, leading: Sequence[Tensor], inputs: _Inputs,
                  assigned: Sequence[Variable], has_gradient: bool = True, forward_impl: Callable | None = None,
                  ) -> list[EagerTensor]:
    """Runs `impl(*leading, *externals, *variable values)` -> (outputs..., assigned values...), records it on
    the tapes outside as one op, and assigns the variables it changed (through the trace: still no write)."""
    reads = [v._read() for v in inputs.variables]  # leaves on the tapes outside, as any read
    vals = (*[t._value for t in leading], *inputs.external_vals, *[value for _, value in reads])
    outs = (forward_impl or impl)(*vals)
    tensors = [EagerTensor(o) for o in outs]
    tapes = tape_lib.STACK.tapes
    if tapes:
        opdef = OpDef(name, impl, op_type=name.rsplit(".", 1)[-1], jit=False, has_gradient=has_gradient,
                      no_gradient="" if has_gradient else _WHILE_NEEDS_BOUND)
        tids = (*[t._tid for t in leading], *inputs.external_tids, *[tid for tid, _ in reads])
        dispatch.record(tapes, opdef, (), tids, vals, tuple(tensors), True)
    n = len(tensors) - len(assigned)
    for variable, tensor in zip(assigned, tensors[n:]):
        variable._set(tensor._value, False, tensor._tid)
    return tensors[:n]


def _unpack(flat: Sequence[Any], inputs: _Inputs, n_leading: int) -> tuple[Sequence[Any], dict, dict]:
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


def _capture_each(fns: Sequence[Callable], placeholders: Sequence[Tensor], trace: Any, star: bool = True
                  ) -> list[Body]:
    snapshot = _Snapshot(trace)
    bodies = []
    for fn in fns:
        bodies.append(capture(fn, placeholders, trace, star))
        snapshot.restore()
    return bodies


def _check_same_outputs(bodies: Sequence[Body], what: str) -> None:
    first = bodies[0]
    for b in bodies[1:]:
        if b.treedef != first.treedef:
            raise ValueError(f"{what} must return the same structure: got {first.treedef} and {b.treedef}.")


def _assigned_union(bodies: Sequence[Body]) -> list[Variable]:
    union: dict[int, Variable] = {}
    for b in bodies:
        for uid in b.assigned:
            union[uid] = b.variables[uid]
    return list(union.values())


# -- conditionals ------------------------------------------------------------------------------------------------


def cond(pred: Any, true_fn: Callable | None = None, false_fn: Callable | None = None, name: str | None = None
         ) -> Any:
    """`true_fn()` if `pred` else `false_fn()` (`tf.cond`); a traced `pred` becomes `jax.lax.cond`."""
    if true_fn is None or false_fn is None:
        raise TypeError("tf.cond requires both true_fn and false_fn: callables returning the same structure.")
    if not _traced(pred):
        return true_fn() if bool(pred) else false_fn()
    return _switch(_as_tensor(pred), [false_fn, true_fn], "cond")


def switch_case(branch_index: Any, branch_fns: Any, default: Callable | None = None, name: str = "switch_case"
                ) -> Any:
    """`branch_fns[branch_index]()`, or `default()` out of range (the last branch if no default) (`tf.switch_case`).

    Args:
      branch_index: an integer scalar tensor; traced inside tf.function, the call becomes `jax.lax.switch`.
      branch_fns: callables, or (key, callable) pairs or a {key: callable} dict whose int keys are 0..n-1.
      default: called when `branch_index` is out of range.
      name: accepted and ignored.

    Returns:
      What the chosen branch returns.

    Raises:
      TypeError: `branch_index` is not an integer tensor, or an entry is not a callable or an (int, callable) pair.
      ValueError: `branch_fns` is empty, or its keys are not the contiguous range 0..n-1.

    >>> import tapejax as tf
    >>> print(tf.switch_case(tf.constant(1), {1: lambda: tf.constant(20.0), 0: lambda: tf.constant(10.0)}))
    tf.Tensor(20.0, shape=(), dtype=float32)
    """
    fns = _branches(branch_index, branch_fns)
    default = default or fns[-1]
    if not _traced(branch_index):
        i = int(branch_index)
        return fns[i]() if 0 <= i < len(fns) else default()
    index = _as_tensor(branch_index)
    clamped = OPERATORS["where"](
        OPERATORS["math.logical_and"](index >= 0, index < len(fns)), index, len(fns))
    return _switch(clamped, [*fns, default], "switch_case")


def _branches(branch_index: Any, branch_fns: Any) -> list[Callable]:
    """tf.switch_case's arguments checked as TF checks them; the branch functions in key order."""
    if not isinstance(branch_index, Tensor | Variable):
        raise TypeError(f"'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(f"'branch_index' must be an integer Tensor, got {branch_index.dtype}")
    if not branch_fns:
        raise ValueError("Must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, list | tuple | dict):
        raise TypeError("'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(f) for f in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'branch_fns' must be a 2-tuple. Received {pair}.")
        if not isinstance(pair[0], int):
            raise TypeError(f"key must be a Python `int`, got {type(pair[0])}")
        if not callable(pair[1]):
            raise TypeError(f"fn for key {pair[0]} must be callable.")
    keys = sorted(k for k, _ in pairs)
    if keys != list(range(len(pairs))):  # a missing key has no position in lax.switch: TF refuses it too
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to {len(pairs)}) but found "
                         f"{{{','.join(map(str, keys))}}}")
    return [f for _, f in sorted(pairs, key=lambda pair: pair[0])]


def case(pred_fn_pairs: Any, default: Callable | None = None, exclusive: bool = False, strict: bool = False,
         name: str = "case") -> Any:
    """The function of the first true predicate, else `default` (`tf.case`).

    Args:
      pred_fn_pairs: (scalar bool tensor, callable) pairs, tested in order (or a dict of them).
      default: called when no predicate is true. Without one, the last pair's function is the default and one
        of the predicates must be true.
      exclusive: whether at most one predicate (of those before the default) may be true.
      strict: accepted and ignored.
      name: accepted and ignored.

    Returns:
      What the chosen function returns.

    Raises:
      TypeError: an entry is not a (bool tensor, callable) pair.
      InvalidArgumentError: with no default, no predicate is true; with `exclusive`, more than one is. Inside
        tf.function, when the step runs (its variables are then left unchanged).

    >>> import tapejax as tf
    >>> x = tf.constant(0.5)
    >>> print(tf.case([(x < 0, lambda: -x), (x < 1, lambda: x * 10.0)], default=lambda: x))
    tf.Tensor(5.0, shape=(), dtype=float32)
    >>> try:
    ...     tf.case([(x < 0, lambda: -x)])
    ... except tf.errors.InvalidArgumentError as e:
    ...     print(e)  # doctest: +NORMALIZE_WHITESPACE
    Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data:
    b'Input error: None of conditions evaluated as True:' False
    """
    pairs = _predicate_pairs(pred_fn_pairs)
    preds = [p for p, _ in pairs]
    if default is None:
        # TF: the last pair's function is the default, run only if its predicate (so one of them) is true
        _check_predicates(preds, "Input error: None of conditions evaluated as True:", lambda bits: bits.sum() > 0)
        pairs, default = pairs[:-1], pairs[-1][1]
    if exclusive and len(pairs) > 1:
        _check_predicates([p for p, _ in pairs], "Input error: exclusive=True: more than 1 conditions "
                          f"({', '.join('?' * len(pairs))}) evaluated as True:", lambda bits: bits.sum() <= 1)
    result: Callable = default
    for pred, fn in reversed(pairs):
        result = (lambda p, f, rest: lambda: cond(p, f, rest))(pred, fn, result)
    return result()


def _predicate_pairs(pred_fn_pairs: Any) -> list[tuple[Tensor, Callable]]:
    """tf.case's pairs checked as TF checks them: each a (bool tensor, callable) 2-tuple."""
    if not isinstance(pred_fn_pairs, list | tuple | dict):
        raise TypeError(f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}")
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if not isinstance(pred, Tensor | Variable):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if not pred.dtype.is_bool:
            raise TypeError(f"pred must be Tensor of type bool, got one of type {pred.dtype.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred} must be callable.")
    return pairs


def _check_predicates(preds: Sequence[Any], summary: str, passes: Callable[[Any], Any]) -> None:
    """TF's Assert on tf.case's predicates: InvalidArgumentError unless `passes(bits)`, bits the predicates as
    0/1. Known now (eager code), it raises now; traced, it is a checkify check, which tf.function turns into an
    error raised when the step runs, before any variable is written."""
    values = [_as_tensor(p)._value for p in preds]
    trace = _trace()
    if trace is None or not (trace.captures or _traced(*values)):
        bits = [bool(v) for v in values]
        if not passes(np.asarray(bits, np.int32)):
            raise errors.InvalidArgumentError(
                None, None, f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
                f"b'{summary}'\n{', '.join(map(str, bits))}")
        return

    def check(*values: Any) -> tuple:
        bits = jnp.stack([jnp.reshape(v, ()) for v in values]).astype(jnp.int32)
        checkify.check(passes(bits), f"assertion failed: [{summary}] {{}}", bits)
        return ()

    if trace.captures:
        # inside a traced branch or loop body: a step of the captured body, so it checks when the body runs
        tids = tuple(p._tid if isinstance(p, Tensor) else new_tid() for p in preds)
        opdef = OpDef("control_flow.Assert", check, op_type="Assert", jit=False)
        dispatch.record(tape_lib.STACK.tapes[:1], opdef, (), tids, tuple(values), (), True)
    else:
        check(*values)


def _switch(index: Tensor, fns: Sequence[Callable], name: str) -> Any:
    trace = _trace()
    bodies = _capture_each(fns, [], trace)
    _check_same_outputs(bodies, f"the branches of tf.{name}")
    inputs = _inputs(bodies)
    assigned = _assigned_union(bodies)

    def impl(*flat: Any) -> tuple:
        (i,), external_vals, variable_vals = _unpack(flat, inputs, 1)

        def branch(body: Body) -> Callable[[], tuple]:
            def run() -> tuple:
                outs, new = body.run((), external_vals, variable_vals)
                return (*outs, *[new.get(v._uid, variable_vals[v._uid]) for v in assigned])
            return run

        i = jnp.reshape(i, ()).astype(jnp.int32)
        return tuple(jax.lax.switch(i, [branch(b) for b in bodies]))

    outs = _run_recorded(f"control_flow.{name}", impl, [index], inputs, assigned)
    return jax.tree_util.tree_unflatten(bodies[0].treedef, outs)


# -- loops ---------------------------------------------------------------------------------------------------------


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None, _names: Sequence[str] | None = None,
               _line: int | None = None) -> Any:
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (`tf.while_loop`), at most
    `maximum_iterations` times. Traced, it is `jax.lax.while_loop`; under a tape it needs `maximum_iterations`
    to be reverse-differentiable (it then runs as a masked `jax.lax.scan`)."""
    star = isinstance(loop_vars, list | tuple)
    call = (lambda f, v: f(*v)) if star else (lambda f, v: f(v))
    leaves, treedef = jax.tree_util.tree_flatten(loop_vars, is_leaf=_is_leaf)
    trace = _trace()
    if trace is None or not (_traced(*leaves) or _traced(call(cond, loop_vars))):
        return _python_while(cond, body, loop_vars, maximum_iterations, call)
    tensors = [_as_tensor(x) for x in leaves]
    placeholders = [EagerTensor(symbolic(t._value)) for t in tensors]  # never the initial values: see symbolic
    structured = jax.tree_util.tree_unflatten(treedef, placeholders)
    cond_body, loop_body = _capture_each(
        [lambda *_: call(cond, structured), lambda *_: call(body, structured)], placeholders, trace)
    _check_loop_outputs(tensors, loop_body, treedef, _names, _line)
    inputs = _inputs([cond_body, loop_body])
    carried = [loop_body.variables[uid] for uid in loop_body.assigned]
    n = len(tensors)
    bound = None if maximum_iterations is None else maximum_iterations

    def parts(flat: Sequence[Any]) -> tuple:
        loop_vals, external_vals, variable_vals = _unpack(flat, inputs, n)
        state = (tuple(loop_vals), tuple(variable_vals[v._uid] for v in carried))

        def with_state(s: tuple) -> dict:
            return {**variable_vals, **{v._uid: x for v, x in zip(carried, s[1])}}

        def keep_going(s: tuple) -> Any:
            return jnp.reshape(cond_body.run(s[0], external_vals, with_state(s))[0][0], ()).astype(bool)

        def step(s: tuple) -> tuple:
            outs, new = loop_body.run(s[0], external_vals, with_state(s))
            return (tuple(jnp.asarray(o, x.dtype) for o, x in zip(outs, s[0])),  # drops weak types
                    tuple(new.get(v._uid, x) for v, x in zip(carried, s[1])))

        return state, keep_going, step

    def forward(*flat: Any) -> tuple:
        state, keep_going, step = parts(flat)
        if bound is None:
            final = jax.lax.while_loop(keep_going, step, state)
        else:
            def counted(s: tuple) -> Any:
                return jnp.logical_and(s[0] < bound, keep_going(s[1]))
            final = jax.lax.while_loop(counted, lambda s: (s[0] + 1, step(s[1])), (jnp.int32(0), state))[1]
        return (*final[0], *final[1])

    def masked_scan(*flat: Any) -> tuple:
        state, keep_going, step = parts(flat)

        def masked(s: tuple, _: Any) -> tuple:
            go = keep_going(s)
            new = step(s)
            return jax.tree_util.tree_map(lambda a, b: jnp.where(go, a, b), new, s), None

        final = jax.lax.scan(masked, state, None, length=int(bound))[0]
        return (*final[0], *final[1])

    static_bound = bound is not None and not _traced(bound)

    # The loop runs as a while_loop; differentiated (on any tape, inside or outside tf.function), its JVP is the
    # masked scan's when the trip count is bounded, which JAX can also transpose for reverse mode. Unbounded,
    # forward mode still works; reverse mode raises the LookupError naming maximum_iterations.
    @jax.custom_jvp
    def loop(*flat: Any) -> tuple:
        return forward(*flat)

    @loop.defjvp
    def loop_jvp(primals: tuple, tangents: tuple) -> tuple:
        return jax.jvp(masked_scan if static_bound else forward, primals, tangents)

    if not static_bound:
        trace.unbounded_loops = True  # a tape outside the function cannot differentiate through it either
    outs = _run_recorded("control_flow.While", loop, tensors, inputs, carried, has_gradient=static_bound)
    return jax.tree_util.tree_unflatten(treedef, outs)


def _python_while(cond: Callable, body: Callable, loop_vars: Any, maximum_iterations: Any, call: Callable) -> Any:
    """TF's eager while_loop: a Python loop, each iteration's ops recorded by the tapes."""
    i = 0
    bound = None if maximum_iterations is None else int(maximum_iterations)
    while (bound is None or i < bound) and bool(call(cond, loop_vars)):
        new = call(body, loop_vars)
        if isinstance(loop_vars, list | tuple):
            new = new if isinstance(new, list | tuple) else (new,)
            loop_vars = type(loop_vars)(*new) if hasattr(loop_vars, "_fields") else type(loop_vars)(new)
        else:
            loop_vars = new
        i += 1
    return loop_vars


def _check_loop_outputs(tensors: Sequence[Tensor], loop_body: Body, treedef: Any,
                        names: Sequence[str] | None = None, line: int | None = None) -> None:
    """TF's rule: a loop variable keeps its structure, dtype and shape from one iteration to the next. `names`
    and `line` are AutoGraph's: the variables' names and the line of the `while`/`for` they come from."""
    if len(loop_body.outputs) != len(tensors):
        raise ValueError(f"The body of tf.while_loop must return the structure of loop_vars ({treedef}); it "
                         f"returned {loop_body.treedef}.")
    where = f" (the loop on line {line})" if line is not None else ""
    for i, (t, (shape, dtype)) in enumerate(zip(tensors, loop_body.out_avals)):
        what = f"'{names[i]}'" if names else f"Loop variable {i}"
        if t._value.dtype != dtype:
            raise TypeError(f"{what} has dtype {t.dtype.name} before the loop, but dtype "
                            f"{dtypes.from_numpy(dtype).name} after one iteration{where}. Cast it in the body "
                            "(tf.cast) so it keeps one dtype.")
        if tuple(t._value.shape) != tuple(shape):
            raise ValueError(f"{what} has shape {t.shape} before the loop, but shape {TensorShape(shape)} after "
                             f"one iteration{where}. A loop variable must keep its shape inside tf.function: "
                             "pad it to a fixed size, or collect per-iteration values with tf.scan or tf.map_fn.")


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
         swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """The running results of `acc = fn(acc, elem)` over the first axis of `elems`, stacked (`tf.scan`)."""
    return _scan(fn, elems, initializer, reverse, keep="all")


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: str | None = None) -> Any:
    """The final `acc = fn(acc, elem)` over the first axis of `elems`, left to right (`tf.foldl`)."""
    return _scan(fn, elems, initializer, False, keep="last")


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name: str | None = None) -> Any:
    """Like foldl, right to left (`tf.foldr`)."""
    return _scan(fn, elems, initializer, True, keep="last")


def _scan(fn: Callable, elems: Any, initializer: Any, reverse: bool, keep: str) -> Any:
    elem_leaves, elem_tree = jax.tree_util.tree_flatten(elems, is_leaf=_is_leaf)
    elem_tensors = [_as_tensor(x) for x in elem_leaves]
    n = elem_tensors[0].shape[0]
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is None:
        first, order = order[0], order[1:]
        initializer = jax.tree_util.tree_unflatten(elem_tree, [t[first] for t in elem_tensors])
        start = [initializer]
    else:
        start = []
    init_leaves, init_tree = jax.tree_util.tree_flatten(initializer, is_leaf=_is_leaf)
    init_tensors = [_as_tensor(x) for x in init_leaves]
    trace = _trace()
    if trace is None or not _traced(*elem_tensors, *init_tensors):
        acc, history = initializer, list(start)
        for i in order:
            acc = fn(acc, jax.tree_util.tree_unflatten(elem_tree, [t[i] for t in elem_tensors]))
            history.append(acc)
        if keep == "last":
            return acc
        rows = history[::-1] if reverse else history
        return jax.tree_util.tree_map(lambda *xs: OPERATORS["stack"](list(xs)), *rows, is_leaf=_is_leaf)
    acc_ph = [EagerTensor(t._value) for t in init_tensors]
    elem_ph = [EagerTensor(t._value[0]) for t in elem_tensors]
    k = len(acc_ph)

    def step_fn(*ph: Any) -> Any:
        return fn(jax.tree_util.tree_unflatten(init_tree, ph[:k]), jax.tree_util.tree_unflatten(elem_tree, ph[k:]))

    (body,) = _capture_each([step_fn], acc_ph + elem_ph, trace)
    inputs = _inputs([body])
    carried = [body.variables[uid] for uid in body.assigned]
    skip = 0 if not start else 1

    def impl(*flat: Any) -> tuple:
        lead, external_vals, variable_vals = _unpack(flat, inputs, k + len(elem_tensors))
        accs, xs = tuple(lead[:k]), tuple(x[skip:] if not reverse else x[:x.shape[0] - skip] for x in lead[k:])

        def step(carry: tuple, x: tuple) -> tuple:
            acc, vs = carry
            outs, new = body.run((*acc, *x), external_vals,
                                 {**variable_vals, **{v._uid: y for v, y in zip(carried, vs)}})
            outs = tuple(jnp.asarray(o, a.dtype) for o, a in zip(outs, acc))
            return (outs, tuple(new.get(v._uid, y) for v, y in zip(carried, vs))), outs

        (final, vs), ys = jax.lax.scan(step, (accs, tuple(variable_vals[v._uid] for v in carried)), xs,
                                       reverse=reverse)
        if keep == "last":
            return (*final, *vs)
        if skip:
            ys = tuple(jnp.concatenate([a[None], y] if not reverse else [y, a[None]]) for a, y in zip(accs, ys))
        return (*ys, *vs)

    outs = _run_recorded("control_flow.Scan", impl, init_tensors + elem_tensors, inputs, carried)
    return jax.tree_util.tree_unflatten(init_tree, outs)


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: int | None = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True, name: str | None = None,
           fn_output_signature: Any = None) -> Any:
    """`fn` applied to each slice of `elems` along the first axis, results stacked (`tf.map_fn`)."""
    return _map(fn, elems, vectorized=False)


def vectorized_map(fn: Callable, elems: Any, fallback_to_while_loop: bool = True, warn: bool = True) -> Any:
    """`fn` applied to every slice of `elems` at once (`tf.vectorized_map`): `jax.vmap` when traced."""
    return _map(fn, elems, vectorized=True)


def _map(fn: Callable, elems: Any, vectorized: bool) -> Any:
    leaves, tree = jax.tree_util.tree_flatten(elems, is_leaf=_is_leaf)
    tensors = [_as_tensor(x) for x in leaves]
    trace = _trace()
    if trace is None or not _traced(*tensors):
        rows = [fn(jax.tree_util.tree_unflatten(tree, [t[i] for t in tensors])) for i in range(tensors[0].shape[0])]
        return jax.tree_util.tree_map(lambda *xs: OPERATORS["stack"](list(xs)), *rows, is_leaf=_is_leaf)
    ph = [EagerTensor(t._value[0]) for t in tensors]
    (body,) = _capture_each([lambda *p: fn(jax.tree_util.tree_unflatten(tree, p))], ph, trace)
    if body.assigned:
        raise ValueError("tf.map_fn and tf.vectorized_map bodies must not assign variables inside tf.function.")
    inputs = _inputs([body])

    def impl(*flat: Any) -> tuple:
        xs, external_vals, variable_vals = _unpack(flat, inputs, len(tensors))

        def one(*x: Any) -> tuple:
            return tuple(body.run(x, external_vals, variable_vals)[0])

        if vectorized:
            return jax.vmap(one)(*xs)
        return jax.lax.map(lambda x: one(*x), tuple(xs))

    outs = _run_recorded("control_flow.Map", impl, tensors, inputs, [])
    return jax.tree_util.tree_unflatten(body.treedef, outs)
