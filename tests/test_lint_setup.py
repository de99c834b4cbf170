"""The type and lint set-up a user and CI rely on: the ``py.typed`` marker ships, ``record`` is
seen as a dataclass transform, and ``tools/test.sh`` runs the linters and deptry (``set -e``: a
finding fails the script)."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

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


def test_read_types_its_result_by_the_type_asked_for(tmp_path) -> None:
    """``read(p, type=T)`` returns a T (typed as one; no per-format overloads to keep up) and
    refuses a file of another format."""
    from retromesh.formats.b3d import B3dFile
    from retromesh.formats.westwood.vox import VoxFile
    example = Path(__file__).resolve().parents[1] / "examples" / "crate.b3d"
    assert isinstance(retromesh.read(example, type=B3dFile), B3dFile)
    with pytest.raises(retromesh.UnknownFormatError, match="VoxFile"):
        retromesh.read(example, type=VoxFile)
