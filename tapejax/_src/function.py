"""tf.function: a Python function compiled by `jax.jit` per signature, its variables passed in and out.

A call is bound and keyed by TF's retracing rules (signature.py); a key seen for the first time is traced into a
ConcreteFunction (concrete_function.py: the jitted step, its variables functionalised), which every later call
with that key runs as one executable.

The variable set is found while tracing. Before a first trace it is seeded with the variables reachable from the
arguments, the bound object and the function's closure and globals; a trace that meets a variable outside its
set (one created on the first call, as Keras layers and optimizer slots are, or one the seeding missed) is
redone with the larger set, as TF retraces a function that created variables.
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .context import CONTEXT
from . import (autograph, caches, dispatch, dtypes, logs, reachable, retrace_causes, retracing,
               variable as variable_lib)
from .concrete_function import ConcreteFunction
from .static_values import PartiallyKnownShape
from .signature import Binder, Template, TensorSpec, flat_specs, symbolic_specs
from .tensor import EagerTensor, Tensor, new_tid
from .variable import Variable

_MAX_DISCOVERY_TRACES = 4  # a trace that keeps meeting new variables is a bug in the step: say so
MAX_TRACES = 64  # traces kept per tf.function (TF keeps every one): a shape storm's memory stays bounded
_EVICTION_MESSAGE = (
    "tf.function {} has been traced for more than {} different signatures (argument shapes, dtypes, Python "
    "values): the least recently used traces are dropped, and traced again if called again. Pass "
    "reduce_retracing=True or an input_signature with None dimensions to trace once for many shapes.")


class _Config(threading.local):
    def __init__(self):
        self.run_eagerly = False


_CONFIG = _Config()


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Runs every tf.function as plain Python (`tf.config.run_functions_eagerly`): a debugging switch."""
    _CONFIG.run_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _CONFIG.run_eagerly


class _PerInstance:
    """An instance's own Function of a method, in the instance's `__dict__`: copying or pickling the instance
    drops it (the copy gets a Function of its own on first use), and `instance_id` tells a stale one apart."""

    __slots__ = ("instance_id", "function")

    def __init__(self, instance_id: int, function: Function):
        self.instance_id = instance_id
        self.function = function

    def __copy__(self) -> None:
        return None

    def __deepcopy__(self, memo: dict) -> None:
        return None

    def __reduce__(self) -> tuple:
        return (type(None), ())


