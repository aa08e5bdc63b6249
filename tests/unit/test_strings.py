"""String tensors (string_values.py) and tf.strings (ops/strings.py), checked against Python's own string
semantics: element-moving ops on interned ids, host ops, tf.function and tf.data with strings."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tapejax as tf
from tapejax._src.string_values import HostValueError

WORDS = st.lists(st.text(max_size=5), min_size=1, max_size=6)


def _bytes(words):
    return [w.encode() for w in words]


@settings(max_examples=30, deadline=None)
@given(WORDS, st.data())
def test_element_moving_ops_follow_numpy(words, data):
    x = tf.constant(words)
    expected = np.array(_bytes(words), dtype=object)
    idx = data.draw(st.lists(st.integers(0, len(words) - 1), max_size=5))
    assert tf.gather(x, idx).numpy().tolist() == expected[idx].tolist()
    assert tf.reverse(x, [0]).numpy().tolist() == expected[::-1].tolist()
    assert tf.concat([x, x], 0).numpy().tolist() == expected.tolist() * 2
    assert tf.reshape(x, [-1, 1]).numpy().tolist() == expected.reshape(-1, 1).tolist()
    mask = data.draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
    assert tf.boolean_mask(x, mask).numpy().tolist() == expected[np.array(mask, bool)].tolist()
    assert (x == words[0]).numpy().tolist() == [w == words[0] for w in words]
    assert tf.size(x).numpy() == len(words) and x.dtype == tf.string


@settings(max_examples=30, deadline=None)
@given(WORDS, st.text(max_size=3))
def test_text_ops_follow_python(words, sep):
    x = tf.constant(words)
    encoded = _bytes(words)
    assert tf.strings.length(x).numpy().tolist() == [len(b) for b in encoded]
    assert tf.strings.length(x, unit="UTF8_CHAR").numpy().tolist() == [len(w) for w in words]
    assert tf.strings.upper(x).numpy().tolist() == [b.upper() for b in encoded]
    assert tf.strings.strip(x).numpy().tolist() == [b.strip() for b in encoded]
    assert tf.strings.reduce_join(x, separator=sep).numpy() == sep.encode().join(encoded)
    assert tf.strings.join([x, x], separator=sep).numpy().tolist() == [b + sep.encode() + b for b in encoded]
    assert (x + "!").numpy().tolist() == [b + b"!" for b in encoded]


def test_printing_and_numpy():
    assert str(tf.constant("hello")) == "tf.Tensor(b'hello', shape=(), dtype=string)"
    assert repr(tf.constant(["a"])) == "<tf.Tensor: shape=(1,), dtype=string, numpy=array([b'a'], dtype=object)>"
    assert tf.constant("é").numpy() == "é".encode()
    assert tf.constant(np.array(["a", "b"])).numpy().dtype == object


def test_numeric_ops_refuse_strings():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.sin(tf.constant("a"))
    with pytest.raises(tf.errors.UnimplementedError):
        tf.cast(tf.constant(1), tf.string)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.strings.to_number("x")


def test_format_as_tf_print():
    assert tf.strings.format("{} and {}", [tf.range(10), "x"]).numpy() == b'[0 1 2 ... 7 8 9] and "x"'
    assert tf.strings.as_string([1.5, 2.0]).numpy().tolist() == [b"1.500000", b"2.000000"]


def test_tf_function_traces_once_per_string_value():
    @tf.function
    def f(s, x):
        return tf.strings.join([s, "!"]), x + 1

    for _ in range(2):
        out, y = f(tf.constant("a"), tf.constant(1))
    assert out.numpy() == b"a!" and int(y) == 2 and f.experimental_get_tracing_count() == 1
    assert f(tf.constant("b"), tf.constant(1))[0].numpy() == b"b!" and f.experimental_get_tracing_count() == 2

    @tf.function
    def g(x):
        return tf.strings.as_string(x)

    with pytest.raises(HostValueError, match="host"):
        g(tf.constant(1))


def test_ragged_results_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tf.strings.split(["a b", "c"])
    assert tf.strings.split("a b").numpy().tolist() == [b"a", b"b"]


def test_dataset_of_strings_maps_eagerly():
    ds = tf.data.Dataset.from_tensor_slices(["ab", "c"]).map(lambda s: (s, tf.strings.length(s)))
    assert list(ds.as_numpy_iterator()) == [(b"ab", 2), (b"c", 1)]
    assert ds.element_spec[0].dtype == tf.string


def test_slicing_gathering_and_comparing_strings_compile_nothing_and_raise_tf_errors():
    """TF's audio tutorial shuffles, slices and compares file names and labels: numpy moves their ids (exactly the
    executables' ids: the checking mode compares them), where JAX compiled an executable per op and shape."""
    from tapejax._src import checking, string_values

    from tests.unit.test_shape_inference_compiles import counting_compiles

    names = tf.constant([f"data/{w}/{k}.wav".encode() for w in ("no", "yes") for k in range(5)])
    permutation = np.random.default_rng(0).permutation(10)
    expected = names.numpy()[permutation]

    def run():
        shuffled = tf.gather(names, permutation)
        parts = tf.strings.split(shuffled[0], "/")
        return [shuffled.numpy(), shuffled[:7].numpy(), shuffled[-3:].numpy(), shuffled[3].numpy(),
                shuffled[::-2].numpy(), tf.gather(tf.reshape(shuffled, [2, 5]), [1, 0], axis=1).numpy(),
                (parts[-2] == tf.constant(["no", "yes"])).numpy(), (shuffled != shuffled[0]).numpy()]

    was_on = checking.FLAG.on
    try:
        checking.FLAG.on = False  # (the checking mode compiles the executables it compares with)
        with counting_compiles() as compiles:
            got = run()
        checking.FLAG.on = True  # each host result compared with the executable's
        checked = run()
    finally:
        checking.FLAG.on = was_on
    for a, b in zip(got, checked):
        np.testing.assert_array_equal(a, b)
    assert compiles == [] and string_values.HOST_RUNS >= 1
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(got[1], expected[:7])
    np.testing.assert_array_equal(got[2], expected[-3:])
    assert got[3] == expected[3]
    np.testing.assert_array_equal(got[4], expected[::-2])
    np.testing.assert_array_equal(got[5], expected.reshape(2, 5)[:, [1, 0]])
    np.testing.assert_array_equal(got[6], [expected[0].split(b"/")[1] == w for w in (b"no", b"yes")])
    np.testing.assert_array_equal(got[7], expected != expected[0])
    with pytest.raises(tf.errors.InvalidArgumentError):  # TF's error, from the executable numpy declined
        tf.gather(names, [10])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.gather(names, [-1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
        names[10]
    assert (names == tf.constant(["a", "b", "c"])).numpy() is np.False_  # shapes that do not broadcast, as TF
