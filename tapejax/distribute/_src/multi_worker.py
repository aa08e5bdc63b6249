"""`MultiWorkerMirroredStrategy`: the replicas of several processes (hosts) as one mesh axis, on JAX's
distributed runtime.

Each worker process runs the same program. Constructing the strategy calls `jax.distributed.initialize` with the
chief's address as the coordinator, the number of workers and this worker's index (TF's task order, see
`tapejax/_src/cluster.py`); then `jax.devices()` lists every process's devices and the strategy's mesh spans
them: a CPU worker gives one replica (its first CPU device, as TF's worker has one CPU device), a GPU or TPU worker
all its local devices. On CPU, JAX's cross-process collectives are gloo's. From there everything is
MirroredStrategy's single program: `strategy.run` is one `shard_map` in one `jax.jit`, which every process runs
on its own devices (multi-controller SPMD), and its collectives cross the hosts.

Data: each worker reads the whole dataset and keeps its replicas' share of each global batch (TF's
`AutoShardPolicy.DATA`, which AUTO means for a dataset not read from files); the worker-local rows become one
global `jax.Array` with `jax.make_array_from_process_local_data`. A partial batch split unevenly is traced one
replica at a time (sequential.py) on every worker, after the workers swap their replicas' rows (exchange.py).

A worker that cannot reach the coordinator gets `tf.errors.UnavailableError` after the timeout (JAX itself
would terminate the process): the coordinator's port is probed before JAX is asked to connect.
"""

from __future__ import annotations

import enum
import functools
import socket
import time
from typing import Any

import jax
import numpy as np

from tapejax._src import cluster as cluster_lib
from tapejax._src import errors
from tapejax._src.tensor import EagerTensor, Tensor
from tapejax.distribute._src import merge
from tapejax.distribute._src.strategy import Strategy

COLLECTIVES_TOO_LATE = (
    "Collective ops must be configured at program startup: tf.distribute.MultiWorkerMirroredStrategy calls "
    "jax.distributed.initialize, which must come before JAX's backend starts (before any tensor is created or "
    "op runs). Create the strategy first thing after `import tapejax as tf`.")

UNREACHABLE = (
    "Worker {task} of the MultiWorkerMirroredStrategy could not reach the chief's coordination service at "
    "{address} within {timeout} seconds (the chief's address in TF_CONFIG's cluster). Check that the chief "
    "process is started with the same TF_CONFIG cluster, that {address} is the chief's host and a free port it "
    "can listen on, and that this host can reach it; raise the wait with "
    "`communication_options=tf.distribute.experimental.CommunicationOptions(timeout_seconds=...)`.")


class CommunicationImplementation(enum.Enum):
    """Which collective implementation to use (`tf.distribute.experimental.CommunicationImplementation`).
    Accepted and ignored: JAX's runtime picks its collectives (gloo on CPU, NCCL on GPU, ICI on TPU)."""

    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class CommunicationOptions:
    """Options of cross-worker communication (`tf.distribute.experimental.CommunicationOptions`).

    `timeout_seconds` bounds how long a worker waits for the chief when the strategy starts (default 300, JAX's
    `initialization_timeout`); `bytes_per_pack` and `implementation` are accepted and ignored.
    """

    def __init__(self, bytes_per_pack: int = 0, timeout_seconds: float | None = None,
                 implementation: Any = CommunicationImplementation.AUTO):
        if bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {bytes_per_pack}.")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation


class ProcessSpanningStrategy(Strategy):
    """A strategy whose mesh may span several processes (`_num_workers` of them, this one `_worker_index`): each
    process feeds its replicas' rows and reads cross-replica results replicated on its own devices."""

    _num_workers = 1
    _worker_index = 0
    _task_type: str | None = None
    _task_id: int | None = None

    @property
    def _local(self) -> list[Any]:
        return [d for d in self._devices if d.process_index == jax.process_index()]

    @property
    def _is_chief(self) -> bool:
        return self._worker_index == 0

    @property
    def should_checkpoint(self) -> bool:
        return self._is_chief

    @property
    def should_save_summary(self) -> bool:
        return self._is_chief

    def _in_multi_worker_mode(self) -> bool:
        return self._num_workers > 1

    @property
    def worker_devices(self) -> tuple[str, ...]:
        job = (f"/job:{self._task_type}/replica:0/task:{self._task_id}" if self._task_type
               else "/job:localhost/replica:0/task:0")
        return tuple(f"{job}/device:{d.platform.upper()}:{i}" for i, d in enumerate(self._local))

    def _local_replicas(self) -> list[int]:
        return [i for i, d in enumerate(self._devices) if d.process_index == jax.process_index()]

    def _input_context(self) -> Any:
        from tapejax.distribute._src.input import InputContext

        return InputContext(self._num_workers, self._worker_index, self.num_replicas_in_sync)

    def _place_split(self, stacked: np.ndarray) -> Any:
        """The replicas' stacked rows of a global batch: this worker keeps its replicas' rows (TF's DATA
        sharding) and the workers' rows become one global array."""
        if self._num_workers == 1:
            return super()._place_split(stacked)
        return jax.make_array_from_process_local_data(self._split, stacked[self._local_replicas()], stacked.shape)

    @functools.cached_property
    def _to_replicated(self) -> Any:
        """One compiled copy to the replicated sharding (compiled once per shape, not once per call)."""
        return jax.jit(lambda a: a, out_shardings=self._replicated)

    def _on_every_worker(self, value: Any) -> Any:
        """Reduced and gathered values replicated on every worker's devices, so each worker can read them."""
        if self._num_workers == 1 or merge.in_map():
            return value

        def replicated(x: Any) -> Any:
            if not isinstance(x, Tensor):
                return x
            array = x.value
            if isinstance(array, jax.Array) and not isinstance(array, jax.core.Tracer):
                if array.is_fully_replicated:
                    return x
                return EagerTensor(self._to_replicated(array))
            return EagerTensor(jax.lax.with_sharding_constraint(array, self._replicated))

        return jax.tree_util.tree_map(replicated, value, is_leaf=lambda x: isinstance(x, Tensor))

    def _place_local(self, local: np.ndarray) -> Any:
        """This worker's replicas' values, stacked: one global array of every worker's."""
        if self._num_workers == 1:
            return super()._place_local(local)
        return jax.make_array_from_process_local_data(self._split, local)



