"""Tensors and Variables as JAX values (tapejax/_src/pytrees.py): pytree nodes, `jnp` on tensors without
warnings, zero-copy conversions, DLPack, numpy round trips."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf


def _quiet(call):
    """`call()`, failing on any warning (nothing may reach the user's screen)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call()
    assert not caught, [str(w.message) for w in caught]
    return out


def _pointer(x) -> int:
    return x.unsafe_buffer_pointer()


# -- pytrees -------------------------------------------------------------------------------------------------

def test_tensor_is_a_node_with_its_array_as_leaf():
    t = tf.constant([1.0, 2.0])
    (leaf,), treedef = jax.tree_util.tree_flatten(t)
    assert leaf is t.value
    rebuilt = jax.tree_util.tree_unflatten(treedef, [leaf * 2])
    assert type(rebuilt).__name__ == "EagerTensor"
    np.testing.assert_array_equal(rebuilt.numpy(), [2.0, 4.0])


def test_variable_is_a_node_whose_leaf_is_its_current_value_and_unflattens_to_a_tensor():
    v = tf.Variable([1.0, 2.0])
    (leaf,), treedef = jax.tree_util.tree_flatten(v)
    np.testing.assert_array_equal(np.asarray(leaf), [1.0, 2.0])
    v.assign([3.0, 4.0])
    assert float(jax.tree_util.tree_leaves(v)[0][0]) == 3.0  # the value now, not at creation
    rebuilt = jax.tree_util.tree_unflatten(treedef, [jnp.zeros(2, jnp.float32)])
    assert isinstance(rebuilt, tf.Tensor) and not isinstance(rebuilt, tf.Variable)
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])  # unflattening never writes the variable


def test_variable_subclasses_are_nodes_too():
    class Mine(tf.Variable):
        pass

    assert len(jax.tree_util.tree_leaves(Mine(1.0))) == 1
    assert len(jax.tree_util.tree_leaves(tf.keras.Variable(1.0, name="v"))) == 1


def test_a_tape_output_not_yet_computed_flattens_to_its_value():
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * 3.0
    assert float(jax.tree_util.tree_leaves(y)[0]) == 6.0
    assert float(tape.gradient(y, x)) == 3.0


def test_jax_transformations_take_tensors_and_give_tensors_back():
    x = tf.constant([0.5, 1.5])
    g = _quiet(lambda: jax.grad(lambda t: jnp.sum(jnp.sin(t)))(x))
    assert isinstance(g, tf.Tensor)
    np.testing.assert_allclose(g.numpy(), np.cos([0.5, 1.5]), rtol=1e-6)
    doubled = jax.jit(lambda t: t.value * 2)(x)
    np.testing.assert_array_equal(np.asarray(doubled), [1.0, 3.0])
    np.testing.assert_allclose(np.asarray(jax.vmap(jnp.exp)(x)), np.exp([0.5, 1.5]), rtol=1e-6)


def test_grad_over_a_tree_of_variables_gives_tensors_in_its_structure():
    params = {"w": tf.Variable([1.0, 2.0]), "b": tf.Variable(0.5)}
    grads = jax.grad(lambda p: jnp.sum(p["w"] ** 2) + p["b"])(params)
    assert set(grads) == {"w", "b"} and all(isinstance(g, tf.Tensor) for g in grads.values())
    np.testing.assert_array_equal(grads["w"].numpy(), [2.0, 4.0])


@pytest.mark.parametrize("fn", [jnp.sin, jnp.sum, jnp.exp, lambda x: jnp.add(x, 1.0), lambda x: jnp.dot(x, x),
                                lambda x: jnp.where(x > 1, x, 0.0), jnp.asarray])
@pytest.mark.parametrize("make", [tf.constant, tf.Variable])
def test_jnp_functions_accept_tensors_and_variables_without_warnings(fn, make):
    value = np.array([0.5, 1.5], np.float32)
    got = _quiet(lambda: fn(make(value)))
    np.testing.assert_allclose(np.asarray(got), np.asarray(fn(jnp.asarray(value))), rtol=1e-6)


