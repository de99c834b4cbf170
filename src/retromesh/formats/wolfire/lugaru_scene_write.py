"""Scene -> Lugaru skeleton + animations (the way back of :mod:`.lugaru_scene_read`).

Lugaru animates joint positions; the muscles' rotations are derived from them when the game
draws the character. So:

* The skeleton file comes from the root node's kept ``lugaru_skeleton`` (every field: joints,
  muscles and their vertex lists, forward joints, trailing bytes). Joint positions are the
  joint empties' rest translations (``lugaru_joint`` extras, else their body-part names), the
  kept values wherever the scene's agree with them to 1e-5, or when the empties stand where
  an animation starts (Blender exports an animated object at its current location: that is
  a pose, not a new skeleton). A scene without that kept
  skeleton (a model made elsewhere) has no muscles to write: DocumentError.
* Each glTF animation becomes one animation file (name: the ``lugaru_animation`` extras,
  else the animation's name, without Blender's ``_<object>`` suffix). Its frames are the
  kept file's frames when it fits (sampled at the times ``to_scene`` gave them), else one
  frame per key time of the joint empties (speeds from the gaps between keys, as
  ``DoAnimations`` plays them). Joint positions are the joint empties' translations; kept
  positions are reused where they agree to 1e-5. Twists, on-ground flags, labels and weapon
  targets are the kept file's when the frame count is unchanged, else zero (LossWarning).
* A bone (muscle) posed in the scene (Blender: the armature posed) while the joint empties
  keep their keys carries its two joints along rigidly from the rest pose; a joint shared by
  two posed bones takes the mean; the joint positions are written, with a LossWarning: the
  game recomputes each muscle's turn about its own line from the body's forward direction.
  When both the bones and the empties were edited, the empties win (LossWarning).
"""
from __future__ import annotations

import copy
import json
import re
import warnings
from typing import Any

import numpy as np

from ... import jsoncodec
from ...errors import DocumentError, LossWarning, RetromeshError
from ...scene import Animation, Scene
from ...transforms import quat_to_matrix
from . import lugaru_animation as la, lugaru_skeleton as ls
from .lugaru_character import LugaruCharacter
from .lugaru_pose import muscle_angles, muscle_rotations, rotations_as_quats
from .lugaru_scene_read import ANIMATIONS_KEY, SKELETON_KEY, frame_times

__all__ = ["scene_to_character"]

TOL = 1e-5
MAX_FRAMES = 100000


def _decode(text: Any, kind: type) -> Any:
    if not isinstance(text, str):
        return None
    try:
        doc = jsoncodec.decode(json.loads(text))
    except (ValueError, TypeError, RetromeshError):
        return None
    return doc if isinstance(doc, kind) else None


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= TOL * (1 + np.abs(b))))


def _root(scene: Scene) -> int:
    for i, n in enumerate(scene.nodes):
        if isinstance(n.extras.get(SKELETON_KEY), str):
            return i
    raise DocumentError("this scene was not made from a Lugaru skeleton (no lugaru_skeleton "
                        "in a node's extras): Lugaru's muscles and their vertex lists cannot be "
                        "made up (export with custom properties on in Blender)")


def _joint_nodes(scene: Scene, root: int, count: int, labels: np.ndarray) -> list[int | None]:
    """Node of each joint: by its ``lugaru_joint`` extras, else by its body-part name."""
    out: list[int | None] = [None] * count
    for i, n in enumerate(scene.nodes):
        j = n.extras.get("lugaru_joint")
        if isinstance(j, int) and 0 <= j < count and out[j] is None:
            out[j] = i
    by_name = {n.name: i for i, n in enumerate(scene.nodes)}
    for j in range(count):
        if out[j] is None and 0 <= labels[j] < len(ls.BODYPARTS):
            out[j] = by_name.get(ls.BODYPARTS[labels[j]])
    return out


def _rest_positions(scene: Scene, root: int, nodes: list[int | None], kept: np.ndarray) -> np.ndarray:
    worlds = scene.world_matrices()
    inv = np.linalg.inv(worlds[root])
    pos = np.asarray(kept, np.float64).copy()
    for j, n in enumerate(nodes):
        if n is not None:
            pos[j] = (inv @ worlds[n])[:3, 3]
    return pos


