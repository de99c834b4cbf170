"""Vertices several TRIS of one MESH share, welded back after glTF.

glTF (and :func:`.scene.to_scene`) gives each TRIS its own primitive with its own copy of the
vertices it uses, so a vertex two TRIS share (a seam between two materials) came back twice,
with its BONE entries twice (weights 8 -> 11 for a quad split into two TRIS). to_scene records,
for each later TRIS, which of its vertices an earlier TRIS already had, as
``b3d_tris[k]["shared"] = [locals, earlier TRIS, their locals]``; :func:`weld_shared` merges
those copies again in the written MESH (VRTS, TRIS) and in the BONE chunks that refer to it, as
long as the primitives still have the recorded vertex counts and the copies the same position.
"""
from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

import numpy as np

from ...scene import Scene
from .chunks import Bone, MeshChunk, NodeChunk, Tris, Vrts, in_file_order

__all__ = ["shared_records", "weld_shared", "order_records", "restore_order"]


def shared_records(id_lists: list[np.ndarray], n_vertices: int) -> list[list | None]:
    """Per TRIS (its sorted original vertex ids), the record of the vertices an earlier TRIS
    already used (None where there are none)."""
    owner = np.full(n_vertices, -1, np.int64)
    owner_local = np.zeros(n_vertices, np.int64)
    out: list[list | None] = []
    for k, used in enumerate(id_lists):
        o = owner[used]
        seen = o >= 0
        out.append([np.flatnonzero(seen).tolist(), o[seen].tolist(),
                    owner_local[used[seen]].tolist()] if seen.any() else None)
        fresh = np.flatnonzero(~seen)
        owner[used[fresh]] = k
        owner_local[used[fresh]] = fresh
    return out


def _remap(recs: list, vrts: Vrts) -> tuple[np.ndarray, np.ndarray] | None:
    """Old vertex id -> new, and which old vertices stay (None when nothing is welded)."""
    counts: list[Any] = [r.get("count") if isinstance(r, dict) else None for r in recs]
    if not all(isinstance(c, int) and c > 0 for c in counts) or sum(counts) != len(vrts.vertices):
        return None
    base = np.r_[0, np.cumsum(counts)[:-1]]
    target = np.arange(len(vrts.vertices))
    for k, r in enumerate(recs):
        rec = r.get("shared")
        try:
            local, tris, other = (np.asarray(x, np.int64) for x in rec)
        except (TypeError, ValueError, OverflowError):
            continue
        if not (local.ndim == tris.ndim == other.ndim == 1 and len(local) == len(tris) == len(other)
                and len(local) and local.min() >= 0 and local.max() < counts[k]
                and tris.min() >= 0 and tris.max() < k):
            continue
        if (other < 0).any() or (other >= np.asarray(counts)[tris]).any():
            continue
        dup, keep = base[k] + local, base[tris] + other
        pos = vrts.vertices["position"]
        same = np.all(np.abs(pos[dup] - pos[keep]) <= 1e-5 * np.maximum(1, np.abs(pos[keep])),
                      axis=1)
        target[dup[same]] = target[keep[same]]
    stays = target == np.arange(len(target))
    if stays.all():
        return None
    new = np.cumsum(stays) - 1
    return new[target], stays


def _meshes(roots: list[NodeChunk], scene: Scene, ids: list[int], key: str = "shared"
            ) -> dict[int, list]:
    """id of each written MESH chunk -> the ``b3d_tris`` records of the mesh it came from (those
    where a record has ``key``)."""
    out: dict[int, list] = {}
    stack = list(zip(roots, ids))
    while stack:
        chunk, i = stack.pop()
        node = scene.nodes[i]
        stack.extend(zip(chunk.nodes, node.children))
        mesh = chunk.mesh
        if mesh is not None and node.mesh is not None:
            recs = scene.meshes[node.mesh].extras.get("b3d_tris")
            if isinstance(recs, list) and any(isinstance(r, dict) and r.get(key)
                                              for r in recs):
                out[id(mesh)] = recs
    return out


