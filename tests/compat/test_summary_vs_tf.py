"""tf.summary against TensorFlow 2.21: the same calls write event files with TF and with tapejax, and
TensorBoard's own reader reads both back: the same tags, steps, plugins and values (histogram buckets, image
sizes and pixels, text, audio), eagerly and inside tf.function; the same return values and exception types."""

from __future__ import annotations

import glob

import numpy as np
import pytest

tf_real = pytest.importorskip("tensorflow")
pytest.importorskip("tensorboard")
pytestmark = pytest.mark.compat

import tapejax  # noqa: E402
from tensorboard.backend.event_processing import event_file_loader  # noqa: E402
from tensorboard.compat.proto import event_pb2  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

from .compare import assert_same  # noqa: E402

RNG = np.random.RandomState(0)
HISTOGRAM_DATA = {
    "normal": RNG.normal(size=1000).astype(np.float32),
    "integers": RNG.randint(-5, 6, size=(7, 9)).astype(np.int32),
    "on_edges": np.arange(10.0),
    "single_value": np.full(6, 2.5),
    "empty": np.zeros((0,), np.float32),
    "one": np.array([3.0]),
    "wide": np.array([-1e30, 0.0, 1e-30, 1e30]),
}
IMAGES = {
    "float": RNG.uniform(-0.2, 1.2, size=(4, 5, 6, 3)).astype(np.float32),
    "float64_grey": RNG.uniform(size=(2, 3, 4, 1)),
    "uint8_rgba": RNG.randint(0, 256, size=(2, 3, 3, 4)).astype(np.uint8),
    "int32": RNG.randint(0, 2**31 - 1, size=(1, 2, 2, 2)).astype(np.int32),
    "uint16": RNG.randint(0, 2**16, size=(1, 4, 2, 3)).astype(np.uint16),
}


def _records(logdir: str) -> list[tuple]:
    """(step, tag, plugin, value) of every summary in the directory's event files, read by TensorBoard."""
    out = []
    for path in sorted(glob.glob(f"{logdir}/events.out.tfevents.*")):
        for raw in event_file_loader.RawEventFileLoader(path).Load():
            event = event_pb2.Event.FromString(raw)
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name
                array = tensor_util.make_ndarray(value.tensor)
                if plugin == "images":  # width, height, then PNG files: compare the pixels they hold
                    array = [array[:2].tolist()] + [tf_real.io.decode_png(p).numpy() for p in array[2:]]
                out.append((event.step, value.tag, plugin, array))
    return out


def _same_records(got: list, expected: list) -> None:
    assert [r[:3] for r in got] == [r[:3] for r in expected]
    for g, e in zip(got, expected):
        if isinstance(e[3], list):
            assert g[3][0] == e[3][0], g[:3]  # image dimensions
            assert len(g[3]) == len(e[3])
            for a, b in zip(g[3][1:], e[3][1:]):
                np.testing.assert_array_equal(a, b, err_msg=str(g[:3]))
        elif e[3].dtype == object:
            assert g[3].shape == e[3].shape and g[3].tolist() == e[3].tolist(), g[:3]
        else:
            assert_same(g[3], e[3], str(g[:3]), rtol=1e-12)


def _run_both(program, tmp_path) -> None:
    tf_dir, ours_dir = str(tmp_path / "tf"), str(tmp_path / "tapejax")
    expected = program(tf_real, tf_dir)
    got = program(tapejax, ours_dir)
    for g, e in zip(got, expected):
        assert_same(g.numpy(), e.numpy())
    # Inside tf.function, TF's graph-mode tf.cond opens a name scope "cond" around its branches, which prefixes
    # the tags of summaries written there; tapejax's tags are the user's names (README: Differences).
    expected = [(r[0], r[1].removeprefix("cond/"), *r[2:]) for r in _records(tf_dir)]
    _same_records(_records(ours_dir), expected)


