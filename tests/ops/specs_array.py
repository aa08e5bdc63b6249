"""Specs of the array rows added for issue #6 (merged into op_specs.SPEC and op_specs.EXTRA_CASES).

Indexing with index tensors (gather_nd, scatter_nd, tensor_scatter_nd_*), masks (boolean_mask, sequence_mask,
one_hot), sorting and searching, reordering and slicing, meshgrid, repeat, clip_by_global_norm and
histogram_fixed_width. References use numpy only. Index tensors repeat an index where the gradient must add the
contributions (gather_nd, scatter_nd's updates); the inputs of max/min and sort have no ties, except in the cases
about TF's order at ties (argsort's stability).

boolean_mask, sequence_mask and one_hot are called through their public functions (the operator table points
there), with TF's signatures: the row behind them takes a value TF computes from the inputs (the mask's number of
true elements, maxlen, the dtype).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from op_specs import F32, Spec, fixed, normal, small_integers

I32 = np.int32


def _ints(*values: Any) -> np.ndarray:
    return np.array(values, I32)


def _index(indices: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.moveaxis(indices, -1, 0))


# -- references ---------------------------------------------------------------------------------------------


def gather_nd_ref(params, indices, batch_dims=0):
    if batch_dims:
        return np.stack([gather_nd_ref(p, i, batch_dims - 1) for p, i in zip(params, indices)])
    return params[_index(indices)]


def scatter_nd_ref(indices, updates, shape):
    out = np.zeros(shape, updates.dtype)
    np.add.at(out, _index(indices), updates)  # repeated indices add up
    return out


def _tensor_scatter_ref(combine):
    def ref(tensor, indices, updates):
        out = tensor.copy()
        if combine is None:
            out[_index(indices)] = updates
        else:
            combine.at(out, _index(indices), updates)
        return out

    return ref


def boolean_mask_ref(tensor, mask, axis=None):
    axis = 0 if axis is None else axis
    return tensor[(slice(None),) * axis + (mask,)]


def unique_ref(x, out_idx=I32):
    first: dict[Any, int] = {}
    for v in x.tolist():
        first.setdefault(v, len(first))
    y = np.array(list(first), x.dtype)
    return y, np.array([first[v] for v in x.tolist()], out_idx)


def sequence_mask_ref(lengths, maxlen=None, dtype=np.bool_):
    maxlen = int(lengths.max()) if maxlen is None else maxlen
    return (np.arange(maxlen) < lengths[..., None]).astype(dtype)


def sort_ref(values, axis=-1, direction="ASCENDING"):
    out = np.sort(values, axis=axis)
    return np.flip(out, axis) if direction == "DESCENDING" else out


def argsort_ref(values, axis=-1, direction="ASCENDING", stable=False):
    # TF's order is stable in both directions (equal values keep their index order)
    keys = -values if direction == "DESCENDING" else values
    return np.argsort(keys, axis=axis, kind="stable").astype(I32)


def searchsorted_ref(sorted_sequence, values, side="left", out_type=I32):
    rows = [np.searchsorted(s, v, side=side) for s, v in zip(sorted_sequence.reshape(-1, sorted_sequence.shape[-1]),
                                                              values.reshape(-1, values.shape[-1]))]
    return np.array(rows).reshape(values.shape).astype(out_type)


def histogram_ref(values, value_range, nbins=100, dtype=I32):
    # TF puts values below the range in the first bin and values above it (and the upper edge) in the last
    low, high = (float(v) for v in value_range)
    bins = np.floor((values.astype(np.float64) - low) / (high - low) * nbins)
    return np.bincount(np.clip(bins, 0, nbins - 1).astype(int).ravel(), minlength=nbins).astype(dtype)


def _tf_dtype(value: Any) -> np.dtype:
    """The dtype tf.constant gives a Python number: float32 or int32."""
    return np.dtype(F32 if isinstance(value, float) else I32 if isinstance(value, int) else np.asarray(value).dtype)


def one_hot_ref(indices, depth, on_value=None, off_value=None, axis=None, dtype=None):
    given = on_value if on_value is not None else off_value
    dtype = dtype or (F32 if given is None else _tf_dtype(given))
    hot = indices[..., None] == np.arange(depth)
    hot = np.moveaxis(hot, -1, -1 if axis is None else axis)
    return np.where(hot, 1 if on_value is None else on_value, 0 if off_value is None else off_value).astype(dtype)


def slice_ref(x, begin, size):
    return x[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]


def strided_slice_ref(x, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                      shrink_axis_mask=0):
    """numpy's indexing with TF's sparse spec spelled out: bit i of each mask applies to entry i."""
    strides = strides or (1,) * len(begin)
    key: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if ellipsis_mask >> i & 1:
            key.append(Ellipsis)
        elif new_axis_mask >> i & 1:
            key.append(None)
        elif shrink_axis_mask >> i & 1:
            key.append(b)
        else:
            key.append(slice(None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s))
    return x[tuple(key)]


def repeat_ref(x, repeats, axis=None):
    return np.repeat(x.reshape(-1) if axis is None else x, repeats, axis=0 if axis is None else axis)


def clip_by_global_norm_ref(*tensors):
    *t_list, clip_norm = tensors
    norm = np.sqrt(sum(np.sum(t.astype(np.float64) ** 2) for t in t_list))
    scale = clip_norm * min(1 / norm, 1 / clip_norm)
    return (*[(t * scale).astype(t.dtype) for t in t_list], np.asarray(norm, t_list[0].dtype))


# -- TF's calling conventions where they differ from the row's ---------------------------------------------


def _call_meshgrid(m, args, kwargs):
    return m.meshgrid(*args, **kwargs)


def _call_clip_by_global_norm(m, args, kwargs):
    clipped, norm = m.clip_by_global_norm(list(args[:-1]), args[-1], **kwargs)
    return (*clipped, norm)


# -- samples ------------------------------------------------------------------------------------------------


def _search(*columns: tuple[int, ...]):
    """Sorted rows [2, 4] and, per row, queries equal to the entries at `columns[row]`: side decides."""

    def args(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        rows = np.sort(rng.normal(size=(2, 4)), axis=-1).astype(F32)
        return rows, np.stack([row[list(c)] for row, c in zip(rows, columns)])

    return args


def _distinct(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Normal values, pairwise apart by at least 0.05: no ties for sort and the scatter max/min."""
    values = np.arange(int(np.prod(shape))) * 0.1 + rng.uniform(0, 0.05, int(np.prod(shape)))
    return (rng.permutation(values) - values.mean()).reshape(shape).astype(F32)


