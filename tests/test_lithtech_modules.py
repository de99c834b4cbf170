"""The LithTech package's shape: its modules import one another without a circle (imports
inside functions included), take no ``_private`` name from one another, and no function is
longer than 120 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import retromesh.formats.lithtech as lithtech

PACKAGE = Path(lithtech.__file__).parent


def _trees() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.glob("*.py"))}


def _imports(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(module of the package, names taken from it) of every relative import, anywhere."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.append((node.module.split(".")[0], [a.name for a in node.names]))
            else:                                   # from . import abc, scene_extras
                out += [(a.name, []) for a in node.names]
    return out


def test_no_import_circle():
    trees = _trees()
    edges = {m: {dep if dep in trees else "__init__" for dep, _ in _imports(t)} - {m}
             for m, t in trees.items()}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(edges[m]):
            assert state.get(d) != 1, " -> ".join(path + [m, d])
            if d not in state:
                visit(d, path + [m])
        state[m] = 2

    for m in trees:
        if m not in state:
            visit(m, [])


def test_no_private_names_across_modules():
    bad = [f"{m} takes {n} from {dep}" for m, t in _trees().items() for dep, names in _imports(t)
           for n in names if n.startswith("_")]
    assert bad == []


def test_functions_a_reader_can_hold():
    long = [f"{m}.{n.name}: {n.end_lineno - n.lineno + 1} lines" for m, t in _trees().items()
            for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > 120]
    assert long == []
