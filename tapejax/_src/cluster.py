"""Which workers a multi-worker job has and which one this process is: `TF_CONFIG`, as TF reads it.

`TF_CONFIG` is JSON: `{"cluster": {"worker": ["host:port", ...], "chief": [...]}, "task": {"type": "worker",
"index": 0}}`. The chief is `chief:0` if the cluster has a "chief" job, else `worker:0`. The workers of a
`MultiWorkerMirroredStrategy` are the chief followed by the workers, numbered in that order (TF's task order);
that number is this process's `process_id` in `jax.distributed.initialize`, and the chief's address is where
JAX's coordination service listens. A `TF_CONFIG` without a cluster means one local worker. The checks and
their ValueErrors are TF's (`multi_worker_util._validate_cluster_spec`).
"""

from __future__ import annotations

import json
import os
from typing import Any


class ClusterSpec:
    """The jobs of a cluster and their tasks' addresses (`tf.train.ClusterSpec`, the dict form).

    >>> import tapejax as tf
    >>> tf.train.ClusterSpec({"worker": ["127.0.0.1:2222"]}).as_dict()
    {'worker': ['127.0.0.1:2222']}
    """

    def __init__(self, cluster: dict[str, Any] | ClusterSpec | None):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        self._jobs = {job: list(tasks.values()) if isinstance(tasks, dict) else list(tasks)
                      for job, tasks in (cluster or {}).items()}

    def as_dict(self) -> dict[str, list[str]]:
        return {job: list(tasks) for job, tasks in self._jobs.items()}

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._jobs[job_name])

    def task_address(self, job_name: str, task_index: int) -> str:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        if not 0 <= task_index < len(self._jobs[job_name]):
            raise ValueError(f"No task with index {task_index} in job {job_name!r}")
        return self._jobs[job_name][task_index]

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()})"


class TFConfigClusterResolver:
    """The cluster and this task, read from the `TF_CONFIG` environment variable
    (`tf.distribute.cluster_resolver.TFConfigClusterResolver`); a malformed `TF_CONFIG` raises json's
    `JSONDecodeError` (a ValueError), as in TF.

    >>> import os, tapejax as tf
    >>> os.environ["TF_CONFIG"] = ('{"cluster": {"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]}, '
    ...                            '"task": {"type": "worker", "index": 1}}')
    >>> r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    >>> r.task_type, r.task_id, r.cluster_spec().num_tasks("worker")
    ('worker', 1, 2)
    >>> del os.environ["TF_CONFIG"]
    """

    def __init__(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None,
                 environment: str | None = None):
        config = json.loads(os.environ.get("TF_CONFIG") or "{}")
        task = config.get("task", {})
        self._cluster = ClusterSpec(config.get("cluster"))
        self.task_type = task_type if task_type is not None else task.get("type")
        self.task_id = task_id if task_id is not None else task.get("index")
        self.rpc_layer = rpc_layer if rpc_layer is not None else config.get("rpc_layer")
        self.environment = environment if environment is not None else config.get("environment")

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if not self._cluster:
            return ""
        address = self._cluster.task_address(task_type, task_id)
        rpc_layer = rpc_layer or self.rpc_layer
        return f"{rpc_layer}://{address}" if rpc_layer else address

    def num_accelerators(self, task_type: str | None = None, task_id: int | None = None,
                         config_proto: Any = None) -> dict[str, int]:
        return {}


class SimpleClusterResolver(TFConfigClusterResolver):
    """A cluster and task given directly (`tf.distribute.cluster_resolver.SimpleClusterResolver`)."""

    def __init__(self, cluster_spec: Any, master: str = "", task_type: str | None = None,
                 task_id: int | None = None, environment: str = "", num_accelerators: Any = None,
                 rpc_layer: str | None = None):
        self._cluster = ClusterSpec(cluster_spec)
        self.task_type, self.task_id, self.rpc_layer, self.environment = task_type, task_id, rpc_layer, environment


def validate(cluster: ClusterSpec, task_type: str | None, task_id: int | None) -> None:
    """TF's checks of a multi-worker cluster and this task, with TF's ValueErrors."""
    jobs = cluster.as_dict()
    if task_type is None or task_id is None:
        raise ValueError("When `cluster_spec` is given, you must also specify `task_type` and `task_id`.")
    if task_type not in ("chief", "worker", "evaluator", "ps"):
        raise ValueError(f"Unrecognized task_type: {task_type!r}, valid task types are: \"chief\", \"worker\", "
                         "\"evaluator\" and \"ps\".")
    if len(jobs.get("chief", [])) > 1:
        raise ValueError("There must be at most one 'chief' job.")
    if len(jobs.get("evaluator", [])) > 1:
        raise ValueError("There must be at most one 'evaluator' job.")
    if task_type != "evaluator" and task_type not in jobs:
        raise ValueError(f"`task_type` {task_type!r} not found in cluster_spec.")
    if task_type in jobs and task_id >= len(jobs[task_type]):
        raise ValueError(f"The `task_id` {task_id} exceeds the maximum id of {task_type}.")


def workers(cluster: ClusterSpec) -> list[tuple[str, int]]:
    """The tasks that train, in TF's order: the chief, then the workers."""
    jobs = cluster.as_dict()
    return [("chief", 0)] * len(jobs.get("chief", [])[:1]) + [("worker", i) for i in range(len(jobs.get("worker", [])))]
