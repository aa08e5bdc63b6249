"""Every differentiable op row at NaN, +-Inf, 0, -0 and a denormal, side by side with TensorFlow: values and tape
gradients, also for a zero upstream gradient (TF's SqrtGrad gives 0 there, not 0 * inf).

The variants and the comparison are in edges.py; the rows that may still differ, with why, in edge_allowlist.py
(a listed row that matches fails too, so the list only shrinks). A mismatch prints the first difference of each
differing variant. Then, the same for TF's empty reductions and for the `tf.where` idiom inside tf.function and
compiled gradients, where the convention must hold too.
"""

from __future__ import annotations

import numpy as np
import pytest

import tapejax

from . import edges as E
from .edge_allowlist import ALLOWED
from .test_ops_vs_tf import call, skip_reason

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

S = E.S


def _rows() -> list:
    from tapejax._src.registry import REGISTRY  # noqa: PLC0415

    params = []
    for name, opdef in REGISTRY.items():
        if not (opdef.differentiable and opdef.has_gradient) or name not in S.SPEC:
            continue
        if skip_reason(name, S.SPEC[name]) is None:
            params.append(pytest.param(name, id=name))
    return params


def differences(name: str) -> list[str]:
    """The variants of row `name` where tapejax and TF differ, each with its first difference."""
    spec = S.SPEC[name]
    args = S.sample(name, spec)

    def run(m, a):
        return E.run(m, lambda m, ts: call(m, name, spec, ts), a, name)

    found = []
    for vid, edges in E.variants(name, args):
        a = E.poke(args, edges)
        with np.errstate(all="ignore"):
            want, got = run(tf_real, a), run(tapejax, a)
        d = E.difference(got, want, spec.rtol, spec.atol)
        if d:
            found.append(f"{vid}: {d}")
    return found


@pytest.mark.parametrize("name", _rows())
def test_row_at_edges_matches_tf(name):
    found = differences(name)
    if name in ALLOWED:
        assert found, f"tf.{name} now matches TF at every edge: delete its line in edge_allowlist.py"
        return
    assert not found, f"tf.{name} differs from TF at the edges:\n" + "\n".join(found)


def test_the_sweep_covers_every_differentiable_row():
    from tapejax._src.registry import REGISTRY  # noqa: PLC0415

    swept = {p.values[0] for p in _rows()}
    unswept = {n for n, o in REGISTRY.items() if o.differentiable and o.has_gradient} - swept
    # only Python operators and rows without a TF counterpart (test_ops_vs_tf.py lists them) are left out
    assert all(skip_reason(n, S.SPEC[n]) for n in unswept), sorted(unswept)
    assert set(ALLOWED) <= swept, set(ALLOWED) - swept


# -- empty reductions: TF gives the reduction's identity (or NaN for a mean) -------------------------------------

_REDUCTIONS = ["reduce_max", "reduce_min", "reduce_sum", "reduce_prod", "reduce_mean", "reduce_logsumexp",
               "reduce_std", "reduce_variance", "reduce_euclidean_norm"]


@pytest.mark.parametrize("axis", [0, None], ids=["axis0", "all"])
@pytest.mark.parametrize("reduction", _REDUCTIONS)
def test_empty_reduction_matches_tf(reduction, axis):
    def run(m):
        x = m.zeros([0, 3])
        with m.GradientTape() as tape:
            tape.watch(x)
            y = getattr(m.math, reduction)(x, axis=axis)
        return y.numpy(), tape.gradient(y, x).numpy()

    (value, grad), (want, want_grad) = run(tapejax), run(tf_real)
    np.testing.assert_array_equal(value, want)
    assert value.dtype == want.dtype and grad.shape == want_grad.shape


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("reduction", ["reduce_max", "reduce_min"])
def test_empty_integer_reduction_matches_tf(reduction, dtype):
    got = getattr(tapejax.math, reduction)(tapejax.zeros([0], dtype)).numpy()
    want = getattr(tf_real.math, reduction)(tf_real.zeros([0], dtype)).numpy()
    assert got == want and got.dtype == want.dtype


# -- the idiom everywhere: eagerly, compiled (a repeated structure), in tf.function, in a jacobian --------------


def _idiom(m, ops):
    x = m.constant([0.0, 4.0, -1.0, 0.25])
    with m.GradientTape() as tape:
        tape.watch(x)
        y = m.where(x > 0, ops(m, x), 0.0)
    return tape.gradient(y, x).numpy()


_IDIOMS = {
    "sqrt": lambda m, x: m.sqrt(x),
    "rsqrt": lambda m, x: m.math.rsqrt(x),
    "reciprocal": lambda m, x: m.math.reciprocal(x),
    "norm": lambda m, x: m.norm(m.reshape(x, [4, 1]), axis=1),
    "l2_normalize": lambda m, x: m.nn.l2_normalize(m.reshape(x, [4, 1]), axis=1)[:, 0],
}


@pytest.mark.parametrize("idiom", list(_IDIOMS))
def test_where_idiom_gradient_is_tf_everywhere(idiom):
    want = _idiom(tf_real, _IDIOMS[idiom])
    assert np.isfinite(want).all()
    for _ in range(3):  # the first run sweeps op by op; the repeats run one compiled executable
        np.testing.assert_array_equal(_idiom(tapejax, _IDIOMS[idiom]), want)
    compiled = tapejax.function(lambda: tapejax.constant(_idiom(tapejax, _IDIOMS[idiom])))
    np.testing.assert_array_equal(compiled().numpy(), want)


def test_where_idiom_in_a_function_and_a_jacobian_is_tf():
    def run(m):
        @m.function
        def f(x):
            return m.where(x > 0, m.sqrt(x), 0.0)

        x = m.constant([0.0, 4.0])
        with m.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = f(x)
            z = m.where(x > 0, m.sqrt(x), 0.0)
            w = m.sqrt(x)
        return tape.gradient(y, x).numpy(), tape.jacobian(z, x).numpy(), tape.jacobian(w, x).numpy()

    for got, want in zip(run(tapejax), run(tf_real)):
        np.testing.assert_array_equal(got, want)
