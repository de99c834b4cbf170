"""The type and lint set-up a user and CI rely on: the ``py.typed`` marker ships, ``record`` is
seen as a dataclass transform, and ``tools/test.sh`` runs the linters and deptry (``set -e``: a
finding fails the script)."""
from __future__ import annotations

import tomllib
from pathlib import Path

import retromesh
from retromesh.records import record

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_py_typed_marker_ships() -> None:
    assert (Path(retromesh.__file__).parent / "py.typed").is_file()
    assert "py.typed" in _pyproject()["tool"]["setuptools"]["package-data"]["retromesh"]


def test_record_is_a_dataclass_transform() -> None:
    # what type checkers read to see each record's fields as its constructor
    assert record.__dataclass_transform__["eq_default"] is True


def test_test_script_runs_the_linters_and_fails_on_findings() -> None:
    script = (ROOT / "tools" / "test.sh").read_text(encoding="utf-8")
    lines = [ln.strip() for ln in script.splitlines()]
    assert "set -euo pipefail" in lines
    assert "python3 -m ruff check src tests" in lines
    assert "python3 -m mypy src/retromesh" in lines
    assert "python3 -m deptry src" in lines
    everything = "src tests examples benchmarks tools --optional-dependencies-dev-groups lint"
    assert f"python3 -m deptry {everything}" in lines
    assert any("[test,lint]" in ln for ln in lines if ln.startswith("python3 -m pip install"))
    pins = _pyproject()["project"]["optional-dependencies"]["lint"]
    assert {p.split("==")[0] for p in pins} == {"ruff", "mypy", "deptry"}
    assert all("==" in p for p in pins)


def test_deptry_configuration_keeps_the_extras_apart() -> None:
    """``deptry src`` treats every extra as development-only (the package may import only its
    runtime dependencies); the ignores are the few imports deptry cannot judge."""
    deptry = _pyproject()["tool"]["deptry"]
    extras = set(_pyproject()["project"]["optional-dependencies"])
    assert set(deptry["optional_dependencies_dev_groups"]) == extras
    assert deptry["per_rule_ignores"] == {"DEP001": ["bpy", "bpy_extras", "mathutils", "addon_utils"],
                                          "DEP002": ["pygltflib"]}
    assert "ignore" not in deptry


def test_mypy_configuration_has_no_blanket_ignores() -> None:
    mypy = _pyproject()["tool"]["mypy"]
    assert mypy["warn_unused_ignores"] and mypy["strict_equality"]
    assert "ignore_missing_imports" not in mypy
    assert not any(o.get("ignore_errors") for o in mypy.get("overrides", []))


def test_read_is_typed_for_every_registered_format() -> None:
    """Each format has a ``read`` overload naming its document type, and every document type
    is in the ``Document`` union (a new format must join both, or ``read`` types it as the
    union)."""
    import ast

    from retromesh import registry
    tree = ast.parse((Path(retromesh.__file__).parent / "__init__.py").read_text(encoding="utf-8"))
    overloaded: set[str] = set()
    union: set[str] = set()
    imported = {a.asname or a.name: a.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for a in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "read" and node.decorator_list:
            ann = node.args.args[1].annotation
            if isinstance(ann, ast.Subscript) and ast.unparse(ann.value) == "Literal":
                overloaded |= {ast.literal_eval(e) for e in ast.walk(ann.slice)
                               if isinstance(e, ast.Constant)}
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "Document":
            union = {imported.get(n.id, n.id) for n in ast.walk(node.value)
                     if isinstance(n, ast.Name)}
    for fmt in registry.formats():
        assert fmt.name in overloaded, f"no read overload for {fmt.name}"
        for t in fmt.doc_types:
            assert t.__name__ in union, f"{t.__name__} ({fmt.name}) is not in Document"
