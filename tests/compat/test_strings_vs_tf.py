"""String tensors and tf.strings against TensorFlow 2.21: values, dtypes, shapes, printed forms and exception
types, each snippet run in both."""

from __future__ import annotations

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402


def _plain(x):
    """A comparable form of a result: tensors as (dtype, shape, values as Python lists)."""
    if isinstance(x, list | tuple):
        return type(x).__name__, [_plain(v) for v in x]
    if hasattr(x, "numpy") and hasattr(x, "dtype"):
        value = x.numpy()
        return x.dtype.name, tuple(x.shape), value.tolist() if isinstance(value, np.ndarray) else value
    return x


def _outcome(case, tf):
    try:
        return _plain(case(tf))
    except Exception as e:  # noqa: BLE001 (the exception's type is the outcome)
        return type(e).__name__


def _same(case):
    expected, got = _outcome(case, tf_real), _outcome(case, tapejax)
    assert got == expected, f"tapejax {got!r}, TensorFlow {expected!r}"


C = lambda tf, v: tf.constant(v)  # noqa: E731

CREATION = {
    "scalar": lambda tf: tf.constant("hello"),
    "unicode": lambda tf: tf.constant("héllo"),
    "list": lambda tf: tf.constant([b"a", "bc"]),
    "nested": lambda tf: tf.constant([["a", "b"], ["c", "d"]]),
    "numpy_unicode": lambda tf: tf.constant(np.array(["a", "b"])),
    "numpy_bytes": lambda tf: tf.constant(np.array([b"a", b"b"])),
    "numpy_object": lambda tf: tf.constant(np.array(["a", b"b"], dtype=object)),
    "dtype_string": lambda tf: tf.constant("a", dtype=tf.string),
    "shape": lambda tf: tf.constant("a", shape=[2, 2]),
    "convert": lambda tf: tf.convert_to_tensor(["x"]),
    "int_as_string": lambda tf: tf.constant(1, dtype=tf.string),
    "string_as_int": lambda tf: tf.constant("a", dtype=tf.int32),
    "mixed": lambda tf: tf.constant(["a", 1]),
    "dtype_attrs": lambda tf: (tf.string.name, tf.string.is_numeric, tf.string.size, tf.string.is_floating,
                               tf.string.as_numpy_dtype is object, tf.as_dtype(np.bytes_) == tf.string,
                               tf.as_dtype("string") == tf.string, tf.constant("a").dtype == tf.string),
    "device": lambda tf: tf.constant("a").device,
    "len_iter": lambda tf: (len(tf.constant(["a", "b"])), [t for t in tf.constant(["a", "b"])]),
}

