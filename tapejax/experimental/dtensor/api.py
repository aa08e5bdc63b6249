"""Placing tensors on a mesh: `relayout`, `call_with_layout`, `copy_to_mesh`, `pack`/`unpack`, `fetch_layout`.

A DTensor is an ordinary tapejax tensor whose `jax.Array` carries a `NamedSharding`: every op then runs SPMD
through JAX's sharding propagation, and tapes and tf.function see nothing new. `relayout` is recorded on the
tapes as one op (a `with_sharding_constraint`, which JAX differentiates), so gradients flow through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding

from tapejax._src import caches, dispatch, errors
from tapejax._src.convert import to_array
from tapejax._src.registry import OpDef
from tapejax._src.tensor import EagerTensor, Tensor
from tapejax._src.variable import Variable
from tapejax.experimental.dtensor import layout as layout_lib
from tapejax.experimental.dtensor.layout import Layout

# one recorded op per sharding (the sharding is the op's one parameter); bounded like every cache
_RELAYOUT_OPS = caches.Memo("dtensor relayout ops (experimental/dtensor/api.py)", 256)


def _relayout_op(sharding: NamedSharding) -> OpDef:
    opdef = _RELAYOUT_OPS.get(sharding)
    if opdef is None:
        opdef = OpDef("experimental.dtensor.relayout",
                      lambda x: (jax.lax.with_sharding_constraint(x, sharding),), op_type="Relayout", jit=False)
        _RELAYOUT_OPS[sharding] = opdef
    return opdef


def _tensor(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Variable):
        return value.read_value()
    return EagerTensor(to_array(value))


def _check_fits(shape: tuple[int, ...], layout: Layout) -> None:
    """TF's errors (UnknownError, from its layout pass) for a layout whose rank or splits do not fit `shape`."""
    if len(shape) != layout.rank:
        raise errors.UnknownError(None, None, f"'tf.DTensorLayout' op requires matching rank for layout and input, "
                                              f"but got {layout.rank} as suggested rank from layout but {len(shape)} "
                                              f"from shape {list(shape)}.")
    for axis, size in enumerate(shape):
        shards = layout.num_shards(axis)
        if size % shards:
            raise errors.UnknownError(None, None, f"'tf.DTensorLayout' op requires dimension {axis} to be divisible "
                                                  f"by sharding specified in DTensorLayout, but got dimension "
                                                  f"size={size} is not divisible by number of shards in layout for "
                                                  f"this dimension={shards}.")


