"""tf.function: a Python step traced once by `jax.jit`, with Tensors wrapping tracers, and run as one executable.

Variables are functionalised (DESIGN, "Outside the tape"): the values of the variables a trace reads are inputs
of the jitted function and the values it assigns are outputs, written back after the call. Inside a trace,
variable reads, assignments and creations go through the `_Trace` (variable.OVERRIDES.trace), so nothing is
written until the compiled step has returned: an exception leaves every variable as it was. So does a value
check that fails when the step runs (tf.case's): a checkify check, whose error state the step returns and the
call raises (as InvalidArgumentError) before writing anything back.

The variable set is found while tracing. Before a first trace it is seeded with the variables reachable from the
arguments, the bound object and the function's closure and globals; a trace that meets a variable outside its
set (one created on the first call, as Keras layers and optimizer slots are, or one the seeding missed) is
redone with the larger set, as TF retraces a function that created variables.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.extend
import numpy as np
from jax.experimental import checkify

from . import autograph, dispatch, dtypes, errors, tape as tape_lib
from .capture import unbounded_loop_message
from .convert import to_array
from .module import Module
from .registry import OpDef
from .tensor import EagerTensor, Tensor, TensorShape, _Operators, new_tid
from .variable import OVERRIDES, Variable

_MAX_DISCOVERY_TRACES = 4  # a trace that keeps meeting new variables is a bug in the step: say so


class _Config(threading.local):
    def __init__(self):
        self.run_eagerly = False


_CONFIG = _Config()


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Runs every tf.function as plain Python (`tf.config.run_functions_eagerly`): a debugging switch."""
    _CONFIG.run_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _CONFIG.run_eagerly


class TensorSpec:
    """The shape and dtype a tf.function argument must have (`tf.TensorSpec`); `None` dimensions are free."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape: Any, dtype: Any = dtypes.float32, name: str | None = None):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, value: Any) -> bool:
        """Whether a tensor (or spec) of this dtype and a compatible shape may be passed for this spec."""
        return self.dtype == value.dtype and self.shape.is_compatible_with(value.shape)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name)
                == (other.shape, other.dtype, other.name))

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={self.name!r})"


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
        self.created = 0
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

    def check_creation(self) -> None:
        if not self.first:
            raise ValueError(
                "tf.function only supports singleton tf.Variables created on the first call. Make sure the "
                "tf.Variable is only created once or created outside tf.function.")
        self.created += 1

    def call_count(self) -> Any:
        """This call's number, a traced input: random ops fold it into their key, so each call draws anew."""
        self.used_calls = True
        return self._calls


@contextlib.contextmanager
def _tracing(trace: _Trace | None, fold_constants: bool) -> Iterator[None]:
    """Installs `trace` on this thread. With `fold_constants`, ops with only concrete inputs are evaluated at
    trace time (so variables created on a first call get concrete initial values), the rest are staged into
    the jitted function; a trace with symbolic sizes cannot fold (a size has no value until the call)."""
    saved = OVERRIDES.trace
    OVERRIDES.trace = trace
    try:
        with tape_lib.recording_only([]), (jax.ensure_compile_time_eval() if fold_constants
                                           else contextlib.nullcontext()):
            yield
    finally:
        OVERRIDES.trace = saved


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Lifts what runs inside it out of any tf.function trace and tape (`tf.init_scope`): variables built
    lazily by Keras layers and optimizers get concrete initial values."""
    saved = OVERRIDES.trace
    OVERRIDES.trace = None
    try:
        with tape_lib.recording_only([]), jax.ensure_compile_time_eval():
            yield
    finally:
        OVERRIDES.trace = saved


# -- arguments and the retracing key ------------------------------------------------------------------------


def _positional_arity(signature: inspect.Signature | None) -> int | None:
    """The number of parameters if every one is positional without a default (binding changes nothing)."""
    if signature is None:
        return None
    params = signature.parameters.values()
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if all(p.kind in plain and p.default is p.empty for p in params):
        return len(signature.parameters)
    return None


def _is_leaf(x: Any) -> bool:
    return isinstance(x, _Operators)


def _leaf_key(x: Any) -> Any:
    """What a retrace depends on for one argument: a tensor's shape and dtype, a Python value itself."""
    if isinstance(x, Tensor):
        return (x._value.shape, x._value.dtype)
    if isinstance(x, Variable):
        return ("variable", x._uid)
    if isinstance(x, np.ndarray | np.generic):
        return (x.shape, x.dtype)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return (type(x), x)


