"""Scene -> Lost Saga ``.msh`` / ``.skl`` / ``.ani`` / ``.cms`` / material script (the
``from_scene`` side; the mapping is in :mod:`.scene`)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import extras as xt, restore, restore_editor
from ...arrays import distinct, isin
from ...errors import DocumentError, LossWarning
from ...filenames import animation_keys, companion
from ...geometry import compute_normals
from ...hierarchy import nearest_in
from ...scene import Animation, Channel, Scene, Skin
from ...transforms import compose_trs, decompose_trs, inverse, quat_normalize
from . import ani as ani_mod, material as mat_mod, msh as msh_mod
from .ani import AniEvent, AniFile, AniTrack
from .cms import CmsFile
from .common import (
    ANIMATION_VER_COMP4,
    ANIMATION_VER_COMP8,
    ANIMATION_VER_DEFAULT,
    MESH_VERSION,
    VERTEX_COLOR_MESH_VERSION,
    encode_name,
    quat_from_gltf,
    text,
    unit_rows,
    vec_from_gltf,
)
from .msh import MshFile
from .quatcodec import encode_comp4, encode_comp8
from .scene_extras import (
    animation_extras,
    kept_key_times,
    kept_script,
    put_back_keys,
    put_back_mesh,
    put_back_poses,
    resplit,
    restore_mesh_extras,
    root_parent,
    track_weight,
)
from .skl import POSE_DTYPE, SklBone, SklFile

__all__ = ["msh_from_scene", "skl_from_scene", "ani_from_scene", "cms_from_scene",
           "script_from_scene", "skeleton_from_scene", "skeleton_poses"]


# == from_scene ================================================================================

_ANI_VERSIONS = {"default": ANIMATION_VER_DEFAULT, "4000": ANIMATION_VER_DEFAULT,
                 "comp4": ANIMATION_VER_COMP4, "4001": ANIMATION_VER_COMP4,
                 "comp8": ANIMATION_VER_COMP8, "4002": ANIMATION_VER_COMP8}


def _ani_version(value: Any) -> int:
    key = str(value).lower()
    if key not in _ANI_VERSIONS:
        raise DocumentError(f"animation_format must be default, comp4 or comp8, got {value!r}")
    return _ANI_VERSIONS[key]


def _skinned_nodes(scene: Scene) -> list[int]:
    return [i for i, n in enumerate(scene.nodes) if n.mesh is not None and n.skin is not None]


def _joint_parents(scene: Scene, joints: list[int]) -> list[int]:
    """Parent bone (index into ``joints``, -1 = root) of every joint: its nearest joint ancestor."""
    pos = {n: i for i, n in enumerate(joints)}
    up = nearest_in(scene.parents(), pos, include_self=False)     # one pass down the tree
    return [pos[up[n]] if up[n] >= 0 else -1 for n in joints]


def _unscale(world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint world matrices without their (uniform) scale, and that scale per joint.

    .skl/.ani hold no scale, so a constant uniform joint scale (a B3D root scaled by 3.77, an
    exporter's Armature scaled by 0.01) is baked instead: bones use the rigid part of their world
    matrix, child offsets are multiplied by the parent's scale and the inverse binds by the bone's
    own scale -- the skinned vertices stay where they are."""
    sig = np.cbrt(np.abs(np.linalg.det(world[:, :3, :3])))
    sig = np.where(np.isfinite(sig) & (sig > 1e-12), sig, 1.0)
    rigid = world.copy()
    rigid[:, :3, :3] /= sig[:, None, None]
    return rigid, sig


def skl_from_scene(scene: Scene, *, animation_format: Any = None, rounding: str = "engine",
                   **options: Any) -> SklFile | dict[str, Any]:
    """The ``.skl`` of the scene's skeleton, with one ``.ani`` per animation beside it (as
    ``msh_from_scene`` writes them): ``{"": skl, "_<name>.ani": ani}``, just the ``SklFile``
    without animations."""
    scene = restore_editor.put_back_written(scene)
    world = scene.world_matrices()
    skl, joints, parents = _skeleton(scene, world)
    anis = _animations(scene, joints, skl.names(), parents, animation_format, rounding, ".skl",
                       world)
    return {"": skl, **anis} if anis else skl


def skeleton_from_scene(scene: Scene) -> SklFile:
    """The ``.skl`` of the scene's skeleton alone."""
    return _skeleton(scene)[0]


def skeleton_poses(scene: Scene) -> np.ndarray:
    """The poses (``POSE_DTYPE``) the ``.skl`` of the scene's skeleton gets from the scene, with
    no records put back: :func:`skeleton_from_scene`'s, bit for bit (the same steps), without
    its names, bones and warnings (the records compare these poses with the file's)."""
    joints, parents, rigid, sig, ibm = _bone_frame(scene)
    return _bone_poses(scene, joints, parents, rigid, sig, ibm, warn=False)


