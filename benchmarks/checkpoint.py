"""`tf.train.Checkpoint` of a 100M-parameter model (25 float32 variables of 2000 x 2000, 400 MB), tapejax and
TensorFlow in one process: `python -m benchmarks.checkpoint [tapejax] [tensorflow]`. Prints the best of three
`save`s and `restore`s of each, and the peak extra memory during a save (the process's resident memory, sampled
every millisecond by a thread, above what it was before the save) as a multiple of the model's size: the worst
of the three timed saves, and the first save of the process on its own."""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import threading
import time

import numpy as np

SHAPE, COUNT = (2000, 2000), 25  # 100M parameters


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Peak:
    """The highest resident memory seen while the block runs."""

    def __enter__(self) -> _Peak:
        self.before = self.peak = _rss()
        self._running = True
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while self._running:
            self.peak = max(self.peak, _rss())
            time.sleep(0.001)

    def __exit__(self, *exc: object) -> None:
        self._running = False
        self._thread.join()
        self.peak = max(self.peak, _rss())


def run(library: str, directory: str) -> None:
    tf = importlib.import_module(library)
    rng = np.random.default_rng(0)
    model = tf.Module()
    model.weights = [tf.Variable(rng.normal(size=SHAPE).astype(np.float32)) for _ in range(COUNT)]
    size = COUNT * int(np.prod(SHAPE)) * 4
    checkpoint = tf.train.Checkpoint(model=model)
    prefix = os.path.join(directory, library, "ckpt")
    with _Peak() as peak:  # the first save: file creation, imports, anything done once
        checkpoint.write(prefix)
    first = (peak.peak - peak.before) / size
    saves, extras = [], []
    for _ in range(3):
        with _Peak() as peak:
            start = time.perf_counter()
            path = checkpoint.write(prefix)
            saves.append(time.perf_counter() - start)
        extras.append((peak.peak - peak.before) / size)
    expected = np.array(model.weights[-1].numpy())
    for variable in model.weights:
        variable.assign(np.zeros(SHAPE, np.float32))
    restores = []
    for _ in range(3):
        start = time.perf_counter()
        checkpoint.read(path).assert_consumed()
        restores.append(time.perf_counter() - start)
    assert np.array_equal(np.asarray(model.weights[-1].numpy()), expected), "the restore changed the values"
    print(f"{library}: save {min(saves):.3f} s, restore {min(restores):.3f} s, peak extra memory during save "
          f"{max(extras):.2f}x the model ({size / 1e6:.0f} MB), {first:.2f}x during the first save")


def main(libraries: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        for library in libraries:
            run(library, directory)


if __name__ == "__main__":
    main(sys.argv[1:] or ["tapejax", "tensorflow"])