def _is_tensor_like(x: Any) -> bool:
    return isinstance(x, Tensor | np.ndarray | np.generic)


def _cannot_bind(value: Any, spec: TensorSpec, signature: tuple, args: tuple, kwargs: dict) -> TypeError:
    shape = tuple(getattr(value, "shape", ()))
    dtype = dtypes.from_numpy(np.asarray(value).dtype) if not isinstance(value, Tensor) else value.dtype
    got = TensorSpec(TensorShape(shape), dtype, None)
    return TypeError(
        f"Binding inputs to tf.function failed due to `Can not cast {got!r} to {spec!r}`. Received args: {args} "
        f"and kwargs: {kwargs} for signature: ({', '.join(map(repr, signature))}).")


# -- compiled functions ------------------------------------------------------------------------------------


class ConcreteFunction:
    """One trace of a tf.function: a jitted pure function of (tensor arguments, variable values, call number)
    returning (tensor outputs, assigned variable values), and how to put its results back together."""

    def __init__(self, function: Function, template: _Template, variables: list[Variable], first: bool):
        self.function = function
        self.template = template
        self.variables = variables
        self.first = first
        self.assigned: list[Variable] = []
        self.discovered: dict[int, Variable] = {}
        self.used_calls = False
        self.created = 0
        self._out: Any = None  # (treedef, which leaves are tensors, the Python leaves)
        self._failure_tree: Any = None  # treedef of checkify's error state, set when traced
        self._jitted = jax.jit(self._checked)
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
                if isinstance(leaf, _Operators):
                    outs.append(leaf._value if isinstance(leaf, Tensor) else leaf._current())
                    is_tensor.append(True)
                elif isinstance(leaf, bool | int | float | complex | np.ndarray | np.generic):
                    outs.append(to_array(leaf, on_device=False))  # TF returns Python numbers as tensors
                    is_tensor.append(True)
                else:
                    python.append(leaf)
                    is_tensor.append(False)
        self._out = (treedef, tuple(is_tensor), tuple(python))
        self.assigned = list(trace.assigned.values())
        self.discovered = trace.discovered
        self.used_calls = trace.used_calls
        self.created = trace.created
        self.reverse_ok = not trace.unbounded_loops
        return tuple(outs), tuple(trace.values[v._uid] for v in self.assigned)

    def _checked(self, tensor_vals: tuple, var_vals: tuple, calls: Any) -> tuple:
        """`_pure` with its run-time input checks (tf.case's, control_flow._check_predicates) functionalised by
        checkify: their error state comes back as extra outputs, none at all for a step without checks, so a step
        without them pays nothing for them (not even a device-to-host sync)."""
        failure, (outs, new_vals) = checkify.checkify(self._pure, errors=checkify.user_checks)(
            tensor_vals, var_vals, calls)
        leaves, self._failure_tree = jax.tree_util.tree_flatten(failure)
        return outs, new_vals, tuple(leaves)

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
        dimensions), through `jax.export`, so one trace serves every size, compiled per size by `jax.jit`."""
        if symbolic is None:
            jaxpr = self._jitted.trace(tensor_vals, var_vals, calls).jaxpr.jaxpr
            self.used = _live_inputs(jaxpr, self._failure_tree.num_leaves)
            return
        self.symbolic = True
        specs = (symbolic, tuple(jax.ShapeDtypeStruct(v.shape, v.dtype) for v in var_vals),
                 jax.ShapeDtypeStruct((), np.uint32))
        self._jitted = jax.jit(jax.export.export(self._jitted)(*specs).call)

    def __call__(self, tensor_vals: tuple, var_vals: tuple, calls: Any) -> Any:
        outs, new_vals, failure = self._jitted(tensor_vals, var_vals, calls)
        if failure:
            self._raise_failure(failure)
        for variable, value in zip(self.assigned, new_vals):
            variable._value = value  # the write-back: only once the whole step has run
        return outs

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
            n_args, n_vars = self.template.n_tensors, len(self.variables)

            def impl(*flat: Any) -> tuple:
                # checked when the call ran (ConcreteFunction.__call__); a replay for a derivative is not
                outs, new_vals, _ = self._jitted(flat[:n_args], flat[n_args:n_args + n_vars], flat[-1])
                return (*outs, *new_vals)

            self._opdef = OpDef(f"function.{self.function.__name__}", impl, op_type="PartitionedCall", jit=False,
                                has_gradient=self.reverse_ok, no_gradient="" if self.reverse_ok else
                                unbounded_loop_message())
        return self._opdef


class _Template(NamedTuple):
    """The arguments of a call with their tensors taken out; `key` is what a trace is reused for: the Python
    arguments' values and the tensors' shapes and dtypes."""

    treedef: Any
    statics: tuple  # per leaf: _TENSOR, or a _Static Python value
    n_tensors: int
    key: tuple

    def rebuild(self, tensor_vals: tuple) -> tuple[tuple, dict]:
        tensors = iter(tensor_vals)
        leaves = [EagerTensor(next(tensors)) if s is _TENSOR else s.value for s in self.statics]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


class _TensorSlot:
    """Marks where a tensor argument goes in a _Template (hashable, equal only to itself)."""

    def __repr__(self) -> str:
        return "<tensor>"


_TENSOR = _TensorSlot()


class _Static:
    """A Python argument held in a template: compared by `_leaf_key` (value, or identity when unhashable)."""

    __slots__ = ("value", "key")

    def __init__(self, value: Any):
        self.value, self.key = value, _leaf_key(value)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Static) and self.key == other.key


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
        self._concrete: dict[Any, ConcreteFunction] = {}
        self._variables: dict[int, Variable] = {}  # uid -> variable: the inputs of every later trace
        self._traced_once = False
        self._tracing_count = 0
        self._counted: set = set()  # the keys whose trace is counted, whether traced here or inlined in another
        try:
            self._signature: inspect.Signature | None = inspect.signature(python_function)
        except (TypeError, ValueError):  # a callable without a Python signature: calls are keyed as given
            self._signature = None
        self._calls = 0  # the call number random ops fold into their keys
        self._seed_epoch = _SEED_EPOCH[0]
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # The hot path of a call: a call that binds positionally as given skips Signature.bind, and one whose
        # arguments are all tensors reuses the structure the first such call flattened (`_bind`).
        self._positional = _positional_arity(self._signature)
        self._tensor_calls: dict[int, tuple[Any, tuple]] = {}  # number of tensor arguments -> (treedef, statics)
        self._symbolic = self._input_signature is not None and any(
            not s.shape.is_fully_defined() for s in _flat_specs(self._input_signature))

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
        """Methods: one Function per instance, so each instance's variables are its own inputs."""
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = Function(types.MethodType(self._python_function, instance), self._input_signature,
                             self._jit_compile, self._reduce_retracing, self._autograph, self.__name__)
            self._bound[instance] = bound
        return bound

    def __repr__(self) -> str:
        return f"<tapejax.Function {self.__name__} at {id(self):#x}>"

    # -- calling -------------------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _CONFIG.run_eagerly:
            return self._python_function(*args, **kwargs)
        if OVERRIDES.trace is not None:
            return self._inline()(*args, **kwargs)
        template, tensors = self._bind(*self._canonical(args, kwargs))
        concrete = self._concrete.get(template.key)
        if concrete is None:
            concrete = self._trace(template, tensors)
        return self._run(concrete, template, tensors)

    def _inline(self) -> Callable:
        """What another function's trace runs for a call to this one: the Python function (converted by AutoGraph
        if this function converts), inlined in that trace. Its trace is counted once per call key, as TF counts
        the function it traces for such a call, which a later call with that key outside reuses, uncounted."""
        def call(*args: Any, **kwargs: Any) -> Any:
            args, kwargs = self._canonical(args, kwargs)
            key = self._count_key(self._bind(args, kwargs)[0])
            if key not in self._counted:
                self._counted.add(key)
                self._tracing_count += 1
            return self._traced_function()(*args, **kwargs)

        return call

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(EagerTensor(jax.numpy.zeros([d or 1 for d in s.shape], s.dtype._np))
                         for s in self._input_signature)
        template, tensors = self._bind(*self._canonical(args, kwargs))
        concrete = self._concrete.get(template.key)
        return concrete if concrete is not None else self._trace(template, tensors)

    def _canonical(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """The arguments bound to the Python signature, defaults filled in, as TF binds them before keying a
        call: f(x, scale=2.0), f(x, 2.0) and, when 2.0 is the default, f(x) are one call and one trace."""
        if self._signature is None or (not kwargs and len(args) == self._positional):
            return args, kwargs
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function failed due to `{e}`. Received args: {args} and kwargs: "
                            f"{kwargs} for signature: {self._signature}.") from None
        if self._input_signature is None:  # with one, the specs say what is passed; the rest keep their defaults
            bound.apply_defaults()
        return bound.args, bound.kwargs

    def _count_key(self, template: _Template) -> Any:
        """What one counted trace stands for: a call key, or the whole input_signature (TF traces it once, even
        when a step needing concrete sizes is traced here once per size)."""
        return "input_signature" if self._input_signature is not None else template.key

    def _bind(self, args: tuple, kwargs: dict) -> tuple[_Template, list[Tensor]]:
        if self._input_signature is not None:
            args = self._check_signature(args, kwargs)
        # Tensors only, by position: the structure is the one the first such call with as many tensors flattened.
        tensors_only = self._input_signature is None and not kwargs and all(type(a) is EagerTensor for a in args)
        known = self._tensor_calls.get(len(args)) if tensors_only else None
        if known is not None:
            treedef, statics_t = known
            tensors = list(args)
        else:
            treedef, statics_t, tensors = self._flatten(args, kwargs)
            if tensors_only:
                self._tensor_calls[len(args)] = (treedef, statics_t)
        # a signature with None dimensions is traced once, symbolically (ConcreteFunction.trace)
        specs = None if self._symbolic else tuple([(t._value.shape, t._value.dtype) for t in tensors])
        return _Template(treedef, statics_t, len(tensors), (treedef, statics_t, specs)), tensors

    @staticmethod
    def _flatten(args: tuple, kwargs: dict) -> tuple[Any, tuple, list[Tensor]]:
        """The call's structure, what each leaf is (a tensor or a static value), and its tensors."""
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_leaf)
        statics: list[Any] = []
        tensors: list[Tensor] = []
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                tensors.append(leaf)
                statics.append(_TENSOR)
            elif isinstance(leaf, np.ndarray | np.generic):  # TF converts numpy arguments to tensors
                tensors.append(EagerTensor(jax.numpy.asarray(leaf)))
                statics.append(_TENSOR)
            else:
                statics.append(_Static(leaf))
        return treedef, tuple(statics), tensors

    def _check_signature(self, args: tuple, kwargs: dict) -> tuple:
        signature = self._input_signature
        flat_specs, treedef = jax.tree_util.tree_flatten(signature, is_leaf=lambda s: isinstance(s, TensorSpec))
        try:  # each spec takes one argument, which may be a nested Python list (converted to one tensor)
            if kwargs:
                raise ValueError
            flat_args = treedef.flatten_up_to(tuple(args))
        except (ValueError, TypeError):
            raise TypeError(f"tf.function takes {len(flat_specs)} argument(s) by its input_signature "
                            f"{signature}; got args {args} and kwargs {kwargs}.") from None
        bound = []
        for value, spec in zip(flat_args, flat_specs):
            tensor = value if isinstance(value, Tensor) else None
            if tensor is None:
                try:
                    tensor = EagerTensor(jax.numpy.asarray(to_array(value, dtype=spec.dtype)))
                except (TypeError, ValueError):
                    raise _cannot_bind(value, spec, signature, args, kwargs) from None
            if tensor.dtype != spec.dtype or not spec.shape.is_compatible_with(tensor.shape):
                raise _cannot_bind(tensor, spec, signature, args, kwargs)
            bound.append(tensor)
        return jax.tree_util.tree_unflatten(treedef, bound)

    def _trace(self, template: _Template, tensors: list[Tensor]) -> ConcreteFunction:
        """Traces until the variable set is stable; Python side effects run once per trace, as in TF."""
        if not self._variables:
            self._variables.update(_reachable_variables(self._python_function, tensors, template))
        tensor_vals = tuple(t._value for t in tensors)
        symbolic = _symbolic_specs(_flat_specs(self._input_signature)) if self._symbolic else None
        count, count_key = self._tracing_count, self._count_key(template)
        for _ in range(_MAX_DISCOVERY_TRACES):
            variables = list(self._variables.values())
            concrete = ConcreteFunction(self, template, variables, first=not self._traced_once)
            try:
                concrete.trace(tensor_vals, tuple(v._value for v in variables), _NO_CALLS, symbolic)
            except Exception as e:
                if symbolic is None or type(e).__name__ != "InconclusiveDimensionOperation":
                    raise
                self._tracing_count -= 1  # that trace was abandoned, not kept
                # the step needs a concrete size somewhere: trace per size instead, as XLA compiles anyway
                self._symbolic, symbolic = False, None
                template = template._replace(key=(*template.key[:2], tuple((v.shape, v.dtype) for v in tensor_vals)))
                continue
            self._traced_once = True
            if not concrete.discovered:
                self._concrete[template.key] = concrete
                if count_key in self._counted:  # counted already (inlined in another trace, or another size)
                    self._tracing_count = count
                self._counted.add(count_key)
                return concrete
            self._variables.update(concrete.discovered)
        raise RuntimeError(f"tf.function {self.__name__!r} met new variables on each of "
                           f"{_MAX_DISCOVERY_TRACES} traces: create its variables once, outside the step or on "
                           "its first call.")

    def _run(self, concrete: ConcreteFunction, template: _Template, tensors: list[Tensor]) -> Any:
        if self._seed_epoch != _SEED_EPOCH[0]:  # tf.random.set_seed restarts the sequence of every function
            self._seed_epoch, self._calls = _SEED_EPOCH[0], 0
        calls = jax.numpy.asarray(self._calls, np.uint32) if concrete.used_calls else _NO_CALLS
        self._calls += 1
        tapes = tape_lib.STACK.tapes
        if not tapes:
            outs = concrete(tuple([t._value for t in tensors]), tuple([v._current() for v in concrete.variables]),
                            calls)
            return concrete.structure(tuple([EagerTensor(o) for o in outs]))
        # Under tapes outside the function: the call is one recorded op of (arguments, variable reads).
        reads = [v._read() for v in concrete.variables]
        tensor_vals = tuple(t._value for t in tensors)
        var_vals = tuple(value for _, value in reads)
        outs = concrete(tensor_vals, var_vals, calls)
        results = tuple(EagerTensor(o) for o in outs)
        written = tuple(EagerTensor(v._value) for v in concrete.assigned)
        in_tids = (*(t._tid for t in tensors), *(tid for tid, _ in reads), new_tid())
        if concrete.used is not None:  # an input the step never reads is not connected: its gradient is None
            in_tids = tuple(t if used else new_tid() for t, used in zip(in_tids, concrete.used))
        dispatch.record(tapes, concrete.opdef(), (), in_tids, (*tensor_vals, *var_vals, calls),
                        results + written, True)
        return concrete.structure(results)


