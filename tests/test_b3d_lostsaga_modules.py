"""The B3D and Lost Saga packages' shape: their modules import one another without a circle
(imports inside functions included), take no ``_private`` name from one another, no function is
longer than 120 lines, and the modules of each role have the family-wide names."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import retromesh.formats.b3d as b3d
import retromesh.formats.lostsaga as lostsaga

PACKAGES = {"b3d": Path(b3d.__file__).parent, "lostsaga": Path(lostsaga.__file__).parent}


def _trees(package: str) -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(PACKAGES[package].glob("*.py"))}


def _imports(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(module of the package, names taken from it) of every relative import, anywhere."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.append((node.module.split(".")[0], [a.name for a in node.names]))
            else:                                   # from . import ani, msh
                out += [(a.name, []) for a in node.names]
    return out


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_circle(package):
    trees = _trees(package)
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


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_private_names_across_modules(package):
    bad = [f"{m} takes {n} from {dep}" for m, t in _trees(package).items()
           for dep, names in _imports(t) for n in names if n.startswith("_")]
    assert bad == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_functions_a_reader_can_hold(package):
    long = [f"{m}.{n.name}: {n.end_lineno - n.lineno + 1} lines"
            for m, t in _trees(package).items() for n in ast.walk(t)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > 120]
    assert long == []


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_modules_by_role(package):
    """The scene mapping reads in ``scene.py``, writes in ``scene_write.py`` and reads back what
    rides in extras in ``scene_extras.py``; the writer takes kept records from there."""
    trees = _trees(package)
    assert {"__init__", "scene", "scene_write", "scene_extras"} <= set(trees)
    assert "scene_extras" in {dep for dep, _ in _imports(trees["scene_write"])}
    assert not {"scene", "scene_write"} & {dep for dep, _ in _imports(trees["scene_extras"])}
