"""The shape the code keeps (DEVELOPERS.md): modules under 800 lines, functions under 120, and no
``_private`` name imported from another module (make it public, or move it where it is used).
Import circles are ``test_import_cycles.py``'s."""
from __future__ import annotations

import ast
from pathlib import Path

import retromesh

SRC = Path(retromesh.__file__).parent
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 120


def _modules() -> list[tuple[Path, ast.Module, int]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append((path, ast.parse(text), text.count("\n")))
    return out


def test_modules_are_under_800_lines() -> None:
    big = [f"{p.relative_to(SRC)}: {n}" for p, _, n in _modules() if n > MAX_MODULE_LINES]
    assert not big, big


def test_functions_are_under_120_lines() -> None:
    long = [f"{p.relative_to(SRC)}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1}"
            for p, tree, _ in _modules() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, long


def test_no_private_name_is_imported_from_another_module() -> None:
    found = [f"{p.relative_to(SRC)}: from {'.' * node.level}{node.module or ''} import {a.name}"
             for p, tree, _ in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom)
             for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, found
