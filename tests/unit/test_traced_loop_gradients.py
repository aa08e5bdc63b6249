"""A loop traced in a tf.function under a tape runs its forward pass once.

The tape's gradient inside a trace used to replay the recorded ops under `jax.vjp`: XLA's CSE merges that replay
with the ops' first run, but not a loop's, so every traced `tf.scan`, `tf.while_loop` and recurrent layer ran its
forward pass twice per step (one `while` without residuals, one saving them) and compiled it twice. The loop now
keeps the VJP its forward pass was linearized with (capture.run_recorded), and the gradient pulls back through it
(sweep.py). Checked here: the number of `while` loops in the step's program, and the gradients against
`jax.grad` of the same program written in JAX (first and second order) and against the eager tape.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax import keras

RNG = np.random.default_rng(7)
XS = RNG.standard_normal((9, 4, 3)).astype(np.float32)
W0 = (RNG.standard_normal((3, 3)) * 0.5).astype(np.float32)
U0 = (RNG.standard_normal((3, 3)) * 0.5).astype(np.float32)


def _whiles_lowered(monkeypatch) -> list[int]:
    """The number of `while` loops in each program lowered from now on."""
    counts = []
    original = jax.stages.Lowered.compile

    def recording(self, *args, **kwargs):
        counts.append(self.as_text().count("stablehlo.while"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(jax.stages.Lowered, "compile", recording)
    return counts


def _jax_recurrence(w, u, xs, reverse):
    def step(a, x):
        a = jnp.tanh(a @ w + x @ u)
        return a, a

    _, ys = jax.lax.scan(step, jnp.zeros((4, 3), jnp.float32), xs, reverse=reverse)
    return jnp.sum(ys ** 2) + jnp.sum(ys[-1])


def _tf_recurrence(w, u, xs, reverse):
    ys = tf.scan(lambda a, x: tf.tanh(a @ w + x @ u), xs, initializer=tf.zeros((4, 3)), reverse=reverse)
    return tf.reduce_sum(ys ** 2) + tf.reduce_sum(ys[-1])


@pytest.mark.parametrize("reverse", [False, True])
def test_a_traced_scan_runs_forward_once_and_gives_jax_grad(monkeypatch, reverse):
    w, u = tf.Variable(W0), tf.Variable(U0)

    @tf.function
    def step(xs):
        with tf.GradientTape() as tape:
            loss = _tf_recurrence(w, u, xs, reverse)
        return loss, tape.gradient(loss, [w, u])

    whiles = _whiles_lowered(monkeypatch)
    loss, (gw, gu) = step(tf.constant(XS))
    assert whiles == [2]  # the forward pass saving residuals, and the backward pass; before: 3
    want_loss, (want_w, want_u) = jax.value_and_grad(_jax_recurrence, (0, 1))(W0, U0, XS, reverse)
    np.testing.assert_allclose(loss.numpy(), want_loss, rtol=1e-5)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gu.numpy(), want_u, rtol=1e-5, atol=1e-6)


def test_a_traced_while_loop_runs_forward_once_and_gives_jax_grad(monkeypatch):
    w = tf.Variable(W0)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            _, a = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, tf.sin(a @ w)), (0, x),
                                 maximum_iterations=5)
            loss = tf.reduce_sum(a)
        return tape.gradient(loss, w)

    def jax_loss(w, x):
        return jnp.sum(jax.lax.fori_loop(0, 5, lambda i, a: jnp.sin(a @ w), x))

    whiles = _whiles_lowered(monkeypatch)
    grad = step(tf.constant(XS[0]))
    assert whiles == [2]  # before: 3 (the forward pass twice)
    np.testing.assert_allclose(grad.numpy(), jax.grad(jax_loss)(W0, XS[0]), rtol=1e-5, atol=1e-6)


def test_a_loop_in_a_trace_keeps_second_order_gradients():
    # The outer tape differentiates the inner gradient: through the loop's recorded VJP and the recorded gradient
    # call, as jax.grad of jax.grad.
    w, u = tf.Variable(W0), tf.Variable(U0)

    @tf.function
    def step(xs):
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                loss = _tf_recurrence(w, u, xs, False)
            gw = inner.gradient(loss, w)
            penalty = tf.reduce_sum(gw ** 2)
        return outer.gradient(penalty, [w, u])

    def jax_penalty(w, u, xs):
        return jnp.sum(jax.grad(_jax_recurrence)(w, u, xs, False) ** 2)

    got = step(tf.constant(XS))
    want = jax.grad(jax_penalty, (0, 1))(W0, U0, XS)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g.numpy(), h, rtol=2e-4, atol=1e-5)


def test_a_persistent_tape_reuses_the_loops_vjp_for_each_gradient():
    w, u = tf.Variable(W0), tf.Variable(U0)

    @tf.function
    def step(xs):
        with tf.GradientTape(persistent=True) as tape:
            loss = _tf_recurrence(w, u, xs, False)
            other = tf.reduce_sum(tf.scan(lambda a, x: a + x @ u, xs, initializer=tf.zeros((4, 3))))
        return tape.gradient(loss, w), tape.gradient(other, u), tape.gradient([loss, other], u)

    gw, gu_other, gu_both = step(tf.constant(XS))
    want_w, want_u = jax.grad(_jax_recurrence, (0, 1))(W0, U0, XS, False)
    want_other = jax.grad(lambda u: jnp.sum(jax.lax.scan(lambda a, x: (a + x @ u, a + x @ u),
                                                         jnp.zeros((4, 3)), XS)[1]))(U0)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gu_other.numpy(), want_other, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gu_both.numpy(), want_u + want_other, rtol=1e-5, atol=1e-5)


def test_a_bidirectional_lstm_step_runs_each_direction_forward_once(monkeypatch):
    x = tf.constant(RNG.standard_normal((8, 12, 5)).astype(np.float32))
    y = tf.constant(RNG.standard_normal((8, 1)).astype(np.float32))
    model = keras.Sequential([keras.layers.Bidirectional(keras.layers.LSTM(6)), keras.layers.Dense(1)])
    model(x)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        return loss, tape.gradient(loss, model.trainable_variables)

    eager_loss, eager_grads = step(x, y)
    whiles = _whiles_lowered(monkeypatch)
    loss, grads = tf.function(step)(x, y)
    assert whiles == [4]  # each direction's forward and backward pass; before: 6
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-6)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def _stacked_loop_operands(text: str, steps: int) -> int:
    """How many operands of the program's first `while` loop hold one value per step (leading axis `steps`)."""
    signature = text.split("stablehlo.while", 1)[1].split("{", 1)[0]
    return signature.count(f"tensor<{steps}x")


