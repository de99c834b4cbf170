"""Lugaru skeletons (``Data/Skeleton/BasicFigure`` ...): joints and the muscles that own a
character model's vertices. Big-endian, no extension, no magic.

Layout (``Skeleton::Load``, ``Joint::load``, ``Muscle::load`` in osslugaru/lugaru; all 4 shipped
skeletons checked: ``BasicFigure``, ``BasicFigureLow``, ``BasicFigureWolf``, ``RabbitBelt``):

=============  ========================  ==================================================
offset         type                      field
=============  ========================  ==================================================
0              int32                     joint_count (J; the engine's limit is 50)
4              41 bytes x J              joints, :data:`JOINT_DTYPE`:
                                         float32 position[3], length, mass;
                                         uint8 hasparent, locked; int32 modelnum;
                                         uint8 visible, sametwist; int32 label (bodypart),
                                         hasgun; uint8 lower; int32 parent
...            int32                     muscle_count (M)
...            per muscle:               float32 length, targetlength, minlength, maxlength,
                                         strength; int32 type (0 boneconnect, 1 constraint,
                                         2 muscle); int32 vertex_count (N);
                                         int32 vertices[N]; uint8 visible;
                                         int32 parent1, parent2 (joint indices)
...            int32[3]                  forward_joints (the chest triangle)
...            int32[3]                  low_forward_joints (the hip triangle)
=============  ========================  ==================================================

The booleans are one byte each (``funpackf "Bb"``) and kept as the byte stored. Bytes after
``low_forward_joints`` (none in the shipped files) are kept in ``trailing``.

What the engine does with it (and ignores):

* The three files a character loads share joints and muscles; only the muscles' vertex lists
  differ: ``figure`` (``BasicFigure``) lists vertices of the seven body models
  (``Body.solid`` ... ``Body7.solid``), ``low figure`` (``BasicFigureLow``) of ``BodyLow.solid``,
  ``clothes`` (``RabbitBelt``) of ``Belt.solid``. Of the low and clothes files the engine reads
  only those vertex lists and skips the rest.
* A vertex belongs to the last muscle listing it (``model.owner[v] = muscle``); indices at or
  beyond the model's vertex count are dropped on load.
* ``mass``, ``locked``, ``modelnum``, ``visible``, ``hasgun``, ``length`` of joints and
  ``visible`` of muscles are read and mostly unused by drawing (the ragdoll uses ``mass`` and
  muscle lengths); they are kept all the same.
* ``label`` names the body part (0 head, 1 neck, 2 leftshoulder ... 19 rightfoot,
  :data:`BODYPARTS`); the engine finds joints by label, so every label 0..19 must be present.
"""
from __future__ import annotations

from dataclasses import field

import numpy as np

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record

__all__ = ["SkeletonFile", "JOINT_DTYPE", "MUSCLE_DTYPE", "BODYPARTS", "MAX_JOINTS", "read",
           "write", "info", "check", "sniff"]

JOINT_DTYPE = np.dtype([
    ("position", ">f4", (3,)), ("length", ">f4"), ("mass", ">f4"), ("hasparent", "u1"),
    ("locked", "u1"), ("modelnum", ">i4"), ("visible", "u1"), ("sametwist", "u1"),
    ("label", ">i4"), ("hasgun", ">i4"), ("lower", "u1"), ("parent", ">i4")])
_MUSCLE_HEAD = np.dtype([("length", ">f4"), ("targetlength", ">f4"), ("minlength", ">f4"),
                         ("maxlength", ">f4"), ("strength", ">f4"), ("type", ">i4"),
                         ("vertex_count", ">i4")])
_MUSCLE_TAIL = np.dtype([("visible", "u1"), ("parent1", ">i4"), ("parent2", ">i4")])
_HEAD_NAMES: tuple[str, ...] = _MUSCLE_HEAD.names or ()
_TAIL_NAMES: tuple[str, ...] = _MUSCLE_TAIL.names or ()
#: one muscle without its vertex list (the list is ``SkeletonFile.vertices[m]``)
MUSCLE_DTYPE = np.dtype([(n, _MUSCLE_HEAD[n]) for n in _HEAD_NAMES if n != "vertex_count"]
                        + [(n, _MUSCLE_TAIL[n]) for n in _TAIL_NAMES])
