"""tf.strings: ops on the text of string tensors, as numpy functions on the host (string_values.py).

String tensors live on the host (XLA has no strings), so these ops are not table rows: each takes its inputs as
numpy object arrays of bytes and returns a tensor. They run eagerly, and inside tf.function on values known when
the function is traced; an input that is a traced number (known only when the step runs) raises
NotImplementedError. Results that TF returns as a tf.RaggedTensor (split, bytes_split, unicode_decode of more
than one string) are refused with NotImplementedError: tapejax has no RaggedTensor.
"""

from __future__ import annotations

import re
from typing import Any

import jax
import numpy as np

from tapejax._src import dtypes, errors
from tapejax._src.convert import on_device
from tapejax._src.printing import format_array
from tapejax._src.string_values import HostValueError, is_host, to_bytes_array
from tapejax._src.tensor import EagerTensor, Tensor, _Operators
from tapejax.ops import string_hashes
from tapejax.ops.array import convert_to_tensor


def _values(x: Any, api: str) -> np.ndarray:
    """The numpy value of an op input (any dtype); a traced tensor cannot be computed on the host."""
    if isinstance(x, _Operators):
        value = x._value if isinstance(x, Tensor) else x.read_value()._value
        if isinstance(value, jax.core.Tracer):
            raise HostValueError(
                f"tf.strings.{api} of a tensor computed inside tf.function: tapejax keeps strings on the host, so "
                "string ops run when the function is traced, on values known then. Call it outside the "
                "tf.function, or on Python/numpy values.")
        return value if is_host(value) else np.asarray(value)
    return np.asarray(convert_to_tensor(x)._value)


def _strings(x: Any, api: str) -> np.ndarray:
    """The object array of bytes of a string input; TF's errors for other dtypes."""
    if not isinstance(x, _Operators):
        try:
            return to_bytes_array(x) if not isinstance(x, np.ndarray) or x.dtype.kind in "SUO" else _values(x, api)
        except ValueError:
            raise TypeError(f"Cannot convert {x!r} to EagerTensor of dtype string") from None
    value = _values(x, api)
    if not is_host(value):
        if not isinstance(x, _Operators):
            raise TypeError(f"Cannot convert {x!r} to EagerTensor of dtype string")
        raise errors.invalid_argument(api, f"cannot compute {api} as input #0(zero-based) was expected to be a "
                                      f"string tensor but is a {dtypes.from_numpy(value.dtype).name} tensor")
    return value


def _tensor(array: Any) -> EagerTensor:
    array = np.asarray(array) if not isinstance(array, np.ndarray) else array
    # a transfer, not jnp.asarray: that compiles a copy for every new shape (a decoded file's length)
    return EagerTensor(array if array.dtype == object else on_device(array))


def _map(fn: Any, strings: np.ndarray, otype: Any = object) -> np.ndarray:
    out = np.empty(strings.shape, dtype=otype)
    out.ravel()[:] = [fn(s) for s in strings.ravel()]
    return out


# -- formatting -----------------------------------------------------------------------------------------------

def format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3, name: str | None = None):  # noqa: A001
    """Formats tensors into a string scalar as tf.print shows them (`tf.strings.format`).

    >>> import tapejax as tf
    >>> print(tf.strings.format("x={} y={}", (1, tf.range(10))))
    tf.Tensor(b'x=1 y=[0 1 2 ... 7 8 9]', shape=(), dtype=string)
    """
    if isinstance(inputs, _Operators):
        inputs = [inputs]
    n = len(inputs)  # as TF: a Python scalar is not a list of inputs (TypeError)
    parts = template.split(placeholder)
    if len(parts) - 1 != n:
        raise ValueError(f"The template expects {len(parts) - 1} tensors, but the inputs only has {n}. Please ensure "
                         "the number of placeholders in template matches inputs length.")
    texts = [format_array(_values(x if isinstance(x, _Operators) else convert_to_tensor(x), "format"), summarize)
             for x in inputs]
    out = parts[0] + "".join(t + p for t, p in zip(texts, parts[1:]))
    return _tensor(np.asarray(out.encode("utf-8"), dtype=object))


