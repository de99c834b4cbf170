"""The way back of edited clips: a clip animation changed (in Blender, or in a glTF editor) goes
back into the B3D model's one timeline before it is written.

A dressed scene (:mod:`.scene`) has the whole timeline and, after it, one animation per clip
cut from it, each carrying its record (``extras["luanti_clip"]``: the Lua's ``start``, ``end``,
``speed``). On the way back to B3D (:func:`fold_edited_clips`, called by ``undress``):

- **Unedited clips are dropped**: a clip is unedited when it still lasts its
  ``(end - start) / speed`` seconds and every channel matches the timeline's piece at its keys
  and the piece's (within float32 noise: 1e-4 of the value's size, 0.05 degree). The timeline
  is then written as it is (byte for byte with the byte-exact B3D way back).
- **An edited clip goes back to its frames**, resampled at whole frames: Lua frames
  ``start .. start + n`` (B3D key frames one more), ``n = round(seconds x speed)``, its value at
  each frame the clip's at ``(frame - start) / speed`` seconds. The timeline's keys on those
  frames are replaced, for the nodes the clip animates (the other nodes' keys in the range are
  stretched with it). A node the timeline did not animate holds its rest pose outside the range.
- **Clips sharing frames** (animalia's walk and run both play 71–89) are written once: edits
  that agree on the shared frames are one edit; a second edit that disagrees (or changes the
  length of a shared range differently) is not written and a LossWarning names both clips. An
  unedited clip on an edited one's frames plays the edit too (a :class:`ClipNotice` says so).
- **A clip whose length changed moves the frames after it**: the later keys shift by the
  difference, the ANIM's frame count follows, and every clip of every registration whose range
  moved is listed in a :class:`ClipNotice` with the Lua ``animation`` fields to put into the
  mod (``walk_start = 85, walk_end = 119`` for mobs_redo and VoxeLibre; ``walk = {x = 85,
  y = 119}`` for player_api; ``walk = {range = {x = 85, y = 119}}`` for creatura, mobkit and
  entities). ``retromesh convert`` prints it as a warning; Blender's export report shows it.
"""
from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arrays import distinct
from ..errors import LossWarning
from ..records import record
from ..scene import Animation, Channel, Node, Scene
from .timeline import cut_clip, lua_frame_times

__all__ = ["fold_edited_clips", "ClipNotice", "ClipEdit", "lua_fields", "POSITION_TOLERANCE",
           "ROTATION_TOLERANCE"]

CLIP = "luanti_clip"
#: a translation or scale counts as changed beyond this part of its size (at least 1)
POSITION_TOLERANCE = 1e-4
#: a rotation counts as changed when 1 - |q1 . q2| exceeds this (about 0.05 degree)
ROTATION_TOLERANCE = 1e-7
_PATHS = ("translation", "rotation", "scale")


class ClipNotice(LossWarning):
    """What the way back of edited clips did that the mod's Lua must know (clips that moved,
    with their new ``animation`` fields; clips that play an edited clip's frames too)."""


@record
class ClipEdit:
    """An edited clip resampled at whole frames: Lua frames ``start .. new_end`` replace
    ``start .. old_end``; ``values[(node, path)]`` holds one row per frame."""
    name: str
    start: int
    old_end: int
    new_end: int
    values: dict[tuple[int, str], np.ndarray]

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end


def _close(path: str, a: np.ndarray, b: np.ndarray) -> bool:
    if path == "rotation":        # (float32 keys are unit quaternions to about 1e-7 only)
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        dot = np.abs(np.einsum("ij,ij->i", a, b)) / np.where(norms > 0, norms, 1.0)
        return bool(np.all(1.0 - dot <= ROTATION_TOLERANCE))
    size = np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return bool(np.all(np.abs(a - b) <= POSITION_TOLERANCE * size))


def _rest(node: Node, path: str) -> np.ndarray:
    return np.asarray(getattr(node, path), dtype=np.float64)


