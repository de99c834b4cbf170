"""The file a scene was read from, used to give back its bits through Blender (issue 32).

Blender stores floats its own way: key frames go through bone space, skinned vertices through
the bind pose, UVs are flipped twice, normals are kept per face corner. What comes back is
within a hair of what we wrote but not bit for bit, and the GLB has room for the file's own
bits only where glTF itself changes them (:mod:`.exact`). The Blender extension therefore
passes the bytes of the B3D it imported (``original=``; only when the file is still the one
imported: same SHA-256) and :func:`merge` takes every value of the written document that is
within :data:`TOLERANCE` of the original's as the original's bits, chunk by chunk, while the
two documents have the same chunks (types, names, counts, flags, frames, vertex ids). An edit
larger than the tolerance stays; one smaller is dropped (docs/lossless.md).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...binio import Reader
from ...restore import same_rows
from .chunks import AnimChunk, B3dFile, Bone, Brus, Keys, NodeChunk, Texs, Tris, Vrts, read

__all__ = ["TOLERANCE", "FIELD_TOLERANCE", "original_document", "merge"]

#: a written value within TOLERANCE x max(1, |original|) of the original counts as unedited
TOLERANCE = 5e-4
#: per VRTS field, where Blender stores it coarser: vertex colours in 8 bits of sRGB (a linear
#: value comes back up to 0.0045 off, near 1)
FIELD_TOLERANCE = {"color": 5e-3}


def original_document(data: Any) -> B3dFile | None:
    """The B3D document of ``data`` (bytes), None when it is none."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        return None
    try:
        return read(Reader(bytes(data)))
    except Exception:
        return None


def _near(a: np.ndarray, b: np.ndarray, signed: bool = False,
          tol: float = TOLERANCE) -> np.ndarray:
    """Per row of (n, k) float arrays, within the tolerance (``signed``: or of -a, for
    quaternions)."""
    ok = same_rows(a, b, tol)
    if signed:
        ok |= same_rows(-a, b, tol)
    return ok


def _rows(arr: np.ndarray, name: str) -> np.ndarray:
    field = arr[name]
    return field.reshape(len(arr), int(np.prod(field.shape[1:], dtype=np.int64)))


def _merge_records(new: np.ndarray, old: np.ndarray, exact: tuple[str, ...],
                   floats: tuple[str, ...], signed: tuple[str, ...] = ()) -> np.ndarray | None:
    """``new`` with the rows of each float field taken from ``old`` where within the
    tolerance; None when the records do not correspond (dtype, count, the ``exact`` fields)."""
    if new.dtype != old.dtype or len(new) != len(old):
        return None
    if any(not np.array_equal(new[f], old[f]) for f in exact):
        return None
    out = new.copy()
    for f in floats:
        if f not in (new.dtype.names or ()):
            continue
        near = _near(_rows(new, f), _rows(old, f), f in signed,
                     FIELD_TOLERANCE.get(f, TOLERANCE))
        out[f][near] = old[f][near]
    return out


def _floats_near(new: tuple, old: tuple) -> bool:
    return bool(_near(np.asarray([new], np.float32), np.asarray([old], np.float32))[0])


def _node(new: NodeChunk, old: NodeChunk) -> bool:
    if new.name != old.name:
        return False
    q_new, q_old = np.asarray([new.rotation]), np.asarray([old.rotation])
    if _floats_near(new.position, old.position) and _floats_near(new.scale, old.scale) \
            and _near(q_new, q_old, signed=True)[0]:
        new.position, new.scale, new.rotation = old.position, old.scale, old.rotation
    return True


def _chunk(new: Any, old: Any) -> bool:
    """Take ``old``'s bits into ``new`` where unedited; False when they do not correspond."""
    if type(new) is not type(old):
        return False
    if isinstance(new, NodeChunk):
        return _node(new, old)
    if isinstance(new, Vrts):
        if (new.flags, new.tex_coord_sets, new.tex_coord_set_size) != \
                (old.flags, old.tex_coord_sets, old.tex_coord_set_size):
            return False
        got = _merge_records(new.vertices, old.vertices, (), ("position", "normal", "color", "uv"))
        if got is None:
            return False
        new.vertices = got
    elif isinstance(new, Keys):
        if new.flags != old.flags:
            return False
        got = _merge_records(new.keys, old.keys, ("frame",), ("position", "scale", "rotation"),
                             ("rotation",))
        if got is None:
            return False
        new.keys = got
    elif isinstance(new, Bone):
        got = _merge_records(new.weights, old.weights, ("vertex",), ("weight",))
        if got is None:
            return False
        new.weights = got
    elif isinstance(new, Tris):
        return new.brush_id == old.brush_id and np.array_equal(new.triangles, old.triangles)
    elif isinstance(new, AnimChunk):
        if (new.flags, new.frames) != (old.flags, old.frames):
            return False
        if _floats_near((new.fps,), (old.fps,)):
            new.fps = old.fps
    return True


def _same_texs_brus(new: B3dFile, old: B3dFile) -> None:
    """TEXS and BRUS floats (texture transforms, brush colours) as the original's when near."""
    for n, o in zip(new.children, old.children):
        if isinstance(n, Texs) and isinstance(o, Texs) and len(n.textures) == len(o.textures):
            for a, b in zip(n.textures, o.textures):
                if a.file == b.file and _floats_near((*a.position, *a.scale, a.rotation),
                                                     (*b.position, *b.scale, b.rotation)):
                    a.position, a.scale, a.rotation = b.position, b.scale, b.rotation
        if isinstance(n, Brus) and isinstance(o, Brus) and len(n.brushes) == len(o.brushes):
            for x, y in zip(n.brushes, o.brushes):
                if x.name == y.name and _floats_near((*x.color, x.shininess),
                                                     (*y.color, y.shininess)):
                    x.color, x.shininess = y.color, y.shininess


def merge(doc: B3dFile, original: B3dFile) -> bool:
    """Give ``doc`` (written from a scene) the bits of ``original`` (the file that scene was
    read from) wherever a value is unedited (see the module docstring), in place; chunk by
    chunk in file order, as long as they correspond. Returns whether every chunk did."""
    new, old = list(doc.chunks()), list(original.chunks())
    if len(new) != len(old):
        return False
    ok = True
    for n, o in zip(new, old):
        if not _chunk(n, o):
            ok = False
    _same_texs_brus(doc, original)
    if ok:
        doc.version = original.version
    return ok
