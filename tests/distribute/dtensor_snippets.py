"""tf.experimental.dtensor snippets run under either library (`--lib tensorflow|tapejax`) on 8 CPU devices; prints,
as JSON, each snippet's values or exception type (TF gets 8 logical CPU devices), for
tests/distribute/test_dtensor.py and tests/compat/test_dtensor_vs_tf.py."""

from __future__ import annotations

import json
import os

import numpy as np

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from tests.distribute._programs import library  # noqa: E402
from tests.distribute._programs import outcomes as run_outcomes  # noqa: E402


def snippets(tf):
    dtensor = tf.experimental.dtensor
    mesh = dtensor.create_mesh([("batch", 4), ("model", 2)], device_type="CPU")
    rows = dtensor.Layout(["batch", dtensor.UNSHARDED], mesh)
    cols = dtensor.Layout([dtensor.UNSHARDED, "model"], mesh)
    x = tf.reshape(tf.range(16.0), (8, 2))

    def specs(t):
        return dtensor.fetch_layout(t).sharding_specs

    def parts(t):
        return [p.numpy().tolist() for p in dtensor.unpack(t)]

    def placed(layout):
        return dtensor.relayout(dtensor.copy_to_mesh(x, dtensor.Layout.replicated(mesh, 2)), layout)

    yield "constants", lambda: [dtensor.UNSHARDED, dtensor.MATCH]
    yield "mesh", lambda: [mesh.to_string(), repr(mesh), mesh.dim_names, list(mesh.shape()), mesh.size,
                           mesh.device_type(), mesh.num_local_devices(), mesh.local_devices(), mesh.dim_size("model"),
                           mesh.contains_dim("batch"), mesh.contains_dim("x")]
    yield "mesh_default", lambda: dtensor.create_mesh(device_type="CPU").to_string()
    yield "mesh_dict", lambda: dtensor.create_mesh({"a": 8}, device_type="CPU").dim_names
    yield "mesh_devices", lambda: dtensor.create_mesh([("x", 2)], devices=["CPU:2", "CPU:3"]).local_devices()
    yield "mesh_from_string", lambda: dtensor.Mesh.from_string(mesh.to_string()) == mesh
    yield "mesh_too_big", lambda: dtensor.create_mesh([("x", 16)], device_type="CPU")
    yield "mesh_too_small", lambda: dtensor.create_mesh([("x", 4)], device_type="CPU")
    yield "devices", lambda: [dtensor.num_local_devices("CPU"), dtensor.num_global_devices("CPU"),
                              [str(d) for d in dtensor.local_devices("CPU")][:0]]
    yield "layout", lambda: [rows.to_string(), repr(rows), str(rows), rows.sharding_specs, rows.rank,
                             rows.num_shards(0), rows.num_shards(1), rows.is_fully_replicated()]
    yield "layout_scalar", lambda: dtensor.Layout([], mesh).to_string()
    yield "layout_batch_sharded", lambda: [dtensor.Layout.batch_sharded(mesh, "batch", rank=3).sharding_specs,
                                           dtensor.Layout.batch_sharded(mesh, "model", 2, axis=1).sharding_specs]
    yield "layout_replicated", lambda: [dtensor.Layout.replicated(mesh, rank=2).sharding_specs,
                                        dtensor.Layout.replicated(mesh, 2).is_fully_replicated()]
    yield "layout_inner_sharded", lambda: dtensor.Layout.inner_sharded(mesh, "model", 3).sharding_specs
    yield "layout_delete", lambda: rows.delete([0]).sharding_specs
    yield "layout_equal", lambda: [rows == dtensor.Layout(["batch", "unsharded"], mesh), rows == cols,
                                   hash(rows) == hash(dtensor.Layout(["batch", "unsharded"], mesh))]
    yield "layout_from_string", lambda: dtensor.Layout.from_string(rows.to_string()) == rows
    yield "layout_match", lambda: dtensor.Layout([dtensor.MATCH, "batch"], mesh).sharding_specs
    yield "layout_bad_dim", lambda: dtensor.Layout(["y", dtensor.UNSHARDED], mesh)
    yield "layout_repeated_dim", lambda: dtensor.Layout(["batch", "batch"], mesh)
    yield "layout_not_a_mesh", lambda: dtensor.Layout(["batch"], "mesh")
    yield "batch_sharded_bad_dim", lambda: dtensor.Layout.batch_sharded(mesh, "q", rank=2)
    yield "call_with_layout", lambda: (lambda t: [specs(t), t.shape.as_list(), parts(t)])(
        dtensor.call_with_layout(tf.ones, rows, shape=(8, 2)))
    yield "call_with_layout_rank", lambda: dtensor.call_with_layout(tf.ones, rows, shape=(8,))
    yield "call_with_layout_indivisible", lambda: dtensor.call_with_layout(tf.ones, rows, shape=(6, 2))
    yield "copy_to_mesh", lambda: specs(dtensor.copy_to_mesh(x, dtensor.Layout.replicated(mesh, 2)))
    yield "relayout", lambda: [specs(placed(rows)), parts(placed(rows)), specs(placed(cols)), parts(placed(cols))]
    yield "relayout_match", lambda: specs(dtensor.relayout(placed(rows), dtensor.Layout([dtensor.MATCH, "model"],
                                                                                       mesh)))
    yield "relayout_rank", lambda: dtensor.relayout(placed(rows), dtensor.Layout(["batch"], mesh))
    yield "pack_unpack", lambda: (lambda t: [specs(t), t.shape.as_list(), parts(t) == parts(placed(rows))])(
        dtensor.pack(dtensor.unpack(placed(rows)), rows))
    yield "pack_shape", lambda: dtensor.pack([tf.ones((3, 2)) * i for i in range(8)], rows).shape.as_list()
    yield "pack_replicated_scalar", lambda: dtensor.fetch_layout(
        dtensor.pack([tf.constant(1.0)] * 8, dtensor.Layout.replicated(mesh, 0))).rank
    yield "pack_wrong_count", lambda: dtensor.pack(dtensor.unpack(placed(rows))[:4], rows)
    yield "pack_wrong_rank", lambda: dtensor.pack([tf.ones((2,))] * 8, rows)
    yield "unpack_plain", lambda: dtensor.unpack(x)
    yield "fetch_plain", lambda: dtensor.fetch_layout(x)
    yield "fetch_python", lambda: dtensor.fetch_layout(3.0)
    yield "dvariable", lambda: (lambda v: [specs(v), v.shape.as_list(), parts(v)])(
        dtensor.DVariable(placed(cols)).read_value())
    yield "dvariable_plain", lambda: dtensor.DVariable(tf.ones((2,)))
    yield "propagation", lambda: [specs(placed(rows) * 2.0), specs(tf.reduce_sum(placed(rows), 0)),
                                  specs(tf.reduce_sum(placed(rows))), specs(tf.reduce_sum(placed(rows), 1)),
                                  specs(tf.matmul(placed(rows), dtensor.call_with_layout(
                                      tf.ones, dtensor.Layout([dtensor.UNSHARDED, "model"], mesh), shape=(2, 4))))]
    yield "relayout_gradient", lambda: relayout_gradient(tf, rows)
    yield "train_unsharded", lambda: train(tf, None, compiled=False)
    yield "train_eager", lambda: train(tf, mesh, compiled=False)
    yield "train_function", lambda: train(tf, mesh, compiled=True)


