"""tf.numpy_function and tf.py_function: Python code that runs on the host, eagerly and inside tf.function.

Eagerly both call `func` at once, as TF does. numpy_function hands it numpy arrays and records nothing, so a
gradient through it is None. py_function hands it EagerTensors and runs it under an inner GradientTape that
watches its float inputs; the call is recorded on the tapes outside as one op whose eager gradient is that inner
tape's gradient (TF's EagerPyFunc gradient), so only the inputs get gradients.

Inside a tf.function trace the call is staged as a JAX host callback that runs when the compiled step runs:
`io_callback(ordered=True)` for stateful functions (in program order, never pruned, as TF's automatic control
dependencies order stateful ops), `pure_callback` for numpy_function(stateful=False). JAX needs the results'
shapes when it traces, where TF leaves them unknown: they come from Tout given as tf.TensorSpec with full shapes,
or else from one trial call of `func` at trace time, on the inputs' values where the trace knows them and on
zeros of their shapes otherwise. py_function's derivative there is a jax.custom_vjp whose backward pass is a
second callback that runs `func` again under a GradientTape on the host.

An exception `func` raises becomes TF's class for it (TF's py_func kernel: TypeError and ValueError are
InvalidArgumentError, StopIteration OutOfRangeError, MemoryError ResourceExhaustedError, NotImplementedError
UnimplementedError, anything else UnknownError); eagerly, numpy_function lets it through as TF does.
"""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from .context import CONTEXT
from . import dispatch, dtypes, errors, spec_only, tape as tape_lib
from .capture import as_tensor, symbolic
from .concrete_function import init_scope
from .convert import tf_type_string, to_array
from .indexed_slices import dense
from .gradient_tape import GradientTape
from .registry import OpDef
from .signature import TensorSpec
from .tensor import EagerTensor, Tensor, _Operators
from .variable import Variable

_NEEDS_SHAPES = (
    "(tapejax: {api} inside tf.function needs the shapes of func's results when the step is traced, as XLA "
    "arrays have static shapes, so it called func once at trace time, on zeros of its inputs' shapes where their "
    "values are not known yet, and that call failed. If func fails only on those zeros, give the shapes in Tout "
    "instead, one tf.TensorSpec per result: Tout=tf.TensorSpec([3, 2], tf.float32).)")
_SHAPE_CHANGED = (
    "{i}-th value returned by {name} has shape {got}, but {expected} when tf.function traced the step. Differences "
    "from TensorFlow: inside tf.function a host function's results need static shapes (learned from a trial call "
    "at trace time, or given as Tout=tf.TensorSpec(shape, dtype)); pad its results to a fixed shape.")
_RETURNED_VARIABLE = (
    "RuntimeError: Attempting to return a variable from an eagerly executed py_func. Only numeric data structures "
    "like Tensors or NumPy arrays should be returned; to return the value of a variable, make sure to obtain the "
    "Tensor backing it by calling `.read_value()` on the variable in question: {value}")

# TF's py_func kernel turns a Python exception into a status by its class (first match wins).
_TF_CLASS = ((TypeError, errors.InvalidArgumentError), (ValueError, errors.InvalidArgumentError),
             (StopIteration, errors.OutOfRangeError), (MemoryError, errors.ResourceExhaustedError),
             (NotImplementedError, errors.UnimplementedError))


class _Result(NamedTuple):
    dtype: dtypes.DType
    shape: tuple[int, ...] | None  # None: learned by a trial call