class MultiWorkerMirroredStrategy(ProcessSpanningStrategy):
    """Synchronous data parallelism over several workers (`tf.distribute.MultiWorkerMirroredStrategy`).

    Configured from `TF_CONFIG` (or `cluster_resolver`); a process without a cluster is one local worker. Every
    worker must construct the strategy before creating any tensor. Checkpoints: as in TF, `tf.train.Checkpoint`
    writes wherever each worker asks; `strategy.extended.should_checkpoint` is True only on the chief (write the
    other workers' copies to a temporary directory, as TF's multi-worker tutorial does).

    Differences from TensorFlow: the chief's address is where JAX's coordination service listens (TF starts a
    gRPC server there); a CPU worker is one replica even if JAX has more virtual CPU devices; a chief whose
    workers never join is terminated by JAX after the timeout; datasets are sharded by data (FILE sharding and
    `AutoShardPolicy.OFF` are not offered).

    >>> import tapejax as tf
    >>> tf.distribute.MultiWorkerMirroredStrategy().num_replicas_in_sync  # no TF_CONFIG: one local worker
    1
    """

    def __init__(self, cluster_resolver: Any = None, communication_options: Any = None):
        resolver = cluster_resolver if cluster_resolver is not None else cluster_lib.TFConfigClusterResolver()
        spec = resolver.cluster_spec()
        options = communication_options or CommunicationOptions()
        self.cluster_resolver = resolver
        if spec:
            cluster_lib.validate(spec, resolver.task_type, resolver.task_id)
            tasks = cluster_lib.workers(spec)
            task = (resolver.task_type, resolver.task_id)
            if task not in tasks:
                raise ValueError(f"MultiWorkerMirroredStrategy runs on the 'chief' and 'worker' tasks; this task "
                                 f"is {task[0]}:{task[1]} (TF runs an evaluator outside the strategy).")
            self._num_workers, self._worker_index = len(tasks), tasks.index(task)
            chief = spec.task_address(*tasks[0])
        else:
            self._num_workers, self._worker_index, chief = 1, 0, None
        self._task_type, self._task_id = (resolver.task_type, resolver.task_id) if spec else (None, None)
        if self._num_workers > 1:
            _initialize(chief, self._num_workers, self._worker_index, options.timeout_seconds or 300)
        devices = sorted(jax.devices() if self._num_workers > 1 else jax.local_devices(),
                         key=lambda d: (d.process_index, d.id))
        if devices[0].platform == "cpu":  # a CPU worker is one replica, as in TF: each process's first CPU
            first: dict[int, Any] = {}
            for d in devices:
                first.setdefault(d.process_index, d)
            devices = list(first.values())
        super().__init__(devices)


class ExperimentalMultiWorkerMirroredStrategy(MultiWorkerMirroredStrategy):
    """`tf.distribute.experimental.MultiWorkerMirroredStrategy`: TF's older signature, with the collective
    implementation first (ignored, as `CommunicationOptions.implementation` is)."""

    def __init__(self, communication: Any = CommunicationImplementation.AUTO, cluster_resolver: Any = None,
                 communication_options: Any = None):
        super().__init__(cluster_resolver=cluster_resolver, communication_options=communication_options)


def _initialize(chief: str, num_processes: int, process_id: int, timeout: float) -> None:
    """jax.distributed.initialize, once per process, with the chief as the coordinator."""
    from jax._src import distributed, xla_bridge

    if distributed.global_state.client is not None:
        if (jax.process_count(), jax.process_index()) != (num_processes, process_id):
            raise RuntimeError(f"JAX's distributed runtime is already initialized as process {jax.process_index()} "
                               f"of {jax.process_count()}; TF_CONFIG says worker {process_id} of {num_processes}.")
        return
    if xla_bridge.backends_are_initialized():
        raise RuntimeError(COLLECTIVES_TOO_LATE)
    if process_id != 0:
        _wait_for(chief, timeout, process_id)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=chief, num_processes=num_processes, process_id=process_id,
                               initialization_timeout=int(max(1, timeout)))


def _wait_for(address: str, timeout: float, task: int) -> None:
    """Waits until the coordinator's port accepts connections; TF's UnavailableError after `timeout` seconds."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=min(2.0, timeout)):
                return
        except OSError:
            if time.monotonic() >= deadline:
                raise errors.UnavailableError(None, None, UNREACHABLE.format(
                    task=task, address=address, timeout=timeout)) from None
            time.sleep(0.2)
