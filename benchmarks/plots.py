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


def programs(best: dict[str, dict[str, dict[str, float]]], folder: pathlib.Path) -> pathlib.Path | None:
    """benchmarks/programs.py's figure: per program, end to end and first step on tapejax and TF, each bar split
    into the engine's import and the rest. Returns its path (None without matplotlib)."""
    try:
        import matplotlib  # noqa: PLC0415
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    folder.mkdir(exist_ok=True)
    names = list(best)
    engines = [e for e in ("tapejax", "tf") if any(e in best[n] for n in names)]
    colours = {"tapejax": "tab:blue", "tf": "tab:orange"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.6 * len(names) + 1.8), sharey=True)
    for ax, key, title in [(axes[0], "wall", "end to end (process start to exit)"),
                           (axes[1], "first_step", "first step (process start to first gradient)")]:
        height = 0.8 / len(engines)
        for k, engine in enumerate(engines):
            ys = [i + (k - (len(engines) - 1) / 2) * height for i in range(len(names))]
            total = [best[n][engine].get(key, 0.0) for n in names]
            imported = [min(best[n][engine].get("import", 0.0), t) for n, t in zip(names, total)]
            label = "TensorFlow" if engine == "tf" else engine
            ax.barh(ys, imported, height, color=colours[engine], alpha=0.35)
            ax.barh(ys, [t - i for t, i in zip(total, imported)], height, left=imported, color=colours[engine],
                    label=f"{label} (light: import)")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("seconds (best of the runs)")
        ax.grid(True, axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(names)), names, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=8)
    path = folder / "programs.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