_MUSCLE_NAMES: tuple[str, ...] = MUSCLE_DTYPE.names or ()
#: ``bodypart`` labels of ``Joint.hpp``, in order
BODYPARTS = ("head", "neck", "leftshoulder", "leftelbow", "leftwrist", "lefthand",
             "rightshoulder", "rightelbow", "rightwrist", "righthand", "abdomen", "lefthip",
             "righthip", "groin", "leftknee", "leftankle", "leftfoot", "rightknee",
             "rightankle", "rightfoot")
MUSCLE_TYPES = ("boneconnect", "constraint", "muscle")
#: ``Skeleton::jointlabels[max_joints]``
MAX_JOINTS = 50
_MIN_MUSCLE = _MUSCLE_HEAD.itemsize + _MUSCLE_TAIL.itemsize


def _empty_vertices() -> list[np.ndarray]:
    return []


@record
class SkeletonFile:
    joints: np.ndarray = field(default_factory=lambda: np.zeros(0, JOINT_DTYPE))
    muscles: np.ndarray = field(default_factory=lambda: np.zeros(0, MUSCLE_DTYPE))
    #: per muscle, the model vertex indices it owns (``>i4``)
    vertices: list[np.ndarray] = field(default_factory=_empty_vertices)
    forward_joints: tuple[int, int, int] = (0, 0, 0)
    low_forward_joints: tuple[int, int, int] = (0, 0, 0)
    trailing: bytes = b""


def read(r: Reader) -> SkeletonFile:
    nj = r.count("joint_count", JOINT_DTYPE.itemsize)
    joints = r.records(JOINT_DTYPE, nj, "joints")
    nm = r.count("muscle_count", _MIN_MUSCLE)
    muscles = np.zeros(nm, MUSCLE_DTYPE)
    verts: list[np.ndarray] = []
    for m in range(nm):
        with r.at(f"muscles[{m}]"):
            head = r.records(_MUSCLE_HEAD, 1, "header")[0]
            n = int(head["vertex_count"])
            r.check_count(n, 4, "vertex_count")
            verts.append(r.records(">i4", n, "vertices"))
            tail = r.records(_MUSCLE_TAIL, 1, "parents")[0]
        for name in _MUSCLE_NAMES:
            muscles[m][name] = head[name] if name in _HEAD_NAMES else tail[name]
    with r.at("forward_joints"):
        fw = r.ints(3, "forward_joints")
    with r.at("low_forward_joints"):
        low = r.ints(3, "low_forward_joints")
    return SkeletonFile(joints, muscles, verts, (fw[0], fw[1], fw[2]), (low[0], low[1], low[2]),
                        r.rest())


def _as(arr: np.ndarray, dtype: np.dtype, what: str) -> np.ndarray:
    a = np.asarray(arr)
    if a.dtype != dtype:
        try:
            a = a.astype(dtype)
        except (TypeError, ValueError) as exc:
            raise DocumentError(f"SkeletonFile.{what} must be records of {dtype}") from exc
    if a.ndim != 1:
        raise DocumentError(f"SkeletonFile.{what} must be one-dimensional, got shape {a.shape}")
    return a


def write(doc: SkeletonFile) -> bytes:
    joints = _as(doc.joints, JOINT_DTYPE, "joints")
    muscles = _as(doc.muscles, MUSCLE_DTYPE, "muscles")
    if len(doc.vertices) != len(muscles):
        raise DocumentError(f"SkeletonFile has {len(muscles)} muscles but "
                            f"{len(doc.vertices)} vertex lists")
    w = Writer(">")
    w.i32(len(joints))
    w.records(joints, JOINT_DTYPE)
    w.i32(len(muscles))
    head = np.zeros(1, _MUSCLE_HEAD)
    tail = np.zeros(1, _MUSCLE_TAIL)
    for m, verts in zip(muscles, doc.vertices, strict=True):
        v = np.asarray(verts).reshape(-1)
        for name in _HEAD_NAMES[:-1]:
            head[0][name] = m[name]
        head[0]["vertex_count"] = len(v)
        w.records(head, _MUSCLE_HEAD)
        w.records(v, ">i4")
        for name in _TAIL_NAMES:
            tail[0][name] = m[name]
        w.records(tail, _MUSCLE_TAIL)
    for triple in (doc.forward_joints, doc.low_forward_joints):
        if len(triple) != 3:
            raise DocumentError("forward_joints and low_forward_joints hold 3 joint indices")
        w.ints(triple)
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def owners(doc: SkeletonFile, vertex_count: int) -> np.ndarray:
    """The muscle owning each of ``vertex_count`` model vertices, as ``Skeleton::Load``
    assigns them (the last muscle listing a vertex wins; indices out of range dropped);
    -1 for a vertex no muscle lists (the engine leaves its owner 0)."""
    own = np.full(vertex_count, -1, np.int64)
    for m, verts in enumerate(doc.vertices):
        v = np.asarray(verts, np.int64)
        v = v[(v >= 0) & (v < vertex_count)]
        own[v] = m
    return own


