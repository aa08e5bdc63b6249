"""MultiWorkerMirroredStrategy's reading of TF_CONFIG (and TPUStrategy on a machine without TPUs), run under either
library (`--lib tensorflow|tapejax`): prints, as JSON, each configuration's outcome (the strategy's replicas and
chief flag, or the exception's type). None of them starts a multi-worker job: each is a single worker or a
configuration TF rejects first."""

from __future__ import annotations

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests.distribute._programs import library, outcomes  # noqa: E402

WORKERS = ["127.0.0.1:1", "127.0.0.1:2"]
CONFIGS = {
    "no_cluster": {"task": {"type": "worker", "index": 0}},
    "empty": {},
    "task_not_in_cluster": {"cluster": {"worker": WORKERS}, "task": {"type": "ps", "index": 0}},
    "index_too_big": {"cluster": {"worker": WORKERS}, "task": {"type": "worker", "index": 2}},
    "two_chiefs": {"cluster": {"chief": WORKERS, "worker": ["127.0.0.1:3"]}, "task": {"type": "worker", "index": 0}},
    "no_task": {"cluster": {"worker": WORKERS}},
    "no_task_type": {"cluster": {"worker": WORKERS}, "task": {"index": 0}},
    "unknown_task_type": {"cluster": {"worker": WORKERS}, "task": {"type": "trainer", "index": 0}},
}


def snippets(tf):
    def strategy(config):
        os.environ["TF_CONFIG"] = config if isinstance(config, str) else json.dumps(config)
        try:
            s = tf.distribute.MultiWorkerMirroredStrategy()
            return [s.num_replicas_in_sync, s.extended.should_checkpoint]
        finally:
            del os.environ["TF_CONFIG"]

    def resolver():
        os.environ["TF_CONFIG"] = json.dumps({"cluster": {"chief": ["127.0.0.1:5"], "worker": WORKERS},
                                              "task": {"type": "worker", "index": 1}})
        try:
            r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
            return [r.task_type, r.task_id, r.cluster_spec().as_dict(), r.master()]
        finally:
            del os.environ["TF_CONFIG"]

    yield "bad_json", lambda: strategy("{not json")
    for name, config in CONFIGS.items():
        yield name, lambda config=config: strategy(config)
    yield "resolver", resolver
    yield "tpu_strategy_without_tpu", lambda: tf.distribute.TPUStrategy()
    yield "tpu_resolver_without_tpu", lambda: tf.distribute.cluster_resolver.TPUClusterResolver()
    yield "cluster_spec", lambda: tf.train.ClusterSpec({"worker": WORKERS}).as_dict()


if __name__ == "__main__":
    print(json.dumps(outcomes(snippets(library(1)), message=True)))
