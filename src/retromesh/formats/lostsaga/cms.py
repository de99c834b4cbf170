"""Lost Saga ``.cms`` collision meshes (io3DEngine ``ioOpcodeManagerImpl``).

==============  ===========================  ==========================================
field           type                         note
==============  ===========================  ==========================================
magic           ``"CMS\\0"``
version         int32                        must be 5000 (COL_MESH_VERSION)
vertex_count    int32
positions       float32[vertex_count][3]
face_count      int32
faces           uint16[face_count][3]        D3D WORD indices (the spec says floats)
trailing        whatever follows (kept)
==============  ===========================  ==========================================

The engine's collision loader also accepts a whole ``.msh`` under a collision name (it reads the
positions and faces and skips the rest): a ``.cms`` file starting with ``MSH\\0`` is therefore
read as an ``msh`` document (the ``msh`` format also claims the ``.cms`` extension; the magic
decides) and converts to a mesh flagged ``extras.collision``.

Deviations from the spec text: the faces are ``uint16`` triples, not floats. Other files tagged
``CMS\\0`` with version 5700 ("wounded") or the "ani collision" version are hit-box files of the
game client with another layout: they are rejected with a FormatError naming the version.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...findings import Finding, error
from ...records import record
from .common import COL_MESH_TOKEN, COL_MESH_VERSION, magic

__all__ = ["CmsFile", "read", "write"]


@record
class CmsFile:
    version: int = COL_MESH_VERSION
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.float32))
    faces: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.uint16))
    trailing: bytes = b""


def read(r: Reader) -> CmsFile:
    magic(r, COL_MESH_TOKEN, "collision mesh")
    version = r.i32("version")
    if version != COL_MESH_VERSION:
        raise r.fail(f"collision mesh version {COL_MESH_VERSION} (other CMS versions are hit-box "
                     "files)", version, offset=4, field="version")
    nv = r.count("vertex_count", 12)
    pos = r.records("<f4", nv * 3, "positions").reshape(nv, 3)
    nf = r.count("face_count", 6)
    faces = r.records("<u2", nf * 3, "faces").reshape(nf, 3)
    return CmsFile(version, pos, faces, r.rest())


def write(doc: CmsFile) -> bytes:
    w = Writer("<")
    w.raw(COL_MESH_TOKEN)
    w.i32(doc.version)
    pos = np.asarray(doc.positions).reshape(-1, 3)
    w.i32(len(pos))
    w.records(pos, "<f4")
    faces = as_dtype(doc.faces, "<u2", "cms: faces").reshape(-1, 3)
    w.i32(len(faces))
    w.records(faces)
    w.raw(doc.trailing)
    return w.getvalue()


def info(doc: CmsFile) -> dict[str, Any]:
    out: dict[str, Any] = {"version": doc.version, "vertices": len(doc.positions),
                           "faces": len(doc.faces)}
    if doc.trailing:
        out["trailing bytes"] = len(doc.trailing)
    return out


def check(doc: CmsFile) -> list[Finding]:
    n = len(doc.positions)
    if len(doc.faces) and int(np.asarray(doc.faces).max()) >= n:
        return [error("cms.face_index", f"faces refer to vertex "
                      f"{int(np.asarray(doc.faces).max())} of {n}")]
    return []


def sniff(head: bytes) -> bool:
    return head[:4] == COL_MESH_TOKEN
