"""TF's CPU max and min kernels at NaN, and TF's gradients of them: the rows whose TF kernel skips a NaN that XLA's
max and min (which propagate it) would keep.

TF's kernels compare pairs in a loop, and a comparison with NaN is false, so where a NaN ends up depends on the loop
(each rule checked against TF 2.21):

- UnsortedSegmentMax (and SegmentMax, starting from -inf): a running max from the dtype's lowest value, which each
  element replaces unless the running max is greater. A NaN replaces it and the next element replaces the NaN: the
  result is the max of the elements after the segment's last NaN, or NaN where that NaN is the segment's last element.
  (SegmentMax's vectorised loop, on rows of 8 float32s or 4 float64s and more, skips every NaN instead: not followed.)
- TensorScatterMax: an update replaces the tensor's element where it is greater: a NaN update is skipped and a NaN
  element of the tensor stays NaN.
- MaxPool, MaxPool3D: a running max from the lowest float, which an element replaces where it is greater. NaN never
  does, so a window of NaN or -inf only gives the lowest float.

The min rows are the same with the comparisons reversed. TF's gradients are formulas, taken here in a
`jax.custom_jvp` whose tangent is linear in the tangent of the input (so reverse mode, jacobians and vmap all get
them). NaN reaches them only where TF's formula divides 0 by 0 (TensorScatterMax's over a NaN result).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def _float(x: Any) -> bool:
    return jnp.issubdtype(jnp.result_type(x), jnp.inexact)


def _extreme(largest: bool):
    return jnp.maximum if largest else jnp.minimum


def _identity(dtype, largest: bool):
    """The value that loses every comparison: -inf for a max, +inf for a min."""
    return jnp.asarray(-np.inf if largest else np.inf, dtype)


# -- segments: TF's running max, which a NaN resets ----------------------------------------------------------


def segment_extremum(data, ids, num_segments: int, largest: bool, start: Any = None):
    """TF's (Unsorted)SegmentMax/Min of the rows `data[i]` by the flat ids (out-of-range ids dropped): the running
    max from `start` (UnsortedSegmentMax: the dtype's lowest value; None for SegmentMax, which starts at the first
    element), with TF's gradient: the upstream split evenly among the elements equal to the result, 0 if none is.
    An empty segment gives `start` (None: XLA's identity of the reduction, for the caller to replace)."""
    if not _float(data):  # no NaN: the plain reduction
        out = (jax.ops.segment_max if largest else jax.ops.segment_min)(data, ids, num_segments)
        return out if start is None else _extreme(largest)(out, jnp.asarray(start, data.dtype))
    return _segment_extremum(data, ids, num_segments, largest, start)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3, 4))
def _segment_extremum(data, ids, num_segments, largest, start):
    reduce = jax.ops.segment_max if largest else jax.ops.segment_min
    position = jnp.arange(ids.shape[0]).reshape((-1,) + (1,) * (data.ndim - 1))
    last_nan = jax.ops.segment_max(jnp.where(jnp.isnan(data), position, -1), ids, num_segments)
    after = position > _gather(last_nan, ids)  # the elements the running max sees after the last NaN
    best = reduce(jnp.where(after, data, _identity(data.dtype, largest)), ids, num_segments)
    trailing_nan = (last_nan >= 0) & (jax.ops.segment_sum(after.astype(np.int32), ids, num_segments) == 0)
    # no NaN: the running max from `start`
    from_start = best if start is None else _extreme(largest)(best, jnp.asarray(start, data.dtype))
    return jnp.where(trailing_nan, jnp.asarray(np.nan, data.dtype), jnp.where(last_nan >= 0, best, from_start))


@_segment_extremum.defjvp
def _segment_extremum_jvp(num_segments, largest, start, primals, tangents):
    (data, ids), (t, _) = primals, tangents
    out = _segment_extremum(data, ids, num_segments, largest, start)
    chosen = data == _gather(out, ids)
    count = jax.ops.segment_sum(chosen.astype(data.dtype), ids, num_segments)
    shared = jax.ops.segment_sum(jnp.where(chosen, t, jnp.zeros_like(t)), ids, num_segments)
    return out, shared / jnp.maximum(count, 1)


def _gather(per_segment, ids):
    """Each element's segment's value (anything for a dropped id: its element is dropped too)."""
    return jnp.take(per_segment, ids, axis=0, mode="clip")


# -- scatter: NaN updates skipped, a NaN in the tensor kept --------------------------------------------------


def scatter_extremum(tensor, index: tuple, updates, largest: bool):
    """TF's TensorScatterMax/Min: `tensor` with each update at `tensor[index]` where it is greater (less), with
    TF's gradient: the upstream split among the tensor's element and the updates equal to the result (NaN where the
    result is NaN: none is)."""
    if not _float(tensor):
        return _scatter(tensor, index, updates, largest)
    return _scatter_extremum(tensor, index, updates, largest)


def _scatter(tensor, index, updates, largest):
    at = tensor.at[index]
    return at.max(updates) if largest else at.min(updates)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _scatter_extremum(tensor, index, updates, largest):
    # XLA's max keeps a NaN of the tensor; an update that loses to everything stands for a NaN update.
    return _scatter(tensor, index, jnp.where(jnp.isnan(updates), _identity(updates.dtype, largest), updates), largest)


