"""Real programs end to end: every program of tests/programs/ (corpus.py's PROGRAMS), on tapejax and on TF.

    python -m benchmarks.programs [--runs N] [--only NAME ...] [--no-write]

Two figures per program and engine, best of N runs (engines and programs interleaved, so a noisy minute hits
both alike):

- **end to end**: process start to exit of `python -m tapejax PROGRAM.py` and of `python PROGRAM.py` (real
  TensorFlow), import included, exactly as a user runs it; the parent times the subprocess. Bytecode is cached
  (PYTHONDONTWRITEBYTECODE is dropped for the runs), as for an installed package.
- **first step**: process start to the moment the program's first gradient is back in Python, its values
  computed. Measured in separate runs of the same program under a small driver (`--child`, below) that imports
  the engine, notes the time, and wraps two public entry points of the engine before running the program
  unchanged:
  - `GradientTape.gradient` called eagerly: its return is the first step's forward and backward pass done;
  - a call of a `tf.function` (the outermost one) during whose trace a gradient was taken: its return is the
    first compiled training step done: trace, compile and run.
  Whichever returns first is the first step; the outputs are read (`.numpy()`) once, so a deferred or
  asynchronous value counts as computed. The same definition on both engines, no edit to the programs, and
  nothing in tapejax's runner: "time to the first line of output" would not do, since most programs print
  their data and model before they train. A program that takes no gradient (data_guide) has no first step.
  The driver also reports when the engine's import finished ("import").

Writes a section of benchmarks/results.md (between its markers; `python -m benchmarks` keeps it) and
benchmarks/plots/programs.png. Without TensorFlow, only tapejax's columns are filled.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
PROGRAM_DIR = REPO / "tests" / "programs"
MARK = "@@tapejax-programs-benchmark"
BEGIN, END = "<!-- programs.py: begin -->", "<!-- programs.py: end -->"
TIMEOUT_S = 900


# -- the child: one program under the first-step hook ----------------------------------------------------------


def _child(engine: str, path: str) -> None:
    """Runs `path` as `python -m tapejax PATH` (engine "tapejax") or `python PATH` ("tf") would, printing to stderr
    the wall-clock times of the engine's import and of the first step."""
    sys.path[0] = os.path.dirname(os.path.abspath(path))  # as `python PATH` sets it (not benchmarks/)
    if engine == "tapejax":
        import tapejax as lib  # noqa: PLC0415
        from tapejax.runner import run_script  # noqa: PLC0415
    else:
        import tensorflow as lib  # noqa: PLC0415
        run_script = None
    print(f"{MARK} import {time.time()!r}", file=sys.stderr, flush=True)
    _hook(lib)
    if run_script is not None:
        sys.exit(run_script(path, []))
    import runpy  # noqa: PLC0415

    sys.argv = [path]
    runpy.run_path(path, run_name="__main__")


def _hook(lib) -> None:
    """Wraps lib.GradientTape.gradient and the tf.function class's __call__ to note the first step (see above)."""
    state = {"done": False, "depth": 0, "traced_gradient": False}

    def computed(outputs) -> None:
        for x in lib.nest.flatten(outputs):
            if hasattr(x, "numpy"):
                x.numpy()

    def note(outputs) -> None:
        computed(outputs)
        state["done"] = True
        print(f"{MARK} first_step {time.time()!r}", file=sys.stderr, flush=True)

    tape_class = lib.GradientTape
    gradient = tape_class.gradient

    def timed_gradient(self, *args, **kwargs):
        result = gradient(self, *args, **kwargs)
        if not state["done"]:
            if lib.executing_eagerly() and state["depth"] == 0:
                note(result)
            else:
                state["traced_gradient"] = True
        return result

    function_class = type(lib.function(lambda: None))
    call = function_class.__call__

    def timed_call(self, *args, **kwargs):
        if state["done"]:
            return call(self, *args, **kwargs)
        state["depth"] += 1
        try:
            result = call(self, *args, **kwargs)
        finally:
            state["depth"] -= 1
        if state["depth"] == 0 and state["traced_gradient"] and not state["done"]:
            note(result)
        return result

    tape_class.gradient = timed_gradient
    function_class.__call__ = timed_call


