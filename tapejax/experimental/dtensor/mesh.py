"""`dtensor.Mesh`: named dimensions over devices, as one `jax.sharding.Mesh` (TF's mesh string and queries on top)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.sharding import Mesh as JaxMesh

from tapejax._src import devices as devices_lib

_TYPES = {"cpu": "CPU", "gpu": "GPU", "cuda": "GPU", "rocm": "GPU", "tpu": "TPU"}


def _type_of(device: Any) -> str:
    return _TYPES.get(device.platform, device.platform.upper())


def device_name(device: Any) -> str:
    """TF's full name of a JAX device: "/job:localhost/replica:0/task:0/device:CPU:3"."""
    return f"/job:localhost/replica:0/task:{device.process_index}/device:{_type_of(device)}:{device.id}"


def _jax_devices(device_type: str | None) -> list:
    if device_type is None:
        return jax.local_devices()  # JAX's default backend: the accelerators where there are some, as TF prefers
    return [d for d in jax.local_devices(backend=_platform(device_type))]


def _platform(device_type: str) -> str:
    return {"CPU": "cpu", "GPU": "gpu", "TPU": "tpu"}.get(device_type.upper(), device_type.lower())


class MeshDimension(NamedTuple):
    name: str
    size: int


class Mesh:
    """Devices arranged in named dimensions (`tf.experimental.dtensor.Mesh`), held as one `jax.sharding.Mesh`.

    Usually made by `create_mesh`. The constructor takes TF's arguments: `global_device_ids`, an integer array of
    the mesh's shape, names a device of `local_devices` (TF device strings) by its position in `local_device_ids`.

    >>> import tapejax as tf
    >>> mesh = tf.experimental.dtensor.create_mesh([("x", 1)], device_type="CPU")
    >>> mesh.dim_names, mesh.shape(), mesh.device_type()
    (['x'], [1], 'CPU')
    """

    def __init__(self, dim_names: Sequence[str], global_device_ids: Any, local_device_ids: Sequence[int],
                 local_devices: Sequence[Any], mesh_name: str = "", global_devices: Any = None,
                 use_xla_spmd: bool = False):
        ids = np.asarray(global_device_ids, dtype=np.int64)
        if ids.ndim != len(dim_names):
            raise ValueError(f"Number of mesh dimensions ({len(dim_names)}) must match the rank of "
                             f"global_device_ids ({ids.ndim}).")
        by_id = {}
        for device_id, spec in zip(local_device_ids, local_devices):
            device = devices_lib.jax_device(str(spec))
            if device is None:
                raise ValueError(f"No device {spec!r} here: tf.experimental.dtensor.Mesh needs devices JAX has.")
            by_id[int(device_id)] = device
        missing = sorted(set(ids.flat) - set(by_id))
        if missing:
            raise ValueError(f"global_device_ids {missing} have no entry in local_device_ids; a mesh spanning "
                             "several hosts is not supported by tapejax's dtensor yet.")
        self._init(JaxMesh(np.vectorize(by_id.__getitem__, otypes=[object])(ids), tuple(dim_names)),
                   [int(i) for i in ids.flat], mesh_name)

    def _init(self, jax_mesh: JaxMesh, ids: list[int], name: str = "") -> None:
        self._jax = jax_mesh
        self._ids = ids
        self._name = name

    @classmethod
    def _from_jax(cls, jax_mesh: JaxMesh) -> Mesh:
        """The mesh of an array's `NamedSharding` (what `fetch_layout` reports)."""
        mesh = cls.__new__(cls)
        mesh._init(jax_mesh, list(range(jax_mesh.size)))
        return mesh

    @staticmethod
    def from_string(mesh_str: str) -> Mesh:
        """The mesh a `to_string()` describes: "|x=2,y=4|0,...|0,...|/job:localhost/.../device:CPU:0,..."."""
        name, dims, global_ids, local_ids, names = (mesh_str.split("|") + [""] * 5)[:5]
        pairs = [d.split("=") for d in dims.split(",") if d]
        shape = [int(size) for _, size in pairs]
        ids = np.array([int(i) for i in global_ids.split(",")]).reshape(shape)
        return Mesh([n for n, _ in pairs], ids, [int(i) for i in local_ids.split(",")], names.split(","), name)

    # -- TF's queries ----------------------------------------------------------------------------------------

    @property
    def dim_names(self) -> list[str]:
        return list(self._jax.axis_names)

    @property
    def size(self) -> int:
        return self._jax.size

    @property
    def name(self) -> str:
        return self._name

    def shape(self) -> list[int]:
        return list(self._jax.devices.shape)

    def dim_size(self, dim_name: str) -> int:
        return self._jax.shape[dim_name]

    def contains_dim(self, dim_name: str) -> bool:
        return dim_name in self._jax.axis_names

    def __getitem__(self, dim_name: str) -> MeshDimension:
        return MeshDimension(dim_name, self.dim_size(dim_name))

    def device_type(self) -> str:
        return _type_of(self._jax.devices.flat[0])

    def local_devices(self) -> list[str]:
        return [device_name(d) for d in self._jax.devices.flat if d.process_index == jax.process_index()]

    def num_local_devices(self) -> int:
        return len(self.local_devices())

    def global_device_ids(self) -> np.ndarray:
        return np.array(self._ids).reshape(self.shape())

    def is_remote(self) -> bool:
        return False

    def to_string(self) -> str:
        ids = ",".join(map(str, self._ids))
        dims = ",".join(f"{n}={s}" for n, s in zip(self.dim_names, self.shape()))
        return f"{self._name}|{dims}|{ids}|{ids}|" + ",".join(device_name(d) for d in self._jax.devices.flat)

    def __repr__(self) -> str:
        return f"Mesh.from_string({self.to_string()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self._jax == other._jax

    def __hash__(self) -> int:
        return hash(self._jax)


