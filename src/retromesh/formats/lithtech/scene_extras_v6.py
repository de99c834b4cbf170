"""LithTech ABC v6 data that glTF has no place for: written to glTF ``extras`` by ``to_scene``
(:mod:`.scene_read_v6`) and read back by ``from_scene`` (:mod:`.scene_write_v6`) when present
and consistent with the scene (the v9-v13 ones are in :mod:`.scene_extras`).

==========================  =====================================================================
glTF object                 extras
==========================  =====================================================================
scene                       ``abc_version`` (6), ``command_string``, ``flip_mat``,
                            ``fix_anim_keyframes``, ``abc_sections`` (section names in chain
                            order: which of AnimDims / TransformInfo the file had),
                            ``abc_raw_sections`` ([{name, index, data (base64)}]: sections we
                            do not know, e.g. TriStrips), ``geometry_bounds`` (6 floats),
                            ``abc_animations`` (a copy of every animation's extras with its name:
                            Blender drops animation extras), ``abc_v6_blocks`` (the byte-exact
                            record, :mod:`.exact_v6`; ``abc_exact`` in GLBs made before it)
animation                   ``length``, ``markers``, ``key_times_ms``, ``bounds`` (6 floats),
                            ``key_bounds`` (6 floats per key), ``dims`` (its AnimDims vector),
                            ``deform`` ([{node, scale, translate}]: each deformation node's
                            byte quantisation)
node (joint)                ``abc_flags``, ``abc_index``, ``abc_bounds`` (6 floats)
mesh                        ``normal_vertex_count``, ``abc_v6_lods`` ({vertex_start, lod_vertices
                            (the vertices after the full-detail ones, raw records in base64)})
==========================  =====================================================================
"""
from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np

from ...extras import integer, integers
from .abc_v6 import SECTION_NAMES, VERTEX_V6, AbcV6Model, GeometryV6
from .common import RawSection
from .scene_common import floats, latin1
from .scene_extras import f32

__all__ = ["lod_extras", "animation_extras", "file_extras", "kept_lods", "kept_raw_sections"]


def _b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def lod_extras(geo: GeometryV6) -> dict[str, Any]:
    verts = np.asarray(geo.vertices)
    extra = verts[int(geo.normal_vertex_count):] if geo.normal_vertex_count < len(verts) else verts[:0]
    return {"vertex_start": [int(v) for v in np.asarray(geo.vertex_start).reshape(-1)],
            "lod_vertices": _b64(np.ascontiguousarray(extra, VERTEX_V6).tobytes())}


def animation_extras(doc: AbcV6Model, ai: int, keep: np.ndarray) -> dict[str, Any]:
    a = doc.animations[ai]
    keys = np.asarray(a.keys)[keep]
    out: dict[str, Any] = {
        "key_times_ms": [int(t) for t in keys["time"]],
        "bounds": f32([*a.bounds_min, *a.bounds_max]),
        "key_bounds": f32(np.concatenate([keys["bounds_min"], keys["bounds_max"]], 1)),
    }
    dims = next((s for s in doc.sections if type(s).__name__ == "AnimDimsV6"), None)
    if dims is not None and ai < len(dims.dims):
        out["dims"] = f32(dims.dims[ai])
    deform = [{"node": j, "scale": f32(t.scale), "translate": f32(t.translate)}
              for j, t in enumerate(a.tracks) if t.deform is not None]
    if deform:
        out["deform"] = deform
    return out


def file_extras(doc: AbcV6Model) -> dict[str, Any]:
    out: dict[str, Any] = {"abc_sections": [
        latin1(s.name if isinstance(s, RawSection) else SECTION_NAMES[type(s)]) for s in doc.sections]}
    raw = [{"name": latin1(s.name), "index": i, "data": _b64(s.data)}
           for i, s in enumerate(doc.sections) if isinstance(s, RawSection)]
    if raw:
        out["abc_raw_sections"] = raw
    if doc.geometry is not None:
        out["geometry_bounds"] = f32([*doc.geometry.bounds_min, *doc.geometry.bounds_max])
    return out


# -- reading them back ------------------------------------------------------------------------
def kept_lods(extras: dict, full_vertices: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertex_start, LOD vertices) kept for a mesh of ``full_vertices`` full-detail vertices,
    or None when there are none or they do not fit (the vertex count changed)."""
    d = extras.get("abc_v6_lods")
    if not isinstance(d, dict) or integer(extras, "normal_vertex_count", -1, 0, 0xFFFF) != full_vertices:
        return None
    vs = integers(d.get("vertex_start"), None, 0, 0xFFFF)
    if not vs:
        return None
    try:
        raw = base64.b64decode(str(d.get("lod_vertices", "")).encode("ascii"), validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) % VERTEX_V6.itemsize or len(raw) // VERTEX_V6.itemsize + full_vertices > 0xFFFF:
        return None
    extra = np.frombuffer(raw, VERTEX_V6).copy()
    if len(extra) and int(extra["replacements"].max()) >= full_vertices + len(extra):
        return None
    return np.asarray(vs, "<u2"), extra


def kept_raw_sections(extras: dict) -> list[tuple[int, RawSection]]:
    out = []
    for r in extras.get("abc_raw_sections") or ():
        if not isinstance(r, dict):
            continue
        try:
            data = base64.b64decode(str(r.get("data", "")).encode("ascii"), validate=True)
        except (binascii.Error, ValueError):
            continue
        name = str(r.get("name", "")).encode("latin-1", "replace")
        if name and len(name) < 0x10000:
            out.append((integer(r, "index", 1 << 30, 0, 1 << 30), RawSection(name=name, data=data)))
    return out


def bounds6(v: Any, default) -> tuple[tuple[float, ...], tuple[float, ...]]:
    f = floats(v, 6)
    if f is None:
        return default
    return tuple(f[:3]), tuple(f[3:])