def numpy_function(func: Callable | None = None, inp: Sequence[Any] | None = None, Tout: Any = None,
                   stateful: bool = True, name: str | None = None) -> Any:
    """Runs `func` on numpy arrays and returns its results as tensors (`tf.numpy_function`).

    >>> import numpy as np
    >>> import tapejax as tf
    >>> print(tf.numpy_function(np.sinh, [tf.constant([0.0, 1.0])], tf.float32))
    tf.Tensor([0.        1.1752012], shape=(2,), dtype=float32)

    Eagerly `func` runs at once and its results keep numpy's dtypes, as in TF; inside tf.function it runs when the
    step runs, and each result must have the dtype of `Tout`. It is not differentiable: gradients through it are
    None (zeros for a tape outside a tf.function call, as through tf.stop_gradient there).

    Differences from TensorFlow: inside tf.function the results have static shapes. They are those of Tout's
    `tf.TensorSpec`s when fully defined, else tapejax calls `func` once when it traces the step, on zeros of the
    inputs' shapes (the inputs' values where the trace knows them), so `func` runs one extra time per trace; a
    result whose shape later differs raises InvalidArgumentError. Under an input_signature with None dimensions
    the step is traced per size.
    """
    decorator = _decorator_or_check(numpy_function, "tf.numpy_function", func, inp, Tout, stateful=stateful)
    if decorator is not None:
        return decorator
    if not callable(func):
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    if spec_only.active():
        return spec_only.results(Tout)
    if CONTEXT.trace is None:
        result = func(*[np.array(x.numpy() if isinstance(x, _Operators) else x) for x in inp])
        flat = [None if r is None else as_tensor(r) for r in _flatten(result)]
        return flat[0] if len(flat) == 1 else flat
    listed, results = _results(Tout)
    return _traced(func, inp, listed, results, "numpy", stateful)


def py_function(func: Callable | None = None, inp: Sequence[Any] | None = None, Tout: Any = None,
                name: str | None = None) -> Any:
    """Runs `func` eagerly on EagerTensors, also inside tf.function, and returns its results (`tf.py_function`).

    >>> import tapejax as tf
    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = tf.py_function(lambda a: a * a, [x], tf.float32)
    >>> print(y, tape.gradient(y, x))
    tf.Tensor(9.0, shape=(), dtype=float32) tf.Tensor(6.0, shape=(), dtype=float32)

    Differentiable as in TF: the gradient flows to `inp` (not to variables or tensors `func` captures), computed
    by a GradientTape over `func`. Results are converted to `Tout`'s dtypes; a list `Tout` gives a list.

    Differences from TensorFlow: inside tf.function the results have static shapes, as numpy_function's (a trial
    call at trace time unless Tout gives full tf.TensorSpecs), and when a gradient flows through the call there
    `func` runs again (tapejax replays the forward pass, and the backward pass runs `func` under a tape on the
    host): keep its side effects repeatable. TF's persistent-tape second gradient and jacobian through it fail
    (its tape cache is popped); tapejax computes them. Integer inputs get None (TF fails on them).
    """
    decorator = _decorator_or_check(py_function, "tf.py_function", func, inp, Tout)
    if decorator is not None:
        return decorator
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func} of type {type(func)}.")
    if spec_only.active():
        return spec_only.results(Tout)
    listed, results = _results(Tout)
    if CONTEXT.trace is None:
        return _eager_py(func, list(inp), listed, results)
    return _traced(func, inp, listed, results, "py", True)


def _decorator_or_check(script_op: Callable, api: str, func: Any, inp: Any, Tout: Any, **kwargs: Any) -> Any:
    """TF's argument rules: Tout is required; `func=None` makes a decorator (then `inp` must not be given)."""
    if Tout is None:
        raise TypeError(f"Missing required argument: 'Tout'\n  If using {api} as a decorator, set `Tout`\n  **by "
                        f"name** above the function:\n  `@{api}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using {api} as a decorator (`func=None`).")

        def decorator(fun: Callable) -> Callable:
            @functools.wraps(fun)
            def wrapper(*args: Any) -> Any:
                return script_op(fun, inp=args, Tout=Tout, **kwargs)
            return wrapper
        return decorator
    if inp is None:
        raise TypeError(f"Missing argument `inp`:\n  You must set the `inp` argument (the list of arguments to the "
                        f"function), unless you use `{api}` as a decorator(`func=None`).")
    return None


def _results(Tout: Any) -> tuple[bool, list[_Result]]:
    listed = isinstance(Tout, list | tuple)
    results = []
    for t in (Tout if listed else [Tout]):
        if isinstance(t, TensorSpec):
            full = t.shape.rank is not None and t.shape.is_fully_defined()
            results.append(_Result(t.dtype, tuple(t.shape.as_list()) if full else None))
        else:
            results.append(_Result(dtypes.as_dtype(t), None))
    return listed, results


