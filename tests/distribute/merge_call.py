"""`ReplicaContext.merge_call` snippets under either library (`--lib tensorflow|tapejax`) on 4 CPU replicas; prints,
as JSON, each snippet's values (each replica's) or exception type."""

from __future__ import annotations

import json
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests.distribute._programs import library, outcomes  # noqa: E402


def snippets(tf):
    s = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(4)])
    with s.scope():
        total = tf.Variable(0.0)
        dest = tf.Variable(0.0)

    def rid():
        return tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32)

    def local(x):
        return [v.numpy().tolist() for v in s.experimental_local_results(x)]

    def merged(merge_fn, value_fn=lambda: rid() + 1.0, compiled=False, **kw):
        def step():
            return tf.distribute.get_replica_context().merge_call(merge_fn, args=(value_fn(),), **kw)

        return tf.nest.map_structure(local, s.run(tf.function(step) if compiled else step))

    yield "reduce_sum", lambda: merged(lambda st, v: st.reduce("SUM", v, axis=None))
    yield "reduce_mean", lambda: merged(lambda st, v: st.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None))
    yield "reduce_axis", lambda: merged(lambda st, v: st.reduce("SUM", v, axis=0), lambda: tf.ones([2]) * rid())
    yield "reduce_to", lambda: merged(lambda st, v: st.extended.reduce_to("SUM", v, destinations=dest))
    yield "batch_reduce_to", lambda: merged(lambda st, v: st.extended.batch_reduce_to(
        "MEAN", [(v, dest), (v, dest)]))
    yield "per_replica_arithmetic", lambda: merged(lambda st, v: v * 2.0)
    yield "returns_per_replica", lambda: merged(lambda st, v: v)
    yield "returns_mixed", lambda: merged(lambda st, v: (v, st.reduce("SUM", v, axis=None)))
    yield "gather", lambda: merged(lambda st, v: st.gather(v, axis=0), lambda: tf.stack([rid(), rid() * 10.0]))
    yield "local_results", lambda: merged(lambda st, v: tf.add_n(st.experimental_local_results(v)))
    yield "contexts", lambda: merged(lambda st, v: (tf.constant(tf.distribute.in_cross_replica_context()),
                                                    tf.constant(tf.distribute.get_replica_context() is None),
                                                    tf.constant(tf.distribute.get_strategy() is st)))
    yield "kwargs", lambda: merged(lambda st, v, scale: st.reduce("SUM", v, axis=None) * scale,
                                   kwargs={"scale": 3.0})
    yield "in_function", lambda: merged(lambda st, v: st.reduce("SUM", v, axis=None), compiled=True)

    def update():
        merged(lambda st, v: st.extended.update(total, lambda var, t: var.assign_add(t),
                                                args=(st.reduce("SUM", v, axis=None),)))
        return float(total.numpy())

    yield "update_variable", update
    yield "default_context", lambda: float(tf.distribute.get_replica_context().merge_call(
        lambda st, x: x * 2.0, args=(tf.constant(3.0),)))
    yield "one_device", lambda: float(tf.distribute.OneDeviceStrategy("/cpu:0").run(
        lambda: tf.distribute.get_replica_context().merge_call(
            lambda st, x: st.reduce("SUM", x, axis=None), args=(tf.constant(5.0),))))
    yield "reduce_to_plain_sum", lambda: merged(lambda st, v: st.extended.reduce_to("SUM", tf.constant(1.0), dest))


if __name__ == "__main__":
    print(json.dumps(outcomes(snippets(library(4)), message=True)))
