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
from .errors import EngineWarning, RefusedError, RetromeshError
from .findings import Finding

__all__ = ["check_document", "check_together", "companion_rule", "guard", "refusal"]

#: ``rule(doc, companion_doc) -> findings``
PairRule = Callable[[Any, Any], list[Finding]]
#: (format, companion format) -> its rule
_PAIR_RULES: dict[tuple[str, str], PairRule] = {}


def companion_rule(fmt: str, companion: str) -> Callable[[PairRule], PairRule]:
    """Register ``rule(doc, companion_doc)``: the findings of a ``fmt`` document read with a
    ``companion`` document (``companion_rule("phxbn", "obj")``)."""
    def add(fn: PairRule) -> PairRule:
        _PAIR_RULES[(fmt, companion)] = fn
        return fn
    return add


def check_document(doc: Any, fmt: registry.Format | None = None) -> list[Finding]:
    """The findings of one native document by its format's rules (none for formats without)."""
    fmt = fmt if fmt is not None else registry.format_of(doc)
    if fmt.check is None:
        return []
    return list(fmt.check(doc))


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


def refusal(findings: Iterable[tuple[str, Finding]]) -> RefusedError | None:
    """The error to raise when ``(file name, finding)`` pairs hold a rule the engine refuses
    files by (None when they hold none)."""
    errors = [(name, f) for name, f in findings if f.is_error]
    if not errors:
        return None
    lines = "; ".join(f"{name}: {f.message} [{f.rule}]" for name, f in errors)
    return RefusedError(f"the game would refuse it: {lines} (nothing written; force=True / "
                        "--force writes it anyway)", [f for _, f in errors])


def guard(docs: Mapping[Any, Any], *, force: bool = False) -> list[Finding]:
    """Run every rule on the documents one conversion is about to write (``{path: doc}``;
    bytes are skipped): raise :class:`RefusedError` when the engine would refuse one of them,
    unless ``force``; warn (:class:`EngineWarning`) for each other finding. Returns them all."""
    typed: list[tuple[str, registry.Format, Any]] = []
    for key, doc in docs.items():
        if isinstance(doc, (bytes, bytearray, memoryview)):
            continue
        try:
            fmt = registry.format_of(doc)
        except RetromeshError:          # not a registered document type: no rules to apply
            continue
        typed.append((str(getattr(key, "name", key)), fmt, doc))
    found: list[tuple[str, Finding]] = []
    for name, fmt, doc in typed:
        found += [(name, f) for f in check_document(doc, fmt)]
    found += [(typed[i][0], f) for i, f in check_together([(f, d) for _, f, d in typed])]
    refused = None if force else refusal(found)
    if refused is not None:
        raise refused
    for name, f in found:
        note = "the game refuses this (written because of force): " if f.is_error else ""
        warnings.warn(EngineWarning(f"{name}: {note}{f.message} [{f.rule}]", f.rule),
                      stacklevel=3)
    return [f for _, f in found]