def _flatten(value: Any) -> list[Any]:
    """tf.nest.flatten of a Python result: None is a leaf, dicts in sorted key order."""
    if isinstance(value, list | tuple):
        return [leaf for v in value for leaf in _flatten(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _flatten(value[k])]
    return [value]


def _name(func: Callable) -> str:
    return f"pyfunc {getattr(func, '__name__', type(func).__name__)}"


def _tf_error(error: BaseException) -> errors.OpError:
    """The error TF's py_func kernel raises for an exception of `func`."""
    cls = next((c for types, c in _TF_CLASS if isinstance(error, types)), errors.UnknownError)
    text = "".join(traceback.format_exception(error))
    return cls(None, None, f"{type(error).__name__}: {error}\n{text}")


def _count_error(func: Callable, got: int, expected: int) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"{_name(func)} returns {got} values, but expects to see "
                                                   f"{expected} values.")


def _py_results(func: Callable, ret: Any, results: list[_Result]) -> list[Tensor]:
    """func's return value as tensors of Tout's dtypes, by TF's EagerPyFunc rules (extra values are dropped)."""
    if isinstance(ret, list | tuple):
        pairs = list(zip(ret, results))
    elif ret is None:
        pairs = []
    else:
        if not results:
            raise errors.UnknownError(None, None, "IndexError: list index out of range (func returned a value, "
                                                  "but Tout is empty)")
        pairs = [(ret, results[0])]
    if len(pairs) < len(results):
        raise _count_error(func, len(pairs), len(results))
    out = []
    for value, result in pairs:
        if isinstance(value, Variable):
            raise errors.UnknownError(None, None, _RETURNED_VARIABLE.format(value=value))
        try:
            out.append(value if isinstance(value, Tensor) and value.dtype == result.dtype
                       else EagerTensor(jnp.asarray(to_array(value, dtype=result.dtype))))
        except (TypeError, ValueError) as e:
            raise _tf_error(e) from None
    return out


def _numpy_results(func: Callable, ret: Any, results: list[_Result]) -> list[np.ndarray]:
    """func's return value as numpy arrays, each of exactly Tout's dtype (TF's PyFunc kernel's checks)."""
    values = [] if ret is None else [ret] if isinstance(ret, bytes) or not isinstance(ret, list | tuple) else ret
    arrays = [np.asarray(v) for v in values]
    if len(arrays) != len(results):
        raise _count_error(func, len(arrays), len(results))
    for i, (a, r) in enumerate(zip(arrays, results)):
        if a.dtype != r.dtype._np:
            raise errors.InvalidArgumentError(None, None, f"{i}-th value returned by {_name(func)} is "
                                                          f"{tf_type_string(a.dtype)}, but expects "
                                                          f"{tf_type_string(r.dtype._np)}")
    return arrays


def _check_shapes(func: Callable, arrays: Sequence[Any], avals: Sequence[jax.ShapeDtypeStruct]) -> None:
    for i, (a, s) in enumerate(zip(arrays, avals)):
        if tuple(a.shape) != tuple(s.shape):
            raise errors.InvalidArgumentError(None, None, _SHAPE_CHANGED.format(
                i=i, name=_name(func), got=tuple(a.shape), expected=tuple(s.shape)))


# -- eagerly ---------------------------------------------------------------------------------------------------


def _is_float(t: Tensor) -> bool:
    return jnp.issubdtype(t._value.dtype, jnp.inexact)


def _call_taped(func: Callable, tensors: list[Tensor], results: list[_Result]) -> tuple[list[Tensor], Any]:
    """func(*tensors) under an inner persistent tape watching the float inputs (no tape outside records it)."""
    with tape_lib.recording_only([]), GradientTape(persistent=True) as inner:
        inner.watch([t for t in tensors if _is_float(t)])
        try:
            ret = func(*tensors)
        except Exception as e:
            raise _tf_error(e) from None
        return _py_results(func, ret, results), inner


def _gradients(inner: GradientTape, targets: list[Tensor], tensors: list[Tensor], cts: Sequence[Any]) -> list:
    """The inner tape's gradient for each input (None: no gradient), `cts` the results' cotangents."""
    sources = [t for t in tensors if _is_float(t)]
    seeds = [EagerTensor(jnp.asarray(c, t._value.dtype)) for c, t in zip(cts, targets)]
    with init_scope():
        grads = iter(inner.gradient(targets, sources, output_gradients=seeds) if sources else [])
    return [dense(next(grads)) if _is_float(t) else None for t in tensors]