def info(doc: SkeletonFile) -> dict[str, object]:
    listed = sum(len(v) for v in doc.vertices)
    return {"joints": len(doc.joints), "muscles": len(doc.muscles),
            "muscles_with_vertices": sum(1 for v in doc.vertices if len(v)),
            "vertex_entries": listed,
            "highest_vertex": max((int(np.max(v)) for v in doc.vertices if len(v)), default=-1)}


def check(doc: SkeletonFile) -> list[Finding]:
    """The engine's rules (``Skeleton::Load``, ``Joint::load``, ``Muscle::load``)."""
    out: list[Finding] = []
    nj = len(doc.joints)
    j = doc.joints
    if nj > MAX_JOINTS:
        out.append(error("lugaru-skeleton.joint_count",
                         f"{nj} joints: Skeleton::jointlabels holds {MAX_JOINTS}"))
    bad = np.nonzero((j["hasparent"] != 0) & ((j["parent"] < 0) | (j["parent"] >= nj)))[0]
    for i in bad[:5]:
        out.append(error("lugaru-skeleton.parent",
                         f"joint {i} has a parent, joint {int(j['parent'][i])}, that does not exist"))
    m = doc.muscles
    for key in ("parent1", "parent2"):
        bad = np.nonzero((m[key] < 0) | (m[key] >= nj))[0]
        for i in bad[:5]:
            out.append(error("lugaru-skeleton.muscle_joint",
                             f"muscle {i} {key} is joint {int(m[key][i])}, which does not exist"))
    for name, triple in (("forward_joints", doc.forward_joints),
                         ("low_forward_joints", doc.low_forward_joints)):
        if any(not 0 <= int(k) < nj for k in triple):
            out.append(error("lugaru-skeleton.forward_joint",
                             f"{name} {tuple(triple)} names a joint that does not exist"))
    for i, v in enumerate(doc.vertices):
        if len(v) and int(np.min(v)) < 0:
            out.append(error("lugaru-skeleton.vertex",
                             f"muscle {i} lists vertex {int(np.min(v))}: the engine writes the "
                             "owner of a negative vertex outside the model"))
    labels = set(int(x) for x in j["label"])
    missing = [BODYPARTS[k] for k in range(len(BODYPARTS)) if k not in labels]
    if nj and missing:
        out.append(warning("lugaru-skeleton.label",
                           f"no joint labelled {', '.join(missing)}: the engine then uses joint 0"))
    odd = sorted(set(int(x) for x in m["type"]) - {0, 1, 2})
    if odd:
        out.append(warning("lugaru-skeleton.muscle_type",
                           f"muscle type(s) {odd}: the engine knows 0 boneconnect, 1 constraint, "
                           "2 muscle"))
    if doc.trailing:
        out.append(warning("lugaru-skeleton.trailing",
                           f"{len(doc.trailing)} bytes after low_forward_joints (ignored)"))
    return out


def sniff(head: bytes) -> bool:
    """A joint count 1..50 and, after the joints, a muscle count that fits."""
    if len(head) < 4:
        return False
    nj = int.from_bytes(head[:4], "big", signed=True)
    if not 0 < nj <= MAX_JOINTS:
        return False
    at = 4 + nj * JOINT_DTYPE.itemsize
    if len(head) < at + 4:
        return len(head) >= 4096          # cannot see further: the joint count is plausible
    nm = int.from_bytes(head[at:at + 4], "big", signed=True)
    return 0 <= nm < 10000

