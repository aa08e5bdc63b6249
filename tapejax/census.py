"""Usage-weighted coverage: how many of the symbol uses in real TF2 programs tapejax implements.

The programs' uses are counted once, by docs/census/build.py, into docs/census/census.json (sources and counts
only, no code). This module needs nothing else, neither TensorFlow nor the network: it asks `import tapejax as
tf` which of those symbols it has, weights each by its uses, and renders docs/coverage.md's usage section.
"""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from collections.abc import Callable
from typing import Any

CENSUS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "census" / "census.json"
PARTS = (("core", "everything outside `tf.data` and `tf.keras`"), ("data", "`tf.data`"),
         ("keras", "`tf.keras` (and its aliases `tf.optimizers`, `tf.losses`, `tf.metrics`)"))


def load(path: pathlib.Path = CENSUS) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# TF 2.x's short names for Keras namespaces (`tf.optimizers` is `tf.keras.optimizers`) count as Keras.
_KERAS = ("tf.keras", "tf.optimizers", "tf.losses", "tf.metrics", "tf.initializers")


def part(symbol: str) -> str:
    """Which figure a symbol counts in: 'data', 'keras' or 'core'."""
    if symbol == "tf.data" or symbol.startswith("tf.data."):
        return "data"
    if any(symbol == k or symbol.startswith(k + ".") for k in _KERAS):
        return "keras"
    return "core"


def implemented(symbol: str) -> bool:
    """Whether `import tapejax as tf` has `symbol` (`tf.nn.relu`, `tf.Tensor.numpy`, `tf.keras.Model.fit`): its
    path resolves, attribute by attribute, without reaching a missing-symbol placeholder (which raises
    NotImplementedSymbolError, an AttributeError) or any other error. Members are looked up on the class."""
    import tapejax  # noqa: PLC0415 (tapejax imports this module lazily, from its __main__)

    obj: Any = tapejax
    for name in symbol.split(".")[1:]:
        try:
            obj = getattr(obj, name)
        except Exception:  # noqa: BLE001 (a lazy namespace may raise anything for a name it lacks)
            return False
    return True


def coverage(census: dict[str, Any], has: Callable[[str], bool] = implemented) -> dict[str, Any]:
    """Per part: uses, implemented uses, and the missing symbols as (symbol, uses, programs), most used first.

    Symbols TensorFlow itself lacks (`census["not_in_tensorflow"]`: TF1 or Keras 2 names) are left out."""
    absent = set(census.get("not_in_tensorflow", ()))
    uses, programs = Counter(), Counter()
    for program in census["programs"]:
        for symbol, n in program["uses"].items():
            if symbol not in absent:
                uses[symbol] += n
                programs[symbol] += 1
    result = {}
    for name, _ in PARTS:
        symbols = [s for s in uses if part(s) == name]
        missing = sorted((s for s in symbols if not has(s)), key=lambda s: (-uses[s], s))
        total = sum(uses[s] for s in symbols)
        result[name] = {"uses": total, "implemented": total - sum(uses[s] for s in missing),
                        "symbols": len(symbols), "missing": [(s, uses[s], programs[s]) for s in missing]}
    return result


def percent(part_: dict[str, Any]) -> float:
    return 100.0 * part_["implemented"] / part_["uses"] if part_["uses"] else 100.0


def markdown(census: dict[str, Any], top: dict[str, int] | None = None) -> str:
    """docs/coverage.md's usage section."""
    top = top or {"core": 40, "data": 20, "keras": 40}
    cov = coverage(census)
    programs = census["programs"]
    lines = [
        "## Usage-weighted coverage",
        "",
        f"Of the symbol uses in **{len(programs)} public TF2 programs** that use `tf.GradientTape` (TF tutorials and "
        "guides, keras-io examples, books and research code; each listed with its repository, path and commit in "
        "[docs/census/census.json](census/census.json)), these are implemented by tapejax:",
        "",
        "| symbols | uses | implemented | coverage | distinct symbols |",
        "| --- | ---: | ---: | ---: | ---: |",
        *[f"| {label} | {cov[n]['uses']} | {cov[n]['implemented']} | **{percent(cov[n]):.1f}%** | {cov[n]['symbols']} |"
          for n, label in PARTS],
        "",
        "A use is one occurrence in a program's code of a `tf.*` path (through any import alias), of a member of a "
        "value whose TF type the code shows (`model.fit`, `tape.gradient`, `tf.reduce_sum(x).numpy()`), or of an "
        "unmistakable Tensor/Variable method (`.numpy()`, `.assign_add(...)`); docs/census/extract.py says what the "
        "heuristic sees and misses. Implemented: the path resolves under `import tapejax as tf` without reaching a "
        "missing-symbol placeholder (members are looked up on the class). Copies of a program count once; uses of "
        f"names TensorFlow {census.get('tensorflow', '2.x')} lacks (TF1, Keras 2) are left out. The census is "
        "rebuilt from git mirrors of the sources by `python docs/census/build.py`; this section from the JSON alone.",
        "",
    ]
    for name, label in PARTS:
        missing = cov[name]["missing"][: top[name]]
        lines += [f"### Most-used missing symbols: {label}", ""]
        if not missing:
            lines += ["None.", ""]
            continue
        lines += ["| symbol | uses | programs |", "| --- | ---: | ---: |",
                  *[f"| `{s}` | {u} | {p} |" for s, u, p in missing], ""]
    by_repo = Counter(p.get("upstream", p["repo"]) for p in programs)
    lines += ["### Programs by source", "", "| repository | programs |", "| --- | ---: |",
              *[f"| {r} | {n} |" for r, n in by_repo.most_common()], ""]
    return "\n".join(lines)


def summary(census: dict[str, Any]) -> str:
    cov = coverage(census)
    return "; ".join(f"{label}: {percent(cov[n]):.1f}% of {cov[n]['uses']} uses" for n, label in PARTS)
