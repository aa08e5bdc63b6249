"""One trace of a tf.function: a Python step traced once by `jax.jit`, with Tensors wrapping tracers.

Variables are functionalised (DESIGN, "Outside the tape"): the values of the variables a trace reads are inputs
of the jitted function and the values it assigns are outputs, written back after the call. Inside a trace,
variable reads, assignments and creations go through the `_Trace` (variable.CONTEXT.trace), so nothing is
written until the compiled step has returned: an exception leaves every variable as it was. So does a value
check that fails when the step runs (tf.case's): a checkify check, whose error state the step returns and the
call raises (as InvalidArgumentError) before writing anything back.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jax
import jax.extend
import numpy as np
from jax._src import core as jax_core  # subjaxprs: the jaxprs nested in a jaxpr's equations
from jax._src.checkify import check_p  # checkify's check primitive, found in a traced step
from jax.experimental import checkify

from .context import CONTEXT
from . import background, caches, errors, tape as tape_lib, tiers
from .capture import is_leaf as _is_leaf, unbounded_loop_message
from .convert import to_array
from .registry import OpDef
from .signature import Template
from .tensor import Tensor, _Operators
from .variable import Variable


if TYPE_CHECKING:
    from .function import Function


# -- the trace ------------------------------------------------------------------------------------------------


class _Trace:
    """The variables' life inside one trace: reads see traced values, assignments replace them, nothing is
    written to a variable until the compiled call returns."""

    def __init__(self, variables: list[Variable], values: tuple, calls: Any, first: bool):
        self.inputs = {v._uid: v for v in variables}
        self.values: dict[int, Any] = dict(zip(self.inputs, values))
        self.initial = dict(self.values)  # the variables' values as the step received them
        self.assigned: dict[int, Variable] = {}
        self.discovered: dict[int, Variable] = {}
        self.created: list[Variable] = []
        self.first = first
        self._calls = calls
        self.used_calls = False
        self.captures: list[Any] = []  # the traced branches and loop bodies being captured (capture.py)
        self.unbounded_loops = False  # a while_loop without maximum_iterations: no reverse mode through it

    def read(self, variable: Variable) -> Any:
        uid = variable._uid
        value = self.values.get(uid)
        if value is None:  # outside the set: this trace is redone with it as an input
            self.discovered[uid] = variable
            value = self.values[uid] = variable._value
        elif uid in self.assigned and not self.captures and uid in self.initial:
            # A read after an assignment is a read of the variable, as in TF: its value is the assigned one, its
            # derivative that of the variable's input (state stops gradients, DESIGN invariant 2, also for a
            # tape outside the compiled call).
            initial = self.initial[uid]
            value = jax.lax.stop_gradient(value) + (initial - jax.lax.stop_gradient(initial))
        return value

    def assign(self, variable: Variable, value: Any, tid: int = 0) -> None:
        uid = variable._uid
        if uid not in self.inputs:
            self.discovered[uid] = variable
        self.values[uid] = value
        self.assigned[uid] = variable
        if self.captures:
            self.captures[-1].assign(variable, value, tid)

    def check_creation(self, variable: Variable) -> None:
        if not self.first:
            raise ValueError(
                "tf.function only supports singleton tf.Variables created on the first call. Make sure the "
                "tf.Variable is only created once or created outside tf.function.")
        self.created.append(variable)

    def call_count(self) -> Any:
        """This call's number, a traced input: random ops fold it into their key, so each call draws anew."""
        self.used_calls = True
        return self._calls


@contextlib.contextmanager


def _tracing(trace: _Trace | None, fold_constants: bool) -> Iterator[None]:
    """Installs `trace` on this thread. With `fold_constants`, ops with only concrete inputs are evaluated at
    trace time (so variables created on a first call get concrete initial values), the rest are staged into
    the jitted function; a trace with symbolic sizes cannot fold (a size has no value until the call)."""
    saved = CONTEXT.trace
    CONTEXT.trace = trace
    try:
        with tape_lib.recording_only([]), (jax.ensure_compile_time_eval() if fold_constants
                                           else contextlib.nullcontext()):
            yield
    finally:
        CONTEXT.trace = saved


