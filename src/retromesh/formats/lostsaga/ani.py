"""Lost Saga ``.ani`` animations (io3DEngine ``ioAnimationManager::LoadFileInternal``).

Times are integer milliseconds (event times are float milliseconds).

==================  ==========================================  ================================
field               type                                        note
==================  ==========================================  ================================
magic               ``"ANI\\0"``
version             int32                                       4000 DEFAULT, 4001 COMP4,
                                                                4002 COMP8 (others rejected)
event_count         int32
events[i]           str type, str info, float32 time (ms)
total_time          int32 (ms)
track_count         int32
tracks[i]           str bone, float32 weight, int32 key_count
keys (4000)         float32 rotation[4] (x, y, z, w),           32 bytes
                    float32 translation[3], int32 time
keys (4001)         uint32 packed, float32 translation[3],      20 bytes (see quatcodec)
                    int32 time
keys (4002)         uint32 high, uint32 low,                    24 bytes (see quatcodec)
                    float32 translation[3], int32 time
trailing            whatever follows (kept)
==================  ==========================================  ================================

Keys are kept packed (numpy record arrays, :func:`key_dtype`); :func:`rotations` decodes a
track. Key values REPLACE the bone's local rotation/translation (absolute local pose, not deltas);
the track weight is used for blending several animations (usually 1).

What the real file taught: the add-on's export holds non-unit DEFAULT quaternions at in-between
keys (norm down to 0.80) and keys 1 ms past ``total_time``; both are kept natively as they are.

Deviations from the spec text: the events' second string is the event's sub-info (not a
"name"); the packed rotation is a DWORD (unsigned), and the version is checked like the
engine does. Event times and track weights are Python floats: a signalling-NaN payload in those
two fields would be written back as a quiet NaN (every other float is kept as float32 bits).
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
from .common import (
    ANIMATION_TOKEN,
    ANIMATION_VER_COMP4,
    ANIMATION_VER_COMP8,
    ANIMATION_VER_DEFAULT,
    long_strings,
    magic,
    read_str,
    write_str,
)
from .quatcodec import decode_comp4, decode_comp8

__all__ = ["AniFile", "AniTrack", "AniEvent", "read", "write", "key_dtype", "rotations",
           "VERSIONS"]

VERSIONS = {ANIMATION_VER_DEFAULT: "default", ANIMATION_VER_COMP4: "comp4",
            ANIMATION_VER_COMP8: "comp8"}

_KEY_DTYPES = {
    ANIMATION_VER_DEFAULT: np.dtype([("rotation", "<f4", (4,)), ("translation", "<f4", (3,)),
                                     ("time", "<i4")]),
    ANIMATION_VER_COMP4: np.dtype([("packed", "<u4"), ("translation", "<f4", (3,)),
                                   ("time", "<i4")]),
    ANIMATION_VER_COMP8: np.dtype([("high", "<u4"), ("low", "<u4"), ("translation", "<f4", (3,)),
                                   ("time", "<i4")]),
}


def key_dtype(version: int) -> np.dtype:
    try:
        return _KEY_DTYPES[version]
    except KeyError:
        raise DocumentError(f"ani: version {version} is not one of {sorted(VERSIONS)}") from None


@record
class AniEvent:
    type: bytes = b""
    info: bytes = b""
    time: float = 0.0          # milliseconds


@record
class AniTrack:
    bone: bytes = b""
    weight: float = 1.0
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, key_dtype(ANIMATION_VER_DEFAULT)))


@record
class AniFile:
    version: int = ANIMATION_VER_DEFAULT
    events: list[AniEvent] = field(default_factory=list)
    total_time: int = 0        # milliseconds
    tracks: list[AniTrack] = field(default_factory=list)
    trailing: bytes = b""


def rotations(track: AniTrack, version: int) -> np.ndarray:
    """The track's rotations as float32 (n, 4) x, y, z, w (D3D space), decoded like the engine."""
    k = track.keys
    if version == ANIMATION_VER_COMP4:
        return decode_comp4(k["packed"])
    if version == ANIMATION_VER_COMP8:
        return decode_comp8(k["high"], k["low"])
    return np.asarray(k["rotation"], dtype=np.float32).reshape(-1, 4)