def _eager_py(func: Callable, inp: list, listed: bool, results: list[_Result]) -> Any:
    tensors = [as_tensor(x) for x in inp]  # a variable is read: the read is the input the tape follows
    tapes = CONTEXT.tapes
    if not tapes:
        try:
            ret = func(*tensors)
        except Exception as e:
            raise _tf_error(e) from None
        outs = _py_results(func, ret, results)
        return outs if listed else outs[0]
    targets, inner = _call_taped(func, tensors, results)
    outs = [EagerTensor(t._value) for t in targets]

    def backward(arrays: Sequence[Any], cts: Sequence[Any], batched: bool) -> tuple:
        if not batched:
            cts = [jnp.zeros_like(t._value) if c is None else c for c, t in zip(cts, targets)]
            return tuple(None if g is None else g._value for g in _gradients(inner, targets, tensors, cts))
        n = next(c.shape[0] for c in cts if c is not None)
        cts = [jnp.zeros((n, *t._value.shape), t._value.dtype) if c is None else c for c, t in zip(cts, targets)]
        rows = [_gradients(inner, targets, tensors, [c[i] for c in cts]) for i in range(n)]
        return tuple(None if row[0] is None else jnp.stack([g._value for g in row]) for row in zip(*rows))

    avals = tuple(jax.ShapeDtypeStruct(t._value.shape, t._value.dtype) for t in targets)
    opdef = OpDef("py_function", _py_impl(func, avals, results), op_type="EagerPyFunc", jit=False,
                  backward=backward)
    dispatch.record_call(opdef, [t._tid for t in tensors], [t._value for t in tensors], outs, tapes)
    return outs if listed else outs[0]


# -- inside tf.function ----------------------------------------------------------------------------------------


def _host(func: Callable, kind: str, results: list[_Result], avals: Sequence[Any] | None) -> Callable:
    """The function the callback runs: func on numpy arrays (numpy_function) or EagerTensors (py_function),
    outside any trace or tape; its failures come back as TF's errors through errors.host_failure."""

    def run(*arrays: Any) -> tuple:
        try:
            with init_scope():
                if kind == "numpy":
                    try:
                        ret = func(*[np.array(a) for a in arrays])
                    except Exception as e:
                        raise _tf_error(e) from None
                    outs = _numpy_results(func, ret, results)
                else:
                    try:
                        ret = func(*[EagerTensor(jnp.asarray(a)) for a in arrays])
                    except Exception as e:
                        raise _tf_error(e) from None
                    outs = [np.asarray(t._value) for t in _py_results(func, ret, results)]
            if avals is not None:
                _check_shapes(func, outs, avals)
            return tuple(outs)
        except errors.OpError as e:
            if avals is None:  # the trial call at trace time: raised as it is
                raise
            raise errors.host_failure(e) from None

    return run