def _current_specs(array: Any) -> list[str] | None:
    sharding = getattr(array, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return layout_lib.of_sharding(sharding, array.ndim).sharding_specs
    return None


def relayout(tensor: Any, layout: Layout, name: str | None = None) -> Tensor:
    """`tensor` placed with `layout` (differentiable; inside a tf.function, a sharding constraint on the step).

    A `MATCH` axis keeps its current sharding. A plain (unsharded) tensor is accepted, as TF does.

    Raises:
      tf.errors.UnknownError: the layout's rank is not the tensor's, or an axis does not divide into its shards.
    """
    x = _tensor(tensor)
    _check_fits(tuple(x.shape), layout)
    value = x._value
    matched = None if isinstance(value, jax.core.Tracer) else _current_specs(value)
    sharding = layout._sharding(matched or [layout_lib.UNSHARDED] * layout.rank)
    opdef = _relayout_op(sharding)
    out = EagerTensor(opdef.impl(value)[0])
    dispatch.record_call(opdef, (x._tid,), (value,), (out,))
    return out


def copy_to_mesh(tensor: Any, layout: Layout, source_layout: Layout | None = None) -> Tensor:
    """`tensor` copied onto `layout`'s mesh, with that layout (here the same as `relayout`)."""
    return relayout(tensor, layout)


def call_with_layout(fn: Callable[..., Any], layout: Layout | None, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` with its result placed with `layout` (`tf.ones` and initializers, typically).

    Differences from TensorFlow: the result is computed and then placed (TF lays out the computation itself);
    the values are the same.
    """
    result = fn(*args, **kwargs)
    if layout is None:
        return result
    return relayout(result, layout)


def fetch_layout(tensor: Any) -> Layout | None:
    """The layout of a DTensor (a tensor or variable whose array carries a `NamedSharding`); None for a value
    that is not a tensor, as TF.

    Raises:
      tf.errors.InvalidArgumentError: a tensor that is on one device, not on a mesh (TF's error).
    """
    if isinstance(tensor, Variable):
        tensor = tensor._current()
    elif isinstance(tensor, Tensor):
        tensor = tensor._value
    else:
        return None
    if isinstance(tensor, jax.core.Tracer):
        raise NotImplementedError("dtensor.fetch_layout inside a tf.function: the layout is known once the step "
                                  "has run; fetch it from a result of the step instead.")
    sharding = tensor.sharding
    if not isinstance(sharding, NamedSharding):
        raise errors.InvalidArgumentError(None, None, "FetchLayout expects a tensor placed on the layout device: "
                                                      "this tensor is on one device, not on a dtensor mesh (place it "
                                                      "with dtensor.relayout or dtensor.copy_to_mesh). [Op:Relayout]")
    return layout_lib.of_sharding(sharding, tensor.ndim)


def check_layout(tensor: Any, layout: Layout) -> None:
    """Raises ValueError unless `tensor` has `layout`."""
    found = fetch_layout(tensor)
    if found != layout:
        raise ValueError(f"Layout of tensor: {found}, did not match expected layout: {layout}.")


def is_dtensor(tensor: Any) -> bool:
    """Whether `tensor` is placed on a mesh."""
    value = tensor._current() if isinstance(tensor, Variable) else getattr(tensor, "_value", None)
    return isinstance(getattr(value, "sharding", None), NamedSharding)


def pack(tensors: Sequence[Any], layout: Layout) -> Tensor:
    """The DTensor whose component on each device of `layout`'s mesh is the matching one of `tensors`.

    `tensors` come in the order of the mesh's devices (`mesh.local_devices()`); each is one device's shard, so
    the result's shape is a component's shape times each axis's number of shards. Not differentiable.

    Raises:
      tf.errors.InvalidArgumentError: not one component per device, or components whose rank is not the layout's
        (TF's errors).
    """
    devices = list(layout.mesh._jax.devices.flat)
    if len(tensors) != len(devices):
        raise errors.invalid_argument("DTensorPack", f"dtensor.pack expected {len(devices)} inputs (one per device of "
                                                     f"the layout's mesh) to DTensorPack, but got {len(tensors)}")
    arrays = [jax.numpy.asarray(to_array(t.read_value() if isinstance(t, Variable) else t)) for t in tensors]
    shape = arrays[0].shape
    if len(shape) != layout.rank:
        raise errors.invalid_argument("DTensorPack", "Packed layout should have the same rank as the rank for each "
                                                     f"component. The rank of each component is: {len(shape)}, while "
                                                     f"layout has rank: {layout.rank}")
    if any(a.shape != shape or a.dtype != arrays[0].dtype for a in arrays):
        raise errors.invalid_argument("DTensorPack", "dtensor.pack needs components of one shape and dtype, got "
                                                     f"{sorted({(a.shape, str(a.dtype)) for a in arrays})}")
    global_shape = tuple(size * layout.num_shards(i) for i, size in enumerate(shape))
    shards = [jax.device_put(a, d) for a, d in zip(arrays, devices)]
    return EagerTensor(jax.make_array_from_single_device_arrays(global_shape, layout._sharding(), shards))


def unpack(tensor: Any) -> list[Tensor]:
    """Each device's component of a DTensor, in the order of its mesh's devices (the inverse of `pack`).

    Raises:
      tf.errors.InvalidArgumentError: a tensor that is not on a mesh (TF's error).
    """
    value = tensor._current() if isinstance(tensor, Variable) else _tensor(tensor)._value
    sharding = getattr(value, "sharding", None)
    if not isinstance(sharding, NamedSharding):
        raise errors.invalid_argument("DTensorUnpack", "DTensorUnpack expects a tensor placed on a dtensor mesh "
                                                       "(see dtensor.relayout), but it is on one device")
    by_device = {shard.device: shard.data for shard in value.addressable_shards}
    return [EagerTensor(by_device[d]) for d in np.asarray(sharding.mesh.devices).flat if d in by_device]
