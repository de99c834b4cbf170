"""Geometry helpers that both the format families and the glTF writer use (vertex normals,
unit rows).

It imports numpy and nothing else of retromesh, so any layer may import it at module level:
a family that computes normals need not load the glTF writer for it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["compute_normals", "unit_rows"]


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
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (v / norm[:, None]).astype(np.float32)
    if not ok.all():
        out[~ok] = fallback
    return out
