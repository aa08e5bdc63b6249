"""TF's gradient-kernel convention at the edges: a zero upstream gradient gives a zero gradient, not 0 * inf = NaN.

TF's gradient kernels of Sqrt, Rsqrt and Reciprocal (SqrtGrad, RsqrtGrad, ReciprocalGrad) return 0 wherever the
upstream gradient is 0, even where the derivative is infinite or NaN: `tf.where(x > 0, tf.sqrt(x), 0.)` has gradient
0 at x = 0, where the chain rule in IEEE arithmetic gives 0 * inf = NaN. JAX has no such convention, so rows that
TF computes with those kernels are wrapped by `masks_zero_cotangent` (registry.OpDef.zero_cotangent).

The derivative stays JAX's: the wrapper is a `jax.custom_jvp` whose tangent is `scale(t, f'(x))` with `f'(x)` JAX's
own derivative, and `scale` is one small bilinear primitive, `t * d` with 0 where `t` is 0, which is its own
transpose in `t`. So the convention holds in every transformation and composition JAX makes of a row, with nothing
per mode: reverse mode (the cotangent is masked), forward mode, vmap, jit, and gradients of gradients. (A
`jax.custom_vjp` would mask reverse mode only and make every jvp through a traced function fail.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

scale_p = Primitive("tapejax_scale_no_nan")


def _scale(t: Any, d: Any) -> Any:
    """`t * d`, and 0 where `t` is 0 whatever `d` is (inf, NaN): TF's `multiply_no_nan(d, t)`."""
    return jnp.where(t == 0, jnp.zeros_like(t), t * d)


def scale(t: Any, d: Any) -> Any:
    """`t * d` with 0 where `t == 0`: the product of a tangent or cotangent with a derivative, as TF's gradient
    kernels of Sqrt, Rsqrt and Reciprocal take it. `t` and `d` have one shape and dtype."""
    return scale_p.bind(t, d)


scale_p.def_impl(_scale)
scale_p.def_abstract_eval(lambda t, d: jax.core.ShapedArray(t.shape, t.dtype))
mlir.register_lowering(scale_p, mlir.lower_fun(_scale, multiple_results=False))
# Bilinear, as a product: linear in t (its transpose masks the cotangent, the point of it) and in d (for gradients of
# gradients, where d depends on the primal).
ad.defbilinear(scale_p, lambda ct, t, d: scale(ct, d), lambda ct, t, d: scale(t, ct))


def _scale_batched(args: tuple, dims: tuple) -> tuple[Any, int]:
    # Both operands batched at the front, an unbatched one broadcast to the batch: `t` and `d` keep one shape (a
    # generic broadcasting rule would give an unbatched operand a batch of 1, and the result t's shape, wrongly).
    size = next(x.shape[b] for x, b in zip(args, dims) if b is not None)  # None: not batched
    t, d = (jnp.broadcast_to(x, (size, *x.shape)) if b is None else jnp.moveaxis(x, b, 0) for x, b in zip(args, dims))
    return scale(t, d), 0


batching.primitive_batchers[scale_p] = _scale_batched


def masks_zero_cotangent(f: Callable[..., Any]) -> Callable[..., Any]:
    """An elementwise function of one tensor `f(x, **params)` whose derivative is multiplied TF's way (`scale`): 0
    where the incoming tangent or cotangent is 0. Its values and nonzero derivatives are `f`'s. Inputs that are not
    float or complex go to `f` as they are (they have no derivative)."""

    @functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
    def masked(x: Any, params: tuple) -> Any:
        return f(x, **dict(params))

    @masked.defjvp
    def masked_jvp(params: tuple, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        # f'(x) by JAX, elementwise: the tangent of f along ones.
        y, d = jax.jvp(lambda v: f(v, **dict(params)), (x,), (jnp.ones_like(x),))
        return y, scale(t, d)

    @functools.wraps(f)
    def wrapped(x: Any, **params: Any) -> Any:
        if not jnp.issubdtype(jnp.result_type(x), jnp.inexact):
            return f(x, **params)
        return masked(x, tuple(sorted(params.items())))

    return wrapped


# TF's kernels, for rows whose TF implementation computes with them (tf.norm is Sqrt of a sum, tf.nn.l2_normalize
# multiplies by Rsqrt): their edges then match TF's too.
sqrt = masks_zero_cotangent(jnp.sqrt)
rsqrt = masks_zero_cotangent(jax.lax.rsqrt)
reciprocal = masks_zero_cotangent(jnp.reciprocal)
