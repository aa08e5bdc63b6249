"""Deferred forward (deferred.py): recorded ops compute their values later, and the values are the eager ones."""

from __future__ import annotations

import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import deferred, executables
from tapejax._src.deferred import Pending
from tapejax._src.tensor import EagerTensor


def _chain(h):
    for i in range(6):
        h = tf.tanh(h) if i % 2 == 0 else h * 1.5
    return h


def _chain_jnp(h):
    for i in range(6):
        h = jnp.tanh(h) if i % 2 == 0 else h * np.float32(1.5)
    return h


W0 = np.linspace(-0.5, 1.0, 16, dtype=np.float32)


def test_a_recorded_op_knows_its_shape_and_dtype_before_its_value():
    x = tf.Variable(np.ones((3, 4), np.float32))
    with tf.GradientTape():
        y = tf.reduce_sum(x * 2.0, axis=1)
    assert type(deferred.raw(y)) is Pending
    assert y.shape == (3,) and y.dtype == tf.float32 and y.ndim == 1
    assert type(deferred.raw(y)) is Pending  # asking for the shape computed nothing
    assert type(y).__name__ == "EagerTensor"  # as TF names it
    np.testing.assert_array_equal(y.numpy(), np.full(3, 8.0, np.float32))
    assert type(y) is EagerTensor  # once read, a plain tensor


def test_ops_off_the_tape_are_not_deferred():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape():
        y = x * 2.0  # x is not watched: nothing records this op
    assert type(y) is EagerTensor


def test_values_read_op_by_op_equal_the_eager_values():
    w = tf.Variable(W0)
    with tf.GradientTape():
        y = _chain(w)
    expected = _chain(tf.constant(W0))  # no tape: computed eagerly
    np.testing.assert_array_equal(y.numpy(), expected.numpy())


def test_a_repeated_gradient_fills_live_values_from_its_own_executable():
    w = tf.Variable(W0)
    for step in range(3):  # the structure repeats: the second and third gradients run the fused executable
        with tf.GradientTape() as tape:
            h = _chain(w)
            loss = tf.reduce_sum(h)
        grad = tape.gradient(loss, w)
        if step:  # filled in by the gradient's executable, without an op-by-op computation
            assert type(deferred.raw(loss)) is Pending and deferred.raw(loss).app.values is not None
        np.testing.assert_allclose(loss.numpy(), np.sum(_chain_jnp(W0)), rtol=1e-6)
        np.testing.assert_allclose(h.numpy(), _chain_jnp(W0), rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), np.asarray(jnp.ones(16) @ _jac(W0)), rtol=1e-5)


def _jac(w):
    import jax

    return jax.jacrev(_chain_jnp)(jnp.asarray(w))


def test_a_dead_intermediate_is_not_an_output_of_the_executable():
    w = tf.Variable(W0)
    executables.CACHE.clear()
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(_chain(w))  # the chain's tensors die inside _chain
        tape.gradient(loss, w)
    (lowered,) = executables.CACHE._items.values()
    (compiled,) = [e for e in lowered._compiled.values() if e]
    assert list(compiled) == [(len(lowered.program.steps) - 1,)]  # it returns only the loss's value


def test_a_shape_error_raises_when_the_op_is_called():
    x = tf.Variable(np.ones((2, 3), np.float32))
    with tf.GradientTape():
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.matmul(x, tf.ones((4, 5)))


def test_a_long_deferred_chain_is_computed_without_recursion():
    x = tf.Variable(1.0)
    with tf.GradientTape():
        h = x
        for _ in range(5000):
            h = h * 1.0001
    np.testing.assert_allclose(h.numpy(), 1.0001 ** 5000, rtol=1e-3)


def test_an_op_that_is_not_recorded_computes_its_deferred_input():
    x = tf.Variable([3.0, 1.0, 2.0])
    with tf.GradientTape():
        y = x * 2.0
        i = tf.argmax(y)  # not differentiable: runs eagerly, so y is computed
    assert int(i) == 0 and deferred.raw(y).app.values is not None


def test_a_persistent_tape_answers_twice_and_values_stay_right():
    w = tf.Variable(W0)
    results = []
    for _ in range(2):
        with tf.GradientTape(persistent=True) as tape:
            h = _chain(w)
            loss = tf.reduce_sum(h)
        results.append((tape.gradient(loss, w).numpy(), tape.gradient(h, w).numpy(), loss.numpy()))
    for first, second in zip(results[0], results[1]):
        np.testing.assert_allclose(first, second, rtol=1e-6)


