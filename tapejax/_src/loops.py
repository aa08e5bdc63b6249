"""Loops: tf.while_loop, scan, foldl, foldr, map_fn and vectorized_map.

With known inputs (eager code, or Python values inside tf.function) they are Python loops, as in TF's eager mode,
and the tapes record the ops each iteration ran. Inside a tf.function trace, a loop whose condition or inputs are
traced has its body (and condition) *captured* (capture.py): pure functions of their inputs, which go to
`jax.lax.while_loop` / `scan` / `map` or `jax.vmap`, and the loop is recorded on the tapes outside as one op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from . import dtypes
from .capture import (Body, as_tensor, capture_each, current_trace, inputs_of, is_leaf, run_recorded, symbolic,
                      traced, unpack)
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape
from .tensor_array import TensorArray
from .tensor_array_loops import seed_loop_vars


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None, _names: Sequence[str] | None = None,
               _line: int | None = None) -> Any:
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` (`tf.while_loop`), at most
    `maximum_iterations` times. Traced, it is `jax.lax.while_loop`; under a tape it needs `maximum_iterations`
    to be reverse-differentiable (it then runs as a masked `jax.lax.scan`)."""
    star = isinstance(loop_vars, list | tuple)
    call = (lambda f, v: f(*v)) if star else (lambda f, v: f(v))
    trace = current_trace()
    leaves = [x for x in jax.tree_util.tree_leaves(loop_vars, is_leaf=_leaf_or_array) if is_leaf(x)]
    if trace is None or not (traced(*leaves) or traced(call(cond, loop_vars))):
        return _python_while(cond, body, loop_vars, maximum_iterations, call)
    # a TensorArray is carried as one buffer: its element shape and (dynamic_size) capacity are fixed first
    loop_vars = seed_loop_vars(loop_vars, lambda v: call(body, v), maximum_iterations)
    leaves, treedef = jax.tree_util.tree_flatten(loop_vars, is_leaf=is_leaf)
    tensors = [as_tensor(x) for x in leaves]
    placeholders = [EagerTensor(symbolic(t._value)) for t in tensors]  # never the initial values: see symbolic
    structured = jax.tree_util.tree_unflatten(treedef, placeholders)
    cond_body, loop_body = capture_each(
        [lambda *_: call(cond, structured), lambda *_: call(body, structured)], placeholders, trace)
    _check_loop_outputs(tensors, loop_body, treedef, _names, _line)
    inputs = inputs_of([cond_body, loop_body])
    carried = [loop_body.variables[uid] for uid in loop_body.assigned]
    n = len(tensors)
    bound = None if maximum_iterations is None else maximum_iterations

    def parts(flat: Sequence[Any]) -> tuple:
        loop_vals, external_vals, variable_vals = unpack(flat, inputs, n)
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

    static_bound = bound is not None and not traced(bound)

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
    outs = run_recorded("control_flow.While", loop, tensors, inputs, carried, has_gradient=static_bound)
    return jax.tree_util.tree_unflatten(treedef, outs)


def _leaf_or_array(x: Any) -> bool:
    return is_leaf(x) or isinstance(x, TensorArray)


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


def recurrence(fn: Callable, elems: Any, initializer: Any, keep: str, recompute: bool) -> Any:
    """A recurrent layer's time loop: `tf.scan` (keep "all") or `tf.foldl` (keep "last": no history stacked).

    With `recompute`, the traced body saves only its matmuls' outputs for the gradient and recomputes its
    elementwise work in the backward pass (`jax.checkpoint` with JAX's `dots_saveable` policy). JAX's
    linearization of an LSTM cell saves 13 values per step (some gates twice), each one in-place update per step:
    on XLA:CPU, where a loop step costs mostly its number of kernels, the forward loop's body went from 25 kernels
    to 11. The recomputed ops are the forward pass's. Only for bodies without random ops (the built-in cells draw
    their dropout masks before the loop)."""
    return _scan(fn, elems, initializer, False, keep, recompute=recompute)