@pytest.mark.parametrize(("layer", "most"), [("LSTM", 4), ("GRU", 3), ("SimpleRNN", 3)])
def test_a_recurrent_layers_forward_loop_saves_its_matmuls_and_states_only(monkeypatch, layer, most):
    # The forward loop's per-step operands: the projected inputs, the recurrent matmul's outputs and the carried
    # states (loops.recurrence: jax.checkpoint with dots_saveable). JAX's own linearization of the cell saved 13
    # values per LSTM step; the elementwise gates are recomputed in the backward loop instead.
    x = tf.constant(RNG.standard_normal((8, 12, 5)).astype(np.float32))
    rnn = getattr(keras.layers, layer)(6)
    rnn(x)

    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(rnn(x) ** 2)
        return tape.gradient(loss, rnn.trainable_variables)

    eager = step(x)
    texts = []
    original = jax.stages.Lowered.compile
    monkeypatch.setattr(jax.stages.Lowered, "compile",
                        lambda self, *a, **k: texts.append(self.as_text()) or original(self, *a, **k))
    traced = tf.function(step)(x)
    assert len(texts) == 1 and texts[0].count("stablehlo.while") == 2
    assert _stacked_loop_operands(texts[0], 12) <= most
    for g, e in zip(traced, eager):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)
