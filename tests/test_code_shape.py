"""The shape the code keeps (DEVELOPERS.md): modules under 800 lines, functions under 120, and no
``_private`` name of another module used (make it public, or move the job where it is used).
Import circles are ``test_import_cycles.py``'s.

A private name is used across modules when it is imported (``from .registry import _sniff``),
reached as an attribute of an imported retromesh module (``registry._sniff(...)``,
``retromesh._outputs``, ``from . import model`` then ``model._X``; assigning one too) or named
by ``getattr(module, "_x")``.

The rule for tests: a test reaches a private name only to patch it, with
``monkeypatch.setattr``/``delattr`` or ``unittest.mock.patch``/``patch.object`` (a limit
lowered, a failure injected; the patch is undone after the test, and it fails loudly once the
name is gone). Everything else a test imports, calls or reads from retromesh is public, so that
reworking a module's insides breaks no test of what it does.
"""
from __future__ import annotations

import ast
from pathlib import Path

import retromesh

SRC = Path(retromesh.__file__).parent
TESTS = Path(__file__).parent
#: the calls that patch a name (allowed in tests)
PATCHES = {"setattr", "delattr", "patch", "object"}
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


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    p = SRC.parent.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _imported_from(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")[:len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _module_bindings(tree: ast.Module, package: str) -> dict[str, str]:
    """Names the file binds to retromesh modules (``import retromesh.x as y``, ``from . import
    registry``): name -> module."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "retromesh":
                    out[a.asname or "retromesh"] = a.name if a.asname else "retromesh"
        elif isinstance(node, ast.ImportFrom):
            mod = _imported_from(node, package)
            if mod.split(".")[0] == "retromesh":
                out.update((a.asname or a.name, f"{mod}.{a.name}") for a in node.names
                           if _is_module(f"{mod}.{a.name}"))
    return out


def _module_of(node: ast.expr, bindings: dict[str, str]) -> str | None:
    """The retromesh module ``node`` names (``registry``, ``retromesh.gltf``), else None."""
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bindings:
        return None
    name = ".".join([bindings[node.id], *reversed(chain)])
    return name if _is_module(name) else None


def _is_patch(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in PATCHES or \
        isinstance(f, ast.Name) and f.id in PATCHES


def _reaches(path: Path, tree: ast.Module, package: str, *, patches_allowed: bool) -> list[str]:
    """Every use in ``tree`` of a private name of a retromesh module (see the docstring)."""
    bindings = _module_bindings(tree, package)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and \
                _imported_from(node, package).split(".")[0] == "retromesh":
            found += [f"{path}:{node.lineno} from {_imported_from(node, package)} import "
                      f"{a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            module = _module_of(node.value, bindings)
            if module is not None:
                found.append(f"{path}:{node.lineno} {module}.{node.attr}")
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and \
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                and _private(node.args[1].value):
            module = _module_of(node.args[0], bindings)
            if module is not None and not (patches_allowed and _is_patch(node)):
                found.append(f"{path}:{node.lineno} {ast.unparse(node.func)}({module}, "
                             f"{node.args[1].value!r})")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) \
                and node.args[0].value.startswith("retromesh.") \
                and any(_private(p) for p in node.args[0].value.split(".")) \
                and not (patches_allowed and _is_patch(node)):
            found.append(f"{path}:{node.lineno} {ast.unparse(node.func)}({node.args[0].value!r})")
    return found


def test_no_private_name_of_another_module_is_used() -> None:
    found = []
    for path, tree, _ in _modules():
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found += _reaches(path.relative_to(SRC), tree, package, patches_allowed=False)
    assert not found, found


def test_tests_reach_private_names_only_to_patch_them() -> None:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += _reaches(path.relative_to(TESTS), tree, "", patches_allowed=True)
    assert not found, found


def test_the_reach_check_sees_each_form(tmp_path) -> None:
    """The checks above would catch each form (a check that finds nothing must be able to)."""
    text = """
import retromesh
import retromesh.gltf.model as m
from retromesh import registry
from retromesh.registry import _sniff
registry._sniff(f, b"")
retromesh._outputs
retromesh.gltf.model._x = 1
getattr(m, "_y")
monkeypatch.setattr(registry, "_z", 1)
monkeypatch.setattr("retromesh.registry._w", 1)
registry.sniffs(f, b"")
thing._private
"""
    tree = ast.parse(text)
    strict = _reaches(Path("x.py"), tree, "", patches_allowed=False)
    assert sorted(r.split(" ", 1)[1] for r in strict) == sorted([
        "from retromesh.registry import _sniff", "retromesh.registry._sniff",
        "retromesh._outputs", "retromesh.gltf.model._x", "getattr(retromesh.gltf.model, '_y')",
        "monkeypatch.setattr(retromesh.registry, '_z')",
        "monkeypatch.setattr('retromesh.registry._w')"])
    assert len(_reaches(Path("x.py"), tree, "", patches_allowed=True)) == 5