def data(n=16):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    return x, (x @ np.array([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]], np.float32) + 0.25).astype(np.float32)


def relayout_gradient(tf, layout):
    dtensor = tf.experimental.dtensor
    x = dtensor.copy_to_mesh(tf.reshape(tf.range(16.0), (8, 2)), dtensor.Layout.replicated(layout.mesh, 2))
    with tf.GradientTape() as tape:
        tape.watch(x)
        r = dtensor.relayout(x, layout)
        loss = tf.reduce_sum(r * r)
    return tape.gradient(loss, x).numpy().tolist()


def train(tf, mesh, compiled, steps=4):
    """A linear model on DVariables: weights split by output column over "model", data by rows over "batch".
    Returns the losses, the final weights and the variables' layouts after training. With `mesh` None, the same
    loop on plain variables and tensors (the unsharded run)."""
    dtensor = tf.experimental.dtensor
    x, y = data()
    if mesh is None:
        return _train_plain(tf, x, y, steps)
    w = dtensor.DVariable(dtensor.call_with_layout(tf.ones, dtensor.Layout([dtensor.UNSHARDED, "model"], mesh),
                                                   shape=(3, 2)) * 0.1)
    b = dtensor.DVariable(dtensor.call_with_layout(tf.zeros, dtensor.Layout(["model"], mesh), shape=(2,)))
    xs = dtensor.copy_to_mesh(x, dtensor.Layout.batch_sharded(mesh, "batch", 2))
    ys = dtensor.copy_to_mesh(y, dtensor.Layout(["batch", "model"], mesh))

    def step(xb, yb):
        with tf.GradientTape() as tape:
            d = tf.matmul(xb, w) + b - yb
            loss = tf.reduce_sum(d * d) / 32.0
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    if compiled:
        step = tf.function(step)
    losses = [float(step(xs, ys)) for _ in range(steps)]

    def value(v):  # TF copies only a replicated DTensor to the host
        return dtensor.relayout(v, dtensor.Layout.replicated(mesh, len(v.shape))).numpy().tolist()

    return [losses, value(w), value(b), dtensor.fetch_layout(w).sharding_specs, dtensor.fetch_layout(b).sharding_specs]


def _train_plain(tf, x, y, steps):
    w, b = tf.Variable(tf.ones((3, 2)) * 0.1), tf.Variable(tf.zeros((2,)))
    losses = []
    for _ in range(steps):
        with tf.GradientTape() as tape:
            d = tf.matmul(x, w) + b - y
            loss = tf.reduce_sum(d * d) / 32.0
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        losses.append(float(loss))
    return [losses, w.numpy().tolist(), b.numpy().tolist()]


def main() -> None:
    tf = library(8)
    print(json.dumps(run_outcomes(snippets(tf), message=True)))

if __name__ == "__main__":
    main()
