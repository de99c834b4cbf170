"""Scene -> Lugaru files (the way back of :mod:`.scene`): ``.solid`` models
(:func:`scene_to_solid`) and the skeleton with its animations (:func:`scene_to_character`).

``scene_to_solid``: every triangle primitive of the scene (node transforms applied, the
upright turn of a node made by ``solid_to_scene`` left out, any other mesh turned back by its kind's
rotation), vertices merged by position in the scene's vertex order (so an unedited model gets
the file's vertex order back: .solid -> .glb -> .solid is byte-identical for all 37 shipped
models), per-corner UVs kept (``gx = u``, ``gy = 1 - v``, or ``gy = v`` for characters),
winding written CCW (objects) or CW (``clockwise=True``, as characters and weapons are stored).
``kind``/``clockwise`` default to what ``solid_to_scene`` recorded in the node's extras; when those
are gone (Blender exports no custom properties by default) to the kind of the mesh node's name
(``Rabbit``, ``TreeTrunk``), a node whose own rotation is exactly that kind's being taken as
solid_to_scene's upright turn. ``kind="character"`` on a foreign (upright) mesh writes it upside
down, as Lugaru stores characters, and CW-outward unless ``clockwise=False``.
More than 32767 vertices or triangles is refused with a DocumentError.

The skeleton and its animations.

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
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ...arrays import distinct
from ...errors import DocumentError, LossWarning
from ...scene import Animation, Node, Scene, unheld
from ...transforms import quat_to_matrix
from . import animation as la, skeleton as ls, solid
from .character import LugaruCharacter
from .pose import muscle_angles, muscle_rotations, rotations_as_quats
from .scene import frame_times, model_kind
from .scene_extras import SKELETON_KEY, UPRIGHT_KEY, kept_animation, kept_animations, kept_skeleton
from .solid_kinds import CW_KINDS, ROTATIONS, kind_of_name, rotation_matrix, rotation_quat

__all__ = ["scene_to_character", "scene_to_solid"]

TOL = 1e-5
MAX_FRAMES = 100000


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
    times = distinct(np.concatenate(keys).astype(np.float64))
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
    """The skeleton and animations of a scene made by :func:`~.scene.skeleton_to_scene`
    (``native=False`` is refused: Lugaru's muscles cannot be made from a glTF skin)."""
    root = _root(scene)
    # (the models are .solid files of their own: only what the animations cannot hold)
    weights = sorted({a.name for a in scene.animations for c in a.channels if c.path == "weights"})
    if weights:
        warnings.warn(f"Lugaru animations: the morph weight keys of {weights} dropped (the "
                      "format has no place for them)", LossWarning, stacklevel=2)
    extras = scene.nodes[root].extras
    skel = kept_skeleton(extras)
    if skel is None or not native:
        raise DocumentError("the kept lugaru_skeleton of the root node could not be read")
    labels = np.asarray(skel.joints["label"], np.int64)
    nodes = _joint_nodes(scene, root, len(skel.joints), labels)
    rest = _rest_positions(scene, root, nodes, skel.joints["position"])
    if not _same(rest, skel.joints["position"]) and not _posed(scene, nodes, rest):
        skel.joints["position"] = rest.astype(">f4")
    rest = np.asarray(skel.joints["position"], np.float64)
    table = kept_animations(extras)
    muscle_of = {i: n.extras["lugaru_muscle"] for i, n in enumerate(scene.nodes)
                 if isinstance(n.extras.get("lugaru_muscle"), int)}
    anims: dict[str, la.AnimationFile] = {}
    for anim in scene.animations:
        name = _anim_name(anim, scene.nodes[root].name)
        kept = kept_animation(table, name)
        doc = _animation(anim, skel, nodes, rest, kept, name, muscle_of)
        if doc is not None:
            key, k = name, 2
            while key in anims:
                key, k = f"{name}#{k}", k + 1
            anims[key] = doc
    return LugaruCharacter(skel, anims)


def _scene_kind(scene: Scene, character: bool | None, kind: str | None) -> tuple[str, bool]:
    """(kind, whether it was recorded or named rather than guessed) of a scene's meshes."""
    meshes = [n for n in scene.nodes if n.mesh is not None]
    if kind is not None or character is not None:
        return model_kind(None, meshes[0].name if meshes else None, character, kind), True
    for n in meshes:
        k = n.extras.get("lugaru_kind")
        if isinstance(k, str) and k in ROTATIONS:
            return k, True
        if n.extras.get("lugaru_character"):
            return "character", True
    for n in meshes:                    # extras lost (Blender exports none by default): names
        k = kind_of_name(n.name)
        if k is not None:
            return k, True
    return "plain", False


def _is_upright(node: Node, kind: str) -> bool:
    """The node carries solid_to_scene's upright rotation: marked so, or (marks lost) a node whose
    own rotation is exactly the kind's, with no translation or scale."""
    if node.extras.get(UPRIGHT_KEY):
        return True
    if kind == "plain" or "lugaru_kind" in node.extras:
        return False
    q = np.asarray(node.rotation, np.float64)
    r = np.asarray(rotation_quat(kind))
    return (min(np.abs(q - r).max(), np.abs(q + r).max()) < 1e-5
            and np.abs(np.asarray(node.translation)).max() < 1e-6
            and np.abs(np.asarray(node.scale) - 1).max() < 1e-6)


def scene_to_solid(scene: Scene, *, clockwise: bool | None = None,
               character: bool | None = None, kind: str | None = None) -> solid.SolidFile:
    """``kind`` (:mod:`.solid_kinds`), ``clockwise`` and ``character`` default to what
    ``solid_to_scene`` recorded on the mesh node (``lugaru_kind``/``lugaru_clockwise``/
    ``lugaru_character`` extras), else to the kind of the mesh node's name (``TreeTrunk``),
    else ``plain`` (no rotation, counter-clockwise). A model is written as Lugaru stores it:
    the game's load-time rotation is undone (a node carrying solid_to_scene's upright rotation
    just leaves it out) and characters and weapons are written clockwise-outward unless told."""
    kind, _ = _scene_kind(scene, character, kind)
    _warn_unheld(scene, ".solid", modes=(0, 1, 2, 3, 4, 5, 6), skins=False, animations=False)
    is_char = kind == "character"
    marks = [n.extras for n in scene.nodes if n.mesh is not None]
    if clockwise is None:
        if any("lugaru_clockwise" in e for e in marks):
            clockwise = any(bool(e.get("lugaru_clockwise")) for e in marks)
        else:
            names = [kind_of_name(n.name) for n in scene.nodes if n.mesh is not None]
            belt = any(Path(str(n.name)).stem.lower().endswith("belt")
                       for n in scene.nodes if n.mesh is not None)
            clockwise = kind in CW_KINDS and not (belt and kind in names)
    game = np.eye(4)
    game[:3, :3] = rotation_matrix(kind).T             # undo the game's load-time turn
    worlds = scene.world_matrices()
    parents = scene.parents()
    pos_l, uv_l, tri_l = [], [], []
    base = 0
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        if node.skin is None and _is_upright(node, kind):
            # leave the upright rotation out: undo the node's own local transform
            world = worlds[parents[ni]] if parents[ni] >= 0 else np.eye(4)
        else:
            world = np.eye(4) if node.skin is not None else worlds[ni]
            world = game @ world
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4:
                warnings.warn("non-triangle primitive dropped", LossWarning, stacklevel=2)
                continue
            n = len(p.positions)
            pos = p.positions.astype(np.float64)
            if not np.array_equal(world, np.eye(4)):
                pos = (np.c_[pos, np.ones(n)] @ world.T)[:, :3]
            pos_l.append(pos)
            uv_l.append(p.uvs[0].astype(np.float64) if p.uvs else np.zeros((n, 2)))
            idx = (p.indices if p.indices is not None else np.arange(n)).astype(np.int64)
            t = idx.reshape(-1, 3)
            if np.linalg.det(world[:3, :3]) < 0:
                t = t[:, [0, 2, 1]]
            tri_l.append(t + base)
            base += n
    if not pos_l:
        return solid.SolidFile()
    pos = np.concatenate(pos_l)
    uv = np.concatenate(uv_l)
    tri = np.concatenate(tri_l) if tri_l else np.zeros((0, 3), np.int64)
    # merge vertices by position, in the order of the scene's vertices (solid_to_scene keeps the
    # file's order, so an unedited model gets its vertex order back); UVs live on the corners
    p32 = pos.astype("<f4")
    _, first, inverse = np.unique(p32.view("<u4").reshape(-1, 3), axis=0, return_index=True,
                                  return_inverse=True)
    inverse = inverse.reshape(-1)
    used = distinct(inverse[tri.reshape(-1)]) if len(tri) else np.zeros(0, np.int64)
    used = used[np.argsort(first[used], kind="stable")]
    remap = np.full(len(first), -1, np.int64)
    remap[used] = np.arange(len(used))
    verts = p32[first[used]].astype(">f4")
    corners = remap[inverse[tri]]
    uvc = uv[tri]                                    # (T, 3, 2)
    if clockwise:
        corners = corners[:, [0, 2, 1]]
        uvc = uvc[:, [0, 2, 1]]
    if len(verts) > solid.MAX_COUNT or len(corners) > solid.MAX_COUNT:
        raise DocumentError(f".solid holds at most {solid.MAX_COUNT} vertices and "
                            f"{solid.MAX_COUNT} triangles; "
                            f"this scene has {len(verts)} distinct vertex positions and "
                            f"{len(corners)} triangles")
    tris = np.zeros(len(corners), solid.TRI_DTYPE)
    tris["i0"], tris["i1"], tris["i2"] = corners[:, 0], corners[:, 1], corners[:, 2]
    tris["u0"], tris["u1"], tris["u2"] = corners[:, 1], corners[:, 2], 0
    tris["gx"] = uvc[:, :, 0]
    tris["gy"] = uvc[:, :, 1] if is_char else 1.0 - uvc[:, :, 1]
    return solid.SolidFile(verts.reshape(-1, 3), tris)


def _warn_unheld(scene: Scene, target: str, **held: Any) -> None:
    """A LossWarning naming each part of ``scene`` the ``target`` file has no place for
    (:func:`retromesh.scene.unheld`)."""
    for what in unheld(scene, **held):
        warnings.warn(f"{target}: {what} dropped (the format has no place for it)", LossWarning,
                      stacklevel=3)
