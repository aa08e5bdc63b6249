"""The layering of the package: `_src` never imports the op tables or keras, and modules import downwards only."""

from __future__ import annotations

import ast
import pathlib

import tapejax

ROOT = pathlib.Path(tapejax.__file__).parent
# Each module may import only modules listed before it (DESIGN/STYLE layering, adapted: see docs/design.md).
ORDER = ["dtypes", "errors", "logs", "tensor", "deferred", "convert", "tape", "variable", "dispatch", "registry",
         "lowering", "structure", "transforms", "sweep", "problem", "debugging", "tape_arguments",
         "gradient_tape", "forward", "custom_gradient", "module", "control_flow",
         "autograph", "function", "printing"]


def _runtime_nodes(tree: ast.AST):
    """Every node except those under `if TYPE_CHECKING:` (imports for annotations only)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node)


def _internal_imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tapejax"):
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.name.startswith("tapejax"))
    return names


def test_src_never_imports_ops_or_keras():
    for path in (ROOT / "_src").glob("*.py"):
        for name in _internal_imports(path):
            assert not name.startswith(("tapejax.ops", "tapejax.keras")), f"{path.name} imports {name}"


def test_src_modules_import_downwards_only():
    for i, module in enumerate(ORDER):
        path = ROOT / "_src" / f"{module}.py"
        allowed = set(ORDER[:i])
        imported = {n for n in _internal_imports(path) if not n.startswith("tapejax")}
        assert imported <= allowed, f"{module} imports {sorted(imported - allowed)}, which come after it"


def test_every_src_module_is_in_the_order():
    modules = {p.stem for p in (ROOT / "_src").glob("*.py")} - {"__init__"}
    assert modules <= set(ORDER) | {"typing"}, sorted(modules - set(ORDER))