# -- the parent: timing runs -----------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    """tapejax from this checkout, as tests/programs/test_programs.py runs it; its bytecode cached, as an installed
    package's is (PYTHONDONTWRITEBYTECODE would compile tapejax's sources in every process, and TF's never)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _command(engine: str, path: pathlib.Path, hooked: bool) -> list[str]:
    if hooked:
        return [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", engine, str(path)]
    return [sys.executable, "-m", "tapejax", str(path)] if engine == "tapejax" else [sys.executable, str(path)]


def run_once(engine: str, path: pathlib.Path, hooked: bool) -> dict[str, float | str]:
    """One run: wall seconds, stdout, and (hooked) seconds from process start to import and to first step, and
    from import to first step."""
    start_wall, start = time.time(), time.perf_counter()
    done = subprocess.run(_command(engine, path, hooked), capture_output=True, text=True, cwd=path.parent,
                          env=_env(), timeout=TIMEOUT_S)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{engine} {path.name}: exit code {done.returncode}\n{done.stderr[-3000:]}")
    result: dict[str, float | str] = {"wall": wall, "stdout": done.stdout}
    for name, stamp in re.findall(rf"^{MARK} (\w+) ([\d.e+]+)$", done.stderr, re.M):
        result[name] = float(stamp) - start_wall
    if "first_step" in result:
        result["after_import"] = result["first_step"] - result["import"]
    return result


def measure(names: list[str] | None, runs: int, engines: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """program -> engine -> best of `runs` of each figure ("wall", "import", "first_step", "after_import"); and
    program -> "note" where tapejax's output is not TF's recorded one."""
    sys.path.insert(0, str(PROGRAM_DIR))
    from corpus import EXPECTED, PROGRAMS, same_output  # noqa: PLC0415

    programs = [p for p in PROGRAMS if not names or p.name in names]
    for engine in engines:  # writes the bytecode caches before the first timed run
        subprocess.run([sys.executable, "-c", f"import {'tapejax' if engine == 'tapejax' else 'tensorflow'}"],
                       capture_output=True, env=_env(), timeout=TIMEOUT_S)
    best: dict[str, dict[str, dict[str, float]]] = {p.name: {e: {} for e in engines} for p in programs}
    notes: dict[str, str] = {}
    for run in range(runs):
        for program in programs:
            path = PROGRAM_DIR / f"{program.name}.py"
            for engine in engines:
                for hooked in (False, True):
                    result = run_once(engine, path, hooked)
                    figures = best[program.name][engine]
                    for key in (("import", "first_step", "after_import") if hooked else ("wall",)):
                        if key in result:
                            figures[key] = min(figures.get(key, float("inf")), result[key])
                    if engine == "tapejax" and not hooked and run == 0:
                        expected = EXPECTED / f"{program.name}.txt"
                        if expected.exists():
                            difference = same_output(program, result["stdout"], expected.read_text())
                            if difference:
                                notes[program.name] = difference
                    shown = ", ".join(f"{k} {v:.2f} s" for k, v in result.items() if k != "stdout")
                    print(f"run {run + 1}/{runs} {program.name} {engine}{' (first step)' if hooked else ''}: "
                          f"{shown}", file=sys.stderr, flush=True)
    for name, note in notes.items():
        best[name]["note"] = note  # type: ignore[assignment]
    return best


def _seconds(figures: dict[str, float], key: str) -> str:
    return f"{figures[key]:.2f} s" if key in figures else "-"


def _first_step(figures: dict[str, float]) -> str:
    if "first_step" not in figures:
        return "-"
    return f"{figures['first_step']:.2f} s ({figures['after_import']:.2f} s)"


def _ratio(measured: dict, key: str) -> str:
    a, b = measured.get("tapejax", {}).get(key), measured.get("tf", {}).get(key)
    return f"{a / b:.2f}x" if a and b else "-"


def table(best: dict, runs: int) -> list[str]:
    lines = [f"Real programs end to end (`python -m benchmarks.programs --runs {runs}`; best of {runs} runs, seconds "
             "from process start; first step: until the first gradient is back in Python, see the module "
             "docstring):", "",
             "| program | tapejax end to end | TF end to end | ratio | tapejax import | TF import | "
             "tapejax first step (after import) | TF first step (after import) | ratio |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, measured in best.items():
        tj, tf = measured.get("tapejax", {}), measured.get("tf", {})
        lines.append(f"| {name} | {_seconds(tj, 'wall')} | {_seconds(tf, 'wall')} | {_ratio(measured, 'wall')} | "
                     f"{_seconds(tj, 'import')} | {_seconds(tf, 'import')} | {_first_step(tj)} | "
                     f"{_first_step(tf)} | {_ratio(measured, 'first_step')} |")
    lines += [f"- {name}: tapejax's output differs from TF's recorded one: {m['note']}"
              for name, m in best.items() if "note" in m]
    return lines


def write_section(path: pathlib.Path, lines: list[str]) -> None:
    """Replaces this benchmark's section of results.md (or appends it)."""
    text = path.read_text() if path.exists() else ""
    section = "\n".join([BEGIN, *lines, END])
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs per program and engine; the best is kept")
    parser.add_argument("--only", nargs="*", help="program names")
    parser.add_argument("--no-write", action="store_true", help="print only: no results.md section, no plot")
    parser.add_argument("--output", default=str(pathlib.Path(__file__).with_name("results.md")))
    args = parser.parse_args(argv)
    engines = ["tapejax"] + (["tf"] if importlib.util.find_spec("tensorflow") else [])
    best = measure(args.only, args.runs, engines)
    lines = table(best, args.runs)
    print("\n".join(lines))
    if not args.no_write:
        from benchmarks import plots  # noqa: PLC0415

        write_section(pathlib.Path(args.output), lines)
        figure = plots.programs(best, pathlib.Path(args.output).with_name("plots"))
        if figure:
            print(f"wrote {figure}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
