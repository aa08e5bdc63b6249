"""Transposed convolutions (Keras's Conv1D/2D/3DTranspose, tf.nn.conv2d_transpose), computed in sub-pixel form
(one ordinary convolution per output residue, interleaved: tapejax/ops/conv_transpose.py), against their
definition: the transpose of the forward convolution from the output's length (`jax.linear_transpose` of
`lax.conv_general_dilated` with TF's padding). Values, both reverse-mode derivatives and forward mode, over kernels
smaller and larger than the stride, uneven strides, dilation, both paddings and every output padding."""

from __future__ import annotations

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from tapejax.keras.layers_conv import _transposed_length
from tapejax.ops.conv_transpose import transposed as _transposed


def _forward(y, kernel, strides, padding, dilations):
    spatial = "DHW"[3 - len(strides):]
    return jax.lax.conv_general_dilated(y, kernel, strides, padding.upper(), rhs_dilation=dilations,
                                        dimension_numbers=(f"N{spatial}C", f"{spatial}IO", f"N{spatial}C"))


def _definition(x, kernel, strides, padding, dilations, lengths):
    out = jax.ShapeDtypeStruct((x.shape[0], *lengths, kernel.shape[-2]), x.dtype)
    return jax.linear_transpose(lambda y: _forward(y, kernel, strides, padding, dilations), out)(x)[0]


def _cases():
    cases = []
    for kernel, stride, padding in itertools.product((2, 5), (1, 2, 3), ("same", "valid")):
        for output_padding in (None, *range(stride)):
            cases.append(((stride, stride), (kernel, kernel), padding, (1, 1), output_padding, (3, 3)))
    cases += [((1, 1), (3, 2), "same", (2, 3), None, (4, 3)), ((1,), (3,), "valid", (2,), None, (5,)),
              ((3,), (1,), "valid", (1,), None, (4,)), ((2, 1), (3, 4), "same", (1, 1), None, (3, 5)),
              ((1, 3), (5, 2), "valid", (1, 1), 0, (4, 2)),
              ((2, 2, 2), (3, 2, 3), "same", (1, 1, 1), None, (2, 3, 2)),
              ((3, 1, 2), (2, 3, 5), "valid", (1, 1, 1), 0, (2, 2, 3))]
    return cases


@pytest.mark.parametrize("strides, kernel_size, padding, dilations, output_padding, sizes", _cases())
def test_sub_pixel_form_is_the_transposed_convolution(strides, kernel_size, padding, dilations, output_padding,
                                                      sizes):
    rng = np.random.default_rng(len(strides) * 100 + sum(kernel_size) * 10 + sum(strides))
    lengths = tuple(_transposed_length(n, k, s, padding, d, output_padding)
                    for n, k, s, d in zip(sizes, kernel_size, strides, dilations))
    x = jnp.asarray(rng.standard_normal((2, *sizes, 3)), jnp.float32)
    kernel = jnp.asarray(rng.standard_normal((*kernel_size, 4, 3)), jnp.float32)
    output = jax.ShapeDtypeStruct((2, *lengths, 4), jnp.float32)
    if jax.eval_shape(lambda y: _forward(y, kernel, strides, padding, dilations), output).shape != x.shape:
        return  # no forward convolution from `lengths` gives x's shape: TF raises (an even kernel, "same", 0)
    cotangent = jnp.asarray(rng.standard_normal((2, *lengths, 4)), jnp.float32)
    tangents = (jnp.asarray(rng.standard_normal(x.shape), jnp.float32),
                jnp.asarray(rng.standard_normal(kernel.shape), jnp.float32))

    @jax.jit  # one compile for the whole comparison
    def both(x, kernel, cotangent, tangents):
        def each(f):
            f = functools.partial(f, strides=strides, padding=padding, dilations=dilations, lengths=lengths)
            return f(x, kernel), jax.vjp(f, x, kernel)[1](cotangent), jax.jvp(f, (x, kernel), tangents)[1]
        return each(_transposed), each(_definition)

    got, want = both(x, kernel, cotangent, tangents)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    for g, w in zip([*got[1], got[2]], [*want[1], want[2]]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
