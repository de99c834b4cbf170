"""Lost Saga ``.skl`` skeletons (io3DEngine ``ioSkeletonManager::LoadFile``).

=====================  ==============================================  ===============================
field                  type                                            meaning
=====================  ==============================================  ===============================
magic                  ``"SKL\\0"``
version                int32 (1000; not checked by the engine)
bone_count             int32
bones[i].name          str
bones[i] pose          float32 local_position[3], local_rotation[4]    rest pose relative to parent
                       (x, y, z, w), inverse_position[3],              "ObjectTM inverse" = inverse bind
                       inverse_rotation[4], object_tm[16]              bind world matrix (D3DX, rows)
bones[i].parent        str (empty = root)
bones[i].children      int32 count; str * count
linked_skeleton        str (empty = none)                              may be absent at end of file
trailing               whatever follows (kept)
=====================  ==============================================  ===============================

(``str`` = int32 length + raw bytes.) The 120 bytes of numbers per bone are kept for all bones in
one numpy record array (:data:`POSE_DTYPE`), the names in :class:`SklBone`.

Deviations from / additions to the spec text:

* The "ObjectTM inverse" pair IS the inverse bind matrix: the engine builds
  ``BipedSpaceTM = RotationQuaternion(q)`` with row 4 = position (D3DX row-vector form) and skins
  with ``BipedSpaceTM * World``. The 16-float ObjectTM is the bind world matrix, stored but only
  used for linked-skeleton offsets (the spec calls it "one-off"; it is simply not the local TM).
* A file ending right after the last bone (no linked-skeleton string) is accepted:
  ``linked_skeleton`` is then None and nothing is written for it.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record
from .common import SKELETON_TOKEN, SKELETON_VERSION, long_strings, magic, read_str, text, write_str

__all__ = ["SklFile", "SklBone", "POSE_DTYPE", "read", "write"]

POSE_DTYPE = np.dtype([
    ("local_position", "<f4", (3,)), ("local_rotation", "<f4", (4,)),
    ("inverse_position", "<f4", (3,)), ("inverse_rotation", "<f4", (4,)),
    ("object_tm", "<f4", (4, 4)),
])


@record
class SklBone:
    name: bytes = b""
    parent: bytes = b""
    children: list[bytes] = field(default_factory=list)


@record
class SklFile:
    version: int = SKELETON_VERSION
    bones: list[SklBone] = field(default_factory=list)
    #: one POSE_DTYPE record per bone, same order as ``bones``
    poses: np.ndarray = field(default_factory=lambda: np.zeros(0, POSE_DTYPE))
    linked_skeleton: bytes | None = b""
    trailing: bytes = b""

    def names(self) -> list[bytes]:
        return [b.name for b in self.bones]

    def cycle_bone(self) -> int | None:
        """A bone on a parent cycle, or None (linear time: a chain of 100,000 bones is fine)."""
        parents = self.parent_indices()
        state = [0] * len(parents)            # 0 unseen, 1 on the current walk, 2 done
        for i in range(len(parents)):
            walk = []
            j = i
            while j >= 0 and state[j] == 0:
                state[j] = 1
                walk.append(j)
                j = parents[j]
            if j >= 0 and state[j] == 1:
                return j
            for k in walk:
                state[k] = 2
        return None

    def parent_offset(self, i: int) -> int:
        """Byte offset of bone ``i``'s parent string in the file (for errors after parsing)."""
        off = 12
        for b in self.bones[:i]:
            off += 4 + len(b.name) + POSE_DTYPE.itemsize + 4 + len(b.parent) + 4
            off += sum(4 + len(c) for c in b.children)
        return off + 4 + len(self.bones[i].name) + POSE_DTYPE.itemsize

    def parent_indices(self) -> list[int]:
        """Parent index per bone by name (-1 = root or unknown parent; first bone of a name)."""
        index: dict[bytes, int] = {}
        for i, b in enumerate(self.bones):
            index.setdefault(b.name, i)
        return [index.get(b.parent, -1) if b.parent else -1 for b in self.bones]


def read(r: Reader) -> SklFile:
    magic(r, SKELETON_TOKEN, "skeleton")
    doc = SklFile(version=r.i32("version"))
    n = r.count("bone_count", 4 + POSE_DTYPE.itemsize + 8)
    poses = np.zeros(n, POSE_DTYPE)
    for i in range(n):
        with r.at(f"bones[{i}]"):
            name = read_str(r, "name")
            poses[i] = r.records(POSE_DTYPE, 1, "pose")[0]
            parent = read_str(r, "parent")
            nc = r.count("child_count", 4)
            children = []
            for j in range(nc):
                with r.at(f"children[{j}]"):
                    children.append(read_str(r, "child"))
            doc.bones.append(SklBone(name, parent, children))
    doc.poses = poses
    if r.remaining == 0:
        doc.linked_skeleton = None
    else:
        doc.linked_skeleton = read_str(r, "linked_skeleton")
    doc.trailing = r.rest()
    return doc


def write(doc: SklFile) -> bytes:
    poses = np.asarray(doc.poses)
    if poses.dtype != POSE_DTYPE or poses.shape != (len(doc.bones),):
        raise DocumentError(f"skl: poses must be {len(doc.bones)} records of POSE_DTYPE")
    w = Writer("<")
    w.raw(SKELETON_TOKEN)
    w.i32(doc.version)
    w.i32(len(doc.bones))
    for bone, pose in zip(doc.bones, poses):
        write_str(w, bone.name)
        w.records(pose)
        write_str(w, bone.parent)
        w.i32(len(bone.children))
        for c in bone.children:
            write_str(w, c)
    if doc.linked_skeleton is not None:
        write_str(w, doc.linked_skeleton)
    elif doc.trailing:
        raise DocumentError("skl: trailing bytes need a linked_skeleton string before them")
    w.raw(doc.trailing)
    return w.getvalue()


def info(doc: SklFile) -> dict[str, Any]:
    out: dict[str, Any] = {"version": doc.version, "bones": len(doc.bones),
                           "roots": sum(p < 0 for p in doc.parent_indices())}
    if doc.linked_skeleton:
        out["linked skeleton"] = text(doc.linked_skeleton)
    return out


#: the parent names that mean "none": empty (our writer's) and the one 3ds Max exports and the
#: Lost Saga add-on's importer takes as the root
ROOT_PARENTS = (b"", b"NoParent")


def check(doc: SklFile) -> list[Finding]:
    problems = []
    names = doc.names()
    known = set(names)
    if len(known) != len(names):
        problems.append(warning("skl.duplicate_name", "bone names repeat (the first of each "
                                "name is used)"))
    for b in doc.bones:
        if b.parent not in ROOT_PARENTS and b.parent not in known:
            problems.append(error("skl.parent", f"bone {text(b.name)!r}: parent "
                                  f"{text(b.parent)!r} does not exist"))
        for c in b.children:
            if c not in known:
                problems.append(error("skl.child", f"bone {text(b.name)!r}: child {text(c)!r} "
                                      "does not exist"))
    problems += long_strings([b.name for b in doc.bones] + [b.parent for b in doc.bones]
                             + [c for b in doc.bones for c in b.children], "names",
                             "skl.name_length")
    cycle = doc.cycle_bone()
    if cycle is not None:
        problems.append(error("skl.cycle", f"bone {text(names[cycle])!r} is in a parent cycle"))
    return problems


def sniff(head: bytes) -> bool:
    return head[:4] == SKELETON_TOKEN
