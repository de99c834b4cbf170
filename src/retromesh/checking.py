"""Running the engine rules of ``retromesh check`` on documents: one file, files read together,
and what a conversion is about to write.

Each format's ``check(doc)`` returns :class:`~retromesh.findings.Finding` s for one document.
Rules that span files (a ``.phxbn``'s vertex weights against the ``.obj`` it skins) are
registered here by the families with :func:`companion_rule` and run by :func:`check_together`
whenever the documents meet: ``retromesh check`` with the companions ``convert`` would read,
and :func:`guard` on the files one conversion writes. The list of rules, their ids and where
each comes from is ``docs/check-rules.md``.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import registry
from .errors import EngineWarning, RefusedError
from .findings import Finding, as_findings

__all__ = ["check_document", "check_together", "companion_rule", "guard", "refusal"]

#: (format, companion format) -> rule(doc, companion doc) -> findings
_PAIR_RULES: dict[tuple[str, str], Callable[[Any, Any], list[Finding]]] = {}


def companion_rule(fmt: str, companion: str
                   ) -> Callable[[Callable[[Any, Any], list[Finding]]], Callable[[Any, Any], list[Finding]]]:
    """Register ``rule(doc, companion_doc)``: the findings of a ``fmt`` document read with a
    ``companion`` document (``companion_rule("phxbn", "obj")``)."""
    def add(fn: Callable[[Any, Any], list[Finding]]) -> Callable[[Any, Any], list[Finding]]:
        _PAIR_RULES[(fmt, companion)] = fn
        return fn
    return add


def check_document(doc: Any, fmt: registry.Format | None = None) -> list[Finding]:
    """The findings of one native document by its format's rules (none for formats without)."""
    fmt = fmt if fmt is not None else registry.format_of(doc)
    if fmt.check is None:
        return []
    return as_findings(fmt.check(doc), fmt.name)


def check_together(docs: Iterable[tuple[registry.Format, Any]]) -> list[tuple[int, Finding]]:
    """The findings of the rules that span two of ``docs`` (files read or written together),
    each with the index of the document whose rule it is."""
    typed = list(docs)
    out: list[tuple[int, Finding]] = []
    for i, (fmt, doc) in enumerate(typed):
        for j, (cfmt, cdoc) in enumerate(typed):
            rule = _PAIR_RULES.get((fmt.name, cfmt.name)) if i != j else None
            if rule is not None:
                out += [(i, f) for f in rule(doc, cdoc)]
    return out


def refusal(findings: Iterable[Finding], what: str) -> RefusedError | None:
    """The error to raise when ``findings`` hold a rule the engine refuses files by."""
    errors = [f for f in findings if f.is_error]
    if not errors:
        return None
    lines = "; ".join(f"{f.message} [{f.rule}]" for f in errors)
    return RefusedError(f"{what}: the game would refuse it: {lines} (nothing written; "
                        "force=True / --force writes it anyway)", errors)


def guard(docs: Mapping[Any, Any], *, force: bool = False) -> list[Finding]:
    """Run every rule on the documents one conversion is about to write (``{path: doc}``;
    bytes are skipped): raise :class:`RefusedError` when the engine would refuse one of them,
    unless ``force``; warn (:class:`EngineWarning`) for each other finding. Returns them all."""
    typed: list[tuple[Any, registry.Format, Any]] = []
    for key, doc in docs.items():
        if isinstance(doc, (bytes, bytearray, memoryview)):
            continue
        try:
            typed.append((key, registry.format_of(doc), doc))
        except Exception:          # not a registered document type: nothing to check it by
            continue
    found: list[tuple[Any, Finding]] = []
    for key, fmt, doc in typed:
        found += [(key, f) for f in check_document(doc, fmt)]
    found += [(typed[i][0], f) for i, f in check_together([(f, d) for _, f, d in typed])]
    if not force:
        for key, _ in found:
            exc = refusal([f for k, f in found if k == key], str(getattr(key, "name", key)))
            if exc is not None:
                raise exc
    for key, f in found:
        name = getattr(key, "name", key)
        note = "the game refuses this (written because of force): " if f.is_error else ""
        warnings.warn(EngineWarning(f"{name}: {note}{f.message} [{f.rule}]", f.rule),
                      stacklevel=3)
    return [f for _, f in found]
