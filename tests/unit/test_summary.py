"""tf.summary without TensorFlow: files read back with TensorBoard's own reader, histogram buckets against
TensorBoard's numpy bucketing, TF's flushing policy, per-call values inside tf.function, threads, and the
ImportError without tensorboard."""

from __future__ import annotations

import glob
import sys
import threading

import numpy as np
import pytest

import tapejax as tf
from tapejax._src import summary_writer


@pytest.fixture(autouse=True)
def _summary_state_restored():
    """A test that calls `set_as_default` leaves its writer the thread's default, as TF does: later tests
    (which expect no default writer) must not see it."""
    state = summary_writer.STATE
    saved = (state.writer, state.step, state.is_recording)
    yield
    state.writer, state.step, state.is_recording = saved


def test_without_a_writer_nothing_is_recorded_and_tensorboard_is_not_needed(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    assert not bool(tf.summary.scalar("loss", 1.0, step=0))
    assert not bool(tf.summary.should_record_summaries())
    with pytest.raises(ImportError, match="pip install tensorboard"):
        tf.summary.create_file_writer("unused")


pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import event_accumulator, event_file_loader  # noqa: E402
from tensorboard.compat.proto import event_pb2  # noqa: E402
from tensorboard.plugins.histogram import summary_v2 as histogram_v2  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402


def _events(logdir) -> list:
    (path,) = glob.glob(f"{logdir}/events.out.tfevents.*")
    return [event_pb2.Event.FromString(raw) for raw in event_file_loader.RawEventFileLoader(path).Load()]


def _tensors(logdir, tag) -> list[tuple[int, np.ndarray]]:
    accumulator = event_accumulator.EventAccumulator(str(logdir), size_guidance={event_accumulator.TENSORS: 0})
    accumulator.Reload()
    return [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in accumulator.Tensors(tag)]


def test_scalars_read_back_by_tensorboard(tmp_path):
    writer = tf.summary.create_file_writer(tmp_path)
    with writer.as_default(step=2):
        assert bool(tf.summary.scalar("loss", tf.constant(0.5)))
        tf.summary.scalar("loss", 0.25, step=3)
    writer.close()
    assert [(s, float(v)) for s, v in _tensors(tmp_path, "loss")] == [(2, 0.5), (3, 0.25)]
    assert _events(tmp_path)[0].file_version == "brain.Event:2"


@pytest.mark.parametrize("data, buckets", [
    (np.random.RandomState(1).normal(size=500), None), (np.arange(12.0), 4), (np.full(5, 3.0), 7),
    (np.zeros(0), 3), (np.random.RandomState(2).randint(-9, 9, size=(4, 5)), 30), (np.arange(3.0), 0)])
def test_histogram_buckets_are_tensorboards(tmp_path, data, buckets):
    writer = tf.summary.create_file_writer(tmp_path)
    with writer.as_default(step=0):
        tf.summary.histogram("h", data, buckets=buckets)
    writer.close()
    ((_, got),) = _tensors(tmp_path, "h")
    expected = tensor_util.make_ndarray(histogram_v2.histogram_pb("h", data, buckets).value[0].tensor)
    np.testing.assert_array_equal(got, expected)


def test_flushes_by_tfs_rules(tmp_path):
    writer = tf.summary.create_file_writer(tmp_path, max_queue=3, flush_millis=10**9)
    with writer.as_default():
        for i in range(3):
            tf.summary.scalar("x", float(i), step=i)
        assert len(_events(tmp_path)) == 1  # three queued: not written yet
        tf.summary.scalar("x", 3.0, step=3)  # more than max_queue waiting: written
        assert len(_events(tmp_path)) == 5
        tf.summary.scalar("x", 4.0, step=4)
        tf.summary.flush()
        assert len(_events(tmp_path)) == 6
    writer.close()


def test_writer_dropped_is_flushed(tmp_path):
    writer = tf.summary.create_file_writer(tmp_path, filename_suffix=".mine")
    writer.set_as_default(step=1)
    tf.summary.scalar("x", 1.0)
    tf.summary.create_noop_writer().set_as_default()  # TF's noop writer sets nothing: the default stays
    with tf.summary.create_file_writer(tmp_path / "other").as_default():
        pass
    assert glob.glob(f"{tmp_path}/*.mine")
    tf.summary.flush()
    assert len(_events(tmp_path)) == 2
    del writer


def test_inside_tf_function_each_call_writes_with_its_step(tmp_path):
    writer = tf.summary.create_file_writer(tmp_path)
    step = tf.Variable(0, dtype=tf.int64)
    tf.summary.experimental.set_step(step)
    calls = []

    @tf.function
    def train(x):
        calls.append(1)
        with writer.as_default(), tf.summary.record_if(lambda: step % 2 == 0):
            recorded = tf.summary.scalar("x", tf.reduce_mean(x))
        step.assign_add(1)
        return recorded

    try:
        results = [bool(train(tf.constant([float(i), 1.0]))) for i in range(5)]
    finally:
        tf.summary.experimental.set_step(None)
    writer.close()
    assert len(calls) == 1 and results == [True, False, True, False, True]
    assert [(s, float(v)) for s, v in _tensors(tmp_path, "x")] == [(0, 0.5), (2, 1.5), (4, 2.5)]


def test_images_and_text(tmp_path):
    images = np.random.RandomState(0).uniform(size=(3, 4, 5, 3)).astype(np.float32)
    writer = tf.summary.create_file_writer(tmp_path)
    with writer.as_default(step=0):
        tf.summary.image("img", images, max_outputs=2)
        tf.summary.text("t", ["a", "b"])
    writer.close()
    ((_, encoded),) = _tensors(tmp_path, "img")
    assert encoded[:2].tolist() == [b"5", b"4"] and len(encoded) == 4
    assert all(png.startswith(b"\x89PNG") for png in encoded[2:])
    ((_, text),) = _tensors(tmp_path, "t")
    assert text.tolist() == [b"a", b"b"]


def test_the_default_writer_is_per_thread(tmp_path):
    writer = tf.summary.create_file_writer(tmp_path)
    seen = []
    with writer.as_default(step=0):
        thread = threading.Thread(target=lambda: seen.append(bool(tf.summary.scalar("x", 1.0, step=0))))
        thread.start()
        thread.join()
        seen.append(bool(tf.summary.scalar("x", 1.0)))
    writer.close()
    assert seen == [False, True]


def test_trace_calls_are_accepted():
    tf.summary.trace_on(graph=True)
    tf.summary.trace_export("graph", step=0)
    with pytest.raises(ValueError, match="trace_on"):
        tf.summary.trace_export("graph", step=0)
    tf.summary.trace_off()