def _edited(scene: Scene, clip: Animation, piece: Animation) -> bool:
    """True when any channel of ``clip`` differs from ``piece`` (what the timeline plays for
    it) at their keys; a channel the piece lacks is compared with the node's rest pose."""
    by = {(c.node, c.path): c for c in piece.channels}
    for c in clip.channels:
        if c.path not in _PATHS or not 0 <= c.node < len(scene.nodes):
            continue
        other = by.get((c.node, c.path))
        if other is not None and len(other.times) == len(c.times) \
                and c.interpolation == other.interpolation != "CUBICSPLINE" \
                and np.allclose(other.times, c.times, rtol=0.0, atol=1e-6):
            if _close(c.path, c.values, other.values):     # (keys on the same times)
                continue
            return True
        times = c.times.astype(np.float64) if other is None else \
            distinct(np.concatenate([c.times, other.times]).astype(np.float64))
        got = c.sample(times)
        want = other.sample(times) if other is not None else \
            np.broadcast_to(_rest(scene.nodes[c.node], c.path), got.shape)
        if not _close(c.path, got, want):
            return True
    return False


def _clip_edit(scene: Scene, timeline: Animation, clip: Animation, zero: float,
               per_frame: float) -> ClipEdit | None:
    """The clip as an edit of the timeline, or None when it is unedited."""
    rec = clip.extras.get(CLIP)
    if not isinstance(rec, dict):
        return None
    try:
        start, end = float(rec["start"]), float(rec["end"])
        speed = float(rec.get("speed") or 15.0) or 15.0
    except (TypeError, KeyError, ValueError):
        return None
    if not (math.isfinite(start) and math.isfinite(end)) or end < start:
        return None
    piece = cut_clip(timeline, zero + start * per_frame, zero + end * per_frame,
                     1.0 / (per_frame * speed), clip.name)
    # (a length within half a frame of the clip's is its own: float32 seconds, Blender's frames)
    resized = abs(clip.duration * speed - (end - start)) > 0.5
    if not resized and not _edited(scene, clip, piece):
        return None
    first, last = round(start), round(end)
    n = max(0, round(clip.duration * speed)) if resized else last - first
    seconds = np.arange(n + 1, dtype=np.float64) / speed
    values = {(c.node, c.path): c.sample(seconds) for c in clip.channels
              if c.path in _PATHS and 0 <= c.node < len(scene.nodes)}
    return ClipEdit(str(rec.get("name") or clip.name), first, last, first + n, values)


def _agree(a: ClipEdit, b: ClipEdit) -> bool:
    """Two edits write the same values on the frames both cover (no length changed, or the
    same range changed alike)."""
    if (a.delta or b.delta) and (a.start, a.old_end, a.new_end) != (b.start, b.old_end, b.new_end):
        return False
    lo, hi = max(a.start, b.start), min(a.new_end, b.new_end)
    for key in a.values.keys() & b.values.keys():
        va, vb = a.values[key][lo - a.start:hi - a.start + 1], b.values[key][lo - b.start:hi - b.start + 1]
        if not _close(key[1], va, vb):
            return False
    return True


def _settle(edits: list[ClipEdit]) -> list[ClipEdit]:
    """The edits to write: one of several that agree, the first of several that do not (the
    others reported)."""
    kept: list[ClipEdit] = []
    for e in edits:
        clash = next((k for k in kept if e.start <= k.old_end and k.start <= e.old_end
                      and not _agree(k, e)), None)
        if clash is not None:
            warnings.warn(LossWarning(
                f"clips {clash.name!r} and {e.name!r} share Lua frames "
                f"{max(e.start, clash.start)}–{min(e.old_end, clash.old_end)} and were edited "
                f"differently: {clash.name!r}'s edit is written, {e.name!r}'s is not"), stacklevel=4)
            continue
        if not any((k.start, k.old_end, k.new_end) == (e.start, e.old_end, e.new_end) for k in kept):
            kept.append(e)
    return sorted(kept, key=lambda e: e.start)


def move(edits: Sequence[ClipEdit], frame: float) -> float:
    """Where Lua frame ``frame`` of the timeline lies after ``edits`` (sorted by start): after
    an edit's old end it shifts by the edit's change of length, inside one it is stretched."""
    shift = 0.0
    for e in edits:
        if frame > e.old_end + 1e-6:
            shift += e.delta
            continue
        if frame >= e.start - 1e-6 and e.delta:
            ratio = (e.new_end - e.start) / (e.old_end - e.start) if e.old_end > e.start else 1.0
            return shift + e.start + (frame - e.start) * ratio
        break
    return frame + shift


