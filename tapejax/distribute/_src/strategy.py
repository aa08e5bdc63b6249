"""The strategies: `MirroredStrategy` (the replicas of one machine as one mesh axis), `OneDeviceStrategy` and
the default strategy, with the cross-replica API (`scope`, `run`, `reduce`, `gather`,
`experimental_local_results`, the distributed datasets)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import tapejax as tf
from tapejax._src import devices as devices_lib
from tapejax._src.context import CONTEXT
from tapejax._src.function import Function
from tapejax.distribute._src import input as input_lib
from tapejax.distribute._src import reduction, replica, spmd, variables
from tapejax.distribute._src.values import PerReplica


class Strategy:
    """A way to run a step on several replicas (`tf.distribute.Strategy`)."""

    def __init__(self, devices: list[Any]):
        self._devices = list(devices)
        self._mesh = Mesh(np.array(self._devices), (replica.AXIS,))
        self._replicated = NamedSharding(self._mesh, P())
        self._split = NamedSharding(self._mesh, P(replica.AXIS))
        self._runner: Function | None = None

    # -- the replicas ---------------------------------------------------------------------------------------

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._devices)

    @property
    def extended(self) -> Strategy:
        return self

    @property
    def worker_devices(self) -> tuple[str, ...]:
        return tuple(f"/job:localhost/replica:0/task:0/device:{d.platform.upper()}:{d.id}" for d in self._devices)

    @property
    def should_checkpoint(self) -> bool:
        """Whether this worker should write checkpoints (`strategy.extended.should_checkpoint`): one worker here."""
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    def _in_multi_worker_mode(self) -> bool:
        return False

    def _local_replicas(self) -> list[int]:
        """The indices of the replicas this process feeds (all of them but under MultiWorkerMirroredStrategy)."""
        return list(range(len(self._devices)))

    def _input_context(self) -> input_lib.InputContext:
        return input_lib.InputContext(1, 0, self.num_replicas_in_sync)

    def _place_split(self, stacked: np.ndarray) -> Any:
        """A global batch's rows stacked by replica `[replicas, rows, ...]`, each device holding its replica's."""
        return jax.device_put(stacked, self._split)

    def _place_local(self, local: np.ndarray) -> Any:
        """This process's replicas' values stacked `[local replicas, ...]`, as one array over the mesh."""
        return jax.device_put(local, self._split)

    def _replicate(self, array: Any) -> Any:
        """An array placed on every replica's device (what a mirrored variable holds)."""
        if len(self._devices) == 1:
            return jax.device_put(array, self._devices[0])
        return jax.device_put(array, self._replicated)

    # -- scope ----------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def scope(self) -> Iterator[Strategy]:
        """Makes this the current strategy: variables created inside are mirrored on its replicas."""
        if CONTEXT.strategies and CONTEXT.strategies[-1] is not self:
            raise RuntimeError(f"Mixing different tf.distribute.Strategy objects: {self} is not "
                               f"{CONTEXT.strategies[-1]}")
        saved = CONTEXT.variable_creator
        CONTEXT.strategies.append(self)
        CONTEXT.variable_creator = lambda v, sync, agg: variables.created(self, v, sync, agg)
        try:
            yield self
        finally:
            CONTEXT.strategies.pop()
            CONTEXT.variable_creator = saved

    # -- running a step -------------------------------------------------------------------------------------

    def run(self, fn: Callable, args: tuple = (), kwargs: dict | None = None, options: Any = None) -> Any:
        """Runs `fn(*args, **kwargs)` on every replica; `PerReplica` arguments give each replica its value.

        Returns the replicas' results: a `PerReplica` for each tensor `fn` returns (on one replica, the tensor).
        Under a `MirroredStrategy`, the replicas run as one `shard_map` inside one `jax.jit` (see spmd.py); on a
        partial batch split unevenly (replicas of different batch sizes, some maybe empty), `fn` is traced for
        each replica on its own slice, one after another, as TF's replica threads run it (see sequential.py);
        called eagerly, `run` compiles `fn` as a `tf.function` does (traced again for new shapes or a new `fn`).
        """
        kwargs = kwargs or {}
        if CONTEXT.replica is not None and not isinstance(CONTEXT.replica, replica._DefaultReplicaContext):
            raise RuntimeError("Method requires being in cross-replica context, use get_replica_context()."
                               "merge_call()")
        if self.num_replicas_in_sync == 1:
            return self._run_one(fn, args, kwargs)
        if CONTEXT.trace is None:
            if self._runner is None:
                self._runner = Function(self._run_traced, None, None, False, True)
            return self._runner(fn, args, kwargs)
        return spmd.run(self, fn, args, kwargs)

    def _run_traced(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        return spmd.run(self, fn, args, kwargs)

    def _run_one(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        args, kwargs = tf.nest.map_structure(
            lambda x: x.values[0] if isinstance(x, PerReplica) else x, (args, kwargs))
        context = replica.ReplicaContext(self, self._replica_zero(), spmd=False)
        with replica.replica(context):
            return fn(*args, **kwargs)

    def _replica_zero(self) -> Any:
        return tf.constant(0)

    # -- results --------------------------------------------------------------------------------------------

    def reduce(self, reduce_op: Any, value: Any, axis: int | None) -> Any:
        """Combines the replicas' values: SUM or MEAN over the replicas, and with `axis` also along that axis
        of each value (MEAN weighting each replica by its element count)."""
        return self._on_every_worker(reduction.reduce(self, reduce_op, value, axis))

    def gather(self, value: Any, axis: int) -> Any:
        """The replicas' values concatenated along `axis`."""
        return self._on_every_worker(reduction.gather(self, value, axis))

    def reduce_to(self, reduce_op: Any, value: Any, destinations: Any = None, options: Any = None) -> Any:
        """`strategy.extended.reduce_to`: the replicas' values combined element by element (the destinations are
        every replica's devices here: the result is mirrored)."""
        from tapejax.distribute._src import merge

        return tf.nest.map_structure(merge.mirrored, self.reduce(reduce_op, value, axis=None))

    def batch_reduce_to(self, reduce_op: Any, value_destination_pairs: Any, options: Any = None) -> list[Any]:
        """`strategy.extended.batch_reduce_to`: `reduce_to` of each (value, destinations) pair."""
        return [self.reduce_to(reduce_op, value, destinations) for value, destinations in value_destination_pairs]

    def update(self, var: Any, fn: Callable, args: tuple = (), kwargs: dict | None = None, group: bool = True
               ) -> Any:
        """`strategy.extended.update`: `fn(var, *args, **kwargs)` on the mirrored variable (its copies stay equal,
        since the arguments are mirrored values)."""
        return fn(var, *args, **(kwargs or {}))

    def _on_every_worker(self, value: Any) -> Any:
        """A cross-replica result, readable by every process (one process here: as it is)."""
        return value

    def experimental_local_results(self, value: Any) -> tuple[Any, ...]:
        """The values of each replica, as a tuple (a non-distributed value: a tuple of itself)."""
        if isinstance(value, PerReplica):
            local = self._local_replicas()
            if len(local) == self.num_replicas_in_sync:
                return value.values
            arrays = [value.stacked.value] if value.even else [tf.convert_to_tensor(v).value for v in value.values]
            if isinstance(arrays[0], jax.core.Tracer):
                return value.values  # inside a traced step the program is global: every replica's value is there
            # this worker's replicas (TF's local results), read from this process's devices
            if value.even and not arrays[0].is_fully_replicated:
                shards = sorted(arrays[0].addressable_shards, key=lambda s: s.index[0].start)
                return tuple(tf.convert_to_tensor(np.asarray(s.data)[0]) for s in shards)
            if value.even:  # a partial batch's step stacks the replicas' equal-shaped results, replicated
                return tuple(tf.convert_to_tensor(np.asarray(arrays[0])[i]) for i in local)
            return tuple(tf.convert_to_tensor(np.asarray(arrays[i])) for i in local)
        return (value,)

    # -- input ----------------------------------------------------------------------------------------------

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> input_lib.DistributedDataset:
        """Splits each global batch of `dataset` over the replicas, as TF does (a batch of B gives each replica
        ceil(B / replicas) examples in order, the last ones fewer or none)."""
        return input_lib.DistributedDataset(self, dataset)

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None
                                          ) -> input_lib.DistributedDataset:
        """Calls `dataset_fn(tf.distribute.InputContext)` for the one input pipeline of this machine; its
        batches are per-replica batches, dealt to the replicas in turn."""
        return input_lib.DistributedDataset(self, dataset_fn(self._input_context()), per_replica=True)

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> PerReplica:
        """`value_fn(tf.distribute.ValueContext)` for each of this worker's replicas, as a `PerReplica`."""
        values = [value_fn(input_lib.ValueContext(i, self.num_replicas_in_sync)) for i in self._local_replicas()]
        return input_lib.per_replica_of(self, [tf.convert_to_tensor(v) for v in values])

    def __repr__(self) -> str:
        return f"<tapejax.distribute.{type(self).__name__} object at {hex(id(self))}>"


class MirroredStrategy(Strategy):
    """Data parallelism over the devices of this machine (`tf.distribute.MirroredStrategy`).

    Variables created in `scope()` hold one array replicated on every device (a `NamedSharding` with
    `PartitionSpec()` over a one-axis `jax.sharding.Mesh`); `run` runs a step on all replicas as one
    `shard_map`.

    Differences from TensorFlow: `devices=None` takes every device of JAX's default backend, CPUs included
    (TF takes the GPUs, or only the first CPU).

    >>> import tapejax as tf
    >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    >>> strategy.num_replicas_in_sync
    1
    """

    def __init__(self, devices: list[Any] | None = None, cross_device_ops: Any = None):
        super().__init__(jax.local_devices() if devices is None else [_device(d) for d in devices])


class OneDeviceStrategy(Strategy):
    """Everything on one device (`tf.distribute.OneDeviceStrategy`)."""

    def __init__(self, device: Any):
        super().__init__([_device(device)])


class _DefaultDistributionStrategy(Strategy):
    """The strategy in effect outside any scope: one replica, the default device, nothing mirrored."""

    def __init__(self):
        super().__init__([jax.local_devices()[0]])

    def _replicate(self, array: Any) -> Any:
        return array

    @contextlib.contextmanager
    def scope(self) -> Iterator[Strategy]:
        yield self  # the default strategy is in effect already

    def _replica_zero(self) -> Any:
        return 0


_DEFAULT: list[_DefaultDistributionStrategy] = []


def default_strategy() -> _DefaultDistributionStrategy:
    if not _DEFAULT:
        _DEFAULT.append(_DefaultDistributionStrategy())
    return _DEFAULT[0]


def _device(spec: Any) -> Any:
    """JAX's device for a TF device string ("/gpu:1", "/device:CPU:0") or a JAX device."""
    if isinstance(spec, jax.Device):
        return spec
    kind, index = devices_lib.parse(spec)
    platform = {"CPU": "cpu", "GPU": "gpu", "TPU": "tpu"}.get(kind or "CPU")
    try:
        found = jax.local_devices(backend=platform)
    except RuntimeError:
        raise ValueError(f"No {kind} devices on this machine for the strategy's device {spec!r}.") from None
    index = index or 0
    if index >= len(found):
        raise ValueError(f"The strategy's device {spec!r} does not exist: this machine has {len(found)} {kind} "
                         "device(s) (for more CPU devices, set XLA_FLAGS=--xla_force_host_platform_device_count=N "
                         "before JAX starts).")
    return found[index]