def weld_shared(roots: list[NodeChunk], scene: Scene, ids: list[int]) -> None:
    """Merge the recorded shared vertices in the MESH chunks written from ``scene`` (``roots``
    from the nodes ``ids``, children in order) and in their BONE chunks, in place."""
    records = _meshes(roots, scene, ids)
    if not records:
        return
    current: tuple[np.ndarray, np.ndarray] | None = None
    for c in in_file_order(roots):
        if isinstance(c, MeshChunk):
            current = None
            v = c.vrts
            if id(c) in records and v is not None:
                current = _remap(records[id(c)], v)
            if current is not None and v is not None:     # (current: v is not None)
                new, stays = current
                v.vertices = v.vertices[stays]
                for t in c.children:
                    if isinstance(t, Tris):
                        t.triangles = new[np.asarray(t.triangles, np.int64)].astype(np.int32)
        elif isinstance(c, Bone) and current is not None and len(c.weights):
            new, stays = current
            w = c.weights.copy()
            vid = w["vertex"].astype(np.int64)
            ok = (vid >= 0) & (vid < len(new))
            moved = ok.copy()
            moved[ok] = ~stays[vid[ok]]
            w["vertex"][ok] = new[vid[ok]]
            # a copy's entry goes when the bone already names the vertex it is merged into
            _, first = np.unique(w["vertex"], return_index=True)
            dup = np.ones(len(w), bool)
            dup[first] = False
            c.weights = w[~(dup & moved)]


# -- vertex order -----------------------------------------------------------------------------
# Each TRIS is a primitive holding the vertices it uses in increasing order, and the MESH is
# written primitive after primitive (shared vertices welded to their first copy): the file's
# order only when the TRIS use increasing runs of vertices. When they do not (h3dview castel),
# each primitive's record keeps its vertices' ids in the file (``src``: deflated int32 steps)
# and the written VRTS is put back in file order, its TRIS and BONE ids with it.


def _first_seen(id_lists: list[np.ndarray]) -> np.ndarray:
    cat = np.concatenate(id_lists) if id_lists else np.zeros(0, np.int64)
    _, first = np.unique(cat, return_index=True)
    return cat[np.sort(first)]


def order_records(id_lists: list[np.ndarray], n_vertices: int) -> list[str] | None:
    """Per primitive, its ``src`` record (None when the MESH is written in file order anyway,
    or when some vertex no TRIS uses would be missing: that cannot be put back)."""
    seen = _first_seen(id_lists)
    if len(seen) != n_vertices or np.array_equal(seen, np.arange(n_vertices)):
        return None
    return [base64.b64encode(zlib.compress(np.diff(np.asarray(u, np.int64), prepend=0)
                                           .astype("<i4").tobytes(), 9)).decode("ascii")
            for u in id_lists]


def _source_ids(recs: list, n: int) -> np.ndarray | None:
    """The file id of each written vertex (None when the records do not fit ``n`` vertices)."""
    lists = []
    for r in recs:
        try:
            raw = zlib.decompress(base64.b64decode(r.get("src"), validate=True))
        except (binascii.Error, ValueError, TypeError, zlib.error, AttributeError):
            return None
        if len(raw) != 4 * r.get("count", -1):
            return None
        lists.append(np.cumsum(np.frombuffer(raw, "<i4").astype(np.int64)))
    seen = _first_seen(lists)
    if len(seen) != n or not np.array_equal(np.sort(seen), np.arange(n)):
        return None
    return seen


def restore_order(roots: list[NodeChunk], scene: Scene, ids: list[int]) -> None:
    """The written MESH chunks' vertices back in file order (see above), in place."""
    records = _meshes(roots, scene, ids, "src")
    if not records:
        return
    current: np.ndarray | None = None
    for c in in_file_order(roots):
        if isinstance(c, MeshChunk):
            v = c.vrts
            current = _source_ids(records[id(c)], len(v.vertices)) \
                if id(c) in records and v is not None else None
            if current is not None and v is not None:
                v.vertices = v.vertices[np.argsort(current)]
                for t in c.children:
                    if isinstance(t, Tris):
                        t.triangles = current[np.asarray(t.triangles, np.int64)].astype(np.int32)
        elif isinstance(c, Bone) and current is not None and len(c.weights):
            w = c.weights.copy()
            ok = (w["vertex"] >= 0) & (w["vertex"] < len(current))
            w["vertex"][ok] = current[w["vertex"][ok]]
            c.weights = w
