"""JAX interop workloads (issue 24): a TF-style training step exported by `tapejax.to_jax` and jitted by the
user, against the same step written in JAX with optax.

The step is workloads.mlp_step's (softmax cross-entropy of a relu MLP, Adam): the tapejax version is TF code — a
tape, `tf.keras.optimizers.Adam.apply_gradients` on tf.Variables — turned into `(state, x, y) -> (new_state,
loss)` by `to_jax` and run under `jax.jit`, its state (weights, Adam's slots, iterations) threaded through the
calls by the caller as a JAX program threads its parameters and optimizer state.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

import tapejax
from benchmarks.harness import block_jax
from benchmarks.workloads import _mlp_data, _mlp_loss


def to_jax_step(quick: bool, sizes: tuple[int, ...] = (64, 256, 256, 10), batch: int = 128):
    """`jax.jit(tapejax.to_jax(step))` of an Adam MLP step vs the step in JAX + optax (target <= 1.05x)."""
    import optax

    x0, onehot0, params0 = _mlp_data(sizes, batch)
    variables = [tapejax.Variable(p) for p in params0]
    opt = tapejax.keras.optimizers.Adam(1e-3)

    def step(x, onehot):
        with tapejax.GradientTape() as tape:
            loss = _mlp_loss(tapejax, variables, x, onehot)
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    xj, oj = jnp.asarray(x0), jnp.asarray(onehot0)
    pure = tapejax.to_jax(step)
    # a copy: the Variables keep theirs (the tf.function row below trains them)
    exported = {"state": jax.tree_util.tree_map(jnp.copy, tapejax.variables_of(pure, xj, oj))}
    jitted = jax.jit(pure)

    def tapejax_step():
        exported["state"], loss = jitted(exported["state"], xj, oj)
        return loss

    adam = optax.adam(1e-3, eps=1e-7)  # Keras's default epsilon

    @jax.jit
    def jax_step(params, state, x, onehot):
        loss, grads = jax.value_and_grad(lambda p: _mlp_loss(jnp, p, x, onehot))(params)
        updates, state = adam.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    holder = {"params": [jnp.asarray(p) for p in params0]}
    holder["state"] = adam.init(holder["params"])

    def pure_jax():
        holder["params"], holder["state"], loss = jax_step(holder["params"], holder["state"], xj, oj)
        return loss

    x, onehot = tapejax.constant(x0), tapejax.constant(onehot0)
    impls = {
        "jax.jit(tapejax.to_jax(step))": (tapejax_step, block_jax),
        "tapejax tf.function(step)": (functools.partial(tapejax.function(step), x, onehot), block_jax),
        "jax.jit(value_and_grad) + optax": (pure_jax, block_jax),
    }
    issue_size = sizes == (64, 256, 256, 10) and batch == 128
    targets = ([("jax.jit(tapejax.to_jax(step))", "jax.jit(value_and_grad) + optax", "<=", 1.05, 24)]
               if issue_size else [])
    layers = "-".join(map(str, sizes))
    return (f"to_jax: MLP training step, Adam (batch {batch}, layers {layers})", impls,
            "jax.jit(value_and_grad) + optax", targets)


WORKLOADS = {
    "to_jax_step": to_jax_step,
    "to_jax_step_small": functools.partial(to_jax_step, sizes=(32, 64, 64, 10), batch=32),
}
