"""Geometry helpers that both the format families and the glTF writer use (vertex normals,
unit rows).

It imports numpy and nothing else of retromesh, so any layer may import it at module level:
a family that computes normals need not load the glTF writer for it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["compute_normals", "unit_rows", "gltf_weights", "merge_duplicate_joints", "row_sum64",
           "row_argmax", "gltf_node_trs"]


def compute_normals(positions: np.ndarray, indices: np.ndarray | None) -> np.ndarray:
    """Area-weighted vertex normals (sum of un-normalised face normals, then normalised)."""
    pos = np.asarray(positions, dtype=np.float32)
    n = len(pos)
    tri = (np.arange(n) if indices is None else np.asarray(indices)).reshape(-1, 3)
    acc = np.zeros((3, n), np.float64)      # component-major: every row contiguous
    if len(tri):
        corner = [tri[:, k].astype(np.intp) for k in range(3)]   # bincount's index type
        p = np.ascontiguousarray(pos.T)
        p0 = np.take(p, corner[0], axis=1)
        e1 = np.take(p, corner[1], axis=1) - p0
        e2 = np.take(p, corner[2], axis=1) - p0
        del p0, p
        fn = np.empty((3, len(tri)), np.float32)
        for c, (a, b) in enumerate(((1, 2), (2, 0), (0, 1))):   # the cross product, in float32
            fn[c] = e1[a] * e2[b] - e1[b] * e2[a]
        del e1, e2
        for c in range(3):      # per component the same additions, in the same order
            f = fn[c].astype(np.float64)                        # bincount's weight type
            for k in range(3):
                acc[c] += np.bincount(corner[k], weights=f, minlength=n)
    return unit_rows(acc.T, fallback=(0.0, 1.0, 0.0))


def unit_rows(v: np.ndarray, fallback=(0.0, 1.0, 0.0)) -> np.ndarray:
    """Rows scaled to length 1 (in float64, returned as float32); zero-length or non-finite
    rows become ``fallback``."""
    v = np.asarray(v, dtype=np.float64)
    sq = v[:, 0] * v[:, 0]
    for c in range(1, v.shape[1]):
        sq += v[:, c] * v[:, c]
    norm = np.sqrt(sq, out=sq)
    ok = (norm > 1e-12) & (norm < np.inf)
    if ok.all():            # every row divided by a finite length >= its items: no warning
        return (v / norm[:, None]).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (v / norm[:, None]).astype(np.float32)
    out[~ok] = fallback
    return out


def gltf_weights(joints: np.ndarray, weights: np.ndarray, merge: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, int]:
    """``(joints, weights, vertices without weight)`` as the glTF writer stores them: weights
    >= 0 summing to 1 in float32 (a vertex without weight bound to joint 0), joints of zero
    weights set to 0 and (``merge``) a joint named twice merged into its first slot. The
    families use it to know what a GLB holds (retromesh.restore)."""
    w = weights.astype(np.float32)
    if not np.isfinite(w).all():        # (nan_to_num is a dozen numpy calls)
        np.nan_to_num(w, copy=False)
    np.clip(w, 0.0, None, out=w)
    j = joints.astype(np.uint16, copy=True)
    s = row_sum64(w)
    n_empty = 0
    # rows summing to 1 already (most models): dividing by 1 and adding the error 0 to the
    # largest (positive) weight change no bit, so both are skipped
    if not (s == 1.0).all():
        empty = s <= 1e-12
        n_empty = int(empty.sum())
        if n_empty:
            w[empty] = (1.0, 0.0, 0.0, 0.0)
            j[empty] = 0
            s[empty] = 1.0
        w /= s.astype(np.float32)[:, None]
        # put the float32 rounding error of the sum on the largest weight
        err = (1.0 - row_sum64(w)).astype(np.float32)
        largest = row_argmax(w)
        largest += np.arange(0, w.size, w.shape[1], dtype=largest.dtype)
        w.reshape(-1)[largest] += err
    j[w == 0] = 0
    if merge:
        j, w = merge_duplicate_joints(j, w)
    return j, w, n_empty


def row_sum64(w: np.ndarray) -> np.ndarray:
    """``w.sum(axis=1, dtype=float64)`` (same order of additions) without the slow reduction
    over a short axis."""
    s = w[:, 0].astype(np.float64)
    for c in range(1, w.shape[1]):
        s += w[:, c]
    return s


def row_argmax(w: np.ndarray) -> np.ndarray:
    """``np.argmax(w, axis=1)`` of rows without NaN (the first greatest of each row): from
    1,024 rows on column by column, as numpy's reduction over a short axis costs about 12 ns
    a row (a 20,000-vertex mesh: 230 us, 40 us so)."""
    if len(w) < 1024:
        return np.argmax(w, axis=1)
    best = w[:, 0]
    idx = np.zeros(len(w), np.intp)
    for c in range(1, w.shape[1]):
        col = w[:, c]
        greater = col > best                # (ties keep the first)
        idx[greater] = c
        best = np.where(greater, col, best)
    return idx


_PAIR_A, _PAIR_B = np.array([0, 0, 0, 1, 1, 2]), np.array([1, 2, 3, 2, 3, 3])


def merge_duplicate_joints(j: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A joint a vertex names in two slots (both weighted): the weights added into the first
    slot (in place)."""
    # merging only takes weight away, so no pair that weighs twice now: none later either;
    # all pairs in one pass for small primitives (big ones: no (n, 6) temporaries)
    if len(j) <= 2048:
        if not ((j[:, _PAIR_A] == j[:, _PAIR_B]) & (w[:, _PAIR_A] > 0) & (w[:, _PAIR_B] > 0)).any():
            return j, w
        jc, wc = j.T, w.T
    else:   # each slot's column side by side (copies): 4 to 8 times faster tests
        jc, wc = np.ascontiguousarray(j.T), np.ascontiguousarray(w.T)
    merged = False
    for a in range(4):
        for b in range(a + 1, 4):
            dup = (jc[a] == jc[b]) & (wc[b] > 0) & (wc[a] > 0)
            if np.any(dup):
                wc[a, dup] += wc[b, dup]
                wc[b, dup] = 0
                jc[b, dup] = 0
                merged = True
    if merged and len(j) > 2048:    # (the small ones were changed through their views)
        j[...], w[...] = jc.T, wc.T
    return j, w