def test_scalars_histograms_images_text_eagerly(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        results = []
        with writer.as_default(step=3):
            results.append(tf.summary.scalar("loss", 0.25))
            results.append(tf.summary.scalar("loss", tf.constant(1.5, tf.float64), step=7))
            results.append(tf.summary.scalar("int", 4, step=np.int64(8)))
            for i, (key, data) in enumerate(HISTOGRAM_DATA.items()):
                results.append(tf.summary.histogram(key, data, step=i))
            results.append(tf.summary.histogram("five", HISTOGRAM_DATA["normal"], step=1, buckets=5))
            results.append(tf.summary.histogram("one_bucket", HISTOGRAM_DATA["normal"], step=1, buckets=1))
            for key, data in IMAGES.items():
                results.append(tf.summary.image(key, data, step=2))
            results.append(tf.summary.image("max_outputs", IMAGES["float"], step=2, max_outputs=1))
            results.append(tf.summary.text("text", "hello *world*", step=2))
            results.append(tf.summary.text("table", [["a", "b"], ["c", "d"]], step=2))
            results.append(tf.summary.write("raw", tf.constant([1, 2]), step=4))
            with tf.name_scope("outer"):
                results.append(tf.summary.scalar("inner", 1.0, step=5))
            with tf.summary.record_if(False):
                results.append(tf.summary.scalar("skipped", 1.0, step=5))
                results.append(tf.summary.should_record_summaries())
            with tf.summary.record_if(lambda: tf.constant(True)):
                results.append(tf.summary.scalar("callable", 1.0, step=5))
            results.append(tf.summary.should_record_summaries())
        results.append(tf.summary.scalar("no_writer", 1.0, step=1))
        results.append(tf.summary.should_record_summaries())
        writer.close()
        return results

    _run_both(program, tmp_path)


def test_audio(tmp_path):
    clips = np.sin(np.linspace(0, 40, 300)).reshape(3, 100, 1).astype(np.float32) * 1.2  # clipped to [-1, 1]

    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default(step=1):
            result = tf.summary.audio("sound", clips, 8000, max_outputs=2)
        writer.close()
        return [result]

    _run_both(program, tmp_path)


def test_inside_tf_function_each_call_writes_its_own_values_and_step(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        step = tf.Variable(0, dtype=tf.int64)

        @tf.function
        def train_step(x):
            with writer.as_default():
                tf.summary.scalar("sum", tf.reduce_sum(x), step=step)
                tf.summary.histogram("x", x, step=step, buckets=4)
                tf.summary.image("img", tf.reshape(x, [1, 1, 4, 1]), step=step)
                if x[0] > 0:
                    tf.summary.scalar("positive", x[0], step=step)
                with tf.summary.record_if(step % 2 == 0):
                    recorded = tf.summary.scalar("even", x[1], step=step)
            step.assign_add(1)
            return recorded

        results = [train_step(tf.constant([i - 1.0, i / 3, 0.5, 0.25])) for i in range(4)]
        writer.close()
        return results

    _run_both(program, tmp_path)


def test_set_step_and_as_default_step(tmp_path):
    def program(tf, logdir):
        writer = tf.summary.create_file_writer(logdir)
        tf.summary.experimental.set_step(11)
        results = []
        with writer.as_default():
            results.append(tf.summary.scalar("a", 1.0))
            with writer.as_default(step=20):
                results.append(tf.summary.scalar("b", 2.0))
            results.append(tf.summary.scalar("c", 3.0))
        assert tf.summary.experimental.get_step() == 11
        tf.summary.experimental.set_step(None)
        writer.close()
        return results

    _run_both(program, tmp_path)


def _outcome(call):
    try:
        result = call()
        return "ok" if result is None else result.numpy()
    except Exception as e:  # noqa: BLE001 (the exception's type is the outcome)
        return type(e).__name__


BAD_CALLS = {
    "scalar_not_scalar": lambda tf: tf.summary.scalar("a", [1.0, 2.0], step=1),
    "no_step": lambda tf: tf.summary.scalar("a", 1.0),
    "step_not_scalar": lambda tf: tf.summary.scalar("a", 1.0, step=[1, 2]),
    "step_one_element": lambda tf: tf.summary.scalar("a", 1.0, step=[3]),
    "step_float": lambda tf: tf.summary.scalar("a", 1.0, step=1.5),
    "step_float_tensor": lambda tf: tf.summary.scalar("a", 1.0, step=tf.constant(1.0)),
    "buckets_float": lambda tf: tf.summary.histogram("a", [1.0], step=1, buckets=2.0),
    "image_rank_3": lambda tf: tf.summary.image("a", np.zeros((2, 2, 3)), step=1),
    "image_5_channels": lambda tf: tf.summary.image("a", np.zeros((1, 2, 2, 5)), step=1),
    "text_of_int": lambda tf: tf.summary.text("a", 3, step=1),
    "flush_bad": lambda tf: tf.summary.flush(3),
    "file_writer_none": lambda tf: tf.summary.create_file_writer(None),
    "trace_export_without_trace_on": lambda tf: tf.summary.trace_export("x", step=0),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_errors_as_tf(case, tmp_path):
    outcomes = []
    for tf in (tf_real, tapejax):
        writer = tf.summary.create_file_writer(str(tmp_path / tf.__name__))
        with writer.as_default():
            outcomes.append(_outcome(lambda: BAD_CALLS[case](tf)))
        writer.close()
    expected, got = outcomes
    assert type(got) is type(expected) and (got == expected if isinstance(got, str) else np.all(got == expected))


def test_closed_writer_and_noop_writer(tmp_path):
    outcomes = []
    for tf in (tf_real, tapejax):
        writer = tf.summary.create_file_writer(str(tmp_path / tf.__name__))
        writer.close()
        writer.close()
        noop = tf.summary.create_noop_writer()
        with noop.as_default():
            inside_noop = tf.summary.scalar("a", 1.0, step=1).numpy()
        outcomes.append((_outcome(lambda: writer.as_default()), _outcome(writer.flush), inside_noop,
                         isinstance(writer, tf.summary.SummaryWriter), isinstance(noop, tf.summary.SummaryWriter)))
    assert outcomes[1] == outcomes[0]
