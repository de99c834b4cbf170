"""Lugaru animations (``Data/Animations/Run`` ...): per-frame joint positions, twists and flags.
Big-endian, no extension, no magic.

Layout (``Animation::Animation`` and ``AnimationFrame::load*`` in osslugaru/lugaru; all 87
shipped animations checked):

=================  ====================  ===============================================
offset             type                  field
=================  ====================  ===============================================
0                  int32                 frame_count (F)
4                  int32                 joint_count (J; 20 in every shipped file)
8                  per frame (F times):  float32 position[J][3] (joint positions, model
                                         units, the skeleton's joint order);
                                         float32 twist[J]; uint8 onground[J];
                                         float32 speed (how fast the frame plays)
...                float32[F][J]         twist2 (a second twist per joint)
...                int32[F]              label (frame events: 4/5 step sounds, 6/7 ...)
...                int32                 weapon_target_count (unused by the engine)
...                float32[F][3]         weapon_targets
=================  ====================  ===============================================

Deviations and facts:

* ``label`` is read with ``funpackf("Bf")`` into an ``int``, so the engine uses the 4 bytes
  as an integer; the shipped files store small integers there (one file holds the bits of
  a float, 3.949): kept as the int32 stored.
* The last two fields are absent from 49 of the 87 shipped files: they end after the labels
  (the engine's ``funpackf`` then reads nothing; it never uses those fields). Such a file
  reads back with ``weapon_target_count`` and ``weapon_targets`` None, and writes back as it
  was. Any other bytes after the last field are kept in ``trailing``.
* ``onground`` bytes are kept as stored (the engine tests them against 0).
"""
from __future__ import annotations

from dataclasses import field

import numpy as np

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record

__all__ = ["AnimationFile", "frame_dtype", "read", "write", "info", "check", "sniff"]

MAX_JOINTS = 50


def frame_dtype(joints: int) -> np.dtype:
    """One frame's record in the first block of the file."""
    return np.dtype([("position", ">f4", (joints, 3)), ("twist", ">f4", (joints,)),
                     ("onground", "u1", (joints,)), ("speed", ">f4")])


@record
class AnimationFile:
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 20, 3), ">f4"))
    twist: np.ndarray = field(default_factory=lambda: np.zeros((0, 20), ">f4"))
    onground: np.ndarray = field(default_factory=lambda: np.zeros((0, 20), "u1"))
    speed: np.ndarray = field(default_factory=lambda: np.zeros(0, ">f4"))
    twist2: np.ndarray = field(default_factory=lambda: np.zeros((0, 20), ">f4"))
    label: np.ndarray = field(default_factory=lambda: np.zeros(0, ">i4"))
    weapon_target_count: int | None = None
    weapon_targets: np.ndarray | None = None
    trailing: bytes = b""

    @property
    def frame_count(self) -> int:
        return int(np.asarray(self.positions).shape[0])

    @property
    def joint_count(self) -> int:
        return int(np.asarray(self.positions).shape[1])


def read(r: Reader) -> AnimationFile:
    start = r.pos
    nf = r.i32("frame_count")
    nj = r.i32("joint_count")
    if nf < 0 or nj < 0:
        raise r.fail("frame_count and joint_count >= 0", (nf, nj), offset=start,
                     field="frame_count" if nf < 0 else "joint_count")
    per_frame = nj * 21 + 8            # frame record, twist2 and label
    if nf * per_frame > r.remaining:
        raise r.fail(f"{nf} frames of {nj} joints ({per_frame} bytes each) to fit in the "
                     f"{r.remaining} bytes left", nf, offset=start, field="frame_count")
    frames = r.records(frame_dtype(nj), nf, "frames")
    twist2 = r.records(">f4", nf * nj, "twist2").reshape(nf, nj)
    label = r.records(">i4", nf, "label")
    count: int | None = None
    targets: np.ndarray | None = None
    if r.remaining >= 4 + 12 * nf:
        count = r.i32("weapon_target_count")
        targets = r.records(">f4", nf * 3, "weapon_targets").reshape(nf, 3)
    return AnimationFile(frames["position"].reshape(nf, nj, 3), frames["twist"].reshape(nf, nj),
                         frames["onground"].reshape(nf, nj), frames["speed"].reshape(nf),
                         twist2, label, count, targets, r.rest())


