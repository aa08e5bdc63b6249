"""tf.distribute on JAX's sharding: a training step from one device to all the devices of one machine or several.

`MirroredStrategy` makes the devices one `jax.sharding.Mesh` axis; variables created in its `scope()` are
replicated arrays on it (`NamedSharding(mesh, PartitionSpec())`), distributed datasets split each global batch
over it, and `strategy.run(fn, args)` runs `fn` for every replica as one `jax.shard_map` inside one `jax.jit`.
`MultiWorkerMirroredStrategy` (several processes, on `jax.distributed`) and `TPUStrategy` (JAX's TPU devices) run
the same program on a mesh that may span processes; `merge_call` runs inside the same map.
See the README's "tf.distribute" section for what works and what was verified against TensorFlow.
"""

from tapejax.distribute import cluster_resolver as cluster_resolver
from tapejax.distribute import experimental as experimental
from tapejax.distribute._src.enums import ReduceOp as ReduceOp
from tapejax.distribute._src.input import DistributedDataset as DistributedDataset
from tapejax.distribute._src.input import InputContext as InputContext
from tapejax.distribute._src.losses import compute_average_loss as compute_average_loss
from tapejax.distribute._src.losses import scale_regularization_loss as scale_regularization_loss
from tapejax.distribute._src.replica import ReplicaContext as ReplicaContext
from tapejax.distribute._src.replica import get_replica_context as get_replica_context
from tapejax.distribute._src.replica import get_strategy as get_strategy
from tapejax.distribute._src.replica import has_strategy as has_strategy
from tapejax.distribute._src.replica import in_cross_replica_context as in_cross_replica_context
from tapejax.distribute._src.multi_worker import MultiWorkerMirroredStrategy as MultiWorkerMirroredStrategy
from tapejax.distribute._src.strategy import MirroredStrategy as MirroredStrategy
from tapejax.distribute._src.strategy import OneDeviceStrategy as OneDeviceStrategy
from tapejax.distribute._src.strategy import Strategy as Strategy
from tapejax.distribute._src.tpu import TPUStrategy as TPUStrategy
from tapejax.distribute._src.values import PerReplica as PerReplica
