"""tf.TensorArray: a list of tensors of one dtype, written and read by index, eagerly and inside tf.function.

Eagerly it is TF's eager TensorArray: a Python list of tensors that its copies share (`ta.write` changes `ta`
too), with TF's checks: an index out of range is OutOfRangeError, a second read of an element cleared after its
first read (clear_after_read, the default) InvalidArgumentError. Reads return the written tensors themselves and
stack/concat/gather/unstack/split are recorded ops, so the tapes differentiate through it like any op.

Inside a tf.function trace it is functional, as TF's graph TensorArray (a TensorList): each write returns a new
array and reading an element twice is allowed. While its indices are Python ints (or values the trace knows) it
stays a list of traced tensors. A traced index (a `for i in tf.range(n)` loop) or a loop carrying it turns it into
one preallocated buffer of shape (size, *element_shape), written with tensor_scatter_nd_update and read with
gather: XLA arrays have static shapes, so the buffer's size is fixed. A loop learns an unknown element shape
from one trial capture of its body (`seed_loop_vars`), and a `dynamic_size` array grows by the loop's trip count
before the loop, which must then be known (a `for` over a tensor range, or maximum_iterations).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .context import CONTEXT
from . import dtypes, errors
from .capture import as_tensor
from .control_flow import _check_predicates
from .convert import to_array
from .tensor import OPERATORS, EagerTensor, Tensor, TensorShape
from .variable import Variable

UNKNOWN_IN_LOOP = (
    "tf.TensorArray inside tf.function: a loop carries this array, but its element shape is unknown ({why}). "
    "tapejax carries it as one buffer of static shape (size, *element_shape): pass element_shape= to "
    "tf.TensorArray, or write an element before the loop.")
DYNAMIC_UNBOUNDED = (
    "tf.TensorArray(dynamic_size=True) grown inside a tf.function loop whose trip count is not known when the step "
    "is traced: tapejax carries the array as one buffer whose size is fixed (XLA arrays have static shapes), "
    "grown by the loop's trip count. Loop over a tensor range (`for i in tf.range(n)`), pass maximum_iterations "
    "to tf.while_loop, or give the TensorArray a size that bounds the writes.")


class _Items:
    """The elements, shared by the copies of an eager array: a list of tensors (None: not written), and the
    indices read and cleared."""

    __slots__ = ("tensors", "cleared")

    def __init__(self, tensors: list[Tensor | None]):
        self.tensors = tensors
        self.cleared: set[int] = set()


def _graph() -> bool:
    return CONTEXT.trace is not None


def _merge(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape compatible with both (TF's TensorShape.merge_with, for compatible shapes)."""
    if a.rank is None:
        return TensorShape(b)
    if b.rank is None:
        return a
    return TensorShape([x if x is not None else y for x, y in zip(a.as_list(), b.as_list())])


def static_int(x: Any) -> int | None:
    """x as a Python int if the trace knows its value, else None."""
    value = x.read_value()._value if isinstance(x, Variable) else getattr(x, "_value", x)
    if isinstance(value, jax.core.Tracer):
        return None
    return int(np.asarray(value))


