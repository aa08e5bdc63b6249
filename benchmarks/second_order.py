"""Workloads beyond first derivatives: Hessians and Hessian-vector products by nested tapes, a custom gradient."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import tapejax
from benchmarks.harness import block_jax, block_numpy
from benchmarks.workloads import tensorflow


def _two_layer(scale: int):
    """The advanced guide's Hessian example: x [7, 5], a Dense(8) relu... here elu (smooth), then Dense(1)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(7 * scale, 5 * scale)).astype(np.float32)
    w1 = (rng.normal(size=(5 * scale, 8 * scale)) / np.sqrt(5 * scale)).astype(np.float32)
    w2 = (rng.normal(size=(8 * scale, 1)) / np.sqrt(8 * scale)).astype(np.float32)
    return x, w1, w2


def _loss(lib, x, w1, w2):
    elu, total = (jax.nn.elu, jnp.sum) if lib is jnp else (lib.nn.elu, lib.reduce_sum)
    return total((elu(x @ w1) @ w2) ** 2)


def hessian(quick: bool, scale: int = 1):
    """The Hessian of a two-layer network's loss w.r.t. its first kernel, by nested tapes (as TF code does it)."""
    x0, w10, w20 = _two_layer(scale)
    x, w1, w2 = tapejax.constant(x0), tapejax.Variable(w10), tapejax.constant(w20)

    def nested():
        with tapejax.GradientTape() as outer:
            with tapejax.GradientTape() as inner:
                loss = _loss(tapejax, x, w1, w2)
            g = inner.gradient(loss, w1)
        return outer.jacobian(g, w1)

    def one_call():
        with tapejax.GradientTape() as tape:
            loss = _loss(tapejax, x, w1, w2)
        return tape.hessian(loss, w1)

    jitted = jax.jit(jax.hessian(lambda w: _loss(jnp, jnp.asarray(x0), w, jnp.asarray(w20))))
    impls = {
        "tapejax nested tapes": (nested, block_jax),
        "tapejax tape.hessian": (one_call, block_jax),
        "tapejax tf.function(nested tapes)": (tapejax.function(nested), block_jax),
        "jax.jit(jax.hessian)": (functools.partial(jitted, jnp.asarray(w10)), block_jax),
    }
    if tensorflow is not None:
        xt, w1t, w2t = tensorflow.constant(x0), tensorflow.Variable(w10), tensorflow.constant(w20)

        def tf_nested():
            with tensorflow.GradientTape() as outer:
                with tensorflow.GradientTape() as inner:
                    loss = _loss(tensorflow, xt, w1t, w2t)
                g = inner.gradient(loss, w1t)
            return outer.jacobian(g, w1t)

        impls["TensorFlow nested tapes"] = (tf_nested, block_numpy)
        impls["TensorFlow tf.function(nested tapes)"] = (tensorflow.function(tf_nested), block_numpy)
    n = 5 * scale * 8 * scale
    return (f"Hessian of a two-layer loss w.r.t. a [{5 * scale}, {8 * scale}] kernel ({n}x{n})", impls,
            "jax.jit(jax.hessian)", [])


def hvp(quick: bool):
    """A Hessian-vector product: forward over reverse (TF: a ForwardAccumulator around a tape)."""
    x0, w10, w20 = _two_layer(4)
    v0 = np.random.default_rng(4).normal(size=w10.shape).astype(np.float32)
    x, w1, w2, v = tapejax.constant(x0), tapejax.Variable(w10), tapejax.constant(w20), tapejax.constant(v0)

    def accumulator():
        with tapejax.autodiff.ForwardAccumulator(w1, v) as acc:
            with tapejax.GradientTape() as tape:
                loss = _loss(tapejax, x, w1, w2)
            g = tape.gradient(loss, w1)
        return acc.jvp(g)

    def one_call():
        with tapejax.GradientTape() as tape:
            loss = _loss(tapejax, x, w1, w2)
        return tape.hvp(loss, w1, v)

    grad = jax.grad(lambda w: _loss(jnp, jnp.asarray(x0), w, jnp.asarray(w20)))
    jitted = jax.jit(lambda w, t: jax.jvp(grad, (w,), (t,))[1])
    impls = {
        "tapejax ForwardAccumulator(tape)": (accumulator, block_jax),
        "tapejax tape.hvp": (one_call, block_jax),
        "jax.jit(jvp of grad)": (functools.partial(jitted, jnp.asarray(w10), jnp.asarray(v0)), block_jax),
    }
    if tensorflow is not None:
        xt, w1t, w2t, vt = (tensorflow.constant(x0), tensorflow.Variable(w10), tensorflow.constant(w20),
                            tensorflow.constant(v0))

        def tf_accumulator():
            with tensorflow.autodiff.ForwardAccumulator(w1t, vt) as acc:
                with tensorflow.GradientTape() as tape:
                    loss = _loss(tensorflow, xt, w1t, w2t)
                g = tape.gradient(loss, w1t)
            return acc.jvp(g)

        impls["TensorFlow ForwardAccumulator(tape)"] = (tf_accumulator, block_numpy)
    return ("Hessian-vector product, forward over reverse (kernel [20, 32])", impls, "jax.jit(jvp of grad)", [])


