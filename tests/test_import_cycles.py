"""No import circle among retromesh's modules, inside packages too.

Every module under ``src/retromesh`` is parsed with :mod:`ast` (nothing is imported) and each
``import`` / ``from ... import`` statement is an edge, wherever it stands: at module level or
inside a function (a lazy import that only dodges a circle is still a circle). Relative imports
are resolved against the module's package. ``from pkg import name`` points at ``pkg.name``
when that is a module, else at ``pkg`` itself. Importing ``a.b`` also runs ``a/__init__.py``,
but that edge is left out: every submodule would otherwise form a circle with its package's
``__init__`` that registers it. Imports under ``if TYPE_CHECKING:`` never run and are left out.

A strongly connected component of more than one module is a circle: modules that lean on each
other, which can be neither read nor tested one without the other.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "retromesh"

#: circles other parts of the code base still hold; this set must shrink to empty (a circle
#: broken is removed from it: the test also fails on an entry that is no circle any more)
KNOWN: set[frozenset[str]] = set()     # none left: keep it empty


def module_names(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under the package."""
    out: dict[str, Path] = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
            continue
        if isinstance(node, ast.If) and _type_checking_only(node):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The retromesh modules that module ``name`` (file ``path``) imports."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
            continue
        if node.level:
            base = package.split(".")
            if node.level > 1:
                base = base[:len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            if sub in modules:
                out.add(sub)
            elif target in modules:
                out.add(target)
    out.discard(name)
    return out


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = module_names(src)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _describe(component: frozenset[str], graph: dict[str, set[str]]) -> str:
    edges = sorted(f"  {a} -> {b}" for a in component for b in graph[a] if b in component)
    return "\n".join([", ".join(sorted(component))] + edges)


def test_the_graph_sees_relative_function_level_and_package_imports(tmp_path: Path) -> None:
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from .. import a\n")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import f\n"
        "import retromesh.sub\n")
    graph = import_graph(tmp_path)
    assert graph == {"retromesh": set(), "retromesh.a": {"retromesh.sub.b"},
                     "retromesh.sub": {"retromesh.a"}, "retromesh.sub.b": {"retromesh.sub"}}
    assert circles(graph) == [frozenset({"retromesh.a", "retromesh.sub", "retromesh.sub.b"})]


def test_no_import_circle() -> None:
    graph = import_graph()
    assert len(graph) > 50, "the source tree was not found"
    found = set(circles(graph))
    new = [c for c in found if c not in KNOWN]
    assert not new, "import circles:\n" + "\n\n".join(_describe(c, graph) for c in new)
    gone = KNOWN - found
    assert not gone, f"no circle any more (remove from KNOWN): {sorted(map(sorted, gone))}"
