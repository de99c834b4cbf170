"""BONE weights -> glTF JOINTS_0/WEIGHTS_0 (two readings of the same file), and the record
that lets the file's own weights be written back.

Blitz3D (``loader_b3d.cpp`` / ``meshloader.cpp`` / ``surface.cpp`` of blitz-research/blitz3d):
each vertex keeps its 4 heaviest BONE entries (zero weights included), normalises them to sum
1, and a vertex named by a single bone follows that bone fully whatever its weight. So files
whose weights are all 0.0 (h3dview ``ninja``, ``hog``, ``human``) animate in Blitz3D.
Irrlicht (1.8 and Luanti's fork, ``CB3DMeshFileLoader::readChunkBONE``) drops weights <= 0 and
does not normalise, so those files do not deform there (nor in Blender's importer).

``weights="blitz3d"`` (the default) follows Blitz3D: positive weights are normalised; a vertex
named only with zero weights follows its bones equally (one bone: fully; several: Blitz3D
itself divides by zero there). ``weights="raw"`` follows Irrlicht: zero weights are ignored and
vertices without a positive weight follow the mesh node (joint 0). Either way glTF needs
weights that sum to 1, so sums other than 1 are normalised.

Where the glTF weights would not give back the file's (a vertex named only with zero weights,
positive weights not summing to 1, more than 4 of them), the primitive keeps the file's entries
for those vertices in ``extras["b3d_weights"]`` so that B3D -> glTF -> B3D writes them back.
Zero weights of the other vertices (mobs_bee's bones name every vertex, most with 0.0: no
effect in either engine) are kept there too, as runs ``[joint, first vertex, end]`` under
``zeros``, in the first primitive that uses the vertex.
"""
from __future__ import annotations

import numpy as np

__all__ = ["entries", "skin_weights", "odd_vertices", "weight_record"]

WEIGHT_MODES = ("blitz3d", "raw")


def entries(bones: list[tuple[int, np.ndarray]], n_vertices: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every BONE entry of one mesh as (vertex, joint slot, weight), in file order."""
    vs, js, ws = [], [], []
    for j, rec in bones:
        ok = (rec["vertex"] >= 0) & (rec["vertex"] < n_vertices)
        vs.append(rec["vertex"][ok].astype(np.int32))
        ws.append(rec["weight"][ok].astype(np.float32))
        js.append(np.full(int(ok.sum()), j, np.int32))
    if not vs:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32)
    return np.concatenate(vs), np.concatenate(js), np.concatenate(ws)


def _top4(v, j, w, n_vertices):
    joints = np.zeros((n_vertices, 4), np.uint16)
    weights = np.zeros((n_vertices, 4), np.float32)
    order = np.lexsort((-w, v))                 # per vertex, heaviest first (stable)
    v, j, w = v[order], j[order], w[order]
    rank = np.arange(len(v), dtype=np.int64) - np.searchsorted(v, v, side="left")
    keep = rank < 4
    joints[v[keep], rank[keep]] = j[keep]
    weights[v[keep], rank[keep]] = w[keep]
    return joints, weights


def skin_weights(ent, n_vertices: int, mode: str = "blitz3d") -> tuple[np.ndarray, np.ndarray]:
    """Top-4 joints (indices into the skin) and weights per vertex, rows summing to 1."""
    v, j, w = ent
    pos = w > 0
    joints, weights = _top4(v[pos], j[pos], w[pos], n_vertices)
    total = weights.sum(axis=1)
    empty = total <= 0
    if mode == "blitz3d" and len(v):
        named = np.zeros(n_vertices, bool)
        named[v] = True
        zero_only = empty & named
        if zero_only.any():
            sel = zero_only[v]
            # the first 4 bones naming the vertex, in file order, share it equally
            zj, zw = _top4(v[sel], j[sel], np.ones(int(sel.sum()), np.float32), n_vertices)
            joints[zero_only] = zj[zero_only]
            weights[zero_only] = zw[zero_only]
            total = weights.sum(axis=1)
            empty = total <= 0
    weights[empty, 0] = 1.0
    joints[empty, 0] = 0
    total[empty] = 1.0
    weights /= total[:, None]
    return joints, weights


def odd_vertices(ent, n_vertices: int) -> np.ndarray:
    """Vertices whose glTF weights would not give back the file's: named only with zero
    weights, positive weights not summing to 1, or more than 4 of them."""
    v, _, w = ent
    pos = w > 0
    count = np.bincount(v[pos], minlength=n_vertices)
    total = np.bincount(v[pos], weights=w[pos], minlength=n_vertices)
    named = np.bincount(v, minlength=n_vertices) > 0
    return named & ((count == 0) | (count > 4) | (np.abs(total - 1.0) > 1e-5))


def _runs(joint: np.ndarray, vertex: np.ndarray) -> list[list[int]]:
    """``[joint, first, end]`` for each run of consecutive vertices of one joint."""
    order = np.lexsort((vertex, joint))
    j, v = joint[order].astype(np.int64), vertex[order].astype(np.int64)
    if not len(v):
        return []
    start = np.r_[True, (j[1:] != j[:-1]) | (v[1:] != v[:-1] + 1)]
    first = np.flatnonzero(start)
    last = np.r_[first[1:], len(v)] - 1
    return np.stack([j[first], v[first], v[last] + 1], axis=1).tolist()


def weight_record(ent, odd: np.ndarray, used: np.ndarray, taken: np.ndarray | None = None
                  ) -> dict | None:
    """The file's entries for the odd vertices of one primitive (whose original vertex ids are
    the sorted ``used``) and the zero weights of its other vertices not in ``taken`` (marked
    there: vertices an earlier primitive recorded); None when there are none."""
    v, j, w = ent
    in_prim = np.zeros(len(odd), bool)
    in_prim[used] = True
    sel = odd[v] & in_prim[v]
    fresh = in_prim & ~taken if taken is not None else in_prim
    zero = ~odd[v] & fresh[v] & (w == 0)
    if taken is not None:
        taken |= in_prim
    if not sel.any() and not zero.any():
        return None
    local = np.searchsorted(used, v[sel])
    out = {"count": int(len(used)), "vertex": local.tolist(), "joint": j[sel].tolist(),
           "weight": [float(x) for x in w[sel]]}
    if zero.any():
        out["zeros"] = _runs(j[zero], np.searchsorted(used, v[zero]))
    return out
