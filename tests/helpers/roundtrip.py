"""The round trips every family's tests make, in one place.

* :func:`native_round_trip` -- ``doc -> bytes -> doc``: the bytes read back write the same
  bytes, and the document read equals ``doc`` (field by field, arrays by dtype and bytes).
* :func:`gltf_round_trip` -- ``file -> .glb -> file`` through :func:`retromesh.convert` both
  ways, the GLB checked by the Khronos validator on the way.
* :func:`docs_equal`, :func:`first_difference` -- deep equality of native documents, and where
  two differ (a field path).
* :func:`differences` -- what two ``{name: value}`` summaries disagree on.
"""
from __future__ import annotations

import dataclasses
import struct
from pathlib import Path
from typing import Any

import numpy as np

import retromesh
from helpers.gltfcheck import assert_valid
from retromesh import registry


def native_round_trip(doc: Any, format: str | None = None) -> tuple[bytes, Any]:
    """``(bytes, document read back)``; fails when a byte or a field changes."""
    data = retromesh.to_bytes(doc)
    name = format or registry.format_of(doc).name
    back = retromesh.read(data, format=name)
    assert retromesh.to_bytes(back) == data, f"{name}: the bytes read back write other bytes"
    where = first_difference(doc, back)
    assert where is None, f"{name}: read back differs at {where}"
    return data, back


def gltf_round_trip(src: Path, tmp_path: Path, *, format: str | None = None, validate: bool = True,
                    save_options: dict[str, Any] | None = None, **load: Any) -> dict[str, Path]:
    """``src -> mid.glb -> back<suffix>`` (``format`` for files without an extension, both
    ways); returns the files written back by suffix, the main one also under ``""``."""
    glb = tmp_path / "mid.glb"
    retromesh.convert(src, glb, format=format, **load)
    if validate:
        assert_valid(glb)
    target = tmp_path / f"back{src.suffix}"
    written = retromesh.convert(glb, target, target_format=format, save_options=save_options)
    assert target in written
    return {"": target, **{p.suffix: p for p in written if p != target}, src.suffix: target}


def differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def docs_equal(a: Any, b: Any) -> bool:
    """Deep equality of native documents: arrays by dtype, shape and bytes (a NaN or a -0.0
    kept is equal, a dtype changed is not); Python floats equal when they are the same float32
    (a hand-built document holds 0.1 where the file holds its float32) or both NaN."""
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(
            docs_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            docs_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            docs_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b) or struct.pack("<f", a) == struct.pack("<f", b)
    return a == b


def first_difference(a: Any, b: Any, path: str = "doc") -> str | None:
    """Where ``a`` and ``b`` first differ (a field path), or None when they are equal."""
    if dataclasses.is_dataclass(a):
        if type(a) is not type(b):
            return f"{path}: {type(a).__name__} != {type(b).__name__}"
        for f in dataclasses.fields(a):
            d = first_difference(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    return None if docs_equal(a, b) else f"{path}: {a!r:.80} != {b!r:.80}"
