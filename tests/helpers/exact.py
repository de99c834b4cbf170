"""Byte-for-byte trips ``file -> .glb -> file``, companions included (issue 32's measure).

:func:`plain_trip` converts a model with the companions a user's ``retromesh convert`` would
read beside it (``batch.companions``, and the Lost Saga material script ``<mesh>.txt``), writes
it back under its own name into another folder, and compares every file read with the file of
the same name written back. :func:`table_row` counts the models that come back identical.
"""
from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import retromesh
from retromesh import batch


def inputs_of(src: Path) -> list[Path]:
    """``src`` and the files read with it (skeleton, animations, material script)."""
    files = [src, *batch.members(batch.companions(src))]
    script = src.with_suffix(".txt")
    if src.suffix.lower() == ".msh" and script.is_file():
        files.append(script)
    return files


def differing(files: list[Path], back_dir: Path) -> dict[str, str]:
    """``{file name: what differs}`` for each input whose copy in ``back_dir`` is not identical."""
    out: dict[str, str] = {}
    for f in files:
        b = back_dir / f.name
        if not b.is_file():
            out[f.name] = "not written back"
            continue
        x, y = f.read_bytes(), b.read_bytes()
        if x != y:
            first = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            n = sum(p != q for p, q in zip(x, y)) + abs(len(x) - len(y))
            out[f.name] = f"{n} of {len(x)} bytes differ from offset {first} ({len(y)} written)"
    return out


def plain_trip(src: Path, work: Path, *, edit: Callable[[Path], Any] | None = None,
               load: dict[str, Any] | None = None, validate: bool = False) -> dict[str, str]:
    """``src -> mid.glb -> back/<src.name>`` through the public API with the companions the CLI
    reads; ``edit(glb)`` may change the GLB between; ``validate``: the Khronos validator passes
    the GLB (0 errors, 0 warnings). ``{file: difference}``, empty when every file read comes
    back identical."""
    work.mkdir(parents=True, exist_ok=True)
    glb = work / "mid.glb"
    opts = {**batch.companions(src), **(load or {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(src, glb, **opts)
        if validate:
            from helpers.gltfcheck import assert_valid
            assert_valid(glb)
        if edit is not None:
            edit(glb)
        back = work / "back"
        shutil.rmtree(back, ignore_errors=True)
        back.mkdir()
        retromesh.convert(glb, back / src.name)
    return differing(inputs_of(src), back)


def table_row(sources: list[Path], work: Path) -> tuple[int, int, dict[str, dict[str, str]]]:
    """(identical, total, {source: differences}) over ``sources``."""
    bad = {}
    for i, s in enumerate(sources):
        d = plain_trip(s, work / f"{i}_{s.stem}")
        if d:
            bad[s.name] = d
    return len(sources) - len(bad), len(sources), bad
