"""Native counts of a file and its companions (the figures of `retromesh info --json`, from each
format's ``info()``), keyed by role so that a round trip's output can be compared with its input."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import retromesh
from retromesh import registry

#: extensions that are not model data (images written beside a model)
SKIP = {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".dds"}
#: fields compared "vertex count aside where Blender's split requires it"
IGNORED = {"vertices"}


def info(path: Path) -> dict[str, Any]:
    fmt = "lsmat" if path.suffix.lower() == ".txt" else None
    doc = retromesh.read(path, format=fmt)
    f = registry.format_of(doc)
    return {"format": f.name, **(f.info(doc) if f.info else {})}


def roles(files: Iterable[Path], main_stem: str) -> dict[str, Path]:
    """``ext`` for the only file of its type, ``ext:name`` when there are several (name without
    the main file's stem: ``stick_walk.anm`` and ``walk.anm`` are both ``anm:walk``)."""
    files = [Path(f) for f in files if Path(f).suffix.lower() not in SKIP]
    by_ext: dict[str, list[Path]] = {}
    for f in files:
        by_ext.setdefault(f.suffix.lower().lstrip("."), []).append(f)
    out: dict[str, Path] = {}
    for ext, group in by_ext.items():
        if len(group) == 1:
            out[ext] = group[0]
            continue
        for f in group:
            name = f.stem
            if name.lower().startswith(main_stem.lower() + "_"):
                name = name[len(main_stem) + 1:]
            out[f"{ext}:{name}"] = f
    return out


def counts(files: Iterable[Path], main_stem: str) -> dict[str, dict[str, Any]]:
    return {role: info(p) for role, p in sorted(roles(files, main_stem).items())}


def differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]],
                ignore: set[str] = IGNORED) -> list[str]:
    """What changed, as ``role.field before→after`` strings (empty when nothing did)."""
    diffs = []
    for role in sorted(set(before) | set(after)):
        if role not in after:
            diffs.append(f"{role} missing")
            continue
        if role not in before:
            diffs.append(f"{role} new")
            continue
        a, b = before[role], after[role]
        for k in a:
            if k not in ignore and a.get(k) != b.get(k):
                diffs.append(f"{role}.{k} {a.get(k)}→{b.get(k)}")
    return diffs
