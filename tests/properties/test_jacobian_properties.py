"""Random programs: tapejax's jacobian and ForwardAccumulator equal jax.jacrev and jax.jvp of the same program.

The programs are those of random_programs.py (the gradient properties' table of ops). TensorFlow needs no check here:
test_gradient_properties.py already runs the jacobian-of-gradient property on both libraries.
"""

from __future__ import annotations


import jax
import numpy as np
from hypothesis import assume, given, settings

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
