"""A partial batch split unevenly under MultiWorkerMirroredStrategy, run as one worker (configured by TF_CONFIG)
under either library (`--lib tensorflow|tapejax`): prints, as JSON, what this worker sees of each step's replicas
(`experimental_local_results`), and the cross-replica `reduce` and `gather` of a step's results. 13 examples in
global batches of 8 over 2 one-replica workers: the last 5 split 3, 2; `distribute_datasets_from_function` where
worker 1's pipeline runs out a step before worker 0's; `experimental_distribute_values_from_function` with values of
a different shape on each replica."""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main(tf) -> dict:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    dataset = tf.data.Dataset.range(13).map(lambda i: tf.cast(i, tf.float32)).batch(8)
    split, steps = [], []
    for x in strategy.experimental_distribute_dataset(dataset):
        split.append([v.numpy().tolist() for v in strategy.experimental_local_results(x)])
        sums = strategy.run(lambda t: tf.reduce_sum(t) + 1000.0 * tf.cast(tf.shape(t)[0], tf.float32), args=(x,))
        steps.append({"local": [float(v) for v in strategy.experimental_local_results(sums)],
                      "sum": float(strategy.reduce("SUM", sums, axis=None)),
                      "mean": float(strategy.reduce("MEAN", x, axis=0)),
                      "gather": strategy.gather(x, axis=0).numpy().tolist()})

    def dataset_fn(context):  # worker 0: 5 examples, worker 1: 4; per-replica batches of 4
        start = 100 * context.input_pipeline_id
        return tf.data.Dataset.range(start, start + 5 - context.input_pipeline_id).batch(
            context.get_per_replica_batch_size(8))

    from_function = [[v.numpy().tolist() for v in strategy.experimental_local_results(x)]
                     for x in strategy.distribute_datasets_from_function(dataset_fn)]
    # values of each replica's own shape: replica i gets i + 1 copies of i + 1
    values = strategy.experimental_distribute_values_from_function(lambda context: tf.fill(
        [context.replica_id_in_sync_group + 1], tf.cast(context.replica_id_in_sync_group, tf.float32) + 1.0))
    doubled = strategy.run(lambda v: 2.0 * v, args=(values,))
    return {"split": split, "steps": steps, "from_function": from_function,
            "values": {"local": [v.numpy().tolist() for v in strategy.experimental_local_results(doubled)],
                       "gather": strategy.gather(doubled, axis=0).numpy().tolist(),
                       "sum": float(strategy.reduce("SUM", values, axis=0))}}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="tapejax")
    if parser.parse_args().lib == "tensorflow":
        import tensorflow as tf
    else:
        import tapejax as tf
    print(json.dumps(main(tf)), flush=True)
