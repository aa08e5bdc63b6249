"""`python -m tapejax`, the tour: it runs, exits 0 and prints the guides' values."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys


def test_the_tour_prints_the_guides_values():
    done = subprocess.run([sys.executable, "-m", "tapejax"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for expected in [
        "dy/dx0:  None",
        "dy/dx1:  0.9999546",
        "dz/dx:  [  4. 108.]",
        "d(y1 + y0)/dx:  3.5878196",
        "ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32)",
        "EagerTensor : None",
        "dz/dx:  tf.Tensor([0. 0.], shape=(2,), dtype=float32)",
        "kernel, shape: (3, 2)",  # Keras 3 (TF 2.21) names a weight by its short name
        "tf.Tensor(2.0, shape=(), dtype=float32)",
        "(7, 6, 7, 5) (7, 6, 5)",
        "d2y_dx2: 6.0",
        "10-op chain + gradient, per call",
    ]:
        assert expected in out, f"the tour did not print {expected!r}:\n{out}"
    # The timing compares with real TensorFlow where it is installed, eagerly and in tf.function.
    for mode in ("eager", "tf.function"):
        line = next(line for line in out.splitlines() if line.strip().startswith(mode))
        if importlib.util.find_spec("tensorflow") is not None:
            assert re.search(r"tapejax +\d+ us +TensorFlow +\d+ us +\([\d.]+x (faster|slower)\)", line), line
        else:
            assert "TensorFlow" not in line, line
    assert "pure JAX" in out
    assert "I0000" not in done.stderr, "TensorFlow's start-up log reached the tour's stderr"