def test_a_deferred_value_is_freed_with_its_tensor():
    x = tf.Variable(W0)
    with tf.GradientTape() as tape:
        y = x * 2.0
    app = deferred.raw(y).app
    assert app.wanted
    del y
    gc.collect()
    assert not app.wanted  # nobody can read it: a fused executable would not return it
    del tape


def test_an_op_whose_check_reads_only_shapes_keeps_its_input_deferred():
    # `/` and `**` check dtypes in Python (TF's TypeError, InvalidArgumentError): a loss ending in `/ n` or `** 2`
    # must not force the forward pass before it to run op by op.
    x = tf.Variable(W0)
    with tf.GradientTape() as tape:
        h = _chain(x)
        y = tf.nn.bias_add(tf.reshape((h / 3.0) ** 2, [1, -1]), tf.ones([W0.size]))
        loss = tf.reduce_sum(y) / 2.0
    assert deferred.raw(h).app.values is None  # nothing computed yet
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), jax.grad(
        lambda w: jnp.sum((_chain_jnp(w) / 3.0) ** 2 + 1.0) / 2.0)(jnp.asarray(W0)), rtol=1e-5)


def test_an_abstract_check_still_raises_on_deferred_inputs():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape():
        y = tf.sin(x)
        with pytest.raises(TypeError, match="must have the same dtype"):
            y / tf.constant(3.0, tf.float64)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Must provide as many biases"):
            tf.nn.bias_add(tf.reshape(y, [1, 2]), tf.ones([3]))
    assert deferred.raw(y).app.values is None


def test_an_op_without_tensor_arguments_under_a_tape_runs_at_once():
    from tapejax._src import dispatch, registry

    ones = registry.OpDef("test.ones", lambda: jnp.ones(2, jnp.float32))
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = dispatch.apply(ones, (), {})
        z = x * 2.0
    assert type(y) is EagerTensor and y.numpy().tolist() == [1.0, 1.0]
    assert len(tape._tape.entries) == 1  # only x * 2.0: nothing to follow in an op without inputs
    assert float(tape.gradient(z, x)) == 2.0


# -- reading a value on the host (tensor.host): polls a CPU computation briefly, then blocks ----------------------


@pytest.mark.parametrize("spin_s", [0.0, 1e-4, 10.0])
def test_every_read_of_a_running_computation_gives_its_value(monkeypatch, spin_s):
    # However long the read polls (not at all, the default, or until done), it returns the computation's value:
    # a gradient just dispatched, and a matmul long enough to outlast the default poll.
    from tapejax._src import tensor

    monkeypatch.setattr(tensor, "SPIN_S", spin_s)
    w = tf.Variable(W0)
    for _ in range(3):  # the third run is compiled: its executable is still running when it is read
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(_chain(w))
        grad = tape.gradient(loss, w)
        expected = jax.grad(lambda h: jnp.sum(_chain_jnp(h)))(jnp.asarray(W0))
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-6)
        np.testing.assert_allclose(float(loss), float(jnp.sum(_chain_jnp(jnp.asarray(W0)))), rtol=1e-6)
    a = np.random.default_rng(0).normal(size=(600, 600)).astype(np.float32)
    x = tf.constant(a)
    big = tf.matmul(tf.matmul(x, x), x)
    expected = np.asarray(jnp.asarray(a) @ jnp.asarray(a) @ jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(big), expected, rtol=1e-3, atol=1e-2)
    assert bool(tf.reduce_all(tf.equal(big, big))) and str(tf.constant(2.5) * 2) == "tf.Tensor(5.0, shape=(), dtype=float32)"


def test_a_read_of_a_ready_array_or_of_a_string_tensor_takes_it_as_it_is():
    from tapejax._src import tensor

    ready = jnp.arange(3.0)
    ready.block_until_ready()
    assert tensor.host(ready) is not None and np.array_equal(tensor.host(ready), [0.0, 1.0, 2.0])
    strings = np.array([b"a", b"b"], dtype=object)  # a string tensor's value is a numpy array: no polling
    assert tensor.host(strings) is strings