def test_jnp_on_a_variable_inside_tf_function_sees_the_traced_value():
    v = tf.Variable(1.0)

    @tf.function
    def step():
        v.assign(5.0)
        return tf.convert_to_tensor(jnp.asarray(v) + jnp.sin(v))

    np.testing.assert_allclose(float(step()), 5.0 + np.sin(5.0), rtol=1e-6)


def test_tree_map_with_is_leaf_keeps_tensors_and_variables_whole():
    tree = {"a": tf.constant(1.0), "b": [tf.Variable(2.0)]}
    names = jax.tree_util.tree_map(lambda x: type(x).__name__, tree, is_leaf=lambda x: isinstance(
        x, tf.Tensor | tf.Variable))
    assert names == {"a": "EagerTensor", "b": ["ResourceVariable"]}


# -- conversions without copies ------------------------------------------------------------------------------

def test_convert_to_tensor_of_a_jax_array_shares_its_buffer():
    a = jnp.arange(6.0, dtype=jnp.float32)
    for convert in (tf.convert_to_tensor, tf.constant):
        t = convert(a)
        assert t.dtype == tf.float32 and _pointer(t.value) == _pointer(a)


def test_numpy_view_of_a_tensor_shares_its_buffer_and_numpy_method_copies_as_tf():
    t = tf.constant(np.arange(4.0, dtype=np.float32))
    view = np.asarray(t)
    assert view.ctypes.data == _pointer(t.value) and not view.flags.writeable
    copy = t.numpy()  # TF: a writable copy (two calls do not share memory)
    assert copy.flags.writeable and not np.shares_memory(copy, t.numpy())


def _aligned(n: int) -> np.ndarray:
    raw = np.empty(n * 4 + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + n * 4].view(np.float32)


def test_tf_constant_of_numpy_never_aliases_the_numpy_buffer():
    # XLA's CPU client takes a 64-byte-aligned numpy buffer without copying; TF copies, so mutating the numpy
    # array afterwards must not change the constant.
    n = _aligned(8)
    n[:] = 1.0
    for make in (tf.constant, tf.convert_to_tensor, tf.Variable):
        t = make(n)
        n[0] = 9.0
        assert float(np.asarray(t)[0]) == 1.0, make
        n[0] = 1.0
    v = tf.Variable(np.zeros(8, np.float32))
    v.assign(n)  # an assignment copies too
    n[0] = 9.0
    assert float(v.numpy()[0]) == 1.0


# -- DLPack -------------------------------------------------------------------------------------------------

def test_dlpack_protocol_shares_the_buffer_with_jax_and_numpy():
    t = tf.constant([1.0, 2.0, 3.0])
    device_type, device_id = t.__dlpack_device__()
    assert (device_type, device_id) == t.value.__dlpack_device__()
    j = jax.dlpack.from_dlpack(t)
    assert _pointer(j) == _pointer(t.value)
    n = np.from_dlpack(t)
    assert n.ctypes.data == _pointer(t.value)
    np.testing.assert_array_equal(n, [1.0, 2.0, 3.0])


def test_variable_has_the_dlpack_protocol_too():
    v = tf.Variable([4, 5], dtype=tf.int32)
    np.testing.assert_array_equal(np.from_dlpack(v), [4, 5])


def test_tf_experimental_dlpack_round_trip_shares_the_buffer():
    t = tf.constant([[1, 2], [3, 4]], dtype=tf.int64)
    capsule = tf.experimental.dlpack.to_dlpack(t)
    back = tf.experimental.dlpack.from_dlpack(capsule)
    assert back.dtype == tf.int64 and back.shape == (2, 2)
    assert _pointer(back.value) == _pointer(t.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match="consumed at most once"):
        tf.experimental.dlpack.from_dlpack(capsule)


def test_tf_experimental_dlpack_errors_are_tfs():
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be a TF tensor"):
        tf.experimental.dlpack.to_dlpack(np.arange(3.0))
    with pytest.raises(TypeError):
        tf.experimental.dlpack.from_dlpack(np.arange(3.0))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.experimental.dlpack.to_dlpack(tf.constant(["a"]))


def test_a_capsule_from_another_library_is_read_without_a_copy():
    a = jnp.arange(5.0, dtype=jnp.float32)
    t = tf.experimental.dlpack.from_dlpack(a.__dlpack__())
    assert _pointer(t.value) == _pointer(a)
