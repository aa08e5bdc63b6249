"""A jacobian's memory is the result plus one chunk's intermediates (chunks.py, DESIGN invariant 12): rows computed
`parallel_iterations` at a time, chunked automatically past a budget, and an out-of-memory error raised as TF's
ResourceExhaustedError. Every answer is checked against JAX's jacrev / jacfwd, on the first (op-by-op) run and on
the compiled runs of a repeated structure."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import chunks, executables

RNG = np.random.default_rng(3)
X0 = RNG.normal(size=(3, 8))  # larger than the target (3, 5): reverse mode
A0 = RNG.normal(size=(5, 8))


def _program_tf(x, a):
    return tf.tanh(tf.linalg.matvec(a, tf.reshape(x, [3, 8]))) * tf.reduce_sum(x)


def _program_jax(x, a):
    return jnp.tanh(jnp.einsum("ij,bj->bi", a, x.reshape(3, 8))) * jnp.sum(x)


def _kinds():
    return {kind[0]: kind[2] for lowered in executables.CACHE._items.values() for kind in lowered._compiled}


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("parallel_iterations", [None, 2, 4, 7, 15, 100])
def test_jacobian_in_chunks_equals_jacrev(parallel_iterations, use_pfor):
    executables.CACHE.clear()
    x, a = tf.constant(X0), tf.constant(A0)
    expected = jax.jacrev(_program_jax)(jnp.asarray(X0), jnp.asarray(A0))
    for _ in range(3):  # the op-by-op sweep, then the compiled executable
        with tf.GradientTape(persistent=not use_pfor) as tape:
            tape.watch(x)
            y = _program_tf(x, a)
        j = tape.jacobian(y, x, parallel_iterations=parallel_iterations, experimental_use_pfor=use_pfor)
        np.testing.assert_allclose(j.numpy(), expected, rtol=1e-12, atol=1e-12)
    # the chunk is the rows computed at once; as many as the 15 rows, or more, is all of them at once
    chunk = parallel_iterations if parallel_iterations is not None and parallel_iterations < 15 else None
    assert _kinds() == {"jacrev": chunk} and executables.CACHE.stats["compiled"] == 1


@pytest.mark.parametrize("parallel_iterations", [None, 2, 3])
def test_forward_mode_jacobian_in_chunks_equals_jacfwd(parallel_iterations):
    executables.CACHE.clear()
    x0 = RNG.normal(size=(5,))
    x = tf.constant(x0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.sin(tf.tile(x, [40])) * tf.range(200, dtype=tf.float64)
    j = tape.jacobian(y, x, parallel_iterations=parallel_iterations)
    expected = jax.jacfwd(lambda v: jnp.sin(jnp.tile(v, 40)) * jnp.arange(200.0))(jnp.asarray(x0))
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-12)
    assert _kinds() == {"jacfwd": parallel_iterations}


@pytest.mark.parametrize("parallel_iterations", [None, 3, 4])
def test_batch_jacobian_in_chunks_equals_vmapped_jacrev(parallel_iterations):
    x0 = RNG.normal(size=(6, 8))
    x, a = tf.constant(x0), tf.constant(A0)
    expected = jax.vmap(jax.jacrev(lambda v: jnp.tanh(jnp.asarray(A0) @ v) * jnp.sum(v)))(jnp.asarray(x0))
    for _ in range(2):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.tanh(tf.linalg.matvec(a, x)) * tf.reduce_sum(x, axis=1, keepdims=True)
        j = tape.batch_jacobian(y, x, parallel_iterations=parallel_iterations)
        np.testing.assert_allclose(j.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_over_the_budget_the_rows_are_chunked_automatically(monkeypatch):
    # one row's working set is at most the largest step's inputs (matvec's: the constant `a`, 320 bytes, and x)
    # plus its row of the result (192 bytes): a budget of 1 KiB holds one row, not the 15 of the whole jacobian
    monkeypatch.setattr(chunks.BUDGET, "bytes", 1024)
    executables.CACHE.clear()
    x, a = tf.constant(X0), tf.constant(A0)
    expected = jax.jacrev(_program_jax)(jnp.asarray(X0), jnp.asarray(A0))
    for _ in range(2):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = _program_tf(x, a)
        np.testing.assert_allclose(tape.jacobian(y, x).numpy(), expected, rtol=1e-12, atol=1e-12)
    ((_, chunk),) = _kinds().items()
    assert chunk is not None and 1 <= chunk < 15
    per_row = chunks.row_bytes([], np.zeros(15), [np.zeros(12)])
    assert per_row == 15 * 8 + 12 * 8  # the estimate's parts: the target, and the result's row
    assert chunks.chunk_size(15, 400, None) == 2 and chunks.chunk_size(2, 400, None) is None
    assert chunks.chunk_size(15, 400, 20) is None and chunks.chunk_size(15, 10**9, 3) == 3


def test_an_out_of_memory_jacobian_raises_resource_exhausted():
    # a target of 2**40 float32 elements: 4 TiB, which no allocator grants (it fails at once, allocating nothing)
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.tile(x, [2**39])
    with pytest.raises(tf.errors.ResourceExhaustedError, match="GradientTape.jacobian ran out of memory") as info:
        tape.jacobian(y, x)
    assert not isinstance(info.value, jax.errors.JaxRuntimeError)


def test_the_advice_names_parallel_iterations_when_several_rows_ran_at_once():
    err = jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 32000000000 bytes.")

    def fail():
        raise err

    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"parallel_iterations=500\)") as info:
        chunks.guard("jacobian", 2000, 16 * 2**20, None, fail)
    assert info.value.__cause__ is err
    with pytest.raises(jax.errors.JaxRuntimeError):  # any other runtime error is left as it is
        chunks.guard("jacobian", 2000, 1, None, lambda: (_ for _ in ()).throw(jax.errors.JaxRuntimeError("x")))


_MEMORY_SCRIPT = textwrap.dedent("""
    import numpy as np
    import tapejax as tf

    def peak_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024

    rng = np.random.default_rng(0)
    a0 = rng.normal(size=(2000, 2000)).astype(np.float32)
    a, x = tf.constant(a0), tf.Variable(rng.normal(size=(2000,)).astype(np.float32))
    for _ in range(2):  # the op-by-op sweep, then the compiled executable
        with tf.GradientTape() as tape:
            y = tf.linalg.matvec(a, x)
        j = tape.jacobian(y, x)
        assert j.shape == (2000, 2000) and np.allclose(j.numpy(), a0)
    print(peak_mib())
""")


@pytest.mark.skipif(not pathlib.Path("/proc/self/status").exists(), reason="peak RSS is read from /proc")
def test_a_2000_by_2000_jacobian_peaks_under_2_gb():
    # Peak resident memory of a fresh process (XLA's CPU buffers are in it; tracemalloc would not see them).
    # Vectorised over the basis with the matrix's cotangent per row, this asked for 32 GB.
    root = pathlib.Path(tf.__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    assert float(done.stdout.split()[-1]) < 2048