def _bone_frame(scene: Scene, world: np.ndarray | None = None
                ) -> tuple[list[int], list[int], np.ndarray, np.ndarray, np.ndarray]:
    """The scene node of every bone, every bone's parent bone (-1 = root), the bones' world
    matrices without their scale, that scale (:func:`_unscale`) and the inverse binds with it
    (``world``: the scene's world matrices, when the caller has them)."""
    skinned = _skinned_nodes(scene)
    world = scene.world_matrices() if world is None else world
    first_skin = scene.nodes[skinned[0]].skin if skinned else None
    if first_skin is not None:                                 # (skinned)
        skin = scene.skins[first_skin]
    elif scene.skins:
        skin = scene.skins[0]
    else:
        # no skin: every node without a mesh is a bone
        joints = [i for i, n in enumerate(scene.nodes) if n.mesh is None]
        if not joints:
            raise DocumentError("skl: the scene has no skin and no joint nodes")
        skin = Skin(joints=joints)
    # non-joint nodes between joints (an exporter's "Armature" node) are folded into the bones;
    # the .ani keys are moved into the same frames (_key_frames)
    parents = _joint_parents(scene, skin.joints)
    ibm = (np.asarray(skin.inverse_bind_matrices, dtype=np.float64)
           if skin.inverse_bind_matrices is not None else inverse(world[skin.joints]))
    rigid, sig = _unscale(world[skin.joints])
    ibm = ibm.copy()
    ibm[:, :3, :] *= sig[:, None, None]                          # diag(sig, sig, sig, 1) @ ibm
    return list(skin.joints), parents, rigid, sig, ibm


def _bone_poses(scene: Scene, joints: list[int], parents: list[int], rigid: np.ndarray,
                sig: np.ndarray, ibm: np.ndarray, warn: bool) -> np.ndarray:
    """The ``.skl`` poses of the bones (:func:`_bone_frame`); ``warn``: say what they drop."""
    n = len(joints)
    # a bone right below its .skl parent's node (a root: below none), nothing scaled: its
    # node's own translation and rotation (no matrix products: the bits come back)
    direct = _direct_bones(scene, joints, parents, sig)
    if warn or not direct.all():
        local = np.array([inverse(rigid[p]) @ rigid[k] if p >= 0 else rigid[k]
                          for k, p in enumerate(parents)]).reshape(-1, 4, 4)
        t, r, s = decompose_trs(local)
        if warn and not np.allclose(s, 1.0, atol=1e-4):
            warnings.warn("non-uniform joint scale is not kept by .skl (LocalTM has none)",
                          LossWarning, stacklevel=4)
    else:               # every bone direct: the local matrices' values are all replaced below
        t, r = np.zeros((n, 3)), np.zeros((n, 4))
    for b in np.nonzero(direct)[0].tolist():
        t[b], r[b] = scene.nodes[joints[b]].translation, scene.nodes[joints[b]].rotation
    poses = np.zeros(n, POSE_DTYPE)
    poses["local_position"] = vec_from_gltf(t)
    poses["local_rotation"] = quat_from_gltf(r)
    it, ir, iscale = decompose_trs(ibm)
    if warn and not np.allclose(np.abs(iscale), 1.0, atol=1e-4):
        warnings.warn("inverse bind matrices with scale: the .skl inverse pair holds only rotation "
                      "and translation (scale dropped)", LossWarning, stacklevel=4)
    poses["inverse_position"] = vec_from_gltf(it)
    poses["inverse_rotation"] = quat_from_gltf(ir)
    bind = inverse(ibm)
    smat = np.diag([1.0, 1.0, -1.0, 1.0])
    poses["object_tm"] = np.swapaxes(smat @ bind @ smat, -1, -2)       # D3DX row-vector form
    return poses


def _skeleton(scene: Scene, world: np.ndarray | None = None) -> tuple[SklFile, list[int], list[int]]:
    """The ``.skl``, the scene node of every bone and every bone's parent bone (-1 = root)."""
    joints, parents, rigid, sig, ibm = _bone_frame(scene, world)
    poses = _bone_poses(scene, joints, parents, rigid, sig, ibm, warn=True)
    names = []
    seen: set[bytes] = set()
    for k, j in enumerate(joints):
        nm = encode_name(scene.nodes[j].name or f"bone{k}")
        while nm in seen:
            nm += b"_"
        seen.add(nm)
        names.append(nm)
    bones = [SklBone(name=names[k], parent=names[parents[k]] if parents[k] >= 0
                     else root_parent(scene.nodes[j].extras))
             for k, j in enumerate(joints)]
    for k, p in enumerate(parents):
        if p >= 0:
            bones[p].children.append(names[k])
    kept = scene.extras.get("lostsaga_skeleton")
    kept = kept if isinstance(kept, dict) else {}
    linked = kept.get("linked_skeleton")
    version = kept.get("version")
    skl = SklFile(bones=bones, poses=put_back_poses(scene, poses),
                  linked_skeleton=encode_name(linked) if isinstance(linked, str) else b"")
    if isinstance(version, int) and not isinstance(version, bool) and 0 <= version < 2**31:
        skl.version = version
    if kept.get("linked_skeleton_absent") is True:
        skl.linked_skeleton = None
    return skl, joints, parents


