"""Tensor and TensorShape: an immutable jax.Array with a unique id, printed and indexed the way TF does.

A Tensor is a value and an id (`tid`). The id is what tapes record; it comes from a process-wide counter, never
from `id(obj)`, because `id` values are reused after garbage collection and a tape may outlive its tensors.
Operators resolve their op by TF name in `OPERATORS`, which `registry.op` fills: this module needs no import of
the op table, and the op table can be built on top of it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
from jax.export import is_symbolic_dim

from . import dtypes, errors

new_tid: Callable[[], int] = itertools.count(1).__next__

# TF name -> public op callable; filled by registry.op for the rows that Python operators use.
OPERATORS: dict[str, Callable[..., Any]] = {}


class TensorShape:
    """The static shape of a tensor (`tf.TensorShape`): a tuple of dimensions, each an int or None.

    >>> import tapejax as tf
    >>> s = tf.zeros([7, 10]).shape
    >>> s, s.as_list(), s.rank, s[1], s == (7, 10)
    (TensorShape([7, 10]), [7, 10], 2, 10, True)
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Any):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        elif dims is not None:
            if isinstance(dims, int | np.integer):
                dims = (dims,)
            # a symbolic dimension (a tf.function traced for an input_signature with None) is unknown: None
            dims = tuple(None if d is None or is_symbolic_dim(d) else int(d) for d in dims)
        self._dims: tuple[int | None, ...] | None = dims

    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> list[int | None] | None:
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        return int(np.prod(self._dims, dtype=np.int64))

    def is_fully_defined(self) -> bool:
        return self._dims is not None and None not in self._dims

    def is_compatible_with(self, other: Any) -> bool:
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims)
        )

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {TensorShape(other)} are incompatible")

    def concatenate(self, other: Any) -> TensorShape:
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key: int | slice) -> Any:
        if self._dims is None:
            return None if not isinstance(key, slice) else TensorShape(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: Any) -> bool:
        try:
            other = TensorShape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other: Any) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self._dims)

    def __add__(self, other: Any) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other: Any) -> TensorShape:
        return TensorShape(other).concatenate(self)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def numpy_text(value: np.ndarray, is_repr: bool) -> str:
    """TF's rendering of a tensor's value: numpy's str/repr, multi-line arrays on a new line.

    Scalars print as numpy's str (`2.3132617`) in str() and as the Python value's repr (`2.3132617473602295`) in
    repr(), which is what TF 2.21 prints with numpy 2.
    """
    if value.ndim == 0:
        text = repr(value.item()) if is_repr else str(value[()])
    else:
        text = repr(value) if is_repr else str(value)
    return "\n" + text if "\n" in text else text


class Reference:
    """A hashable stand-in for a tensor or variable (`x.ref()`), since tensors compare elementwise."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any):
        self._obj = obj

    def deref(self) -> Any:
        return self._obj

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Reference) and self._obj is other._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


_USE_INSTEAD = {
    "bool": "Use `tf.cond(pred, true_fn, false_fn)` for an `if` and `tf.while_loop(cond, body, loop_vars)` for a "
            "`while` on a tensor, or compute the condition outside the tf.function.",
    "float": "Keep the value a tensor (tf.cast converts dtypes), or compute it outside the tf.function.",
    "int": "Keep the value a tensor (tf.cast converts dtypes); for a static size use `x.shape`.",
    "numpy": "Return the tensor from the tf.function and call .numpy() on the result, or use tf.print inside it.",
}


# How long a read polls a CPU computation before blocking on it (see `host`).
SPIN_S = 1e-4


def host(value: Any) -> np.ndarray:
    """`np.asarray(value)`, polling a CPU computation still running for up to SPIN_S before blocking on it.

    JAX's CPU client runs an executable on a worker thread and a read sleeps until it is done. On a small
    computation the sleep and the wake-up cost more than the computation: reading a 10-op chain's gradient took
    69 us blocking and 34 us polling (2-core machine). Polling only while a result is nearly due keeps JAX's
    asynchronous dispatch, which lets Python run ahead of the device; a longer computation is waited for as before.
    """
    if isinstance(value, jax.Array) and not value.is_ready() and next(iter(value.devices())).platform == "cpu":
        deadline = time.perf_counter() + SPIN_S
        while not value.is_ready() and time.perf_counter() < deadline:
            pass
    return np.asarray(value)


def _concrete(tensor: Any, use: str) -> None:
    """Raises TF's error when a traced tensor (inside tf.function) is used as a Python value."""
    if isinstance(tensor._value, jax.core.Tracer):
        what = {"bool": "a Python `bool`", "float": "a Python `float`", "int": "a Python `int`",
                "numpy": "a numpy array"}[use]
        message = (f"Using a symbolic `tf.Tensor` as {what} is not allowed inside tf.function: its value is "
                   f"only known when the compiled function runs. {_USE_INSTEAD[use]}")
        if use == "numpy":
            raise AttributeError(message)
        raise (errors.OperatorNotAllowedInGraphError if use == "bool" else TypeError)(message)