SPEC: dict[str, Spec] = {
    # index 1,0 twice: its gradient adds both
    "gather_nd": Spec(lambda rng: (normal(rng, (3, 2, 2)), _ints([1, 0], [2, 1], [1, 0])), gather_nd_ref),
    # index 0 twice: the updates add up, and each gets the gradient of its position
    "scatter_nd": Spec(lambda rng: (_ints([0], [2], [0]), normal(rng, (3, 2))), scatter_nd_ref,
                       kwargs={"shape": (4, 2)}),
    "tensor_scatter_nd_update": Spec(lambda rng: (normal(rng, (4, 3)), _ints([3], [1]), normal(rng, (2, 3))),
                                     _tensor_scatter_ref(None)),
    "tensor_scatter_nd_add": Spec(lambda rng: (normal(rng, (4, 3)), _ints([1], [1], [3]), normal(rng, (3, 3))),
                                  _tensor_scatter_ref(np.add)),
    "tensor_scatter_nd_sub": Spec(lambda rng: (normal(rng, (4, 3)), _ints([1], [1], [3]), normal(rng, (3, 3))),
                                  _tensor_scatter_ref(np.subtract)),
    "tensor_scatter_nd_max": Spec(lambda rng: (_distinct(rng, (4, 3)), _ints([3], [1]), _distinct(rng, (2, 3))),
                                  _tensor_scatter_ref(np.maximum)),
    "tensor_scatter_nd_min": Spec(lambda rng: (_distinct(rng, (4, 3)), _ints([3], [1]), _distinct(rng, (2, 3))),
                                  _tensor_scatter_ref(np.minimum)),
    "boolean_mask": Spec(lambda rng: (normal(rng, (3, 2)), np.array([True, False, True])), boolean_mask_ref),
    "unique": fixed([3.0, 1.0, 3.0, 2.0, 1.0], ref=unique_ref),
    "sequence_mask": fixed(_ints(1, 3, 0), ref=sequence_mask_ref, kwargs={"maxlen": 4}),
    "sort": Spec(lambda rng: (_distinct(rng, (2, 4)),), sort_ref),
    "argsort": Spec(lambda rng: (small_integers(rng, (2, 5)),), argsort_ref),  # ties: TF's order is stable
    "searchsorted": Spec(_search((1, 2), (0, 3)), searchsorted_ref, kwargs={"side": "right"}),
    # on the edges of the bins (exact in binary), below and above the range
    "histogram_fixed_width": fixed([-1.0, 0.0, 0.25, 0.3, 0.5, 0.74, 0.75, 1.0, 2.0], [0.0, 1.0],
                                   ref=histogram_ref, kwargs={"nbins": 4}),
    "one_hot": fixed(_ints(0, 2, -1, 3), ref=one_hot_ref, kwargs={"depth": 3}),
    "reverse": Spec(lambda rng: (normal(rng, (2, 3, 2)),), lambda x, axis: np.flip(x, axis),
                    kwargs={"axis": (2, 0)}),
    "roll": Spec(lambda rng: (normal(rng, (3, 4)),), lambda x, shift, axis: np.roll(x, shift, axis),
                 kwargs={"shift": (1, -2), "axis": (0, 1)}),
    "slice": Spec(lambda rng: (normal(rng, (3, 4)),), slice_ref, kwargs={"begin": (1, 1), "size": (-1, 2)}),
    "strided_slice": Spec(lambda rng: (normal(rng, (3, 4, 5)),), strided_slice_ref,
                          kwargs={"begin": (0, 3, 1), "end": (2, 0, 5), "strides": (1, -1, 2)}),
    "repeat": Spec(lambda rng: (normal(rng, (3, 2)),), repeat_ref, kwargs={"repeats": (2, 0, 1), "axis": 0}),
    "meshgrid": Spec(lambda rng: (normal(rng, (3,)), normal(rng, (2,))),
                     lambda *xs, indexing: tuple(np.meshgrid(*xs, indexing=indexing)), kwargs={"indexing": "xy"},
                     variadic=True, tf_call=_call_meshgrid),
    # global norm 6.5 > clip_norm 2: the clipping branch, away from the tie
    "clip_by_global_norm": fixed([1.5, -2.0, 4.5], [[3.0, 2.5]], 2.0, ref=clip_by_global_norm_ref, variadic=True,
                                 tf_call=_call_clip_by_global_norm),
}