def _live_inputs(jaxpr: Any, n_checks: int = 0) -> tuple[bool, ...]:
    """Per input of a jaxpr, whether an output (or an effect, like tf.print) depends on it: backwards liveness.
    The last `n_checks` outputs are run-time checks' error state: what only they read has no gradient, as in TF."""
    outvars = jaxpr.outvars[:len(jaxpr.outvars) - n_checks]
    live = {v for v in outvars if not isinstance(v, jax.extend.core.Literal)}
    for eqn in reversed(jaxpr.eqns):
        if eqn.effects or any(v in live for v in eqn.outvars):
            live.update(v for v in eqn.invars if not isinstance(v, jax.extend.core.Literal))
    return tuple(v in live for v in jaxpr.invars)


_NO_CALLS = jax.numpy.asarray(0, np.uint32)
_SEED_EPOCH = [0]  # bumped by tf.random.set_seed


def new_seed_epoch() -> None:
    """Called by tf.random.set_seed: compiled functions draw their sequence from its start again, as in TF."""
    _SEED_EPOCH[0] += 1


def _flat_specs(signature: tuple) -> list[TensorSpec]:
    return jax.tree_util.tree_leaves(signature, is_leaf=lambda s: isinstance(s, TensorSpec))


def _symbolic_specs(specs: list[TensorSpec]) -> tuple:
    """JAX argument specs for an input_signature, each None dimension its own symbol (independent, as in TF)."""
    names = iter(f"d{i}" for i in range(10_000))
    dims = [", ".join(str(d) if d is not None else next(names) for d in s.shape) for s in specs]
    scope = jax.export.SymbolicScope()
    return tuple(jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"({d})" if d else "()", scope=scope),
                                      s.dtype._np) for d, s in zip(dims, specs))