def _channel(c: Channel | None, node: Node, node_id: int, path: str, edits: list[ClipEdit],
             zero: float, per_frame: float, span: tuple[float, float]) -> Channel:
    """One timeline channel with the edits written in (``c`` None: a node the timeline did not
    animate, resting outside the edited frames)."""
    if c is not None:
        lua = (c.times.astype(np.float64) - zero) / per_frame
        values = c.key_values().astype(np.float64)
    else:
        rest = _rest(node, path)
        lua, values = np.array(span), np.stack([rest, rest])
    whole = np.floor(lua + 1e-3)            # (a jump's later keys sit just after their frame)
    keep = np.ones(len(lua), bool)
    new_frames, new_values = [], []
    for e in edits:
        v = e.values.get((node_id, path))
        if v is None:
            continue
        keep &= ~((whole >= e.start) & (whole <= e.old_end))
        first = move(edits, e.start)
        new_frames.append(first + np.arange(len(v), dtype=np.float64))
        new_values.append(v)
        if c is None:           # rest just outside the range (the other clips stay still)
            new_frames.append(np.array([first - 1, first + len(v)], dtype=np.float64))
            new_values.append(np.stack([_rest(node, path)] * 2))
    moved = np.array([move(edits, f) for f in lua[keep]])
    frames = np.concatenate([moved, *new_frames])
    vals = np.concatenate([values[keep], *new_values])
    order = np.argsort(frames, kind="stable")
    frames, vals = frames[order], vals[order]
    lo, hi = move(edits, span[0]), move(edits, span[1])
    inside = (frames >= lo - 1e-6) & (frames <= hi + 1e-6) if c is None else np.ones(len(frames), bool)
    frames, vals = frames[inside], vals[inside]
    times = (zero + frames * per_frame).astype(np.float32)
    step = np.ones(len(times), bool)
    step[1:] = times[1:] > times[:-1]            # (float32 times must increase)
    interpolation = "STEP" if c is not None and c.interpolation == "STEP" else "LINEAR"
    return Channel(node_id, path, times[step], vals[step], interpolation)


def _rewrite(scene: Scene, timeline: Animation, edits: list[ClipEdit], zero: float,
             per_frame: float) -> Animation:
    """The timeline with ``edits`` written in and the frames after them moved."""
    span = (min((float(c.times[0]) - zero) / per_frame for c in timeline.channels),
            max((float(c.times[-1]) - zero) / per_frame for c in timeline.channels))
    by = {(c.node, c.path): c for c in timeline.channels}
    wanted = {key for e in edits for key in e.values}
    out = Animation(timeline.name, [], copy.deepcopy(timeline.extras))
    for c in timeline.channels:
        if c.path in _PATHS:
            out.channels.append(_channel(c, scene.nodes[c.node], c.node, c.path, edits, zero,
                                         per_frame, span))
        else:
            out.channels.append(c)
    for node_id, path in sorted(wanted - by.keys()):
        out.channels.append(_channel(None, scene.nodes[node_id], node_id, path, edits, zero,
                                     per_frame, span))
    total = sum(e.delta for e in edits)
    if total and isinstance(out.extras.get("b3d_frames"), int):
        out.extras["b3d_frames"] = max(0, out.extras["b3d_frames"] + total)
    return out


def _anim_of(node: Node) -> list[Any] | None:
    native = node.extras.get("b3d")
    anim = native.get("anim") if isinstance(native, dict) else None
    return anim if isinstance(anim, list) and len(anim) == 3 and isinstance(anim[1], int) else None


def _holder_with_frames(scene: Scene, timeline: Animation, total: int) -> Scene:
    """``scene`` whose ANIM node (the timeline's holder: as the B3D writer finds it, by index
    and name, else by name, as Blender renumbers nodes) counts ``total`` more frames."""
    with_anim = [i for i, n in enumerate(scene.nodes) if _anim_of(n) is not None]
    holder = timeline.extras.get("b3d_holder")
    if not (holder in with_anim and scene.nodes[holder].name == timeline.name):
        named = [i for i in with_anim if scene.nodes[i].name == timeline.name]
        holder = named[0] if named else (with_anim[0] if len(with_anim) == 1 else None)
    if not total or holder is None:
        return scene
    anim = _anim_of(scene.nodes[holder])
    assert anim is not None         # (holder is one of with_anim)
    node = copy.copy(scene.nodes[holder])
    node.extras = {**node.extras, "b3d": {**node.extras["b3d"],
                                          "anim": [anim[0], max(0, anim[1] + total), anim[2]]}}
    out = copy.copy(scene)
    out.nodes = [node if i == holder else n for i, n in enumerate(scene.nodes)]
    return out


