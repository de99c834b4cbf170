"""The file's own float bits and chunk order, restored after glTF when unedited (issue 32).

glTF makes us change some values: unit normals and quaternions, a transform near the default
left out (so ``1.0000001`` reads back as ``1.0``), a sign of zero lost, a key quaternion flipped
to the hemisphere of the key before it (so that it interpolates the short way). :func:`.scene.to_scene`
writes the glTF values and keeps, for each value the plain way back would not give back bit for
bit, the value as the file had it:

* NODE: ``node.extras["b3d"]["order"]`` the kinds of its child chunks in file order when they
  are not in the order the writer uses (an ANIM before the child NODEs); ``["trs"]`` the file's
  10 floats when the way back would not give them back (:mod:`.nodeexact`);
* VRTS normals and colours: ``b3d_tris[k]["exact"]`` (mesh extras) per primitive, the rows that
  would not come back and their file values (:func:`pack`; normals: their length and a
  rounding, :func:`pack_normals`);
* KEYS rotations: ``scene.extras["b3d_kexact"]``, one record over the rotation keys of every
  animated node (:func:`keys_scene_record`): the keys flipped to the other hemisphere and the
  rows that would not come back with their distance in float32 units from the value the way
  back gives. The GLB for an editor, and GLBs written before, hold it per node,
  ``node.extras["b3d"]["kexact"]`` over the node's KEYS chunks (:func:`keys_records`; the
  first version the file values), which is still read.

On the way back each kept value is used only while the scene still holds what we wrote from it
(recomputed from the kept value: bit for bit on the plain path, within :data:`BLENDER_TOLERANCE`
when the GLB came through Blender, which stores floats its own way); otherwise the scene's
(edited) value is written. Edits smaller than the tolerance are thus dropped. Records live
where Blender keeps them (scene, node and mesh extras).
"""
from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from ... import restore
from ...geometry import unit_rows
from ...restore import (
    bits,
    check_bytes,
    differing_rows,
    for_editor,
    from_steps,
    ordered,
    pack_raw,
    pack_small_slices,
    pack_words,
    put_back,
    steps,
    unordered,
    unpack_raw,
    unpack_small,
    unpack_words,
)
from .axes import Z32, rot_to_gltf
from .boneexact import WEIGHT_TOLERANCE, bone_record, bone_records, restore_bone
from .chunks import Keys
from .nodeexact import kept_trs, node_records, node_trs, node_values, recorded_gltf_trs, reorder

__all__ = ["BLENDER_TOLERANCE", "WEIGHT_TOLERANCE", "tolerance", "pack", "pack_normals",
           "normal_records", "unpack", "restore_rows", "restore_normals", "normal_naive",
           "node_records", "node_trs", "node_values", "kept_trs", "recorded_gltf_trs", "reorder",
           "rotation_naive", "keys_records", "keys_records_at", "restore_keys", "KEYS_SCENE_KEY",
           "keys_scene_record", "restore_keys_scene", "differing_rows4", "check8", "bone_record",
           "bone_records", "restore_bone"]

# (the BONE and NODE records: :mod:`.boneexact`, :mod:`.nodeexact`; named here too, where
# they were)

#: how far a value may be from what we wrote and still count as unedited, through Blender
#: (float32 matrices, per-corner normals stored in its own form, colours in 8 bits of sRGB):
#: relative to max(1, |value|)
BLENDER_TOLERANCE = {"trs": 1e-5, "normal": 2e-3, "color": 5e-3, "rotation": 1e-4}


def tolerance(scene, kind: str) -> float:
    """0 (bit for bit) unless the scene came through Blender (:func:`retromesh.restore.tolerance`),
    then the B3D figure for values of ``kind``."""
    return restore.tolerance(scene.extras, BLENDER_TOLERANCE[kind])


# -- float32 rows, packed (:func:`retromesh.restore.pack_words`) -------------------------------

def _rows_text(local: np.ndarray) -> str:
    """Increasing row numbers as their steps."""
    return pack_words(steps(local, "<u4"))


def pack(orig: np.ndarray, naive: np.ndarray) -> dict | None:
    """The rows of ``orig`` (k, c) float32 whose bits ``naive`` does not give back:
    ``{"n": k, "rows": steps between them, "f32": their values}`` (rows left out when all
    differ), or None."""
    rows = differing_rows(orig, naive)
    if rows is None or not len(rows):
        return None
    return _record(len(orig), rows, np.asarray(orig, np.float32)[rows])


