"""Shared pieces of the LithTech ABC <-> Scene conversion: axis flips, small checks and the
helpers that read numbers back from glTF extras (see :mod:`.scene` for the mapping)."""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ...errors import FormatError, LossWarning
from ...transforms import compose_trs, decompose_trs
from .abc import Lod

__all__ = ["S3", "SQ", "S4", "latin1", "scene_error", "tree_parents", "check_finite", "unit_normals",
           "split_corners", "bind_deviation", "increasing_keys", "rigid", "floats", "cross_rows"]

S3 = np.array([1.0, 1.0, -1.0])
SQ = np.array([-1.0, -1.0, 1.0, 1.0])
S4 = np.diag([1.0, 1.0, -1.0, 1.0])


def latin1(b: bytes) -> str:
    return bytes(b).decode("latin-1")


def scene_error(expected: str, got: Any = None, path: str = "to_scene") -> FormatError:
    return FormatError(expected, path=path, got=got)


def tree_parents(child_counts: list[int]) -> tuple[list[int], int]:
    """Parents of depth-first nodes from their child counts; also the number of announced
    children that never came (0 in a well-formed file). Nodes after a finished tree are roots."""
    parents: list[int] = []
    stack: list[list[int]] = []
    for i, c in enumerate(child_counts):
        while stack and stack[-1][1] <= 0:
            stack.pop()
        if stack:
            parents.append(stack[-1][0])
            stack[-1][1] -= 1
        else:
            parents.append(-1)
        stack.append([i, int(c)])
    missing = sum(max(s[1], 0) for s in stack)
    return parents, missing


def check_finite(a: np.ndarray, what: str, path: str) -> None:
    if not np.all(np.isfinite(a)):
        raise scene_error(f"finite {what}", "NaN or infinity", path)


def unit_normals(n: np.ndarray) -> np.ndarray | None:
    n = np.asarray(n, np.float64)
    if not np.all(np.isfinite(n)):
        return None
    ln = np.linalg.norm(n, axis=1)
    if len(n) and ln.min() < 1e-8:
        return None
    return n / ln[:, None] if len(n) else n


def split_corners(vertex_idx: np.ndarray, uv: np.ndarray):
    """Unique (vertex, u, v) corners: (source vertex per glTF vertex, uv per glTF vertex,
    index per corner). The glTF vertices in the order of (vertex, the UV pair's bits as a
    uint64), each first met where its corner first comes (one stable lexsort; two np.unique
    calls over uint64 keys cost four times as much and gave the same)."""
    uv = np.ascontiguousarray(uv, np.float32)
    uvkey = uv.view(np.uint64).reshape(-1)
    order = np.lexsort((uvkey, vertex_idx))
    # one sorted column at a time, in one buffer (a big model's fresh temporaries cost more
    # in page faults than in arithmetic)
    s = np.take(uvkey, order)
    new = np.ones(len(order), bool)
    np.not_equal(s[1:], s[:-1], out=new[1:])
    sv = np.take(vertex_idx, order, out=s.view(vertex_idx.dtype)) \
        if vertex_idx.dtype.itemsize == 8 else np.take(vertex_idx, order)
    new[1:] |= sv[1:] != sv[:-1]
    del s, sv
    first = order[new]
    inverse = np.empty(len(order), np.int64)
    rank = np.cumsum(new)
    rank -= 1
    inverse[order] = rank
    return vertex_idx[first].astype(np.int64), np.take(uv, first, 0), inverse


def bind_deviation(lod: Lod, mats: np.ndarray) -> float | None:
    """``max |sum(bias * m_node @ weight.location) - vertex.location|`` over the weighted
    vertices of a LOD (file space; ``mats`` are the nodes' bind matrices): how far the engine's
    bind pose is from the stored vertex positions. None without weighted vertices."""
    verts, wts = np.asarray(lod.vertices), np.asarray(lod.weights)
    counts = verts["weight_count"].astype(np.int64)
    if not len(wts) or int(counts.sum()) != len(wts):
        return None
    node = wts["node"].astype(np.int64)
    if node.max() >= len(mats):
        return None
    owner = np.repeat(np.arange(len(verts)), counts)
    b = wts["bias"].astype(np.float64)
    b[~np.isfinite(b)] = 0.0
    with np.errstate(all="ignore"):
        # column by column from the (few) nodes' matrices, summed per vertex by bincount:
        # a gathered 4x4 matrix per weight and np.add.at were most of to_scene's time; the
        # coordinates as rows (weight_locations' own layout), in place: the same values
        placed = weight_locations(mats, node, wts["location"]).T
        placed *= b
        used = counts > 0
        d = [np.bincount(owner, placed[c], len(verts))[used] for c in range(3)]
        loc = verts["location"][used]
        for c in range(3):
            d[c] -= loc[:, c]
            d[c] *= d[c]
        # (the sum of squares in np.linalg.norm's order, then its square root)
        dev = np.sqrt(d[0] + d[1] + d[2])
    dev = dev[np.isfinite(dev)]
    return float(dev.max()) if len(dev) else None