def _direct_bones(scene: Scene, joints: list[int], parents: list[int], sig: np.ndarray
                  ) -> np.ndarray:
    """Per bone: its glTF parent is its ``.skl`` parent's node (none for a root) and neither
    is scaled, so its local transform is its node's TRS as it is."""
    n = len(joints)
    if not n:
        return np.zeros(0, bool)
    gparents = scene.parents()
    j = np.asarray(joints, np.int64)
    p = np.asarray(parents, np.int64)
    up = np.asarray([gparents[x] for x in joints], np.int64)
    want = np.where(p >= 0, j[np.maximum(p, 0)], -1)
    unscaled = (np.array([scene.nodes[x].scale for x in joints], np.float64).reshape(n, 3)
                == 1.0).all(axis=1)           # (np.array_equal per bone: 3 us a bone)
    flat = np.abs(sig - 1.0) <= 1e-6
    return (up == want) & unscaled & flat & np.where(p >= 0, flat[np.maximum(p, 0)], True)


def _key_frames(scene: Scene, joints: list[int], bone_parents: list[int], world: np.ndarray
                ) -> list:
    """Per bone, None or the ``(pre, post)`` matrices that take its glTF-local keys ``L`` to its
    rigid local TM relative to its ``.skl`` parent: ``pre @ L @ post``. ``pre`` holds the rest
    transforms of non-joint nodes in between (an exporter's ``Armature`` node) and the parent's
    baked scale, ``post`` the bone's own (see :func:`_unscale`); ``world``: the scene's world
    matrices."""
    gparents = scene.parents()
    _, sig = _unscale(world[joints])
    # every bone at once (numpy per bone made a 20,000-joint skin take seconds)
    m = len(joints)
    jarr = np.asarray(joints, dtype=np.int64).reshape(m)
    gp = np.asarray([gparents[n] for n in joints], dtype=np.int64).reshape(m)
    bp = np.asarray(bone_parents, dtype=np.int64).reshape(m)
    bpj = jarr[np.maximum(bp, 0)] if m else jarr
    between = (gp >= 0) & ~((bp >= 0) & (gp == bpj))
    pre = np.tile(np.eye(4), (m, 1, 1))
    top, mid = between & (bp < 0), between & (bp >= 0)
    pre[top] = world[gp[top]]
    pre[mid] = inverse(world[bpj[mid]]) @ world[gp[mid]]
    has_parent = bp >= 0
    pre[has_parent, :3, :] *= sig[bp[has_parent]][:, None, None]     # diag(s, s, s, 1) @ pre
    post = np.tile(np.eye(4), (m, 1, 1))
    post[:, [0, 1, 2], [0, 1, 2]] = (1.0 / sig)[:, None]
    eye = np.eye(4)
    trivial = np.all(np.abs(pre - eye) <= 1e-12 + 1e-5 * eye, axis=(1, 2)) & \
        np.all(np.abs(post - eye) <= 1e-12 + 1e-5 * eye, axis=(1, 2))     # np.allclose each
    return [None if trivial[k] else (pre[k], post[k]) for k in range(m)]


