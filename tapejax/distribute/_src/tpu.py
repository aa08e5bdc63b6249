"""`TPUStrategy`: MirroredStrategy's single program on JAX's TPU devices.

The strategy's mesh is every TPU device JAX sees (`jax.devices("tpu")`; on a pod slice, every host's, once
`jax.distributed.initialize()` has run, which JAX does by itself on Cloud TPU when called without arguments), so
`run` is the same `shard_map` in one `jax.jit` as on CPUs or GPUs, and a multi-host slice feeds each host's rows
as MultiWorkerMirroredStrategy does. Without TPUs it fails as TF does: `TPUClusterResolver()` with no TPU name
raises TF's ValueError.
"""

from __future__ import annotations

from typing import Any

import jax

from tapejax._src import errors
from tapejax.distribute._src.multi_worker import ProcessSpanningStrategy

NO_TPU_NAME = ("Please provide a TPU Name to connect to. (tapejax: JAX found no TPU devices on this machine; "
               "TPUStrategy runs on the TPUs JAX sees. On a machine without TPUs use MirroredStrategy.)")


def _tpus() -> list[Any]:
    try:
        return jax.devices("tpu")
    except RuntimeError:  # JAX has no TPU backend here
        return []


class TPUClusterResolver:
    """Where the TPUs are (`tf.distribute.cluster_resolver.TPUClusterResolver`): JAX's TPU devices.

    `tpu=None` (or "" ) finds the TPUs of this machine and raises TF's ValueError when there are none; "local"
    names them explicitly. Other names (a Cloud TPU's name or a grpc:// address) are accepted when JAX sees
    TPUs: JAX's runtime, not the resolver, connects to them.
    """

    def __init__(self, tpu: str | None = None, zone: str | None = None, project: str | None = None,
                 job_name: str = "worker", coordinator_name: str | None = None,
                 coordinator_address: str | None = None, credentials: Any = "default", service: Any = None,
                 discovery_url: Any = None):
        self.tpu = tpu
        self.task_type, self.task_id = job_name, jax.process_index() if _tpus() else 0
        if not tpu and not _tpus():
            raise ValueError(NO_TPU_NAME)

    def cluster_spec(self) -> Any:
        from tapejax._src.cluster import ClusterSpec

        return ClusterSpec({})

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        return "" if self.tpu in (None, "", "local") else str(self.tpu)

    def num_accelerators(self, task_type: str | None = None, task_id: int | None = None,
                         config_proto: Any = None) -> dict[str, int]:
        return {"TPU": len([d for d in _tpus() if d.process_index == jax.process_index()])}


class TPUStrategy(ProcessSpanningStrategy):
    """Data parallelism over TPU cores (`tf.distribute.TPUStrategy`): the same implementation as
    MirroredStrategy, on JAX's TPU devices.

    Differences from TensorFlow: `experimental_device_assignment` and `experimental_spmd_xla_partitioning`
    are accepted and ignored (every TPU core JAX sees is a replica); with a resolver naming "local" TPUs on a
    machine without any, `tf.errors.NotFoundError` (TF fails with an IndexError there).

    >>> import tapejax as tf
    >>> try:
    ...     tf.distribute.TPUStrategy()  # a machine without TPUs
    ... except ValueError as e:
    ...     print(str(e).split(".")[0])
    Please provide a TPU Name to connect to
    """

    def __init__(self, tpu_cluster_resolver: Any = None, experimental_device_assignment: Any = None,
                 experimental_spmd_xla_partitioning: bool = False):
        self.cluster_resolver = tpu_cluster_resolver if tpu_cluster_resolver is not None else TPUClusterResolver()
        devices = _tpus()
        if not devices:
            raise errors.NotFoundError(None, None, "TPUs not found in the cluster: JAX sees no TPU devices on this "
                                       "machine (TPUStrategy runs on JAX's TPU devices; use MirroredStrategy here).")
        self._num_workers, self._worker_index = jax.process_count(), jax.process_index()
        super().__init__(sorted(devices, key=lambda d: (d.process_index, d.id)))