def create_mesh(mesh_dims: Any = None, mesh_name: str = "", devices: Sequence[Any] | None = None,
                device_type: str | None = None, use_xla_spmd: bool = False) -> Mesh:
    """A mesh over this host's devices (`tf.experimental.dtensor.create_mesh`).

    Args:
      mesh_dims: `[(name, size), ...]` or `{name: size}`; default: one dimension "x" over all the devices.
      devices: TF device strings ("CPU:0", "/job:localhost/.../device:GPU:1"); default: all devices of
        `device_type` (default: JAX's default backend, the accelerators when there are some).

    Raises:
      ValueError: the devices are not as many as the mesh's size (TF's message).
    """
    if devices is None:
        jax_devices = _jax_devices(device_type)
    else:
        jax_devices = [devices_lib.jax_device(d if "/" in str(d) or device_type is None else f"{device_type}:{d}")
                       for d in devices]
        if any(d is None for d in jax_devices):
            raise ValueError(f"Not all of {list(devices)} are devices here.")
    if mesh_dims is None:
        mesh_dims = [("x", len(jax_devices))]
    pairs = list(mesh_dims.items()) if isinstance(mesh_dims, dict) else [tuple(d) for d in mesh_dims]
    shape = [int(size) for _, size in pairs]
    if int(np.prod(shape)) != len(jax_devices):
        raise ValueError(f"length of devices ({len(jax_devices)}) must be equal to total size of the mesh of shape "
                         f"{shape}")
    names = [n for n, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError(f"Mesh dimension names must be unique, got {names} (JAX's mesh needs unique axis names).")
    array = np.empty(len(jax_devices), dtype=object)
    array[:] = jax_devices
    mesh = Mesh.__new__(Mesh)
    mesh._init(JaxMesh(array.reshape(shape), tuple(names)), list(range(len(jax_devices))), mesh_name)
    return mesh


def num_local_devices(device_type: str, for_client_id: int | None = None) -> int:
    """How many devices of `device_type` ("CPU", "GPU", "TPU") this host has."""
    return len(local_devices(device_type))


def num_global_devices(device_type: str) -> int:
    """How many devices of `device_type` all hosts have together."""
    try:
        return len(jax.devices(_platform(device_type)))
    except RuntimeError:
        return 0


def local_devices(device_type: str, for_client_id: int | None = None) -> list[str]:
    """This host's devices of `device_type`, as TF device strings (TF gives `tf.DeviceSpec`s)."""
    try:
        return [device_name(d) for d in _jax_devices(device_type)]
    except RuntimeError:  # no backend of that platform
        return []
