"""`tf.device` and `tf.config`'s device lists, on JAX's devices.

TF names devices by type and index ("/physical_device:GPU:0", "/device:GPU:0"); JAX's devices are listed
per platform ("cpu", "gpu", "tpu"), so device `TYPE:i` is JAX's i-th device of that platform. `tf.device`
parses TF's device strings with TF's rules (and TF's ValueErrors for malformed ones) and, eagerly, places the
ops inside it on that JAX device with `jax.default_device`. As with TF's soft placement, a device this machine
does not have is no error: the ops run where they would have run. Inside `tf.function` it changes nothing:
the compiled step runs where `jax.jit` places it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import jax

from .context import CONTEXT

_TYPES = ("CPU", "GPU", "TPU")
_PLATFORMS = {"CPU": "cpu", "GPU": "gpu", "TPU": "tpu"}


class PhysicalDevice(NamedTuple):
    """A device of this machine (`tf.config.PhysicalDevice`): its name and type, as TF writes them."""

    name: str
    device_type: str


class LogicalDevice(NamedTuple):
    """A device ops can be placed on (`tf.config.LogicalDevice`)."""

    name: str
    device_type: str


def parse(spec: Any) -> tuple[str | None, int | None]:
    """(device type, index) of a TF device string, e.g. "/job:localhost/device:GPU:1" -> ("GPU", 1); None for
    what it leaves open. Raises TF's ValueError for what TF refuses."""
    if not isinstance(spec, str):
        raise ValueError(f"Expecting a string device name. Got {type(spec)}({spec})")
    device_type = index = None
    for part in spec.split("/"):
        fields = part.split(":")
        head = fields[0]
        if not part:
            continue
        if len(fields) == 2 and head in ("job", "replica", "task"):
            if head != "job":
                int(fields[1])  # TF's int() of the replica and task numbers: its ValueError for "replica:x"
        elif len(fields) in (1, 2) and head.upper() in _TYPES or len(fields) == 3 and head == "device":
            if device_type is not None:
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")
            device_type, number = (head.upper(), fields[1:]) if head != "device" else (fields[1].upper(), fields[2:])
            if number and number[0] != "*":
                index = int(number[0])
        else:
            raise ValueError(f"Unknown attribute '{head}' is encountered while parsing the device spec: '{spec}'.")
    return device_type, index


def _jax_devices(device_type: str) -> list:
    try:
        return jax.devices(_PLATFORMS[device_type])
    except (RuntimeError, KeyError):  # JAX raises RuntimeError for a platform it has no backend for
        return []


def jax_device(spec: Any) -> Any:
    """The JAX device a TF device string names, or None (no type given, or none such here)."""
    device_type, index = parse(spec)
    if device_type is None:
        return None
    devices = _jax_devices(device_type)
    index = index or 0
    return devices[index] if index < len(devices) else None


@contextlib.contextmanager
def device(device_name: Any) -> Iterator[None]:
    """Places the ops inside the block on a device (`tf.device`): "/CPU:0", "GPU:1", "/device:GPU:0", ...

    Eagerly, the ops run on JAX's device of that type and index; a device this machine lacks is ignored (TF's
    soft placement). Inside `tf.function` the block changes nothing (XLA places the compiled step).

    Raises:
      ValueError: a malformed device string, as TF.
      RuntimeError: a function instead of a string (TF 2 does not support device functions).

    >>> import tapejax as tf
    >>> with tf.device("/CPU:0"):
    ...     x = tf.constant(1.0) + 1.0
    >>> x.device
    '/job:localhost/replica:0/task:0/device:CPU:0'
    """
    if callable(device_name):
        raise RuntimeError("tf.device does not support functions.")
    target = None if device_name is None else jax_device(device_name)
    if target is None or CONTEXT.trace is not None:
        yield
        return
    with jax.default_device(target):
        yield


def _devices(kind: type, prefix: str, device_type: str | None) -> list:
    wanted = _TYPES if device_type is None else (device_type,)
    return [kind(f"{prefix}:{t}:{i}", t) for t in wanted for i in range(len(_jax_devices(t)))]


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """This machine's devices as TF lists them (`tf.config.list_physical_devices`): CPU first, then GPU and
    TPU, from JAX's devices; `device_type` ("CPU", "GPU", "TPU", upper case as in TF) keeps one type.

    >>> import tapejax as tf
    >>> tf.config.list_physical_devices("CPU")
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    return _devices(PhysicalDevice, "/physical_device", device_type)


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The devices ops can be placed on (`tf.config.list_logical_devices`): one per JAX device.

    >>> import tapejax as tf
    >>> tf.config.list_logical_devices("CPU")
    [LogicalDevice(name='/device:CPU:0', device_type='CPU')]
    """
    return _devices(LogicalDevice, "/device", device_type)


_GROWTH: dict[str, bool] = {}


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Accepted for a GPU (`tf.config.experimental.set_memory_growth`); TF's ValueError for any other device.

    Differences from TensorFlow: JAX manages GPU memory itself (it preallocates 75% unless the environment sets
    `XLA_PYTHON_CLIENT_PREALLOCATE=false` before JAX starts), so the setting is only remembered.
    """
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    _GROWTH[device.name] = bool(enable)


def get_memory_growth(device: PhysicalDevice) -> bool:
    """What `set_memory_growth` set for `device` (False until then), as `tf.config.experimental.get_memory_growth`."""
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError("Cannot get memory growth on non-GPU and non-Pluggable devices")
    return _GROWTH.get(device.name, False)
