"""tf.train.Example and its parts as protocol buffers, and tf.io.parse_single_example / parse_example.

The messages are TF's (package `tensorflow`, feature.proto and example.proto), declared here as a protobuf
descriptor and built by the `protobuf` library: the bytes they serialize to are TF's. Parsing supports
FixedLenFeature (with default values); VarLenFeature and SparseFeature need tf.SparseTensor, which tapejax does
not have, and raise NotImplementedError.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tapejax._src import dtypes, errors
from tapejax.ops.strings import _strings, _tensor


MESSAGES = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList", "FeatureLists", "Example",
            "SequenceExample")
_CLASSES: dict[str, Any] = {}


def messages() -> dict[str, Any]:
    """The message classes by name, built on first use (protobuf is an optional dependency: the `io` extra)."""
    if not _CLASSES:
        _CLASSES.update(_build())
    return _CLASSES


def __getattr__(name: str) -> Any:
    if name in MESSAGES:
        return messages()[name]
    raise AttributeError(name)


def _build() -> dict[str, Any]:
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise ImportError("tf.train.Example needs protobuf: pip install 'tapejax[io]'.") from None
    proto = descriptor_pb2.FileDescriptorProto(name="tapejax/example.proto", package="tensorflow", syntax="proto3")
    field = descriptor_pb2.FieldDescriptorProto
    repeated, optional = field.LABEL_REPEATED, field.LABEL_OPTIONAL

    def message(name: str, *fields: tuple) -> Any:
        m = proto.message_type.add(name=name)
        for number, (fname, ftype, label, type_name, *oneof) in enumerate(fields, 1):
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
            if oneof:
                f.oneof_index = 0
        return m

    def map_entry(parent: Any, name: str, value_type: str) -> None:
        entry = parent.nested_type.add(name=name)
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=field.TYPE_STRING, label=optional)
        entry.field.add(name="value", number=2, type=field.TYPE_MESSAGE, label=optional, type_name=value_type)

    message("BytesList", ("value", field.TYPE_BYTES, repeated, ""))
    message("FloatList", ("value", field.TYPE_FLOAT, repeated, ""))
    message("Int64List", ("value", field.TYPE_INT64, repeated, ""))
    feature = message("Feature", ("bytes_list", field.TYPE_MESSAGE, optional, ".tensorflow.BytesList", 0),
                      ("float_list", field.TYPE_MESSAGE, optional, ".tensorflow.FloatList", 0),
                      ("int64_list", field.TYPE_MESSAGE, optional, ".tensorflow.Int64List", 0))
    feature.oneof_decl.add(name="kind")
    features = message("Features", ("feature", field.TYPE_MESSAGE, repeated, ".tensorflow.Features.FeatureEntry"))
    map_entry(features, "FeatureEntry", ".tensorflow.Feature")
    message("FeatureList", ("feature", field.TYPE_MESSAGE, repeated, ".tensorflow.Feature"))
    lists = message("FeatureLists", ("feature_list", field.TYPE_MESSAGE, repeated,
                                     ".tensorflow.FeatureLists.FeatureListEntry"))
    map_entry(lists, "FeatureListEntry", ".tensorflow.FeatureList")
    message("Example", ("features", field.TYPE_MESSAGE, optional, ".tensorflow.Features"))
    message("SequenceExample", ("context", field.TYPE_MESSAGE, optional, ".tensorflow.Features"),
            ("feature_lists", field.TYPE_MESSAGE, optional, ".tensorflow.FeatureLists"))
    pool = descriptor_pool.DescriptorPool()  # our own pool: TF's, if imported too, keeps its own
    pool.Add(proto)
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{n}")) for n in MESSAGES}


class FixedLenFeature(NamedTuple):
    """A feature of fixed shape (`tf.io.FixedLenFeature`); `default_value` fills it when an example lacks it."""

    shape: Any
    dtype: Any
    default_value: Any = None


class VarLenFeature(NamedTuple):
    """`tf.io.VarLenFeature`: declared for compatibility; parsing one needs tf.SparseTensor (not in tapejax)."""

    dtype: Any


_KINDS = {"string": "bytes_list", "float32": "float_list", "int64": "int64_list"}


def _parse_one(serialized: bytes, features: dict[str, Any], op_type: str) -> dict[str, np.ndarray]:
    example = messages()["Example"]()
    try:
        example.ParseFromString(serialized)
    except Exception:
        raise errors.InvalidArgumentError(None, None, f"Could not parse example input, value: '{serialized!r}' "
                                          f"[Op:{op_type}]") from None
    out = {}
    for key, spec in features.items():
        if not isinstance(spec, FixedLenFeature):
            raise NotImplementedError(f"{type(spec).__name__} for feature {key!r}: tapejax parses FixedLenFeature "
                                      "only (VarLenFeature and SparseFeature give a tf.SparseTensor, which tapejax "
                                      "does not have).")
        dtype = dtypes.as_dtype(spec.dtype)
        kind = _KINDS.get(dtype.name)
        if kind is None:
            raise ValueError(f"Unsupported dtype {dtype.name} for feature {key!r}: expected tf.string, tf.float32 or "
                             "tf.int64.")
        shape = [int(d) for d in spec.shape] if not isinstance(spec.shape, int) else [spec.shape]
        if key in example.features.feature:
            feature = example.features.feature[key]
            found = feature.WhichOneof("kind")
            values = list(getattr(feature, found).value) if found else []
            if found not in (kind, None):
                raise errors.InvalidArgumentError(None, None, f"Name: <unknown>, Feature: {key} (data type: "
                                                  f"{dtype.name}) is required but could not be found... the data "
                                                  f"has type {found} [Op:{op_type}]")
            if len(values) != int(np.prod(shape)):
                raise errors.InvalidArgumentError(None, None, f"Key: {key}.  Can't parse serialized Example: "
                                                  f"expected {int(np.prod(shape))} values, found {len(values)} "
                                                  f"[Op:{op_type}]")
        elif spec.default_value is not None:
            values = np.broadcast_to(np.asarray(_default(spec.default_value, dtype), dtype=dtype.as_numpy_dtype),
                                     shape).ravel().tolist()
        else:
            raise errors.InvalidArgumentError(None, None, f"Feature: {key} (data type: {dtype.name}) is required "
                                              f"but could not be found. [Op:{op_type}]")
        array = np.empty(len(values), dtype=object) if kind == "bytes_list" else None
        if array is not None:
            array[:] = values
        else:
            array = np.asarray(values, dtype=dtype.as_numpy_dtype)
        out[key] = array.reshape(shape)
    return out


def _default(value: Any, dtype: dtypes.DType) -> Any:
    if dtype == dtypes.string:
        return _strings(value, "ParseExample")
    return value.numpy() if hasattr(value, "numpy") else value


def _serialized(serialized: Any, op_type: str) -> np.ndarray:
    return _strings(serialized, op_type)


def parse_single_example(serialized: Any, features: dict[str, Any], example_names: Any = None,
                         name: str | None = None) -> dict[str, Any]:
    """Parses one serialized tf.train.Example into a dict of tensors (`tf.io.parse_single_example`)."""
    data = _serialized(serialized, "ParseExampleV2")
    if data.ndim:
        raise ValueError(f"Input serialized must be a scalar, got shape {list(data.shape)}")
    return {k: _tensor(v) for k, v in _parse_one(data.item(), features, "ParseExampleV2").items()}


def parse_example(serialized: Any, features: dict[str, Any], example_names: Any = None,
                  name: str | None = None) -> dict[str, Any]:
    """Parses a vector of serialized tf.train.Examples into a dict of batched tensors (`tf.io.parse_example`)."""
    data = _serialized(serialized, "ParseExampleV2")
    if data.ndim != 1:
        raise ValueError(f"Input serialized must be a vector, got shape {list(data.shape)}")
    parsed = [_parse_one(s, features, "ParseExampleV2") for s in data]
    out = {}
    for key, spec in features.items():
        shape = [len(parsed), *(int(d) for d in spec.shape)]
        dtype = dtypes.as_dtype(spec.dtype)
        array = np.empty(shape, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
        for i, p in enumerate(parsed):
            array[i] = p[key]
        out[key] = _tensor(array)
    return out
