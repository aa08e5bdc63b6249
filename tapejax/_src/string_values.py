"""String tensors: values of dtype tf.string, held on the host as numpy object arrays of `bytes`.

XLA has no string type, so a string tensor's value is a numpy array of dtype object whose elements are bytes, as
TF's `.numpy()` returns it. Ops that only move elements (reshape, gather, concat, slicing, where, ...) run their
own JAX implementation on *interned ids* (one uint32 per distinct string, 0 for b""), and the ids they return are
mapped back to strings: every such op gets TF's exact semantics with no code of its own, and equality ops compare
ids. Such an op is computed by numpy where JAX would compile it for each new signature (20-30 ms: slicing and
shuffling a list of file names compiled nine executables in TF's audio tutorial, and a dataset's label lookup
two): equality, `tf.gather` and static indexing directly, others by evaluating their jaxpr
(`one_off.host_values`) for the first `HOST_RUNS` calls of a signature; either way exactly the executable's ids.
Ops that compute on the text itself (tf.strings) are numpy functions in tapejax/ops/strings.py.

Inside tf.function a string value is a trace-time constant: an op whose inputs are all known when the function is
traced runs then; one that would depend on a traced (numeric) value cannot, and raises NotImplementedError.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from . import caches, checking, dtypes, errors, one_off

# TF ops whose outputs are elements of their string inputs (or shapes, or comparisons of them): run on ids.
MOVES_ELEMENTS = frozenset({
    "__eq__", "__ne__", "math.equal", "math.not_equal", "__getitem__", "strided_slice", "slice", "boolean_mask",
    "broadcast_to", "concat", "expand_dims", "fill", "gather", "gather_nd", "identity", "pad", "random.shuffle",
    "rank", "repeat", "reshape", "reverse", "roll", "shape", "size", "split", "squeeze", "stack", "stop_gradient",
    "tile", "transpose", "unique", "unstack", "where", "zeros_like", "tensor_scatter_nd_update", "scatter_nd",
})

# TF ops that compute on strings elementwise: `tf.constant("a") + "b"` concatenates.
_CONCATENATE = np.frompyfunc(operator.add, 2, 1)


def _cast(x: np.ndarray, dtype: Any) -> np.ndarray:
    if np.dtype(getattr(dtype, "dtype", dtype)) != object:
        raise cast_error(x.dtype, dtype)
    return x


def cast_error(source: Any, target: Any) -> Exception:
    """TF's error for tf.cast between a string and a number (tf.strings.as_string / to_number convert)."""
    names = [dtypes.as_dtype(d).name for d in (source, target)]
    return errors.UnimplementedError(None, None, f"Cast {names[0]} to {names[1]} is not supported; use "
                                     "tf.strings.as_string or tf.strings.to_number [Op:Cast] name: ")


ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "math.add": lambda x, y: np.asarray(_CONCATENATE(x, y), dtype=object), "cast": _cast}

class HostValueError(NotImplementedError):
    """A string op met a value known only when a compiled function runs (inside tf.function or a tf.data map):
    strings live on the host, so the caller must run the function eagerly or on known values."""


_IDS = np.uint32  # the dtype of interned ids: no element-moving op makes it from other inputs


def is_host(value: Any) -> bool:
    """Whether `value` is a string tensor's value (a numpy object array)."""
    return type(value) is np.ndarray and value.dtype == object


def _to_bytes(x: Any) -> bytes:
    if type(x) is bytes:
        return x
    if isinstance(x, str):
        return str.encode(x, "utf-8")  # str's own method: np.str_.encode would give an np.bytes_
    if isinstance(x, bytes):  # np.bytes_
        return bytes(x)
    raise ValueError("Can't convert Python sequence with mixed types to Tensor.")


def is_text(value: Any) -> bool:
    """Whether a Python or numpy value converts to a string tensor (str/bytes, nested lists of them, S/U/O arrays)."""
    if isinstance(value, str | bytes | np.str_ | np.bytes_):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SUO" and (value.dtype.kind != "O" or value.size == 0
                                              or isinstance(value.flat[0], str | bytes))
    if isinstance(value, list | tuple) and value:
        first = value[0]
        while isinstance(first, list | tuple) and first:
            first = first[0]
        return isinstance(first, str | bytes | np.str_ | np.bytes_)
    return False