OPS = {
    "reshape": lambda tf: tf.reshape(C(tf, ["a", "b", "c", "d"]), [2, 2]),
    "stack": lambda tf: tf.stack(["a", "b"]),
    "concat": lambda tf: tf.concat([["a"], ["b", "c"]], 0),
    "gather": lambda tf: tf.gather(C(tf, ["a", "b"]), [1, 1, 0]),
    "gather_nd": lambda tf: tf.gather_nd(C(tf, ["a", "b"]), [[1]]),
    "tile": lambda tf: tf.tile(C(tf, [["a", "b"]]), [2, 2]),
    "expand_dims": lambda tf: tf.expand_dims(C(tf, "a"), 0),
    "squeeze": lambda tf: tf.squeeze(C(tf, [["a"]])),
    "identity": lambda tf: tf.identity(C(tf, "a")),
    "where_python": lambda tf: tf.where([True, False], "a", "b"),
    "where": lambda tf: tf.where(C(tf, [True, False]), C(tf, ["a", "b"]), C(tf, ["c", "d"])),
    "boolean_mask": lambda tf: tf.boolean_mask(C(tf, ["a", "b", "c"]), [True, False, True]),
    "equal": lambda tf: tf.equal(C(tf, ["a", "b"]), "a"),
    "eq_operator": lambda tf: C(tf, ["a", "b"]) == "b",
    "ne_operator": lambda tf: C(tf, ["a", "b"]) != "b",
    "eq_broadcast": lambda tf: C(tf, [["a"], ["b"]]) == C(tf, ["a", "b"]),
    "size": lambda tf: tf.size(C(tf, [["a", "b"]])),
    "shape_of": lambda tf: tf.shape(C(tf, [["a", "b"]])),
    "rank": lambda tf: tf.rank(C(tf, ["a"])),
    "slice_operator": lambda tf: C(tf, ["a", "b", "c"])[1:],
    "index_operator": lambda tf: C(tf, [["a", "b"], ["c", "d"]])[1, 0],
    "reverse": lambda tf: tf.reverse(C(tf, ["a", "b"]), [0]),
    "transpose": lambda tf: tf.transpose(C(tf, [["a", "b"]])),
    "unstack": lambda tf: tf.unstack(C(tf, ["a", "b"])),
    "split": lambda tf: tf.split(C(tf, ["a", "b", "c", "d"]), 2),
    "unique": lambda tf: tuple(tf.unique(C(tf, ["b", "a", "b"]))),
    "broadcast_to": lambda tf: tf.broadcast_to(C(tf, "a"), [2]),
    "pad": lambda tf: tf.pad(C(tf, ["a"]), [[1, 0]]),
    "slice": lambda tf: tf.slice(C(tf, ["a", "b", "c"]), [1], [2]),
    "fill": lambda tf: tf.fill([2], "x"),
    "add": lambda tf: C(tf, "a") + "b",
    "add_broadcast": lambda tf: tf.add(C(tf, "a"), C(tf, ["b", "c"])),
    "cast_to_string": lambda tf: tf.cast(C(tf, 1), tf.string),
    "cast_from_string": lambda tf: tf.cast(C(tf, "1"), tf.int32),
    "cast_string_string": lambda tf: tf.cast(C(tf, "1"), tf.string),
    "sin": lambda tf: tf.math.sin(C(tf, "a")),
    "reduce_sum": lambda tf: tf.reduce_sum(C(tf, ["a"])),
    "less": lambda tf: C(tf, "a") < C(tf, "b"),
    "sort": lambda tf: tf.sort(C(tf, ["b", "a"])),
    "string_plus_float": lambda tf: C(tf, 1.0) + "a",
}

