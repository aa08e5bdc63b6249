"""A shape's first uniform draw runs a sampler compiled without LLVM's optimisations, and a sample's eager scaling
runs on the host (tapejax/ops/random.py): both must give JAX's own bits, and save their XLA compiles."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tapejax as tf
from tapejax._src import checking
from tapejax.ops import random as random_ops

from tests.unit.test_shape_inference_compiles import counting_compiles


@settings(max_examples=25, deadline=None)
@given(dims=st.lists(st.integers(0, 40), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from([np.float32, np.float64, jax.numpy.float16, jax.numpy.bfloat16]),
       seed=st.integers(0, 2**31 - 1))
def test_a_first_draw_gives_jax_uniform_bits(dims, dtype, seed):
    key = jax.random.fold_in(jax.random.PRNGKey(seed), 3)
    random_ops._UNIFORM.clear()
    draws = [random_ops._uniform(key, dims, dtype)]  # the cheap (or numpy) sampler
    entry = random_ops._UNIFORM[(dims, np.dtype(dtype), key.dtype, key.shape)]
    draws += [random_ops._uniform(key, dims, dtype) for _ in range(entry[2])]  # ... then JAX's
    expected = jax.random.uniform(key, dims, dtype)
    assert random_ops._UNIFORM[(dims, np.dtype(dtype), key.dtype, key.shape)] is None
    for got in draws:
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 300), dtype=st.sampled_from([np.float32, np.float64]),
       scale=st.floats(1e-3, 1e3), shift=st.floats(-10, 10), seed=st.integers(0, 2**31 - 1))
def test_scaling_on_the_host_gives_the_device_bits(n, dtype, scale, shift, seed):
    sample = jax.random.normal(jax.random.PRNGKey(seed), (n,), dtype)
    host = random_ops._affine_on_host(sample, scale, shift, dtype)
    device = sample * np.asarray(scale, dtype) + np.asarray(shift, dtype)
    assert host is not None
    assert np.asarray(host).tobytes() == np.asarray(device).tobytes()


def test_subnormal_results_and_other_dtypes_stay_on_the_device():
    sample = jax.numpy.asarray(np.full(4, 1e-30, np.float32))
    assert random_ops._affine_on_host(sample, 1e-10, 0.0, np.float32) is None  # 1e-40 is subnormal
    assert random_ops._affine_on_host(sample.astype(np.float16), 2.0, 0.0, np.float16) is None


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-0.25, 0.25), (2.0, 3.5)])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_a_uniform_draw_of_a_new_shape_costs_one_cheap_compile_or_none(bounds, dtype, monkeypatch):
    monkeypatch.setattr(checking.FLAG, "on", False)  # the checking mode compiles the plain path to compare
    tf.random.uniform((2, 3), *bounds)  # the key's derivation compiles once per process
    shape = (3, 7, 11, 13 + int(bounds[1] * 4) + 10 * (dtype == tf.float64))  # a shape no other test draws
    with counting_compiles() as compiled:
        value = tf.random.uniform(shape, *bounds, dtype=dtype)
    assert value.shape == shape and value.dtype == dtype
    # float32: JAX's sampler in numpy (random_host.py); float64: the cheaply compiled one. The scaling to the
    # bounds runs on the host.
    assert len(compiled) == (0 if dtype == tf.float32 else 1)
    assert np.all((value.numpy() >= bounds[0]) & (value.numpy() < bounds[1]))


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(0, 60), min_size=0, max_size=3).map(tuple), seed=st.integers(0, 2**32 - 1),
       data=st.integers(0, 2**32 - 1))
def test_the_host_sampler_gives_jax_float32_uniform_bits(dims, seed, data):
    from tapejax.ops import random_host

    key = jax.random.fold_in(jax.random.PRNGKey(seed), data)  # keys with every bit pattern
    assert random_host.supported(key, dims, np.float32)
    got, expected = random_host.uniform(key, dims), np.asarray(jax.random.uniform(key, dims, np.float32))
    assert got.dtype == expected.dtype and got.shape == expected.shape and got.tobytes() == expected.tobytes()


def test_the_host_sampler_declines_what_it_does_not_compute():
    from tapejax.ops import random_host

    key = jax.random.PRNGKey(0)
    assert not random_host.supported(key, (3,), np.float64)
    assert not random_host.supported(key, (random_host.MAX_SIZE + 1,), np.float32)
    assert not random_host.supported(jax.random.key(0), (3,), np.float32)  # a typed key: JAX's own path


def test_a_float32_weight_of_a_new_shape_compiles_nothing(monkeypatch):
    # Keras's initializers: a kernel of a shape of its own, drawn from tf.random.uniform, compiled one sampler each.
    monkeypatch.setattr(checking.FLAG, "on", False)
    tf.random.set_seed(3)  # a seed in the host's range, whatever an earlier test left (a negative one takes JAX's)
    try:
        tf.keras.initializers.GlorotUniform(seed=0)((2, 3))  # whatever else the initializer compiles once
        # shapes no other test draws (test_a_first_draw_gives_jax_uniform_bits draws up to 3 dims of at most 40, and
        # leaves a shape it drew five times to JAX's compiled sampler)
        shapes = [(5, 5, 17, 29), (43, 47), (53,)]
        with counting_compiles() as compiled:
            values = [tf.keras.initializers.GlorotUniform(seed=k)(s) for k, s in enumerate(shapes)]
    finally:
        tf.random.set_seed(None)
    assert len(compiled) == 0
    for value, shape in zip(values, shapes):
        assert value.shape == shape and value.dtype == tf.float32 and np.all(np.isfinite(value.numpy()))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**63 - 1), op_seed=st.integers(0, 2**32 - 1), call=st.integers(0, 2**32 - 1))
def test_the_host_key_is_jaxs_folded_key(seed, op_seed, call):
    from tapejax.ops import random_host

    expected = np.asarray(jax.random.fold_in(jax.random.fold_in(jax.random.PRNGKey(seed), op_seed), call))
    got = random_host.key(seed, op_seed, call)
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_a_key_outside_the_host_range_is_jaxs_own():
    from tapejax.ops import random_host

    assert random_host.key(-1, 0) is None and random_host.key(0, 2**32) is None and random_host.key(2**63, 1) is None
    tf.random.set_seed(-5)  # a negative global seed: JAX derives the key
    try:
        a, b = tf.random.uniform((3,), seed=7), tf.random.uniform((3,), seed=7)
        assert not np.array_equal(a.numpy(), b.numpy())  # a fixed op seed draws a new sequence on each call
        tf.random.set_seed(-5)
        np.testing.assert_array_equal(tf.random.uniform((3,), seed=7).numpy(), a.numpy())
    finally:
        tf.random.set_seed(None)


def test_a_random_op_in_a_fresh_process_compiles_no_key():
    # JAX's PRNGKey and fold_in compiled four executables in every process before its first random number.
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import numpy as np
        import tapejax as tf
        from tests.unit.test_shape_inference_compiles import counting_compiles
        with counting_compiles() as compiled:
            tf.random.set_seed(1)
            value = tf.random.uniform((3, 4), seed=2)
        assert value.shape == (3, 4) and len(compiled) == 0, len(compiled)
        print("ok")
    """)
    root = __file__.rsplit("/tests/", 1)[0]
    env = {k: v for k, v in os.environ.items() if k != "TAPEJAX_CHECK"}  # the checking mode compiles JAX's path
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300,
                          env=env)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_a_shape_drawn_by_numpy_compiles_jax_sampler_only_once_numpy_cost_about_that_compile(monkeypatch):
    """A transformer's attention projections draw one weight shape per layer: a few such draws never compile JAX's
    sampler (they did after four); a million-element shape drawn often does, after about a compile's worth."""
    monkeypatch.setattr(checking.FLAG, "on", False)
    key = jax.random.fold_in(jax.random.PRNGKey(5), 1)
    random_ops._UNIFORM.clear()
    with counting_compiles() as compiled:
        for _ in range(12):
            random_ops._uniform(key, (32, 2, 32), np.float32)
    assert compiled == [] and random_ops._UNIFORM[((32, 2, 32), np.dtype(np.float32), key.dtype, key.shape)][2] > 100
    random_ops._UNIFORM.clear()
    big = (1024, 1024)
    draws = [random_ops._uniform(key, big, np.float32) for _ in range(12)]
    entry = random_ops._UNIFORM[(big, np.dtype(np.float32), key.dtype, key.shape)]
    assert entry is None  # switched to JAX's sampler: 7 draws cost about its compile
    for got in draws:
        assert np.asarray(got).tobytes() == np.asarray(draws[0]).tobytes()


def test_an_op_seed_and_an_unseeded_op_never_share_a_key():
    """After `set_seed(5)`, `normal(seed=0)` and the first unseeded op once both drew from (5, 0, 0): AlphaDropout's
    mask was then made of its inputs' own bits (the kept units' mean 0.35, the layer's output mean 0.24)."""
    tf.random.set_seed(5)
    x = tf.random.normal([200_000], seed=0)
    tf.random.set_seed(5)
    u = tf.random.uniform([200_000])
    assert abs(np.corrcoef(x.numpy(), u.numpy())[0, 1]) < 0.02
    layer = tf.keras.layers.AlphaDropout(0.2)
    tf.random.set_seed(5)
    a = layer(x, training=True).numpy()
    assert abs(a.mean()) < 0.01 and abs(a.var() - 1.0) < 0.02
