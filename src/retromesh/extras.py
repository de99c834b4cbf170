"""Typed reads of what a scene's ``extras`` hold.

Writers read back what ``to_scene`` recorded in extras (layouts, kept records, names), but
extras come from files: a glTF from the internet, or one a person edited, can hold any JSON
there. Each getter returns the value when it has the expected type and range, else the
default, so a wrong value reads as "not recorded" and never raises.

A whole native document a mapping keeps for its writer (Lugaru's and Overgrowth's files) is
kept as compact JSON (:func:`compact_json`) and read back with :func:`load_kept`, which gives
None for anything but that document.
"""
from __future__ import annotations

import json
import math
from typing import Any

from . import jsoncodec
from .errors import RetromeshError

__all__ = ["integer", "number", "text", "integers", "numbers", "FLOAT32", "compact_json",
           "load_kept", "BLENDER_MARK", "animation_extras"]

#: scene extras key the Blender extension sets on a GLB Blender wrote (its generator): writers
#: then take a value within their stated tolerance of what retromesh wrote as unedited
#: (Blender stores floats its own way; docs/lossless.md)
BLENDER_MARK = "retromesh_blender"

_I32 = (-2**31, 2**31 - 1)
#: the finite float32 range: ``lo, hi`` of a value that a file stores as float32
FLOAT32 = (-3.4028234663852886e38, 3.4028234663852886e38)


def integer(d: Any, key: Any, default: Any = None, lo: int = _I32[0], hi: int = _I32[1]) -> Any:
    """``d[key]`` as an int in ``lo..hi`` (a whole float counts; a bool does not)."""
    v = d.get(key) if isinstance(d, dict) else None
    if isinstance(v, float) and math.isfinite(v) and v == int(v):
        v = int(v)
    if type(v) is int and lo <= v <= hi:
        return v
    return default


def number(d: Any, key: Any, default: Any = None, lo: float = -math.inf,
           hi: float = math.inf) -> Any:
    """``d[key]`` as a finite float in ``lo..hi``."""
    v = d.get(key) if isinstance(d, dict) else None
    if (type(v) is int or type(v) is float) and math.isfinite(v) and lo <= v <= hi:
        return float(v)
    return default


def text(d: Any, key: Any, default: Any = None) -> Any:
    """``d[key]`` when it is a string."""
    v = d.get(key) if isinstance(d, dict) else None
    return v if isinstance(v, str) else default


def integers(value: Any, n: int | None = None, lo: int = _I32[0], hi: int = _I32[1]) -> list[int] | None:
    """``value`` as a list of ints in ``lo..hi`` (of length ``n`` when given), else None."""
    if not isinstance(value, list) or (n is not None and len(value) != n):
        return None
    out = [integer({0: v}, 0, None, lo, hi) for v in value]
    return None if any(v is None for v in out) else out


def numbers(value: Any, n: int | None = None, lo: float = -math.inf,
            hi: float = math.inf) -> list[float] | None:
    """``value`` as a list of finite floats in ``lo..hi`` (of length ``n`` when given), else
    None (a bool is no number)."""
    if not isinstance(value, list) or (n is not None and len(value) != n):
        return None
    out = [number({0: v}, 0, None, lo, hi) for v in value]
    return None if any(v is None for v in out) else out


def compact_json(doc: Any) -> str:
    """A native document as the compact JSON (:mod:`retromesh.jsoncodec`) kept in extras."""
    return json.dumps(jsoncodec.encode(doc), separators=(",", ":"))


def load_kept(text: Any, kind: type) -> Any:
    """The document of type ``kind`` that :func:`compact_json` kept, else None (not a string,
    not JSON, or another document: a damaged or hand-made glTF)."""
    if not isinstance(text, str):
        return None
    try:
        doc = jsoncodec.decode(json.loads(text))
    except (ValueError, TypeError, RetromeshError):
        return None
    return doc if isinstance(doc, kind) else None


def animation_extras(scene: Any, anim: Any, key: str) -> dict[str, Any]:
    """``anim``'s extras, with what the copy ``scene`` keeps of them under ``key`` (a list of
    dicts, one per animation, found by ``"name"``) filling what they lack: Blender's glTF
    importer drops animation extras, not the scene's."""
    kept = (scene.extras or {}).get(key)
    kept = next((k for k in kept if isinstance(k, dict) and k.get("name") == anim.name), None) \
        if isinstance(kept, list) else None
    out = dict(kept) if kept is not None else {}
    out.update(anim.extras or {})
    return out