class Function:
    """A Python function compiled by `jax.jit` per signature (`tf.function`); see the module docstring.

    >>> import tapejax as tf
    >>> v = tf.Variable(1.0)
    >>> @tf.function
    ... def step(x):
    ...     with tf.GradientTape() as tape:
    ...         loss = (v * x - 3.0) ** 2
    ...     v.assign_sub(0.1 * tape.gradient(loss, v))
    ...     return loss
    >>> print(step(tf.constant(2.0)), v.numpy())
    tf.Tensor(1.0, shape=(), dtype=float32) 1.4
    """

    def __init__(self, python_function: Callable, input_signature: Any = None, jit_compile: bool | None = None,
                 reduce_retracing: bool = False, autograph: bool = True, name: str | None = None):
        self._python_function = python_function
        self._input_signature = None if input_signature is None else tuple(input_signature)
        self._jit_compile = jit_compile
        self._reduce_retracing = reduce_retracing
        self._autograph = autograph
        self.__name__ = name or getattr(python_function, "__name__", "function")
        functools.update_wrapper(self, python_function, updated=())
        # call key -> its trace; the least recently used forgotten past the bound (and traced again if needed)
        self._concrete = caches.Recent(f"traces of {self.__name__}", MAX_TRACES)
        # reduce_retracing: (treedef, statics) -> the relaxed signatures traced for them
        self._relaxed = caches.Recent("relaxed signatures", MAX_TRACES)
        self._per_size: set = set()  # relaxed signatures whose step needs concrete sizes: traced per size
        # Keras's steps (training.py), reduce_retracing: a new trace has every leading dimension unknown, one
        # symbol for all (a dataset's batch), as Keras on TF traces its step for the data's element_spec
        self._batch_relaxed = False
        # variables a trace met that the seeding did not find, held weakly: inputs of the later traces too
        self._discovered: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._created: list[Variable] = []  # created by its first trace: this function owns them, as TF's does
        self._traced_once = False
        self._tracing_count = 0
        self._traces_made = 0  # traces kept, a signature traced again after it was dropped included
        # the keys whose trace is counted, whether traced here or inlined in another (key -> True)
        self._counted = caches.Recent("counted traces", 16 * MAX_TRACES)
        self._lock = threading.RLock()  # one trace at a time: concurrent first calls trace once, as in TF
        self._detector = retracing.detector(python_function)
        self._warned_eviction = False
        self.upcoming: tuple | None = None  # (shapes, dtypes) of a call expected soon (`expect`)
        self._calls = 0  # the call number random ops fold into their keys
        self._seed_epoch = _SEED_EPOCH[0]
        self._bound: dict = weakref.WeakKeyDictionary()  # per-instance Functions of instances without __dict__
        self._attribute = f"_tapejax_function_{id(self):x}"  # where an instance keeps its own (__get__)
        self._binder = Binder(python_function, self._input_signature)  # binding and keying calls

    @property
    def python_function(self) -> Callable:
        return self._python_function

    def _traced_function(self) -> Callable:
        """What a trace runs: the function converted by AutoGraph (autograph=True, TF's default), or as written."""
        return autograph.convert(self._python_function) if self._autograph else self._python_function

    @property
    def input_signature(self) -> tuple | None:
        return self._input_signature

    def experimental_get_tracing_count(self) -> int:
        return self._tracing_count

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        """Methods: one Function per instance, so each instance's variables are its own inputs. It is kept in the
        instance's `__dict__` (a weak map from instances to Functions that are bound to them would keep every
        instance alive), where a copy of the instance does not carry it over (_PerInstance)."""
        if instance is None:
            return self
        store = getattr(instance, "__dict__", None)
        if store is None:  # no __dict__ (__slots__): a weak map, which keeps such instances alive
            store = self._bound
        holder = store.get(self._attribute)
        if holder is None or holder.instance_id != id(instance):
            with self._lock:
                holder = store.get(self._attribute)
                if holder is None or holder.instance_id != id(instance):
                    holder = _PerInstance(id(instance), Function(
                        types.MethodType(self._python_function, instance), self._input_signature,
                        self._jit_compile, self._reduce_retracing, self._autograph, self.__name__))
                    store[self._attribute] = holder
        return holder.function

    def __repr__(self) -> str:
        return f"<tapejax.Function {self.__name__} at {id(self):#x}>"

    # -- calling -------------------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _CONFIG.run_eagerly:
            return self._python_function(*args, **kwargs)
        if CONTEXT.trace is not None:
            return self._inline()(*args, **kwargs)
        template, tensors = self._binder.bind(*self._binder.canonical(args, kwargs))
        concrete = self._concrete.get(template.key)
        variables = None if concrete is None else concrete.live_variables()
        if variables is None:
            concrete, variables = self._lookup(template, tensors, note=True)
        else:
            self._detector.called_without_tracing()
        return self._run(concrete, variables, tensors)

    def expect(self, *args: Any, **kwargs: Any) -> None:
        """Says that a call with these arguments comes soon (a tapejax extension; Keras's fit says so of its next
        batch). If it is a new size of a relaxed trace (a partial last batch), the next call that compiles a size
        of that trace also queues this one's compile on the background worker, so that both compile at once."""
        tensors = self._binder.bind(*self._binder.canonical(args, kwargs))[1]
        self.upcoming = (tuple(t._value.shape for t in tensors), tuple(t._value.dtype for t in tensors))

    def _inline(self) -> Callable:
        """What another function's trace runs for a call to this one: the Python function (converted by AutoGraph
        if this function converts), inlined in that trace. Its trace is counted once per call key, as TF counts
        the function it traces for such a call, which a later call with that key outside reuses, uncounted."""
        def call(*args: Any, **kwargs: Any) -> Any:
            args, kwargs = self._binder.canonical(args, kwargs)
            key = self._binder.count_key(self._binder.bind(args, kwargs)[0])
            if key not in self._counted:
                self._counted[key] = True
                self._tracing_count += 1
            return self._traced_function()(*args, **kwargs)

        return call

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(EagerTensor(jax.numpy.zeros([d or 1 for d in s.shape], s.dtype._np))
                         for s in self._input_signature)
        template, tensors = self._binder.bind(*self._binder.canonical(args, kwargs))
        return self._lookup(template, tensors, note=False)[0]

    def _lookup(self, template: Template, tensors: list[Tensor], note: bool) -> tuple[ConcreteFunction, list]:
        """The trace for a call that the hot path did not find: traced here, under the lock, unless another
        thread traced it meanwhile or (reduce_retracing) a relaxed trace accepts it. A call that traced counts
        towards TF's warning about frequent retracing."""
        with self._lock:
            count, made = self._tracing_count, self._traces_made
            concrete = self._concrete.get(template.key)
            variables = None if concrete is None else concrete.live_variables()
            if variables is None:
                concrete = self._trace_call(template, tensors)
                variables = concrete.live_variables()
            traced = self._tracing_count != count  # as TF counts: not a trace of a signature traced before
            # every trace made, for tf.debugging.explain_retrace and compile_stats
            cause = self._detector.traced(retrace_causes.record(self, template)) if self._traces_made != made else None
        if note:
            if traced:
                # TF names a method's function unbound (`<function M.__call__ at ...>`)
                self._detector.called_with_tracing(getattr(self._python_function, "__func__", self._python_function),
                                                   cause)
            else:
                self._detector.called_without_tracing()
        return concrete, variables

    def _trace_call(self, template: Template, tensors: list[Tensor]) -> ConcreteFunction:
        if not self._reduce_retracing or self._input_signature is not None:
            symbolic = symbolic_specs(flat_specs(self._input_signature)) if self._binder.symbolic else None
            return self._trace(template, tensors, template.key, self._binder.count_key(template), symbolic)
        # reduce_retracing: the trace of a relaxed signature (TF's), which the call's exact key then aliases
        group, specs = template.key[:2], template.key[2]
        traced = self._relaxed.get(group)
        if traced is None:
            traced = self._relaxed[group] = []
        general = retracing.accepting(traced, specs)
        if general is None:
            general = retracing.relax(specs, traced)
            if self._batch_relaxed:
                general = retracing.unbatched(general)
            traced.append(general)
        realised = retracing.realise(general, specs)
        if realised == specs or (*group, general) in self._per_size:
            key, symbolic = template.key, None
        else:
            key = (*group, realised)
            symbolic = symbolic_specs([TensorSpec(shape, dtypes.from_numpy(dtype)) for shape, dtype in realised],
                                      batch=self._batch_relaxed)
        concrete = self._concrete.get(key)
        if concrete is None or concrete.live_variables() is None:
            concrete = self._trace(template, tensors, key, (*group, general), symbolic)
        self._store(template.key, concrete)
        return concrete

    def _trace(self, template: Template, tensors: list[Tensor], key: Any, count_key: Any,
               symbolic: tuple | None) -> ConcreteFunction:
        """Traces until the variable set is stable; Python side effects run once per trace, as in TF. The
        variables are those reachable from this call (not every variable an earlier call passed: a function
        reused across models traces each model once, with its own variables), and those earlier traces met."""
        found = reachable.reachable_variables(self._python_function, tensors, template)
        found.update(self._discovered)
        tensor_vals = tuple(t._value for t in tensors)
        count = self._tracing_count
        for _ in range(_MAX_DISCOVERY_TRACES):
            born_after = variable_lib._new_uid()  # variables with a larger uid were created by this trace
            variables = list(found.values())
            concrete = ConcreteFunction(self, template, variables, first=not self._traced_once)
            printed = io.StringIO()
            try:
                # A symbolic trace may be abandoned for one per size (below): what the step prints while it
                # traces ("Tracing") is shown once, by the trace that is kept.
                started = time.perf_counter()
                with contextlib.redirect_stdout(printed) if symbolic is not None else contextlib.nullcontext():
                    concrete.trace(tensor_vals, tuple(v._value for v in variables), _no_calls(), symbolic)
                self._detector.trace_s += time.perf_counter() - started
                sys.stdout.write(printed.getvalue())
            except Exception as e:
                # a partially known shape made into a tensor is the user's error, as in TF, where they chose the
                # None dimensions (an input_signature); Keras's steps are traced per size instead
                if symbolic is None or (isinstance(e, PartiallyKnownShape) and not self._batch_relaxed):
                    sys.stdout.write(printed.getvalue())
                    raise
                self._tracing_count -= 1  # that trace was abandoned, not kept
                # The step needs a concrete size somewhere (a shape computed from a None dimension, two None
                # dimensions it assumes equal): trace per size instead, as XLA compiles per size anyway. An error
                # of the step itself is raised by that trace (static_values.py).
                if self._input_signature is not None:
                    self._binder.symbolic = False
                    template = template._replace(
                        key=(*template.key[:2], tuple((v.shape, v.dtype) for v in tensor_vals)))
                else:
                    self._per_size.add(count_key)
                key, symbolic = template.key, None
                continue
            self._traced_once = True
            self._created.extend(concrete.created)
            if not concrete.discovered:
                concrete.finish()
                self._traces_made += 1
                self._store(key, concrete)
                if count_key in self._counted:  # counted already (inlined in another trace, another size, or
                    self._tracing_count = count  # traced before and forgotten: TF keeps every trace)
                self._counted[count_key] = True
                return concrete
            if not concrete.created and all(uid < born_after for uid in concrete.discovered):
                # It met variables that existed already: TF, which sees them, traces once. Variables the trace
                # created (in `tf.init_scope` too, as Keras optimizers build their slots) make TF trace again,
                # and count both traces, as here.
                self._tracing_count -= 1
            self._discovered.update(concrete.discovered)
            found.update(concrete.discovered)
        raise RuntimeError(f"tf.function {self.__name__!r} met new variables on each of "
                           f"{_MAX_DISCOVERY_TRACES} traces: create its variables once, outside the step or on "
                           "its first call.")

    def _store(self, key: Any, concrete: ConcreteFunction) -> None:
        evicted = self._concrete.evicted
        self._concrete[key] = concrete
        if self._concrete.evicted != evicted and not self._warned_eviction:
            self._warned_eviction = True
            logs.warning(_EVICTION_MESSAGE.format(self._python_function, MAX_TRACES))

    def _run(self, concrete: ConcreteFunction, variables: list[Variable], tensors: list[Tensor]) -> Any:
        if self._seed_epoch != _SEED_EPOCH[0]:  # tf.random.set_seed restarts the sequence of every function
            self._seed_epoch, self._calls = _SEED_EPOCH[0], 0
        calls = jax.numpy.asarray(self._calls, np.uint32) if concrete.used_calls else _no_calls()
        self._calls += 1
        tapes = CONTEXT.tapes
        if not tapes:
            outs = concrete(tuple([t._value for t in tensors]), tuple([v._current() for v in variables]), calls,
                            variables)
            return concrete.structure(tuple([EagerTensor(o) for o in outs]))
        # Under tapes outside the function: the call is one recorded op of (arguments, variable reads).
        reads = [v._read() for v in variables]
        tensor_vals = tuple(t._value for t in tensors)
        var_vals = tuple(value for _, value in reads)
        outs = concrete(tensor_vals, var_vals, calls, variables)
        results = tuple(EagerTensor(o) for o in outs)
        written = tuple(EagerTensor(v._value) for v in concrete.assigned_variables(variables))
        in_tids = (*(t._tid for t in tensors), *(tid for tid, _ in reads), new_tid())
        if concrete.used is not None:  # an input the step never reads is not connected: its gradient is None
            in_tids = tuple(t if used else new_tid() for t, used in zip(in_tids, concrete.used))
        dispatch.record_call(concrete.opdef(), in_tids, (*tensor_vals, *var_vals, calls), results + written, tapes)
        return concrete.structure(results)