STRINGS = {
    "format": lambda tf: tf.strings.format("x={} y={}", (1, tf.constant([1.5, 2.0]))),
    "format_summarize": lambda tf: tf.strings.format("{}", tf.range(10), summarize=2),
    "format_matrix": lambda tf: tf.strings.format("{}", tf.reshape(tf.range(12), [3, 4])),
    "format_3d": lambda tf: tf.strings.format("{}", tf.reshape(tf.range(24), [2, 3, 4]), summarize=1),
    "format_strings": lambda tf: tf.strings.format("{} {}", [tf.constant(["é", 'a"b']), "x"]),
    "format_bool_float": lambda tf: tf.strings.format("{} {} {}", [True, tf.constant(0.1),
                                                                  tf.constant(0.1, tf.float64)]),
    "format_python_scalar": lambda tf: tf.strings.format("a {} b", 3.5),
    "format_count": lambda tf: tf.strings.format("{} {}", [1]),
    "format_placeholder": lambda tf: tf.strings.format("a %% b", [2], placeholder="%%"),
    "join": lambda tf: tf.strings.join(["a", "b"]),
    "join_broadcast": lambda tf: tf.strings.join([["a", "b"], "c"], separator="-"),
    "join_mismatch": lambda tf: tf.strings.join([tf.constant(["a", "b"]), tf.constant(["c"])]),
    "join_number": lambda tf: tf.strings.join(["a", 1]),
    "length": lambda tf: tf.strings.length(["ab", "é"]),
    "length_chars": lambda tf: tf.strings.length(["ab", "é"], unit="UTF8_CHAR"),
    "length_number": lambda tf: tf.strings.length(3),
    "lower": lambda tf: tf.strings.lower("AbÉ"),
    "lower_utf8": lambda tf: tf.strings.lower("AbÉ", encoding="utf-8"),
    "upper": lambda tf: tf.strings.upper(["aé", "b"]),
    "strip": lambda tf: tf.strings.strip(["  a b \n", "c"]),
    "split": lambda tf: tf.strings.split("a b  c"),
    "split_sep": lambda tf: tf.strings.split("a,b,,c", sep=","),
    "split_maxsplit": lambda tf: tf.strings.split("a,b,,c", sep=",", maxsplit=1),
    "regex_replace": lambda tf: tf.strings.regex_replace("aaa bb", "a+", "X"),
    "regex_replace_once": lambda tf: tf.strings.regex_replace("aaa", "a", "X", replace_global=False),
    "regex_replace_groups": lambda tf: tf.strings.regex_replace(["a1", "b22"], r"(\d)", r"<\1>"),
    "regex_replace_whole": lambda tf: tf.strings.regex_replace("ab", "b", r"[\0]"),
    "regex_bad": lambda tf: tf.strings.regex_replace("ab", "(", "x"),
    "regex_full_match": lambda tf: tf.strings.regex_full_match(["abc", "ab"], "a.c"),
    "substr": lambda tf: tf.strings.substr("hello", 1, 3),
    "substr_vector": lambda tf: tf.strings.substr(["hello", "hi"], [1, 0], [3, 1]),
    "substr_negative": lambda tf: tf.strings.substr("hello", -3, 2),
    "substr_chars": lambda tf: tf.strings.substr("héllo", 1, 1, unit="UTF8_CHAR"),
    "substr_out_of_range": lambda tf: tf.strings.substr("hello", 10, 2),
    "to_number": lambda tf: tf.strings.to_number(["3.5", " 1e3 "]),
    "to_number_int": lambda tf: tf.strings.to_number(["1", "2"], tf.int64),
    "to_number_bad": lambda tf: tf.strings.to_number("x"),
    "to_number_int_of_float": lambda tf: tf.strings.to_number("3.5", tf.int32),
    "reduce_join": lambda tf: tf.strings.reduce_join(["a", "b", "c"]),
    "reduce_join_axis": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=","),
    "reduce_join_keepdims": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, keepdims=True),
    "reduce_join_negative": lambda tf: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=-1),
    "bytes_split": lambda tf: tf.strings.bytes_split("abc"),
    "unicode_decode": lambda tf: tf.strings.unicode_decode("hé", "UTF-8"),
    "unicode_encode": lambda tf: tf.strings.unicode_encode([104, 233], "UTF-8"),
    "unicode_split": lambda tf: tf.strings.unicode_split("hé", "UTF-8"),
    "as_string_bool": lambda tf: tf.strings.as_string([True, False]),
    "as_string_float": lambda tf: tf.strings.as_string([0.1, 1e10, 1e-7, 1e20]),
    "as_string_float64": lambda tf: tf.as_string(tf.constant([1.5, -np.inf, np.nan], tf.float64)),
    "as_string_precision": lambda tf: tf.strings.as_string(3.14159, precision=2),
    "as_string_width": lambda tf: tf.strings.as_string(3, width=4),
    "as_string_zero_fill": lambda tf: tf.strings.as_string(3, width=4, fill="0"),
    "as_string_scientific": lambda tf: tf.strings.as_string(31.5, scientific=True),
    "as_string_shortest": lambda tf: tf.strings.as_string(0.1, shortest=True),
    "as_string_half": lambda tf: tf.strings.as_string(tf.constant(1.5, tf.float16)),
    "as_string_complex": lambda tf: tf.strings.as_string(tf.constant([1 + 2j])),
    "as_string_string": lambda tf: tf.strings.as_string(tf.constant("a")),
    "as_string_uint8": lambda tf: tf.strings.as_string(tf.constant(3, tf.uint8)),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_matches_tf(name):
    _same(CREATION[name])


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_on_strings_match_tf(name):
    _same(OPS[name])


@pytest.mark.parametrize("name", sorted(STRINGS))
def test_tf_strings_match_tf(name):
    _same(STRINGS[name])


@pytest.mark.parametrize("value", ["hello", ["a", "bc"], [["a"], ["b"]], "é\n\"'"])
def test_printed_forms_match_tf(value):
    for form in (str, repr, format):
        assert form(tapejax.constant(value)) == form(tf_real.constant(value))
    assert repr(tapejax.constant(value).numpy()) == repr(tf_real.constant(value).numpy())


def test_tf_function_with_strings_matches_tf():
    def step(tf):
        @tf.function
        def f(x, s):
            words = tf.constant(["a", "b"])
            return x * 2, tf.strings.join([s, "!"]), tf.gather(words, 1), tf.strings.length(s) + 1
        return [f(tf.constant(1.0), tf.constant("hey")), f(tf.constant(2.0), tf.constant("yo"))]
    _same(step)


