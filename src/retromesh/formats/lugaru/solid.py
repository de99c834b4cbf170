"""Lugaru ``.solid`` models (Wolfire Games' first engine), big-endian.

Layout (Lugaru's ``Model::load`` in ``Source/Graphic/Models.cpp``; 37 shipped models checked:
the file size is exactly ``4 + 12 V + 36 T`` for each):

========  ===========================  =====================================================
offset    type                         field
========  ===========================  =====================================================
0         int16                        vertex_count (V, signed: at most 32767)
2         int16                        triangle_count (T)
4         float32[3] x V               vertices (x, y, z)
4+12V     36 bytes x T                 triangles: int16 i0, u0, i1, u1, i2, u2;
                                       float32 gx[3], gy[3] (per-corner texture coordinates)
4+12V+36T                              end of file (no trailer in any shipped model)
========  ===========================  =====================================================

Native document: :class:`SolidFile` with ``vertices`` ``(V, 3) >f4`` and ``triangles`` a
record array of :data:`TRI_DTYPE`; bytes after the last triangle (none in real files) are kept
as ``trailing`` so that ``write(read(f)) == f`` always.

Where we differ from the spec text (the template), and why:

* The template's hidden ``_unused`` shorts are not random: in all 16,140 triangles of the
  37 shipped files ``u0 == i1``, ``u1 == i2``, ``u2 == 0`` (an edge-list leftover of the
  exporter). They are kept verbatim; a file made from a scene has ``(i1, i2, 0)``.
* ``gx``/``gy`` are per-corner texture coordinates (corner k = ``gx[k], gy[k]``), not "g"
  anything else. Normals are not stored: Lugaru computes area-weighted vertex normals.
* A vertex index outside ``0..V-1`` or a negative count is rejected as corrupt (Lugaru would
  read out of bounds).

The scene mapping (``.solid`` <-> glTF: winding, UVs, normals, the game's load-time turn by
model kind) is :func:`.scene.solid_to_scene` and
:func:`.scene_write.scene_to_solid`.
"""
from __future__ import annotations

from dataclasses import field

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, warning
from ...records import record

__all__ = ["SolidFile", "TRI_DTYPE", "MAX_COUNT", "read", "write", "signed_volume", "is_character",
           "sniff", "info", "check"]

TRI_DTYPE = np.dtype([("i0", ">i2"), ("u0", ">i2"), ("i1", ">i2"), ("u1", ">i2"),
                      ("i2", ">i2"), ("u2", ">i2"), ("gx", ">f4", (3,)), ("gy", ">f4", (3,))])
VERT_DTYPE = np.dtype((">f4", (3,)))
MAX_COUNT = 32767


@record
class SolidFile:
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), ">f4"))
    triangles: np.ndarray = field(default_factory=lambda: np.zeros(0, TRI_DTYPE))
    trailing: bytes = b""

    def indices(self) -> np.ndarray:
        """``(T, 3)`` int64 vertex indices."""
        t = self.triangles
        return np.stack([t["i0"], t["i1"], t["i2"]], axis=1).astype(np.int64)


def read(r: Reader) -> SolidFile:
    with r.at("header"):
        nv = r.count("vertex_count", VERT_DTYPE.itemsize, "h")
        nt = r.count("triangle_count", TRI_DTYPE.itemsize, "h")
    verts = r.records(VERT_DTYPE, nv, "vertices").reshape(nv, 3)
    start = r.pos
    tris = r.records(TRI_DTYPE, nt, "triangles")
    if nt:
        idx = np.stack([tris["i0"], tris["i1"], tris["i2"]], axis=1)
        bad = np.nonzero((idx < 0) | (idx >= nv))
        if len(bad[0]):
            t, k = int(bad[0][0]), int(bad[1][0])
            raise r.fail(f"a vertex index in 0..{nv - 1}", int(idx[t, k]),
                         offset=start + 36 * t + 4 * k, field=f"triangles[{t}].i{k}")
    trailing = r.rest()
    return SolidFile(verts, tris, trailing)


def write(doc: SolidFile) -> bytes:
    verts = np.asarray(doc.vertices)
    tris = np.asarray(doc.triangles)
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise DocumentError(f"SolidFile.vertices must have shape (V, 3), got {verts.shape}")
    tris = as_dtype(tris, TRI_DTYPE, "SolidFile.triangles")
    if len(verts) > MAX_COUNT or len(tris) > MAX_COUNT:
        raise DocumentError(f".solid holds at most {MAX_COUNT} vertices and triangles, got "
                            f"{len(verts)} vertices and {len(tris)} triangles")
    w = Writer(">")
    w.i16(len(verts))
    w.i16(len(tris))
    w.records(verts, ">f4")
    w.records(tris, TRI_DTYPE)
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def signed_volume(positions: np.ndarray, tri: np.ndarray) -> float:
    """``sum(v0 . (v1 x v2)) / 6``: > 0 when the index order is CCW seen from outside."""
    p = np.asarray(positions, dtype=np.float64)
    if not len(tri):
        return 0.0
    return float(np.einsum("ij,ij->i", p[tri[:, 0]], np.cross(p[tri[:, 1]], p[tri[:, 2]])).sum() / 6)


def is_character(doc: SolidFile) -> bool:
    """A CW-outward model that is tallest along Y: a Lugaru character body."""
    if not len(doc.triangles) or not len(doc.vertices):
        return False
    p = np.asarray(doc.vertices, dtype=np.float64)
    ext = np.ptp(p, axis=0)
    return signed_volume(p, doc.indices()) < 0 and ext[1] > ext[0] and ext[1] > ext[2]


def info(doc: SolidFile) -> dict:
    return {"vertices": len(doc.vertices), "triangles": len(doc.triangles),
            "signed_volume": round(signed_volume(doc.vertices, doc.indices()), 3),
            "character": is_character(doc)}


def check(doc: SolidFile) -> list[Finding]:
    out = []
    t = doc.triangles
    if len(t) and not (np.array_equal(t["u0"], t["i1"]) and np.array_equal(t["u1"], t["i2"])
                       and not np.any(t["u2"])):
        out.append(warning("solid.unused_shorts", "the unused shorts are not (i1, i2, 0) as in "
                           "the shipped models"))
    if doc.trailing:
        out.append(warning("solid.trailing", f"{len(doc.trailing)} bytes after the last triangle"))
    return out


def sniff(head: bytes) -> bool:
    if len(head) < 4:
        return False
    nv, nt = int.from_bytes(head[0:2], "big", signed=True), int.from_bytes(head[2:4], "big", signed=True)
    return nv >= 0 and nt >= 0