_NO_CALLS_ARRAY: list[Any] = []


def _no_calls() -> Any:
    """The call number of a function without random ops, placed once on first use (not at import: importing
    tapejax must not start JAX's backend before a MultiWorkerMirroredStrategy calls jax.distributed.initialize)."""
    if not _NO_CALLS_ARRAY:
        _NO_CALLS_ARRAY.append(jax.device_put(np.asarray(0, np.uint32)))
    return _NO_CALLS_ARRAY[0]
_SEED_EPOCH = [0]  # bumped by tf.random.set_seed


def new_seed_epoch() -> None:
    """Called by tf.random.set_seed: compiled functions draw their sequence from its start again, as in TF."""
    _SEED_EPOCH[0] += 1


def function(func: Callable | None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: bool | None = None, reduce_retracing: bool = False,
             experimental_implements: Any = None, experimental_autograph_options: Any = None,
             experimental_attributes: Any = None, experimental_relax_shapes: Any = None,
             experimental_compile: Any = None, experimental_follow_type_hints: Any = None) -> Any:
    """Compiles `func` with `jax.jit` (`tf.function`), as a decorator with or without arguments or as a call."""
    def decorate(f: Callable) -> Function:
        return Function(f, input_signature, jit_compile, reduce_retracing, autograph)

    return decorate if func is None else decorate(func)
