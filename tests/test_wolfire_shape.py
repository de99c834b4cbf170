"""The Wolfire package keeps the family shape of src/retromesh/formats/README.md: formats are
registered in the package's ``__init__`` only, the native modules know nothing of scenes or of
the registry, functions and modules stay short, and no module takes another's private names."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "retromesh" / "formats" / "wolfire"
#: one module per file type: the file layout, no scene mapping
NATIVE = ("anm", "phxbn", "obj", "fzx", "sav", "solid", "ogxml", "lugaru_skeleton",
          "lugaru_animation", "lugaru_character", "common")
#: fixtures built with our own writers (their layout is kept by the tests' own helpers)
SAMPLES = ("samples", "lugaru_samples", "ogxml_samples")


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.glob("*.py"))}


def _imports(tree: ast.Module) -> list[ast.ImportFrom]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]


def test_formats_are_registered_in_the_package_init_only():
    for name, tree in _modules().items():
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id in ("register", "companion_rule")]
        if name == "__init__":
            assert calls
        else:
            assert not calls, f"{name}.py registers a format: move it to __init__.py"


@pytest.mark.parametrize("name", NATIVE)
def test_native_modules_know_no_scene(name):
    tree = _modules()[name]
    for imp in _imports(tree):
        target = ("." * imp.level) + (imp.module or "")
        assert target not in ("...scene", "...registry"), f"{name}.py imports {target}"
        assert "scene" not in (imp.module or "") or imp.level == 0, f"{name}.py imports {target}"


def test_functions_and_modules_are_short():
    for name, tree in _modules().items():
        lines = (PACKAGE / f"{name}.py").read_text(encoding="utf-8").count("\n")
        assert lines <= 800, f"{name}.py has {lines} lines"
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert n.end_lineno is not None
                length = n.end_lineno - n.lineno + 1
                assert length <= 120, f"{name}.{n.name} is {length} lines"


def test_no_private_names_across_modules():
    for name, tree in _modules().items():
        if name in SAMPLES:
            continue
        for imp in _imports(tree):
            private = [a.name for a in imp.names if a.name.startswith("_") and a.name != "__future__"]
            assert not private, f"{name}.py imports {private} from {imp.module}"
