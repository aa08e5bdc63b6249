"""`python -m benchmarks [--quick]`: run every workload, print and save the table of medians and ratios.

Ratios are measured in one process, against a baseline implementation of the same computation. `--quick` proves
that every workload runs (a few repetitions) and asserts nothing about time: CI machines are noisy.
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import re
import sys

import jax
import numpy as np

import tapejax

from benchmarks import plots
from benchmarks.costs import WORKLOADS as COST_WORKLOADS
from benchmarks.costs import TABLES
from benchmarks.harness import time_interleaved
from benchmarks.interop import WORKLOADS as INTEROP_WORKLOADS
from benchmarks.second_order import WORKLOADS as SECOND_ORDER_WORKLOADS
from benchmarks.workloads import WORKLOADS as FIRST_ORDER_WORKLOADS
from benchmarks.workloads import tensorflow, torch

WORKLOADS = {**FIRST_ORDER_WORKLOADS, **SECOND_ORDER_WORKLOADS, **COST_WORKLOADS, **INTEROP_WORKLOADS}


def _versions() -> str:
    tf_version = tensorflow.__version__ if tensorflow is not None else "not installed"
    torch_version = torch.__version__ if torch is not None else "not installed"
    device = jax.devices()[0]
    return (f"jax {jax.__version__}, numpy {np.__version__}, TensorFlow {tf_version}, PyTorch {torch_version}; device "
            f"{device.platform.upper()} ({device.device_kind}); Python {platform.python_version()}; "
            f"{platform.machine()}")


def _check(ratio: float, op: str, bound: float) -> str:
    met = ratio <= bound if op == "<=" else ratio >= bound
    return "met" if met else "NOT met"


def _sections(text: str) -> list[str]:
    """The sections other scripts keep in results.md (benchmarks/programs.py's), between their markers: kept."""
    return re.findall(r"^<!-- [\w.]+: begin -->$.*?^<!-- [\w.]+: end -->$", text, re.M | re.S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few repetitions; proves every workload runs")
    parser.add_argument("--only", nargs="*", help="workload names to run")
    parser.add_argument("--output", default=str(pathlib.Path(__file__).with_name("results.md")))
    args = parser.parse_args(argv)
    # A sample of 0.1 s (or 1000 calls): each starts after a 20 ms pause (harness.py), and its first milliseconds
    # run slower on a cold core; 20 ms samples timed PyTorch's chain at 167-178 us against 99 us steady, and every
    # asynchronous engine worse still.
    budget_s, repeats = (0.002, 2) if args.quick else (0.1, 21)
    warmup = 1 if args.quick else 3
    # The tables time the steady state: a repeated structure compiles on the run that decides it (background
    # compilation would run it op by op for 30 more runs, past the warm-up; `benchmarks.first_steps` times that).
    background_was = tapejax.config.experimental_background_compile(False)

    lines = ["| workload | implementation | median per call | ratio to baseline |", "|---|---|---:|---:|"]
    target_lines = []
    measured: dict[str, tuple[str, dict[str, float]]] = {}
    for name, make in WORKLOADS.items():
        if args.only and name not in args.only:
            continue
        description, impls, baseline, targets, *rest = make(args.quick)
        options = rest[0] if rest else {}
        medians = time_interleaved(impls, budget_s, options.get("repeats", repeats), options.get("warmup", warmup))
        if "teardown" in options:
            options["teardown"]()
        measured[name] = (description, medians)
        for label, median in medians.items():
            ratio = median / medians[baseline]
            lines.append(f"| {description} | {label} | {median:,.1f} us | {ratio:.2f}x |")
        for numerator, denominator, op, bound, issue in targets:
            ratio = medians[numerator] / medians[denominator]
            target_lines.append(f"- {description}: {numerator} / {denominator} = {ratio:.2f}, target {op} {bound} "
                                f"(issue #{issue}): {_check(ratio, op, bound)}")
    tables = []
    for name, (title, make_rows) in TABLES.items():
        if not args.only or name in args.only:
            tables += [title, "", *make_rows(args.quick), ""]
    text = "\n".join([f"Measured with {_versions()}.", "", *lines, "", "Targets:", *target_lines, "", *tables])
    print(text)
    if not args.quick:
        output = pathlib.Path(args.output)
        kept = _sections(output.read_text()) if output.exists() else []
        output.write_text("\n\n".join([text.rstrip("\n"), *kept]) + "\n")
        for path in plots.write(measured, pathlib.Path(args.output).with_name("plots")):
            print(f"wrote {path}")
    tapejax.config.experimental_background_compile(background_was)
    return 0


if __name__ == "__main__":
    sys.exit(main())