def test_dataset_of_strings_matches_tf():
    def pipeline(tf):
        ds = tf.data.Dataset.from_tensor_slices(["a b", "cd", "e"])
        mapped = ds.map(lambda s: (tf.strings.length(s), tf.strings.join([s, "!"])))
        numbers = tf.data.Dataset.range(3).map(tf.strings.as_string)
        return (str(ds.element_spec), str(mapped.element_spec), list(mapped.as_numpy_iterator()),
                [b.tolist() for b in ds.batch(2).as_numpy_iterator()],
                list(ds.filter(lambda s: tf.strings.length(s) > 1).as_numpy_iterator()),
                list(numbers.as_numpy_iterator()))
    _same(pipeline)


def _random_strings(seed):
    rng = np.random.default_rng(seed)
    lengths = list(range(0, 140)) + [200, 255, 256, 257, 1000, 4097]  # every branch of FarmHash's fingerprint
    return [bytes(rng.integers(0, 256, size=n, dtype=np.uint8)) for n in lengths] + ["caf\u00e9".encode(), b"a b"]


@pytest.mark.parametrize("num_buckets", [1, 7, 1000, 2**63 - 1])
def test_string_hash_buckets_are_tfs_bit_for_bit(num_buckets):
    strings = np.array(_random_strings(num_buckets % 97), dtype=object).reshape(-1, 1)
    for fn, extra in (("to_hash_bucket_fast", ()), ("to_hash_bucket_strong", ([12345, 2**63 - 7],)),
                      ("to_hash_bucket_strong", ([-1, 0],))):
        theirs = getattr(tf_real.strings, fn)(tf_real.constant(strings), num_buckets, *extra)
        ours = getattr(tapejax.strings, fn)(tapejax.constant(strings), num_buckets, *extra)
        assert ours.dtype.name == theirs.dtype.name and ours.shape == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("call", [
    lambda tf: tf.strings.to_hash_bucket_fast(["a"], 0),
    lambda tf: tf.strings.to_hash_bucket_fast([1], 3),
    lambda tf: tf.strings.to_hash_bucket_strong(["a"], 3, [1]),
], ids=["no_buckets", "numbers", "short_key"])
def test_string_hash_errors_are_tfs_types(call):
    with pytest.raises(Exception) as theirs:
        call(tf_real)
    with pytest.raises(Exception) as ours:
        call(tapejax)
    assert isinstance(ours.value, type(theirs.value)) or type(ours.value).__name__ == type(theirs.value).__name__


def test_a_functional_model_of_string_ops_on_a_string_input_trains_as_keras():
    # A Lambda of tf.strings ops on a string Input: shape inference runs it on strings (tapejax keeps them on the
    # host, so an abstract run cannot); Keras needs `output_shape` there, tapejax infers it too.
    texts = [[b"ab"], [b"abc"], [b"A"], [b"abcd"], [b"Zz"]]
    results = []
    for tf in (tf_real, tapejax):
        keras = tf.keras
        inputs = keras.Input(shape=(1,), dtype="string")
        lowered = keras.layers.Lambda(lambda s, tf=tf: tf.strings.lower(s), output_shape=(1,))(inputs)
        length = keras.layers.Lambda(lambda s, tf=tf: tf.cast(tf.strings.length(s), "float32"),
                                     output_shape=(1,))(lowered)
        model = keras.Model(inputs, [lowered, keras.layers.Dense(1, kernel_initializer="ones")(length)])
        model.compile(keras.optimizers.SGD(0.01), [None, "mse"])
        history = model.fit(tf.constant(texts), (tf.constant(texts), tf.constant([2.0, 3.5, 1.0, 4.0, 1.5])),
                            batch_size=2, epochs=2, verbose=0, shuffle=False)
        words, predicted = model.predict(tf.constant(texts), verbose=0)
        results.append((tuple(lowered.shape), history.history["loss"], words.tolist(), predicted))
    (shape_tf, loss_tf, words_tf, predicted_tf), (shape, loss, words, predicted) = results
    assert shape == shape_tf and words == words_tf
    np.testing.assert_allclose(loss, loss_tf, rtol=1e-5)
    np.testing.assert_allclose(predicted, predicted_tf, rtol=1e-5)
    inputs = tapejax.keras.Input(shape=(1,), dtype="string")  # no output_shape: inferred from a run on strings
    assert tuple(tapejax.keras.layers.Lambda(lambda s: tapejax.strings.upper(s))(inputs).shape) == (None, 1)
