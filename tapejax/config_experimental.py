"""tf.config.experimental: the device settings ported code makes (tapejax/_src/devices.py)."""

from tapejax._src.devices import get_memory_growth as get_memory_growth
from tapejax._src.devices import list_logical_devices as list_logical_devices
from tapejax._src.devices import list_physical_devices as list_physical_devices
from tapejax._src.devices import set_memory_growth as set_memory_growth
from tapejax._src.logical_devices import LogicalDeviceConfiguration as VirtualDeviceConfiguration
from tapejax._src.logical_devices import get_logical_device_configuration as get_virtual_device_configuration
from tapejax._src.logical_devices import set_logical_device_configuration as set_virtual_device_configuration

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.config.experimental")