EXTRA_CASES: list[tuple[str, str, Spec]] = [
    ("gather_nd[slices]", "gather_nd",
     Spec(lambda rng: (normal(rng, (3, 2, 2)), _ints([2], [0], [2])), gather_nd_ref)),
    ("gather_nd[batch_dims]", "gather_nd",
     Spec(lambda rng: (normal(rng, (2, 3, 2)), _ints([[1, 0], [2, 1]], [[0, 1], [0, 1]])), gather_nd_ref,
          kwargs={"batch_dims": 1})),
    ("gather_nd[int32]", "gather_nd",
     fixed(np.arange(6, dtype=I32).reshape(2, 3), _ints([1, 2], [0, 0]), ref=gather_nd_ref)),
    ("scatter_nd[elements]", "scatter_nd",
     Spec(lambda rng: (_ints([0, 1], [2, 0], [0, 1]), normal(rng, (3,))), scatter_nd_ref, kwargs={"shape": (3, 2)})),
    ("boolean_mask[axis]", "boolean_mask",
     Spec(lambda rng: (normal(rng, (2, 3, 2)), np.array([False, True, True])), boolean_mask_ref,
          kwargs={"axis": 1})),
    ("boolean_mask[2d_mask]", "boolean_mask",
     Spec(lambda rng: (normal(rng, (2, 3, 2)), np.array([[True, False, True], [False, False, True]])),
          boolean_mask_ref)),
    ("unique[int64_idx]", "unique", fixed([5.0, 5.0, -1.0, 7.0, -1.0], ref=unique_ref, kwargs={"out_idx": np.int64})),
    ("sequence_mask[no_maxlen]", "sequence_mask", fixed(_ints([1, 3], [2, 0]), ref=sequence_mask_ref)),
    ("sequence_mask[float32]", "sequence_mask",
     fixed(_ints(2, 0, 1), ref=sequence_mask_ref, kwargs={"maxlen": 3, "dtype": np.float32})),
    ("sort[descending]", "sort",
     Spec(lambda rng: (_distinct(rng, (3, 2)),), sort_ref, kwargs={"axis": 0, "direction": "DESCENDING"})),
    ("sort[int32]", "sort", fixed(_ints(3, -1, 2, 0), ref=sort_ref)),
    ("argsort[descending]", "argsort",
     Spec(lambda rng: (small_integers(rng, (2, 5)),), argsort_ref, kwargs={"direction": "DESCENDING"})),
    ("searchsorted[left_int64]", "searchsorted",
     Spec(_search((1, 2, 0), (0, 3, 3)), searchsorted_ref, kwargs={"out_type": np.int64})),
    ("histogram_fixed_width[int32]", "histogram_fixed_width",
     fixed(_ints(0, 1, 2, 5, 9, 10, -3, 12), _ints(0, 10), ref=histogram_ref, kwargs={"nbins": 5})),
    ("one_hot[values]", "one_hot",
     fixed(_ints([0, 1], [2, 5]), ref=one_hot_ref, kwargs={"depth": 3, "on_value": 2.0, "off_value": -1.0})),
    ("one_hot[axis0_int]", "one_hot",
     fixed(_ints(1, 0), ref=one_hot_ref, kwargs={"depth": 2, "axis": 0, "on_value": 5})),
    ("one_hot[float64]", "one_hot", fixed(_ints(1, 0), ref=one_hot_ref, kwargs={"depth": 2, "dtype": np.float64})),
    ("strided_slice[masks]", "strided_slice",
     Spec(lambda rng: (normal(rng, (3, 4, 5)),), strided_slice_ref,
          kwargs={"begin": (1, 0, 2), "end": (0, 3, 0), "strides": (1, 2, -1), "begin_mask": 1, "end_mask": 5})),
    ("strided_slice[shrink_new_axis]", "strided_slice",
     Spec(lambda rng: (normal(rng, (3, 4, 5)),), strided_slice_ref,
          kwargs={"begin": (-1, 0, 1), "end": (0, 0, 3), "strides": (1, 1, 1), "new_axis_mask": 2,
                  "shrink_axis_mask": 1})),
    ("strided_slice[ellipsis]", "strided_slice",
     Spec(lambda rng: (normal(rng, (3, 4, 5)),), strided_slice_ref,
          kwargs={"begin": (0, 1), "end": (0, 4), "strides": (1, 2), "ellipsis_mask": 1})),
    ("repeat[flat]", "repeat", Spec(lambda rng: (normal(rng, (2, 2)),), repeat_ref, kwargs={"repeats": 2})),
    ("roll[same_axis_twice]", "roll",
     Spec(lambda rng: (normal(rng, (5,)),), lambda x, shift, axis: np.roll(x, sum(shift)),
          kwargs={"shift": (2, 4), "axis": (0, 0)})),
    ("meshgrid[ij]", "meshgrid",
     Spec(lambda rng: (normal(rng, (3,)), normal(rng, (2,)), normal(rng, (4,))),
          lambda *xs, indexing: tuple(np.meshgrid(*xs, indexing=indexing)), kwargs={"indexing": "ij"},
          variadic=True, tf_call=_call_meshgrid)),
    # global norm 0.5 < clip_norm 2: the tensors come back unchanged
    ("clip_by_global_norm[below]", "clip_by_global_norm",
     fixed([0.3, -0.4], 2.0, ref=clip_by_global_norm_ref, variadic=True, tf_call=_call_clip_by_global_norm,
           mixed="TypeError")),  # TF divides by clip_norm in Python: `x` and `y` must have the same dtype
]
