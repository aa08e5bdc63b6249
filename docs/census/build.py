"""Builds docs/census/census.json, the usage census behind docs/coverage.md's usage-weighted coverage.

    python docs/census/build.py [--mirrors /work/.mirror] [--out docs/census/census.json]

Needs what the figure does not: git copies of the repositories in SOURCES, each at MIRRORS/OWNER+NAME/repo (a
bare clone such as `git clone --mirror https://github.com/OWNER/NAME`, or a checkout; HEAD is read, and its commit
recorded), and TensorFlow 2.x installed (docs/census/extract.py asks it which names exist). The census in the
repository was built with TensorFlow 2.21 from the commits it records. It keeps no program code: only each program's
source (repository, path, commit) and how many times it uses each symbol. `python -m tapejax --coverage --write`
then regenerates the figure from the JSON alone, offline.

A program is a Python file, a notebook (its code cells) or, for one book, a Markdown page (its python blocks)
that uses `tf.GradientTape` and none of TF1's API (`tf.Session`, `tf.contrib`, `tf.placeholder`,
`tf.enable_eager_execution`...). Tests and notebook checkpoints are skipped. Copies count once: a program whose
normalized code (ast.unparse, so comments and layout do not matter) shares 70% or more of its 5-token shingles
with a program already kept is a duplicate; SOURCES is in priority order, so the official copy is the one kept.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import pathlib
import re
import subprocess
import sys
import tokenize

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import extract  # noqa: E402

# (repository as fetched, upstream it was forked from or None, path include regex, path exclude regex or None)
SOURCES = [
    ("tensorflow/docs", None, r"^site/en/(guide|tutorials|hub)/.*\.ipynb$", None),
    # keras-io's examples and guides as of April 2023 (tf.keras, before Keras 3), from a maintainer's fork: the
    # upstream repository's snapshot was too large to fetch where this census was built.
    ("LukeWood/keras-io", "keras-team/keras-io", r"^(examples|guides)/.*\.py$", None),
    ("tensorflow/text", None, r"^docs/.*\.ipynb$", None),
    ("tensorflow/examples", None, r"\.(py|ipynb)$", r"^templates/"),
    ("tensorflow/quantum", None, r"\.(py|ipynb)$", r"^benchmarks/"),
    ("tensorflow/recommenders", None, r"\.(py|ipynb)$", None),
    ("fchollet/deep-learning-with-python-notebooks", None, r"\.ipynb$", None),
    ("ageron/handson-ml2", None, r"\.ipynb$", None),
    ("aymericdamien/TensorFlow-Examples", None, r"^tensorflow_v2/.*\.ipynb$", None),
    ("dragen1860/TensorFlow-2.x-Tutorials", None, r"\.(py|ipynb)$", None),
    ("YunYang1994/TensorFlow2.0-Examples", None, r"\.(py|ipynb)$", None),
    ("snowkylin/tensorflow-handbook", None, r"^source/_static/code/.*\.py$", None),
    ("lyhue1991/eat_tensorflow2_in_30_days", None, r"\.md$", r"^eat_tf2_ebook\.md$"),
    ("timsainb/tensorflow2-generative-models", None, r"\.ipynb$", None),
    ("marload/DeepRL-TensorFlow2", None, r"\.py$", None),
    ("keiohta/tf2rl", None, r"\.py$", None),
    ("zzh8829/yolov3-tf2", None, r"\.py$", None),
    ("jeffheaton/t81_558_deep_learning", None, r"\.ipynb$", None),
]
SKIP = re.compile(r"(_test\.py$|(^|/)tests?/|(^|/)test_[^/]*$|\.ipynb_checkpoints/)")
SIMILAR = 0.7


def _git(repo_dir: pathlib.Path, *args: str) -> str:
    """git's output; empty where the object is absent (a snapshot may lack its largest files)."""
    return subprocess.run(["git", "-C", str(repo_dir), "-c", "core.quotepath=off", *args], check=False,
                          capture_output=True, text=True, errors="replace").stdout


def _cells(path: str, text: str) -> list[str]:
    if path.endswith(".ipynb"):
        try:
            return extract.code_of_notebook(json.loads(text))
        except json.JSONDecodeError:
            return []
    if path.endswith(".md"):
        return extract.code_of_markdown(text)
    return [text]


def _shingles(tree: ast.Module) -> set[tuple[str, ...]]:
    tokens = [t.string for t in tokenize.generate_tokens(io.StringIO(ast.unparse(tree)).readline)
              if t.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING)]
    return {tuple(tokens[i:i + 5]) for i in range(max(1, len(tokens) - 4))}


def programs(mirrors: pathlib.Path):
    """Yields (source record, parsed module) for every candidate file, in SOURCES order."""
    for repo, upstream, include, exclude in SOURCES:
        repo_dir = mirrors / repo.replace("/", "+") / "repo"
        if (repo_dir / ".git").is_dir():
            repo_dir = repo_dir / ".git"
        commit = _git(repo_dir, "rev-parse", "HEAD").strip()
        for path in _git(repo_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
            if not re.search(include, path) or SKIP.search(path) or (exclude and re.search(exclude, path)):
                continue
            text = _git(repo_dir, "show", f"HEAD:{path}")
            if "GradientTape" not in text:
                continue
            tree, dropped = extract.parse_cells(_cells(path, text))
            source = {"repo": repo, "path": path, "commit": commit}
            if upstream:
                source["upstream"] = upstream
            yield source, tree, dropped


def build(mirrors: pathlib.Path) -> dict:
    kept, shingles, in_tf = [], [], {}
    skipped = {"tf1": 0, "no_tape": 0, "duplicate": 0}
    for source, tree, dropped in programs(mirrors):
        found = extract.extract(tree)
        if "tf.GradientTape" not in found["uses"]:
            skipped["no_tape"] += 1
            continue
        if found["tf1"]:
            skipped["tf1"] += 1
            continue
        sh = _shingles(tree)
        dup = next((k for k, s in zip(kept, shingles) if len(sh & s) / max(1, len(sh | s)) >= SIMILAR), None)
        if dup is not None:
            skipped["duplicate"] += 1
            print(f"duplicate: {source['repo']}:{source['path']} ~ {dup['repo']}:{dup['path']}", file=sys.stderr)
            continue
        in_tf.update(found["in_tf"])
        if dropped:
            source["cells_unparsed"] = dropped
        if found["standalone_keras"]:
            source["standalone_keras"] = True
        kept.append({**source, "uses": dict(sorted(found["uses"].items()))})
        shingles.append(sh)
    import tensorflow as tf  # noqa: PLC0415

    return {
        "about": "Symbol uses of public TF2 programs that use tf.GradientTape; built by docs/census/build.py "
                 "(see its docstring and docs/census/extract.py for what is counted). No program code is kept.",
        "tensorflow": tf.__version__,
        "skipped": skipped,
        "not_in_tensorflow": sorted(s for s, ok in in_tf.items() if not ok),
        "programs": kept,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", default="/work/.mirror", type=pathlib.Path)
    parser.add_argument("--out", default=pathlib.Path(__file__).with_name("census.json"), type=pathlib.Path)
    args = parser.parse_args()
    census = build(args.mirrors)
    lines = ",\n".join("  " + json.dumps(p, ensure_ascii=False) for p in census.pop("programs"))
    head = json.dumps(census, indent=1, ensure_ascii=False)[:-2]
    args.out.write_text(head + ',\n "programs": [\n' + lines + "\n ]\n}\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
