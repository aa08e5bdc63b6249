"""Tensors and Variables as JAX values: pytree nodes, `__jax_array__`, DLPack.

JAX 0.10 no longer reads `__jax_array__` while it abstracts an argument (`jnp.sin(obj)` raises "Triggering
__jax_array__() during abstractification is no longer supported ... register your object as a pytree"). So a
Tensor is a pytree node with one child, its `jax.Array`: `jax.jit`, `jax.grad`, `jax.vmap` and the `jnp` functions
(jitted, so they flatten their arguments) see the array, and rebuild a Tensor around what they computed.

A Variable is a node with one child too, *its current value* (a `tf.function` trace's value inside a trace), and
`tree_unflatten` of a Variable's structure gives back a Tensor holding the new leaf, never a Variable: a JAX
transformation computes values, and a new Variable (or an assignment to the old one) made by unflattening would be
state created or changed behind the program's back. So `jax.grad(loss)(variables)` returns Tensors, in the
variables' structure. The reads are not recorded on tapes: to differentiate a JAX function with a tape, make it an
op with `tf.from_jax`.

The node's type is the object's class, as for every pytree: two trees map together (`jax.tree.map(f, a, b)`)
only where their nodes have the same class. A Variable (ResourceVariable) and a Tensor differ, and so, until its
value is computed, does an op's output under a tape (tapejax computes it lazily; `x.numpy()` makes it a plain
EagerTensor). Map such trees with `is_leaf=lambda x: isinstance(x, (tf.Tensor, tf.Variable))`, or `tf.nest`.

Registration happens when tapejax is imported (`tapejax/from_jax.py` imports this module); Variable subclasses
defined later (Keras's) register themselves when their class is created.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from . import errors
from .deferred import DeferredTensor
from .tensor import EagerTensor, _Operators
from .variable import Variable


def _tensor_children(t: Any) -> tuple[tuple[Any], None]:
    return (t._value,), None  # a deferred tensor is computed here: JAX needs the array


def _variable_children(v: Variable) -> tuple[tuple[Any], None]:
    return (v._current(),), None


def _rebuilt(_: None, children: Any) -> EagerTensor:
    # JAX also unflattens sentinels and ShapeDtypeStructs (eval_shape): the leaf is stored as it is.
    return EagerTensor(tuple(children)[0])


def _register_variable(cls: type) -> None:
    jax.tree_util.register_pytree_node(cls, _variable_children, _rebuilt)


for _cls in (EagerTensor, DeferredTensor):
    jax.tree_util.register_pytree_node(_cls, _tensor_children, _rebuilt)


def _all_subclasses(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found += _all_subclasses(sub)
    return found


for _cls in _all_subclasses(Variable):
    _register_variable(_cls)


def _init_subclass(cls: type, **kwargs: Any) -> None:
    super(Variable, cls).__init_subclass__(**kwargs)
    _register_variable(cls)


Variable.__init_subclass__ = classmethod(_init_subclass)  # type: ignore[assignment]


def _variable_jax_array(self: Variable) -> Any:
    return self._current()  # inside a tf.function trace, the trace's value (the cell holds the last step's)


Variable.__jax_array__ = _variable_jax_array  # type: ignore[method-assign]


# -- DLPack -------------------------------------------------------------------------------------------------

def _device_array(x: Any, use: str) -> jax.Array:
    array = x._current() if isinstance(x, Variable) else x._value
    if isinstance(array, np.ndarray):  # string tensors live on the host (TF's check aborts the process here)
        raise errors.InvalidArgumentError(None, None, f"{use}: a {x.dtype.name} tensor has no DLPack form; only "
                                                      "numeric and bool tensors do.")
    if isinstance(array, jax.core.Tracer):
        raise TypeError(f"{use}: a tensor inside tf.function has no buffer yet; call it outside the function.")
    return array


def _dlpack(self: Any, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
            copy: bool | None = None) -> Any:
    """The DLPack capsule of the tensor's buffer (no copy), per the array API standard."""
    return _device_array(self, "__dlpack__").__dlpack__(stream=stream, max_version=max_version,
                                                          dl_device=dl_device, copy=copy)


def _dlpack_device(self: Any) -> tuple[Any, int]:
    return _device_array(self, "__dlpack_device__").__dlpack_device__()


_Operators.__dlpack__ = _dlpack  # type: ignore[attr-defined]
_Operators.__dlpack_device__ = _dlpack_device  # type: ignore[attr-defined]


def is_value(x: Any) -> bool:
    """Whether `x` is a Tensor or Variable: the `is_leaf` that keeps them whole in a `jax.tree_util` walk."""
    return isinstance(x, _Operators)
