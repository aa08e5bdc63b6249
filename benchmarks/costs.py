"""What a step costs before it is fast (compiling it) and what a persistent tape holds (memory)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import tapejax
from benchmarks.harness import block_jax, block_numpy
from benchmarks.workloads import _mlp_data, _mlp_loss, tensorflow


def compile_cost(quick: bool):
    """The first call of a freshly made MLP gradient step (trace + compile), against pure JAX's."""
    x0, onehot0, params0 = _mlp_data((64, 256, 256, 10), 128)
    variables = [tapejax.Variable(p) for p in params0]
    x, onehot = tapejax.constant(x0), tapejax.constant(onehot0)

    def step(x, onehot):
        with tapejax.GradientTape() as tape:
            loss = _mlp_loss(tapejax, variables, x, onehot)
        return tape.gradient(loss, variables)

    def fresh_tapejax():
        return tapejax.function(step)(x, onehot)  # a new Function: traced and compiled on this call

    params, xj, oj = [jnp.asarray(p) for p in params0], jnp.asarray(x0), jnp.asarray(onehot0)

    def fresh_jax():
        return jax.jit(jax.grad(lambda p: _mlp_loss(jnp, p, xj, oj)))(params)

    impls = {"tapejax tf.function, first call": (fresh_tapejax, block_jax),
             "jax.jit(jax.grad), first call": (fresh_jax, block_jax)}
    if tensorflow is not None:
        tvars = [tensorflow.Variable(p) for p in params0]
        xt, ot = tensorflow.constant(x0), tensorflow.constant(onehot0)

        def tf_step(x, onehot):
            with tensorflow.GradientTape() as tape:
                loss = _mlp_loss(tensorflow, tvars, x, onehot)
            return tape.gradient(loss, tvars)

        impls["TensorFlow tf.function, first call"] = (lambda: tensorflow.function(tf_step)(xt, ot), block_numpy)
    options = {"repeats": 2 if quick else 5, "warmup": 1}
    return ("first call of a new MLP gradient step (trace + compile; steady state: see mlp_step)", impls,
            "jax.jit(jax.grad), first call", [], options)


def tape_memory(quick: bool) -> list[str]:
    """Device memory a persistent tape holds after N recorded steps of `h = tanh(h @ w)` ([128, 256] @ [256,
    256]): the arrays alive while the tape is, minus those alive without it; after recording (deferred ops hold
    no values yet) and after a first gradient (a first-seen structure computes every value, op by op, and the
    persistent tape keeps them, as TF's does)."""
    rng = np.random.default_rng(6)
    w = tapejax.Variable((rng.normal(size=(256, 256)) / 16).astype(np.float32))
    h0 = tapejax.constant(rng.normal(size=(128, 256)).astype(np.float32))
    rows = ["| steps recorded | held after recording | after a first gradient | per step | one activation |",
            "|---:|---:|---:|---:|---:|"]
    for n in (10, 100) if quick else (10, 100, 1000):
        jax.block_until_ready(h0.value)
        before = sum(a.nbytes for a in jax.live_arrays())
        with tapejax.GradientTape(persistent=True) as tape:
            h = h0
            for _ in range(n):
                h = tapejax.tanh(h @ w)
        recorded = sum(a.nbytes for a in jax.live_arrays()) - before
        grad = tape.gradient(h, w)
        jax.block_until_ready(grad.value)
        del grad
        held = sum(a.nbytes for a in jax.live_arrays()) - before
        rows.append(f"| {n} | {recorded / 2**20:,.1f} MiB | {held / 2**20:,.1f} MiB | {held / n / 1024:,.0f} KiB "
                    f"| {128 * 256 * 4 / 1024:,.0f} KiB |")
        del tape, h
    return rows


WORKLOADS = {"compile_cost": compile_cost}