def _animation_to_ani(scene: Scene, anim: Animation, joints: list[int], names: list[bytes],
                      frames: list, version: int, rounding: str) -> AniFile:
    """The ``.ani`` of ``anim``; ``frames``: each bone's key frame (:func:`_key_frames`)."""
    by_node: dict[int, dict[str, Channel]] = {}
    for c in anim.channels:
        by_node.setdefault(c.node, {})[c.path] = c
    if any(c.interpolation == "CUBICSPLINE" for c in anim.channels):
        warnings.warn(f"animation {anim.name!r}: cubic-spline keys sampled linearly", LossWarning,
                      stacklevel=4)
    jset = set(joints)
    morphs = sorted({scene.nodes[c.node].name or f"node{c.node}" for c in anim.channels
                     if c.path == "weights"})
    if morphs:
        warnings.warn(f"animation {anim.name!r}: morph target weights are not kept by .ani "
                      f"({', '.join(morphs[:5])})", LossWarning, stacklevel=4)
    by_node = {n: {p: c for p, c in chs.items() if p != "weights"} for n, chs in by_node.items()}
    by_node = {n: chs for n, chs in by_node.items() if chs}
    others = sorted({scene.nodes[n].name or f"node{n}" for n in by_node if n not in jset})
    if others:
        warnings.warn(f"animation {anim.name!r}: channels of nodes that are not joints are not kept "
                      f"by .ani ({', '.join(others[:5])}{'...' if len(others) > 5 else ''})",
                      LossWarning, stacklevel=4)
    dt = ani_mod.key_dtype(version)
    ex = animation_extras(scene, anim)
    tracks = []
    # an animation laid on a longer timeline starts at 0 in the .ani; one read from a Lost Saga
    # file keeps its times as they were (its first key need not be at 0 ms)
    t0 = (0.0 if "lostsaga_version" in ex
          else min((float(c.times[0]) for c in anim.channels), default=0.0))
    end = 0
    scaled = False
    resampled = 0
    for k, node in enumerate(joints):
        chs = by_node.get(node)
        if not chs or not ({"rotation", "translation"} & chs.keys()):
            continue
        used = [c for p, c in chs.items() if p in ("rotation", "translation")]
        # .ani keys are interpolated linearly: a STEP channel gets a hold key 1 ms before each key
        holds = [c.times[1:].astype(np.float64) - 0.001 for c in used if c.interpolation == "STEP"]
        times = distinct(np.concatenate([c.times.astype(np.float64) for c in used] + holds))
        ms = np.round((times - t0) * 1000.0).astype(np.int64)
        keep = np.append(ms[1:] != ms[:-1], True)
        times, ms = times[keep], ms[keep]
        kept = kept_key_times(ex, names[k], ms)
        if kept is not None and not np.array_equal(kept, ms):
            resampled += not isin(ms, kept).all()
            # sampled at the glTF's own key times where they are the file's (keys 1 ms apart
            # are steps: a time off by float32 rounding would blend them)
            at = np.searchsorted(ms, kept).clip(0, len(ms) - 1)
            times = np.where(ms[at] == kept, times[at], kept / 1000.0 + t0)
            ms = kept
        nd = scene.nodes[node]
        rot = (_at_keys(chs["rotation"], times) if "rotation" in chs
               else np.tile(nd.rotation, (len(times), 1)))
        tr = (_at_keys(chs["translation"], times) if "translation" in chs
              else np.tile(nd.translation, (len(times), 1)))
        rot = quat_normalize(rot)
        sc = (chs["scale"].sample(times) if "scale" in chs
              else np.tile(nd.scale, (len(times), 1)))
        if frames[k] is not None:        # keys relative to the .skl parent, not the glTF parent
            pre, post = frames[k]
            tr, rot, sc = decompose_trs(pre @ compose_trs(tr, rot, sc) @ post)
        scaled |= not np.allclose(sc, 1.0, atol=1e-4)
        rot = quat_from_gltf(rot)
        keys = np.zeros(len(times), dt)
        keys["translation"] = vec_from_gltf(tr)
        keys["time"] = ms
        if version == ANIMATION_VER_COMP4:
            keys["packed"] = encode_comp4(rot, rounding=rounding)
        elif version == ANIMATION_VER_COMP8:
            keys["high"], keys["low"] = encode_comp8(rot, rounding=rounding)
        else:
            keys["rotation"] = rot
        end = max(end, int(ms[-1]))
        if frames[k] is None and version == ANIMATION_VER_DEFAULT:
            put_back_keys(ex, names[k], keys, chs, times, restore.tolerance(scene.extras))
        tracks.append(AniTrack(bone=names[k], weight=track_weight(ex, names[k]), keys=keys))
    if scaled:
        warnings.warn(f"animation {anim.name!r}: scale that changes over time or is not uniform "
                      "is not kept by .ani keys", LossWarning, stacklevel=4)
    order = ex.get("track_key_times")          # the file's track order (dicts keep it)
    if isinstance(order, dict):
        rank = {name: i for i, name in enumerate(order)}
        tracks.sort(key=lambda t: rank.get(text(t.bone), len(rank)))
    if resampled:
        warnings.warn(f"animation {anim.name!r}: {resampled} tracks sampled at the key times of the "
                      "original file (the glTF has other key times)", LossWarning, stacklevel=4)
    events = []
    for e in ex.get("events", []) if isinstance(ex.get("events"), list) else []:
        if isinstance(e, dict):
            events.append(AniEvent(encode_name(str(e.get("type", ""))),
                                   encode_name(str(e.get("info", ""))),
                                   (xt.number(e, "time", 0.0, -1e9, 1e9) - t0) * 1000.0))
    total = ex.get("total_time_ms")
    # the file's total time; also when its keys ran past it (the corpus animation ends 1 ms
    # after its total time) and still end where they did
    total = int(total) if isinstance(total, (int, float)) and 0 <= total < 2**31 and \
        (total >= end or ex.get("last_key_ms") == end) else end
    return AniFile(version=version, events=events, total_time=total, tracks=tracks)


def _at_keys(c: Channel, times: np.ndarray) -> np.ndarray:
    """The channel's values at ``times``: its own keys as they are when those are its times
    (sampling would turn a -0.0 into 0.0), else sampled."""
    if c.interpolation != "CUBICSPLINE" and len(c.times) == len(times) and \
            np.array_equal(c.times.astype(np.float64), times):
        return c.values.astype(np.float64).reshape(len(times), -1)
    return c.sample(times)


