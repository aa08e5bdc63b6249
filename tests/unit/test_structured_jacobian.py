"""The identity-seeded forward-mode jacobian (structured_jacobian.py): equal to vmapping the JVP over the basis, and
its structured rules taken where they save a contraction over the basis."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import structured_jacobian, transforms

RNG = np.random.default_rng(0)


def _vmapped(column, shape, dtype, args):
    return jax.vmap(lambda t: column(t, *args))(transforms.basis(shape, dtype))


# linear maps of the seed (a JVP is linear in its tangent), each through a structured rule, some then a fallback
CASES = {
    "c @ k": (lambda k, c: c @ k, (5, 10), (7, 5)),
    "k.T @ c.T": (lambda k, c: k.T @ c.T, (5, 10), (7, 5)),
    "batched, seed on the right": (lambda k, c: jnp.einsum("bij,bjk->bik", c, k), (3, 4, 2), (3, 5, 4)),
    "batched, seed on the left": (lambda k, c: jnp.einsum("jbi,bkj->kbi", k, c), (4, 3, 2), (3, 5, 4)),
    "reshaped and cast": (lambda k, c: c @ k.reshape(4, 3).astype(jnp.float32), (2, 6), (5, 4)),
    "transposed, then a fallback": (lambda k, c: jnp.sin(c[:2]) * (k.T @ c), (5, 2), (5, 3)),
    "no path from the seed": (lambda k, c: c * 2.0, (2, 3), (4,)),
}


@pytest.mark.parametrize("name", CASES)
def test_columns_equal_the_vmapped_jvp_exactly(name):
    f, k_shape, c_shape = CASES[name]
    k0, c0 = RNG.normal(size=k_shape), RNG.normal(size=c_shape)

    def column(t, k, c):
        return jax.jvp(lambda k: f(k, c), (k,), (t,))[1]

    got = structured_jacobian.columns(column, k_shape, k0.dtype, (k0, c0))
    expected = _vmapped(column, k_shape, k0.dtype, (k0, c0))
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def _dots(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            yield eqn
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            yield from _dots(sub)


def test_dense_layer_jacobian_contracts_nothing_over_the_basis():
    # y = relu(x @ kernel): J[i, j, a, b] = relu'(y[i, j]) x[i, a] delta(j, b). The only dot left is the primal
    # x @ kernel; the JVP's dot with the seed is a broadcast product (was: x contracted with 50 basis matrices).
    x0, k0 = RNG.normal(size=(7, 5)).astype(np.float32), RNG.normal(size=(5, 10)).astype(np.float32)
    build = transforms.jacobian_fwd_builder(((0,),), None)(lambda xs, cs: (jax.nn.relu(cs[0] @ xs[0]),))
    jaxpr = jax.make_jaxpr(build)([k0], [x0], ()).jaxpr
    dots = list(_dots(jaxpr))
    assert [tuple(d.outvars[0].aval.shape) for d in dots] == [(7, 10)], "a dot over the basis is back"


def test_tape_jacobian_takes_the_dot_rule():
    x0, k0 = RNG.normal(size=(9, 4)).astype(np.float32), RNG.normal(size=(4, 6)).astype(np.float32)
    x, kernel = tf.constant(x0), tf.Variable(k0)
    structured_jacobian.HITS.clear()
    with tf.GradientTape() as tape:
        y = tf.nn.relu(x @ kernel)
    jac = tape.jacobian(y, kernel)  # sources (24) smaller than the target (54): forward mode
    # once per trace (twice in the checking mode, which also traces the plain path)
    assert structured_jacobian.HITS["dot_general"] >= 1 and not structured_jacobian.HITS["vmap:dot_general"]
    expected = jax.jacfwd(lambda k: jax.nn.relu(x0 @ k))(k0)
    np.testing.assert_array_equal(jac.numpy(), np.asarray(expected))


def test_chunked_jacobian_keeps_the_dense_basis():
    # parallel_iterations maps chunks of the basis (transforms._map): the seeded interpreter is not used
    x0, k0 = RNG.normal(size=(9, 4)), RNG.normal(size=(4, 6))
    x, kernel = tf.constant(x0), tf.Variable(k0)
    structured_jacobian.HITS.clear()
    with tf.GradientTape() as tape:
        y = tf.tanh(x @ kernel)
    jac = tape.jacobian(y, kernel, parallel_iterations=5)
    assert not structured_jacobian.HITS
    np.testing.assert_allclose(jac.numpy(), jax.jacfwd(lambda k: jnp.tanh(x0 @ k))(k0), rtol=1e-12)
