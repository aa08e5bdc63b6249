"""Random programs: tapejax's jacobian and ForwardAccumulator equal jax.jacrev, jax.jacfwd and jax.jvp of the same
program.

The programs are those of random_programs.py (the gradient properties' table of ops). TensorFlow needs no check here:
test_gradient_properties.py already runs the jacobian-of-gradient property on both libraries.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from hypothesis import assume, given, settings

import forward_programs as F
import random_programs as P
import tapejax as tf

# Each example compiles JAX's oracle and a vectorised jacobian: fewer examples than the gradient properties.
FEW = settings(max_examples=15)


@FEW
@given(program=P.programs())
def test_jacobian_equals_jax_jacrev(program: P.Program) -> None:
    values = [inp.value for inp in program.inputs]
    target_value = np.asarray(program.run_jnp(*values))
    assume(P.tame(target_value))
    leaves = program.leaves(tf)
    tape, target = P.record(tf, program, leaves, persistent=True)
    jacobians = tape.jacobian(target, leaves)
    zeros = tape.jacobian(target, leaves, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    connected = program.connected()
    for i, (jac, zero, value) in enumerate(zip(jacobians, zeros, values)):
        if not (program.watched(i) and i in connected):
            assert jac is None, f"input {i} is unwatched or unconnected: jacobian None"
            assert zero.shape == target_value.shape + value.shape and not np.any(zero.numpy())
            continue
        expected = np.asarray(jax.jacrev(program.run_jnp, argnums=i)(*values))
        assume(P.tame(expected))
        assert jac.shape == expected.shape and jac.dtype.name == str(expected.dtype)
        P.assert_close(jac.numpy(), expected, program.rtol, f"jacobian w.r.t. input {i}")
        P.assert_close(zero.numpy(), expected, program.rtol, f"jacobian (ZERO mode) w.r.t. input {i}")


@FEW
@given(program=P.programs())
def test_forward_accumulator_equals_jax_jvp(program: P.Program) -> None:
    values = [inp.value for inp in program.inputs]
    rng = np.random.default_rng(len(values))
    tangents = [rng.normal(size=v.shape).astype(v.dtype) for v in values]
    primals, expected = jax.jvp(program.run_jnp, tuple(values), tuple(tangents))
    assume(P.tame(np.asarray(primals), np.asarray(expected)))
    leaves = program.leaves(tf)
    with tf.autodiff.ForwardAccumulator(leaves, [tf.constant(t) for t in tangents]) as acc:
        target = program.run_tf(tf, leaves)
    got = acc.jvp(target)
    if not program.connected():
        assert got is None
        return
    P.assert_close(got.numpy(), np.asarray(expected), program.rtol, "jvp")


@settings(max_examples=40)
@given(program=F.forward_programs())
def test_forward_mode_jacobian_equals_jax_jacfwd(program: F.ForwardProgram) -> None:
    # Sources smaller than the target: forward mode, seeded with the symbolic identity (structured_jacobian.py).
    sources = [tf.Variable(v) for v in program.sources]
    with tf.GradientTape() as tape:
        target = program.run_tf(tf, sources)
    assume(sum(v.size for v in program.sources) < math.prod(target.shape))
    jacobians = tape.jacobian(target, sources)
    rtol = 1e-12 if program.dtype == "float64" else 1e-5
    for i, jac in enumerate(jacobians):
        expected = np.asarray(jax.jacfwd(program.run_jnp, argnums=i)(*program.sources))
        if jac is None:  # unconnected: JAX gives zeros
            assert not expected.any(), f"source {i}: None, but JAX's jacobian is not zero"
            continue
        assert jac.shape == expected.shape and jac.dtype.name == str(expected.dtype)
        if program.exact:  # ones, zeros and constants: no rounding on either side
            np.testing.assert_array_equal(jac.numpy(), expected, f"jacobian w.r.t. source {i}")
        else:
            np.testing.assert_allclose(jac.numpy(), expected, rtol=rtol, atol=rtol * np.abs(expected).max(),
                                       err_msg=f"jacobian w.r.t. source {i}")
