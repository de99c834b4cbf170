"""A Luanti clip on a B3D model's timeline: where the Lua's frames lie in the timeline's
seconds, and the piece of the timeline a clip plays (:func:`cut_clip`).

Lua frame ``f`` is B3D key frame ``f + 1`` (Irrlicht counts from 0); a clip ``start..end`` at
``speed`` frames a second lasts ``(end - start) / speed`` seconds. Used by the way there
(:mod:`.scene`: clips cut from the timeline) and the way back (:mod:`.clipsback`: edited clips
written into it).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..scene import Animation, Channel

__all__ = ["lua_frame_times", "cut_clip"]


def lua_frame_times(anim: Animation, gltf: bool = False) -> tuple[float, float]:
    """(seconds of the timeline at Lua frame 0, timeline seconds per Lua frame): B3D key
    frame ``f + 1`` at ``(f + 1 - first key frame) / fps``; a glTF's frames are seconds."""
    if gltf:
        return 0.0, 1.0
    fps = float(anim.extras.get("fps") or anim.extras.get("b3d_fps") or 25.0)
    first = float(anim.extras.get("b3d_first_frame", 1))
    return (1.0 - first) / fps, 1.0 / fps


def cut_clip(timeline: Animation, t0: float, t1: float, stretch: float, name: str) -> Animation:
    """The piece ``t0..t1`` (seconds) of ``timeline`` as an animation starting at 0, its times
    multiplied by ``stretch``; each channel keeps the keys inside and gets the values at both
    ends (held beyond the timeline's keys, as the engine holds them; linear, rotations
    slerped as ``Channel.sample`` does, every channel's ends in one vectorised pass)."""
    out = Animation(name=name)
    ends = _ends(timeline.channels, t0, t1)
    single = t1 <= t0 + 1e-6
    for c, (v0, v1) in zip(timeline.channels, ends):
        kt = c.times.astype(np.float64)
        inner = np.flatnonzero((kt > t0 + 1e-6) & (kt < t1 - 1e-6))
        if single:
            times, values = np.array([t0]), v0[None]
        else:
            times = np.concatenate([[t0], kt[inner], [t1]])
            values = np.concatenate([v0[None], c.key_values()[inner], v1[None]])
        rel = (times - t0) * stretch
        keep = np.ones(len(rel), bool)
        keep[1:] = np.diff(rel.astype(np.float32)) > 0      # (float32 times must increase)
        interpolation = "STEP" if c.interpolation == "STEP" else "LINEAR"
        out.channels.append(Channel(c.node, c.path, rel[keep], values[keep], interpolation))
    return out


def _ends(channels: list[Channel], t0: float, t1: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each channel's values at ``t0`` and ``t1`` (a CUBICSPLINE channel through its own
    ``sample``; the others gathered and interpolated together)."""
    from ..transforms import quat_slerp
    out: list[Any] = [None] * len(channels)
    a, b, u, where = [], [], [], []          # (rows to blend, per channel and end)
    for i, c in enumerate(channels):
        if c.interpolation == "CUBICSPLINE":
            v = c.sample([t0, t1])
            out[i] = (v[0], v[1])
            continue
        kt = c.times.astype(np.float64)
        v = c.key_values().astype(np.float64)
        for t in (t0, t1):
            j = int(np.searchsorted(kt, t + 1e-6, side="right")) - 1
            if j < 0 or j >= len(kt) - 1 or c.interpolation == "STEP" or abs(t - kt[j]) <= 1e-6:
                j = min(max(j, 0), len(kt) - 1)
                a.append(v[j])
                b.append(v[j])
                u.append(0.0)
            else:
                a.append(v[j])
                b.append(v[j + 1])
                u.append((t - kt[j]) / (kt[j + 1] - kt[j]))
            where.append(i)
    values: list[np.ndarray] = []
    if a:
        rows = [k for k, i in enumerate(where) if channels[i].path == "rotation"]
        other = [k for k, i in enumerate(where) if channels[i].path != "rotation"]
        blended: list[Any] = [None] * len(a)
        if rows:
            q = quat_slerp(np.array([a[k] for k in rows]), np.array([b[k] for k in rows]),
                           np.array([u[k] for k in rows]))
            for n, k in enumerate(rows):
                blended[k] = q[n]
        for k in other:
            blended[k] = a[k] + (b[k] - a[k]) * u[k]
        values = blended
    for k in range(0, len(where), 2):
        out[where[k]] = (values[k], values[k + 1])
    return out