class _Operators:
    """What Tensor and Variable share: Python operators (each forwarding to a registered op) and the array
    protocol (numpy(), __array__, conversions), all over `self._value`."""

    __slots__ = ()
    __array_priority__ = 100  # numpy defers `ndarray + tensor` to our __radd__

    def __add__(self, y): return OPERATORS["math.add"](self, y)
    def __radd__(self, x): return OPERATORS["math.add"](x, self)
    def __sub__(self, y): return OPERATORS["math.subtract"](self, y)
    def __rsub__(self, x): return OPERATORS["math.subtract"](x, self)
    def __mul__(self, y): return OPERATORS["math.multiply"](self, y)
    def __rmul__(self, x): return OPERATORS["math.multiply"](x, self)
    def __truediv__(self, y): return OPERATORS["math.truediv"](self, y)
    def __rtruediv__(self, x): return OPERATORS["math.truediv"](x, self)
    def __floordiv__(self, y): return OPERATORS["math.floordiv"](self, y)
    def __rfloordiv__(self, x): return OPERATORS["math.floordiv"](x, self)
    def __mod__(self, y): return OPERATORS["math.floormod"](self, y)
    def __rmod__(self, x): return OPERATORS["math.floormod"](x, self)
    def __pow__(self, y): return OPERATORS["math.pow"](self, y)
    def __rpow__(self, x): return OPERATORS["math.pow"](x, self)
    def __matmul__(self, y): return OPERATORS["linalg.matmul"](self, y)
    def __rmatmul__(self, x): return OPERATORS["linalg.matmul"](x, self)
    def __neg__(self): return OPERATORS["math.negative"](self)
    def __abs__(self): return OPERATORS["math.abs"](self)
    # TF: logical ops on bool tensors, bitwise ops on integer tensors.
    def __invert__(self): return OPERATORS["__invert__"](self)
    def __and__(self, y): return OPERATORS["__and__"](self, y)
    def __rand__(self, x): return OPERATORS["__and__"](x, self)
    def __or__(self, y): return OPERATORS["__or__"](self, y)
    def __ror__(self, x): return OPERATORS["__or__"](x, self)
    def __xor__(self, y): return OPERATORS["__xor__"](self, y)
    def __rxor__(self, x): return OPERATORS["__xor__"](x, self)
    def __lt__(self, y): return OPERATORS["math.less"](self, y)
    def __le__(self, y): return OPERATORS["math.less_equal"](self, y)
    def __gt__(self, y): return OPERATORS["math.greater"](self, y)
    def __ge__(self, y): return OPERATORS["math.greater_equal"](self, y)
    def __getitem__(self, key): return OPERATORS["__getitem__"](self, key)

    def __eq__(self, other):
        # TF 2: elementwise, False for None, and a scalar False (not an error) for shapes that don't broadcast.
        if other is None:
            return False
        return OPERATORS["__eq__"](self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return OPERATORS["__ne__"](self, other)

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.from_numpy(self._value.dtype)

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def device(self) -> str:
        if type(self._value) is np.ndarray:  # a string tensor, on the host
            return "/job:localhost/replica:0/task:0/device:CPU:0"
        device = next(iter(self._value.devices()))
        return f"/job:localhost/replica:0/task:0/device:{device.platform.upper()}:{device.id}"

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        """Checks that `shape` is compatible with this tensor's (a tensor's shape is always fully known here)."""
        if not self.shape.is_compatible_with(TensorShape(shape)):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {TensorShape(shape)}.")

    def numpy(self) -> Any:
        """The value as a numpy array (a numpy scalar for rank 0), as TF returns it."""
        _concrete(self, "numpy")
        array = np.array(host(self._value))
        return array[()] if array.ndim == 0 else array

    def __array__(self, dtype=None, copy=None):
        array = host(self._value)
        return array if dtype is None else array.astype(dtype)

    def __jax_array__(self) -> jax.Array:
        return self._value

    def ref(self) -> Reference:
        return Reference(self)

    experimental_ref = ref

    def __bool__(self) -> bool:
        _concrete(self, "bool")
        return bool(host(self._value))

    def __float__(self) -> float:
        _concrete(self, "float")
        return float(host(self._value))

    def __int__(self) -> int:
        _concrete(self, "int")
        return int(host(self._value))

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]