def _posed(scene: Scene, nodes: list[int | None], rest: np.ndarray) -> bool:
    """The empties stand where an animation puts them at its start: an exporter wrote the
    pose it was showing (Blender writes animated objects' current location), not a new rest."""
    for anim in scene.animations:
        moved = [(j, c) for j, n in enumerate(nodes) if n is not None
                 for c in anim.channels if c.node == n and c.path == "translation"]
        if moved and all(_same(rest[j], c.values[0]) for j, c in moved):
            return True
    return False


def _anim_name(anim: Animation, root_name: str) -> str:
    name = anim.extras.get("lugaru_animation")
    if isinstance(name, str) and name:
        return name
    # Blender names actions <animation>_<object>
    return re.sub(rf"_{re.escape(root_name)}$", "", anim.name or "animation")


def _channels(anim: Animation, node: int, path: str) -> Any:
    return next((c for c in anim.channels if c.node == node and c.path == path), None)


def _frames(anim: Animation, nodes: list[int | None],
            kept: la.AnimationFile | None) -> tuple[np.ndarray, bool]:
    """(frame times, whether they are the kept file's)."""
    if kept is not None and kept.frame_count:
        times = frame_times(kept.speed)
        end = max((float(c.times[-1]) for c in anim.channels), default=0.0)
        if abs(end - times[-1]) <= 1e-3 * max(1.0, times[-1]):
            return times, True
    keys = [c.times for c in anim.channels if c.node in nodes and c.path == "translation"]
    if not keys:
        return np.zeros(0), False
    times = np.unique(np.concatenate(keys).astype(np.float64))
    if len(times) > MAX_FRAMES:
        raise DocumentError(f"animation {anim.name!r} has {len(times)} key times; a Lugaru "
                            f"animation is one frame per key (at most {MAX_FRAMES})")
    return times, False


def _speeds(times: np.ndarray) -> np.ndarray:
    """Speeds that make ``DoAnimations`` play the frames at ``times`` (each gap 1/(2 speed))."""
    if len(times) < 2:
        return np.full(len(times), 4.0)
    gaps = np.diff(times)
    s = 1 / (2 * np.maximum(gaps, 1e-6))
    return np.concatenate([s, s[-1:]])


def _animation(anim: Animation, skel: ls.SkeletonFile, nodes: list[int | None], rest: np.ndarray,
               kept: la.AnimationFile | None, name: str,
               muscle_of: dict[int, int]) -> la.AnimationFile | None:
    times, kept_times = _frames(anim, nodes, kept)
    if not len(times):
        warnings.warn(f"animation {name}: no joint moves (Lugaru animates the joint empties); "
                      "left out", LossWarning, stacklevel=4)
        return None
    nf, nj = len(times), len(rest)
    pos = np.repeat(rest[None], nf, axis=0)
    for j, n in enumerate(nodes):
        ch = _channels(anim, n, "translation") if n is not None else None
        if ch is not None:
            pos[:, j] = ch.sample(times.astype(np.float32))
    out = copy.deepcopy(kept) if kept is not None and kept.frame_count == nf \
        and kept.joint_count == nj else None
    if out is None:
        if kept is not None:
            warnings.warn(f"animation {name}: {nf} frames now, {kept.frame_count} in the file: "
                          "twists, on-ground flags, labels and weapon targets are zero",
                          LossWarning, stacklevel=4)
        z = np.zeros((nf, nj), ">f4")
        out = la.AnimationFile(pos.astype(">f4"), z, np.zeros((nf, nj), "u1"),
                               _speeds(times).astype(">f4"), z.copy(), np.zeros(nf, ">i4"),
                               0, np.zeros((nf, 3), ">f4"))
    elif not kept_times:
        out.speed = _speeds(times).astype(">f4")
    moved = kept is not None and kept.frame_count == nf and not _same(pos, kept.positions)
    pos = _posed_by_bones(anim, skel, pos, rest, times, name, muscle_of, moved)
    if not _same(pos, out.positions):
        out.positions = pos.astype(">f4")
    return out


