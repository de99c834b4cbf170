"""A BONE's entries in file order and with the file's weight bits, restored after glTF when
unedited (issue 32; see :mod:`.exact` for the other records).

glTF holds each vertex's weights renormalised in float32 (:func:`retromesh.geometry.gltf_weights`),
so the plain way back gives a positive weight other than 1 of a vertex whose entries glTF holds
as they are (not an ``odd`` vertex, :func:`.skinning.odd_vertices`: those the mesh's weight
record keeps) in the file's bits or a few float32 units off. ``node.extras["b3d"]["bexact"]``
keeps, for each BONE, what the way back needs:

* ``v``: the vertex ids, when they are not in increasing order (the writer's), as their steps;
* version 3 (to_scene knows the weights the GLB will hold): ``ws`` the entries (steps of their
  places in file order) whose weight the way back does not give bit for bit, ``wf`` their
  file values (float32); nothing when all come back (``h3dview__Bird.b3d``: 17 of 423);
* version 2 (a scene read for an editor, :func:`retromesh.restore.editor_records`, which
  stores weights its own way; a BONE whose GLB weights are not known; a mesh of more than
  :data:`V3_MOST` such entries): ``wu`` the bone's distinct weights and ``wi`` which each
  entry has;
* GLBs written before hold ``w``, all weights, and steps of int32, which are still read.

Texts of :func:`retromesh.restore.pack_small` and :func:`retromesh.restore.pack_words`. On the
way back each kept weight is written while the written one is within :data:`WEIGHT_TOLERANCE`
of it (an edit smaller than that is dropped).
"""
from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate
from typing import Any

import numpy as np

from ...restore import (
    for_editor,
    from_steps,
    pack_small,
    pack_small_slices,
    pack_words,
    unpack_small,
    unpack_words,
)
from .chunks import BONE_DTYPE, Bone

__all__ = ["WEIGHT_TOLERANCE", "V3_MOST", "bone_record", "bone_records", "restore_bone"]

#: a written weight this close to the file's counts as unedited (glTF weights are the file's
#: renormalised in float32: they differ in the last bits)
WEIGHT_TOLERANCE = 1e-5

#: a mesh with more entries to compare than this keeps version 2 (the comparison, a few numpy
#: passes over all of them, costs more there than the smaller record saves: a 60,000-vertex
#: mesh of 240,000 entries took 20 ms against 3 ms)
V3_MOST = 1 << 15


def bone_record(weights: np.ndarray, odd: np.ndarray) -> dict | None:
    """The record (version 2, see the module docstring) of one BONE's weights; ``odd``: the
    vertices whose entries the mesh's weight record keeps."""
    v, w = weights["vertex"], weights["weight"]
    loose = v[(w > 0) & (w != 1.0)]
    loose = loose[(loose >= 0) & (loose < len(odd))]
    return _bone_texts(v, w, len(v) > 1 and bool((v[1:] < v[:-1]).any()),
                       bool(len(loose)) and not odd[loose].all())


def bone_records(bones: list[np.ndarray], odd: np.ndarray,
                 written: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]]
                 | None = None) -> list[dict | None]:
    """The record of each BONE's weights, the tests of all bones in one numpy pass (a mob has
    dozens of bones, most of which need no record): per bone only the texts.

    ``written`` gives (each vertex's row in the next two, -1 for none; the glTF joints and
    weights per row as the GLB holds them; each bone's joint slot), called only when a bone
    has weights to keep: then the version 3 record, of the weights the way back does not give
    bit for bit; without it, or for an editor, version 2."""
    if not bones:
        return []
    # (np.concatenate of record arrays is 20x slower than of their bytes)
    cat = np.frombuffer(b"".join([(b if b.dtype == BONE_DTYPE else b.astype(BONE_DTYPE)).tobytes()
                                  for b in bones]), BONE_DTYPE)
    v, w = cat["vertex"], cat["weight"]
    starts = np.array([0, *accumulate(len(b) for b in bones)], np.int64)
    # a vertex id smaller than the one before it in its bone
    down = np.zeros(len(v), bool)
    down[1:] = v[1:] < v[:-1]
    down[starts[:-1][starts[:-1] < len(v)]] = False
    # a positive weight other than 1 of a vertex glTF holds as it is
    inside = (v >= 0) & (v < len(odd))
    loose = (w > 0) & (w != 1.0) & inside
    loose[inside] &= ~odd[v[inside]]
    any_loose = _any_per(loose, starts)
    if written is None or for_editor() or not any(any_loose) or \
            int(np.count_nonzero(loose)) > V3_MOST:
        return [_bone_texts(b["vertex"], b["weight"], d, lo) if d or lo else None
                for b, d, lo in zip(bones, _any_per(down, starts), any_loose)]
    keep = _not_given_back(v, w, loose, starts, written())
    # (only loose entries are kept: every bone's kept weights taken at once, cut per bone)
    kept = np.flatnonzero(keep)
    cut = np.searchsorted(kept, starts).tolist()
    steps_texts = _row_steps_texts(kept, starts, cut)
    raw = np.ascontiguousarray(w[kept], "<f4").tobytes()
    out: list[dict | None] = []
    for k, (b, d) in enumerate(zip(bones, _any_per(down, starts))):
        rec = _bone_texts(b["vertex"], b["weight"], d, False) if d else None
        a, e = cut[k], cut[k + 1]
        if e > a:
            rec = rec or {}
            rec["ws"] = steps_texts[k]
            rec["wf"] = pack_words(raw[4 * a:4 * e])
        out.append(rec)
    return out


