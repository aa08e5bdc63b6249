"""xla_options.py: on a CPU, tiers.py's programs compile with XLA's own convolution kernels rather than YNNPACK's
(JAX 0.10's default), a choice made once that a user's XLA_FLAGS overrides and an XLA without the option skips."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapejax as tf
from tapejax._src import tiers, xla_options

cpu_only = pytest.mark.skipif(jax.default_backend() != "cpu", reason="an XLA:CPU option")


@pytest.fixture
def decided_afresh(monkeypatch):
    """`options()` decided again inside the test, and again after it (its cache holds the process's answer)."""
    xla_options.options.cache_clear()
    yield
    monkeypatch.undo()
    xla_options.options.cache_clear()


def _library_convolutions(hlo: str) -> int:
    """How many of a compiled program's convolutions are YNNPACK fusions (`__ynn_fusion` calling one)."""
    bodies = dict(re.findall(r"^%(\S+) \(.*?\{\n(.*?)\n\}", hlo, flags=re.S | re.M))
    fused = re.findall(r"calls=%([\w.\-]+)[^\n]*__ynn_fusion", hlo)
    return sum("convolution(" in bodies.get(name, "") for name in fused)


def _conv_loss(x, k):
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jnp.sum(jnp.tanh(y) ** 2)


def _conv_args():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(8, 12, 12, 16)).astype(np.float32), rng.normal(size=(3, 3, 16, 32)).astype(np.float32))


@cpu_only
def test_jax_0_10_takes_the_option_and_its_convolutions_are_xlas_own_with_the_same_values():
    measured = jax.__version_info__[:2] == (0, 10)  # the module docstring's JAX; a later XLA may drop the option
    if measured:
        assert xla_options.options() == xla_options._CPU
    if not xla_options.options():
        pytest.skip("this XLA does not take the option: its defaults stand")
    lowered = jax.jit(jax.value_and_grad(_conv_loss, argnums=(0, 1))).lower(*_conv_args())
    ours = xla_options.compile(lowered)
    assert _library_convolutions(ours.as_text()) == 0
    default = lowered.compile()
    if measured:  # the helper sees YNNPACK's convolutions where they are
        assert _library_convolutions(default.as_text()) > 0
    elif _library_convolutions(default.as_text()) == 0:
        pytest.skip("this XLA's defaults make no YNNPACK convolution either")
    for a, b in zip(jax.tree_util.tree_leaves(ours(*_conv_args())), jax.tree_util.tree_leaves(default(*_conv_args()))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-4)


@cpu_only
def test_a_tf_function_training_step_compiles_its_convolutions_with_the_options(monkeypatch):
    monkeypatch.setattr(tiers, "MIN_EQUATIONS", 0)  # a short step counts as a large program
    x, k0 = _conv_args()
    k = tf.Variable(k0)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.nn.conv2d(x, k, 1, "VALID")) ** 2)
        k.assign_sub(1e-3 * tape.gradient(loss, k))
        return loss

    loss = step(tf.constant(x))
    compiled = next(iter(step._concrete.values()))._compiled
    executable = compiled._executable if isinstance(compiled, tiers.Tiered) else compiled
    if xla_options.options():
        assert _library_convolutions(executable.as_text()) == 0
    expected, _ = jax.value_and_grad(_conv_loss, argnums=1)(x, k0)
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)


def test_the_users_xla_flags_choice_stands(monkeypatch, decided_afresh):
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_experimental_ynn_fusion_type=individual_convolution")
    assert xla_options.options() == {}


@cpu_only
@pytest.mark.parametrize("refused", [{"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_NO_SUCH_KIND"},
                                     {"xla_tapejax_no_such_option": "1"}])
def test_an_xla_that_refuses_the_option_compiles_with_its_defaults(monkeypatch, decided_afresh, refused):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setattr(xla_options, "_CPU", refused)
    assert xla_options.options() == {}


def test_extra_options_are_added_and_win(monkeypatch):
    seen = []

    class Lowered:
        def compile(self, options=None):
            seen.append(options)

    monkeypatch.setattr(xla_options, "options", lambda: {"a": "1", "b": "2"})
    xla_options.compile(Lowered(), {"b": "3", "c": "4"})
    xla_options.compile(Lowered())
    monkeypatch.setattr(xla_options, "options", lambda: {})
    xla_options.compile(Lowered())
    assert seen == [{"a": "1", "b": "3", "c": "4"}, {"a": "1", "b": "2"}, None]