def custom_gradient_step(quick: bool):
    """A gradient through a custom-gradient op (the guide's clip_gradients) inside a small network."""
    rng = np.random.default_rng(5)
    x0 = rng.normal(size=(32, 16)).astype(np.float32)
    w0 = (rng.normal(size=(16, 16)) / 4).astype(np.float32)

    def make(lib):
        @lib.custom_gradient
        def clip_gradients(y):
            def backward(dy):
                return lib.clip_by_norm(dy, 0.5)
            return y, backward
        return clip_gradients

    clip = make(tapejax)
    x, w = tapejax.constant(x0), tapejax.Variable(w0)

    def step():
        with tapejax.GradientTape() as tape:
            loss = tapejax.reduce_sum(tapejax.tanh(clip(x @ w)) ** 2)
        return tape.gradient(loss, w)

    @jax.custom_vjp
    def jclip(y):
        return y

    def jclip_bwd(_, dy):
        norm = jnp.sqrt(jnp.sum(dy * dy))
        return (dy * 0.5 / jnp.maximum(norm, 0.5),)

    jclip.defvjp(lambda y: (y, None), jclip_bwd)
    jitted = jax.jit(jax.grad(lambda w_: jnp.sum(jnp.tanh(jclip(jnp.asarray(x0) @ w_)) ** 2)))
    impls = {
        "tapejax eager tape": (step, block_jax),
        "tapejax tf.function": (tapejax.function(step), block_jax),
        "jax.jit(jax.grad), custom_vjp": (functools.partial(jitted, jnp.asarray(w0)), block_jax),
    }
    if tensorflow is not None:
        tclip = make(tensorflow)
        xt, wt = tensorflow.constant(x0), tensorflow.Variable(w0)

        def tf_step():
            with tensorflow.GradientTape() as tape:
                loss = tensorflow.reduce_sum(tensorflow.tanh(tclip(xt @ wt)) ** 2)
            return tape.gradient(loss, wt)

        impls["TensorFlow eager tape"] = (tf_step, block_numpy)
        impls["TensorFlow tf.function"] = (tensorflow.function(tf_step), block_numpy)
    return ("gradient through a tf.custom_gradient op (x [32, 16] @ w [16, 16])", impls,
            "jax.jit(jax.grad), custom_vjp", [])


def _kth_derivative(lib, x, k: int):
    """sin's k-th derivative by k nested tapes, each gradient taken inside the tapes around it (as TF code does)."""
    tapes = [lib.GradientTape() for _ in range(k)]
    for t in tapes:
        t.__enter__()
        t.watch(x)
    y = lib.sin(x)
    for t in reversed(tapes):
        t.__exit__(None, None, None)
        y = t.gradient(y, x)
    return y


def nested_derivative(quick: bool, k: int = 50):
    """The k-th derivative of sin by k nested tapes: its cost must grow linearly in k, as TF's does (issue 16)."""
    x = tapejax.constant(1.0)
    impls = {"tapejax nested tapes": (lambda: _kth_derivative(tapejax, x, k), block_jax)}
    if tensorflow is not None:
        xt = tensorflow.constant(1.0)
        impls["TensorFlow nested tapes"] = (lambda: _kth_derivative(tensorflow, xt, k), block_numpy)
    options = {"repeats": 2 if quick else 5, "warmup": 1 if quick else 3}
    return (f"the {k}th derivative of sin by {k} nested tapes", impls, "TensorFlow nested tapes"
            if tensorflow is not None else "tapejax nested tapes", [], options)


WORKLOADS = {
    "nested_derivative": nested_derivative,
    "hessian": hessian,
    "hessian_3x": functools.partial(hessian, scale=3),
    "hvp": hvp,
    "custom_gradient": custom_gradient_step,
}
