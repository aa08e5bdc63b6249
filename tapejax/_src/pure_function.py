"""A TF-style function as a pure JAX function (`tapejax.to_jax`): `(state, *arrays) -> (new_state, outputs)`.

There is no second interpreter here: a call is one tf.function trace (`ConcreteFunction._pure`) run on the
values JAX passes in — jax.jit's, grad's, vmap's, scan's or export's tracers, or plain arrays — instead of on
the tracers of tf.function's own `jax.jit`. The function runs AutoGraph-converted, with Tensors wrapping those
values and its Variables functionalised by the same `_Trace`: a read sees the state's value, an assignment
replaces it, nothing is written to a Variable. Tapes, custom gradients, control flow, Keras layers and
optimizer steps inside run exactly as inside a tf.function, and the caller's JAX transformation of the trace
is JAX's own.

**The state.** Which variables a function touches is known once it has run. The first trace of each new
signature (argument structure, shapes, dtypes, Python values) is an *abstract* one (`jax.eval_shape`) that
finds them, redone while it meets new ones, as tf.function redoes a trace that created variables; only the
first of those traces may create variables (Keras weights built on first call, optimizer slots and
`iterations`), which get concrete initial values as in tf.function. A function that creates variables on a
later trace raises TF's ValueError. The state then holds one entry per variable met (pure_state.py: the keys),
plus `CALLS_KEY` when the function draws random numbers: each call's number, which random ops fold into their
key as a tf.function's calls do, returned incremented in `new_state`, so a loop of steps draws anew each step and
the function stays pure. Op seeds are drawn once (the first trace) and every later trace replays them.

**Checks.** Run-time value checks that a tf.function raises when its step runs (tf.case's predicates, index
ranges) cannot raise inside a caller's JAX transformation: they are dropped (checkify's error state is
discarded), and JAX's semantics for such values apply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .context import seed_snapshot, seeds
from . import caches, pure_state
from .capture import is_leaf
from .concrete_function import ConcreteFunction
from .function import Function
from .signature import Template
from .tensor import EagerTensor, Tensor
from .variable import Variable

_MAX_DISCOVERY_TRACES = 4
_MAX_SIGNATURES = 64  # signatures whose variables are known, per function (forgotten: found again)
_NO_CALLS = np.asarray(0, np.uint32)  # the call number of a function without random ops (numpy: import starts no backend)


class PureFunction:
    """The pure JAX function `to_jax` returns; see the module docstring."""

    def __init__(self, fn: Callable):
        if isinstance(fn, PureFunction):
            raise TypeError("tapejax.to_jax: this function is already a pure JAX function.")
        if not callable(fn):
            raise TypeError(f"tapejax.to_jax expects a callable (a Python function, tf.function, Keras model or "
                            f"layer); got {type(fn).__name__}.")
        autograph = True
        if isinstance(fn, Function):
            fn, autograph = fn.python_function, fn._autograph
        name = getattr(fn, "__name__", None) or type(fn).__name__
        self.__name__ = f"to_jax({name})"
        self.__wrapped__ = fn
        self._function = Function(fn, autograph=autograph, name=name)
        self._keys: dict[int, str] = {}  # variable uid -> its key in the state
        self._variables: dict[str, Variable] = {}  # key -> variable, in the order the traces met them
        self._signatures = caches.Recent(f"signatures of {self.__name__}", _MAX_SIGNATURES)  # key -> has checks
        self._traced = False
        self._seed_state: tuple | None = None
        self.uses_calls = False
        self.calls = np.uint32(0)  # the call number variables_of gives (assign_state sets it)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<tapejax pure function {self.__name__}>"

    # -- the state ------------------------------------------------------------------------------------------

    def traced(self) -> bool:
        return self._traced

    def variables(self) -> dict[str, Variable]:
        return dict(self._variables)

    def extra_keys(self) -> tuple[str, ...]:
        return (pure_state.CALLS_KEY,) if self.uses_calls else ()

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = {k: v._current() for k, v in self._variables.items()}
        if self.uses_calls:
            state[pure_state.CALLS_KEY] = jax.numpy.asarray(self.calls, np.uint32)
        return state

    def trace(self, *args: Any, **kwargs: Any) -> None:
        """Finds the variables of a call with these arguments (arrays or jax.ShapeDtypeStruct), if not known."""
        self._prepare(_as_tensors((args, kwargs)))

    # -- calling --------------------------------------------------------------------------------------------

    def __call__(self, state: Any, *args: Any, **kwargs: Any) -> tuple[dict[str, Any], Any]:
        template, tensors, has_checks = self._prepare(_as_tensors((args, kwargs)))
        variables = self._variables
        values = pure_state.checked_values(state, variables, self.__name__, self.extra_keys())
        calls = state[pure_state.CALLS_KEY] if self.uses_calls else _NO_CALLS
        concrete = ConcreteFunction(self._function, template, list(variables.values()), first=False)
        run = concrete._checked if has_checks else concrete._pure
        with seeds(self._seed_state):
            outs, new_vals, *_ = run(tuple(t._value for t in tensors), tuple(values), calls)
        if concrete.discovered:  # the signature's variables were found; only a changed program meets new ones
            raise ValueError(f"{self.__name__} read or wrote variables its state lacks "
                             f"({sorted(v.name for v in concrete.discovered.values())}): the Python function "
                             "changed between traces. Make a new to_jax function.")
        new_state = dict(state)
        keys = list(variables)
        for i, value in zip(concrete.assigned, new_vals):
            dtype = variables[keys[i]].dtype._np
            new_state[keys[i]] = jax.lax.convert_element_type(value, dtype)  # a strong dtype: scan carries it
        if self.uses_calls:
            new_state[pure_state.CALLS_KEY] = calls + np.uint32(1)
        return new_state, concrete.structure(outs)

    def _prepare(self, bound: tuple) -> tuple[Template, list[Tensor], bool]:
        """The call's template and tensors, and whether its trace has value checks; its variables found first
        when the signature is new (an abstract trace)."""
        args, kwargs = self._function._binder.canonical(*bound)
        template, tensors = self._function._binder.bind(args, kwargs)
        has_checks = self._signatures.get(template.key)
        if has_checks is None:
            with self._lock:
                has_checks = self._signatures[template.key] = self._discover(template, tensors)
        return template, tensors, has_checks

    def _discover(self, template: Template, tensors: list[Tensor]) -> bool:
        specs = tuple(jax.ShapeDtypeStruct(t._value.shape, t._value.dtype) for t in tensors)
        for _ in range(_MAX_DISCOVERY_TRACES):
            variables = list(self._variables.values())
            concrete = ConcreteFunction(self._function, template, variables, first=not self._traced)
            if not self._traced:
                self._seed_state = seed_snapshot()
            calls = jax.ShapeDtypeStruct((), np.uint32)
            var_specs = tuple(jax.ShapeDtypeStruct(v._value.shape, v._value.dtype) for v in variables)
            with seeds(self._seed_state if self._traced else None):
                jax.eval_shape(concrete._checked, specs, var_specs, calls)
            self._traced = True
            self.uses_calls = self.uses_calls or concrete.used_calls
            found = {v._uid: v for v in [*concrete.created, *concrete.discovered.values()]}
            new = [v for uid, v in found.items() if self._keys.get(uid) not in self._variables]
            if not new:
                return concrete._failure_tree.num_leaves > 0
            self._variables.update(pure_state.assign_keys(new, self._keys))
        raise RuntimeError(f"{self.__name__} met new variables on each of {_MAX_DISCOVERY_TRACES} traces: create "
                           "its variables once, outside the function or on its first call.")


def _as_tensors(tree: Any) -> Any:
    """Arrays (and jax.ShapeDtypeStructs, for an abstract trace) become Tensors; other leaves stay Python values."""
    def convert(x: Any) -> Any:
        if isinstance(x, jax.ShapeDtypeStruct):
            return EagerTensor(jax.numpy.zeros(x.shape, x.dtype))
        if isinstance(x, jax.Array | np.ndarray | np.generic):
            return EagerTensor(jax.numpy.asarray(x))
        if isinstance(x, Variable):
            return EagerTensor(x._value)
        return x

    return jax.tree_util.tree_map(convert, tree, is_leaf=is_leaf)
