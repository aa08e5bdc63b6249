"""Random programs: `tf.function(f)(x)` computes what `f(x)` computes eagerly, and a second call does not retrace.

The programs are those of random_programs.py. Each one is run three ways on tapejax: eagerly under a GradientTape (the
reference), as a tf.function whose body records the program on a tape and returns `tape.gradient`, and as a
tf.function of the bare program called under a GradientTape outside it. JAX's `jax.vjp` of the jnp twin checks
the reference itself, so a bug shared by eager and compiled tapejax still fails. Every function is then called a
second time with new values of the same shapes (new constants, new variable values): it must give the eager
answer for the new values without tracing again.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import Phase, assume, given, note, seed, settings

import random_programs as P
import tapejax as tf

# Each example traces and compiles two tf.functions (and the vjp of one): fewer examples than the tape properties.
SEED = int(os.environ.get("TAPEJAX_TEST_SEED") or random.SystemRandom().randrange(2**32))
NO_EXPLAIN = [phase for phase in Phase if phase is not Phase.explain]


def property_test(max_examples: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        settings_ = settings(max_examples=max_examples, deadline=None, phases=NO_EXPLAIN)
        return settings_(seed(SEED)(given(program=P.programs())(test)))

    return decorate


# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------


def tame_oracle(program: P.Program) -> tuple[np.ndarray, list[np.ndarray]]:
    note(f"session seed: {SEED}")
    target, vjps = P.jax_vjp(program)
    assume(P.tame(target, *vjps))
    return target, vjps


def with_new_values(program: P.Program) -> P.Program:
    """The same program on other inputs of the same shapes and dtype (still inside [-1.5, 1.5])."""
    inputs = tuple(dataclasses.replace(inp, value=(1.5 * np.cos(3.0 * inp.value + 1.0)).astype(inp.value.dtype))
                   for inp in program.inputs)
    return dataclasses.replace(program, inputs=inputs)


def set_values(leaves: list[Any], program: P.Program) -> list[Any]:
    """New constants, and the same Variable objects assigned the program's values."""
    out = []
    for leaf, inp in zip(leaves, program.inputs):
        if inp.kind == P.CONSTANT:
            out.append(tf.constant(inp.value))
        else:
            leaf.assign(inp.value)
            out.append(leaf)
    return out


def eager_reference(program: P.Program, leaves: list[Any], zero: bool = False) -> tuple[Any, list[Any]]:
    """Target and tape gradients computed eagerly: what every compiled run must reproduce."""
    tape, target = P.record(tf, program, leaves)
    unconnected = tf.UnconnectedGradients.ZERO if zero else tf.UnconnectedGradients.NONE
    return target, tape.gradient(target, leaves, unconnected_gradients=unconnected)


def expected_gradients(program: P.Program, vjps: list[np.ndarray]) -> list[np.ndarray | None]:
    """JAX's vjp where the tape watches the input and the target depends on it, else None (TF's rule)."""
    connected = program.connected()
    return [vjps[i] if program.watched(i) and i in connected else None for i in range(len(program.inputs))]


def assert_same(got: Any, expected: Any, program: P.Program, what: str) -> None:
    """`got` (a Tensor or None) equals `expected` (a Tensor, a numpy array or None) in dtype, shape and value."""
    if expected is None:
        assert got is None, f"{what}: expected None, got {got!r}"
        return
    assert got is not None, f"{what}: expected a value, got None"
    expected = expected.numpy() if hasattr(expected, "numpy") else np.asarray(expected)
    value = got.numpy()
    assert value.dtype == expected.dtype, f"{what}: dtype {value.dtype}, expected {expected.dtype}"
    assert value.shape == expected.shape, f"{what}: shape {value.shape}, expected {expected.shape}"
    P.assert_close(value, expected, program.rtol, what)


# ---------------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------------


@property_test(max_examples=10)
def test_function_with_tape_inside_equals_eager(program: P.Program) -> None:
    """`tf.function(step)`, where step records the program and returns (target, tape.gradient), returns the eager
    target and gradients (None where eager gives None); a second call with new values does not retrace."""
    _, vjps = tame_oracle(program)
    leaves = program.leaves(tf)
    eager_target, eager_grads = eager_reference(program, leaves)
    for i, (g, e) in enumerate(zip(eager_grads, expected_gradients(program, vjps))):
        assert_same(g, e, program, f"eager reference d target / d v{i} vs jax.vjp")

    def step(*args: Any) -> tuple[Any, list[Any]]:
        tape, target = P.record(tf, program, list(args))
        return target, tape.gradient(target, list(args))

    compiled = tf.function(step)
    target, grads = compiled(*leaves)
    assert_same(target, eager_target, program, "target under tf.function")
    assert isinstance(grads, list) and len(grads) == len(leaves)
    for i, (g, e) in enumerate(zip(grads, eager_grads)):
        assert_same(g, e, program, f"d target / d v{i} under tf.function")
    assert compiled.experimental_get_tracing_count() == 1

    renewed = with_new_values(program)
    _, new_vjps = tame_oracle(renewed)
    leaves = set_values(leaves, renewed)
    eager_target, eager_grads = eager_reference(renewed, leaves)
    target, grads = compiled(*leaves)
    assert compiled.experimental_get_tracing_count() == 1, "same shapes and dtypes, new values: no retrace"
    assert_same(target, eager_target, renewed, "target, second call")
    for i, (g, e, o) in enumerate(zip(grads, eager_grads, expected_gradients(renewed, new_vjps))):
        assert_same(g, e, renewed, f"d target / d v{i}, second call")
        assert_same(g, o, renewed, f"d target / d v{i}, second call, vs jax.vjp")


@property_test(max_examples=10)
def test_tape_outside_function_differentiates_through_it(program: P.Program) -> None:
    """A GradientTape around a call of `tf.function(program)` watches its inputs (and the trainable variables it
    reads) and gives the eager gradients: None for unwatched inputs and for those the target does not use (as TF
    does for arguments a function does not use), zeros for them with `UnconnectedGradients.ZERO`. A second call
    with new values does not retrace."""
    _, vjps = tame_oracle(program)
    compiled = tf.function(lambda *args: program.run_tf(tf, args))
    leaves = program.leaves(tf)
    for call, prog in enumerate((program, with_new_values(program))):
        if call:
            _, vjps = tame_oracle(prog)
            leaves = set_values(leaves, prog)
        eager_target, eager_zero = eager_reference(prog, leaves, zero=True)
        with tf.GradientTape(persistent=True, watch_accessed_variables=prog.watch_accessed_variables) as tape:
            for leaf, inp in zip(leaves, prog.inputs):
                if inp.watch:
                    tape.watch(leaf)
            target = compiled(*leaves)
        assert compiled.experimental_get_tracing_count() == 1, f"call {call}: no retrace"
        assert_same(target, eager_target, prog, f"call {call}: target")
        zero = tape.gradient(target, leaves, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        plain = tape.gradient(target, leaves)
        for i, (z, e, expected) in enumerate(zip(zero, eager_zero, expected_gradients(prog, vjps))):
            assert_same(z, e, prog, f"call {call}: d target / d v{i} (ZERO)")
            assert_same(plain[i], expected, prog, f"call {call}: d target / d v{i} vs jax.vjp")
