"""The benchmark figures (PNG, with matplotlib where installed): how cost grows with the size of the work."""

from __future__ import annotations

import pathlib
import re


def write(measured: dict[str, tuple[str, dict[str, float]]], folder: pathlib.Path) -> list[pathlib.Path]:
    """Writes the figures for the workloads measured; returns their paths (none without matplotlib)."""
    try:
        import matplotlib  # noqa: PLC0415 (optional: the tables do not need it)
    except ImportError:
        return []
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    folder.mkdir(exist_ok=True)
    written = []
    for prefix, title, axis in [("chain_", "chain of N ops + gradient", "ops in the chain (N)"),
                                ("mlp_", "MLP training step (Adam)", "model")]:
        series = _series(measured, prefix)
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, points in sorted(series.items()):
            xs, ys = zip(*points)
            ax.plot(range(len(xs)) if prefix == "mlp_" else xs, ys, marker="o", label=label)
            if prefix == "mlp_":
                ax.set_xticks(range(len(xs)), xs)
        if prefix == "chain_":
            ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(axis)
        ax.set_ylabel("median time per call (us)")
        ax.set_title(title)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        path = folder / f"{prefix.rstrip('_')}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def _series(measured: dict[str, tuple[str, dict[str, float]]], prefix: str) -> dict[str, list]:
    """implementation -> [(size, time)] over the workloads named `prefix...`, ordered by size."""
    rows = []
    for name, (description, medians) in measured.items():
        if name.startswith(prefix) or (prefix == "chain_" and name == "chain_gradient"):
            if prefix == "chain_":
                size = int(re.match(r"(\d+)-op", description).group(1))
            else:
                size = re.search(r"layers ([\d-]+)", description).group(1)
            rows.append((size, medians))
    if prefix == "mlp_":
        rows.sort(key=lambda r: sum(map(int, r[0].split("-"))))
    else:
        rows.sort(key=lambda r: r[0])
    series: dict[str, list] = {}
    for size, medians in rows:
        for label, t in medians.items():
            series.setdefault(label, []).append((size, t))
    return series