@jax.tree_util.register_pytree_node_class
class TensorArray:
    """A list of tensors of one dtype, written and read by index (`tf.TensorArray`).

    >>> import tapejax as tf
    >>> ta = tf.TensorArray(tf.float32, size=3)
    >>> for i in range(3):
    ...     ta = ta.write(i, float(i) * 2)
    >>> print(ta.stack())
    tf.Tensor([0. 2. 4.], shape=(3,), dtype=float32)

    Inside tf.function the classic loop works: `for i in tf.range(n): ta = ta.write(i, x[i])`, then `ta.stack()`,
    with gradients through it.

    Differences from TensorFlow: inside tf.function, an array a loop carries is one buffer of static shape, so
    its elements share one shape (TF's infer_shape=False arrays of ragged elements work there only while indices
    are known at trace time), its element shape must be known when the loop starts (from element_shape or a
    write before the loop, or learned from one trial capture of the loop body), and a dynamic_size array grown in
    a loop holds size + trip count elements, zeros where the loop wrote none (TF: up to the last written). An
    index out of range there fails the step with InvalidArgumentError (tf.debugging.Assert's message).
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None, handle: Any = None,
                 flow: Any = None, infer_shape: bool = True, element_shape: Any = None,
                 colocate_with_first_write_call: bool = True, name: str | None = None):
        if handle is not None:
            raise ValueError("TensorArray handles are not supported when eager execution is enabled.")
        if size is None:
            raise ValueError("Size must be declared for TensorArrays when eager execution is enabled.")
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = infer_shape
        self._element_shape = TensorShape(element_shape)
        n = static_int(size)
        if n is None:
            raise ValueError("tf.TensorArray inside tf.function needs a size the trace knows (tf.shape(x)[0] of a "
                             "static shape, a Python int): its buffer has a static shape.")
        self._items: _Items | None = _Items([None] * n)
        self._buffer: Tensor | None = None
        self._graph = _graph()

    # -- properties ----------------------------------------------------------------------------------------

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def handle(self) -> None:
        """For compatibility: a TensorArray has no resource handle here (TF's eager one has none either)."""
        return None

    @property
    def flow(self) -> Tensor:
        """For compatibility: TF's eager flow, a dummy int32 0."""
        return EagerTensor(jnp.asarray(0, jnp.int32))

    def _size(self) -> int:
        return len(self._items.tensors) if self._items is not None else int(self._buffer._value.shape[0])

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements, an int32 scalar."""
        return EagerTensor(jnp.asarray(self._size(), jnp.int32))

    # -- copies --------------------------------------------------------------------------------------------

    def _with(self, items: _Items | None = None, buffer: Tensor | None = None, shape: TensorShape | None = None
              ) -> TensorArray:
        new = object.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        new._items, new._buffer = items, buffer
        if shape is not None:
            new._element_shape = shape
        return new

    def _next(self, tensors: list[Tensor | None]) -> TensorArray:
        """The array after a change: eagerly the same shared list changed in place, traced a new list."""
        if not self._graph:
            self._items.tensors[:] = tensors
            return self._with(self._items)
        return self._with(_Items(tensors))

    def identity(self) -> TensorArray:
        return self._with(self._items, self._buffer)

    def close(self, name: str | None = None) -> None:
        if self._items is not None and not self._graph:
            self._items.tensors.clear()

    def grad(self, source: Any, flow: Any = None, name: str | None = None) -> None:
        raise NotImplementedError("TensorArray.grad is not supported when executing eagerly; eager's gradient "
                                  "implementation does not use/need this function to compute gradients of "
                                  "operations that use TensorArrays.")

    # -- elements ------------------------------------------------------------------------------------------

    def _convert(self, value: Any) -> Tensor:
        tensor = value.read_value() if isinstance(value, Variable) else value
        if not isinstance(tensor, Tensor):
            tensor = EagerTensor(jnp.asarray(to_array(tensor, hint=self._dtype)))
        if tensor.dtype != self._dtype:
            raise errors.InvalidArgumentError(None, None, f"TensorArray dtype is {self._dtype.name} but Op is trying "
                                                          f"to write dtype {tensor.dtype.name} ")
        return tensor

    def _check_shape(self, shape: TensorShape) -> TensorShape:
        """The element shape after a write of `shape` (TF's check and, with infer_shape, its merge)."""
        if not self._element_shape.is_compatible_with(shape):
            raise ValueError(f"Incompatible shape for value ({shape}), expected ({self._element_shape})")
        return _merge(self._element_shape, shape) if self._infer_shape else self._element_shape

    def _zeros(self) -> Tensor:
        shape = self._element_shape
        if shape.rank is None or not shape.is_fully_defined():
            if self._graph:
                raise errors.InvalidArgumentError(None, None, "Trying to read an uninitialized tensor but "
                                                              f"element_shape is not fully defined: {shape} and no "
                                                              "list element is set.")
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        return EagerTensor(jnp.zeros(tuple(shape.as_list()), self._dtype._np))

    def _element(self, i: int) -> Tensor:
        tensor = self._items.tensors[i]
        if tensor is None:
            tensor = self._zeros()
            if not self._graph:
                self._items.tensors[i] = tensor
        return tensor

    def _out_of_range(self, i: int, verb: str) -> Exception:
        if self._graph:  # TF's TensorList ops
            what = "modify" if verb == "writing to" else "access"
            return errors.InvalidArgumentError(None, None, f"Trying to {what} element {i} in a list with "
                                                           f"{self._size()} elements.")
        if i < 0:
            return errors.OutOfRangeError(None, None, f"{verb.capitalize()} negative indices (index {i}) is not "
                                                      "allowed.")
        if verb == "writing to":
            return errors.OutOfRangeError(None, None, f"Tried to write to index {i} but array is not resizeable "
                                                      f"and size is: {self._size()} ")
        return errors.OutOfRangeError(None, None, f"Tried to read from index {i} but array size is: "
                                                  f"{self._size()} ")

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at `index` (zeros of the element shape if never written)."""
        i = static_int(index)
        if self._items is None or i is None:
            return self._read_traced(index, i)
        if not 0 <= i < self._size():
            raise self._out_of_range(i, "reading from")
        if not self._graph and self._items.tensors[i] is None and i in self._items.cleared:
            raise errors.InvalidArgumentError(None, None, f"Could not read index {i} twice because it was cleared "
                                                          "after a previous read (perhaps try setting "
                                                          "clear_after_read = false?)")
        tensor = self._element(i)
        if self._clear_after_read and not self._graph:
            self._items.tensors[i] = None
            self._items.cleared.add(i)
        return tensor

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """The array with `value` at `index` (eagerly, this array too: its copies share the elements)."""
        tensor = self._convert(value)
        shape = self._check_shape(tensor.shape)
        i = static_int(index)
        if self._items is None or i is None:
            return self._write_traced(index, i, tensor, shape)
        tensors = list(self._items.tensors)
        if i < 0 or (i >= len(tensors) and not self._dynamic_size):
            raise self._out_of_range(i, "writing to")
        tensors.extend([None] * (i + 1 - len(tensors)))
        tensors[i] = tensor
        self._element_shape = shape if not self._graph else self._element_shape
        new = self._next(tensors)
        new._element_shape = shape
        return new

    def stack(self, name: str | None = None) -> Tensor:
        """The elements stacked along a new first axis."""
        if self._items is None:
            return self._buffer
        if not self._items.tensors:
            shape = self._element_shape
            if shape.rank is not None and shape.is_fully_defined():
                return EagerTensor(jnp.zeros((0, *shape.as_list()), self._dtype._np))
            return EagerTensor(jnp.zeros((0,), self._dtype._np))
        return OPERATORS["stack"]([self._element(i) for i in range(self._size())])

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at `indices`, stacked."""
        known = [static_int(i) for i in as_tensor(indices)] if self._items is not None else [None]
        if None in known:
            return OPERATORS["gather"](self._as_buffer()._buffer, indices)
        return OPERATORS["stack"]([self._element(i) for i in known])

    def concat(self, name: str | None = None) -> Tensor:
        """The elements concatenated along their first axis."""
        if self._items is None:
            shape = self._buffer.shape
            if shape.rank < 2:
                raise errors.InvalidArgumentError(None, None, "Concat saw a scalar shape at index 0 but requires at "
                                                              "least vectors.")
            return OPERATORS["reshape"](self._buffer, [-1, *shape.as_list()[2:]])
        elements = [self._element(i) for i in range(self._size())]
        for i, e in enumerate(elements):
            if e.shape.rank == 0:
                raise errors.InvalidArgumentError(None, None, f"Concat saw a scalar shape at index {i} but requires "
                                                              "at least vectors.")
        return OPERATORS["concat"](elements, 0)

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """The array holding the rows of `value`."""
        tensor = self._convert(value)
        n = tensor.shape[0]
        if n > self._size() and not self._dynamic_size:
            raise ValueError(f"Cannot unstack {n} tensors into a TensorArray of static size {self._size()} ")
        shape = self._check_shape(TensorShape(tensor.shape.as_list()[1:]))
        return self._next(list(OPERATORS["unstack"](tensor)))._with_shape(shape)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """The array with the rows of `value` at `indices`."""
        tensor = self._convert(value)
        index = as_tensor(indices)
        known = [static_int(i) for i in index] if self._items is not None else [None]
        if None in known:
            shape = self._check_shape(TensorShape(tensor.shape.as_list()[1:]))
            return self._scatter_traced(index, tensor, shape)
        new = self
        for i, row in zip(known, OPERATORS["unstack"](tensor)):
            new = new.write(i, row)
        return new

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """The array holding consecutive pieces of `value` of the given lengths."""
        tensor = self._convert(value)
        sizes = np.asarray(as_tensor(lengths)._value)
        if sizes.ndim != 1:
            raise errors.InvalidArgumentError(None, None, "Expected lengths to be a vector, received shape: "
                                                          f"{list(sizes.shape)} ")
        if tensor.shape.rank == 0:
            raise errors.InvalidArgumentError(None, None, "Expected value to be at least a vector, but received "
                                                          "shape: [] ")
        if int(sizes.sum()) != tensor.shape[0]:
            raise errors.InvalidArgumentError(None, None, "Expected sum of lengths to be equal to values.shape[0], "
                                                          f"but sum of lengths is {int(sizes.sum())} and value's "
                                                          f"shape is: {tensor.shape.as_list()} ")
        if not self._dynamic_size and len(sizes) != self._size():
            raise errors.InvalidArgumentError(None, None, "TensorArray's size is not equal to the size of lengths "
                                                          f"({self._size()} vs. {len(sizes)}), and the TensorArray is "
                                                          "not marked as dynamically resizeable.")
        return self._next(list(OPERATORS["split"](tensor, [int(s) for s in sizes])))

    def _with_shape(self, shape: TensorShape) -> TensorArray:
        self._element_shape = shape if not self._graph else self._element_shape
        return self._with(self._items, self._buffer, shape)

    # -- the buffer (traced indices, loops) ------------------------------------------------------------------

    def _as_buffer(self, shape: TensorShape | None = None) -> TensorArray:
        """This array as one buffer (size, *element_shape), zeros where nothing was written."""
        if self._items is None:
            return self
        shape = shape or self._element_shape
        written = [t for t in self._items.tensors if t is not None]
        if written:
            shape = _merge(shape, written[0].shape)
        if shape.rank is None or not shape.is_fully_defined():
            raise ValueError(UNKNOWN_IN_LOOP.format(why=f"{shape}, and no element is written yet"))
        zeros = EagerTensor(jnp.zeros(tuple(shape.as_list()), self._dtype._np))
        for t in written:
            if t.shape != shape:
                raise ValueError(f"tf.TensorArray inside tf.function: its elements have shapes {t.shape} and "
                                 f"{shape}, but a loop carries it as one buffer of one element shape.")
        rows = [zeros if t is None else t for t in self._items.tensors]
        buffer = (OPERATORS["stack"](rows) if rows
                  else EagerTensor(jnp.zeros((0, *shape.as_list()), self._dtype._np)))
        return self._with(None, buffer, shape)

    def _check_index(self, index: Any, verb: str) -> None:
        """A traced index out of range fails the step, as TF's TensorList op does; not inside a traced loop body
        or branch, where tapejax's checks cannot run (there a write out of range is dropped, a read clamped)."""
        if CONTEXT.trace is None or CONTEXT.trace.captures:
            return
        n = self._size()
        ok = OPERATORS["math.logical_and"](index >= 0, index < n)
        _check_predicates([ok], f"TensorArray: {verb} an index out of range for a TensorArray of size {n}",
                          lambda bits: bits.all())

    def _read_traced(self, index: Any, known: int | None) -> Tensor:
        array = self._as_buffer()
        if known is not None and not 0 <= known < array._size():
            raise errors.InvalidArgumentError(None, None, f"Trying to access element {known} in a list with "
                                                          f"{array._size()} elements.")
        if known is None:
            array._check_index(as_tensor(index), "reading")
        return OPERATORS["gather"](array._buffer, index)

    def _write_traced(self, index: Any, known: int | None, tensor: Tensor, shape: TensorShape) -> TensorArray:
        array = self._as_buffer(shape)
        if known is not None and not 0 <= known < array._size():
            raise errors.InvalidArgumentError(None, None, f"Trying to modify element {known} in a list with "
                                                          f"{array._size()} elements.")
        return array._scatter_traced(OPERATORS["reshape"](as_tensor(index), [1]),
                                     OPERATORS["expand_dims"](tensor, 0), shape)

    def _scatter_traced(self, index: Tensor, rows: Tensor, shape: TensorShape) -> TensorArray:
        array = self._as_buffer(shape)
        array._check_index(index, "writing")
        buffer = OPERATORS["tensor_scatter_nd_update"](array._buffer, OPERATORS["reshape"](index, [-1, 1]), rows)
        return array._with(None, buffer, shape)

    def _grown(self, by: int) -> TensorArray:
        array = self._as_buffer()
        pad = EagerTensor(jnp.zeros((by, *array._buffer._value.shape[1:]), self._dtype._np))
        return array._with(None, OPERATORS["concat"]([array._buffer, pad], 0))

    # -- a pytree: a loop or a branch carries its buffer -----------------------------------------------------

    def tree_flatten(self) -> tuple[tuple, tuple]:
        array = self._as_buffer()
        aux = (self._dtype, self._dynamic_size, self._clear_after_read, self._infer_shape, array._element_shape,
               self._graph)
        return (array._buffer,), aux

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: tuple) -> TensorArray:
        new = object.__new__(cls)
        (new._dtype, new._dynamic_size, new._clear_after_read, new._infer_shape, new._element_shape,
         new._graph) = aux
        new._items, new._buffer = None, children[0]
        return new
