"""Distributed datasets: each global batch of a `tf.data` dataset split over the replicas as TF splits it.

TF's rebatching gives each replica ceil(B / replicas) consecutive examples of a batch of B, the last replicas
fewer or none (a partial batch of 5 over 4 replicas: 2, 2, 1, 0). When B divides evenly, a component becomes
one array `[replicas, B / replicas, ...]` placed with the strategy's split sharding, each device holding its
replica's rows (one host-to-device transfer, no per-replica loop); otherwise its slices are kept one by one,
each replicated on the strategy's devices: `strategy.run` then traces the replicas one by one (sequential.py), a
program that runs on every device. Under MultiWorkerMirroredStrategy each worker feeds its own replicas' rows, so
for such a batch the workers first swap them (exchange.py): every worker then holds every replica's rows and runs
that program on them."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import tapejax as tf
from tapejax._src.tensor import EagerTensor
from tapejax.distribute._src import exchange
from tapejax.distribute._src.values import PerReplica


class InputContext:
    """What a `dataset_fn` of `distribute_datasets_from_function` is told (`tf.distribute.InputContext`)."""

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0, num_replicas_in_sync: int = 1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size / num_replicas_in_sync`; TF's ValueError when it does not divide.

        >>> import tapejax as tf
        >>> tf.distribute.InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(8)
        2
        """
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible by "
                             f"`num_replicas_in_sync` {self.num_replicas_in_sync}")
        return global_batch_size // self.num_replicas_in_sync


class ValueContext:
    """What `experimental_distribute_values_from_function`'s `value_fn` is told."""

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1):
        self.replica_id_in_sync_group = replica_id_in_sync_group
        self.num_replicas_in_sync = num_replicas_in_sync


class DistributedDataset:
    """A dataset whose elements are split over a strategy's replicas (`tf.distribute.DistributedDataset`)."""

    def __init__(self, strategy: Any, dataset: Any, per_replica: bool = False):
        self._strategy = strategy
        self._dataset = dataset
        self._per_replica = per_replica  # distribute_datasets_from_function: batches are per replica already

    def __iter__(self) -> Any:
        n = len(self._strategy._local_replicas())  # this worker's replicas
        it = iter(self._dataset)
        if not self._per_replica:
            for element in it:
                yield tf.nest.map_structure(lambda x: split(self._strategy, x), element)
            return
        if self._strategy._in_multi_worker_mode():
            yield from _from_every_worker(self._strategy, it, n, self._dataset.element_spec)
            return
        while True:
            batches = list(itertools.islice(it, n))
            if not batches:
                return
            yield tf.nest.map_structure(lambda *xs: per_replica_of(self._strategy, list(xs), pad=n), *batches)
            if len(batches) < n:
                return

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec


def split(strategy: Any, x: Any) -> Any:
    """One component of a global batch, split over the replicas as TF splits it."""
    n = strategy.num_replicas_in_sync
    if n == 1:
        return x
    array = np.asarray(x)
    if array.ndim == 0:
        raise ValueError("experimental_distribute_dataset needs batched elements (each component's first "
                         "dimension is split over the replicas); batch the dataset first.")
    b = array.shape[0]
    per = -(-b // n)
    if per * n == b:
        return PerReplica(stacked=EagerTensor(strategy._place_split(array.reshape((n, per) + array.shape[1:]))))
    slices = [array[min(i * per, b):min((i + 1) * per, b)] for i in range(n)]
    if strategy._in_multi_worker_mode():  # each replica's rows from the worker that feeds it
        slices = exchange.rows(strategy, [slices[i] for i in strategy._local_replicas()], [a.shape for a in slices])
    return PerReplica(values=[EagerTensor(strategy._replicate(a)) for a in slices])


def per_replica_of(strategy: Any, values: list[Any], pad: int | None = None) -> PerReplica:
    """Replica i's value is `values[i]` (empty batches of the same shape for missing replicas, up to `pad`); under
    MultiWorkerMirroredStrategy `values` are this worker's replicas' (the workers swap their shapes)."""
    arrays = [np.asarray(v) for v in values]
    if strategy._in_multi_worker_mode():
        shapes = exchange.shapes(strategy, [[a.shape for a in arrays]], [arrays[0].ndim])[0]
        return _component(strategy, arrays, shapes, arrays[0].dtype)
    if pad is not None and len(arrays) < pad:
        arrays += [np.zeros((0,) + arrays[0].shape[1:], arrays[0].dtype)] * (pad - len(arrays))
    if all(a.shape == arrays[0].shape for a in arrays):
        return PerReplica(stacked=EagerTensor(strategy._place_local(np.stack(arrays))))
    return PerReplica(values=[EagerTensor(strategy._replicate(a)) for a in arrays])


def _from_every_worker(strategy: Any, it: Any, n: int, spec: Any) -> Any:
    """`distribute_datasets_from_function`'s steps under MultiWorkerMirroredStrategy: each worker's `n` replicas
    take its pipeline's next batches; the workers swap their batches' shapes each step, and a worker whose
    pipeline ran out gives its replicas empty batches until every worker's has (TF's behaviour)."""
    specs = tf.nest.flatten(spec)
    ranks = [len(s.shape) for s in specs]
    while True:
        batches = [[np.asarray(x) for x in tf.nest.flatten(b)] for b in itertools.islice(it, n)]
        local = [[batches[j][c].shape if j < len(batches) else None for j in range(n)] for c in range(len(specs))]
        every = exchange.shapes(strategy, local, ranks)
        if all(shape is None for shape in every[0]):
            return
        yield tf.nest.pack_sequence_as(spec, [
            _component(strategy, [b[c] for b in batches], every[c], np.dtype(specs[c].dtype.as_numpy_dtype))
            for c in range(len(specs))])


def _component(strategy: Any, arrays: list[np.ndarray], shapes: list[Any], dtype: Any) -> PerReplica:
    """One component of a step under MultiWorkerMirroredStrategy, given this worker's replicas' `arrays` (fewer
    when its pipeline ran out) and every replica's shape (None: no batch, then an empty one)."""
    given = next(s for s in shapes if s is not None)
    shapes = [s if s is not None else (0,) + given[1:] if given else () for s in shapes]
    mine = [shapes[i] for i in strategy._local_replicas()]
    arrays = list(arrays) + [np.zeros(s, dtype) for s in mine[len(arrays):]]
    if all(s == shapes[0] for s in shapes):
        return PerReplica(stacked=EagerTensor(strategy._place_local(np.stack(arrays))))
    return PerReplica(values=[EagerTensor(strategy._replicate(a)) for a in exchange.rows(strategy, arrays, shapes)])