def _arr(a: object, dtype: str, shape: tuple[int, ...], what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.shape != shape:
        raise DocumentError(f"AnimationFile.{what} must have shape {shape}, got {arr.shape}")
    try:
        return arr.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise DocumentError(f"AnimationFile.{what} must hold numbers") from exc


def write(doc: AnimationFile) -> bytes:
    pos = np.asarray(doc.positions)
    if pos.ndim != 3 or pos.shape[2] != 3:
        raise DocumentError(f"AnimationFile.positions must have shape (F, J, 3), got {pos.shape}")
    nf, nj = pos.shape[:2]
    frames = np.zeros(nf, frame_dtype(nj))
    frames["position"] = _arr(pos, ">f4", (nf, nj, 3), "positions")
    frames["twist"] = _arr(doc.twist, ">f4", (nf, nj), "twist")
    frames["onground"] = _arr(doc.onground, "u1", (nf, nj), "onground")
    frames["speed"] = _arr(doc.speed, ">f4", (nf,), "speed")
    w = Writer(">")
    w.i32(nf)
    w.i32(nj)
    w.records(frames)
    w.records(_arr(doc.twist2, ">f4", (nf, nj), "twist2"))
    w.records(_arr(doc.label, ">i4", (nf,), "label"))
    if (doc.weapon_target_count is None) != (doc.weapon_targets is None):
        raise DocumentError("weapon_target_count and weapon_targets are both present or both None")
    if doc.weapon_target_count is not None:
        w.i32(doc.weapon_target_count)
        w.records(_arr(doc.weapon_targets, ">f4", (nf, 3), "weapon_targets"))
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def info(doc: AnimationFile) -> dict[str, object]:
    speed = np.asarray(doc.speed, np.float64)
    return {"frames": doc.frame_count, "joints": doc.joint_count,
            "labelled_frames": int(np.count_nonzero(doc.label)),
            "weapon_targets": doc.weapon_targets is not None,
            "speed_min": round(float(speed.min()), 3) if len(speed) else None,
            "speed_max": round(float(speed.max()), 3) if len(speed) else None}


def check(doc: AnimationFile, skeleton_joints: int | None = None) -> list[Finding]:
    """The engine's rules (``Animation::Animation``, ``Person::DoAnimations``).
    ``skeleton_joints``: the joint count of the skeleton it plays on, when known."""
    out: list[Finding] = []
    if doc.frame_count == 0:
        out.append(error("lugaru-animation.no_frames",
                         "no frames: the engine reads frames.back() of every animation"))
    if doc.joint_count > MAX_JOINTS:
        out.append(error("lugaru-animation.joint_count",
                         f"{doc.joint_count} joints; a Lugaru skeleton has at most {MAX_JOINTS}"))
    if skeleton_joints is not None and doc.joint_count != skeleton_joints:
        out.append(error("lugaru-animation.joint_count",
                         f"{doc.joint_count} joints but the skeleton has {skeleton_joints}: the "
                         "engine indexes the frames by the skeleton's joints"))
    speed = np.asarray(doc.speed, np.float64)
    if len(speed) and not np.all(np.isfinite(speed) & (speed > 0)):
        out.append(warning("lugaru-animation.speed",
                           "a frame speed that is not a positive number: the frame never ends "
                           "or ends at once"))
    values = [np.asarray(a, np.float64) for a in (doc.positions, doc.twist, doc.twist2)]
    if not all(np.all(np.isfinite(v)) for v in values):
        out.append(warning("lugaru-animation.finite",
                           "a joint position or twist is NaN or infinite"))
    if doc.trailing:
        out.append(warning("lugaru-animation.trailing",
                           f"{len(doc.trailing)} bytes after the last field (ignored)"))
    return out


def sniff(head: bytes) -> bool:
    """A frame count 1..100000 and a joint count 1..50."""
    if len(head) < 8:
        return False
    nf = int.from_bytes(head[:4], "big", signed=True)
    nj = int.from_bytes(head[4:8], "big", signed=True)
    return 0 < nf <= 100000 and 0 < nj <= MAX_JOINTS

