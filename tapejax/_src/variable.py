"""tf.Variable: a mutable cell whose every read is a leaf on the tapes that watch it.

Assignment is not recorded: state stops gradients, as in TF. A read made while a tape watches the variable gets
a fresh tensor id, and the tape keeps (id, value) so that the gradient for the variable is the sum over its
reads (DESIGN invariant 6), each replayed with the value it had.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from . import dtypes, errors
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape, _Operators, host, new_tid, numpy_text
from .context import CONTEXT
from .convert import literal, to_array, unaliased

_new_uid: Callable[[], int] = itertools.count(1).__next__

class override_values:
    """Context manager: reads of the given variables return the given arrays (used when replaying)."""

    def __init__(self, values: dict[int, Any]):
        self._values = values

    def __enter__(self) -> None:
        self._saved = CONTEXT.values
        CONTEXT.values = {**self._saved, **self._values}

    def __exit__(self, *exc: object) -> None:
        CONTEXT.values = self._saved


def _own(array: jax.Array) -> jax.Array:
    """`array`, or a copy of it if it is the interned array of a Python number (convert.literal): a variable's value
    changes, so a trace must capture it as an argument, not bake it into a program by value. Otherwise a learning
    rate assigned from Python floats made a new trace structure, and a new executable, for every value."""
    if CONTEXT.trace is None and literal(array) is not None:
        return array.copy()
    return array


def _on_device(value: Any) -> Any:
    """A numpy value as a jax.Array. device_put moves it without compiling, where jnp.asarray compiles a conversion
    per new shape (a Keras model's weights made or set from numpy cost one compile each)."""
    if type(value) is np.ndarray and value.dtype != object:
        return jax.device_put(unaliased(value))
    return jax.numpy.asarray(value)


class Variable(_Operators):
    """A mutable tensor-valued cell (`tf.Variable`).

    >>> import tapejax as tf
    >>> v = tf.Variable(2.0)
    >>> v
    <tf.Variable 'Variable:0' shape=() dtype=float32, numpy=2.0>
    >>> with tf.GradientTape() as tape:
    ...     y = v * v
    >>> print(tape.gradient(y, v))
    tf.Tensor(4.0, shape=(), dtype=float32)
    """

    __slots__ = ("_value", "_uid", "_name", "_trainable", "_shape", "_constraint", "__weakref__")

    def __new__(cls, *args: Any, **kwargs: Any):
        # `tf.Variable(...)` makes a ResourceVariable, as in TF (its class name shows in printed output).
        return super().__new__(ResourceVariable if cls is Variable else cls)

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool | None = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        import_scope: Any = None,
        constraint: Callable | None = None,
        synchronization: Any = None,
        aggregation: Any = None,
        shape: Any = None,
        experimental_enable_variable_lifting: bool = True,
    ):
        """Creates a variable; `caching_device` and the like are ignored; `synchronization` and `aggregation` matter
        only under a `tf.distribute` strategy's scope (tapejax/distribute).

        `constraint` is kept for optimizers, which apply it to the variable's value after each update, as in TF;
        `assign` and its kind do not apply it.
        """
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"Argument `constraint` must be None or a callable. Got a {type(constraint)}: {constraint}")
        trace = CONTEXT.trace
        if trace is not None:
            trace.check_creation(self)  # TF's ValueError on a later trace, before the initial value is computed
        if callable(initial_value):
            initial_value = initial_value()
        value = to_array(initial_value, dtype=None if dtype is None else dtypes.as_dtype(dtype))
        if isinstance(value, jax.core.Tracer):
            raise ValueError(
                "A tf.Variable created inside a tf.function must be initialised from values known when the "
                "function is traced (constants, initializers, numpy), not from the function's arguments or "
                "other traced tensors. Create the variable outside the function, or assign the traced value to it "
                "after creating it.")
        self._value: jax.Array = _own(_on_device(value))
        self._uid = _new_uid()
        base = "Variable" if name is None else name
        self._name = "/".join([*CONTEXT.name_scopes, base]) + ":0"
        self._trainable = True if trainable is None else bool(trainable)
        self._shape = TensorShape(self._value.shape if shape is None and validate_shape else shape)
        if shape is not None and not self._shape.is_compatible_with(self._value.shape):
            raise ValueError(f"In this `tf.Variable` creation, the initial value's shape ({self._value.shape}) is not "
                             f"compatible with the explicitly supplied `shape` argument ({self._shape}).")
        self._constraint = constraint
        if CONTEXT.variable_creator is not None:  # inside a tf.distribute strategy's scope: mirrored there
            CONTEXT.variable_creator(self, synchronization, aggregation)

    # -- reading ---------------------------------------------------------------------------------------------

    def _read(self) -> tuple[int, jax.Array]:
        """The (tid, value) of a read; the tapes that watch this variable record it as a leaf."""
        value = self._current()
        tapes = CONTEXT.tapes
        if not tapes:
            return 0, value
        trace = CONTEXT.trace
        if trace is not None and trace.captures:  # inside a traced branch or loop body (capture.py)
            tid = trace.captures[-1].read_tid(self._uid)
            if tid:
                return tid, value  # a read after an assignment in the same body: the assigned tensor itself
        tid = new_tid()
        for t in tapes:
            if t.watches_variable(self):
                t.record_read(self, tid, value)
        return tid, value

    def _current(self) -> jax.Array:
        """The value a read sees: a replay's override, else the tf.function trace's value, else the cell's."""
        overrides = CONTEXT
        if overrides.values:
            value = overrides.values.get(self._uid)
            if value is not None:
                return value
        if overrides.trace is not None:
            return overrides.trace.read(self)
        return self._value

    def read_value(self) -> Tensor:
        tid, value = self._read()
        out = EagerTensor(value)
        if tid:
            out._tid = tid
        return out

    value = read_value

    def sparse_read(self, indices: Any, name: str | None = None) -> Tensor:
        """The rows `indices` of the value (`tf.gather`): a tape's gradient for them is an IndexedSlices."""
        return OPERATORS["gather"](self, indices)

    # -- assignment ------------------------------------------------------------------------------------------

    def _new_value(self, value: Any, update: str = "") -> jax.Array:
        return _own(self._checked(value, update))

    def _checked(self, value: Any, update: str = "") -> jax.Array:
        """`value` as an array of this variable's dtype and shape (an increment too: `update` names its kernel)."""
        array = to_array(value, dtype=self.dtype)
        if self._shape._dims != array.shape and not self._shape.is_compatible_with(array.shape):
            if update:  # TF's AssignAdd/AssignSub kernels check, not its Python
                raise errors.invalid_argument(update, f"Cannot update variable with shape {list(self.shape)} using "
                                                      f"a Tensor with shape {list(array.shape)}, shapes must be equal.")
            raise ValueError(
                f"Cannot assign value to variable ' {self._name}': Shape mismatch.The variable shape "
                f"{self._shape}, and the assigned value shape {TensorShape(array.shape)} are incompatible."
            )
        return array if isinstance(array, jax.Array) else _on_device(array)

    def _set(self, value: jax.Array, read_value: bool, tid: int = 0) -> Any:
        if CONTEXT.trace is not None:
            CONTEXT.trace.assign(self, value, tid)  # written back when the compiled step returns
        else:
            self._value = value
        return _UnreadVariable(self) if read_value else None

    def assign(self, value: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True):
        """Sets the value; not recorded on any tape. Returns the variable (TF's "UnreadVariable" view)."""
        self._note_assignment("assign", value)
        return self._set(self._new_value(value), read_value, getattr(value, "_tid", 0))

    def _assign_computed(self, array: jax.Array) -> None:
        """Sets an array computed from this variable's value, in its dtype and shape (an optimizer's eager update):
        `assign` without its conversion and checks, which cost more than the assignment."""
        self._note_assignment("assign", array)
        self._set(array, False)

    def assign_add(self, delta: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True):
        self._note_assignment("assign_add", delta)
        if CONTEXT.trace is not None:  # through the op table, so a traced loop body sees the new value's id
            return self.assign(OPERATORS["math.add"](self.read_value(), delta), read_value=read_value)
        return self._set(self._current() + self._checked(delta, "AssignAddVariableOp"), read_value)

    def assign_sub(self, delta: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True):
        self._note_assignment("assign_sub", delta)
        if CONTEXT.trace is not None:
            return self.assign(OPERATORS["math.subtract"](self.read_value(), delta), read_value=read_value)
        return self._set(self._current() - self._checked(delta, "AssignSubVariableOp"), read_value)

    # -- rows: TF's scatter methods, each an op of the table on the value, then an assignment ------------------

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """Sets the rows of an IndexedSlices (`sparse_delta.indices`) to its values."""
        return self._scatter("tensor_scatter_nd_update", sparse_delta)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        """Adds an IndexedSlices' values to its rows (a row listed twice gets both)."""
        return self._scatter("tensor_scatter_nd_add", sparse_delta)

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        return self._scatter("tensor_scatter_nd_sub", sparse_delta)

    def scatter_max(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        return self._scatter("tensor_scatter_nd_max", sparse_delta)

    def scatter_min(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None):
        return self._scatter("tensor_scatter_nd_min", sparse_delta)

    def scatter_nd_update(self, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None):
        """`tf.tensor_scatter_nd_update` of the value, assigned."""
        return self.assign(OPERATORS["tensor_scatter_nd_update"](self.read_value(), indices, updates))

    def scatter_nd_add(self, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None):
        return self.assign(OPERATORS["tensor_scatter_nd_add"](self.read_value(), indices, updates))

    def scatter_nd_sub(self, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None):
        return self.assign(OPERATORS["tensor_scatter_nd_sub"](self.read_value(), indices, updates))

    def _scatter(self, op: str, sparse_delta: Any) -> Any:
        # an IndexedSlices (indexed_slices.py builds on this module, so it is known by what it holds)
        if not all(hasattr(sparse_delta, a) for a in ("indices", "values", "dense_shape")):
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. Received arg: {sparse_delta}")
        rows = OPERATORS["reshape"](sparse_delta.indices, (-1, 1))
        values = OPERATORS["reshape"](sparse_delta.values, (-1, *self.shape[1:]))
        return self.assign(OPERATORS[op](self.read_value(), rows, values))

    def _note_assignment(self, method: str, value: Any) -> None:
        """Tells the recording tapes that state changed here: a gradient through it will be None (debugging)."""
        for t in CONTEXT.tapes:
            source = getattr(value, "_uid", None) or getattr(value, "_tid", None)
            t.history.append(("assign", f"{self.name}.{method}", source))

    # -- properties ------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def shape(self) -> TensorShape:
        return self._shape if not self._shape.is_fully_defined() else TensorShape(self._value.shape)

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self) -> Callable | None:
        return self._constraint

    def __hash__(self):
        raise TypeError(f"Variable is unhashable. Instead, use variable.ref() as the key. (Variable: {self!r})")

    def __iter__(self):
        return iter(self.read_value())

    def __repr__(self) -> str:
        text = numpy_text(host(self._value), is_repr=True)
        return f"<tf.Variable '{self._display_name()}' shape={self.shape} dtype={self.dtype.name}, numpy={text}>"

    __str__ = __repr__

    def _display_name(self) -> str:
        return self._name