def _not_given_back(v: np.ndarray, w: np.ndarray, loose: np.ndarray, starts: np.ndarray,
                    written: tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]) -> np.ndarray:
    """Which of the ``loose`` entries (of all bones, one after another) the way back does not
    give bit for bit: the GLB's weight of the entry's joint at its vertex differs in its bits,
    or there is none to tell (a vertex no primitive holds, a joint glTF merged)."""
    row_of, joints, weights, slots = written
    at = np.flatnonzero(loose)
    slot = np.repeat(np.asarray(slots, np.int64), starts[1:] - starts[:-1])[at]
    row = row_of[v[at]]
    known = row >= 0
    r = np.where(known, row, 0)
    match = (joints[r] == slot[:, None]) & (weights[r] > 0)
    if match.shape[1] == 4:         # (a row's four tests read as one word: any(axis=1) is slow)
        known &= match.view(np.uint32).reshape(-1) != 0
    else:
        known &= match.any(axis=1)
    got = weights[r, match.argmax(axis=1)]
    out = np.zeros(len(v), bool)
    out[at] = ~known | (np.ascontiguousarray(got, np.float32).view(np.uint32)
                        != np.ascontiguousarray(w[at], np.float32).view(np.uint32))
    return out


def _row_steps_texts(rows: np.ndarray, starts: np.ndarray, cut: list[int]) -> list[str]:
    """Per bone (entries ``starts[k]:starts[k + 1]``), the :func:`pack_small` text of the steps
    of its entries among ``rows`` (increasing; bone ``k``'s are ``rows[cut[k]:cut[k + 1]]``),
    the first from 0, all bones in one pass (a few bones with rows: one by one, the same
    texts; ``""`` for a bone without)."""
    bone = np.searchsorted(starts, rows, side="right") - 1
    local = rows - starts[bone]
    d = local.copy()
    d[1:] -= local[:-1]
    first = np.ones(len(rows), bool)
    first[1:] = bone[1:] != bone[:-1]
    d[first] = local[first]
    spans = list(zip(cut[:-1], cut[1:]))
    if sum(b > a for a, b in spans) <= _FEW_BONES:
        return [pack_small(d[a:b]) if b > a else "" for a, b in spans]
    return pack_small_slices(d, np.asarray(cut, np.int64))


#: :func:`_row_steps_texts` packs the texts of up to this many bones one by one
_FEW_BONES = 4


def _any_per(mask: np.ndarray, starts: np.ndarray) -> list[bool]:
    """Per slice ``starts[k]:starts[k + 1]`` of ``mask``, whether any is set."""
    hits = np.zeros(len(mask) + 1, np.int64)
    np.cumsum(mask, out=hits[1:])
    return (hits[starts[1:]] > hits[starts[:-1]]).tolist()


def _bone_texts(v: np.ndarray, w: np.ndarray, unordered_v: bool, loose: bool) -> dict | None:
    """:func:`bone_record`'s texts: ``v`` when ``unordered_v``, ``wu``/``wi`` when ``loose``."""
    out: dict[str, Any] = {}
    if unordered_v:
        out["v"] = pack_small(np.diff(v.astype(np.int64), prepend=0))
    if loose:
        u = np.ascontiguousarray(w, "<f4").view("<u4")
        if len(u) <= 256:       # in order of first use: a dict, cheaper than np.unique here
            first: dict[int, int] = {}
            which = np.array([first.setdefault(x, len(first)) for x in u.tolist()], np.int64)
            distinct = np.array(list(first), "<u4")
        else:
            distinct, which = np.unique(u, return_inverse=True)
        out["wu"] = pack_words(distinct.astype("<u4").tobytes())
        out["wi"] = pack_small(which)
    return out or None


def _kept_weights(rec: dict, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(entries, the file's weights of them) of a BONE of ``n`` entries kept by a record of
    any version, or None."""
    if "ws" in rec:
        steps, raw = unpack_small(rec["ws"]), unpack_words(rec.get("wf"))
        if steps is None or raw is None or len(raw) != 4 * len(steps) or \
                (len(steps) and (steps[0] < 0 or (steps[1:] <= 0).any())):
            return None
        rows = np.cumsum(steps)
        return (rows, np.frombuffer(raw, "<f4")) if not len(rows) or rows[-1] < n else None
    if "wu" in rec:
        raw, which = unpack_words(rec["wu"]), unpack_small(rec.get("wi"))
        if raw is None or len(raw) % 4 or which is None or len(which) != n or \
                (n and (which.min() < 0 or which.max() >= len(raw) // 4)):
            return None
        return np.arange(n), np.frombuffer(raw, "<f4")[which]
    raw = unpack_words(rec.get("w"))
    return (np.arange(n), np.frombuffer(raw, "<f4")) if raw is not None and len(raw) == 4 * n \
        else None


def restore_bone(bone: Bone, rec: Any) -> None:
    """The BONE's entries in file order and with the file's weight bits where they are still
    the written ones (same vertices; weights within :data:`WEIGHT_TOLERANCE`), in place."""
    if not isinstance(rec, dict):
        return
    w = bone.weights
    n = len(w)
    v_file = None
    if "v" in rec:
        small = unpack_small(rec["v"])
        v_file = np.cumsum(small) if small is not None else from_steps(unpack_words(rec["v"]))
        if v_file is None or len(v_file) != n:
            return
        order = np.argsort(v_file, kind="stable")
        if not np.array_equal(v_file[order], w["vertex"]):
            return
        back = np.empty(n, np.int64)
        back[order] = np.arange(n)
        w = w[back]
    if "w" in rec or "wu" in rec or "ws" in rec:
        kept = _kept_weights(rec, n)
        if kept is not None:
            rows, values = kept
            w = w.copy()
            near = np.abs(w["weight"][rows].astype(np.float64) - values) <= WEIGHT_TOLERANCE
            w["weight"][rows[near]] = values[near]
    bone.weights = w
