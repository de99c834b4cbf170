"""Every format family has the shape ``src/retromesh/formats/README.md`` states: the same
modules for the same roles, registration in the family's ``__init__`` only, and native modules
that know nothing of scenes or the registry."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import retromesh
from retromesh import registry

FORMATS = Path(retromesh.__file__).parent / "formats"
#: the rule is a document of the source tree (not installed with the package)
RULE = Path(__file__).resolve().parents[1] / "src" / "retromesh" / "formats" / "README.md"
FAMILIES = sorted(p.name for p in FORMATS.iterdir() if (p / "__init__.py").is_file())
ROLES = ("manifest.py", "__init__.py", "scene.py", "scene_write.py", "scene_extras.py",
         "samples.py")
REGISTERING = {"register", "register_converter", "companion_rule"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_the_rule_names_every_family() -> None:
    """Every family package is one the registry imports (``FORMAT_MODULES``), and the rule
    names each role's module."""
    assert FAMILIES == sorted(m.rsplit(".", 1)[1] for m in registry.FORMAT_MODULES
                              if m.startswith("retromesh.formats."))
    rule = RULE.read_text(encoding="utf-8")
    for module in ROLES:
        assert f"`{module}`" in rule


@pytest.mark.parametrize("family", FAMILIES)
def test_family_has_a_module_for_each_role(family: str) -> None:
    missing = [m for m in ROLES if not (FORMATS / family / m).is_file()]
    assert not missing, f"{family} lacks {missing}"


@pytest.mark.parametrize("family", FAMILIES)
def test_family_registers_in_its_init_only(family: str) -> None:
    elsewhere = []
    for path in sorted((FORMATS / family).glob("*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else \
                    node.func.attr if isinstance(node.func, ast.Attribute) else ""
                if name in REGISTERING:
                    elsewhere.append(f"{path.name}:{node.lineno} {name}")
            elif isinstance(node, ast.FunctionDef) and any(
                    ast.unparse(d).split("(")[0].split(".")[-1] in REGISTERING
                    for d in node.decorator_list):
                elsewhere.append(f"{path.name}:{node.lineno} @{node.name}")
    assert not elsewhere, elsewhere


def _native_modules() -> list[str]:
    """The modules that define a registered format's ``read`` (a family ``__init__`` that
    dispatches between versions is the registration module, not a native one)."""
    names = {f.read.__module__ for f in registry.formats()
             if f.read is not None and f.read.__module__.startswith("retromesh.formats.")}
    return sorted(n for n in names if not Path(sys.modules[n].__file__ or "").name == "__init__.py")


@pytest.mark.parametrize("module", _native_modules())
def test_native_modules_know_no_scene_and_no_registry(module: str) -> None:
    path = Path(sys.modules[module].__file__ or "")
    bad = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            target = node.module or ""
            names = [a.name for a in node.names]
            last = target.split(".")[-1]
            if last in ("registry", "scene") or last.startswith("scene_") or "_scene" in last \
                    or any(n == "registry" or n.startswith("scene") or "_scene" in n for n in names):
                bad.append(f"{path.name}:{node.lineno} from {'.' * node.level}{target} "
                           f"import {', '.join(names)}")
    assert not bad, bad


def _relative_imports(path: Path) -> set[str]:
    """The family modules ``path`` imports (relative imports one level up, anywhere in it)."""
    out: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module} if node.module else {a.name for a in node.names}
    return out


@pytest.mark.parametrize("family", FAMILIES)
def test_kept_data_sits_below_the_mapping_and_the_writer(family: str) -> None:
    """``scene_extras`` is read by the writer and written by the mapping, never the other way."""
    assert not {"scene", "scene_write"} & _relative_imports(FORMATS / family / "scene_extras.py")
