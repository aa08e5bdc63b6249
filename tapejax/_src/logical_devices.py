"""tf.config's logical device configurations: recorded, and accepted where they describe the devices JAX has.

TF splits a physical device into logical ones (two CPUs to try a MirroredStrategy, a GPU memory limit) until
its runtime starts. tapejax's devices are JAX's, fixed when JAX starts (at `import tapejax`), so a configuration
is accepted when it asks for as many logical devices as JAX has of that type (the limits are remembered), and
otherwise refused with TF's RuntimeError for a runtime already started, saying how to get the devices.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .devices import PhysicalDevice, list_logical_devices


class LogicalDeviceConfiguration(NamedTuple):
    """One logical device to make of a physical one (`tf.config.LogicalDeviceConfiguration`)."""

    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None


_CONFIGURATIONS: dict[str, list[LogicalDeviceConfiguration]] = {}


def set_logical_device_configuration(device: PhysicalDevice, logical_devices: Any) -> None:
    """Sets the logical devices of a physical device (`tf.config.set_logical_device_configuration`).

    >>> import tapejax as tf
    >>> cpu = tf.config.list_physical_devices("CPU")[0]
    >>> tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()])
    >>> tf.config.get_logical_device_configuration(cpu)
    [LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, experimental_device_ordinal=None)]

    Raises:
      ValueError: `device` is not a PhysicalDevice.
      RuntimeError: the configuration asks for another number of devices than JAX has (TF's error once its
        runtime has started); for N CPU devices, set `XLA_FLAGS=--xla_force_host_platform_device_count=N` in the
        environment before importing tapejax.
    """
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"Unrecognized device: {device!r}")
    configurations = [] if logical_devices is None else list(logical_devices)
    have = len(list_logical_devices(device.device_type))
    if configurations and len(configurations) != have:
        hint = (f"set XLA_FLAGS=--xla_force_host_platform_device_count={len(configurations)} in the environment "
                "before importing tapejax" if device.device_type == "CPU" else
                "JAX makes one device per accelerator")
        raise RuntimeError(f"Virtual devices cannot be modified after being initialized: tapejax's devices are "
                           f"JAX's, fixed when JAX starts ({have} {device.device_type} device(s); "
                           f"{len(configurations)} asked for). To have them, {hint}.")
    _CONFIGURATIONS[device.name] = configurations


def get_logical_device_configuration(device: PhysicalDevice) -> list[LogicalDeviceConfiguration] | None:
    """What `set_logical_device_configuration` set for `device`, or None (`tf.config.get_logical_device_
    configuration`)."""
    if not isinstance(device, PhysicalDevice):
        raise ValueError(f"Unrecognized device: {device!r}")
    return _CONFIGURATIONS.get(device.name) or None