def increasing_keys(times_ms: np.ndarray, name: str) -> np.ndarray:
    # compared as the float32 seconds glTF stores (past ~4.6 hours whole ms run together)
    t = (times_ms.astype(np.float64) / 1000.0).astype(np.float32)
    prev = np.maximum.accumulate(np.concatenate([[-1.0], t[:-1]]).astype(np.float32))
    keep = t > prev
    if not keep.all():
        warnings.warn(f"animation {name!r}: {int((~keep).sum())} keys whose time does not "
                      "increase were dropped", LossWarning, stacklevel=4)
    return keep



def rigid(m: np.ndarray) -> np.ndarray:
    """The rotation and translation of affine matrices (scale and mirroring removed)."""
    t, q, _ = decompose_trs(m)
    return compose_trs(t, q, np.ones_like(t))


def weight_locations(inv_bind: np.ndarray, node: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Each weight's location, ``inverse(bind of its node) @ vertex`` ((n, 3), float64), in
    the one order of operations the writer and the ``.abc`` record share (so that the record
    predicts the writer's bits): column by column, not a matrix product per weight."""
    # one coordinate at a time from 1-D gathers of each matrix entry (a gathered (3, 4)
    # matrix per weight cost twice as much); the same products and sums in the same order
    # (in place into one row and one temporary: a model's fresh temporaries cost more in page
    # faults than in arithmetic)
    node = np.asarray(node, np.intp)
    # (its columns read as strided views, not copied; float32 columns as they are: a float64
    # product takes them exactly, the same bits as a float64 copy would give)
    p = pos if isinstance(pos, np.ndarray) and pos.dtype in (np.float32, np.float64) else \
        np.asarray(pos, np.float64)
    if len(node) <= 2048:
        # a few weights: every row's (3, 4) matrix gathered at once, the same products and
        # sums in the same order per value (12 gathers and 18 passes cost more in calls)
        g = np.take(np.asarray(inv_bind, np.float64)[:, :3, :], node, 0)        # (n, 3, 4)
        o = g[:, :, 0] * p[:, 0:1]
        for c in (1, 2):
            o += g[:, :, c] * p[:, c:c + 1]
        o += g[:, :, 3]
        return o
    m = np.ascontiguousarray(np.asarray(inv_bind, np.float64)[:, :3, :].transpose(1, 2, 0))
    out = np.empty((3, len(node)))
    t = np.empty(len(node))
    for r in range(3):
        o = out[r]
        np.take(m[r, 0], node, out=o)
        o *= p[:, 0]
        for c in (1, 2):
            np.take(m[r, c], node, out=t)
            t *= p[:, c]
            o += t
        np.take(m[r, 3], node, out=t)
        o += t
    return out.T


#: the float32 range (:data:`retromesh.extras.FLOAT32`)
_F32 = 3.4028234663852886e38


def floats(value: Any, n: int | None = None) -> list[float] | None:
    """``retromesh.extras.numbers(value, n, *FLOAT32)`` (the same test, value by value, in
    the same order) without a call and a dict per value: the v6 writer reads a few hundred
    kept numbers per model."""
    if not isinstance(value, list) or (n is not None and len(value) != n):
        return None
    out = []
    for v in value:
        if (type(v) is int or type(v) is float) and math.isfinite(v) and -_F32 <= v <= _F32:
            out.append(float(v))
        else:
            return None
    return out


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of (n, 3) rows: the same products and differences (the same bits), a
    column at a time (np.cross costs several times more on a model's few hundred faces)."""
    out = np.empty((len(a), 3), np.result_type(a, b))
    for c, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        o = out[:, c]
        np.multiply(a[:, i], b[:, j], out=o)
        o -= a[:, j] * b[:, i]
    return out