@_scatter_extremum.defjvp
def _scatter_extremum_jvp(largest, primals, tangents):
    (tensor, index, updates), (t_tensor, _, t_updates) = primals, tangents
    out = _scatter_extremum(tensor, index, updates, largest)
    kept, taken = tensor == out, updates == out[index]
    count = kept.astype(tensor.dtype) + jnp.zeros_like(tensor).at[index].add(taken.astype(tensor.dtype))
    # No element equals a NaN result: TF's 0 / 0 there. The weights are NaN there, not 0, or XLA would rewrite the
    # product of a tangent and a 0/1 weight into a select, dropping the NaN.
    live = count > 0
    kept = jnp.where(kept, 1, jnp.where(live, 0, np.nan)).astype(tensor.dtype)
    taken = jnp.where(taken, 1, jnp.where(live[index], 0, np.nan)).astype(tensor.dtype)
    return out, (t_tensor * kept + jnp.zeros_like(tensor).at[index].add(t_updates * taken)) / count


# -- max pooling: NaN skipped, the lowest float for an empty max ---------------------------------------------


def max_pool(x, window: tuple, strides: tuple, pads: tuple):
    """TF's MaxPool (MaxPool3D for a rank-5 `x`): the max of each window over the elements that are not NaN, at
    least the lowest value of the dtype, with TF's gradient: MaxPoolGrad sends the upstream to one element of each
    window, the first, replaced by each later element greater than it (a NaN first element keeps it);
    MaxPool3DGrad sends it in full to every element within 1e-5 of the result (never an infinite one)."""
    if not _float(x):
        lowest = np.array(jnp.iinfo(x.dtype).min, x.dtype)
        return jax.lax.reduce_window(x, lowest, jax.lax.max, window, strides, pads)
    return _max_pool(x, window, strides, pads)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _max_pool(x, window, strides, pads):
    # fmax: NaN and -inf become the lowest float, where TF's running max from it leaves them
    lowest = jnp.fmax(x, jnp.asarray(jnp.finfo(x.dtype).min, x.dtype))
    return jax.lax.reduce_window(lowest, -np.inf, jax.lax.max, window, strides, pads)


@_max_pool.defjvp
def _max_pool_jvp(window, strides, pads, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _max_pool(x, window, strides, pads)
    offsets = list(_window_offsets(x.shape, window, strides, pads))
    if not offsets:  # no window (an empty output)
        return out, jnp.zeros_like(out)
    x, t = _pad(x, pads), _pad(t, pads)
    if x.ndim == 5:  # MaxPool3DGrad: every element within 1e-5 of the result
        tolerance = jnp.asarray(1e-5, x.dtype)
        tangent = jnp.zeros_like(out)
        for take, valid in offsets:
            near = valid & (jnp.abs(take(x) - out) < tolerance)
            tangent = tangent + jnp.where(near, take(t), jnp.zeros_like(out))
        return out, tangent
    # MaxPoolGrad: the first element of the window, then each later one greater than the one chosen so far
    chosen, tangent, seen = jnp.zeros_like(out), jnp.zeros_like(out), np.zeros((), bool)
    for take, valid in offsets:
        element = take(x)
        replace = valid & (~seen | (element > chosen))
        chosen = jnp.where(replace, element, chosen)
        tangent = jnp.where(replace, take(t), tangent)
        seen = seen | valid
    return out, tangent


def _pad(a, pads: tuple):
    return jax.lax.pad(a, jnp.zeros((), a.dtype), [(lo, hi, 0) for lo, hi in pads])


def _window_offsets(shape: tuple, window: tuple, strides: tuple, pads: tuple):
    """Per position in the window (row-major): a function taking that element of every window out of the padded
    input (an array shaped like the output), and where that element is the input's, not padding."""
    padded_shape = [size + lo + hi for size, (lo, hi) in zip(shape, pads)]
    out_shape = [(p - w) // s + 1 for p, w, s in zip(padded_shape, window, strides)]
    if any(isinstance(n, int) and n < 1 for n in out_shape):  # (a symbolic size, a relaxed batch, is at least 1)
        return
    for offset in itertools.product(*(range(w) for w in window)):
        valid = np.ones((), bool)
        for axis, (o, s, (lo, hi), n, size) in enumerate(zip(offset, strides, pads, out_shape, shape)):
            # An axis without padding (the batch and channels; its size may be symbolic) keeps size 1 in the mask,
            # as does one this position never pads: masks of the output's full shape were written into a step's
            # program as literals, one per position (12 of 0.4 MB in knowledge_distillation's).
            if lo == hi == 0:
                continue
            inside = (0 <= np.arange(n) * s + o - lo) & (np.arange(n) * s + o - lo < size)
            if not inside.all():
                valid = valid & inside.reshape([-1 if a == axis else 1 for a in range(len(shape))])
        start = list(offset)
        limit = [o + s * (n - 1) + 1 for o, s, n in zip(offset, strides, out_shape)]

        def take(padded, start=start, limit=limit):
            return jax.lax.slice(padded, start, limit, strides)

        yield take, valid
