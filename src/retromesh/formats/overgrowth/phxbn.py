"""Overgrowth ``.phxbn`` skeletons (Phoenix engine), little-endian, versions 5..11.

Layout (Overgrowth's ``SkeletonAsset`` loader, ``Source/Asset/Asset/skeletonasset.cpp``):

=======================  ============  ===================================================
field                    versions      type
=======================  ============  ===================================================
version                  >= 6          int32 (a first int32 < 6 is the rigging stage of v5)
rigging_stage            all           int32 (-1 nothing, 0 create_bones, 1 control_joints,
                                       2 animate = treated as 1, 3 pose_weights)
points                   all           int32 n; float32[3] x n
point_parents            >= 8          int32[n]
bones                    all           int32 m; int32[2] x m (point ids of both ends)
bone_parents             >= 8          int32[m]
bone_masses              >= 6          float32[m]
bone_com                 >= 7          float32[3] x m (else the midpoints, not stored)
bone_mats                >= 9          float32[16] x m (64 bytes each; ignored by the engine)
-- when rigging_stage is 1 or 2 (control joints):
num_vertices             >= 11         int32 N (3 x the OBJ's triangles)
vertex weights           all           float32[4] x N
vertex bone ids          all           float32[4] x N (integers stored as floats)
hier_parents             all           int32[m] (the hierarchy used for animation)
joints                   all           int32 k; per joint int32 type, then
                                       type 0 hinge: float32 stop[2], int32 bone[2], float32 axis[3]
                                       type 1 amotor: float32 stop[6], int32 bone[2]
                                       other (2 fixed): int32 bone[2]
-- version >= 10:
simple_ik_bones          >= 10         int32 c; {int32 bone_id, chain_length, len; char[len]} x c
=======================  ============  ===================================================

Native document: :class:`PhxbnFile`; fields a version lacks are ``None``. Bytes after the
end are kept as ``trailing``.

Where we differ from the spec text (the wiki table and 010 template), and why:

* ``bone_mats`` take 64 bytes per bone (16 floats), not 144 as the wiki table says.
* ``version`` is absent in v5 files: a first int32 below 6 is the rigging stage (as the
  engine reads it). A v5 document has ``version=5`` and writes no version field. A first
  int32 above 11 is rejected (no such version exists).
* Below version 11 the vertex count of the control-joint arrays is not in the file (the engine
  takes it from the OBJ; the template hard-codes 17502). We infer it from the bytes: the
  largest multiple of 3 for which the rest (hier_parents, joints, simple IK bones) parses to the
  exact end of the file, with finite weights and integral bone ids in range. A root's ``-1`` in
  ``hier_parents`` reads as a NaN float, so a larger count than the true one is rejected
  whenever one of the first 24 bones is a root (always so in practice). The bytes round-trip
  in every case; ``num_vertices`` stays ``None`` for those versions. Candidates are screened
  together (parents in range, joint count that fits) and only those whose joints and IK bones
  take at most ``TAIL_LIMIT`` (1 MiB) are parsed, so a large damaged file fails fast.
* ``rigging_stage`` 2 (animate) is kept as 2 on disk; it reads the control joints like 1.
* Joint types other than 0/1 carry only the two bone ids (the template's size function).
* The engine's X-symmetry check is not a parse error here; ``check`` reports it.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError, FormatError
from ...findings import Finding, error, warning
from ...records import record
from .common import need

__all__ = ["PhxbnFile", "PhxControl", "PhxJoint", "PhxSimpleIk", "read", "write",
           "MIN_VERSION", "MAX_VERSION", "has_control", "vertex_count_problem", "VERTEX_COUNTS",
           "MISREAD_WEIGHTS", "NOT_SYMMETRICAL", "symmetry_problems"]

MIN_VERSION = 5
MAX_VERSION = 11
HINGE, AMOTOR, FIXED = 0, 1, 2
#: below v11, how far past hier_parents the joints and IK bones may reach (real ones: a few KB)
TAIL_LIMIT = 1 << 20


@record
class PhxJoint:
    type: int
    stops: tuple[float, ...] = ()                   # 2 (hinge), 6 (amotor) or none
    bones: tuple[int, ...] = (0, 0)                 # the two bones
    axis: tuple[float, ...] | None = None           # hinge only: x, y, z


@record
class PhxSimpleIk:
    bone: int
    chain_length: int
    name: bytes


@record
class PhxControl:
    weights: np.ndarray                 # (N, 4) <f4
    ids: np.ndarray                     # (N, 4) <f4 (integers as floats)
    hier_parents: np.ndarray            # (m,) <i4
    joints: list[PhxJoint] = field(default_factory=list)
    num_vertices: int | None = None     # v >= 11 (as stored)


@record
class PhxbnFile:
    version: int = MAX_VERSION
    rigging_stage: int = 1
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), "<f4"))
    point_parents: np.ndarray | None = None      # v >= 8
    bone_ends: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), "<i4"))
    bone_parents: np.ndarray | None = None       # v >= 8
    bone_masses: np.ndarray | None = None        # v >= 6
    bone_com: np.ndarray | None = None           # v >= 7, (m, 3)
    bone_mats: np.ndarray | None = None          # v >= 9, (m, 16)
    control: PhxControl | None = None            # rigging_stage 1 or 2
    simple_ik: list[PhxSimpleIk] | None = None   # v >= 10
    trailing: bytes = b""

    def parents(self) -> np.ndarray:
        """The bone hierarchy the engine animates with: hier_parents, else bone_parents."""
        m = len(self.bone_ends)
        if self.control is not None and len(self.control.hier_parents) == m:
            return np.asarray(self.control.hier_parents, dtype=np.int64)
        if self.bone_parents is not None and len(self.bone_parents) == m:
            return np.asarray(self.bone_parents, dtype=np.int64)
        return np.full(m, -1, dtype=np.int64)


def has_control(stage: int) -> bool:
    return stage in (1, 2)


def _read_joints(r: Reader) -> list[PhxJoint]:
    n = r.count("num_joints", 12)
    joints = []
    for i in range(n):
        with r.at(f"joints[{i}]"):
            t = r.i32("joint_type")
            stops: tuple = ()
            if t == AMOTOR:
                stops = r.floats(6, "amotor_stop_angle")
            elif t == HINGE:
                stops = r.floats(2, "hinge_stop_angle")
            bones = r.ints(2, "bone_id")
            axis = tuple(r.floats(3, "axis")) if t == HINGE else None
            joints.append(PhxJoint(t, tuple(stops), tuple(bones), axis))
    return joints


def _read_simple_ik(r: Reader) -> list[PhxSimpleIk]:
    n = r.count("simple_ik_bones", 12)
    out = []
    for i in range(n):
        with r.at(f"simple_ik_bones[{i}]"):
            bone = r.i32("bone_id")
            chain = r.i32("chain_length")
            start = r.pos
            ln = r.i32("name_length")
            if ln < 0:
                raise r.fail("name_length >= 0", ln, offset=start)
            out.append(PhxSimpleIk(bone, chain, r.raw(ln, "name")))
    return out


def _read_tail(r: Reader, version: int, m: int) -> tuple[np.ndarray, list[PhxJoint], list | None]:
    hier = r.records("<i4", m, "hier_parents")
    joints = _read_joints(r)
    ik = None
    if version >= 10:
        ik = _read_simple_ik(r)
    return hier, joints, ik


def _infer_vertices(r: Reader, version: int, m: int) -> int:
    """Below v11 the control-joint vertex count is not stored: find the N that parses."""
    start = r.pos
    left = r.end - start
    n_max = (left - 4 * m - 4) // 32
    n_top = n_max - n_max % 3 if n_max >= 0 else -1
    data = r.data
    # Cheap vectorised screen of every candidate before the exact parse: hier_parents must be
    # -1..m-1, num_joints >= 0 and the joints' smallest size must fit. The tail (joints and IK
    # bones) is searched within TAIL_LIMIT bytes, so that a large damaged file cannot make us
    # try every multiple of 3 (real tails take a few KB).
    n_low = max(0, (left - 4 * m - 8 - TAIL_LIMIT) // 32)
    cand = np.arange(n_top, n_low - 1, -3, dtype=np.int64) if n_top >= 0 else np.zeros(0, np.int64)
    if len(cand):
        words = np.frombuffer(data, "<i4", (r.end - start) // 4, start).astype(np.int64)
        ok = np.ones(len(cand), bool)
        if m:
            bad = np.concatenate([[0], np.cumsum((words < -1) | (words >= m))])
            ok &= bad[8 * cand + m] == bad[8 * cand]
        nj = words[np.minimum(8 * cand + m, len(words) - 1)]
        ok &= (8 * cand + m < len(words)) & (nj >= 0)
        ok &= left - 32 * cand - 4 * m - 4 >= 12 * nj
        cand = cand[ok]
    for n in cand.tolist():
        # the tail (hier_parents, joints, IK bones) must end exactly at the end of the file ...
        probe = Reader(data, file=r.file, endian="<")
        probe.pos, probe.end = start + 32 * n, r.end
        try:
            _read_tail(probe, version, m)
            fits = probe.pos == probe.end
        except FormatError:
            fits = False
        # ... and the bone ids before it must be whole numbers naming bones
        if fits and n:
            ids = np.frombuffer(data, "<f4", 4 * n, start + 16 * n)
            wts = np.frombuffer(data, "<f4", 4 * n, start)
            fits = bool(np.all(np.isfinite(wts)) and np.all(np.isfinite(ids))
                        and np.all(ids == np.round(ids)) and ids.min() >= 0 and ids.max() < max(m, 1))
        if fits:
            return n
    raise r.fail("control-joint vertex arrays followed by hier_parents, joints"
                 + (" and simple IK bones" if version >= 10 else "") + " up to the end of the file",
                 "no vertex count that fits", field="control")


def read(r: Reader) -> PhxbnFile:
    with r.at("header"):
        first = r.i32("version")
        if first > MAX_VERSION:
            raise r.fail(f"a .phxbn version in 6..{MAX_VERSION} (or a v5 rigging stage)", first,
                         offset=0, field="version")
        if first >= 6:
            version = first
            stage = r.i32("rigging_stage")
        else:
            version = 5
            stage = first
    doc = PhxbnFile(version=version, rigging_stage=stage)
    with r.at("points"):
        n = r.count("count", 12)
        doc.points = r.records(("<f4", (3,)), n, "points").reshape(n, 3)
        if version >= 8:
            doc.point_parents = r.records("<i4", n, "point_parents")
    with r.at("bones"):
        m = r.count("count", 8)
        doc.bone_ends = r.records(("<i4", (2,)), m, "bone_ends").reshape(m, 2)
        if version >= 8:
            doc.bone_parents = r.records("<i4", m, "bone_parents")
        if version >= 6:
            doc.bone_masses = r.records("<f4", m, "bone_masses")
        if version >= 7:
            doc.bone_com = r.records(("<f4", (3,)), m, "bone_com").reshape(m, 3)
        if version >= 9:
            doc.bone_mats = r.records(("<f4", (16,)), m, "bone_mats").reshape(m, 16)
    if has_control(stage):
        with r.at("control_joints"):
            if version >= 11:
                nv = r.count("num_vertices", 32)
                stored: int | None = nv
            else:
                nv = _infer_vertices(r, version, m)
                stored = None
            weights = r.records(("<f4", (4,)), nv, "bone_weights").reshape(nv, 4)
            ids = r.records(("<f4", (4,)), nv, "bone_ids").reshape(nv, 4)
            hier = r.records("<i4", m, "hier_parents")
            joints = _read_joints(r)
            doc.control = PhxControl(weights, ids, hier, joints, stored)
    if version >= 10:
        doc.simple_ik = _read_simple_ik(r)
    doc.trailing = r.rest()
    return doc


def _need(value: Any, present: bool, what: str, version: int) -> None:
    need(value, present, what, f".phxbn version {version}")


def _arr(value, dtype, shape_tail: tuple, n: int | None, what: str) -> np.ndarray:
    a = as_dtype(value, dtype, what)
    if a.shape[1:] != shape_tail or (n is not None and len(a) != n):
        raise DocumentError(f"{what} must have shape ({n if n is not None else 'n'}"
                            f"{''.join(', ' + str(s) for s in shape_tail)}), got {a.shape}")
    return a


def write(doc: PhxbnFile) -> bytes:
    v = int(doc.version)
    if not MIN_VERSION <= v <= MAX_VERSION:
        raise DocumentError(f".phxbn version must be {MIN_VERSION}..{MAX_VERSION}, got {v}")
    if v == 5 and not doc.rigging_stage < 6:
        raise DocumentError("a version 5 .phxbn starts with its rigging stage, which must be < 6")
    points = _arr(doc.points, "<f4", (3,), None, "points")
    n = len(points)
    ends = _arr(doc.bone_ends, "<i4", (2,), None, "bone_ends")
    m = len(ends)
    _need(doc.point_parents, v >= 8, "point_parents", v)
    _need(doc.bone_parents, v >= 8, "bone_parents", v)
    _need(doc.bone_masses, v >= 6, "bone_masses", v)
    _need(doc.bone_com, v >= 7, "bone_com", v)
    _need(doc.bone_mats, v >= 9, "bone_mats", v)
    _need(doc.control, has_control(doc.rigging_stage), "control joints (rigging_stage 1 or 2)", v)
    _need(doc.simple_ik, v >= 10, "simple_ik", v)
    w = Writer("<")
    if v >= 6:
        w.i32(v)
    w.i32(int(doc.rigging_stage))
    w.i32(n)
    w.records(points)
    if v >= 8:
        w.records(_arr(doc.point_parents, "<i4", (), n, "point_parents"))
    w.i32(m)
    w.records(ends)
    if v >= 8:
        w.records(_arr(doc.bone_parents, "<i4", (), m, "bone_parents"))
    if v >= 6:
        w.records(_arr(doc.bone_masses, "<f4", (), m, "bone_masses"))
    if v >= 7:
        w.records(_arr(doc.bone_com, "<f4", (3,), m, "bone_com"))
    if v >= 9:
        w.records(_arr(doc.bone_mats, "<f4", (16,), m, "bone_mats"))
    c = doc.control
    if c is not None:
        wts = _arr(c.weights, "<f4", (4,), None, "control.weights")
        nv = len(wts)
        ids = _arr(c.ids, "<f4", (4,), nv, "control.ids")
        if v >= 11:
            w.i32(nv if c.num_vertices is None else int(c.num_vertices))
        elif c.num_vertices is not None:
            raise DocumentError(f".phxbn version {v} does not store num_vertices (set it to None)")
        w.records(wts)
        w.records(ids)
        w.records(_arr(c.hier_parents, "<i4", (), m, "control.hier_parents"))
        w.i32(len(c.joints))
        for j in c.joints:
            w.i32(int(j.type))
            want = 6 if j.type == AMOTOR else 2 if j.type == HINGE else 0
            if len(j.stops) != want:
                raise DocumentError(f"a joint of type {j.type} holds {want} stop angles")
            if j.stops:
                w.floats(j.stops)
            w.ints(j.bones)
            if j.type == HINGE:
                if j.axis is None or len(j.axis) != 3:
                    raise DocumentError("a hinge joint needs an axis of 3 floats")
                w.floats(j.axis)
            elif j.axis is not None:
                raise DocumentError("only hinge joints have an axis")
    if v >= 10:
        assert doc.simple_ik is not None        # checked with the version above
        w.i32(len(doc.simple_ik))
        for ik in doc.simple_ik:
            w.i32(int(ik.bone))
            w.i32(int(ik.chain_length))
            w.pstring(bytes(ik.name), "i")
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def info(doc: PhxbnFile) -> dict:
    return {"version": doc.version, "rigging_stage": doc.rigging_stage,
            "points": len(doc.points), "bones": len(doc.bone_ends),
            "vertices": len(doc.control.weights) if doc.control is not None else 0,
            "joints": len(doc.control.joints) if doc.control is not None else 0,
            "simple_ik_bones": len(doc.simple_ik or [])}


#: the engine's symmetry tolerance: squared distance of both ends to a mirrored bone's ends
MIRROR_EPS = 1e-4


def symmetry_problems(doc: PhxbnFile) -> list[int]:
    """Bones with no X-mirrored counterpart (the engine refuses such skeletons): bone i is
    paired when some bone j (itself included) has ``|a_i - mirror(a_j)|^2 < 1e-4`` and
    ``|b_i - mirror(b_j)|^2 < 1e-4`` for its two ends a, b (the skeleton loader's test)."""
    p = np.asarray(doc.points, dtype=np.float64)
    e = np.asarray(doc.bone_ends, dtype=np.int64)
    if not len(e) or e.min() < 0 or e.max() >= len(p):
        return []
    # bones on the same ends share the answer (a degenerate skeleton has many)
    ends, inverse = np.unique(np.concatenate([p[e[:, 0]], p[e[:, 1]]], axis=1), axis=0,
                              return_inverse=True)
    mirrored = ends * np.array([-1.0, 1.0, 1.0, -1.0, 1.0, 1.0])
    # candidates: bones within the tolerance along the coordinate that sorts them apart best
    # (each coordinate of a pair differs by less than sqrt(eps)); then the full test
    r = np.sqrt(MIRROR_EPS)
    best = None
    for axis in range(6):
        order = np.argsort(mirrored[:, axis], kind="stable")
        keys = mirrored[order, axis]
        lo = np.searchsorted(keys, ends[:, axis] - r, "left")
        hi = np.searchsorted(keys, ends[:, axis] + r, "right")
        if best is None or (hi - lo).sum() < best[0]:
            best = (int((hi - lo).sum()), order, lo, hi)
    assert best is not None                     # six axes were tried
    _, order, lo, hi = best
    paired = np.zeros(len(ends), bool)
    # rows in blocks whose candidate pairs stay a few million
    counts = hi - lo
    start = 0
    while start < len(ends):
        stop = start + 1
        total = int(counts[start])
        while stop < len(ends) and total + counts[stop] <= (1 << 21):
            total += int(counts[stop])
            stop += 1
        rows = np.repeat(np.arange(start, stop), counts[start:stop])
        offs = np.arange(total) - np.repeat(np.cumsum(counts[start:stop]) - counts[start:stop],
                                            counts[start:stop])
        cols = order[np.repeat(lo[start:stop], counts[start:stop]) + offs]
        d = (ends[rows] - mirrored[cols]) ** 2
        near = (d[:, :3].sum(-1) < MIRROR_EPS) & (d[:, 3:].sum(-1) < MIRROR_EPS)
        paired[rows[near]] = True
        start = stop
    return [int(i) for i in np.nonzero(~paired[inverse.reshape(-1)])[0]]


#: the engine's words for the skeletons it refuses (the PHXBN loading-error table)
NOT_SYMMETRICAL = "PHXBN skeleton is not symmetrical."
VERTEX_COUNTS = "Skeleton file and model file have different vertex counts."
#: what an older skeleton gets instead (no count is stored to refuse it by)
MISREAD_WEIGHTS = ("The engine reads as many vertex weights as the OBJ has triangle corners and "
                   "misreads the rest of the skeleton.")


def vertex_count_problem(doc: PhxbnFile, corners: int) -> str | None:
    """The one rule for a skeleton's vertex weights against the model they skin: None when
    they fit, else the engine's words for what goes wrong.

    ``corners`` is the model's vertex count as the engine loads the OBJ: 3 per triangle
    (``precollapse_num_vertices``, before identical corners are merged). ``SkeletonAsset::Load``
    reads weights only with control joints (rigging stage 1 or 2; a skeleton without them has
    nothing to check); from version 11 it refuses a stored count other than ``corners``
    (:data:`VERTEX_COUNTS`, sub error 4); below 11 it reads ``corners`` weights whatever the
    file holds, so another count misreads everything after them (:data:`MISREAD_WEIGHTS`).
    A document whose stored count and weight rows disagree (made in code) fits no model."""
    ctl = doc.control
    if ctl is None:
        return None
    stored = ctl.num_vertices if ctl.num_vertices is not None else len(ctl.weights)
    if stored == corners and len(ctl.weights) == corners:
        return None
    return VERTEX_COUNTS if doc.version >= 11 else MISREAD_WEIGHTS


def check(doc: PhxbnFile) -> list[Finding]:
    out = []
    m, n = len(doc.bone_ends), len(doc.points)
    e = np.asarray(doc.bone_ends)
    if m and (e.min() < 0 or e.max() >= n):
        out.append(error("phxbn.bone_ends", f"bone ends refer to points out of 0..{n - 1}"))
    par = doc.parents()
    if m and (par.min() < -1 or par.max() >= m):
        out.append(error("phxbn.bone_parents", f"bone parents out of -1..{m - 1}"))
    if doc.control is not None:
        ids = np.asarray(doc.control.ids)
        if len(ids) and (ids.min() < 0 or ids.max() >= max(m, 1)):
            out.append(error("phxbn.vertex_bone_ids", f"vertex bone ids out of 0..{m - 1}"))
        w = np.asarray(doc.control.weights, np.float64)
        light = int((w.sum(axis=1) < 0.99).sum()) if len(w) else 0
        if light:
            out.append(warning("phxbn.weight_sum", f"{light} vertices have weights that sum below "
                               "0.99: the engine makes their first influence the nearest bone, "
                               "at weight 1"))
    if doc.control is not None:
        joint_bones = np.asarray([j.bones for j in doc.control.joints], np.int64).reshape(-1)
        if joint_bones.size and (joint_bones.min() < 0 or joint_bones.max() >= m):
            out.append(error("phxbn.joint_bones", f"ragdoll joints name bones out of 0..{m - 1}"))
    ik = [b for b in doc.simple_ik or [] if not 0 <= b.bone < m]
    if ik:
        out.append(error("phxbn.ik_bone", f"simple IK bones {[b.name for b in ik][:4]} name "
                         f"bones out of 0..{m - 1}"))
    bad = symmetry_problems(doc)
    if bad:
        listed = ", ".join(f"bone {i}" for i in bad[:8]) + (", ..." if len(bad) > 8 else "")
        out.append(error("phxbn.symmetry", f"{NOT_SYMMETRICAL} Asymmetrical bones: {listed} "
                         "(no bone mirrored over X matches them)"))
    return out


def sniff(head: bytes) -> bool:
    if len(head) < 8:
        return False
    first = int.from_bytes(head[:4], "little", signed=True)
    return -1 <= first <= MAX_VERSION
