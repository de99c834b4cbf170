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

from collections.abc import Iterator
from typing import Any

import numpy as np

from ...scene import Scene
from .chunks import Bone, MeshChunk, NodeChunk, Tris, Vrts

__all__ = ["shared_records", "weld_shared"]


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


def _meshes(roots: list[NodeChunk], scene: Scene, ids: list[int]) -> dict[int, list]:
    """id of each written MESH chunk -> the ``b3d_tris`` records of the mesh it came from."""
    out: dict[int, list] = {}
    stack = list(zip(roots, ids))
    while stack:
        chunk, i = stack.pop()
        node = scene.nodes[i]
        stack.extend(zip(chunk.nodes, node.children))
        mesh = chunk.mesh
        if mesh is not None and node.mesh is not None:
            recs = scene.meshes[node.mesh].extras.get("b3d_tris")
            if isinstance(recs, list) and any(isinstance(r, dict) and r.get("shared")
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
    stack: list[Iterator[Any]] = [iter(roots)]
    while stack:
        c = next(stack[-1], None)
        if c is None:
            stack.pop()
        elif isinstance(c, NodeChunk):
            stack.append(iter(c.children))
        elif isinstance(c, MeshChunk):
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