def _near(values: np.ndarray, ref: tuple) -> np.ndarray:
    """Per row, whether it is ``np.allclose`` to ``ref`` (all rows in one test)."""
    r = np.asarray(ref, np.float64)
    return np.all(np.abs(values - r) <= 1e-8 + 1e-5 * np.abs(r), axis=1)


def gltf_node_trs(t: np.ndarray, r: np.ndarray, s: np.ndarray
                  ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                             tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Nodes' ``(n, 3)`` translations, ``(n, 4)`` rotations and ``(n, 3)`` scales (float64) as
    a glTF reader finds them after the glTF writer: rotations made unit, and per column which
    rows it leaves out as (all-close to) the identity, which read back as the identity. Returns
    ``((t, r, s), (t left out, r left out, s left out))``."""
    t, r, s = (np.asarray(a, np.float64) for a in (t, r, s))
    still = (_near(t, (0, 0, 0)), _near(r, (0, 0, 0, 1)), _near(s, (1, 1, 1)))
    norm = np.sqrt(np.einsum("ij,ij->i", r, r))
    r = r / np.where(norm > 0, norm, 1.0)[:, None]
    read = tuple(np.where(m[:, None], np.asarray(ident, np.float64), a) for a, m, ident in
                 zip((t, r, s), still, ((0, 0, 0), (0, 0, 0, 1), (1, 1, 1))))
    return (read[0], read[1], read[2]), still