def _scan(fn: Callable, elems: Any, initializer: Any, reverse: bool, keep: str, recompute: bool = False) -> Any:
    elem_leaves, elem_tree = jax.tree_util.tree_flatten(elems, is_leaf=is_leaf)
    elem_tensors = [as_tensor(x) for x in elem_leaves]
    n = elem_tensors[0].shape[0]
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is None:
        first, order = order[0], order[1:]
        initializer = jax.tree_util.tree_unflatten(elem_tree, [t[first] for t in elem_tensors])
        start = [initializer]
    else:
        start = []
    init_leaves, init_tree = jax.tree_util.tree_flatten(initializer, is_leaf=is_leaf)
    init_tensors = [as_tensor(x) for x in init_leaves]
    trace = current_trace()
    if trace is None or not traced(*elem_tensors, *init_tensors):
        acc, history = initializer, list(start)
        for i in order:
            acc = fn(acc, jax.tree_util.tree_unflatten(elem_tree, [t[i] for t in elem_tensors]))
            history.append(acc)
        if keep == "last":
            return acc
        rows = history[::-1] if reverse else history
        return jax.tree_util.tree_map(lambda *xs: OPERATORS["stack"](list(xs)), *rows, is_leaf=is_leaf)
    acc_ph = [EagerTensor(t._value) for t in init_tensors]
    elem_ph = [EagerTensor(t._value[0]) for t in elem_tensors]
    k = len(acc_ph)

    def step_fn(*ph: Any) -> Any:
        return fn(jax.tree_util.tree_unflatten(init_tree, ph[:k]), jax.tree_util.tree_unflatten(elem_tree, ph[k:]))

    (body,) = capture_each([step_fn], acc_ph + elem_ph, trace)
    inputs = inputs_of([body])
    carried = [body.variables[uid] for uid in body.assigned]
    skip = 0 if not start else 1

    def impl(*flat: Any) -> tuple:
        lead, external_vals, variable_vals = unpack(flat, inputs, k + len(elem_tensors))
        accs, xs = tuple(lead[:k]), tuple(x[skip:] if not reverse else x[:x.shape[0] - skip] for x in lead[k:])

        def step(carry: tuple, x: tuple) -> tuple:
            acc, vs = carry
            outs, new = body.run((*acc, *x), external_vals,
                                 {**variable_vals, **{v._uid: y for v, y in zip(carried, vs)}})
            outs = tuple(jnp.asarray(o, a.dtype) for o, a in zip(outs, acc))
            return (outs, tuple(new.get(v._uid, y) for v, y in zip(carried, vs))), outs

        scan_step = jax.checkpoint(step, policy=jax.checkpoint_policies.dots_saveable) if recompute else step
        (final, vs), ys = jax.lax.scan(scan_step, (accs, tuple(variable_vals[v._uid] for v in carried)), xs,
                                       reverse=reverse)
        if keep == "last":
            return (*final, *vs)
        if skip:
            ys = tuple(jnp.concatenate([a[None], y] if not reverse else [y, a[None]]) for a, y in zip(accs, ys))
        return (*ys, *vs)

    outs = run_recorded("control_flow.Scan", impl, init_tensors + elem_tensors, inputs, carried)
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
    leaves, tree = jax.tree_util.tree_flatten(elems, is_leaf=is_leaf)
    tensors = [as_tensor(x) for x in leaves]
    trace = current_trace()
    if trace is None or not traced(*tensors):
        rows = [fn(jax.tree_util.tree_unflatten(tree, [t[i] for t in tensors])) for i in range(tensors[0].shape[0])]
        return jax.tree_util.tree_map(lambda *xs: OPERATORS["stack"](list(xs)), *rows, is_leaf=is_leaf)
    ph = [EagerTensor(t._value[0]) for t in tensors]
    (body,) = capture_each([lambda *p: fn(jax.tree_util.tree_unflatten(tree, p))], ph, trace)
    if body.assigned:
        raise ValueError("tf.map_fn and tf.vectorized_map bodies must not assign variables inside tf.function.")
    inputs = inputs_of([body])

    def impl(*flat: Any) -> tuple:
        xs, external_vals, variable_vals = unpack(flat, inputs, len(tensors))

        def one(*x: Any) -> tuple:
            return tuple(body.run(x, external_vals, variable_vals)[0])

        if vectorized:
            return jax.vmap(one)(*xs)
        return jax.lax.map(lambda x: one(*x), tuple(xs))

    outs = run_recorded("control_flow.Map", impl, tensors, inputs, [])
    return jax.tree_util.tree_unflatten(body.treedef, outs)
