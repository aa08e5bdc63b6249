"""The benchmark suite runs: every workload, in quick mode (times are not asserted: CI machines are noisy)."""

from __future__ import annotations

import re

from benchmarks.__main__ import main
from benchmarks.workloads import WORKLOADS


def test_every_workload_runs_in_quick_mode(capsys):
    small = [name for name in WORKLOADS if not name.endswith("_10x")]  # the 10x sizes take seconds in TF
    assert main(["--quick", "--only", *small]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| ") and " us |" in line]
    assert len(rows) >= 2 * len(small)  # each workload times tapejax and at least one baseline
    for row in rows:
        assert float(re.search(r"\| ([\d,.]+) us \|", row).group(1).replace(",", "")) > 0


def test_the_bounded_cost_tables_run_in_quick_mode(capsys):
    # jacobian peak memory and the long chain's two runs, each in fresh processes (tapejax's, and TF's if installed)
    assert main(["--quick", "--only", "jacobian_memory", "long_chain"]) == 0
    table = capsys.readouterr().out
    memory = [line for line in table.splitlines() if line.startswith("| 400 | tapejax")]
    chain = [line for line in table.splitlines() if line.startswith("| 2,000 | tapejax")]
    assert len(memory) == 1 and len(chain) == 1 and "nan" not in memory[0] + chain[0]


def test_keras_fit_runs_in_quick_mode(capsys):
    # benchmarks/keras_fit.py is a standalone script (README's standalone table): MLP fit, a 20-layer functional
    # CNN's construction, a small CNN's fit and its convolutions alone, DCGAN's transposed convolutions, a
    # bidirectional LSTM's step, tapejax against TF when TF is installed
    from benchmarks import keras_fit

    results = keras_fit.main(["--quick"])
    workloads = {key.split(":")[0] for key in results}
    assert workloads == {"mlp", "build", "cnn", "conv", "deconv", "rnn"}
    assert len(results) == 9
    for times in results.values():
        assert "tapejax" in times and all(t > 0 for t in times.values())
    assert "jax.jit (XLA:CPU)" in results[next(k for k in results if k.startswith("conv"))]
    assert "jax.jit(lax.scan)" in results[next(k for k in results if k.startswith("rnn"))]
    out = capsys.readouterr().out
    # Input, 4 x (Conv2D, BatchNormalization, ReLU, MaxPool2D), Flatten, 2 Dense
    assert "a 20-layer functional CNN" in out