def _record(n: int, rows: np.ndarray, values: np.ndarray) -> dict:
    rec: dict[str, Any] = {"n": int(n)}
    if len(rows) < n:
        rec["rows"] = _rows_text(rows)
    rec["f32"] = pack_words(np.ascontiguousarray(values, "<f4").tobytes())
    return rec


def unpack(rec: Any, n: int, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows, values (m, width) float32) of a :func:`pack` record for ``n`` rows; None when it
    is missing or does not fit."""
    if not isinstance(rec, dict) or rec.get("n") != n:
        return None
    data = unpack_words(rec.get("f32"))
    if data is None or len(data) % (4 * width):
        return None
    m = len(data) // (4 * width)
    values = np.frombuffer(data, "<f4").reshape(m, width).astype(np.float32)
    if "rows" in rec:
        rows = from_steps(unpack_words(rec["rows"]), "<u4")
        if rows is None or len(rows) != m:
            return None
        if m and (rows[-1] >= n or (np.diff(rows) <= 0).any()):
            return None
    elif m == n:
        rows = np.arange(n)
    else:
        return None
    return rows, values


def pack_normals(orig: np.ndarray, naive: np.ndarray) -> dict | None:
    """:func:`pack` of normals (k, 3) float32 against ``naive`` (:func:`normal_naive`), second
    version: a file's normals not of unit length keep their length (``len``, float32) and each
    value's distance in float32 units from the unit normal the way back gives times that
    length (``d``, a rounding: 4 bits), with a check byte of the unit normal (``c``); rows as
    in :func:`pack`. The first version (the values) where a length or distance does not fit
    (not finite, or beyond int32), and in a scene read for an editor
    (:func:`retromesh.restore.editor_records`: Blender keeps normals in 16 bits)."""
    orig = np.asarray(orig, np.float32)
    return _normal_records(orig, np.asarray(naive, np.float32), np.array([0, len(orig)]))[0]


def normal_records(normals: list[np.ndarray]) -> list[dict | None]:
    """:func:`pack_normals` of each array of normals against :func:`normal_naive` of it, all
    in one numpy pass (a model has dozens of meshes: per mesh only slices are encoded)."""
    if not normals:
        return []
    cuts = np.array([0, *accumulate(len(n) for n in normals)], np.int64)
    allf = np.concatenate([np.asarray(n, np.float32).reshape(-1, 3) for n in normals])
    return _normal_records(allf, normal_naive(allf), cuts)


def _normal_records(allf: np.ndarray, naive: np.ndarray, cuts: np.ndarray) -> list[dict | None]:
    """:func:`pack_normals` of ``allf[cuts[k]:cuts[k + 1]]`` for each ``k``."""
    k_count = len(cuts) - 1
    rows = differing_rows(allf, naive)
    if rows is None or not len(rows):
        return [None] * k_count
    rcut_a = np.searchsorted(rows, cuts)
    rcut = rcut_a.tolist()
    sizes = (cuts[1:] - cuts[:-1]).tolist()
    if for_editor():
        return [_record(sizes[k], rows[rcut[k]:rcut[k + 1]] - cuts[k], allf[rows[rcut[k]:rcut[k + 1]]])
                if rcut[k] < rcut[k + 1] else None for k in range(k_count)]
    was, unit = allf[rows], naive[rows]
    with np.errstate(all="ignore"):
        length = np.sqrt(np.einsum("ij,ij->i", was.astype(np.float64), was.astype(np.float64))
                         ).astype(np.float32)
        dist = ordered(was) - ordered(_scaled(unit, length))
    bad = np.zeros(0, np.int64)
    if not np.isfinite(length).all() or np.abs(dist).max() >= 1 << 31:     # (seldom: test once)
        bad = np.flatnonzero(~np.isfinite(length) | (np.abs(dist).max(axis=1) >= 1 << 31))
    if len(bad):
        dist[bad] = 0
    if k_count == 1:        # (most models: one mesh with normals; pack_small, the same texts)
        row_texts = [restore.pack_small(_steps_from0(rows)) if len(rows) < sizes[0] else ""]
        dist_texts = [restore.pack_small(dist.reshape(-1))]
        return _normal_texts(sizes, rcut, rows, cuts, was, bad, length, unit, row_texts,
                             dist_texts)
    # (row steps only for the meshes that keep some of their rows: most keep all or none)
    per = np.diff(rcut_a)
    some = (per < np.diff(cuts)) & (per > 0)
    if some.any():
        row_texts, dist_texts = _small_texts(
            (_node_steps(rows, cuts)[np.repeat(some, per)],
             np.concatenate([[0], np.cumsum(np.where(some, per, 0))])),
            (dist.reshape(-1), 3 * rcut_a))
    else:
        row_texts, (dist_texts,) = [], _small_texts((dist.reshape(-1), 3 * rcut_a))
    return _normal_texts(sizes, rcut, rows, cuts, was, bad, length, unit, row_texts, dist_texts)


def _normal_texts(sizes: list[int], rcut: list[int], rows: np.ndarray, cuts: np.ndarray,
                  was: np.ndarray, bad: np.ndarray, length: np.ndarray, unit: np.ndarray,
                  row_texts: list[str], dist_texts: list[str]) -> list[dict | None]:
    """:func:`_normal_records`' records from its packed texts (``row_texts[k]`` is read only
    for a mesh that keeps some of its rows)."""
    k_count = len(sizes)
    checks = check_bytes(unit).tobytes()
    lengths = length.astype("<f4").tobytes()
    out: list[dict | None] = []
    for k in range(k_count):
        a, b = rcut[k], rcut[k + 1]
        if a == b:
            out.append(None)
        elif len(bad) and np.any((bad >= a) & (bad < b)):
            out.append(_record(sizes[k], rows[a:b] - cuts[k], was[a:b]))
        else:
            rec: dict[str, Any] = {"n": sizes[k]}
            if b - a < sizes[k]:
                rec["rows"] = row_texts[k]
            rec["len"] = pack_words(lengths[4 * a:4 * b])
            rec["d"] = dist_texts[k]
            rec["c"] = pack_raw(checks[a:b])
            out.append(rec)
    return out


def _scaled(unit: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Unit rows times their length in float32, +0.0 for a length of 0 (whatever the sign of
    the unit normal, which glTF computed)."""
    out = (unit.astype(np.float64) * length[:, None]).astype(np.float32)
    out[length == 0] = 0.0
    return out


