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

__all__ = ["entries", "skin_weights", "odd_vertices", "record_entries", "weight_record"]

WEIGHT_MODES = ("blitz3d", "raw")


def entries(bones: list[tuple[int, np.ndarray]], n_vertices: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every BONE entry of one mesh as (vertex, joint slot, weight), in file order (joint
    slots as uint16 when they fit)."""
    oks = [(j, rec, (rec["vertex"] >= 0) & (rec["vertex"] < n_vertices)) for j, rec in bones]
    total = sum(int(ok.sum()) for _, _, ok in oks)
    v = np.empty(total, np.int32)
    js = np.empty(total, np.uint16 if max((j for j, _ in bones), default=0) < 65536 else np.int32)
    w = np.empty(total, np.float32)
    at = 0
    for j, rec, ok in oks:            # filled in place: no second copy of every entry
        every = bool(ok.all())
        k = len(rec) if every else int(ok.sum())
        v[at:at + k] = rec["vertex"] if every else rec["vertex"][ok]
        w[at:at + k] = rec["weight"] if every else rec["weight"][ok]
        js[at:at + k] = j
        at += k
    return v, js, w


#: more runs of one joint than this (a hostile file) and _top4 sorts instead of gathering
_MAX_RUNS = 4096


def _top4(v, j, w, n_vertices):
    """Per vertex, the joints and weights of its 4 heaviest entries, heaviest first (ties in
    entry order); ``w`` > 0.

    Entries come as runs of one joint (one BONE chunk each) that name a vertex once: then each
    entry's rank among its vertex's entries is counted run by run (a counting sort, no sort of
    all the entries), the (vertex, rank) table is filled and each row put in weight order by a
    stable 4-element sorting network. Vertices with more than 4 entries, or a run naming a
    vertex twice, take the general path (:func:`_top4_sorted`)."""
    joints = np.zeros((n_vertices, 4), np.uint16)
    weights = np.zeros((n_vertices, 4), np.float32)
    if not len(v):
        return joints, weights
    counts = _bincount(v, None, n_vertices)
    starts = np.flatnonzero(j[1:] != j[:-1]) + 1
    if counts.max() > 4 or len(starts) >= _MAX_RUNS:
        return _top4_sorted(v, j, w, n_vertices)
    counts = counts.astype(np.uint8)
    fill = np.zeros(n_vertices, np.uint8)
    flat_j, flat_w = joints.reshape(-1), weights.reshape(-1)
    for a, b in zip([0, *starts.tolist()], [*starts.tolist(), len(v)]):
        vv = v[a:b]
        rank = fill[vv]
        fill[vv] = rank + 1
        at = vv.astype(np.intp) * 4
        at += rank
        flat_j[at] = j[a:b]
        flat_w[at] = w[a:b]
    if not np.array_equal(fill, counts):       # a run named a vertex more than once
        return _top4_sorted(v, j, w, n_vertices)
    # bubble sort by weight, heaviest first; strict comparisons keep equal weights in order
    for a in (0, 1, 2, 0, 1, 0):
        wa, wb = weights[:, a], weights[:, a + 1]
        swap = np.flatnonzero(wb > wa)
        if len(swap):
            weights[swap, a], weights[swap, a + 1] = wb[swap], wa[swap]
            ja, jb = joints[:, a], joints[:, a + 1]
            joints[swap, a], joints[swap, a + 1] = jb[swap], ja[swap]
    return joints, weights


def _top4_sorted(v, j, w, n_vertices):
    """:func:`_top4` by sorting every entry (any number of entries per vertex)."""
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
    if pos.all():
        joints, weights = _top4(v, j, w, n_vertices)
    else:
        joints, weights = _top4(v[pos], j[pos], w[pos], n_vertices)
    del pos
    total = _row_sum(weights)
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
            total = _row_sum(weights)
            empty = total <= 0
    weights[empty, 0] = 1.0
    joints[empty, 0] = 0
    total[empty] = 1.0
    weights /= total[:, None]
    return joints, weights


def _row_sum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=1)`` for 4 columns, column by column (numpy's reduction over a short axis
    is slow); the additions are in the same order."""
    s = a[:, 0] + a[:, 1]
    s += a[:, 2]
    s += a[:, 3]
    return s


def odd_vertices(ent, n_vertices: int) -> np.ndarray:
    """Vertices whose glTF weights would not give back the file's: named only with zero
    weights, positive weights not summing to 1, or more than 4 of them."""
    v, _, w = ent
    pos = w > 0
    every = bool(pos.all())
    count = _bincount(v if every else v[pos], None, n_vertices)
    out = count > 4
    out |= count == 0
    del count
    total = _bincount(v if every else v[pos], w if every else w[pos], n_vertices)
    del pos
    total -= 1.0
    np.abs(total, out=total)
    out |= total > 1e-5
    del total
    out &= _bincount(v, None, n_vertices) > 0              # named
    return out


def record_entries(ent, odd: np.ndarray):
    """The entries :func:`weight_record` can use (those of odd vertices and the zero
    weights), in file order: a small copy to keep while the others are let go."""
    v, j, w = ent
    keep = odd[v]
    keep |= w == 0
    return v[keep], j[keep], w[keep]


def _bincount(v: np.ndarray, weights: np.ndarray | None, n: int, step: int = 1 << 16
              ) -> np.ndarray:
    """``np.bincount(v, weights, minlength=n)`` (int32 counts, float64 sums, same order of
    additions) without bincount's int64 copy of ``v`` and float64 copy of ``weights``: added
    a slice at a time (``np.add.at`` is fast when its operands share a dtype)."""
    out = np.zeros(n, np.int32 if weights is None else np.float64)
    ones = np.ones(min(step, len(v)), out.dtype)
    for a in range(0, len(v), step):
        at = v[a:a + step]
        np.add.at(out, at, ones[:len(at)] if weights is None
                  else weights[a:a + step].astype(np.float64))
    return out


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