def read(r: Reader) -> AniFile:
    magic(r, ANIMATION_TOKEN, "animation")
    version = r.i32("version")
    if version not in VERSIONS:
        raise r.fail("animation version 4000, 4001 or 4002", version, offset=4, field="version")
    doc = AniFile(version=version)
    n = r.count("event_count", 12)
    for i in range(n):
        with r.at(f"events[{i}]"):
            t = read_str(r, "type")
            info = read_str(r, "info")
            doc.events.append(AniEvent(t, info, r.f32("time")))
    doc.total_time = r.i32("total_time")
    n = r.count("track_count", 12)
    dt = _KEY_DTYPES[version]
    for i in range(n):
        with r.at(f"tracks[{i}]"):
            bone = read_str(r, "bone")
            weight = r.f32("weight")
            nk = r.count("key_count", dt.itemsize)
            doc.tracks.append(AniTrack(bone, weight, r.records(dt, nk, "keys")))
    doc.trailing = r.rest()
    return doc


def write(doc: AniFile) -> bytes:
    dt = key_dtype(doc.version)
    w = Writer("<")
    w.raw(ANIMATION_TOKEN)
    w.i32(doc.version)
    w.i32(len(doc.events))
    for e in doc.events:
        write_str(w, e.type)
        write_str(w, e.info)
        w.f32(e.time)
    w.i32(doc.total_time)
    w.i32(len(doc.tracks))
    for i, t in enumerate(doc.tracks):
        keys = np.asarray(t.keys)
        if keys.dtype.names != dt.names or keys.ndim != 1:
            raise DocumentError(f"ani: tracks[{i}].keys must be a 1-D array of {dt} for "
                                f"version {doc.version}")
        keys = as_dtype(keys, dt, f"ani: tracks[{i}].keys")
        write_str(w, t.bone)
        w.f32(t.weight)
        w.i32(len(keys))
        w.records(keys)
    w.raw(doc.trailing)
    return w.getvalue()


def info(doc: AniFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": f"{doc.version} ({VERSIONS.get(doc.version, '?')})",
        "events": len(doc.events), "total time ms": doc.total_time, "tracks": len(doc.tracks),
        "keys": sum(len(t.keys) for t in doc.tracks),
    }
    if doc.trailing:
        out["trailing bytes"] = len(doc.trailing)
    return out


def _tracks(ids: list[int]) -> str:
    shown = ", ".join(map(str, ids[:8])) + (", ..." if len(ids) > 8 else "")
    return f"track {shown}" if len(ids) == 1 else f"{len(ids)} tracks ({shown})"


def check(doc: AniFile) -> list[Finding]:
    problems = long_strings([t.bone for t in doc.tracks] + [e.type for e in doc.events]
                            + [e.info for e in doc.events], "names", "ani.name_length")
    backwards, same, late = [], [], []
    for i, t in enumerate(doc.tracks):
        times = np.asarray(t.keys["time"])
        if len(times) > 1 and np.any(np.diff(times) < 0):
            backwards.append(i)
        elif len(times) > 1 and np.any(np.diff(times) == 0):
            same.append(i)
        if len(times) and times[-1] > doc.total_time:
            late.append(i)
    if backwards:
        problems.append(error("ani.key_order", f"key times go backwards in {_tracks(backwards)}"))
    if same:
        problems.append(warning("ani.same_time", f"two keys at the same time in {_tracks(same)}"))
    if late:
        problems.append(warning("ani.after_end", f"keys after total_time ({doc.total_time} ms) "
                                f"in {_tracks(late)}"))
    return problems


def sniff(head: bytes) -> bool:
    return head[:4] == ANIMATION_TOKEN