class Tensor(_Operators):
    """An immutable multidimensional array (`tf.Tensor`), holding a `jax.Array`.

    >>> import tapejax as tf
    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> print(x[0] * 2)
    tf.Tensor([2. 4.], shape=(2,), dtype=float32)
    """

    __slots__ = ("_value", "_tid", "__weakref__")

    def __init__(self, value: jax.Array):
        self._value = value
        self._tid = new_tid()

    @property
    def value(self) -> jax.Array:
        """The underlying jax.Array (a tapejax extension; `jnp` functions also accept the Tensor itself)."""
        return self._value

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._value.shape)

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __index__(self) -> int:
        if not dtypes.from_numpy(self._value.dtype).is_integer:
            raise TypeError(f"Only integer tensors can be used as an index, got {self.dtype.name}.")
        return int(host(self._value))

    def __iter__(self) -> Iterator[Tensor]:
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    def __str__(self) -> str:
        if isinstance(self._value, jax.core.Tracer):
            return f'Tensor("{self._symbolic_name()}", shape={self.shape}, dtype={self.dtype.name})'
        text = numpy_text(host(self._value), is_repr=False)
        return f"tf.Tensor({text}, shape={self.shape}, dtype={self.dtype.name})"

    def __repr__(self) -> str:
        if isinstance(self._value, jax.core.Tracer):
            return f"<tf.Tensor '{self._symbolic_name()}' shape={self.shape} dtype={self.dtype.name}>"
        text = numpy_text(host(self._value), is_repr=True)
        return f"<tf.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={text}>"

    def __format__(self, spec: str) -> str:
        # As TF: an eager tensor formats as its numpy value (`f"{loss:.4f}"` on a scalar; numpy refuses a spec
        # for arrays); a tensor inside tf.function has no value, so only the empty spec (its str) works.
        if isinstance(self._value, jax.core.Tracer):
            if spec:
                raise TypeError(f"unsupported format string passed to SymbolicTensor.__format__: a tensor inside "
                                f"tf.function has no value yet; format it outside, or use tf.print")
            return str(self)
        return format(self.numpy(), spec)

    def _symbolic_name(self) -> str:
        # TF names a graph tensor after its op; tapejax has ids, which identify it as uniquely.
        return f"tensor_{self._tid}:0"

    def __reduce__(self):
        return Tensor._from_numpy, (self.numpy(),)

    @staticmethod
    def _from_numpy(array: np.ndarray) -> Tensor:
        return EagerTensor(jax.numpy.asarray(array))


class EagerTensor(Tensor):
    """The concrete class of eager tensors, named as in TF (`type(x).__name__ == "EagerTensor"`)."""

    __slots__ = ()