class ResourceVariable(Variable):
    """The concrete class of `tf.Variable(...)`, named as in TF."""

    __slots__ = ()


class _UnreadVariable(ResourceVariable):
    """What `assign` returns in TF: a view of the same variable, printed as 'UnreadVariable'."""

    __slots__ = ("_target",)

    def __new__(cls, target: Variable):
        return object.__new__(cls)

    def __init__(self, target: Variable):
        self._target = target

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._target, attr)

    # The view shares its target's cell: reads and writes go to the target.
    _value = property(lambda self: self._target._value)  # type: ignore[assignment]
    _uid = property(lambda self: self._target._uid)  # type: ignore[assignment]
    _name = property(lambda self: self._target._name)  # type: ignore[assignment]
    _trainable = property(lambda self: self._target._trainable)  # type: ignore[assignment]
    _shape = property(lambda self: self._target._shape)  # type: ignore[assignment]
    _constraint = property(lambda self: self._target._constraint)  # type: ignore[assignment]

    def _read(self):
        return self._target._read()

    def _set(self, value, read_value, tid=0):
        return self._target._set(value, read_value, tid)

    def _display_name(self) -> str:
        return "UnreadVariable"


class name_scope:
    """A context manager that prefixes the names of variables created inside it (`tf.name_scope`).

    >>> import tapejax as tf
    >>> with tf.name_scope("dense"):
    ...     v = tf.Variable(1.0, name="kernel")
    >>> v.name
    'dense/kernel:0'
    """

    def __init__(self, name: str):
        self._name = name.rstrip("/") if name else ""

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        if self._name:
            CONTEXT.name_scopes.append(self._name)
        return "/".join(CONTEXT.name_scopes) + "/"

    def __exit__(self, *exc: object) -> None:
        if self._name:
            CONTEXT.name_scopes.pop()
