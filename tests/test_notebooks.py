"""The notebooks in notebooks/ run from top to bottom without an error, and draw their figures.

Each notebook is executed in a fresh Jupyter kernel (nbclient), all three at once; a cell that raises fails its
notebook's test. Every figure is written to a PNG file and checked to be a real, non-blank image. The
committed copies must carry their outputs, so that they read on a repository page.

``python tests/test_notebooks.py [NAME...]`` re-executes the notebooks (all, or those named) and saves them with their
new outputs.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS_DIR = REPO / "notebooks"
CELL_TIMEOUT_SECONDS = 300  # generous: a loaded 2-core CI machine compiles the first jacobians slowly
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# notebook -> the figures it draws, in order
FIGURES = {
    "autodiff.ipynb": ["sigmoid and its gradient"],
    "advanced_autodiff.ipynb": [
        "sigmoid and its jacobian",
        "Hessian heat map",
        "a (batch, batch) slice of the jacobian",
        "batch-jacobian patches: all diagonal",
        "batch-jacobian patches with batch normalization: not diagonal",
    ],
    "custom_gradient.ipynb": ["log1pexp's gradient, custom and naive"],
    "jax_interop.ipynb": ["loss curves of the eager and the to_jax training loops"],
}


def _kernel_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # a non-inline backend would draw nothing into the notebook
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def execute_notebooks(names: list[str]) -> dict[str, object]:
    """Runs the notebooks concurrently, each in its own kernel; name -> executed notebook or its exception."""
    notebooks = {name: nbformat.read(NOTEBOOKS_DIR / name, as_version=4) for name in names}
    clients = [
        nbclient.NotebookClient(
            notebook,
            timeout=CELL_TIMEOUT_SECONDS,
            kernel_name="python3",
            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
            record_timing=False,
        )
        for notebook in notebooks.values()
    ]

    async def run_all() -> list[object]:
        env = _kernel_environment()
        return await asyncio.gather(*(c.async_execute(env=env) for c in clients), return_exceptions=True)

    return dict(zip(notebooks, asyncio.run(run_all())))


def figures_of(notebook: object) -> list[bytes]:
    """The PNG images among a notebook's outputs, in order."""
    return [
        base64.b64decode(output["data"]["image/png"])
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]


@pytest.fixture(scope="module")
def executed() -> dict[str, object]:
    return execute_notebooks(list(FIGURES))


@pytest.mark.parametrize("name", list(FIGURES))
def test_notebook_runs_and_draws_its_figures(executed, name: str, tmp_path: Path) -> None:
    from matplotlib import image

    result = executed[name]
    if isinstance(result, BaseException):  # CellExecutionError names the cell and shows its traceback
        raise result
    errors = [o for cell in result.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors

    pngs = figures_of(result)
    assert len(pngs) == len(FIGURES[name]), f"{name} drew {len(pngs)} figures, expected {FIGURES[name]}"
    for number, (png, title) in enumerate(zip(pngs, FIGURES[name])):
        path = tmp_path / f"{Path(name).stem}-{number}.png"
        path.write_bytes(png)
        assert path.read_bytes()[:8] == PNG_SIGNATURE, f"{path} ({title}) is not a PNG"
        pixels = image.imread(path)
        height, width = pixels.shape[:2]
        assert height >= 100 and width >= 100, f"{path} ({title}) is {width}x{height}"
        assert pixels.std() > 0, f"{path} ({title}) is blank"


@pytest.mark.parametrize("name", list(FIGURES))
def test_committed_notebook_has_its_outputs(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    nbformat.validate(notebook)
    counts = [cell.execution_count for cell in notebook.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), f"{name} was not run top to bottom: `python {__file__}`"
    assert len(figures_of(notebook)) == len(FIGURES[name])
    assert not [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]


def main() -> int:
    """Re-executes every notebook and saves it, outputs included."""
    for name, result in execute_notebooks(sys.argv[1:] or list(FIGURES)).items():
        if isinstance(result, BaseException):
            print(f"{name}: {result}", file=sys.stderr)
            return 1
        nbformat.write(result, NOTEBOOKS_DIR / name)
        print(f"saved {NOTEBOOKS_DIR / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