def _restore_normals(out: np.ndarray, rec: dict, tol: float) -> None:
    """:func:`restore_rows` of a :func:`pack_normals` record of the second version: rows whose
    written normal has the check byte (and gives it again), and zero normals (glTF computed
    one: any normal), as read."""
    restore_normals([(out, rec)])


def _normal_parts(out: np.ndarray, rec: dict) -> tuple[np.ndarray, bytes, np.ndarray, bytes] | None:
    """(rows, lengths, distances, check bytes) of a second-version normals record for ``out``,
    None when it does not fit."""
    n = len(out)
    length_raw, dist, checks = unpack_words(rec.get("len")), unpack_small(rec.get("d")), \
        unpack_raw(rec.get("c"))
    if "rows" in rec:
        steps_ = unpack_small(rec["rows"])
        rows = None if steps_ is None or (steps_[1:] <= 0).any() or (len(steps_) and steps_[0] < 0) \
            else np.cumsum(steps_)
    else:
        rows = np.arange(n)
    if rows is None or length_raw is None or dist is None or checks is None or \
            len(length_raw) != 4 * len(rows) or len(dist) != 3 * len(rows) or \
            len(checks) != len(rows) or (len(rows) and rows[-1] >= n) or out.shape[1:] != (3,):
        return None
    return rows, length_raw, dist, checks


def restore_normals(items: list[tuple[np.ndarray, dict]]) -> None:
    """:func:`_restore_normals` of each (normals written, record), in place, the values of all
    in one numpy pass (a model has dozens of meshes: per mesh only its record is decoded)."""
    parts = [(out, got) for out, rec in items if (got := _normal_parts(out, rec)) is not None]
    if not parts:
        return
    now = np.concatenate([np.asarray(out[got[0]], np.float32) for out, got in parts])
    length = np.frombuffer(b"".join([got[1] for _, got in parts]), "<f4")
    dist = np.concatenate([got[2] for _, got in parts]).reshape(-1, 3)
    checks = np.frombuffer(b"".join([got[3] for _, got in parts]), np.uint8)
    with np.errstate(all="ignore"):
        was = unordered(ordered(_scaled(now, length)) + dist)
        ok = (check_bytes(now) == checks) & (bits(normal_naive(was)) == bits(now)).all(axis=1)
    ok |= length == 0
    at = 0
    for out, (rows, *_) in parts:
        k = slice(at, at + len(rows))
        out[rows[ok[k]]] = was[k][ok[k]]
        at += len(rows)