def _posed_by_bones(anim: Animation, skel: ls.SkeletonFile, pos: np.ndarray, rest: np.ndarray,
                    times: np.ndarray, name: str, muscle_of: dict[int, int],
                    empties_moved: bool) -> np.ndarray:
    """Joint positions with the bones' edits in: in each frame where a bone (muscle) is posed
    other than its joints make it, it carries its two joints along rigidly from the rest
    pose (a joint shared by two posed bones takes the mean). When the joint empties were
    edited too, they win."""
    pos = np.asarray(pos, np.float64)
    i1 = np.asarray(skel.muscles["parent1"], np.int64)
    i2 = np.asarray(skel.muscles["parent2"], np.int64)
    want_q = rotations_as_quats(muscle_rotations(
        muscle_angles(pos, skel, hang=name.lower() == "hangon", rounded=True)))
    want_mid = (pos[:, i1] + pos[:, i2]) / 2
    rest_rot = muscle_rotations(muscle_angles(rest[None], skel))[0]
    rest_mid = (rest[i1] + rest[i2]) / 2
    t32 = times.astype(np.float32)
    acc = np.zeros_like(pos)
    count = np.zeros(pos.shape[:2])
    edited: list[int] = []
    for node, m in sorted(muscle_of.items(), key=lambda kv: kv[1]):
        if not 0 <= m < len(i1):
            continue
        rc, tc = _channels(anim, node, "rotation"), _channels(anim, node, "translation")
        if rc is None and tc is None:
            continue
        q = rc.sample(t32).astype(np.float64) if rc is not None else want_q[:, m]
        t = tc.sample(t32).astype(np.float64) if tc is not None else want_mid[:, m]
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        turned = np.abs(np.einsum("fi,fi->f", q, want_q[:, m])) < 0.999
        shifted = np.any(np.abs(t - want_mid[:, m]) > 1e-2 * (1 + np.abs(want_mid[:, m])), axis=1)
        frames = turned | shifted                 # only the frames posed differently
        if not np.any(frames):
            continue
        edited.append(m)
        rot = quat_to_matrix(q[frames])
        for j in (i1[m], i2[m]):
            local = rest_rot[m].T @ (rest[j] - rest_mid[m])
            acc[frames, j] += t[frames] + np.einsum("fij,j->fi", rot, local)
            count[frames, j] += 1
    if not edited:
        return pos
    if empties_moved:
        warnings.warn(f"animation {name}: muscles {edited} are posed other than their joints "
                      "make them, and the joint empties were edited too: the joints are written; "
                      "Lugaru derives muscle rotations from joint positions", LossWarning,
                      stacklevel=5)
        return pos
    out = pos.copy()
    sel = count > 0
    out[sel] = acc[sel] / count[sel][:, None]
    warnings.warn(f"animation {name}: muscles {edited} posed in the scene are written as the "
                  "joint positions they carry (Lugaru stores joint positions; the game "
                  "recomputes each muscle's turn about its own line from the body's forward "
                  "direction)", LossWarning, stacklevel=5)
    return out


def scene_to_character(scene: Scene, *, native: bool = True) -> LugaruCharacter:
    """The skeleton and animations of a scene made by :func:`~.lugaru_scene_read.skeleton_to_scene`
    (``native=False`` is refused: Lugaru's muscles cannot be made from a glTF skin)."""
    root = _root(scene)
    extras = scene.nodes[root].extras
    skel = _decode(extras.get(SKELETON_KEY), ls.SkeletonFile)
    if skel is None or not native:
        raise DocumentError("the kept lugaru_skeleton of the root node could not be read")
    labels = np.asarray(skel.joints["label"], np.int64)
    nodes = _joint_nodes(scene, root, len(skel.joints), labels)
    rest = _rest_positions(scene, root, nodes, skel.joints["position"])
    if not _same(rest, skel.joints["position"]) and not _posed(scene, nodes, rest):
        skel.joints["position"] = rest.astype(">f4")
    rest = np.asarray(skel.joints["position"], np.float64)
    table = extras.get(ANIMATIONS_KEY)
    try:
        table = json.loads(table) if isinstance(table, str) else {}
    except ValueError:
        table = {}
    muscle_of = {i: n.extras["lugaru_muscle"] for i, n in enumerate(scene.nodes)
                 if isinstance(n.extras.get("lugaru_muscle"), int)}
    anims: dict[str, la.AnimationFile] = {}
    for anim in scene.animations:
        name = _anim_name(anim, scene.nodes[root].name)
        kept = _decode(table.get(name), la.AnimationFile) if isinstance(table, dict) else None
        doc = _animation(anim, skel, nodes, rest, kept, name, muscle_of)
        if doc is not None:
            key, k = name, 2
            while key in anims:
                key, k = f"{name}#{k}", k + 1
            anims[key] = doc
    return LugaruCharacter(skel, anims)
