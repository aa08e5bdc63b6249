"""tf.config: the switches TF code sets around tf.function and devices."""

from tapejax import config_experimental as experimental
from tapejax._src.background import experimental_background_compile as experimental_background_compile
from tapejax._src.checking import experimental_check as experimental_check
from tapejax._src.compilation_cache import experimental_compilation_cache as experimental_compilation_cache
from tapejax._src.devices import LogicalDevice as LogicalDevice
from tapejax._src.devices import PhysicalDevice as PhysicalDevice
from tapejax._src.devices import list_logical_devices as list_logical_devices
from tapejax._src.devices import list_physical_devices as list_physical_devices
from tapejax._src.logical_devices import LogicalDeviceConfiguration as LogicalDeviceConfiguration
from tapejax._src.logical_devices import get_logical_device_configuration as get_logical_device_configuration
from tapejax._src.logical_devices import set_logical_device_configuration as set_logical_device_configuration
from tapejax._src.function import functions_run_eagerly as functions_run_eagerly
from tapejax._src.function import run_functions_eagerly as run_functions_eagerly

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.config")
