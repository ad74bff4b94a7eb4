"""The package layout DESIGN.md draws, checked on the source: imports point down the floors,
no module-level import circle, domain packages stay free of FastAPI, and no folder holds more
than twelve modules side by side."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOORS = {"generation": 0, "store": 0, "rubrics": 1, "memory": 1, "loops": 2,
          "app": 3, "training": 3, "evals": 3, "bench": 4}
ALLOWED_SIDEWAYS = {("app", "evals")}  # the CLI dispatches `redraft eval`
NO_FASTAPI = ("generation", "store", "rubrics", "memory", "loops", "training", "evals")
MAX_MODULES = 12


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in FLOORS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, *, top_level_only: bool) -> set[str]:
    """Absolute module names imported by a module (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:  # `if TYPE_CHECKING:` and try-blocks at module level still run or type
        nodes = [n for stmt in tree.body for n in ast.walk(stmt)
                 if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
        nodes = [n for n in nodes if not _under_type_checking(tree, n)]
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def _under_type_checking(tree: ast.Module, target: ast.AST) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
            if any(n is target for n in ast.walk(stmt)):
                return True
    return False


MODULES = _modules()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down_the_floors(name: str) -> None:
    top = name.split(".")[0]
    wrong = []
    for imported in _imports(name, MODULES[name], top_level_only=False):
        other = imported.split(".")[0]
        if other in FLOORS and other != top and (top, other) not in ALLOWED_SIDEWAYS:
            if FLOORS[other] >= FLOORS[top]:
                wrong.append(imported)
        if top in NO_FASTAPI and other in ("fastapi", "starlette"):
            wrong.append(imported)
    assert not wrong, f"{name} imports {sorted(wrong)} (floors: {FLOORS})"


def test_no_module_level_import_circle() -> None:
    graph = {name: {m for m in _imports(name, path, top_level_only=True)
                    if m in MODULES and m != name}
             for name, path in MODULES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            # a package importing its own submodules is how packages export, not a circle
            if len(component) > 1 and not _package_exports(component):
                circles.append(sorted(component))

    for name in graph:
        if name not in index:
            visit(name)
    assert not circles, f"import circles: {circles}"


def _package_exports(component: list[str]) -> bool:
    packages = [m for m in component if MODULES[m].name == "__init__.py"]
    rest = [m for m in component if m not in packages]
    inside = all(any(m.startswith(p + ".") for p in packages) for m in rest)
    upward = any(imported in packages
                 for m in rest for imported in _imports(m, MODULES[m], top_level_only=True))
    return bool(packages) and inside and not upward


def test_no_folder_holds_more_than_twelve_modules() -> None:
    crowded = {}
    for package in FLOORS:
        for folder in [ROOT / package, *(p for p in (ROOT / package).rglob("*") if p.is_dir())]:
            modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
            if len(modules) > MAX_MODULES:
                crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert not crowded, f"folders over {MAX_MODULES} modules: {crowded}"


def test_pip_installs_the_product_packages_only():
    """`pip install` puts our top-level packages into site-packages: none may be a name that a
    popular distribution installs too (`llm` is the `llm` CLI's), and the benches stay in the
    checkout."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    included = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert included == set(FLOORS) - {"bench"} | {"migrations"}
    assert not (ROOT / "llm").exists()
