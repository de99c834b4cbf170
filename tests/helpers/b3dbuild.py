"""B3D fixture builders shared by the B3D tests (documents made with our own chunk classes)."""
from __future__ import annotations

import numpy as np

from retromesh.formats.b3d import Bone, Keys, MeshChunk, Tris, Vrts, keys_dtype, vrts_dtype


def quad_mesh(brush: int = 0, tris_brushes=(-1,), sets: int = 1, flags: int = 1) -> MeshChunk:
    """A unit quad (4 vertices, 2 triangles) split into one TRIS per entry of ``tris_brushes``."""
    v = np.zeros(4, vrts_dtype(flags, sets, 2))
    v["position"] = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    if flags & 1:
        v["normal"] = (0, 0, -1)
    if flags & 2:
        v["color"] = 1.0
    for s in range(sets):
        v["uv"][:, s] = [(0, 1), (1, 1), (1, 0), (0, 0)]
    mesh = MeshChunk(brush, [Vrts(flags, sets, 2, v)])
    halves = np.array_split(np.array([[0, 1, 2], [0, 2, 3]], np.int32), len(tris_brushes))
    for b, t in zip(tris_brushes, halves):
        mesh.children.append(Tris(b, t))
    return mesh


def bone(pairs) -> Bone:
    return Bone(np.array(pairs, dtype=[("vertex", "<i4"), ("weight", "<f4")]))


def keys(flags: int, frames, **fields) -> Keys:
    k = np.zeros(len(frames), keys_dtype(flags))
    k["frame"] = frames
    for name, value in fields.items():
        k[name] = value
    return Keys(flags, k)