def restore_rows(out: np.ndarray, expect_of, got: np.ndarray, rec: Any, tol: float,
                 degenerate: bool = False) -> None:
    """Where a kept row still gives what the scene holds (``expect_of(kept)`` against ``got``,
    both (m, c) in the scene's terms), write the kept file value into ``out`` (in place);
    ``degenerate``: kept rows of zero length match anything (normals glTF had to compute)."""
    if degenerate and isinstance(rec, dict) and "len" in rec:
        _restore_normals(out, rec, tol)
        return
    got_rows = unpack(rec, len(out), out.shape[1])
    if got_rows is None:
        return
    rows, kept = got_rows
    if not len(rows):
        return
    also = None
    if degenerate:
        # a zero or non-finite normal: glTF got one computed from the faces (any unit normal)
        sq = np.einsum("ij,ij->i", kept.astype(np.float64), kept.astype(np.float64))
        also = ~((sq > 1e-24) & np.isfinite(sq))
    put_back(out, rows, kept, got[rows], expect_of, tol, also=also)


def normal_naive(normals: np.ndarray) -> np.ndarray:
    """B3D normals as the plain way back gives them: through glTF's unit normals."""
    return unit_rows(normals * Z32) * Z32


# -- KEYS rotations -----------------------------------------------------------------------------

def rotation_naive(wxyz: np.ndarray) -> np.ndarray:
    """B3D key rotations as the plain way back gives them (unit in glTF, float32 twice)."""
    return _naive_of(rot_to_gltf(np.asarray(wxyz, np.float64)).astype(np.float32))


def _naive_of(g: np.ndarray) -> np.ndarray:
    """:func:`rotation_naive` of the keys whose glTF rotations (float32, as written, before
    the glTF writer makes them unit) are ``g``."""
    # (rot_from_gltf in float32: its reordering and sign are exact either way)
    u = unit_rows(g, fallback=(0.0, 0.0, 0.0, 1.0))
    out = np.empty_like(u)                  # (C order: the record compares and gathers rows)
    out[:, 0] = u[:, 3]
    out[:, 1:3] = u[:, 0:2]
    np.negative(u[:, 2], out=out[:, 3])
    return out


def _node_rotations(nodes: list[list[Keys]]) -> tuple[np.ndarray, np.ndarray]:
    """Every node's rotation keys, chunk after chunk, node after node (m, 4) float32, and where
    each node's start (len(nodes) + 1)."""
    rot = [c.keys["rotation"] for chunks in nodes for c in chunks if c.flags & 4]
    counts = [sum(len(c.keys) for c in chunks if c.flags & 4) for chunks in nodes]
    q = np.concatenate(rot) if rot else np.zeros((0, 4), np.float32)
    return q, np.array([0, *accumulate(counts)], np.int64)


