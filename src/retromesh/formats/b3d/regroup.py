"""What Blender's glTF exporter does to our primitives, undone so that each is one TRIS again.

to_scene makes one primitive per TRIS and records, per TRIS, in ``mesh.extras["b3d_tris"]``
(see :mod:`.scene_extras`) its vertex ``count``, its ``brush``, its number of triangles ``tris`` and
its ``twins``: ``[index, a, b, c]`` for each triangle that uses the same three vertices as an
earlier one of the TRIS (h3dview ``castel`` has 12: double-sided walls), in local vertex ids
and glTF winding. Blender then changes two things (glTF-Blender-IO, 4.2 and 4.5 alike):

* it writes one primitive per material, so TRIS of one material (ninja 2, dwarf2 3, human 6)
  come back as one primitive. Blender keeps the order of its vertices and faces, which were
  ours: the vertices of the first TRIS, then those of the next, and the same for triangles.
  :func:`regroup` cuts such a primitive back into its TRIS (the records of the brushes its
  material stands for, in file order) where the triangle counts cut it into blocks of
  consecutive vertex ranges, and puts the primitives back in file order;
* it keeps one face per set of vertices, so twin triangles are gone: they are put back at their
  index when the primitive has exactly that many triangles fewer. Which copy it keeps varies
  (castel's ``Right tower`` keeps the later one of 7 of its 10 pairs), so the record also has
  ``twins0``, the first copy of each such set (:func:`twin_firsts`): every copy of a twinned set
  is then taken out of what Blender wrote and all are put back at their indices.

Anything that does not fit (an edited mesh, a new material) is left as Blender wrote it.
"""
from __future__ import annotations

import copy

import numpy as np

from ... import extras as xt
from ...arrays import isin
from ...scene import Scene
from .scene_extras import unsplit

__all__ = ["twins", "twin_firsts", "regroup"]

_PER_VERTEX = ("normals", "tangents", "colors", "joints", "weights")


def twins(tri: np.ndarray) -> list[list[int]]:
    """``[index, a, b, c]`` for every triangle of ``tri`` (n, 3) whose vertex set an earlier
    triangle already has."""
    if not len(tri):
        return []
    t = tri.astype(np.int64)
    a, b, c = t[:, 0], t[:, 1], t[:, 2]
    lo, hi = np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c)
    if hi.max() < 1 << 21:                      # one number per vertex set: a stable sort
        key = (lo << 42) | ((a + b + c - lo - hi) << 21) | hi
        flat = np.sort(key)                     # (most meshes have no twins: told first)
        if not (flat[1:] == flat[:-1]).any():
            return []
        order = np.argsort(key, kind="stable")  # each set's first triangle comes first
        key = key[order]
        again = key[1:] == key[:-1]
        if not again.any():
            return []
        later = np.sort(order[1:][again])
    else:
        _, first = np.unique(np.sort(t, axis=1), axis=0, return_index=True)
        mask = np.ones(len(tri), bool)
        mask[first] = False
        later = np.flatnonzero(mask)
    return [[int(i), *map(int, tri[i])] for i in later]


def twin_firsts(tri: np.ndarray, tw: list[list[int]]) -> list[list[int]]:
    """``[index, a, b, c]`` of the first triangle of ``tri`` of each vertex set that ``tw``
    (:func:`twins`) names."""
    if not tw:
        return []
    key = np.sort(tri.astype(np.int64), axis=1)
    want = np.sort(np.array([e[1:] for e in tw], np.int64), axis=1)
    hit = np.zeros(len(tri), bool)
    if max(int(key.max()), int(want.max())) < 1 << 21:
        pack = lambda k: (k[:, 0] << 42) | (k[:, 1] << 21) | k[:, 2]      # noqa: E731
        packed = pack(key)
        hit = isin(packed, pack(want))
        rows = np.flatnonzero(hit)
        # (each set's first row: np.unique of one number a row, not of rows, which is slow)
        _, first = np.unique(packed[rows], return_index=True)
        return [[int(i), *map(int, tri[i])] for i in np.sort(rows[first])]
    sets = {tuple(r) for r in want.tolist()}
    hit = np.array([tuple(r) in sets for r in key.tolist()], bool)
    rows = np.flatnonzero(hit)
    _, first = np.unique(key[rows], axis=0, return_index=True)
    return [[int(i), *map(int, tri[i])] for i in np.sort(rows[first])]


def _twin_list(rec: dict, key: str = "twins") -> list[list[int]]:
    t = rec.get(key)
    if not isinstance(t, list):
        return []
    out = []
    for e in t:
        if isinstance(e, list) and len(e) == 4 and all(isinstance(x, (int, float)) for x in e):
            out.append([int(x) for x in e])
        else:
            return []
    return out


def _cut(p, start: int, end: int, tri: np.ndarray):
    """The part of primitive ``p`` with vertices ``start..end`` and triangles ``tri``."""
    q = copy.copy(p)
    q.positions = p.positions[start:end]
    q.uvs = [uv[start:end] for uv in p.uvs]
    for name in _PER_VERTEX:
        if getattr(p, name) is not None:
            setattr(q, name, getattr(p, name)[start:end])
    q.indices = (tri - start).reshape(-1).astype(np.uint32)
    q.extras = dict(p.extras)
    q.attributes = {k: a[start:end] for k, a in p.attributes.items()}     # (_B3D_V...)
    return q


