"""tf.experimental.numpy's array creation and manipulation functions, onto tapejax's ops.

Creation from Python values is NumPy's own (a float64 `ones`, an int64 `arange`), put on the device once; every
function of tensors is a tapejax op, so it records on tapes and traces in tf.function like any op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tapejax import linalg as tfl
from tapejax import math as tfm
from tapejax._src import dtypes
from tapejax._src.tensor import Tensor, TensorShape
from tapejax._src.variable import Variable
from tapejax.ops import array as tfa

from .conversion import asarray, common, numpy_dtype
from .math_functions import FUNCTIONS as MATH, cast


def _is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor | Variable)


def _python(value: Any) -> Any:
    """A static argument (a size, a bound) as a Python/numpy value: tensors give their value."""
    return np.asarray(value).tolist() if _is_tensor(value) else value


def _shape(shape: Any) -> list[int]:
    shape = _python(shape)
    return [int(shape)] if np.ndim(shape) == 0 else [int(d) for d in shape]


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Tensor:  # noqa: A002 (NumPy's name)
    """NumPy's `array` (`tnp.array`): NumPy's dtypes for Python values; `ndmin` adds leading axes."""
    t = asarray(object, dtype)
    if t.shape.rank < ndmin:
        t = tfa.reshape(t, [1] * (ndmin - t.shape.rank) + t.shape.as_list())
    return tfa.identity(t) if copy and _is_tensor(object) else t


def _filled(value: float) -> Callable[..., Tensor]:
    def fn(shape: Any, dtype: Any = float) -> Tensor:
        return tfa.constant(np.full(_shape(shape), value, numpy_dtype(dtype)))

    return fn


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """NumPy's `full`: the value's dtype unless `dtype` is given."""
    value = asarray(fill_value, dtype)
    return tfa.broadcast_to(value, _shape(shape))


def _like(value: float | None) -> Callable[..., Tensor]:
    def fn(a: Any, dtype: Any = None, fill_value: Any = None) -> Tensor:
        t = asarray(a, dtype)
        fill = fill_value if value is None else value
        return tfa.broadcast_to(asarray(fill, t.dtype._np), tfa.shape(t))

    return fn


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """NumPy's `full_like`."""
    return _like(None)(a, dtype, fill_value)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    """NumPy's `arange` (int64 for ints, float64 for floats)."""
    start, stop = (0, start) if stop is None else (start, stop)
    values = np.arange(_python(start), _python(stop), _python(step))
    return asarray(values, dtype)


def _spaced(np_fn: Callable[..., Any]) -> Callable[..., Any]:
    def fn(start: Any, stop: Any, num: int = 50, *args: Any, **kwargs: Any) -> Any:
        if "dtype" in kwargs:
            kwargs["dtype"] = numpy_dtype(kwargs["dtype"])
        result = np_fn(_python(start), _python(stop), _python(num), *args, **kwargs)
        if isinstance(result, tuple):  # linspace(retstep=True)
            return asarray(result[0]), result[1]
        return asarray(result)

    return fn


def _eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> Tensor:  # noqa: N803 (NumPy's names)
    return tfa.constant(np.eye(_python(N), _python(M), _python(k), dtype=numpy_dtype(dtype)))


def _tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> Tensor:  # noqa: N803 (NumPy's names)
    return tfa.constant(np.tri(_python(N), _python(M), _python(k), dtype=numpy_dtype(dtype)))


def _axes(axis: Any, rank: int) -> list[int]:
    axis = range(rank) if axis is None else ([axis] if np.ndim(axis) == 0 else axis)
    return sorted(int(a) % rank for a in axis)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Tensor:
    """NumPy's `transpose`."""
    return tfa.transpose(asarray(a), perm=None if axes is None else list(axes))


