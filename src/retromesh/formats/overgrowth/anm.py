"""Overgrowth ``.anm`` animations (Phoenix engine), little-endian, versions 0..11.

Layout (Overgrowth ``Animation::ReadFromFile``, ``Source/Asset/Asset/animation.cpp``):

==============================  ==========  ===================================================
field                           versions    type
==============================  ==========  ===================================================
version                         all         int32 (0..11; others rejected, as by the engine)
centered                        >= 10       uint8 (bool)
looping                         >= 1        uint8 (bool); absent = looping
start                           1..10       int32 (ms, subtracted from length and key times)
length                          all         int32 (ms)
keyframe_count                  all         int32 (>= 1; the engine calls <= 0 corrupt)
per keyframe:
  time                          all         int32 (ms)
  weights                       >= 4        int32 n; float32[n] (per-bone physics weights)
  bone_mats                     all         int32 n; float32[16] x n (column-major, model space)
  weapon_mats                   >= 7        int32 n; float32[16] (+ int32 relative_id,
                                            float32 relative_weight when >= 8) x n
  use_mobility, mobility        >= 9        uint8; float32[16] when use_mobility != 0
  events                        >= 2        int32 n; {int32 bone; int32 len; char[len]} x n
  ik_bones                      >= 3        int32 n; {float32 filler[6]; int32 path_len;
                                            int32 path[path_len]; int32 len; char[len]} x n
  shape_keys                    >= 5        int32 n; {float32 weight; int32 len; char[len]} x n
  status_keys                   >= 6        same as shape_keys
  rotation, center_offset       centered    float32; float32[3]
==============================  ==========  ===================================================

Native document: :class:`AnmFile` / :class:`AnmKeyframe`; fields that a version does not
have are ``None`` (the writer refuses a document whose fields do not match its version). Matrix
arrays are ``(n, 16) <f4`` exactly as stored. Bytes after the last keyframe are kept as
``trailing``.

Where we differ from the spec text (the 010 template), and why:

* ``center_offset`` is a vec3 (12 bytes), not one float: the engine reads ``vec3``.
* ``start`` is present for versions 1..10 only; for 0 and 11 it is 0 (the template's
  ``local start = version`` is dead code in the engine).
* ``centered``, ``looping`` and ``use_mobility`` are one byte each; any non-zero byte is
  true. The raw byte is kept (an int) so that unusual values survive a round trip.
* Strings (events, IK labels, shape/status labels) are kept as bytes; a negative length or
  count is rejected.
* The mobility matrix is kept as stored (Blender Z-up basis); the engine permutes its columns
  on read (``[c0, c2, -c1, c3]``). It goes to the animation's extras unchanged.
* The IK bones' two vec3 are filler the engine reads and drops (they used to be the IK start
  and end); kept verbatim.

Conversion (see :mod:`.scene`): ``to_scene(anm, skeleton=...)`` needs the ``.phxbn``; matrices
are model-space bone frames (same axes as glTF: Overgrowth is OpenGL, right-handed, +Y up).
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record
from .common import need

__all__ = ["AnmFile", "AnmKeyframe", "AnmEvent", "AnmIkBone", "AnmLabelWeight", "read", "write",
           "MAX_VERSION", "weapon_dtype"]

MAX_VERSION = 11
MAT_DTYPE = np.dtype(("<f4", (16,)))
WEAPON7_DTYPE = np.dtype([("matrix", "<f4", (16,))])
WEAPON8_DTYPE = np.dtype([("matrix", "<f4", (16,)), ("relative_id", "<i4"),
                          ("relative_weight", "<f4")])


def weapon_dtype(version: int) -> np.dtype:
    return WEAPON8_DTYPE if version >= 8 else WEAPON7_DTYPE


@record
class AnmEvent:
    bone: int
    name: bytes


@record
class AnmIkBone:
    filler: tuple[float, ...]                   # 6 floats
    path: np.ndarray            # int32 bone ids
    label: bytes


@record
class AnmLabelWeight:
    weight: float
    label: bytes


@record
class AnmKeyframe:
    time: int
    bone_mats: np.ndarray = field(default_factory=lambda: np.zeros((0, 16), "<f4"))
    weights: np.ndarray | None = None            # v >= 4
    weapon_mats: np.ndarray | None = None        # v >= 7: records of weapon_dtype(version)
    use_mobility: int | None = None              # v >= 9 (raw byte)
    mobility: np.ndarray | None = None           # (16,) when use_mobility
    events: list[AnmEvent] | None = None         # v >= 2
    ik_bones: list[AnmIkBone] | None = None      # v >= 3
    shape_keys: list[AnmLabelWeight] | None = None   # v >= 5
    status_keys: list[AnmLabelWeight] | None = None  # v >= 6
    rotation: float | None = None                # centered
    center_offset: tuple[float, ...] | None = None   # centered: x, y, z


@record
class AnmFile:
    version: int = MAX_VERSION
    centered: int | None = 1          # v >= 10 (raw byte)
    looping: int | None = 1           # v >= 1 (raw byte)
    start: int | None = None          # v 1..10
    length: int = 0
    keyframes: list[AnmKeyframe] = field(default_factory=list)
    trailing: bytes = b""

    @property
    def is_centered(self) -> bool:
        return bool(self.centered) if self.version >= 10 and self.centered is not None else False

    @property
    def is_looping(self) -> bool:
        return bool(self.looping) if self.version >= 1 and self.looping is not None else True

    @property
    def start_ms(self) -> int:
        return int(self.start) if (1 <= self.version <= 10 and self.start is not None) else 0


def _label(r: Reader, what: str) -> bytes:
    n = r.i32(f"{what} length")
    if n < 0:
        raise r.fail(f"a {what} length >= 0", n, offset=r.pos - 4)
    r.need(n, what)
    return r.raw(n, what)


def _read_keyframe(r: Reader, version: int, centered: bool) -> AnmKeyframe:
    kf = AnmKeyframe(time=r.i32("time"))
    if version >= 4:
        n = r.count("num_weights", 4)
        kf.weights = r.records("<f4", n, "weights")
    n = r.count("num_bone_mats", 64)
    kf.bone_mats = r.records(MAT_DTYPE, n, "bone_mats").reshape(n, 16)
    if version >= 7:
        dt = weapon_dtype(version)
        n = r.count("num_weapon_mats", dt.itemsize)
        kf.weapon_mats = r.records(dt, n, "weapon_mats")
    if version >= 9:
        kf.use_mobility = r.u8("use_mobility")
        if kf.use_mobility:
            kf.mobility = r.records("<f4", 16, "mobility")
    if version >= 2:
        n = r.count("num_events", 8)
        kf.events = []
        for i in range(n):
            with r.at(f"events[{i}]"):
                kf.events.append(AnmEvent(r.i32("which_bone"), _label(r, "event name")))
    if version >= 3:
        n = r.count("num_ik_bones", 32)
        kf.ik_bones = []
        for i in range(n):
            with r.at(f"ik_bones[{i}]"):
                filler = r.floats(6, "filler")
                m = r.count("path_length", 4)
                path = r.records("<i4", m, "path")
                kf.ik_bones.append(AnmIkBone(tuple(filler), path, _label(r, "ik bone label")))
    for ver, name in ((5, "shape_keys"), (6, "status_keys")):
        if version >= ver:
            n = r.count(f"num_{name}", 8)
            items = []
            for i in range(n):
                with r.at(f"{name}[{i}]"):
                    items.append(AnmLabelWeight(r.f32("weight"), _label(r, "label")))
            setattr(kf, name, items)
    if centered:
        kf.rotation = r.f32("rotation")
        kf.center_offset = tuple(r.floats(3, "center_offset"))
    return kf


def read(r: Reader) -> AnmFile:
    with r.at("header"):
        version = r.i32("version")
        if not 0 <= version <= MAX_VERSION:
            raise r.fail(f"an .anm version in 0..{MAX_VERSION}", version, offset=0, field="version")
        doc = AnmFile(version=version, centered=None, looping=None)
        if version >= 10:
            doc.centered = r.u8("centered")
        if version >= 1:
            doc.looping = r.u8("looping")
        if 1 <= version <= 10:
            doc.start = r.i32("start")
        doc.length = r.i32("length")
        start = r.pos
        n = r.count("keyframe_count", 8)
        if n == 0:
            raise r.fail("keyframe_count >= 1 (the engine calls 0 or less corrupt)", n,
                         offset=start, field="keyframe_count")
    for i in range(n):
        with r.at(f"keyframes[{i}]"):
            doc.keyframes.append(_read_keyframe(r, version, doc.is_centered))
    doc.trailing = r.rest()
    return doc


# -- writing -------------------------------------------------------------------------------
def _need(value: Any, present: bool, what: str, version: int) -> None:
    need(value, present, what, f".anm version {version}")


def _w_label(w: Writer, b: bytes) -> None:
    w.i32(len(b))
    w.raw(bytes(b))


def write(doc: AnmFile) -> bytes:
    v = int(doc.version)
    if not 0 <= v <= MAX_VERSION:
        raise DocumentError(f".anm version must be 0..{MAX_VERSION}, got {v}")
    _need(doc.centered, v >= 10, "centered", v)
    _need(doc.looping, v >= 1, "looping", v)
    _need(doc.start, 1 <= v <= 10, "start", v)
    if not doc.keyframes:
        raise DocumentError(".anm needs at least one keyframe")
    w = Writer("<")
    w.i32(v)
    # (the asserts below hold after the _need checks: present exactly in these versions)
    if v >= 10:
        assert doc.centered is not None
        w.u8(int(doc.centered))
    if v >= 1:
        assert doc.looping is not None
        w.u8(int(doc.looping))
    if 1 <= v <= 10:
        assert doc.start is not None
        w.i32(int(doc.start))
    w.i32(int(doc.length))
    w.i32(len(doc.keyframes))
    centered = doc.is_centered
    for i, kf in enumerate(doc.keyframes):
        _need(kf.weights, v >= 4, f"keyframes[{i}].weights", v)
        _need(kf.weapon_mats, v >= 7, f"keyframes[{i}].weapon_mats", v)
        _need(kf.use_mobility, v >= 9, f"keyframes[{i}].use_mobility", v)
        _need(kf.events, v >= 2, f"keyframes[{i}].events", v)
        _need(kf.ik_bones, v >= 3, f"keyframes[{i}].ik_bones", v)
        _need(kf.shape_keys, v >= 5, f"keyframes[{i}].shape_keys", v)
        _need(kf.status_keys, v >= 6, f"keyframes[{i}].status_keys", v)
        _need(kf.rotation, centered, f"keyframes[{i}].rotation", v)
        _need(kf.center_offset, centered, f"keyframes[{i}].center_offset", v)
        w.i32(int(kf.time))
        if v >= 4:
            wts = np.asarray(kf.weights, "<f4").reshape(-1)
            w.i32(len(wts))
            w.records(wts, "<f4")
        mats = np.asarray(kf.bone_mats, "<f4")
        if mats.ndim != 2 or mats.shape[1] != 16:
            raise DocumentError(f"keyframes[{i}].bone_mats must have shape (n, 16), got {mats.shape}")
        w.i32(len(mats))
        w.records(mats, "<f4")
        if v >= 7:
            dt = weapon_dtype(v)
            wm = np.asarray(kf.weapon_mats)
            if wm.dtype.names != dt.names:
                raise DocumentError(f"keyframes[{i}].weapon_mats must be records of {dt} for "
                                    f"version {v}")
            wm = as_dtype(wm, dt, f"keyframes[{i}].weapon_mats")
            w.i32(len(wm))
            w.records(wm)
        if v >= 9:
            assert kf.use_mobility is not None
            w.u8(int(kf.use_mobility))
            if kf.use_mobility:
                if kf.mobility is None:
                    raise DocumentError(f"keyframes[{i}].mobility is needed when use_mobility")
                w.records(np.asarray(kf.mobility, "<f4").reshape(16), "<f4")
            elif kf.mobility is not None:
                raise DocumentError(f"keyframes[{i}].mobility given but use_mobility is 0")
        if v >= 2:
            assert kf.events is not None
            w.i32(len(kf.events))
            for e in kf.events:
                w.i32(int(e.bone))
                _w_label(w, e.name)
        if v >= 3:
            assert kf.ik_bones is not None
            w.i32(len(kf.ik_bones))
            for j, ik in enumerate(kf.ik_bones):
                if len(ik.filler) != 6:
                    raise DocumentError("AnmIkBone.filler holds 6 floats")
                w.floats(ik.filler)
                path = as_dtype(ik.path, "<i4", f"keyframes[{i}].ik_bones[{j}].path").reshape(-1)
                w.i32(len(path))
                w.records(path, "<i4")
                _w_label(w, ik.label)
        if v >= 5:
            for items in (kf.shape_keys, kf.status_keys)[: 2 if v >= 6 else 1]:
                assert items is not None
                w.i32(len(items))
                for it in items:
                    w.f32(float(it.weight))
                    _w_label(w, it.label)
        if centered:
            assert kf.rotation is not None and kf.center_offset is not None
            w.f32(float(kf.rotation))
            if len(kf.center_offset) != 3:
                raise DocumentError("center_offset holds 3 floats")
            w.floats(kf.center_offset)
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def info(doc: AnmFile) -> dict:
    kfs = doc.keyframes
    return {"version": doc.version, "keyframes": len(kfs),
            "bones": len(kfs[0].bone_mats) if kfs else 0,
            "length_ms": doc.length - doc.start_ms, "centered": doc.is_centered,
            "looping": doc.is_looping,
            "events": sum(len(k.events or []) for k in kfs)}


def check(doc: AnmFile) -> list[Finding]:
    out = []
    kfs = doc.keyframes
    if kfs:
        nb = {len(k.bone_mats) for k in kfs}
        if len(nb) > 1:
            out.append(error("anm.bone_count", "keyframes hold different numbers of bone "
                             f"matrices: {sorted(nb)}"))
        times = [k.time for k in kfs]
        if any(b < a for a, b in zip(times, times[1:])):
            out.append(warning("anm.key_order", "keyframe times are not in increasing order"))
    return out


def sniff(head: bytes) -> bool:
    return len(head) >= 4 and 0 <= int.from_bytes(head[:4], "little", signed=True) <= MAX_VERSION