def _split(p, recs: list[dict]) -> list | None:
    """``p`` cut into one primitive per record (None when Blender's order does not allow it)."""
    if p.indices is None or p.targets or p.mode != 4:
        return None
    tri = p.indices.reshape(-1, 3).astype(np.int64)
    counts = [xt.integer(r, "tris", -1) - len(_twin_list(r)) for r in recs]
    if min(counts) < 1 or sum(counts) != len(tri):
        return None
    out, t0, v0 = [], 0, 0
    for n in counts:
        block = tri[t0:t0 + n]
        if block.min() != v0:
            return None
        v1 = int(block.max()) + 1
        out.append(_cut(p, v0, v1, block))
        t0, v0 = t0 + n, v1
    return out if v0 == len(p.positions) else None


def _brush_ids(scene: Scene, material) -> set[int]:
    if material is None:
        return {-1}
    rec = scene.materials[material].extras.get("b3d_brush") \
        if 0 <= material < len(scene.materials) else None
    ids = rec.get("ids") if isinstance(rec, dict) else None
    return {xt.integer({0: i}, 0, -2) for i in ids} if isinstance(ids, list) else set()


def _record_brush(rec: dict, mesh_brush: int) -> int:
    """The brush of a TRIS record; the MESH's brush when it recorded none (-1)."""
    brush = xt.integer(rec, "brush", -1)
    return brush if brush >= 0 else mesh_brush


def _regrouped(scene: Scene, prims: list, recs: list[dict], mesh_brush: int) -> list | None:
    """The primitives in record order, merged ones cut apart (None when that fails)."""
    left = list(range(len(recs)))
    parts: dict[int, object] = {}
    for p in prims:
        ids = _brush_ids(scene, p.material)
        mine = [k for k in left if _record_brush(recs[k], mesh_brush) in ids]
        if not mine:
            return None
        cut = [p] if len(mine) == 1 else _split(p, [recs[k] for k in mine])
        if cut is None:
            return None
        parts.update(zip(mine, cut))
        left = [k for k in left if k not in mine]
    return None if left else [parts[k] for k in range(len(recs))]


def _every_copy(tri: np.ndarray, tw: list[list[int]], first: list[list[int]]) -> np.ndarray | None:
    """``tri`` (Blender's: one copy of each twinned set, either one) without any copy of a
    twinned set, when it has exactly one of each (else None)."""
    sets = {tuple(sorted(e[1:])) for e in first}
    if len(sets) != len(first) or any(tuple(sorted(e[1:])) not in sets for e in tw):
        return None
    key = np.sort(tri.astype(np.int64), axis=1)
    want = np.array(sorted(sets), np.int64).reshape(-1, 3)
    if max(int(key.max(initial=0)), int(want.max(initial=0))) >= 1 << 21:
        return None
    hit = isin((key[:, 0] << 42) | (key[:, 1] << 21) | key[:, 2],
                  (want[:, 0] << 42) | (want[:, 1] << 21) | want[:, 2])
    return tri[~hit] if int(hit.sum()) == len(sets) else None


def _with_twins(p, rec: dict):
    """``p`` with the twin triangles Blender dropped put back (when exactly they are missing)."""
    tw = _twin_list(rec)
    n = len(p.positions)
    if not tw or p.indices is None or n != rec.get("count"):
        return p
    tri = p.indices.reshape(-1, 3)
    if len(tri) != xt.integer(rec, "tris", -1) - len(tw) or any(min(e) < 0 or max(e[1:]) >= n
                                                          for e in tw):
        return p
    first = _twin_list(rec, "twins0")
    if first and all(min(e) >= 0 and max(e[1:]) < n for e in first):
        rest = _every_copy(tri, tw, first)
        if rest is None:
            return p
        tri, tw = rest, tw + first
    for e in sorted(tw):
        tri = np.insert(tri, min(e[0], len(tri)), e[1:], axis=0)
    q = copy.copy(p)
    q.indices = tri.reshape(-1).astype(np.uint32)
    return q


def regroup(scene: Scene) -> Scene:
    """The scene with merged primitives cut back into TRIS and twin triangles restored (see the
    module docstring); the same scene when there is nothing to do."""
    meshes = list(scene.meshes)
    changed = False
    for node in scene.nodes:
        native = node.extras.get("b3d")
        if node.mesh is None or not isinstance(native, dict):
            continue
        m = meshes[node.mesh]
        recs = m.extras.get("b3d_tris")
        if not (isinstance(recs, list) and recs and all(isinstance(r, dict) for r in recs)) \
                or any(p.mode != 4 for p in m.primitives):
            continue
        prims = m.primitives
        if len(recs) > len(prims):
            mesh_rec = native.get("mesh")
            brush = xt.integer(mesh_rec, "brush", -1)
            prims = _regrouped(scene, prims, recs, brush) or prims
        if len(prims) == len(recs):
            prims = [_with_twins(unsplit(p, r.get("count")), r) for p, r in zip(prims, recs)]
        if any(a is not b for a, b in zip(prims, m.primitives)) or len(prims) != len(m.primitives):
            m = copy.copy(m)
            m.primitives = prims
            meshes[node.mesh] = m
            changed = True
    if not changed:
        return scene
    out = copy.copy(scene)
    out.meshes = meshes
    return out