def swapaxes(a: Any, axis1: int, axis2: int) -> Tensor:
    t = asarray(a)
    perm = list(range(t.shape.rank))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return tfa.transpose(t, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Tensor:
    t = asarray(a)
    rank = t.shape.rank
    source = [s % rank for s in ([source] if np.ndim(source) == 0 else source)]
    destination = [d % rank for d in ([destination] if np.ndim(destination) == 0 else destination)]
    perm = [i for i in range(rank) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        perm.insert(dest, src)
    return tfa.transpose(t, perm)


def _atleast(n: int) -> Callable[..., Any]:
    def fn(*arys: Any) -> Any:
        out = []
        for a in arys:
            t = asarray(a)
            rank = t.shape.rank
            if rank < n:
                shape = t.shape.as_list()
                shape = {0: [1] * n, 1: [1, *shape, 1][-n:] if n == 3 else [1, *shape]}.get(rank, [*shape, 1])
                t = tfa.reshape(t, shape)
            out.append(t)
        return out[0] if len(out) == 1 else out

    return fn


def _joined(axis_of: Callable[[int], int], at_least: int) -> Callable[..., Tensor]:
    def fn(tup: Sequence[Any]) -> Tensor:
        _, ts = common(*tup)
        ts = [_atleast(at_least)(t) for t in ts]
        return tfa.concat(ts, axis=axis_of(ts[0].shape.rank))

    return fn


def concatenate(arys: Sequence[Any], axis: int | None = 0) -> Tensor:
    """NumPy's `concatenate` (operands promoted as NumPy does; `axis=None` flattens)."""
    _, ts = common(*arys)
    if axis is None:
        ts, axis = [tfa.reshape(t, [-1]) for t in ts], 0
    return tfa.concat(ts, axis=axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Tensor:
    _, ts = common(*arrays)
    return tfa.stack(ts, axis=axis)


def append(arr: Any, values: Any, axis: int | None = None) -> Tensor:
    return concatenate([asarray(arr), asarray(values)], axis)  # TF converts both first: a list is not weak here


def _split(default_axis: int | None) -> Callable[..., list[Tensor]]:
    def fn(ary: Any, indices_or_sections: Any, axis: int | None = None) -> list[Tensor]:
        t = asarray(ary)
        axis = default_axis if axis is None else axis
        if default_axis == 1 and t.shape.rank == 1:
            axis = 0
        sections = _python(indices_or_sections)
        if np.ndim(sections) == 0:
            return tfa.split(t, int(sections), axis=axis)
        bounds = [0, *[int(i) for i in sections], t.shape[axis]]
        return tfa.split(t, [max(b - a, 0) for a, b in zip(bounds, bounds[1:])], axis=axis)

    return fn


def flip(m: Any, axis: Any = None) -> Tensor:
    t = asarray(m)
    return tfa.reverse(t, _axes(axis, t.shape.rank))


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Tensor:
    t = asarray(m)
    k %= 4
    a0, a1 = axes
    if k == 2:
        return flip(flip(t, a0), a1)
    perm = list(range(t.shape.rank))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return tfa.transpose(flip(t, a1), perm) if k == 1 else flip(tfa.transpose(t, perm), a1) if k == 3 else t


def roll(a: Any, shift: Any, axis: Any = None) -> Tensor:
    t = asarray(a)
    if axis is None:
        return tfa.reshape(tfa.roll(tfa.reshape(t, [-1]), shift, 0), tfa.shape(t))
    return tfa.roll(t, shift, axis)


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Tensor:
    t = asarray(a)
    if axis is None:
        t, axis = tfa.reshape(t, [-1]), 0
    return tfa.repeat(t, repeats, axis=axis)


def diag(v: Any, k: int = 0) -> Tensor:
    t = asarray(v)
    if t.shape.rank == 1:
        return tfl.diag(t, k=k)
    return tfl.diag_part(t, k=k)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    t = moveaxis(a, (axis1, axis2), (-2, -1))
    return tfl.diag_part(t, k=offset)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Tensor:
    return MATH["sum"](diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _band(lower: bool) -> Callable[..., Tensor]:
    def fn(m: Any, k: int = 0) -> Tensor:
        t = asarray(m)
        rows, cols = t.shape[-2], t.shape[-1]
        mask = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
        return tfa.where(tfa.constant(mask), t, tfa.zeros_like(t))

    return fn


def _cumulative(np_fn: Callable[..., Any], tf_fn: Callable[..., Any]) -> Callable[..., Tensor]:
    def fn(a: Any, axis: int | None = None, dtype: Any = None) -> Tensor:
        t = asarray(a)
        t = cast(t, numpy_dtype(dtype) or np_fn(np.ones(1, t.dtype._np)).dtype)
        if axis is None:
            t, axis = tfa.reshape(t, [-1]), 0
        return tf_fn(t, axis=axis)

    return fn


def diff(a: Any, n: int = 1, axis: int = -1) -> Tensor:
    t = asarray(a)
    for _ in range(n):
        t = tfa.gather(t, list(range(1, t.shape[axis])), axis=axis) - tfa.gather(t, list(range(t.shape[axis] - 1)),
                                                                                   axis=axis)
    return t


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """NumPy's `where`: with `x` and `y`, a select (promoted); without, the indices of the true values."""
    cond = tfa.cast(asarray(condition), dtypes.bool_)
    if x is None and y is None:
        return nonzero(cond)
    _, (tx, ty) = common(x, y)
    return tfa.where(cond, tx, ty)


def nonzero(a: Any) -> list[Tensor]:
    """NumPy's `nonzero`: one int64 tensor of indices per axis (values needed: eager only)."""
    t = asarray(a)
    return [tfa.constant(i.astype(np.int64)) for i in np.nonzero(np.asarray(t))]


def take(a: Any, indices: Any, axis: int | None = None) -> Tensor:
    t = asarray(a)
    if axis is None:
        t, axis = tfa.reshape(t, [-1]), 0
    return tfa.gather(t, asarray(indices), axis=axis)


def take_along_axis(arr: Any, indices: Any, axis: int) -> Tensor:
    """NumPy's `take_along_axis`: a batched gather along `axis`."""
    t, i = moveaxis(arr, axis, -1), moveaxis(indices, axis, -1)
    return moveaxis(tfa.gather(t, i, axis=-1, batch_dims=t.shape.rank - 1), -1, axis)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    _, (ta, tb) = common(a, b)
    close = tfm.less_equal(tfm.abs(ta - tb), atol + rtol * tfm.abs(tb))
    if equal_nan and ta.dtype.is_floating:
        close = tfm.logical_or(close, tfm.logical_and(tfm.is_nan(ta), tfm.is_nan(tb)))
    return tfm.logical_or(close, tfm.equal(ta, tb))


def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Tensor:  # noqa: A002
    t = asarray(array)
    width = np.broadcast_to(np.asarray(_python(pad_width)), (t.shape.rank, 2)).tolist()
    return tfa.pad(t, width, mode=mode.upper(), constant_values=constant_values)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "array": array, "asarray": asarray, "asanyarray": asarray, "ascontiguousarray": asarray,
    "copy": lambda a: tfa.identity(asarray(a)),
    "zeros": _filled(0), "ones": _filled(1), "empty": _filled(0), "full": full,
    "zeros_like": _like(0), "ones_like": _like(1), "empty_like": _like(0), "full_like": full_like,
    "arange": arange, "linspace": _spaced(np.linspace), "logspace": _spaced(np.logspace),
    "geomspace": _spaced(np.geomspace), "eye": _eye, "tri": _tri,
    "identity": lambda n, dtype=float: _eye(n, dtype=dtype),
    "reshape": lambda a, newshape, order="C": tfa.reshape(asarray(a), _shape(newshape)),
    "ravel": lambda a: tfa.reshape(asarray(a), [-1]), "transpose": transpose, "swapaxes": swapaxes,
    "moveaxis": moveaxis, "squeeze": lambda a, axis=None: tfa.squeeze(asarray(a), axis=axis),
    "expand_dims": lambda a, axis: tfa.expand_dims(asarray(a), axis),
    "atleast_1d": _atleast(1), "atleast_2d": _atleast(2), "atleast_3d": _atleast(3),
    "broadcast_to": lambda array, shape: tfa.broadcast_to(asarray(array), _shape(shape)),
    "broadcast_arrays": lambda *args: [tfa.broadcast_to(t, np.broadcast_shapes(*[tuple(u.shape) for u in ts]))
                                       for ts in [[asarray(a) for a in args]] for t in ts],
    "concatenate": concatenate, "stack": stack, "append": append,
    "hstack": _joined(lambda rank: 0 if rank == 1 else 1, 1), "vstack": _joined(lambda rank: 0, 2),
    "dstack": _joined(lambda rank: 2, 3),
    "split": _split(0), "hsplit": _split(1), "vsplit": _split(0), "dsplit": _split(2),
    "flip": flip, "fliplr": lambda m: flip(m, 1), "flipud": lambda m: flip(m, 0), "rot90": rot90, "roll": roll,
    "tile": lambda A, reps: tfa.tile(_atleast(len(_shape(reps)))(A), _shape(reps)), "repeat": repeat,  # noqa: N803
    "diag": diag, "diagonal": diagonal, "trace": trace, "tril": _band(True), "triu": _band(False),
    "cumsum": _cumulative(np.cumsum, tfm.cumsum), "cumprod": _cumulative(np.cumprod, tfm.cumprod), "diff": diff,
    "sort": lambda a, axis=-1, kind=None, order=None: tfa.sort(asarray(a), axis=axis),
    "argsort": lambda a, axis=-1, kind=None, order=None: tfa.cast(tfa.argsort(asarray(a), axis=axis, stable=True),
                                                                   dtypes.int64),
    "where": where, "nonzero": nonzero, "take": take,
    "take_along_axis": take_along_axis,
    "einsum": lambda subscripts, *operands: tfa.einsum(subscripts, *common(*operands)[1]),
    "tensordot": lambda a, b, axes=2: tfl.tensordot(*common(a, b)[1], axes),
    "cross": lambda a, b: tfl.cross(*common(a, b)[1]),
    "meshgrid": lambda *xi, indexing="xy": tfa.meshgrid(*[asarray(x) for x in xi], indexing=indexing),
    "isclose": isclose,
    "allclose": lambda a, b, rtol=1e-05, atol=1e-08, equal_nan=False: tfm.reduce_all(
        isclose(a, b, rtol, atol, equal_nan)),
    "array_equal": lambda a1, a2: tfa.constant(tuple(asarray(a1).shape) == tuple(asarray(a2).shape)
                                               and bool(np.all(np.asarray(asarray(a1)) == np.asarray(asarray(a2))))),
    "pad": pad,
    "polyval": lambda p, x: tfm.polyval(tfa.unstack(asarray(p)), asarray(x)),
    "shape": lambda a: TensorShape(asarray(a).shape),
    "size": lambda a, axis=None: np.int64(np.prod(asarray(a).shape.as_list()) if axis is None
                                          else asarray(a).shape[axis]),
    "ndim": lambda a: asarray(a).shape.rank,
    "isscalar": lambda num: np.isscalar(num) or _is_tensor(num) and num.shape.rank == 0,
    "iscomplexobj": lambda x: asarray(x).dtype.is_complex, "isrealobj": lambda x: not asarray(x).dtype.is_complex,
    "iscomplex": lambda x: tfm.not_equal(MATH["imag"](x), 0), "isreal": lambda x: tfm.equal(MATH["imag"](x), 0),
}
