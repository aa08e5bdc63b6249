"""tf.distribute snippets run under either library (`--lib tensorflow|tapejax`) on 4 CPU replicas; prints, as JSON,
each snippet's values or exception type, for the tests to compare (TF gets 4 logical CPU devices)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests.distribute._programs import library, outcomes  # noqa: E402


def snippets(tf):
    s = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(4)])

    def rid():
        return tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32)

    def local(x):
        return [v.numpy().tolist() for v in s.experimental_local_results(x)]

    def batches(n, b):
        ds = tf.data.Dataset.range(n).map(lambda x: tf.cast(x, tf.float32)).batch(b)
        return [local(x) for x in s.experimental_distribute_dataset(ds)]

    def first(n, b):
        ds = tf.data.Dataset.range(n).map(lambda x: tf.cast(x, tf.float32)).batch(b)
        return next(iter(s.experimental_distribute_dataset(ds)))

    def trained(steps_fn, examples=8):
        with s.scope():
            v = tf.Variable([1.0, -2.0])
            opt = tf.keras.optimizers.SGD(0.5)
            m = tf.keras.metrics.Mean()

        def step(x):
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(tf.reduce_sum(v * v) * x)
            opt.apply_gradients([(tape.gradient(loss, v), v)])
            m.update_state(x)
            return loss

        losses = [steps_fn(lambda x: s.reduce("SUM", s.run(step, args=(x,)), axis=None), first(examples, 8))
                  for _ in range(3)]
        return [float(loss) for loss in losses], v.numpy().tolist(), float(m.result()), int(opt.iterations.numpy())

    yield "split_even", lambda: batches(8, 8)
    yield "split_partial", lambda: batches(10, 8)
    yield "split_5_of_8", lambda: batches(5, 8)
    yield "split_not_divisible", lambda: batches(6, 6)
    yield "num_replicas", lambda: s.num_replicas_in_sync
    yield "replica_ids", lambda: local(s.run(lambda: tf.distribute.get_replica_context().replica_id_in_sync_group))
    yield "run_times_two", lambda: local(s.run(lambda x: x * 2.0 + rid(), args=(first(8, 8),)))
    yield "reduce_sum_none", lambda: s.reduce("SUM", s.run(lambda x: x * 2.0, args=(first(8, 8),)), axis=None
                                              ).numpy().tolist()
    yield "reduce_mean_none", lambda: s.reduce(tf.distribute.ReduceOp.MEAN, s.run(lambda x: x, args=(first(8, 8),)),
                                               axis=None).numpy().tolist()
    yield "reduce_sum_axis0", lambda: float(s.reduce("SUM", s.run(lambda x: x, args=(first(8, 8),)), axis=0))
    yield "reduce_mean_axis0", lambda: float(s.reduce("MEAN", s.run(lambda x: x, args=(first(8, 8),)), axis=0))
    yield "reduce_mean_uneven", lambda: float(s.reduce("MEAN", first(5, 8), axis=0))
    yield "reduce_sum_uneven", lambda: float(s.reduce("SUM", first(5, 8), axis=0))
    yield "gather_uneven", lambda: s.gather(first(5, 8), axis=0).numpy().tolist()
    yield "gather", lambda: s.gather(s.run(lambda x: x + 1.0, args=(first(8, 8),)), axis=0).numpy().tolist()
    yield "reduce_bad_axis", lambda: s.reduce("SUM", s.run(lambda: tf.constant(1.0) + rid()), axis=0)
    yield "reduce_bad_op", lambda: s.reduce("MAX", s.run(rid), axis=None)
    yield "reduce_plain_sum", lambda: s.reduce("SUM", tf.constant(3.0), axis=None)
    yield "all_reduce_sum", lambda: local(s.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", rid())))
    yield "all_reduce_mean", lambda: local(s.run(
        lambda: tf.distribute.get_replica_context().all_reduce("MEAN", rid())))
    yield "all_gather", lambda: local(s.run(
        lambda: tf.distribute.get_replica_context().all_gather(tf.ones([2]) * rid(), axis=0)))
    yield "average_loss", lambda: local(s.run(lambda: tf.nn.compute_average_loss(tf.constant([1.0, 2.0]))))
    yield "average_loss_weighted", lambda: local(s.run(lambda: tf.nn.compute_average_loss(
        tf.constant([1.0, 2.0]), sample_weight=tf.constant([1.0, 3.0]), global_batch_size=10)))
    yield "regularization_loss", lambda: local(s.run(lambda: tf.nn.scale_regularization_loss(tf.constant(8.0))))

    def in_scope(f):
        with s.scope():
            return f()

    yield "average_loss_cross_replica", lambda: in_scope(lambda: tf.nn.compute_average_loss(tf.constant([1.0])))
    yield "contexts", lambda: (tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context(),
                               tf.distribute.get_replica_context() is not None,
                               in_scope(lambda: (tf.distribute.has_strategy(), tf.distribute.in_cross_replica_context(),
                                                 tf.distribute.get_replica_context() is None,
                                                 tf.distribute.get_strategy() is s)))
    yield "default_strategy", lambda: (tf.distribute.get_strategy().num_replicas_in_sync,
                                       float(tf.distribute.get_strategy().reduce("SUM", tf.constant([1.0, 2.0]), 0)))
    yield "per_replica_batch", lambda: tf.distribute.InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(6)
    yield "from_function", lambda: [local(x) for x in s.distribute_datasets_from_function(
        lambda ctx: tf.data.Dataset.range(8).map(lambda x: tf.cast(x, tf.float32)).batch(
            ctx.get_per_replica_batch_size(8)))]
    yield "metric_in_run", lambda: in_scope(lambda: tf.keras.metrics.Mean()) and None
    yield "train_eager", lambda: trained(lambda f, x: f(x))
    yield "train_function", lambda: trained(lambda f, x: tf.function(f)(x))

    # a partial batch split unevenly: 5 examples over 4 replicas are 2, 2, 1, 0
    def ctx():
        return tf.distribute.get_replica_context()

    yield "run_uneven", lambda: local(s.run(lambda x: x * 2.0 + rid(), args=(first(5, 8),)))
    yield "all_reduce_uneven", lambda: local(s.run(lambda x: ctx().all_reduce("SUM", tf.reduce_sum(x) + rid()),
                                                   args=(first(5, 8),)))
    yield "all_gather_uneven", lambda: local(s.run(lambda x: ctx().all_gather(x, axis=0), args=(first(5, 8),)))
    yield "merge_call_uneven", lambda: local(s.run(lambda x: ctx().merge_call(
        lambda st, v: st.reduce("SUM", v, axis=0), args=(x,)) + rid(), args=(first(5, 8),)))
    yield "average_loss_uneven", lambda: local(s.run(lambda x: tf.nn.compute_average_loss(x), args=(first(5, 8),)))
    yield "train_uneven_eager", lambda: trained(lambda f, x: f(x), 5)
    yield "train_uneven_function", lambda: trained(lambda f, x: tf.function(f)(x), 5)

    v_out = tf.Variable(1.0)

    def update_outside():
        with s.scope():
            opt = tf.keras.optimizers.SGD(0.1)

        def step():
            with tf.GradientTape() as tape:
                loss = v_out * 2.0
            opt.apply_gradients([(tape.gradient(loss, v_out), v_out)])
            return loss
        return s.run(step)

    yield "optimizer_variable_outside_scope", update_outside
    yield "mixed_scopes", lambda: in_scope(lambda: tf.distribute.OneDeviceStrategy("/cpu:0").scope().__enter__())


def main() -> None:
    tf = library(4)
    print(json.dumps(outcomes(snippets(tf))))

if __name__ == "__main__":
    main()