def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False,  # noqa: A002
              width: int = -1, fill: str = "", name: str | None = None):
    """Converts numbers to strings with C's printf formats, as TF (`tf.strings.as_string`, `tf.as_string`).

    >>> import tapejax as tf
    >>> print(tf.strings.as_string([1.5, 2.0]))
    tf.Tensor([b'1.500000' b'2.000000'], shape=(2,), dtype=string)
    """
    value = _values(input, "as_string")
    if is_host(value):
        return _tensor(value)
    if fill not in ("", " ", "0"):
        raise errors.invalid_argument("AsString", f"Fill argument not supported: \"{fill}\" (tapejax: only '' , ' ' "
                                      "and '0')")
    pad = ("0" if fill == "0" else "") + (str(width) if width > -1 else "")
    kind = value.dtype.kind
    if kind == "b":
        return _tensor(_map(lambda v: b"true" if v else b"false", value))
    if kind in "iu":
        spec = "%" + pad + "d"
        return _tensor(_map(lambda v: (spec % v).encode(), value))
    letter = "g" if shortest else "e" if scientific else "f"
    spec = "%" + pad + (f".{precision}" if precision > -1 else "") + letter
    if kind == "c":
        return _tensor(_map(lambda v: f"({spec % v.real},{spec % v.imag})".encode(), value))
    return _tensor(_map(lambda v: (spec % float(v)).encode(), value))


# -- per-element ops -----------------------------------------------------------------------------------------

def join(inputs: Any, separator: str = "", name: str | None = None):
    """Joins strings elementwise (`tf.strings.join`); scalars broadcast, other shapes must match."""
    arrays = [_strings(x, "StringJoin") for x in inputs]
    shapes = list(dict.fromkeys(a.shape for a in arrays if a.ndim))
    if len(shapes) > 1:
        raise errors.invalid_argument("StringJoin", "Input shapes do not match: " +
                                      " vs. ".join(str(list(s)) for s in shapes))
    shape = shapes[0] if shapes else ()
    sep = separator.encode() if isinstance(separator, str) else separator
    columns = [np.broadcast_to(a, shape).ravel() for a in arrays]
    out = np.empty(shape, dtype=object)
    out.ravel()[:] = [sep.join(row) for row in zip(*columns)] if columns else b""
    return _tensor(out)


def length(input: Any, unit: str = "BYTE", name: str | None = None):  # noqa: A002
    """The length of each string in bytes, or in Unicode code points with unit="UTF8_CHAR" (`tf.strings.length`)."""
    strings = _strings(input, "StringLength")
    count = len if unit == "BYTE" else lambda s: len(s.decode("utf-8", "replace"))
    return _tensor(_map(count, strings, np.int32))


def _case(convert: str):
    def fn(input: Any, encoding: str = "", name: str | None = None):  # noqa: A002
        strings = _strings(input, f"String{convert.capitalize()}")
        if encoding:  # Unicode case mapping; without an encoding TF maps ASCII letters only, as bytes.lower does
            return _tensor(_map(lambda s: getattr(s.decode("utf-8"), convert)().encode("utf-8"), strings))
        return _tensor(_map(lambda s: getattr(s, convert)(), strings))

    fn.__name__ = convert
    fn.__doc__ = f"`tf.strings.{convert}`: ASCII case mapping, or Unicode with encoding=\"utf-8\"."
    return fn


lower = _case("lower")
upper = _case("upper")


def strip(input: Any, name: str | None = None):  # noqa: A002
    """Strips leading and trailing ASCII whitespace (`tf.strings.strip`)."""
    return _tensor(_map(bytes.strip, _strings(input, "StringStrip")))


def _pattern(pattern: Any, op_type: str) -> re.Pattern:
    text = pattern.encode() if isinstance(pattern, str) else bytes(_strings(pattern, op_type).item())
    try:
        return re.compile(text)
    except re.error as e:
        raise errors.invalid_argument(op_type, f"Invalid pattern: {text.decode(errors='replace')}, error: {e}") from None