def to_bytes_array(value: Any) -> np.ndarray:
    """The object array of bytes for a str/bytes value, nested lists of them or a numpy string array (str is
    UTF-8 encoded, as in TF)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "SUO":
        shaped = value
    else:
        try:
            shaped = np.array(value, dtype=object)
        except ValueError:
            shaped = None
        if shaped is None or shaped.dtype != object or any(isinstance(x, list | tuple) for x in shaped.flat):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.")
    out = np.empty(shaped.shape, dtype=object)
    out.ravel()[:] = [_to_bytes(x) for x in shaped.ravel()] if shaped.size else []
    return out


def _intern(vals: list) -> tuple[list, np.ndarray]:
    """The inputs with each string array replaced by its ids, and the table of strings by id (0 is b"")."""
    pool: dict[bytes, int] = {b"": 0}
    ids = []
    for v in vals:
        if is_host(v):
            flat = [pool.setdefault(s, len(pool)) for s in v.ravel()]
            ids.append(np.asarray(flat, dtype=_IDS).reshape(v.shape))
        else:
            ids.append(v)
    table = np.empty(len(pool), dtype=object)
    table[:] = list(pool)
    return ids, table


def apply_on_host(name: str, op_type: str, fn: Callable[..., Any], vals: list, params: dict[str, Any]) -> Any:
    """Runs the op `name` (its executable `fn`, static `params`) on inputs some of which are string values; see
    the module doc."""
    host = ELEMENTWISE.get(name)
    if host is not None:
        return host(*vals, **params)
    if name not in MOVES_ELEMENTS:
        raise errors.invalid_argument(op_type, f"Value for attr 'T' of string is not in the list of allowed "
                                      f"values; tf.{name} does not take string tensors (NodeDef: {op_type})")
    ids, table = _intern(vals)
    out = _moved_on_host(name, fn, ids, params)
    if out is None:
        with jax.ensure_compile_time_eval():  # inside tf.function: computed now, on the values known at trace time
            out = fn(*ids)
    multiple = type(out) is tuple or type(out) is list
    outs = [_from_ids(o, table, name) for o in (out if multiple else (out,))]
    return outs if multiple else outs[0]


# Host runs of a signature whose host run traces a jaxpr (~1 ms more than the executable's) before it runs the
# executable instead (compiled once, 20-30 ms): ski rental. The ops numpy does directly (`_DIRECT`) always run on the
# host, where they cost less than the executable's dispatch and its round trip of ids through the device.
HOST_RUNS = 16
_HOST_RUNS = caches.Memo("string ops' signatures run on the host (string_values.py)", 4096)


def _moved_on_host(name: str, fn: Callable[..., Any], ids: list, params: dict[str, Any]) -> Any:
    """The op on `ids` computed by numpy, bit for bit the executable's, or None: run the executable (numpy refuses
    the inputs, whose error the executable raises; an op that is not pure data movement; a traced or off-CPU
    input; a signature seen HOST_RUNS times)."""
    if name in _DIRECT:
        out = _DIRECT[name](*ids, **params) if not any(isinstance(v, jax.core.Tracer) for v in ids) else None
    else:
        signature = (name, *sorted(params.items()), *[(np.shape(v), getattr(v, "dtype", None)) for v in ids])
        try:
            runs = _HOST_RUNS.get(signature, 0)
        except TypeError:  # a parameter that is not hashable: no memo of it
            return None
        if runs >= HOST_RUNS:
            return None
        _HOST_RUNS[signature] = runs + 1
        try:
            out = one_off.host_values(fn, *ids)
        except Exception:  # noqa: BLE001 (no jaxpr: a shape set by values, tf.unique's; the executable decides)
            out = None
    if out is not None and checking.FLAG.on:
        checking.require("string op on the host (string_values.py)",
                         checking.same_bits(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(fn(*ids))),
                         f"tf.{name}: host values differ from the executable's")
    return out


def _equality(ufunc: Any) -> Callable[..., Any]:
    def compare(*ids: Any, **params: Any) -> Any:
        """Ids of strings compared (exactly; numpy's broadcasting is TF's); None for anything else."""
        if params or len(ids) != 2 or not all(type(v) is np.ndarray and v.dtype == _IDS for v in ids):
            return None
        try:
            return ufunc(*ids)
        except ValueError:  # shapes that do not broadcast
            return None

    return compare


def _host_getitem(x: Any, key: tuple) -> Any:
    """`x[key]` for a static key (integers, slices, Ellipsis, None: numpy's basic indexing is TF's)."""
    index = []
    for k in key:
        if k is None or k is Ellipsis or type(k) is int:
            index.append(k)
        elif isinstance(k, tuple) and k[0] == "slice":
            index.append(slice(*k[1:]))
        else:  # a position passed as an argument, a window: the executable's
            return None
    try:
        return np.asarray(np.asarray(x)[tuple(index)])
    except IndexError:  # out of range, too many indices
        return None


def _host_gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None,
                 batch_dims: int = 0) -> Any:
    """`tf.gather` of ids by `np.take`; None where the executable decides (batch_dims, an index out of range, whose
    error it raises)."""
    if batch_dims:
        return None
    axis = 0 if axis is None else axis
    params, indices = np.asarray(params), np.asarray(indices)
    if (indices.dtype.kind not in "iu" or not -params.ndim <= axis < params.ndim
            or (indices.size and (indices.min() < 0 or indices.max() >= params.shape[axis]))):
        return None
    return np.take(params, indices, axis=axis)


_DIRECT: dict[str, Callable[..., Any]] = {
    "__eq__": _equality(np.equal), "math.equal": _equality(np.equal), "__ne__": _equality(np.not_equal),
    "math.not_equal": _equality(np.not_equal), "gather": _host_gather, "__getitem__": _host_getitem}


def _from_ids(out: Any, table: np.ndarray, name: str) -> Any:
    if isinstance(out, jax.core.Tracer):
        raise HostValueError(
            f"tf.{name} on a string tensor inside tf.function depends on a traced value: tapejax keeps strings on "
            "the host, so string ops run when the function is traced, on values known then. Compute the index or "
            "condition outside the tf.function, or pass it as a Python value.")
    if out.dtype == _IDS:
        return np.asarray(table[np.asarray(out)], dtype=object)
    return out