@contextlib.contextmanager


def init_scope() -> Iterator[None]:
    """Lifts what runs inside it out of any tf.function trace and tape (`tf.init_scope`): variables built
    lazily by Keras layers and optimizers get concrete initial values."""
    saved = CONTEXT.trace
    CONTEXT.trace = None
    try:
        with tape_lib.recording_only([]), jax.ensure_compile_time_eval():
            yield
    finally:
        CONTEXT.trace = saved


# -- compiled functions ------------------------------------------------------------------------------------


class ConcreteFunction:
    """One trace of a tf.function: a compiled pure function of (tensor arguments, variable values, call number)
    returning (tensor outputs, assigned variable values), and how to put its results back together.

    Once traced (`finish`), it holds what a call needs and no more (the memory a retrace storm costs): the XLA
    executable, compiled ahead of time, and the traced jaxpr to replay under a tape; not JAX's jitted function,
    whose caches would keep the lowered module alive too. Its variables are held weakly, as TF's traces hold
    them: a deleted model's variables are freed, and a trace that read them is dead (`live_variables`)."""

    def __init__(self, function: Function, template: Template, variables: list[Variable], first: bool):
        self.function = function
        self.template: Template | None = template  # until traced
        self.n_tensors = template.n_tensors
        self.variables: list[Variable] | None = variables  # until traced; then weakly, in _refs
        self._refs: tuple = ()
        self.first = first
        self.assigned: list[int] = []  # indices in the variables
        self.discovered: dict[int, Variable] = {}
        self.used_calls = False
        self.created: list[Variable] = []
        self._out: Any = None  # (treedef, which leaves are tensors, the Python leaves)
        self._failure_tree: Any = None  # treedef of checkify's error state, set when traced
        self._pending: Any = None  # the jax trace, until compiled
        self._compiled: Any = None  # the executable (non-symbolic traces; tiers.py's)
        self._replay: Any = None  # a jitted, traceable replay of the trace (for tapes; a fallback for calls)
        self._jaxpr: Any = None  # (jaxpr, consts) of the trace
        self._exported: Any = None  # symbolic traces: the jax.export of the trace, compiled per size
        self._by_size: caches.Recent | None = None
        self._opdef: OpDef | None = None
        self.symbolic = False
        self.reverse_ok = True
        self.used: tuple[bool, ...] | None = None  # per flat input: whether the step reads it at all

    def _pure(self, tensor_vals: tuple, var_vals: tuple, calls: Any) -> tuple:
        trace = _Trace(self.variables, var_vals, calls, self.first)
        with _tracing(trace, fold_constants=not self.symbolic):
            args, kwargs = self.template.rebuild(tensor_vals)
            self.function._tracing_count += 1
            result = self.function._traced_function()(*args, **kwargs)
            leaves, treedef = jax.tree_util.tree_flatten(result, is_leaf=_is_leaf)
            outs, is_tensor, python = [], [], []
            for leaf in leaves:
                if isinstance(leaf, Tensor) and type(leaf._value) is np.ndarray:  # a string, computed at trace time
                    python.append(leaf)
                    is_tensor.append(False)
                elif isinstance(leaf, _Operators):
                    outs.append(leaf._value if isinstance(leaf, Tensor) else leaf._current())
                    is_tensor.append(True)
                elif isinstance(leaf, bool | int | float | complex | np.ndarray | np.generic):
                    outs.append(to_array(leaf, on_device=False))  # TF returns Python numbers as tensors
                    is_tensor.append(True)
                else:
                    python.append(leaf)
                    is_tensor.append(False)
        self._out = (treedef, tuple(is_tensor), tuple(python))
        index = {v._uid: i for i, v in enumerate(self.variables)}
        self.assigned = [index.get(uid) for uid in trace.assigned]  # None only in a trace redone (discovered)
        self.discovered = trace.discovered
        self.used_calls = trace.used_calls
        self.created = trace.created
        self.reverse_ok = not trace.unbounded_loops
        return tuple(outs), tuple(trace.values[uid] for uid in trace.assigned)

    def _unchecked(self, tensor_vals: tuple, var_vals: tuple, calls: Any) -> tuple:
        """`_pure` with no error state: what a step without run-time checks compiles."""
        outs, new_vals = self._pure(tensor_vals, var_vals, calls)
        return outs, new_vals, ()

    def _checked(self, tensor_vals: tuple, var_vals: tuple, calls: Any) -> tuple:
        """`_pure` with its run-time input checks (tf.case's, control_flow._check_predicates) functionalised by
        checkify: their error state comes back as extra outputs, none at all for a step without checks, so a step
        without them pays nothing for them (not even a device-to-host sync)."""
        failure, (outs, new_vals) = checkify.checkify(self._pure, errors=checkify.user_checks)(
            tensor_vals, var_vals, calls)
        leaves, self._failure_tree = jax.tree_util.tree_flatten(failure)
        return outs, new_vals, tuple(leaves)

    def _checkified(self, traced: Any) -> Any:
        """The traced step (`_unchecked`'s trace) with its run-time checks functionalised by checkify, as
        `_checked` would have traced it: from the jaxpr, without running the Python step again."""
        replay = _replay(traced.jaxpr, traced.out_tree)

        def checked(tensor_vals: tuple, var_vals: tuple, calls: Any) -> tuple:
            failure, (outs, new_vals, _) = checkify.checkify(replay, errors=checkify.user_checks)(
                tensor_vals, var_vals, calls)
            leaves, self._failure_tree = jax.tree_util.tree_flatten(failure)
            return outs, new_vals, tuple(leaves)

        return checked

    def _raise_failure(self, leaves: tuple) -> None:
        """Raises TF's InvalidArgumentError if a check failed in the call that returned `leaves` (this waits
        for the call to finish: the variables are written back only after it)."""
        failure = jax.tree_util.tree_unflatten(self._failure_tree, leaves).get_exception()
        if failure is not None:
            fmt = getattr(failure, "fmt_string", None)
            message = str(failure) if fmt is None else fmt.format(*failure.args, **failure.kwargs)
            raise errors.InvalidArgumentError(None, None, message)

    def trace(self, tensor_vals: tuple, var_vals: tuple, calls: Any, symbolic: tuple | None = None) -> None:
        """Traces the Python function once; with `symbolic` argument shapes (an input_signature's None
        dimensions, a reduce_retracing relaxed shape), through `jax.export`, so one trace serves every size,
        compiled per size."""
        # The Python step runs once, without checkify: most steps have no run-time checks, and checkify's
        # interpretation of a whole training step's jaxpr was a fifth of its trace. A step with checks has them
        # functionalised from its jaxpr (its Python is not run again).
        if symbolic is None:
            traced = jax.jit(self._unchecked).trace(tensor_vals, var_vals, calls)
            if _has_checks(traced.jaxpr.jaxpr):
                traced = jax.jit(self._checkified(traced)).trace(tensor_vals, var_vals, calls)
            else:
                self._failure_tree = jax.tree_util.tree_structure(())
            self.used = _live_inputs(traced.jaxpr.jaxpr, self._failure_tree.num_leaves)
            self._pending = traced  # compiled by finish(), once the trace is kept
            return
        self.symbolic = True
        specs = (symbolic, tuple(jax.ShapeDtypeStruct(v.shape, v.dtype) for v in var_vals),
                 jax.ShapeDtypeStruct((), np.uint32))
        traced = jax.jit(self._unchecked).trace(*specs)
        if _has_checks(traced.jaxpr.jaxpr):
            step = self._checkified(traced)
        else:
            self._failure_tree = jax.tree_util.tree_structure(())
            step = _replay(traced.jaxpr, traced.out_tree)
        self._exported = jax.export.export(jax.jit(step))(*specs)  # from the jaxpr: the Python step is not rerun

    def finish(self) -> None:
        """Keeps this trace: compiles it, and lets go of what only tracing needed."""
        if not self.symbolic:
            traced, self._pending = self._pending, None
            self._jaxpr = (traced.jaxpr.jaxpr, traced.jaxpr.consts, traced.out_tree)
            started = time.perf_counter()
            self._compiled = tiers.compile(traced.lower(), _equations(traced.jaxpr.jaxpr))
            self.function._detector.compiled(time.perf_counter() - started)
        else:
            self._by_size = caches.Recent("sizes of a relaxed trace", _MAX_SIZES)
        self._refs = tuple(weakref.ref(v) for v in self.variables)
        self.variables = self.template = None

    def live_variables(self) -> list[Variable] | None:
        """The variables this trace reads, or None if one was deleted (this trace cannot run again)."""
        variables = [r() for r in self._refs]
        return None if None in variables else variables

    def _replayed(self) -> Any:
        """A jitted replay of the trace, traceable (a tape's derivative traces it): the jaxpr, or the export."""
        if self._replay is None:
            if self.symbolic:
                self._replay = jax.jit(self._exported.call)
            else:
                jaxpr, consts, out_tree = self._jaxpr
                self._replay = jax.jit(_replay(jax.extend.core.ClosedJaxpr(jaxpr, consts), out_tree))
        return self._replay

    def _executable(self, tensor_vals: tuple, var_vals: tuple, calls: Any) -> Any:
        if not self.symbolic:
            return self._compiled
        sizes = tuple(v.shape for v in tensor_vals)
        compiled = self._by_size.get(sizes)
        if isinstance(compiled, concurrent.futures.Future):  # compiled in the background (`_compile_upcoming`)
            compiled = self._by_size[sizes] = self._finished(compiled)
        if compiled is None:  # a fresh jit per size: JAX's caches for it die with the executable
            self._compile_upcoming(sizes, tensor_vals, var_vals, calls)
            started = time.perf_counter()
            compiled = self._compile_size(jax.jit(self._exported.call).trace(tensor_vals, var_vals, calls).lower())
            self.function._detector.compiled(time.perf_counter() - started)
            self._by_size[sizes] = compiled
        return compiled

    def _compile_size(self, lowered: Any) -> Any:
        # a serialized module takes about 300 bytes an equation (an exported trace keeps no jaxpr)
        return tiers.compile(lowered, len(self._exported.mlir_module_serialized) // 300)

    def _compile_upcoming(self, sizes: tuple, tensor_vals: tuple, var_vals: tuple, calls: Any) -> None:
        """Queues the compile of the size the function expects next (`Function.expect`: Keras's partial last batch),
        lowered here (JAX's thread-local settings apply), so that it compiles while this call compiles its own."""
        upcoming, self.function.upcoming = self.function.upcoming, None
        if upcoming is None or not background.enabled():
            return
        shapes, dtypes = upcoming
        if (shapes == sizes or shapes in self._by_size or len(shapes) != len(tensor_vals)
                or dtypes != tuple(v.dtype for v in tensor_vals)):
            return
        try:
            specs = tuple(jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in zip(shapes, dtypes))
            lowered = jax.jit(self._exported.call).trace(specs, var_vals, calls).lower()
        except Exception:  # noqa: BLE001 (a size the trace does not take: that call raises, if it ever comes)
            return

        def compile_it() -> tuple[Any, float]:
            started = time.perf_counter()
            return self._compile_size(lowered), time.perf_counter() - started

        future = background.submit(compile_it)
        if future is not None:
            self._by_size[shapes] = future

    def _finished(self, future: concurrent.futures.Future) -> Any:
        """A background compile's executable (waiting for it), or None if it failed: compiled again, here."""
        try:
            compiled, seconds = future.result()
        except Exception:  # noqa: BLE001 (compiled again on the caller's thread, which raises a genuine error)
            return None
        self.function._detector.compiled(seconds)
        return compiled

    def __call__(self, tensor_vals: tuple, var_vals: tuple, calls: Any, variables: list[Variable]) -> Any:
        try:
            try:
                outs, new_vals, failure = self._executable(tensor_vals, var_vals, calls)(tensor_vals, var_vals,
                                                                                        calls)
            except (TypeError, ValueError):
                # an argument the executable was not compiled for (a weakly typed value, another device): the
                # traceable replay, which JAX compiles for it
                outs, new_vals, failure = self._replayed()(tensor_vals, var_vals, calls)
        except Exception as e:  # XLA's runtime errors (out of memory) as TF's, nothing written back
            if not errors.is_jax(e):
                raise
            raise errors.from_jax(f"{self.function.__name__}", e) from None
        if failure:
            self._raise_failure(failure)
        for i, value in zip(self.assigned, new_vals):
            variables[i]._value = value  # the write-back: only once the whole step has run
        return outs

    def assigned_variables(self, variables: list[Variable]) -> list[Variable]:
        return [variables[i] for i in self.assigned]

    def structure(self, outs: tuple) -> Any:
        treedef, is_tensor, python = self._out
        if treedef.num_nodes == 1 and is_tensor == (True,):  # a single tensor
            return outs[0]
        tensors, others = iter(outs), iter(python)
        leaves = [next(tensors) if t else next(others) for t in is_tensor]
        return jax.tree_util.tree_unflatten(treedef, leaves)

    def opdef(self) -> OpDef:
        """The op a call is recorded as on the tapes outside: a pure function of (arguments, variables)."""
        if self._opdef is None:
            n_args, n_vars = self.n_tensors, len(self._refs)

            def impl(*flat: Any) -> tuple:
                # checked when the call ran (ConcreteFunction.__call__); a replay for a derivative is not
                outs, new_vals, _ = self._replayed()(flat[:n_args], flat[n_args:n_args + n_vars], flat[-1])
                return (*outs, *new_vals)

            self._opdef = OpDef(f"function.{self.function.__name__}", impl, op_type="PartitionedCall", jit=False,
                                has_gradient=self.reverse_ok, no_gradient="" if self.reverse_ok else
                                unbounded_loop_message())
        return self._opdef


_MAX_SIZES = 64  # executables kept per relaxed (symbolic) trace, the least recently used forgotten


def _replay(closed: Any, out_tree: Any) -> Any:
    """A traced step's jaxpr as a function of the step's (tensor values, variable values, call number)."""
    run = jax.extend.core.jaxpr_as_fun(closed)

    def replay(*args: Any) -> Any:
        return jax.tree_util.tree_unflatten(out_tree, run(*jax.tree_util.tree_leaves(args)))

    return replay


def _all_equations(jaxpr: Any) -> Iterator[Any]:
    """A jaxpr's equations, then those of the jaxprs nested in them (branches, loop bodies, inner jits)."""
    yield from jaxpr.eqns
    for sub in jax_core.subjaxprs(jaxpr):
        yield from _all_equations(getattr(sub, "jaxpr", sub))


def _equations(jaxpr: Any) -> int:
    """A jaxpr's size for tiers.compile: its equations, nested ones included."""
    return sum(1 for _ in _all_equations(jaxpr))


def _has_checks(jaxpr: Any) -> bool:
    """Whether a jaxpr, or one nested in it, holds a checkify check."""
    return any(eqn.primitive is check_p for eqn in _all_equations(jaxpr))


def _live_inputs(jaxpr: Any, n_checks: int = 0) -> tuple[bool, ...]:
    """Per input of a jaxpr, whether an output (or an effect, like tf.print) depends on it: backwards liveness.
    The last `n_checks` outputs are run-time checks' error state: what only they read has no gradient, as in TF."""
    outvars = jaxpr.outvars[:len(jaxpr.outvars) - n_checks]
    live = {v for v in outvars if not isinstance(v, jax.extend.core.Literal)}
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(v in live for v in eqn.outvars):
            live.update(v for v in eqn.invars if not isinstance(v, jax.extend.core.Literal))
    return tuple(v in live for v in jaxpr.invars)