def function(func: Callable | None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: bool | None = None, reduce_retracing: bool = False,
             experimental_implements: Any = None, experimental_autograph_options: Any = None,
             experimental_attributes: Any = None, experimental_relax_shapes: Any = None,
             experimental_compile: Any = None, experimental_follow_type_hints: Any = None) -> Any:
    """Compiles `func` with `jax.jit` (`tf.function`), as a decorator with or without arguments or as a call."""
    def decorate(f: Callable) -> Function:
        return Function(f, input_signature, jit_compile, reduce_retracing, autograph)

    return decorate if func is None else decorate(func)


# -- seeding the variable set --------------------------------------------------------------------------------


def _reachable_variables(fn: Callable, tensors: list, template: _Template) -> dict[int, Variable]:
    """Variables the step can see without running it: in its arguments, its bound object, its closure and the
    globals its code names, and so on through the user functions it names (a few levels deep). Only
    variables, plain containers, user functions and tapejax's holders of variables (tf.Module, optimizers) are
    walked, never other objects."""
    found: dict[int, Variable] = {}
    roots: list[Any] = [s.value for s in template.statics if isinstance(s, _Static)]
    functions: list[Any] = [fn]
    seen: set[int] = set()
    for _ in range(3):  # the step, the helpers it calls, theirs
        next_functions: list[Any] = []
        for f in functions:
            if isinstance(f, types.MethodType):
                roots.append(f.__self__)
                f = f.__func__
            f = inspect.unwrap(f)
            if not isinstance(f, types.FunctionType) or id(f) in seen or not autograph.is_user_code(f):
                continue
            seen.add(id(f))
            named = [cell.cell_contents for cell in (f.__closure__ or ()) if _cell_full(cell)]
            names = set(f.__code__.co_names)
            for const in f.__code__.co_consts:  # names used by nested functions and comprehensions
                if isinstance(const, types.CodeType):
                    names.update(const.co_names)
            named.extend(f.__globals__[n] for n in names if n in f.__globals__)
            roots.extend(named)
            next_functions.extend(x for x in named if isinstance(x, types.FunctionType | types.MethodType))
        functions = next_functions
    for root in roots:
        _collect(root, found, depth=3)
    return found


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _collect(obj: Any, found: dict[int, Variable], depth: int) -> None:
    if isinstance(obj, Variable):
        found.setdefault(obj._uid, obj)
    elif isinstance(obj, Module) or (type(obj).__module__.startswith("tapejax.")
                                     and isinstance(getattr(type(obj), "variables", None), property)):
        for v in obj.variables:  # tf.Modules, and tapejax's other holders of variables (Keras optimizers)
            found.setdefault(v._uid, v)
    elif depth and isinstance(obj, list | tuple):
        for x in obj:
            _collect(x, found, depth - 1)
    elif depth and isinstance(obj, dict):
        for x in obj.values():
            _collect(x, found, depth - 1)
