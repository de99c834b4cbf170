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

__all__ = ["Entries", "entries", "skin_weights", "odd_vertices", "record_entries",
           "weight_record", "top4"]

WEIGHT_MODES = ("blitz3d", "raw")


class Entries:
    """Every BONE entry of one mesh, in file order: per BONE (``parts``) its joint slot, vertex
    ids and weights, as views of the BONE records (not copies; a BONE naming vertices out of
    range gets a filtered copy). ``v, j, w = entries`` gives them as three joined arrays."""

    def __init__(self, parts: list[tuple[int | np.ndarray, np.ndarray, np.ndarray]],
                 n_vertices: int) -> None:
        self.parts = parts
        self.n_vertices = n_vertices

    def __len__(self) -> int:
        return sum(len(v) for _, v, _ in self.parts)

    def __iter__(self):
        return iter(_join(self.parts))


def entries(bones: list[tuple[int, np.ndarray]], n_vertices: int) -> Entries:
    """Every BONE entry of one mesh as (vertex, joint slot, weight), in file order. Many small
    BONEs become one part with a joint slot per entry: one pass over joined arrays costs less
    than a numpy call per BONE."""
    if len(bones) > 1 and sum(len(rec) for _, rec in bones) < _JOIN_BELOW * len(bones):
        v, j, w = _join([(j, rec["vertex"], rec["weight"]) for j, rec in bones])
        ok = (v >= 0) & (v < n_vertices)
        if not ok.all():
            v, j, w = v[ok], j[ok], w[ok]
        return Entries([(j, v, w)], n_vertices)
    parts: list[tuple[int | np.ndarray, np.ndarray, np.ndarray]] = []
    for slot, rec in bones:
        v, w = rec["vertex"], rec["weight"]
        ok = (v >= 0) & (v < n_vertices)
        if not ok.all():
            v, w = v[ok], w[ok]
        parts.append((int(slot), v, w))
    return Entries(parts, n_vertices)


