"""The UV data of a VRTS chunk that glTF has no place for, kept for the way back.

A B3D VRTS holds up to 8 UV sets of up to 4 components each (``tex_coord_sets``,
``tex_coord_set_size``); glTF carries sets 0 and 1 as ``TEXCOORD_0``/``_1``, two components
each. The rest (components 2 and 3 of the first two sets, every component of sets 2..7) rides
in each primitive's ``b3d_tris`` record (mesh extras, which Blender keeps) as ``uv_more``:
``{"sets", "size", "f32"}``, ``f32`` being the base64 of the little-endian float32 values of
those components, vertex by vertex (set-major within a vertex, as in the file). The writer puts
them back while the primitive still has the vertex count it had and the VRTS the same layout;
else they are written as 0 with a LossWarning naming the mesh.
"""
from __future__ import annotations

import base64
import binascii

import numpy as np

__all__ = ["extra_mask", "encode", "decode"]


def extra_mask(sets: int, size: int) -> np.ndarray:
    """(sets, size) bool: the components glTF does not carry."""
    m = np.ones((sets, size), bool)
    m[:2, :2] = False
    return m


def encode(uv: np.ndarray) -> dict | None:
    """``uv`` of shape (k, sets, size) as a ``uv_more`` record, or None when glTF holds it all."""
    _, sets, size = uv.shape
    mask = extra_mask(sets, size)
    if not mask.any():
        return None
    data = np.ascontiguousarray(uv[:, mask], "<f4")
    return {"sets": int(sets), "size": int(size), "f32": base64.b64encode(data.tobytes()).decode("ascii")}


def decode(rec: object, k: int, sets: int, size: int) -> np.ndarray | None:
    """The (k, m) float32 values of a ``uv_more`` record for ``k`` vertices of a VRTS laid out
    as ``sets`` x ``size``; None when the record is missing or does not fit."""
    if not isinstance(rec, dict) or rec.get("sets") != sets or rec.get("size") != size:
        return None
    text = rec.get("f32")
    m = int(extra_mask(sets, size).sum()) if sets > 0 and size > 0 else 0
    if not isinstance(text, str) or not m or len(text) != 4 * -(-4 * k * m // 3):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 4 * k * m:
        return None
    return np.frombuffer(raw, "<f4").reshape(k, m)