class _OwnFailures(logging.Filter):
    """Drops JAX's log of a callback failure tapejax raises again as TF's error (TF logs none)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, RuntimeError) and str(error).startswith("tapejax host callback failure"))


_FILTER = _OwnFailures()


def _stage(host: Callable, avals: tuple, arrays: Sequence[Any], stateful: bool) -> tuple:
    """Stages the callback, even on constants: a trace folds ops on known values, and a host function must run
    when the step runs, not when it is traced."""
    logging.getLogger("jax._src.callback").addFilter(_FILTER)  # once: a logger keeps a filter once
    from jax._src import config as jax_config  # noqa: PLC0415 (as capture.symbolic: folding off for one op)
    with jax_config.eager_constant_folding(False):
        if stateful:
            return tuple(io_callback(host, avals, *arrays, ordered=True))
        return tuple(jax.pure_callback(host, avals, *arrays, vmap_method="sequential"))


def _numpy_impl(func: Callable, avals: tuple, results: list[_Result], stateful: bool) -> Callable:
    host = _host(func, "numpy", results, avals)

    def impl(*arrays: Any) -> tuple:  # not differentiable: JAX sees constants
        return _stage(host, avals, [jax.lax.stop_gradient(a) for a in arrays], stateful)

    return impl


def _py_impl(func: Callable, avals: tuple, results: list[_Result]) -> Callable:
    """py_function as a JAX function: a host callback, whose VJP is a second callback running func under a tape."""
    host = _host(func, "py", results, avals)

    def host_vjp(*arrays: Any) -> tuple:
        n = len(arrays) - len(avals)
        try:
            with init_scope():
                tensors = [EagerTensor(jnp.asarray(a)) for a in arrays[:n]]
                targets, inner = _call_taped(func, tensors, results)
                grads = _gradients(inner, targets, tensors, arrays[n:])
        except errors.OpError as e:
            raise errors.host_failure(e) from None
        return tuple(np.zeros(t._value.shape, t._value.dtype) if g is None else np.asarray(g._value)
                     for g, t in zip(grads, tensors) if _is_float(t))

    def primal(arrays: Sequence[Any]) -> tuple:
        # stop_gradient: differentiated again (a gradient's gradient), JAX sees the callback's inputs as constants
        return _stage(host, avals, [jax.lax.stop_gradient(a) for a in arrays], True)

    @jax.custom_vjp
    def impl(*arrays: Any) -> tuple:
        return primal(arrays)

    def fwd(*arrays: Any) -> tuple:
        return primal(arrays), arrays

    def bwd(arrays: tuple, cts: tuple) -> tuple:
        floats = [i for i, a in enumerate(arrays) if jnp.issubdtype(a.dtype, jnp.inexact)]
        shapes = tuple(jax.ShapeDtypeStruct(arrays[i].shape, arrays[i].dtype) for i in floats)
        # stop_gradient: the backward pass is not differentiated again (TF: no higher derivatives through it)
        stopped = [jax.lax.stop_gradient(v) for v in (*arrays, *cts)]
        grads = iter(jax.pure_callback(host_vjp, shapes, *stopped, vmap_method="sequential") if floats else ())
        return tuple(next(grads) if i in floats else None for i in range(len(arrays)))

    impl.defvjp(fwd, bwd)
    return impl


def _learn_shapes(func: Callable, kind: str, tensors: list[Tensor], results: list[_Result]) -> tuple:
    """The results' avals: Tout's full shapes, else those of a trial call of func at trace time."""
    if all(r.shape is not None for r in results):
        return tuple(jax.ShapeDtypeStruct(r.shape, r.dtype._np) for r in results)
    examples = []
    for t in tensors:
        value = t._value
        if not all(isinstance(d, int) for d in value.shape):
            from jax._src.export.shape_poly import InconclusiveDimensionOperation  # noqa: PLC0415
            # function.py traces the step per size instead, which XLA compiles per size anyway
            raise InconclusiveDimensionOperation("a host callback needs the concrete shapes of its inputs")
        examples.append(np.zeros(value.shape, value.dtype) if isinstance(value, jax.core.Tracer)
                        else np.asarray(value))
    try:
        outs = _host(func, kind, results, None)(*examples)
    except errors.OpError as e:  # what the step would raise when run (func failed, or its results do not fit)
        api = "tf.numpy_function" if kind == "numpy" else "tf.py_function"
        e.message = f"{e.message}\n{_NEEDS_SHAPES.format(api=api)}"
        raise
    return tuple(jax.ShapeDtypeStruct(r.shape if r.shape is not None else o.shape, r.dtype._np)
                 for o, r in zip(outs, results))


def _traced(func: Callable, inp: Sequence[Any], listed: bool, results: list[_Result], kind: str,
            stateful: bool) -> Any:
    tensors = [as_tensor(x) for x in inp]
    avals = _learn_shapes(func, kind, tensors, results)
    impl = _numpy_impl(func, avals, results, stateful) if kind == "numpy" else _py_impl(func, avals, results)
    tids, vals = [t._tid for t in tensors], [t._value for t in tensors]
    opdef = OpDef("numpy_function" if kind == "numpy" else "py_function", impl,
                  op_type="PyFunc" if kind == "numpy" else "EagerPyFunc", jit=False)
    trace, tapes = CONTEXT.trace, CONTEXT.tapes
    if trace.captures:
        # inside a traced branch or loop body: a step of the captured body (its replay runs the callback), kept
        # whatever its inputs, as a side effect; the outputs here are placeholders of the right avals
        outs = [EagerTensor(symbolic(jnp.zeros(a.shape, a.dtype))) for a in avals]
        dispatch.record_call(opdef, tids, vals, outs, tapes[:1], effect=True)
        if kind == "py" and tapes[1:]:
            dispatch.record_call(opdef, tids, vals, outs, tapes[1:])
    else:
        outs = [EagerTensor(o) for o in impl(*vals)]
        if kind == "py" and tapes:
            dispatch.record_call(opdef, tids, vals, outs, tapes)
    return outs if listed else outs[0]
