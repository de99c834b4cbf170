"""Scene animations -> KEYS chunks and ANIM frame numbers (from_scene's timeline).

Frames are ``first frame + round(time * rate)``; channels whose times do not fall on frames (or
that are not LINEAR) are resampled at every frame. ``rate`` is the ``fps`` option, else the
animation's ``extras["fps"]`` (what to_scene played it at: the ANIM's fps, 25 when that was 0),
else 30.

Times read from a B3D come back as float32 seconds, so a key on frame 4,000,000 is only known to
a few hundredths of a frame: a time counts as on its frame within np.allclose's tolerance
(1e-3 + 1e-5 x the frame; see ``_on_frames`` for jumps). Resampling is capped at
``MAX_RESAMPLED_FRAMES`` frames per channel (a DocumentError beyond: a 13 KB file once asked for
4 million frames per bone).
"""
from __future__ import annotations

from itertools import accumulate

import numpy as np

from ...arrays import distinct
from ...errors import DocumentError
from ...records import record
from ...scene import Animation, Channel
from .axes import Z, rot_from_gltf
from .chunks import Keys, keys_dtype

__all__ = ["Track", "animation_rate", "fitting_rate", "COMMON_RATES", "tracks_for", "keys_chunks",
           "jump_step"]

_BITS = (("translation", "position", 1), ("scale", "scale", 2), ("rotation", "rotation", 4))
_BIT_OF = {p: b for p, _, b in _BITS}
MAX_RESAMPLED_FRAMES = 1_000_000


@record
class Track:
    """One channel on the B3D timeline: key frames and B3D values (``frames`` already offset)."""
    channel: Channel
    rate: float
    offset: int
    frames: np.ndarray
    values: np.ndarray       # B3D axes: position/scale (k, 3), rotation w, x, y, z (k, 4)

    def at(self, frames: np.ndarray) -> np.ndarray:
        if len(frames) == len(self.frames) and np.array_equal(frames, self.frames):
            return self.values
        return _to_b3d(self.channel.path, self.channel.sample((frames - self.offset) / self.rate))


def _to_b3d(path: str, vals: np.ndarray) -> np.ndarray:
    if path == "translation":
        return vals * Z
    if path == "rotation":
        return rot_from_gltf(vals)
    return vals


def animation_rate(a: Animation, fps: float | None, recorded_fps: float | None = None) -> float:
    """The ``fps`` option, else what to_scene played the animation at (its extras, else the
    ANIM recorded on its node: 25 for 0), else the common rate its keys fall on
    (:func:`fitting_rate`)."""
    try:
        played = float(a.extras.get("fps") or 0)
    except (TypeError, ValueError):
        played = 0.0
    if not played > 0 and recorded_fps is not None:
        played = recorded_fps if recorded_fps > 0 else 25.0
    return float(fps or (played if played > 0 else fitting_rate(a)))


#: the rates a glTF without our extras is tried at, in order of preference (30: what a B3D
#: written without a rate has always had)
COMMON_RATES = (30.0, 24.0, 25.0, 60.0, 50.0, 48.0, 120.0)


def fitting_rate(a: Animation) -> float:
    """The first of :data:`COMMON_RATES` at which every key of ``a`` falls on a frame (a glTF
    another tool wrote keeps the keys a 60 fps mob had at 60ths of a second: written at 30
    fps, the frame numbers its mod's Lua names would point elsewhere), else 30 (resampled)."""
    times = [np.asarray(c.times, np.float64) for c in a.channels if len(c.times) > 1]
    for rate in COMMON_RATES:
        if all(_key_frames(t * rate) is not None for t in times):
            return rate
    return 30.0


def _key_frames(f: np.ndarray) -> np.ndarray | None:
    """The frame of each key at times ``f`` (in frames) when every key falls on one (in
    order: :func:`_on_frames`), else None."""
    frames = np.round(f).astype(np.int64)
    return frames if bool(np.all(np.diff(frames) >= 0)) and _on_frames(f, frames) else None


def _key_frames_many(times: list[np.ndarray]) -> list[np.ndarray | None]:
    """:func:`_key_frames` of each array of times (in frames), the usual case (every key on
    its frame, in order) of all tested in one numpy pass: a mob has dozens of channels."""
    if not times:
        return []
    f = np.concatenate(times)
    frames = np.round(f).astype(np.int64)
    starts = np.array([0, *accumulate(len(t) for t in times)], np.int64)
    back = np.zeros(len(f), bool)
    back[1:] = frames[1:] < frames[:-1]
    back[starts[:-1][starts[:-1] < len(f)]] = False       # (each array's first key)
    off = ~(np.abs(f - frames) <= 1e-3 + 1e-5 * np.abs(frames))
    out: list[np.ndarray | None] = []
    for t, a, b, down, loose in zip(times, starts[:-1].tolist(), starts[1:].tolist(),
                                    _any_per(back, starts), _any_per(off, starts)):
        if down:
            out.append(None)
        elif not loose or _on_frames(t, frames[a:b]):
            out.append(frames[a:b])
        else:
            out.append(None)
    return out