def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True,  # noqa: A002
                  name: str | None = None):
    """Replaces matches of an RE2 pattern (`tf.strings.regex_replace`; `\\1` names a group, `\\0` the match).

    Differences from TensorFlow: the pattern is compiled by Python's `re`, which reads RE2's common syntax alike.
    """
    compiled = _pattern(pattern, "StaticRegexReplace")
    template = (rewrite.encode() if isinstance(rewrite, str) else bytes(_strings(rewrite, "RegexReplace").item()))
    template = re.sub(rb"\\0", rb"\\g<0>", template)
    count = 0 if replace_global else 1
    return _tensor(_map(lambda s: compiled.sub(template, s, count=count), _strings(input, "StaticRegexReplace")))


def regex_full_match(input: Any, pattern: Any, name: str | None = None):  # noqa: A002
    """Whether each whole string matches an RE2 pattern (`tf.strings.regex_full_match`)."""
    compiled = _pattern(pattern, "StaticRegexFullMatch")
    return _tensor(_map(lambda s: compiled.fullmatch(s) is not None, _strings(input, "StaticRegexFullMatch"), bool))


def substr(input: Any, pos: Any, len: Any, unit: str = "BYTE", name: str | None = None):  # noqa: A002
    """Substrings from `pos` of length `len` (`tf.strings.substr`); a negative pos counts from the end."""
    strings = _strings(input, "Substr")
    starts, lengths = (np.asarray(_values(v, "substr")) for v in (pos, len))
    strings, starts, lengths = np.broadcast_arrays(strings, starts, lengths)
    out = np.empty(strings.shape, dtype=object)
    for i, (s, p, n) in enumerate(zip(strings.ravel(), starts.ravel(), lengths.ravel())):
        text = s.decode("utf-8") if unit == "UTF8_CHAR" else s
        size = builtins_len(text)
        if not -size <= p <= size:
            raise errors.invalid_argument("Substr", f"pos {int(p)} out of range for string {s!r} at index {i}")
        p = p + size if p < 0 else p
        piece = text[p:p + max(int(n), 0)]
        out.ravel()[i] = piece.encode("utf-8") if unit == "UTF8_CHAR" else piece
    return _tensor(out)


builtins_len = len  # `len` is substr's TF parameter name


def to_number(string_tensor: Any, out_type: Any = dtypes.float32, name: str | None = None):
    """Parses numbers (`tf.strings.to_number`); a string that is not one is an InvalidArgumentError."""
    target = dtypes.as_dtype(out_type)
    parse = int if target.is_integer else float

    def number(s: bytes) -> Any:
        try:
            return parse(s.decode("utf-8"))
        except ValueError:
            raise errors.invalid_argument("StringToNumber", "StringToNumberOp could not correctly convert string: "
                                          + s.decode("utf-8", "replace")) from None

    return _tensor(_map(number, _strings(string_tensor, "StringToNumber"), target.as_numpy_dtype))


def reduce_join(inputs: Any, axis: Any = None, keepdims: bool = False, separator: str = "",
                name: str | None = None):
    """Joins strings across dimensions (`tf.strings.reduce_join`), all of them by default."""
    strings = _strings(inputs, "ReduceJoin")
    axes = tuple(range(strings.ndim)) if axis is None else tuple(np.atleast_1d(np.asarray(axis)).tolist())
    axes = tuple(a % max(strings.ndim, 1) for a in axes)
    kept = [a for a in range(strings.ndim) if a not in axes]
    moved = strings.transpose(kept + list(axes)).reshape([strings.shape[a] for a in kept] + [-1])
    sep = separator.encode() if isinstance(separator, str) else separator
    out = np.empty(moved.shape[:-1], dtype=object)
    out.ravel()[:] = [sep.join(row) for row in moved.reshape(-1, moved.shape[-1])] if out.size else []
    if keepdims:
        out = out.reshape([1 if a in axes else strings.shape[a] for a in range(strings.ndim)])
    return _tensor(out)