def _node_steps(rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Increasing rows of all nodes (node ``k``'s from ``starts[k]``) as their steps within
    each node, each node's first from 0 (int64)."""
    node_of = np.searchsorted(starts, rows, side="right") - 1
    first = np.ones(len(rows), bool)
    first[1:] = node_of[1:] != node_of[:-1]
    v = rows - starts[node_of]
    d = v.copy()
    d[1:] -= v[:-1]
    d[first] = v[first]
    return d


#: :func:`_small_texts` packs up to this many slices one by one
_FEW_SLICES = 4


def _small_texts(*parts: tuple[np.ndarray, np.ndarray]) -> list[list[str]]:
    """:func:`retromesh.restore.pack_small_slices` of each (values, cuts) in ``parts`` (each
    ``cuts`` from 0 to its values' end), all in one call: its fixed numpy cost, not its work,
    is what a model of a few dozen nodes pays; a few slices in all (a model's one or two
    meshes) are packed one by one (:func:`retromesh.restore.pack_small`, the same texts), which
    costs less than that fixed cost."""
    values = [np.asarray(v, np.int64).reshape(-1) for v, _ in parts]
    if sum(len(c) - 1 for _, c in parts) <= _FEW_SLICES:
        return [[restore.pack_small(v[a:b]) for a, b in zip(cl[:-1], cl[1:])]
                for v, cl in ((v, np.asarray(c).tolist()) for v, (_, c) in zip(values, parts))]
    at, cuts, counts = 0, [], []
    for v, (_, c) in zip(values, parts):
        cuts.append(np.asarray(c, np.int64)[:-1] + at)
        counts.append(len(c) - 1)
        at += len(v)
    cuts.append(np.array([at], np.int64))
    texts = pack_small_slices(np.concatenate(values), np.concatenate(cuts))
    out, k = [], 0
    for n in counts:
        out.append(texts[k:k + n])
        k += n
    return out


def keys_records(nodes: list[list[Keys]], flips: np.ndarray,
                 known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                 ) -> list[list | None]:
    """Per node (its KEYS chunks; ``flips``: which of all their keys, chunk after chunk, node
    after node, to_scene flipped): ``[flipped rows or None, record or None]`` over its
    rotation keys one after another, or None when nothing is to be kept; every node in one
    numpy pass (a mob has hundreds of small KEYS chunks: per node only arrays are sliced).

    A record (version 2) holds the rows the plain way back does not give bit for bit (their
    steps, ``rows``, left out when all differ), each value's distance in float32 units from
    the one the way back gives (``d``: a rounding of the normalisation, one byte a value) and
    a check byte of that value (``c``): the writer's value with the check gives the file's.
    Rows, flips and distances are :func:`retromesh.restore.pack_small` texts; a node whose
    distances do not fit in int32 (a value glTF had to replace), and every node of a scene read
    for an editor (:func:`retromesh.restore.editor_records`), keeps its values (``f32``, the
    first version, which :func:`restore_keys` also reads).

    ``known``: what to_scene already has of these keys, (place of each among all keys of the
    nodes' chunks, its file rotation, its glTF rotation in float32 before the writer makes it
    unit), in any order: used instead of gathering and converting the keys again."""
    is_rot = np.repeat(np.array([bool(c.flags & 4) for chunks in nodes for c in chunks], bool),
                       [len(c.keys) for chunks in nodes for c in chunks])
    flipped = np.flatnonzero(flips[is_rot])
    if known is None:
        q, starts = _node_rotations(nodes)
        return _keys_records(len(nodes), flipped, q, rotation_naive(q), starts)
    origin, file_q, gltf_q = known
    at = (np.cumsum(is_rot) - 1)[origin]        # each key's place among the rotation keys
    return keys_records_at(nodes, at, None, file_q, gltf_q, flipped)


def keys_records_at(nodes: list[list[Keys]], at: np.ndarray, flipped: np.ndarray | None,
                    file_q: np.ndarray, gltf_q: np.ndarray,
                    flipped_rows: np.ndarray | None = None) -> list[list | None]:
    """:func:`keys_records` (the same records) of keys to_scene has gathered: ``at``, each
    key's place among the rotation keys of ``nodes``' chunks (chunk after chunk, node after
    node), in any order; ``flipped``, which of them to_scene flipped (or ``flipped_rows``,
    those places, increasing); their file rotations and their glTF rotations in float32
    before the writer makes them unit."""
    q, naive = np.empty_like(file_q), np.empty_like(gltf_q)
    q[at], naive[at] = file_q, _naive_of(gltf_q)
    if flipped_rows is None:
        assert flipped is not None
        flipped_rows = np.sort(at[flipped])
    starts = np.array([0, *accumulate(sum(len(c.keys) for c in chunks if c.flags & 4)
                                      for chunks in nodes)], np.int64)
    return _keys_records(len(nodes), flipped_rows, q, naive, starts)


def differing_rows4(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rows (increasing) of (n, 4) float32 ``a`` whose bits ``b`` does not give: a row's
    four tests read as one word (numpy's ``any(axis=1)`` over 4 columns cost 3x the rest)."""
    ne = np.ascontiguousarray(a, np.float32).view(np.int32) != \
        np.ascontiguousarray(b, np.float32).view(np.int32)
    return np.flatnonzero(ne.view(np.uint32))


def order32(a: np.ndarray) -> np.ndarray:
    """:func:`retromesh.restore.ordered` of float32 ``a`` as int32 (which holds it): the sign
    bit kept and, below zero, the other bits flipped (``-1 - magnitude``), in two steps."""
    b = np.ascontiguousarray(a, np.float32).view(np.int32)
    return b ^ ((b >> 31) & 0x7FFFFFFF)


def _keys_records(n_nodes: int, flipped: np.ndarray, q: np.ndarray, naive: np.ndarray,
                  starts: np.ndarray) -> list[list | None]:
    """:func:`keys_records` of the nodes' rotation keys one after another (node ``k``'s from
    ``starts[k]``): ``flipped``, the flipped ones (increasing), ``q`` the file's values,
    ``naive`` the plain way back's."""
    # the rows whose bits differ are those whose float32 order differs (a bijection of the bits)
    gap = order32(q).astype(np.int64) - order32(naive)
    rows = np.flatnonzero(gap.any(axis=1))
    cut_a = np.searchsorted(rows, starts)               # each node's rows: rows[cut[k]:cut[k+1]]
    fcut_a = np.searchsorted(flipped, starts)
    cut, fcut = cut_a.tolist(), fcut_a.tolist()
    dist = gap[rows]
    # (for an editor, every node keeps its values: the first version)
    wide = np.flatnonzero((np.abs(dist).max(axis=1, initial=0) >= 1 << 31) | for_editor())
    if len(wide):
        dist[wide] = 0
    # every node's texts made together (a mob has hundreds of nodes: per node only slices)
    row_texts, flip_texts, dist_texts = _small_texts(
        (_node_steps(rows, starts), cut_a), (_node_steps(flipped, starts), fcut_a),
        (dist.reshape(-1), 4 * cut_a))
    checks = check_bytes(naive[rows]).tobytes()
    sizes = (starts[1:] - starts[:-1]).tolist()
    out: list[list | None] = []
    for k in range(n_nodes):
        a, b, fa, fb = cut[k], cut[k + 1], fcut[k], fcut[k + 1]
        if a == b and fa == fb:
            out.append(None)
            continue
        rec: dict[str, Any] | None = None
        if a < b and len(wide) and np.any((wide >= a) & (wide < b)):
            rec = _record(sizes[k], rows[a:b] - starts[k], q[rows[a:b]])
        elif a < b:
            rec = {"n": sizes[k]}
            if b - a < sizes[k]:
                rec["rows"] = row_texts[k]
            rec["d"] = dist_texts[k]
            rec["c"] = pack_raw(checks[a:b])
        out.append([flip_texts[k] if fb > fa else None, rec])
    return out


def _steps_of(text: Any) -> np.ndarray | None:
    """Increasing row numbers of a flips or rows text, either version."""
    small = unpack_small(text)
    if small is not None:
        return np.cumsum(small) if (small[1:] > 0).all() and (len(small) == 0 or small[0] >= 0) \
            else None
    return from_steps(unpack_words(text), "<u4")


def _kept_v2(kept: dict, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(rows, distances (m, 4), check bytes) of a version 2 key record for ``n`` keys."""
    dist = unpack_small(kept.get("d"))
    checks = unpack_raw(kept.get("c"))
    rows = _steps_of(kept["rows"]) if "rows" in kept else np.arange(n)
    if dist is None or checks is None or rows is None or len(dist) != 4 * len(rows) or \
            len(checks) != len(rows) or (len(rows) and rows[-1] >= n):
        return None
    return rows, dist.reshape(-1, 4), np.frombuffer(checks, np.uint8)


def _put_back_v2(q: np.ndarray, rows: np.ndarray, dist: np.ndarray, checks: np.ndarray,
                 check=check_bytes) -> None:
    """The file's keys where the writer's key (either sign) has the check byte (``check``) of
    the one the plain way back gives and the value it makes gives that key again; in place."""
    done = np.zeros(len(rows), bool)
    for sign in (1.0, -1.0):
        if done.all():
            break
        now = np.float32(sign) * q[rows]
        sel = np.flatnonzero((check(now) == checks) & ~done)
        if not len(sel):
            continue
        with np.errstate(all="ignore"):
            cand = unordered(ordered(now[sel]) + dist[sel])
            good = (bits(rotation_naive(cand)) == bits(now[sel])).all(axis=1)
        q[rows[sel[good]]] = cand[good]
        done[sel[good]] = True


def restore_keys(nodes: list[list[Keys]], recs: list, tol: float) -> None:
    """The kept rotation signs and bits back into the KEYS chunks written for the nodes (in
    place), each node's while it has the number of rotation keys it had; all in one pass."""
    q, starts = _node_rotations(nodes)
    flips: list[np.ndarray] = []
    rows_all: list[np.ndarray] = []
    vals_all: list[bytes] = []
    v2: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for k, rec in enumerate(recs):
        n = int(starts[k + 1] - starts[k])
        if not (isinstance(rec, list) and len(rec) == 2):
            continue
        flipped, kept = rec
        if kept is not None and not (isinstance(kept, dict) and kept.get("n") == n):
            continue
        rows = _steps_of(flipped)
        if rows is not None and len(rows) and rows[-1] < n:
            flips.append(rows + starts[k])
        if isinstance(kept, dict) and "d" in kept:
            got2 = _kept_v2(kept, n)
            if got2 is not None:
                v2.append((got2[0] + starts[k], got2[1], got2[2]))
            continue
        got = unpack(kept, n, 4) if kept is not None else None
        if got is not None:
            rows_all.append(got[0] + starts[k])
            vals_all.append(got[1].tobytes())
    if flips:
        q[np.concatenate(flips)] *= -1
    if rows_all:
        rows = np.concatenate(rows_all)
        vals = np.frombuffer(b"".join(vals_all), np.float32).reshape(-1, 4)
        put_back(q, rows, vals, q[rows], rotation_naive, tol, either_sign=True)
    if v2:
        _put_back_v2(q, np.concatenate([r for r, _, _ in v2]),
                     np.concatenate([d for _, d, _ in v2]), np.concatenate([c for _, _, c in v2]))
    if not flips and not rows_all and not v2:
        return
    at = 0
    for chunks in nodes:
        for c in chunks:
            if c.flags & 4:
                c.keys["rotation"] = q[at:at + len(c.keys)]
                at += len(c.keys)


# -- KEYS rotations, one record per model --------------------------------------------------------

#: the scene extras key of :func:`keys_scene_record` (GLBs written before hold ``kexact`` per node)
KEYS_SCENE_KEY = "b3d_kexact"


#: :func:`check8`'s weights of a row's four words
_CHECK8 = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                    0x27D4EB2F165667C5], np.uint64)


def check8(rows: np.ndarray) -> np.ndarray:
    """A check byte per row of four float32 (a key rotation): the top byte of a weighted sum
    of their bits, mixed (cheaper than :func:`retromesh.restore.check_bytes`, which hashes
    word by word; an edited row changes it with probability about 255/256)."""
    h = np.ascontiguousarray(rows, np.float32).view(np.uint32).astype(np.uint64) @ _CHECK8
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x9E3779B97F4A7C15)
    return (h >> np.uint64(56)).astype(np.uint8)


def _steps_from0(v: np.ndarray) -> np.ndarray:
    """Integers as their steps, the first from 0 (int64)."""
    d = np.asarray(v, np.int64).copy()
    d[1:] -= d[:-1].copy()
    return d


def keys_scene_record(nodes: np.ndarray, counts: np.ndarray, q: np.ndarray, gltf_q: np.ndarray,
                      flipped: np.ndarray) -> dict[str, str] | None:
    """The rotation keys of every animated node of a model in one record (scene extras
    :data:`KEYS_SCENE_KEY`), made in a handful of numpy passes whatever the number of nodes and
    animations (per node records cost a fixed numpy and JSON price each, which a mob's dozens
    of nodes multiplied): ``nodes`` (scene node indices) own ``counts`` rotation keys each, one
    node's after the other's; ``q`` their file rotations, ``gltf_q`` their glTF rotations in
    float32 before the glTF writer makes them unit, ``flipped`` the keys to_scene flipped
    (increasing). None when nothing is to be kept.

    The record holds the nodes and their key counts (``nodes``: the node indices' steps, then
    the counts), the keys flipped (``f``), the keys the plain way back does not give bit for
    bit (``rows``, left out when all differ) with each value's distance in float32 units from
    the one the way back gives (``d``) and a check byte of that value (``c``, :func:`check8`),
    as version 2 of the per-node record does; keys whose distance does not fit in int32 (a value glTF had to
    replace) keep their values instead (``w``: which of the rows, ``wf``: float32). Rows and
    flips count over all the record's keys, one node after the other. Every integer list is a
    :func:`retromesh.restore.pack_small` text."""
    naive = _naive_of(gltf_q)
    rows = differing_rows4(q, naive)
    if not len(rows) and not len(flipped):
        return None
    keep: Any = counts > 0
    if keep.all():
        keep = slice(None)
    at = naive[rows]
    dist = order32(q[rows]).astype(np.int64)
    dist -= order32(at)
    wide: np.ndarray = np.zeros(0, np.int64)
    if len(rows) and (dist.min() < -(1 << 31) + 1 or dist.max() >= 1 << 31):
        wide = np.flatnonzero(np.abs(dist).max(axis=1) >= 1 << 31)
        dist[wide] = 0
    rec = {"nodes": restore.pack_small(np.concatenate([_steps_from0(nodes[keep]), counts[keep]])),
           "f": restore.pack_small(_steps_from0(flipped)), "d": restore.pack_small(dist),
           "c": pack_raw(check8(at).tobytes())}
    if len(rows) < len(q):
        rec["rows"] = restore.pack_small(_steps_from0(rows))
    if len(wide):
        rec["w"] = restore.pack_small(_steps_from0(wide))
        rec["wf"] = pack_words(np.ascontiguousarray(q[rows[wide]], np.float32).tobytes())
    return rec


def _increasing(text: Any, end: int) -> np.ndarray | None:
    """Increasing integers below ``end`` from the steps ``text`` holds, else None."""
    small = unpack_small(text)
    if small is None or (len(small) and (small[0] < 0 or (small[1:] <= 0).any())):
        return None
    v = np.cumsum(small)
    return v if not len(v) or v[-1] < end else None


def _scene_keys_parts(rec: dict) -> tuple | None:
    """(nodes, counts, flips, rows, distances (m, 4), check bytes, wide, their values) of a
    :func:`keys_scene_record`, None when it is not one."""
    both = unpack_small(rec.get("nodes"))
    if both is None or len(both) % 2 or (both[len(both) // 2:] < 0).any():
        return None
    nodes, counts = np.cumsum(both[:len(both) // 2]), both[len(both) // 2:]
    total = int(counts.sum())
    flips = _increasing(rec.get("f"), total)
    rows = _increasing(rec["rows"], total) if "rows" in rec else np.arange(total)
    dist, checks = unpack_small(rec.get("d")), unpack_raw(rec.get("c"))
    if flips is None or rows is None or dist is None or checks is None or \
            len(dist) != 4 * len(rows) or len(checks) != len(rows):
        return None
    wide: np.ndarray | None = np.zeros(0, np.int64)
    vals = np.zeros((0, 4), np.float32)
    if "w" in rec:
        wide, raw = _increasing(rec.get("w"), len(rows)), unpack_words(rec.get("wf"))
        if wide is None or raw is None or len(raw) != 16 * len(wide):
            return None
        vals = np.frombuffer(raw, np.float32).reshape(-1, 4)
    return (nodes, counts, flips, rows, dist.reshape(-1, 4), np.frombuffer(checks, np.uint8),
            wide, vals)


def restore_keys_scene(written: dict[int, list[Keys]], rec: Any, tol: float) -> None:
    """The rotation signs and bits a :func:`keys_scene_record` kept back into the KEYS chunks
    written for each node (``written``: scene node index -> its chunks; in place), each node's
    while it has the number of rotation keys it had."""
    parts = _scene_keys_parts(rec) if isinstance(rec, dict) else None
    if parts is None:
        return
    nodes, counts, flips, rows, dist, checks, wide, vals = parts
    pieces: list[np.ndarray] = []
    ok = np.zeros(len(nodes), bool)
    for k, (node, n) in enumerate(zip(nodes.tolist(), counts.tolist())):
        rot = [c.keys["rotation"] for c in written.get(node, ()) if c.flags & 4]
        if sum(len(r) for r in rot) == n:
            ok[k] = True
            pieces.extend(rot)
        else:
            pieces.append(np.zeros((n, 4), np.float32))
    if not ok.any():
        return
    q = np.concatenate(pieces).astype(np.float32) if pieces else np.zeros((0, 4), np.float32)
    good = np.repeat(ok, counts)
    flips = flips[good[flips]]
    q[flips] *= -1
    plain = np.ones(len(rows), bool)
    plain[wide] = False
    plain &= good[rows]
    _put_back_v2(q, rows[plain], dist[plain], checks[plain], check8)
    if len(wide):
        w = good[rows[wide]]
        at = rows[wide][w]
        put_back(q, at, vals[w], q[at], rotation_naive, tol, either_sign=True)
    starts = np.concatenate([[0], np.cumsum(counts)]).tolist()
    for k in np.flatnonzero(ok).tolist():
        at = starts[k]
        for c in written[int(nodes[k])]:
            if c.flags & 4:
                c.keys["rotation"] = q[at:at + len(c.keys)]
                at += len(c.keys)