def _any_per(mask: np.ndarray, starts: np.ndarray) -> list[bool]:
    """Per slice ``starts[k]:starts[k + 1]`` of ``mask``, whether any is set."""
    hits = np.zeros(len(mask) + 1, np.int64)
    np.cumsum(mask, out=hits[1:])
    return (hits[starts[1:]] > hits[starts[:-1]]).tolist()


def _b3d_values(channels: list[Channel]) -> dict[int, np.ndarray]:
    """id of each channel -> its values in B3D axes (float64), the channels of each path
    converted in one pass."""
    out: dict[int, np.ndarray] = {}
    for path in _BIT_OF:
        group = [c for c in channels if c.path == path]
        if not group:
            continue
        vals = _to_b3d(path, np.concatenate([c.values for c in group]).astype(np.float64))
        at = 0
        for c in group:
            out[id(c)] = vals[at:at + len(c.values)]
            at += len(c.values)
    return out


def jump_step(fps: float) -> float:
    """Seconds between keys at one frame (a jump) in glTF: a millisecond (Blender's importer
    merged keys a ten-thousandth of a frame apart; a millisecond is 0.024 Blender frames at
    its default 24 fps, and they stay), at most a tenth of a frame (so that they round back to
    their frame)."""
    return min(1e-3, 0.1 / fps) if fps > 0 else 1e-3


def _on_frames(f: np.ndarray, frames: np.ndarray) -> bool:
    """Every key on a frame, or, for the later keys of a jump (several keys rounding to one
    frame), a little after it (:func:`jump_step` per rank: a tenth of a frame at most)."""
    d = f - frames
    tol = 1e-3 + 1e-5 * np.abs(frames)         # np.allclose's: float32 times of late frames
    if np.all(np.abs(d) <= tol):
        return True
    rank = np.arange(len(frames)) - np.searchsorted(frames, frames, side="left")
    later = rank > 0
    return bool(np.all(np.abs(d[~later]) <= tol[~later])
                and np.all((d[later] > -tol[later]) & (d[later] <= 0.101 * rank[later] + tol[later])))


def tracks_for(a: Animation, rate: float, offset: int) -> tuple[dict[int, dict[str, Track]], int]:
    """The animation's channels as tracks per node and path; returns them and the last frame
    used (relative to ``offset``)."""
    out: dict[int, dict[str, Track]] = {}
    length = 0
    chans = [c for c in a.channels if c.path in _BIT_OF]
    linear = [c for c in chans if c.interpolation == "LINEAR"]
    found = dict(zip(map(id, linear), _key_frames_many(
        [np.asarray(c.times, np.float64) * rate for c in linear])))
    values = _b3d_values([c for c in linear if found[id(c)] is not None])
    for c in chans:
        keyed = found.get(id(c))
        if keyed is not None:
            frames, b3d = keyed, values[id(c)]
        else:
            last = float(np.ceil(float(c.times[-1]) * rate - 1e-6))
            if last >= MAX_RESAMPLED_FRAMES:
                raise DocumentError(
                    f"animation {a.name!r}: the {c.path} channel of node {c.node} would need "
                    f"{last:.0f} frames at {rate:g} fps when resampled (limit "
                    f"{MAX_RESAMPLED_FRAMES:,}); pass a lower fps")
            frames = np.arange(0, int(last) + 1)
            b3d = _to_b3d(c.path, c.sample(frames / rate))
        # the keys of a jump keep their one frame number, as the B3D file had them
        out.setdefault(c.node, {})[c.path] = Track(c, rate, offset, frames + offset, b3d)
        length = max(length, int(frames[-1]))
    return out, length


def _chunk(tracks: list[Track]) -> Keys:
    flags = sum(_BIT_OF[t.channel.path] for t in tracks)
    if all(np.array_equal(t.frames, tracks[0].frames) for t in tracks):
        frames = tracks[0].frames
    else:
        frames = distinct(np.concatenate([t.frames for t in tracks]))
    rec = np.zeros(len(frames), keys_dtype(flags))
    rec["frame"] = frames
    for t in tracks:
        rec[dict((p, f) for p, f, _ in _BITS)[t.channel.path]] = t.at(frames)
    return Keys(flags, rec)


def keys_chunks(tracks: dict[str, Track], layout: list[int] | None = None) -> list[Keys]:
    """KEYS chunks for one node: one per path (translation, scale, rotation), or grouped as the
    flags in ``layout`` say (the node's KEYS chunks in the B3D file it came from)."""
    left = [p for p, _, _ in _BITS if p in tracks]
    out: list[Keys] = []
    for flags in layout or []:
        group = [p for p in left if _BIT_OF[p] & flags]
        if group:
            out.append(_chunk([tracks[p] for p in group]))
            left = [p for p in left if p not in group]
        else:
            out.append(Keys(int(flags), np.zeros(0, keys_dtype(int(flags)))))
    out.extend(_chunk([tracks[p]]) for p in left)
    return out
