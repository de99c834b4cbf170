"""A mesh's vertices as written, from the copies an editor gave back (docs/lossless.md,
"Through Blender").

Blender's exporter writes a vertex once per distinct set of face-corner values: a vertex whose
corners' custom normals came back a few units apart is split, and its vertices may come in
another order (primitives sharing a material are joined). It may also sort a vertex's equal
weights the other way round (and renormalise them). Where each vertex carries its index as
written (a vertex attribute: ``retromesh.restore.keep_written`` with ``ids``):

* :func:`ties_back` gives the vertices whose weights tied as written (:func:`ties`) their
  influences in the order written, where the editor holds the same set within a tolerance;
* :func:`merge_split` merges the copies of a vertex that are the same again in the columns the
  mesh had as written (:func:`held`; bit for bit, once the values as written came back) and
  puts each vertex at its index: the mesh has the count and order written. Copies that differ
  (an edit) stay apart.

Only numpy and :mod:`retromesh.scene`: ``retromesh.restore`` keeps the records.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .scene import Primitive

__all__ = ["COLUMNS", "held", "influences", "ties", "ties_back", "merge_split"]

#: the columns :func:`merge_split` compares where :func:`held` names them (positions always)
COLUMNS = ("normals", "tangents", "colors", "joints", "weights")


def held(prims: list[Primitive]) -> list[str]:
    """The vertex columns every primitive has (``positions``, ``normals``..., ``uv0``...,
    ``target0``...)."""
    # (positions always: an empty list would not reach a GLB's extras)
    out = ["positions"] + [c for c in COLUMNS if all(getattr(p, c) is not None for p in prims)]
    out += [f"uv{k}" for k in range(min((len(p.uvs) for p in prims), default=0))]
    out += [f"target{k}" for k in range(min((len(p.targets) for p in prims), default=0))]
    return out


def influences(prims: list[Primitive]) -> tuple[np.ndarray, np.ndarray] | None:
    """The joints (int64) and weights (float32) of the mesh's vertices in primitive order, or
    None when a primitive has none or they are not of one width."""
    js = [p.joints for p in prims if p.joints is not None and p.weights is not None]
    ws = [p.weights for p in prims if p.joints is not None and p.weights is not None]
    if not js or len(js) != len(prims) or len({a.shape[1:] for a in js + ws}) != 1:
        return None
    j, w = np.concatenate(js).astype(np.int64), np.concatenate(ws).astype(np.float32)
    return (j, w) if w.ndim == 2 and w.shape[1] >= 2 else None


def ties(prims: list[Primitive], near: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The vertices (over the mesh's vertices in primitive order) with two non-zero weights at
    most ``near`` apart, their joints and their weights (none without weights)."""
    jw = influences(prims)
    if jw is None:
        return np.zeros(0, np.int64), np.zeros((0, 4), np.int64), np.zeros((0, 4), np.float32)
    j, w = jw
    s = -np.sort(-w, axis=1)
    rows = np.nonzero(((s[:, 1:] > 0) & (s[:, :-1] - s[:, 1:] <= near)).any(axis=1))[0]
    return rows, j[rows], w[rows]


def _influence_sets(j: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's influences as a set: non-zero weights sorted by joint, then the zero ones
    (joint 0)."""
    key = np.where(w > 0, j.astype(np.int64), 1 << 40)
    order = np.argsort(key, axis=1, kind="stable")
    ws = np.take_along_axis(w, order, axis=1)
    return np.where(ws > 0, np.take_along_axis(key, order, axis=1), 0), ws


def ties_back(prims: list[Primitive], src: np.ndarray, n: int, rows: np.ndarray,
              joints: np.ndarray, weights: np.ndarray, tol: float) -> None:
    """Each vertex of ``prims`` (changed in place; ``src``: each one's index among the ``n``
    written) that is one of ``rows`` (:func:`ties`) gets ``joints`` and ``weights`` as written
    where its influences are the same set within ``tol``."""
    jw = influences(prims)
    if jw is None or len(src) != len(jw[0]) or not len(rows) or jw[1].shape[1:] != \
            weights.shape[1:] or joints.shape != weights.shape or len(rows) != len(weights):
        return
    j, w = jw
    slot = np.full(n, -1, np.int64)
    slot[rows] = np.arange(len(rows))
    at = slot[src]
    mine = np.nonzero(at >= 0)[0]
    if not len(mine):
        return
    jk, wk = joints[at[mine]], weights[at[mine]].astype(np.float32)
    (j0, w0), (j1, w1) = _influence_sets(j[mine], w[mine]), _influence_sets(jk, wk)
    ok = (j0 == j1).all(axis=1) & (np.abs(w0.astype(np.float64) - w1) <= tol).all(axis=1)
    w[mine[ok]], j[mine[ok]] = wk[ok], jk[ok]
    cuts = np.cumsum([len(p.positions) for p in prims])[:-1]
    for p, pj, pw in zip(prims, np.split(j, cuts), np.split(w, cuts)):
        p.joints, p.weights = pj.astype(np.uint16), pw


def _column_bits(p: Primitive, kept: list[str], id_name: str) -> list[np.ndarray]:
    """The columns of ``p`` compared when merging copies of a vertex, as int32 bits."""
    cols: list[np.ndarray | None] = [p.positions]
    cols += [getattr(p, c) for c in COLUMNS if c in kept]
    cols += [uv for k, uv in enumerate(p.uvs) if f"uv{k}" in kept]
    cols += [t.positions for k, t in enumerate(p.targets) if f"target{k}" in kept]
    cols += [t.normals for k, t in enumerate(p.targets) if f"target{k}" in kept]
    cols += [v for name, v in p.attributes.items() if name != id_name]
    n = len(p.positions)
    return [np.ascontiguousarray(c, np.float32 if c.dtype.kind == "f" else np.int32)
            .view(np.int32).reshape(n, -1) for c in cols if c is not None]


def merge_split(p: Primitive, kept: list[str], n: int, id_name: str) -> Primitive:
    """``p`` with the copies of each vertex (same index in the attribute ``id_name``) that are
    the same in the columns ``kept`` (:func:`held` as written) merged, and its vertices sorted
    by that index (copies that differ stay apart, side by side); ``p`` itself when the indices
    are not those of a mesh of ``n`` vertices, or nothing changes."""
    ids = p.attributes.get(id_name)
    if ids is None or p.mode != 4 or not len(p.positions):
        return p
    v = np.asarray(ids, np.float64).reshape(len(p.positions), -1)[:, 0]
    if not np.all(np.isfinite(v)) or not np.all(v == np.rint(v)) or v.min() < 0 or v.max() >= n:
        return p
    key = np.concatenate([v.astype(np.int64)[:, None], *_column_bits(p, kept, id_name)], axis=1)
    _, first, group = np.unique(key, axis=0, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    # the groups by index written, copies that differ in the order the editor gave them
    order = np.lexsort((first, v[first]))
    keep = first[order]
    if len(keep) == len(v) and np.array_equal(keep, np.arange(len(v))):
        return p
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    idx = p.indices if p.indices is not None else np.arange(len(v))

    def rows(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else a[keep]
    return dataclasses.replace(
        p, positions=p.positions[keep], indices=rank[group][idx].astype(np.uint32),
        normals=rows(p.normals), tangents=rows(p.tangents), uvs=[uv[keep] for uv in p.uvs],
        colors=rows(p.colors), joints=rows(p.joints), weights=rows(p.weights),
        targets=[dataclasses.replace(t, positions=rows(t.positions), normals=rows(t.normals))
                 for t in p.targets],
        attributes={k: a[keep] for k, a in p.attributes.items()})