# -- splitting (RaggedTensor results beyond one string) -------------------------------------------------------------

def _one(input: Any, api: str) -> bytes:
    strings = _strings(input, api)
    if strings.ndim:
        raise NotImplementedError(f"tf.strings.{api} of a rank-{strings.ndim} tensor returns a tf.RaggedTensor, "
                                  "which tapejax does not have: split one string at a time (a scalar input).")
    return strings.item()


def _vector(items: list) -> EagerTensor:
    out = np.empty(builtins_len(items), dtype=object)
    out[:] = items
    return _tensor(out)


def split(input: Any, sep: Any = None, maxsplit: int = -1, name: str | None = None):  # noqa: A002
    """Splits a string at `sep` (runs of whitespace by default) (`tf.strings.split`, for a scalar input)."""
    text = _one(input, "split")
    if sep is None or sep == "":
        return _vector(text.split(None, maxsplit))
    return _vector(text.split(sep.encode() if isinstance(sep, str) else sep, maxsplit))


def bytes_split(input: Any, name: str | None = None):  # noqa: A002
    """The bytes of a string, each a string (`tf.strings.bytes_split`, for a scalar input)."""
    return _vector([bytes([b]) for b in _one(input, "bytes_split")])


def unicode_split(input: Any, input_encoding: str, errors: str = "replace", replacement_char: int = 65533,  # noqa: A002
                  name: str | None = None):
    """The characters of a string, each a string (`tf.strings.unicode_split`, for a scalar input)."""
    text = _one(input, "unicode_split").decode(input_encoding, "replace")
    return _vector([c.encode(input_encoding) for c in text])


def unicode_decode(input: Any, input_encoding: str, errors: str = "replace", replacement_char: int = 65533,  # noqa: A002
                   replace_control_characters: bool = False, name: str | None = None):
    """The code points of a string as int32 (`tf.strings.unicode_decode`, for a scalar input)."""
    text = _one(input, "unicode_decode").decode(input_encoding, "replace")
    return _tensor(np.asarray([ord(c) for c in text], dtype=np.int32))


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace", replacement_char: int = 65533,  # noqa: A002
                   name: str | None = None):
    """Encodes code points (the last axis) as strings (`tf.strings.unicode_encode`)."""
    codes = np.asarray(_values(input, "unicode_encode"))
    out = np.empty(codes.shape[:-1], dtype=object)
    out.ravel()[:] = ["".join(map(chr, row)).encode(output_encoding) for row in codes.reshape(-1, codes.shape[-1])]
    return _tensor(out)


def to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None):  # noqa: A002
    """Each string's bucket, FarmHash's Fingerprint64 of its bytes modulo `num_buckets`, as int64
    (`tf.strings.to_hash_bucket_fast`)."""
    strings = _strings(input, "StringToHashBucketFast")
    return _tensor(string_hashes.buckets(strings, num_buckets, string_hashes.fingerprint64, "StringToHashBucketFast"))


def to_hash_bucket_strong(input: Any, num_buckets: int, key: Any, name: str | None = None):  # noqa: A002
    """Each string's bucket, SipHash-2-4 keyed by `key` (two integers) of its bytes modulo `num_buckets`, as int64
    (`tf.strings.to_hash_bucket_strong`)."""
    strings = _strings(input, "StringToHashBucketStrong")
    key = list(key)
    if len(key) != 2:
        raise errors.invalid_argument("StringToHashBucketStrong", "Key must have 2 elements")
    if any(not -2**63 <= int(k) < 2**63 for k in key):  # TF's attribute is a list of int64
        raise OverflowError("int too big to convert")
    k0, k1 = (int(k) & string_hashes.MASK for k in key)  # which the kernel reads as two uint64
    return _tensor(string_hashes.buckets(strings, num_buckets, lambda s: string_hashes.siphash24(s, k0, k1),
                                         "StringToHashBucketStrong"))
