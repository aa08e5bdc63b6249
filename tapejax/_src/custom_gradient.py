"""tf.custom_gradient: a function with a hand-written gradient, recorded as one op lowered to jax.custom_vjp.

The decorated function runs once, recorded (as in TF); the call is then recorded as one entry on the tapes that
follow its inputs, and as identities of the forward pass's results on the others (docs/design.md, "Custom
gradients"). The entry's implementation is a `jax.custom_vjp` whose backward pass re-runs the user's function on
the residual inputs to get `grad_fn`, and calls it: everything the gradient needs is recomputed from the op's
inputs, so the entry is a pure JAX function (it replays, jits and vmaps like any op). Run eagerly, the sweep
calls the same `grad_fn` on concrete values instead (OpDef.backward), as TF does. Its forward-mode
implementation is the user's function itself: TF's ForwardAccumulator differentiates the computation and ignores
the custom gradient.

Variables the function reads are found while it runs; they become inputs of the op (their reads are leaves on
the tapes), and replays read the traced values in their place (variable.override_values).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero

from .context import CONTEXT
from . import dispatch, tape as tape_lib
from .convert import to_array
from .indexed_slices import IndexedSlices
from .gradient_tape import GradientTape
from .registry import OpDef
from .sweep import zero_cotangent
from .tensor import EagerTensor, Tensor
from .variable import Variable, override_values

_MISSING_VARIABLES_KEYWORD = (
    "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function uses variables: "
    "{variables}. Define it as `def grad_fn(*upstream, variables=None)` and return `(grad_xs, grad_vars)`, one "
    "gradient per variable."
)
_WRONG_GRADIENT_COUNT = (
    "custom_gradient function expected to return {expected} gradients, but returned {got} instead. grad_fn must "
    "return one gradient (or None) per input of the decorated function."
)
_WRONG_VARIABLE_GRADIENT_COUNT = (
    "Must return gradient for each variable from @custom_gradient grad_fn. It got {got} for {expected} "
    "variables: return `(grad_xs, grad_vars)` with one entry (or None) per variable in `variables`."
)


def _flatten(nest: Any) -> tuple[list[Any], Any]:
    return jax.tree_util.tree_flatten(nest, is_leaf=lambda x: x is None or isinstance(x, Tensor | Variable))


def custom_gradient(f: Callable | None = None) -> Callable:
    """Decorator to define a function with a custom gradient (`tf.custom_gradient`).

    `f(*x)` returns `(y, grad_fn)`; `grad_fn(*upstream)` returns one gradient per input (or
    `(grad_xs, grad_vars)`, with a `variables=` keyword, if `f` reads variables).

    >>> import tapejax as tf
    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return tf.math.log(1 + e), grad
    >>> x = tf.constant(100.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = log1pexp(x)
    >>> print(tape.gradient(y, x))
    tf.Tensor(1.0, shape=(), dtype=float32)

    Tensors the function captures from enclosing scopes (rather than takes as arguments) are inputs of the op
    without gradients, as in TF, so a custom gradient may be defined inside another's grad_fn.

    Eagerly, `grad_fn` runs on concrete values (it may call `.numpy()` or return None: no gradient), as in TF.

    Differences from TensorFlow: the decorated function is re-run (on the same inputs) when its gradient is
    computed. Inside `tf.function`, or when a gradient is differentiated again, `grad_fn` is traced once per
    input structure: values the function captures from enclosing scopes are those of that trace (pass values
    that change as arguments), and a None it returns is a zero gradient.
    """
    if f is None:
        return custom_gradient

    ops: dict[Any, OpDef] = {}

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        return _call(f, ops, args, kwargs)

    return decorated


def recompute_grad(f: Callable) -> Callable:
    """A function with `f`'s value and gradient whose gradient recomputes `f` (`tf.recompute_grad`).

    TF uses it to save memory: the forward pass keeps only its inputs, and the gradient runs `f` again under a
    tape. The gradient is `f`'s, for its tensor arguments and the trainable variables it reads.

    >>> import tapejax as tf
    >>> g = tf.recompute_grad(lambda x: tf.sin(x) * x)
    >>> x = tf.constant(1.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = g(x)
    >>> print(tape.gradient(y, x))
    tf.Tensor(1.3817732, shape=(), dtype=float32)

    Differences from TensorFlow: the forward pass is recorded like any custom gradient's (TF stops recording it),
    so memory is not saved; values and gradients are the same.
    """

    @custom_gradient
    def recomputed(*args: Any, **kwargs: Any) -> tuple[Any, Callable]:
        def grad_fn(*upstream: Any, variables: list[Variable] | None = None) -> tuple[list, list]:
            flat_args = _flatten(args)[0]
            tensors = [a for a in flat_args if isinstance(a, Tensor | Variable)]
            with GradientTape() as tape:
                tape.watch(tensors)
                result = f(*args, **kwargs)
            sources = tensors + list(variables or [])
            grads = iter(tape.gradient(_flatten(result)[0], sources, output_gradients=list(upstream)))
            grad_args = [next(grads) if isinstance(a, Tensor | Variable) else None for a in flat_args]
            return grad_args, list(grads)

        return f(*args, **kwargs), grad_fn

    return functools.wraps(f)(recomputed)


def _call(f: Callable, ops: dict[Any, OpDef], args: tuple, kwargs: dict) -> Any:
    flat_args, args_tree = _flatten(args)
    tapes = CONTEXT.tapes
    watcher = tape_lib.Tape(persistent=True, watch_accessed_variables=True)
    # As in TF, the forward pass is recorded: a tape that follows none of the op's inputs (only tensors `f`
    # captures) differentiates the computation itself, through the outputs' identities recorded below. A tape
    # capturing a traced branch (records_all) gets the custom op alone.
    with tape_lib.recording_only([*(t for t in tapes if not t.records_all), watcher]):
        result, grad_fn = f(*args, **kwargs)
    arg_uids = {a._uid for a in flat_args if isinstance(a, Variable)}
    variables = [v for uid, v in watcher.variables.items() if uid not in arg_uids and v.trainable]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(_MISSING_VARIABLES_KEYWORD.format(variables=variables))
    flat_result, result_tree = _flatten(result)
    # a Python or numpy result converts by TF's rules (a Python float is float32, as in TF)
    outs = tuple(EagerTensor(r._value if isinstance(r, Tensor | Variable) else jnp.asarray(to_array(r)))
                 for r in flat_result)
    traced = any(isinstance(getattr(a, "_value", None), jax.core.Tracer) for a in flat_args)
    cells = _tensor_cells(f)
    traced = traced or any(isinstance(f.__closure__[i].cell_contents._value, jax.core.Tracer) for i in cells)
    if tapes or traced:
        captured = [f.__closure__[i].cell_contents for i in cells]
        inputs = ([_as_input(a) for a in flat_args] + [v._read() for v in variables]
                  + [(t._tid, t._value) for t in captured])
        key = (args_tree, tuple(kwargs.items()) if _hashable(kwargs) else id(kwargs),
               tuple(v._uid for v in variables), cells, tuple(i is None for i in inputs))
        opdef = ops.get(key)
        if opdef is None:
            opdef = ops[key] = _opdef(f, args_tree, kwargs, flat_args, variables, cells, result_tree)
        tids = tuple(i[0] if i is not None else 0 for i in inputs)
        vals = tuple(i[1] if i is not None else None for i in inputs)
        if traced:
            # Inside a JAX trace (a gradient being differentiated again, tf.function): the custom rule must be
            # part of the traced computation, so the op itself runs.
            outs = tuple(EagerTensor(o) for o in opdef.impl(*vals))
        if tapes:
            _record(tapes, opdef, tids, vals, len(inputs) - len(captured), flat_result, outs)
    return jax.tree_util.tree_unflatten(result_tree, list(outs))


_OUTPUT = OpDef("custom_gradient.output", lambda x: (x,), op_type="Identity", jit=False)


def _record(tapes: list, opdef: OpDef, tids: tuple, vals: tuple, n_own: int, results: list, outs: tuple) -> None:
    """Records the call as TF does: the custom op on each tape that follows one of its own inputs (arguments,
    variables; not captured tensors), and on every other tape the outputs as identities of the forward pass's
    results, so that a captured tensor gets the gradient of the computation itself."""
    custom, plain = [], []
    for t in tapes:
        follows = t.records_all or any(tid in t.tracked for tid in tids[:n_own])
        (custom if follows else plain).append(t)
    if custom:
        dispatch.record_call(opdef, tids, vals, outs, custom)
    for r, out in zip(results, outs):
        if plain and isinstance(r, Tensor):
            dispatch.record_call(_OUTPUT, (r._tid,), (r._value,), (out,), plain)


def _as_input(arg: Any) -> tuple[int, Any] | None:
    if isinstance(arg, Variable):
        return arg._read()
    if isinstance(arg, Tensor):
        return arg._tid, arg._value
    return None  # a Python value: not an input of the op (it is fixed in the function)


def _accepts_variables(grad_fn: Callable) -> bool:
    try:
        params = inspect.signature(grad_fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _hashable(value: Any) -> bool:
    try:
        hash(tuple(value.items()))
        return True
    except TypeError:
        return False


def _tensor_cells(f: Callable) -> tuple[int, ...]:
    """Positions of the closure cells of `f` that hold tensors: values the function captures rather than takes.

    They become inputs of the op (without gradients, as in TF), so that a replay never closes over a traced
    value of an enclosing computation: TF's pattern of a custom gradient defined inside another's grad_fn.
    """
    cells = getattr(f, "__closure__", None) or ()
    return tuple(i for i, c in enumerate(cells) if isinstance(_cell_contents(c), Tensor))


def _cell_contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name not yet bound)
        return None


def _opdef(f: Callable, args_tree: Any, kwargs: dict, flat_args: list, variables: list[Variable],
           cells: tuple[int, ...], result_tree: Any) -> OpDef:
    """The op for calls of `f` with this argument structure: jax.custom_vjp over a re-run of `f`.

    Inputs: the flat arguments, then the variables `f` reads, then the tensors it captures (`cells`).
    """
    n_args, n_vars = len(flat_args), len(variables)
    python_args = {i: a for i, a in enumerate(flat_args) if not isinstance(a, Tensor | Variable)}
    uids = [v._uid for v in variables]

    @contextlib.contextmanager
    def replaying(arrays: tuple) -> Iterator[list[Any]]:
        """Runs the user's code on `arrays`: no recording, variables and captured tensors read the arrays."""
        wrapped = [python_args[i] if i in python_args else EagerTensor(arrays[i]) for i in range(n_args)]
        closure = f.__closure__ or ()
        saved_cells = [closure[i].cell_contents for i in cells]
        try:
            for i, value in zip(cells, arrays[n_args + n_vars:]):
                closure[i].cell_contents = EagerTensor(value)
            with tape_lib.recording_only([]), override_values(dict(zip(uids, arrays[n_args:n_args + n_vars]))):
                yield jax.tree_util.tree_unflatten(args_tree, wrapped)
        finally:
            for i, value in zip(cells, saved_cells):
                closure[i].cell_contents = value

    def primal(*arrays: Any) -> tuple[Any, ...]:
        with replaying(arrays) as args:
            result, _ = f(*args, **kwargs)
            return tuple(_array(r) for r in _flatten(result)[0])

    def gradients(arrays: tuple, cts: Sequence[Any]) -> list[Any]:
        """grad_fn's gradient per input of the op, on `arrays` (concrete or traced); None: no gradient."""
        with replaying(arrays) as args:
            _, grad_fn = f(*args, **kwargs)
            upstream = [EagerTensor(c) for c in cts]
            if variables:
                grad_xs, grad_vars = grad_fn(*upstream, variables=list(variables))
            else:
                grad_xs, grad_vars = grad_fn(*upstream), []
            flat_xs = _gradient_list(grad_xs)
            if len(flat_xs) != n_args:
                raise ValueError(_WRONG_GRADIENT_COUNT.format(expected=n_args, got=len(flat_xs)))
            flat_vars = list(grad_vars) if grad_vars is not None else []
            if len(flat_vars) != n_vars:
                raise ValueError(_WRONG_VARIABLE_GRADIENT_COUNT.format(expected=n_vars, got=len(flat_vars)))
            captured = [None] * len(cells)  # TF gives captured tensors no gradient through the op
            return [_cotangent(g, a) for g, a in zip(flat_xs + flat_vars + captured, arrays)]

    def fwd(*primals: Any) -> tuple[tuple[Any, ...], tuple]:
        # TF applies the custom gradient only where the differentiating tape follows one of the op's own inputs
        # (arguments, variables); otherwise (only a captured tensor is perturbed: a custom gradient defined in
        # another's grad_fn, differentiated again) it differentiates the computation itself. The residuals'
        # structure carries the choice to `bwd`: () for the custom rule, None for the computation's own VJP.
        arrays = tuple(None if p is None else p.value for p in primals)  # None: a Python argument
        custom = any(p is not None and p.perturbed for p in primals[:n_args + n_vars])
        # The output through the op itself, not `primal`: differentiated again (fwd is ordinary JAX code to an
        # outer differentiation), the output's derivative must still be the custom rule, as in TF.
        return with_custom_vjp(*arrays), (arrays, () if custom else None)

    def bwd(residuals: tuple, cts: tuple) -> tuple[Any, ...]:
        arrays, custom = residuals
        cts = tuple(_materialize(c) for c in cts)
        if custom is None:
            return jax.vjp(primal, *arrays)[1](cts)
        return tuple(_zero_if_none(g, a) for g, a in zip(gradients(arrays, cts), arrays))

    def backward(arrays: Sequence[Any], cts: Sequence[Any], batched: bool) -> tuple[Any, ...]:
        """The eager sweep's rule (OpDef.backward): grad_fn on concrete values, its Nones kept."""
        if None in cts:  # outputs nothing used: TF passes grad_fn zeros for them
            batch = next(c.shape[:1] for c in cts if c is not None) if batched else ()
            cts = [jnp.zeros((*batch, *o.shape), o.dtype) if c is None else c
                   for c, o in zip(cts, jax.eval_shape(primal, *arrays))]
        if not batched:
            return tuple(gradients(tuple(arrays), cts))
        # A jacobian's rows: vmapped (TF vectorizes grad_fn too), un-jitted, so each call traces afresh and
        # sees which gradients grad_fn returns as None.
        nones: list[bool] = []

        def row(row_cts: Sequence[Any]) -> tuple[Any, ...]:
            grads = gradients(tuple(arrays), row_cts)
            nones[:] = [g is None for g in grads]
            return tuple(_zero_if_none(g, a) for g, a in zip(grads, arrays))

        rows = jax.vmap(row)(list(cts))
        return tuple(None if none else r for none, r in zip(nones, rows))

    with_custom_vjp = jax.custom_vjp(primal)
    with_custom_vjp.defvjp(fwd, bwd, symbolic_zeros=True)
    name = getattr(f, "__name__", "custom_gradient")
    captured_positions = tuple(range(n_args + n_vars, n_args + n_vars + len(cells)))
    return OpDef(f"custom_gradient.{name}", with_custom_vjp, op_type=name, jit=True, forward=primal,
                 backward=backward, no_gradient_args=captured_positions)


def _materialize(ct: Any) -> Any:
    """A cotangent for grad_fn: JAX's symbolic zero (an output nothing used) as zeros, as TF passes them."""
    if isinstance(ct, SymbolicZero):
        return jnp.zeros(ct.shape, ct.dtype)
    return ct


def _zero_if_none(grad: Any, primal: Any) -> Any:
    if grad is None and primal is not None:
        return zero_cotangent(primal)
    return grad


def _array(value: Any) -> Any:
    # TF's conversion rules (a Python float is float32), as numpy: this runs inside JAX traces
    return value._value if isinstance(value, Tensor | Variable) else jnp.asarray(to_array(value, on_device=False))


def _gradient_list(grads: Any) -> list[Any]:
    """grad_fn's gradients for the flat inputs: any nest of them, flattened as TF does (None: no gradient; an
    IndexedSlices is one gradient, made dense where it is used)."""
    return jax.tree_util.tree_leaves(grads, is_leaf=lambda x: x is None or isinstance(x, Tensor | Variable |
                                                                                      IndexedSlices))


def _cotangent(grad: Any, primal: Any) -> Any:
    """grad_fn's gradient for one input as a cotangent: None for no gradient (a None, or a non-float input)."""
    if primal is None or grad is None or not jnp.issubdtype(primal.dtype, jnp.inexact):
        return None
    value = _array(grad)
    return jnp.broadcast_to(value, primal.shape).astype(primal.dtype)