def _join(parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parts as (vertex int32, joint slot uint16 when they fit, weight float32) arrays, each
    made by one concatenation (field by field: joining structured records costs ~15x more)."""
    if not parts:
        return np.empty(0, np.int32), np.empty(0, np.uint16), np.empty(0, np.float32)
    v = np.concatenate([vv for _, vv, _ in parts]).astype(np.int32, copy=False)
    w = np.concatenate([ww for _, _, ww in parts]).astype(np.float32, copy=False)
    if all(np.ndim(j) == 0 for j, _, _ in parts):      # a slot per part: repeated
        slots = [int(j) for j, _, _ in parts]
        js = np.repeat(np.array(slots, np.int32 if max(slots) >= 65536 else np.uint16),
                       [len(vv) for _, vv, _ in parts])
        return v, js, w
    dt = np.int32 if any(np.max(j, initial=0) >= 65536 for j, _, _ in parts) else np.uint16
    js = np.concatenate([np.full(len(vv), j, dt) if np.ndim(j) == 0 else j
                         for j, vv, _ in parts]).astype(dt)
    return v, js, w


def _parts(ent) -> list[tuple]:
    """The per-BONE parts of :class:`Entries`, or of (vertex, joint, weight) arrays (cut
    where the joint changes)."""
    if isinstance(ent, Entries):
        return ent.parts
    v, j, w = (np.asarray(a) for a in ent)
    if not len(v):
        return []
    cuts = (np.flatnonzero(j[1:] != j[:-1]) + 1).tolist()
    if len(cuts) >= _MAX_RUNS:
        return [(j, v, w)]
    return [(int(j[a]), v[a:b], w[a:b]) for a, b in zip([0, *cuts], [*cuts, len(v)])]


#: more BONE chunks than this (a hostile file) and top4 sorts instead of gathering
_MAX_RUNS = 4096
#: BONEs naming fewer vertices than this on average are joined into one part: numpy's cost per
#: call outweighs sorting them all (the corpus' rigs: 1-48 BONEs of 0-650 entries)
_JOIN_BELOW = 1024


def _rows_of(v: np.ndarray, row_of: np.ndarray | None) -> np.ndarray:
    return v if row_of is None else row_of[v]


def top4(parts, n_vertices: int, row_of: np.ndarray | None = None, n_rows: int | None = None):
    """Per vertex (or per row: ``row_of[vertex]`` of ``n_rows``), the joints and weights of its
    4 heaviest entries, heaviest first (ties in file order); weights > 0.

    Each BONE names a vertex once: then each entry's rank among its vertex's entries is
    counted BONE by BONE (a counting sort: no sort of all the entries), the (row, rank) table
    is filled and each row put in weight order by a stable 4-element sorting network.
    Vertices with more than 4 entries, or a BONE naming a vertex twice, take the general path
    (:func:`_top4_sorted`)."""
    size = n_vertices if n_rows is None else n_rows
    joints = np.zeros((size, 4), np.uint16)
    weights = np.zeros((size, 4), np.float32)
    if not any(len(v) for _, v, _ in parts):
        return joints, weights
    if len(parts) >= _MAX_RUNS or any(np.ndim(j) for j, _, _ in parts):
        return _top4_sorted(*_join(parts), row_of, joints, weights)
    counts = np.zeros(n_vertices, np.int32)
    for _, v, _ in parts:
        _add_at(counts, v, None)
    if counts.max() > 4:
        return _top4_sorted(*_join(parts), row_of, joints, weights)
    counts = counts.astype(np.uint8)
    fill = np.zeros(n_vertices, np.uint8)
    flat_j, flat_w = joints.reshape(-1), weights.reshape(-1)
    for j, v, w in parts:
        rank = fill[v]
        fill[v] = rank + 1
        at = _rows_of(v, row_of).astype(np.intp) * 4
        at += rank
        flat_j[at] = j
        flat_w[at] = w
    if not np.array_equal(fill, counts):       # a BONE named a vertex more than once
        joints[:], weights[:] = 0, 0
        return _top4_sorted(*_join(parts), row_of, joints, weights)
    # bubble sort by weight, heaviest first; strict comparisons keep equal weights in order
    for a in (0, 1, 2, 0, 1, 0):
        wa, wb = weights[:, a], weights[:, a + 1]
        swap = np.flatnonzero(wb > wa)
        if len(swap):
            weights[swap, a], weights[swap, a + 1] = wb[swap], wa[swap]
            ja, jb = joints[:, a], joints[:, a + 1]
            joints[swap, a], joints[swap, a + 1] = jb[swap], ja[swap]
    return joints, weights


def _top4_sorted(v, j, w, row_of, joints, weights):
    """:func:`top4` by sorting every entry (any number of entries per vertex), into the
    zeroed ``joints``/``weights``."""
    order = np.lexsort((-w, v))                 # per vertex, heaviest first (stable)
    v, j, w = v[order], j[order], w[order]
    rank = np.arange(len(v), dtype=np.int64) - np.searchsorted(v, v, side="left")
    keep = rank < 4
    rows = _rows_of(v[keep], row_of)
    joints[rows, rank[keep]] = j[keep]
    weights[rows, rank[keep]] = w[keep]
    return joints, weights


def _row_map(rows, n_vertices: int):
    """For ``rows`` (per primitive, its increasing vertex ids): each vertex's first row in the
    primitives' rows one after another, the number of rows plus one (a last row where the
    vertices no primitive uses go), and the (rows, first rows) of vertices used again."""
    total = sum(len(u) for u in rows)
    row_of = np.full(n_vertices, total, np.int64 if total >= 2**31 - 1 else np.int32)
    again = []
    at = 0
    for u in rows:
        here = np.arange(at, at + len(u), dtype=row_of.dtype)
        first = row_of[u]
        fresh = first == total
        if fresh.all():
            row_of[u] = here
        else:
            row_of[u[fresh]] = here[fresh]
            again.append((here[~fresh], first[~fresh]))
        at += len(u)
    return row_of, total + 1, again


def skin_weights(ent, n_vertices: int, mode: str = "blitz3d", rows=None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Top-4 joints (indices into the skin) and weights per vertex, rows summing to 1.

    With ``rows`` (per primitive, its increasing vertex ids, as ``np.unique`` gives them), one
    row per primitive vertex instead, the primitives' rows one after another: each primitive
    takes a slice, with no copy of the whole table per primitive."""
    parts = _parts(ent)
    if rows is not None:
        rows = [np.asarray(u) for u in rows]
        if any(len(u) > 1 and not (u[1:] > u[:-1]).all() for u in rows):
            joints, weights = skin_weights(Entries(parts, n_vertices), n_vertices, mode)
            pick = np.concatenate(rows) if rows else np.zeros(0, np.intp)
            return joints[pick], weights[pick]
        row_of, size, again = _row_map(rows, n_vertices)
    else:
        row_of, size, again = None, n_vertices, []
    positive = []
    for j, v, w in parts:
        pos = w > 0
        positive.append((j, v, w) if pos.all() else
                        (j if np.ndim(j) == 0 else j[pos], v[pos], w[pos]))
    joints, weights = top4(positive, n_vertices, row_of, size)
    del positive
    total = _row_sum(weights)
    empty = total <= 0
    if mode == "blitz3d" and any(len(v) for _, v, _ in parts):
        named = np.zeros(size, bool)
        for _, v, _ in parts:
            named[_rows_of(v, row_of)] = True
        zero_only = empty & named
        if zero_only.any():
            # the first 4 bones naming the vertex, in file order, share it equally
            sel = []
            for j, v, _ in parts:
                s = zero_only[_rows_of(v, row_of)]
                if s.any():
                    sel.append((j if np.ndim(j) == 0 else j[s], v[s],
                                np.ones(int(s.sum()), np.float32)))
            zj, zw = top4(sel, n_vertices, row_of, size)
            joints[zero_only] = zj[zero_only]
            weights[zero_only] = zw[zero_only]
            total = _row_sum(weights)
            empty = total <= 0
    weights[empty, 0] = 1.0
    joints[empty, 0] = 0
    total[empty] = 1.0
    weights /= total[:, None]
    if row_of is None:
        return joints, weights
    for dst, src in again:
        joints[dst] = joints[src]
        weights[dst] = weights[src]
    return joints[:-1], weights[:-1]


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
    parts = _parts(ent)
    count = np.zeros(n_vertices, np.int32)
    total = np.zeros(n_vertices, np.float64)
    named = np.zeros(n_vertices, bool)
    for _, v, w in parts:
        named[v] = True
        pos = w > 0
        if not pos.all():
            v, w = v[pos], w[pos]
        _add_at(count, v, None)
        _add_at(total, v, w)
    out = count > 4
    out |= count == 0
    del count
    total -= 1.0
    np.abs(total, out=total)
    out |= total > 1e-5
    del total
    out &= named
    return out


def record_entries(ent, odd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries :func:`weight_record` can use (those of odd vertices and the zero
    weights), in file order, as (vertex, joint, weight) arrays: a small copy to keep while
    the others are let go."""
    kept = []
    for j, v, w in _parts(ent):
        keep = odd[v]
        keep |= w == 0
        if keep.any():
            kept.append((j if np.ndim(j) == 0 else j[keep], v[keep], w[keep]))
    return _join(kept)


def _add_at(out: np.ndarray, v: np.ndarray, weights: np.ndarray | None,
            step: int = 1 << 16) -> None:
    """``out += np.bincount(v, weights, minlength=len(out))`` (same order of additions)
    without bincount's int64 copy of ``v`` and float64 copy of ``weights``: a slice at a time
    (``np.add.at`` is fast when its operands share a dtype)."""
    ones = np.ones(min(step, len(v)) if weights is None else 0, out.dtype)
    for a in range(0, len(v), step):
        at = v[a:a + step]
        np.add.at(out, at, ones[:len(at)] if weights is None
                  else weights[a:a + step].astype(out.dtype))


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
           "weight": w[sel].astype(np.float64).tolist()}
    if zero.any():
        out["zeros"] = _runs(j[zero], np.searchsorted(used, v[zero]))
    return out