def _animations(scene: Scene, joints: list[int], names: list[bytes], bone_parents: list[int],
                animation_format: Any, rounding: str, main: str, world: np.ndarray
                ) -> dict[str, AniFile]:
    out: dict[str, AniFile] = {}
    keys = animation_keys(scene, ".ani", main)
    # the bones' key frames are the same for every animation: found once
    frames = _key_frames(scene, joints, bone_parents, world) if scene.animations else []
    for i, anim in enumerate(scene.animations):
        # the format asked for, else the one the animation was read from, else DEFAULT
        recorded = animation_extras(scene, anim).get("lostsaga_version")
        version = _ani_version(animation_format if animation_format is not None else
                               recorded if recorded in _ANI_VERSIONS.values() else "default")
        doc = _animation_to_ani(scene, anim, joints, names, frames, version, rounding)
        if not doc.tracks:
            continue
        out[keys[i]] = doc
    return out


def ani_from_scene(scene: Scene, *, animation_format: Any = None,
                   rounding: str = "engine", **options: Any):
    if not scene.animations:
        raise DocumentError("ani: the scene has no animations")
    scene = restore_editor.put_back_written(scene)
    world = scene.world_matrices()
    skl, joints, bone_parents = _skeleton(scene, world)
    anis = _animations(scene, joints, skl.names(), bone_parents, animation_format, rounding,
                       ".ani", world)
    if not anis:
        raise DocumentError("ani: no animation targets a joint")
    docs = list(anis.values())
    if len(docs) == 1:
        return docs[0]
    out: dict[str, Any] = {"": docs[0]}
    out.update(list(anis.items())[1:])
    return out


def _warn_morph_targets(scene: Scene, ext: str) -> None:
    """Morph targets (and the animations of their weights) have no place in ``ext``: named."""
    meshes = sorted({m.name or f"mesh{i}" for i, m in enumerate(scene.meshes)
                     if any(p.targets for p in m.primitives)})
    if meshes:
        warnings.warn(f"{ext} has no place for morph targets (meshes {', '.join(meshes[:5])}); "
                      "left out, with any animation of their weights", LossWarning, stacklevel=3)


def _d3d_colors(c: np.ndarray) -> np.ndarray:
    b = np.clip(np.round(np.nan_to_num(c) * 255.0), 0, 255).astype(np.uint32)
    return (b[:, 3] << 24) | (b[:, 0] << 16) | (b[:, 1] << 8) | b[:, 2]


@dataclass
class _Binding:
    """How the mesh nodes bind to the ``.skl`` built from the first skin: the skeleton, each
    bone's node, each bone's parent bone, the first skin (``main_skin``), its inverse binds, the
    bone of each joint node and each node's nearest joint. Without a skin only ``skl=None``."""
    skl: SklFile | None = None
    joints: list[int] = field(default_factory=list)
    bone_parents: list[int] = field(default_factory=list)
    main_skin: int | None = None
    ibm: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4)))
    bone_of: dict[int, int] = field(default_factory=dict)
    bone_up: list[int] = field(default_factory=list)


def _binding(scene: Scene, world: np.ndarray) -> _Binding:
    """The skeleton (``.skl``) of the scene's first skin and what binding to it needs."""
    b = _Binding()
    skinned_nodes = _skinned_nodes(scene)
    if skinned_nodes:
        b.skl, b.joints, b.bone_parents = _skeleton(scene, world)
        if len(b.joints) > 256:
            raise DocumentError(f"msh: {len(b.joints)} joints; the engine packs bone ids in a byte "
                                "(at most 256)")
    b.main_skin = scene.nodes[skinned_nodes[0]].skin if skinned_nodes else None
    if b.skl is not None and b.main_skin is not None:              # (skl: skinned nodes)
        skin = scene.skins[b.main_skin]
        b.ibm = (np.asarray(skin.inverse_bind_matrices, dtype=np.float64)
                 if skin.inverse_bind_matrices is not None else inverse(world[b.joints]))
        b.bone_of = {n: k for k, n in enumerate(b.joints)}
        b.bone_up = nearest_in(scene.parents(), b.bone_of)       # each node's nearest joint
    return b


