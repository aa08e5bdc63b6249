"""Under `MultiWorkerMirroredStrategy`: every replica's rows of a batch split unevenly, on every worker.

A partial batch split unevenly (13 examples in batches of 8 over 2 replicas: the last 5 are 3 and 2) runs as one
program that traces the replicas one after another (sequential.py) and computes all of them on every device: a
replicated computation. Each worker holds only its own replicas' rows (TF's DATA sharding, or the batches of its
own `distribute_datasets_from_function` pipeline), so before that program the workers swap them: each pads its
replicas' arrays to the largest replica's shape, the padded arrays become one global array over the strategy's mesh
(`jax.make_array_from_process_local_data`) copied to every device by one compiled identity with a replicated
output sharding (an all-gather across the processes), and every worker cuts each replica's rows back to its shape.

Where a worker cannot know the others' shapes (a `dataset_fn`'s batches, `value_fn`'s values), the shapes travel the
same way first, one small int32 array per step, with whether each replica got a batch at all: as in TF, a worker
whose pipeline ran out gives its replicas empty batches until every worker's has.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def everywhere(strategy: Any, local: np.ndarray) -> np.ndarray:
    """`local`, this worker's replicas' values stacked `[local replicas, ...]` (one shape on every worker), as
    every replica's `[replicas, ...]`, in replica order, on every worker."""
    return np.asarray(strategy._to_replicated(strategy._place_local(local)))


def shapes(strategy: Any, local: list[list[tuple[int, ...] | None]], ranks: list[int]
           ) -> list[list[tuple[int, ...] | None]]:
    """For each component (of rank `ranks[c]`), every replica's shape (None: that replica got no batch), given
    this worker's replicas' in `local[c]`."""
    width = sum(1 + r for r in ranks)
    table = np.zeros((len(local[0]) if local else 0, width), np.int32)
    for j in range(table.shape[0]):
        row = []
        for component, rank in zip(local, ranks):
            shape = component[j]
            row += [0] * (1 + rank) if shape is None else [1, *shape]
        table[j] = row
    every = everywhere(strategy, table)
    out: list[list[tuple[int, ...] | None]] = []
    start = 0
    for rank in ranks:
        columns = every[:, start:start + 1 + rank]
        out.append([tuple(int(d) for d in row[1:]) if row[0] else None for row in columns])
        start += 1 + rank
    return out


def rows(strategy: Any, local: list[np.ndarray], shapes_: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Every replica's array, on every worker: `local` holds this worker's replicas' arrays and `shapes_` every
    replica's shape (the same list on every worker); padded to the largest shape for the swap, then cut back."""
    biggest = tuple(max(dims) for dims in zip(*shapes_))
    padded = np.stack([np.pad(a, [(0, m - d) for d, m in zip(a.shape, biggest)]) for a in local])
    every = everywhere(strategy, padded)
    return [every[i][tuple(slice(0, d) for d in shape)] for i, shape in enumerate(shapes_)]
