"""Transposed convolutions (Keras's Conv*DTranspose, tf.nn.conv2d_transpose) in sub-pixel form."""

from __future__ import annotations

import itertools
from typing import Any

import jax
import jax.numpy as jnp


def transposed(x: Any, kernel: Any, strides: tuple, padding: str, dilations: tuple, lengths: tuple) -> Any:
    """The transposed convolution of channels-last `x` (arrays) with a kernel (*size, filters, in) to `lengths`
    ("same" or "valid" padding: TF's, of the forward convolution from `lengths`), as stride**rank ordinary
    convolutions of `x` interleaved (the sub-pixel form).

    Output position j = s*m + q along an axis reads the kernel taps t = r, r + s, ... with r = (q + p) mod s (p:
    TF's padding before, as the forward convolution from `length` pads): each residue q is a stride-1 convolution
    of `x` with the flipped sub-kernel kernel[r::s]. Inserting s - 1 zeros between inputs instead costs s**rank
    times the arithmetic, and XLA differentiates that form (or an lhs-dilated convolution) with respect to the
    kernel through a slow dilated convolution: 10-40x slower than this on a CPU. Every piece is an ordinary
    convolution, so JAX's own derivatives (reverse, forward, any order) stay fast. Dilation only with stride 1 (as
    Keras and TF allow)."""
    rank = len(strides)
    batch, *sizes, _ = x.shape
    axes = []  # per axis, per residue q: (first tap r, taps, padding before, padding after, outputs)
    for s, k, d, length, n in zip(strides, kernel.shape[:rank], dilations, lengths, sizes):
        effective = int(k) + (int(k) - 1) * (d - 1)  # Keras: dilation only with stride 1
        p = max((-(-length // s) - 1) * s + effective - length, 0) // 2 if padding == "same" else 0
        residues = []
        for q in range(s):
            r, c = (q + p) % s, (q + p) // s
            taps, outputs = len(range(r, int(k), s)), -(-(length - q) // s)
            before = (taps - 1) * d - c
            residues.append((r, taps, before, outputs + (taps - 1) * d - n - before, outputs))
        axes.append(residues)
    spatial = "DHW"[3 - rank:]
    most = [-(-length // s) for length, s in zip(lengths, strides)]
    parts = []
    for plan in itertools.product(*axes):
        if any(taps == 0 for _, taps, *_ in plan):  # a kernel smaller than the stride reaches no tap here
            y = jnp.zeros((batch, *[outputs for *_, outputs in plan], kernel.shape[-2]), x.dtype)
        else:
            sub = kernel[tuple(slice(r, None, s) for (r, *_), s in zip(plan, strides))]
            sub = jnp.swapaxes(jnp.flip(sub, tuple(range(rank))), rank, rank + 1)
            # a negative padding cuts x; the rest is the convolution's own padding (an explicit pad op makes
            # XLA's derivatives 1.5-2x slower)
            cut = x[(slice(None), *[slice(max(-lo, 0), n + min(hi, 0)) for (_, _, lo, hi, _), n in zip(plan, sizes)])]
            y = jax.lax.conv_general_dilated(
                cut, sub, (1,) * rank, [(max(lo, 0), max(hi, 0)) for _, _, lo, hi, _ in plan],
                rhs_dilation=tuple(d if s == 1 else 1 for d, s in zip(dilations, strides)),
                dimension_numbers=(f"N{spatial}C", f"{spatial}IO", f"N{spatial}C"))
        parts.append(jnp.pad(y, [(0, 0), *[(0, m - outputs) for m, (*_, outputs) in zip(most, plan)], (0, 0)]))
    # interleave: (s0, s1, .., batch, m0, m1, .., c) -> (batch, m0, s0, m1, s1, .., c) -> (batch, m0*s0, .., c)
    y = jnp.stack(parts).reshape(*strides, batch, *most, -1)
    y = jnp.transpose(y, [rank, *[a for i in range(rank) for a in (rank + 1 + i, i)], 2 * rank + 1])
    y = y.reshape(batch, *[m * s for m, s in zip(most, strides)], -1)
    return y[(slice(None), *[slice(0, length) for length in lengths])]