def _node_parts(scene: Scene, ni: int, world: np.ndarray, b: _Binding) -> list[dict[str, Any]]:
    """The parts (one per triangle primitive) of mesh node ``ni``: skinned on the main skin, moved
    onto it from a second skin with the same bind pose, bound rigidly to a bone, or baked to world
    space. Warnings name the caller of :func:`msh_from_scene`."""
    node = scene.nodes[ni]
    assert node.mesh is not None
    skinned = node.skin is not None and node.skin == b.main_skin
    m = world[ni]
    remap = None
    if node.skin is not None and not skinned:
        remap, c = _skin_onto(scene.skins[node.skin], b.bone_of, b.ibm, world)
        if remap is None:
            warnings.warn(f"node {node.name!r}: a second skin with other joints or bind poses "
                          "than the first is not supported; bound rigidly", LossWarning,
                          stacklevel=3)
        else:
            m = c
    rigid = None
    if b.skl is not None and not skinned and remap is None:
        # a type-1 mesh has no unskinned vertices (a vertex without weight collapses): bind
        # the node rigidly to the joint it hangs under, in that bone's bind space
        j = b.bone_up[ni]
        if j < 0:
            rigid = b.bone_parents.index(-1)
            warnings.warn(f"node {node.name!r}: a mesh under no joint is bound to the root bone "
                          f"{text(b.skl.bones[rigid].name)!r} (it follows that bone's keys)",
                          LossWarning, stacklevel=3)
        else:
            rigid = b.bone_of[j]
        m = inverse(b.ibm[rigid]) @ inverse(world[b.joints[rigid]]) @ m
    nm = np.linalg.inv(m[:3, :3]).T if abs(np.linalg.det(m[:3, :3])) > 1e-12 else np.eye(3)
    parts: list[dict[str, Any]] = []
    for p in scene.meshes[node.mesh].primitives:
        if p.mode != 4 or len(p.positions) == 0:
            continue
        pos = p.positions.astype(np.float64)
        idx = (p.indices.astype(np.int64) if p.indices is not None
               else np.arange(len(pos), dtype=np.int64))
        nrm = p.normals.astype(np.float64) if p.normals is not None else None
        if nrm is None:
            nrm = compute_normals(p.positions, idx.astype(np.uint32)).astype(np.float64)
        tan = p.tangents.astype(np.float64) if p.tangents is not None else None
        if not skinned and not np.array_equal(m, np.eye(4)):     # (identity: as they are)
            pos = pos @ m[:3, :3].T + m[:3, 3]
            nrm = unit_rows(nrm @ nm.T)[0]              # a scaled node: unit normals again
            mirror = np.linalg.det(m[:3, :3]) < 0
            if tan is not None:
                tan = np.concatenate([unit_rows(tan[:, :3] @ m[:3, :3].T)[0],
                                      -tan[:, 3:] if mirror else tan[:, 3:]], axis=1)
            if mirror:
                idx = idx.reshape(-1, 3)[:, [0, 2, 1]].reshape(-1)
        jw = (p.joints, p.weights) if skinned else (None, None)
        if remap is not None and p.joints is not None:
            jw = (remap[p.joints.astype(np.int64)], p.weights)
        if rigid is not None:
            jw = (np.tile([rigid, 0, 0, 0], (len(pos), 1)),
                  np.tile([1.0, 0.0, 0.0, 0.0], (len(pos), 1)))
        parts.append(dict(pos=pos, idx=idx, nrm=nrm, tan=tan, uvs=p.uvs, colors=p.colors,
                          material=p.material, joints=jw[0], weights=jw[1]))
    return parts


def _joined(parts: list[dict[str, Any]], has_w: bool) -> dict[str, Any]:
    """The parts' vertex columns and faces joined into one ``.msh`` vertex list (the columns
    and ``vertex_mask`` of :class:`MshFile`, one submesh per part; absent columns are None)."""
    has_uv1 = any(len(q["uvs"]) > 1 for q in parts)
    has_col = any(q["colors"] is not None for q in parts)
    has_tan = all(q["tan"] is not None for q in parts)
    mask = msh_mod.POSITION | msh_mod.NORMAL | msh_mod.UV0
    mask |= msh_mod.UV1 if has_uv1 else 0
    mask |= msh_mod.COLOR0 if has_col else 0
    mask |= (msh_mod.TANGENT | msh_mod.BINORMAL) if has_tan else 0
    mask |= (msh_mod.WEIGHTS | msh_mod.INDICES) if has_w else 0
    # each part's vertex columns and faces, joined below
    all_pos: list[np.ndarray] = []
    all_nrm: list[np.ndarray] = []
    all_tan: list[np.ndarray] = []
    all_bin: list[np.ndarray] = []
    all_uv0: list[np.ndarray] = []
    all_uv1: list[np.ndarray] = []
    all_col: list[np.ndarray] = []
    all_wts: list[np.ndarray] = []
    all_faces: list[np.ndarray] = []
    subs = np.zeros(len(parts), msh_mod.SUBMESH_DTYPE)
    base = istart = 0
    for k, q in enumerate(parts):
        n = len(q["pos"])
        all_pos.append(vec_from_gltf(q["pos"]))
        all_nrm.append(vec_from_gltf(q["nrm"]))
        if has_tan:
            t = q["tan"]
            b = np.cross(q["nrm"], t[:, :3]) * np.where(t[:, 3:4] < 0, -1.0, 1.0)
            all_tan.append(vec_from_gltf(t[:, :3]))
            all_bin.append(vec_from_gltf(b))
        zero_uv = np.zeros((n, 2))
        all_uv0.append(q["uvs"][0] if q["uvs"] else zero_uv)
        if has_uv1:
            all_uv1.append(q["uvs"][1] if len(q["uvs"]) > 1 else zero_uv)
        if has_col:
            all_col.append(_d3d_colors(q["colors"]) if q["colors"] is not None
                           else np.full(n, 0xFFFFFFFF, np.uint32))
        if has_w:
            all_wts.append(msh_mod.weight_records(q["joints"], q["weights"], n))
        f = q["idx"].reshape(-1, 3)[:, [0, 2, 1]] + base
        all_faces.append(f)
        subs[k] = (base, n, istart, len(f))
        base += n
        istart += 3 * len(f)
    P = np.concatenate(all_pos).astype(np.float32)
    return dict(
        vertex_mask=mask, submeshes=subs, vertex_count=len(P), positions=P,
        normals=np.concatenate(all_nrm).astype(np.float32),
        tangents=np.concatenate(all_tan).astype(np.float32) if has_tan else None,
        binormals=np.concatenate(all_bin).astype(np.float32) if has_tan else None,
        colors=np.concatenate(all_col).astype(np.uint32) if has_col else None,
        uv0=np.concatenate(all_uv0).astype(np.float32),
        uv1=np.concatenate(all_uv1).astype(np.float32) if has_uv1 else None,
        weights=np.concatenate(all_wts) if has_w else None,
        faces=np.concatenate(all_faces).astype(np.uint16))


