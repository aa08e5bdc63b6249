"""The benchmark workloads. Each returns implementations of one computation, timed side by side.

A workload is `fn(quick) -> (description, {implementation: (callable, block)}, baseline, targets)`, where a target
is (implementation, "<=" or ">=", ratio against the baseline, the issue that set it).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import tapejax
from benchmarks.harness import block_jax, block_numpy

try:  # the optional oracle
    import tensorflow as tensorflow
except ImportError:  # pragma: no cover - depends on the machine
    tensorflow = None


def op_under_tape(quick: bool):
    """One op (sin of a 100-vector) recorded on an active tape, against the same raw jnp call."""
    a = jnp.linspace(-1.0, 1.0, 100, dtype=jnp.float32)
    x = tapejax.constant(np.asarray(a))
    tape = tapejax.GradientTape(persistent=True)
    tape.__enter__()
    tape.watch(x)
    sin = tapejax.math.sin

    def block_and_reset(out):
        # Once per timed batch: keep the trace bounded, or a long loop would hold every input.
        block_jax(out)
        tape.reset()
        tape.watch(x)

    impls = {
        "tapejax (tape active)": (lambda: sin(x), block_and_reset),
        "jnp.sin": (lambda: jnp.sin(a), block_jax),
    }
    if tensorflow is not None:
        xt = tensorflow.constant(np.asarray(a))
        tf_tape = tensorflow.GradientTape(persistent=True)
        tf_tape.__enter__()
        tf_tape.watch(xt)
        impls["TensorFlow (tape active)"] = (lambda: tensorflow.math.sin(xt), block_numpy)
    return ("one op under an active tape (sin, shape (100,))", impls, "jnp.sin",
            [("tapejax (tape active)", "<=", 1.5, 2)])


def _chain_tapejax(w, n_ops):
    def step():
        with tapejax.GradientTape() as tape:
            h = w
            for _ in range(n_ops // 2):
                h = tapejax.tanh(h) * 1.5
            loss = tapejax.reduce_sum(h)
        return tape.gradient(loss, w)

    return step


def chain_gradient(quick: bool, n_ops: int = 10):
    """A chain of 10 elementwise ops on a 64-vector Variable and its gradient, computed in a loop."""
    w0 = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    w = tapejax.Variable(w0)

    def jax_loss(h):
        for _ in range(n_ops // 2):
            h = jnp.tanh(h) * 1.5
        return jnp.sum(h)

    jitted = jax.jit(jax.grad(jax_loss))
    wj = jnp.asarray(w0)
    impls = {
        "tapejax eager tape": (_chain_tapejax(w, n_ops), block_jax),
        "jax.jit(jax.grad)": (functools.partial(jitted, wj), block_jax),
    }
    if tensorflow is not None:
        wt = tensorflow.Variable(w0)

        def tf_step():
            with tensorflow.GradientTape() as tape:
                h = wt
                for _ in range(n_ops // 2):
                    h = tensorflow.tanh(h) * 1.5
                loss = tensorflow.reduce_sum(h)
            return tape.gradient(loss, wt)

        impls["TensorFlow eager tape"] = (tf_step, block_numpy)
    targets = [("TensorFlow eager tape", ">=", 5.0, 2)] if tensorflow is not None else []
    return (f"{n_ops}-op chain + gradient in a loop (shape (64,))", impls, "tapejax eager tape", targets)


WORKLOADS = {
    "op_under_tape": op_under_tape,
    "chain_gradient": chain_gradient,
}