# -- what the mod's Lua must be told --------------------------------------------------------------

def lua_fields(api: str, name: str, start: float, end: float) -> str:
    """A clip's range as the registration's ``animation`` table writes it."""
    if api in ("mobs_redo", "mcl_mobs"):
        return f"{name}_start = {start:g}, {name}_end = {end:g}"
    if api == "player_api":
        return f"{name} = {{x = {start:g}, y = {end:g}}}"
    return f"{name} = {{range = {{x = {start:g}, y = {end:g}}}}}"


def _registrations(scene: Scene, clips: list[Animation]) -> list[dict[str, Any]]:
    rec = scene.extras.get("luanti")
    regs = rec.get("registrations") if isinstance(rec, dict) else None
    if isinstance(regs, list) and regs:
        return [r for r in regs if isinstance(r, dict)]
    # (the scene's record lost: the clips' own records, one registration each)
    out: dict[str, dict[str, Any]] = {}
    for a in clips:
        c = a.extras[CLIP]
        reg = out.setdefault(str(c.get("registration", "")), {
            "name": c.get("registration", ""), "api": "", "source": "", "clips": []})
        reg["clips"].append({"name": c.get("clip", a.name), "start": c.get("start"),
                             "end": c.get("end")})
    return list(out.values())


def _notify(scene: Scene, clips: list[Animation], edits: list[ClipEdit], edited: set[str]) -> None:
    """A ClipNotice per registration with clips that moved; one for each unedited clip (not
    in ``edited``) that plays an edited clip's frames."""
    resized = [e.name for e in edits if e.delta]
    for reg in _registrations(scene, clips):
        fields = []
        for c in reg.get("clips") or []:
            try:
                start, end = float(c["start"]), float(c["end"])
            except (TypeError, KeyError, ValueError):
                continue
            new_start, new_end = round(move(edits, start), 3), round(move(edits, end), 3)
            if (new_start, new_end) != (start, end):
                fields.append(lua_fields(str(reg.get("api", "")), str(c.get("name")), new_start, new_end))
        if fields:
            where = f" ({reg['source']})" if reg.get("source") else ""
            warnings.warn(ClipNotice(
                f"the edited clip{'s' if len(resized) > 1 else ''} {', '.join(map(repr, resized))} "
                f"changed length and the frames after moved: in the mod's Lua, "
                f"{reg.get('name')}{where}, set these fields of its animation table: "
                f"{', '.join(fields)}"), stacklevel=4)
    for a in clips:
        c = a.extras[CLIP]
        name = str(c.get("name") or a.name)
        if name in edited:
            continue
        try:
            start, end = float(c["start"]), float(c["end"])
        except (TypeError, KeyError, ValueError):
            continue
        over = [e.name for e in edits if start <= e.old_end and e.start <= end]
        if over:
            warnings.warn(ClipNotice(
                f"clip {name!r} (unedited) plays Lua frames {start:g}–{end:g}, which the "
                f"edited {', '.join(map(repr, over))} now fill{'s' if len(over) == 1 else ''}: "
                "it plays the edit too"), stacklevel=4)


def fold_edited_clips(scene: Scene) -> Scene:
    """``scene`` with its edited clip animations written into the timeline (see the module
    docstring); ``scene`` itself when no clip was edited (a shallow copy otherwise: the
    caller's scene is not changed). The clip animations stay for ``undress`` to drop."""
    clips = [a for a in scene.animations if isinstance(a.extras.get(CLIP), dict)]
    timeline = next((a for a in scene.animations if not isinstance(a.extras.get(CLIP), dict)), None)
    if not clips or timeline is None or not timeline.channels:
        return scene
    zero, per_frame = lua_frame_times(timeline)
    found = [e for a in clips if (e := _clip_edit(scene, timeline, a, zero, per_frame)) is not None]
    if not found:
        return scene
    edits = _settle(found)
    _notify(scene, clips, edits, {e.name for e in found})
    out = copy.copy(scene)
    new = _rewrite(scene, timeline, edits, zero, per_frame)
    out.animations = [new if a is timeline else a for a in scene.animations]
    return _holder_with_frames(out, timeline, sum(e.delta for e in edits))