def msh_from_scene(scene: Scene, *, animation_format: Any = None, rounding: str = "engine",
                   version: int | None = None, mesh_type: int | None = None,
                   **options: Any) -> MshFile | dict[str, Any]:
    """A Lost Saga ``.msh`` of every triangle mesh in ``scene``, with its companions.

    Steps: the skeleton of the first skin (:func:`_binding`), each mesh node's primitives as
    parts (:func:`_node_parts`; Blender's joined primitives cut into the recorded submeshes
    again), the parts joined into one vertex list (:func:`_joined`), what the mesh's extras
    recorded put back, then the companions: ``{"": msh, ".skl": skl, ".txt": material script,
    "_<name>.ani": ani}`` (just the ``MshFile`` when it has none). Options: see
    :mod:`.scene` (``animation_format``, ``rounding``, ``version``, ``mesh_type``,
    ``material_script``).
    """
    _warn_morph_targets(scene, ".msh")
    scene = restore_editor.put_back_written(scene)
    world = scene.world_matrices()
    b = _binding(scene, world)
    skl = b.skl
    parts: list[dict[str, Any]] = []
    for ni, node in enumerate(scene.nodes):
        if node.mesh is not None:
            parts += _node_parts(scene, ni, world, b)
    if not parts:
        raise DocumentError("msh: the scene has no triangle meshes")
    parts = resplit(scene, parts)
    total = sum(len(q["pos"]) for q in parts)
    if total > 65536:
        raise DocumentError(f"msh: {total} vertices; uint16 face indices address at most 65536")
    has_w = skl is not None
    columns = _joined(parts, has_w)
    has_col = columns["colors"] is not None
    doc = MshFile(
        version=version if version is not None else (VERTEX_COLOR_MESH_VERSION if has_col
                                                    else MESH_VERSION),
        mesh_type=mesh_type if mesh_type is not None else _mesh_type(scene, has_w),
        bone_names=skl.names() if skl is not None else None, **columns)
    if doc.version == 2002:
        doc.control_points = []
    placeholder = skl is not None and all(
        scene.nodes[j].extras.get("lostsaga_placeholder") for j in b.joints)
    restore_mesh_extras(scene, doc, placeholder, version is not None, mesh_type is not None)
    doc.bbox = msh_mod.bounding_box(columns["positions"])
    put_back_mesh(scene, doc, parts, restore.tolerance(scene.extras))
    script = None
    if any(q["material"] is not None for q in parts) and options.get("material_script", True):
        script = mat_mod.MaterialScript(kept_script(scene, script_from_scene(scene).encode("utf-8")))
    if skl is None:                # (not has_w)
        if scene.animations:
            warnings.warn("animations without a skin are not written (.ani needs a skeleton)",
                          LossWarning, stacklevel=2)
        return doc if script is None else {"": doc, companion(scene, ".txt", ".msh"): script}
    out: dict[str, Any] = {"": doc}
    if not placeholder:            # bones of our own (no skeleton was given): no .skl
        out[companion(scene, ".skl", ".msh")] = skl
    if script is not None:
        out[companion(scene, ".txt", ".msh")] = script
    out.update(_animations(scene, b.joints, skl.names(), b.bone_parents, animation_format,
                           rounding, ".msh", world))
    return out if len(out) > 1 else doc


