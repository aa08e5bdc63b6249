"""tf.experimental.dtensor on JAX's sharding: a `Mesh` is a `jax.sharding.Mesh`, a `Layout` a `NamedSharding`.

A DTensor is an ordinary tapejax tensor whose `jax.Array` carries the layout's `NamedSharding`; ops on it run
SPMD through JAX's sharding propagation, and gradients and tf.function work unchanged. See the README's
"tf.distribute" section for what is covered and what differs from TensorFlow.
"""

from tapejax.experimental.dtensor.api import call_with_layout as call_with_layout
from tapejax.experimental.dtensor.api import check_layout as check_layout
from tapejax.experimental.dtensor.api import copy_to_mesh as copy_to_mesh
from tapejax.experimental.dtensor.api import fetch_layout as fetch_layout
from tapejax.experimental.dtensor.api import is_dtensor as is_dtensor
from tapejax.experimental.dtensor.api import pack as pack
from tapejax.experimental.dtensor.api import relayout as relayout
from tapejax.experimental.dtensor.api import unpack as unpack
from tapejax.experimental.dtensor.d_variable import DVariable as DVariable
from tapejax.experimental.dtensor.layout import MATCH as MATCH
from tapejax.experimental.dtensor.layout import UNSHARDED as UNSHARDED
from tapejax.experimental.dtensor.layout import Layout as Layout
from tapejax.experimental.dtensor.mesh import Mesh as Mesh
from tapejax.experimental.dtensor.mesh import create_mesh as create_mesh
from tapejax.experimental.dtensor.mesh import local_devices as local_devices
from tapejax.experimental.dtensor.mesh import num_global_devices as num_global_devices
from tapejax.experimental.dtensor.mesh import num_local_devices as num_local_devices

from tapejax._src.errors import missing_symbols as _missing_symbols  # noqa: E402

__getattr__ = _missing_symbols("tf.experimental.dtensor")
