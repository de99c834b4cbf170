"""``retromesh build``: a JSON document checked before a byte is written.

An edited JSON that lost a field would otherwise build a document of defaults (a 12-byte
``.b3d``): every ``$type`` object must carry every field of its class, and the bytes built
must read back as the format.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from .. import jsoncodec, registry
from ..errors import DocumentError, FormatError, RetromeshError

__all__ = ["missing_fields", "build_checked"]


def missing_fields(obj: Any, path: str = "$") -> list[str]:
    """``path.field`` for every field a ``$type`` object of the JSON leaves out."""
    out: list[str] = []
    if isinstance(obj, dict):
        if "$type" in obj:
            cls = jsoncodec.class_of(str(obj["$type"]))
            if cls is not None:
                out += [f"{path}.{f.name}" for f in dataclasses.fields(cls)
                        if f.init and f.name not in obj]
        for k, v in obj.items():
            if not k.startswith("$"):
                out += missing_fields(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += missing_fields(v, f"{path}[{i}]")
    return out


def build_checked(text: bytes, target: Path) -> dict[Path, bytes]:
    """The files ``retromesh build`` writes for ``text``; raises before anything is written."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise FormatError("JSON written by `retromesh dump`", got=str(exc)) from None
    if not isinstance(raw, dict) or "$type" not in raw:
        raise FormatError("a document written by `retromesh dump` (an object with \"$type\")",
                          path="$", got=type(raw).__name__)
    gaps = missing_fields(raw)
    if gaps:
        more = f" and {len(gaps) - 5} more" if len(gaps) > 5 else ""
        raise DocumentError(f"incomplete document: missing {', '.join(gaps[:5])}{more} "
                            "(nothing written)")
    doc = jsoncodec.decode(raw)
    fmt = registry.format_of(doc)
    try:
        files = registry.outputs_of(doc, target)
    except RetromeshError:
        raise
    except Exception as exc:   # a value of the wrong type or out of range in the edited JSON
        raise DocumentError(f"the document cannot be written as {fmt.name}: "
                            f"{type(exc).__name__}: {exc} (nothing written)") from None
    main = files.get(target, next(iter(files.values()), b""))
    try:
        registry.parse(fmt, main, str(target))
    except FormatError as exc:
        raise DocumentError(f"the {fmt.name} built does not read back ({exc}); nothing "
                            "written") from None
    return files