def _skin_onto(other: Skin, bone_of: dict[int, int], ibm: np.ndarray, world: np.ndarray):
    """``(bone index per joint of other, matrix)`` when the skin ``other`` (exporters write one
    skin per mesh) uses joints of the main skin with the same bind pose up to one matrix ``C``
    (``IBM_other = IBM_main @ C``): its vertices ``C @ v`` then skin on the main skin exactly.
    ``(None, None)`` otherwise."""
    if not other.joints or any(n not in bone_of for n in other.joints):
        return None, None
    remap = np.array([bone_of[n] for n in other.joints], dtype=np.int64)
    ibm_o = (np.asarray(other.inverse_bind_matrices, dtype=np.float64)
             if other.inverse_bind_matrices is not None else inverse(world[other.joints]))
    c = inverse(ibm[remap]) @ ibm_o
    if not np.allclose(c, c[0], atol=1e-5 * max(1.0, float(np.abs(c[0]).max()))):
        return None, None
    return remap, c[0]


def _mesh_type(scene: Scene, skinned: bool) -> int:
    """1 for skinned meshes; else the type a Lost Saga mesh came from (``extras.mesh_type``,
    kept through glTF), else 0 (static)."""
    if skinned:
        return 1
    by_name: dict[Any, int] = {v: k for k, v in msh_mod.MESH_TYPES.items()}
    kinds = {by_name.get(m.extras.get("mesh_type")) for m in scene.meshes}
    kinds.discard(1)
    if len(kinds) == 1:
        (kind,) = kinds
        if kind is not None:
            return kind
    return 0


def cms_from_scene(scene: Scene, **options: Any) -> CmsFile:
    _warn_morph_targets(scene, ".cms")
    scene = restore_editor.put_back_written(scene)
    world = scene.world_matrices()
    pos, faces, base = [], [], 0
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        m = world[ni]
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4 or len(p.positions) == 0:
                continue
            v = p.positions.astype(np.float64) @ m[:3, :3].T + m[:3, 3]
            idx = (p.indices.astype(np.int64) if p.indices is not None
                   else np.arange(len(v), dtype=np.int64)).reshape(-1, 3)
            if np.linalg.det(m[:3, :3]) < 0:
                idx = idx[:, [0, 2, 1]]
            pos.append(vec_from_gltf(v))
            faces.append(idx[:, [0, 2, 1]] + base)
            base += len(v)
    if not pos:
        raise DocumentError("cms: the scene has no triangle meshes")
    if base > 65536:
        raise DocumentError(f"cms: {base} vertices; uint16 face indices address at most 65536")
    return CmsFile(positions=np.concatenate(pos).astype(np.float32),
                   faces=np.concatenate(faces).astype(np.uint16))


def script_from_scene(scene: Scene) -> str:
    """The material script (``<mesh>.txt``) for the ``.msh`` that ``msh_from_scene`` writes: one
    ``material`` block per submesh, in the same order, with the base colour texture's name; the
    shader group and the other texture units (a lightmap) that ``to_scene`` kept in the
    material's extras are written back."""
    skinned = set(_skinned_nodes(scene))
    out = []
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4 or len(p.positions) == 0:
                continue
            sm = mat_mod.ScriptMaterial(shader_group="AnimateToonShade" if ni in skinned
                                        else "Static")
            if p.material is not None:
                m = scene.materials[p.material]
                if isinstance(m.extras.get("shader_group"), str) and m.extras["shader_group"]:
                    sm.shader_group = m.extras["shader_group"]      # kept from a script we read
                if m.base_color != (1.0, 1.0, 1.0, 1.0):
                    sm.diffuse = tuple(float(c) for c in m.base_color)
                ref = m.base_color_texture
                if ref is not None:
                    t = scene.textures[ref.texture]
                    uri = (t.uri or t.name or "texture.dds").replace("\\", "/").rsplit("/", 1)[-1]
                    kept = m.extras.get("lostsaga_texture")
                    if t.uri is None and isinstance(kept, str) and kept.rsplit(".", 1)[0] == uri:
                        uri = kept       # Blender names an image it embeds without extension
                    sm.texture_units.append(mat_mod.TextureUnit(uri, ref.texcoord))
                others = m.extras.get("other_texture_units")
                for o in others if isinstance(others, list) else []:
                    if isinstance(o, dict) and isinstance(o.get("texture"), str):
                        try:
                            tcs = int(o.get("tex_coord_set", 0))
                        except (TypeError, ValueError):
                            tcs = 0
                        sm.texture_units.append(mat_mod.TextureUnit(o["texture"], tcs))
                # unit order as the engine's scripts have it: a lightmap's set-0 unit first
                sm.texture_units.sort(key=lambda u: u.tex_coord_set)
            out.append(sm)
    return mat_mod.write_script(out)
