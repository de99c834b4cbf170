"""Scene -> Overgrowth ``.phxbn`` v11 + ``.obj`` + ``.anm`` v11 (conventions in :mod:`.scene`)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import extras as xt
from ...arrays import distinct
from ...errors import DocumentError, LossWarning, UnsupportedError
from ...filenames import animation_keys, companion
from ...hierarchy import nearest_in
from ...restore import unpack_bytes, xor_rows
from ...scene import Animation, Primitive, Scene, Skin, unheld
from ...transforms import compose_trs
from .anm import WEAPON8_DTYPE, AnmEvent, AnmFile, AnmKeyframe, AnmLabelWeight
from .bones import bone_frames, depth_order, pack_mats
from .exact import (
    SOURCE_ATTRS,
    canonical_quats,
    obj_text,
    snap_keys,
    sources,
    weights_restore,
)
from .obj import ObjFile, write_obj
from .phxbn import PhxbnFile, PhxControl
from .scene import DEFAULT_FPS, LIMITS, key_inputs, key_world
from .scene_extras import (
    ANM_EXACT_KEY,
    FIRST_KEY_BIND,
    OBJ_EXACT_KEY,
    TOL,
    WEIGHTS_EXACT_KEY,
    anm_key,
    kept_anm,
    kept_phxbn,
    load_table,
    merge_phxbn,
    same,
)
from .weapons import apply_to_kept, weapon_matrices, weapon_records

#: every glTF primitive mode (a writer that warns for other modes itself)
ALL_MODES = (0, 1, 2, 3, 4, 5, 6)

__all__ = ["scene_to_phxbn", "scene_to_anm", "scene_to_obj", "scene_mesh", "exact_obj"]


def _skeleton_of(scene: Scene):
    if not scene.skins:
        raise UnsupportedError("the scene has no skin (joints) to make a skeleton from")
    skin = scene.skins[0]
    joints = list(skin.joints)
    bones: list[Any] = [scene.nodes[j].extras.get("phxbn_bone") for j in joints]
    if all(isinstance(b, int) for b in bones) and sorted(bones) == list(range(len(joints))):
        order = np.argsort(bones)
        joints = [joints[i] for i in order]
        ibm = skin.inverse_bind_matrices[order] if skin.inverse_bind_matrices is not None else None
    else:
        ibm = skin.inverse_bind_matrices
    worlds = scene.world_matrices()
    bind = np.linalg.inv(ibm) if ibm is not None else worlds[joints]
    parent_of = scene.parents()
    pos_of = {n: i for i, n in enumerate(joints)}
    up = nearest_in(parent_of, pos_of, include_self=False)      # one pass down the tree
    parents = np.array([pos_of.get(up[n], -1) for n in joints], np.int64).reshape(len(joints))
    root = None
    p = parent_of[joints[int(np.argmin([parents[i] >= 0 for i in range(len(joints))]))]]
    if p >= 0 and scene.nodes[p].extras.get("phxbn_root", False):
        root = p
    return skin, joints, bind, parents, root


def _bone_geometry(scene: Scene, joints: list[int], bind: np.ndarray, parents: np.ndarray):
    """(points, bone_ends, the engine's bind frames of those points)."""
    m = len(joints)
    # bone ends: from the extras to_scene wrote (the midpoint +- half the length along the bind
    # frame's Z, which is exactly GetBoneMat's frame); for a foreign rig's joint, from its origin
    # to the mean origin of its children, else on along the parent -> joint line, else along
    # the joint's +Y (the glTF/Blender bone axis) -- never of zero length, which the engine's
    # GetBoneMat would turn into NaNs.
    ex = [scene.nodes[j].extras for j in joints]
    mids = bind[:, :3, 3]
    dirs = bind[:, :3, 2]
    dirs = dirs / np.maximum(np.linalg.norm(dirs, axis=1, keepdims=True), 1e-12)
    lengths = np.array([xt.number(e, "length", 0.0, 0.0, 1e30) for e in ex])
    # point ids as recorded: two per bone at most (one shared point list)
    ids = [(xt.integer(e, "start_point", None, 0, 2 * m), xt.integer(e, "end_point", None, 0, 2 * m))
           for e in ex]
    have = np.array([None not in pair and xt.number(e, "length") is not None
                     for pair, e in zip(ids, ex)])
    starts = mids - dirs * lengths[:, None] / 2
    ends_p = mids + dirs * lengths[:, None] / 2
    if not np.all(have):
        eps = 1e-5 * max(float(np.ptp(mids, axis=0).max()) if m else 0.0, 1e-3)
        kid_d = [float(np.linalg.norm(mids[k] - mids[parents[k]])) for k in range(m) if parents[k] >= 0]
        kid_d = [d for d in kid_d if d > eps]
        typical = float(np.median(kid_d)) if kid_d else 0.1
        children: dict[int, list[int]] = {}
        for k, pk in enumerate(parents.tolist()):
            children.setdefault(pk, []).append(k)
        for i in np.nonzero(~have)[0]:
            o = mids[i]
            kids = [k for k in children.get(int(i), []) if np.linalg.norm(mids[k] - o) > eps]
            p = int(parents[i])
            if kids:
                end = mids[kids].mean(0)
            elif p >= 0 and np.linalg.norm(o - mids[p]) > eps:
                d = o - mids[p]
                end = o + d / 2
            else:
                y = bind[i, :3, 1]
                ny = np.linalg.norm(y)
                end = o + (y / ny if ny > 1e-12 else np.array([0.0, 1.0, 0.0])) * typical / 2
            if np.linalg.norm(end - o) <= eps:
                end = o + np.array([0.0, typical / 2, 0.0])
            starts[i], ends_p[i] = o, end
    if np.all(have):
        id_pairs = np.array(ids, np.int64).reshape(m, 2)
        npts = int(id_pairs.max()) + 1
        points = np.zeros((npts, 3))
        points[id_pairs[:, 0]] = starts
        points[id_pairs[:, 1]] = ends_p
        bone_ends = id_pairs
    else:
        points = np.concatenate([starts, ends_p])
        bone_ends = np.stack([np.arange(m), np.arange(m) + m], 1)
    points = points.astype("<f4").astype(np.float64)
    frames = bone_frames(points[bone_ends[:, 0]], points[bone_ends[:, 1]])
    return points, bone_ends, frames


def _skinned_parts(scene: Scene, skin: Skin, joints: list[int]):
    """Every triangle primitive skinned by ``skin`` (the engine reads one OBJ object):
    (parts (positions, triangles, uvs, normals), per-corner weights, per-corner bone ids,
    how many meshes/primitives were left out)."""
    order = {n: i for i, n in enumerate(joints)}
    remap = np.array([order[j] for j in skin.joints])
    mesh_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]] = []
    w_l, j_l, dropped = [], [], 0
    for node in scene.nodes:
        if node.mesh is None:
            continue
        if node.skin is None or scene.skins[node.skin] is not skin:
            dropped += 1
            continue
        for p in scene.meshes[node.mesh].primitives:
            if p.joints is None or p.mode != 4:
                dropped += 1
                continue
            idx = (p.indices if p.indices is not None else np.arange(len(p.positions))).astype(np.int64)
            assert p.weights is not None            # Scene.validate: with the joints
            w_l.append(p.weights[idx])
            j_l.append(remap[p.joints[idx].astype(np.int64)])
            mesh_parts.append((p.positions.astype(np.float64), idx.reshape(-1, 3),
                               p.uvs[0] if p.uvs else None, p.normals))
    return mesh_parts, w_l, j_l, dropped


def _centre_shift(mesh_parts) -> np.ndarray:
    """What the engine's ``_MDL_CENTER`` subtracts: minus the bounding-box centre of the
    OBJ's (per-corner) vertices; zero when already centred."""
    if not mesh_parts:
        return np.zeros(3)
    corners = np.concatenate([mp[0][mp[1].reshape(-1)] for mp in mesh_parts])
    c = (corners.min(0) + corners.max(0)) / 2 if len(corners) else np.zeros(3)
    return -c if np.abs(c).max() > 1e-6 else np.zeros(3)


def scene_to_phxbn(scene: Scene, *, write_mesh: bool = True, native: bool = True,
                   **options: Any):
    """Skeleton, plus ``.obj`` (the skinned mesh, one corner per weight entry) and ``.anm``
    companions, each under the name it was read from, else ``<stem>_<animation>.anm``
    (:mod:`retromesh.filenames`). The native
    data ``to_scene`` kept in the root node's extras (:mod:`.scene_extras`) are used unless
    ``native=False``; without them the files are written as version 11."""
    skin, joints, bind, parents, root = _skeleton_of(scene)
    _warn_unheld(scene, ".phxbn/.obj/.anm", modes=ALL_MODES)     # (other modes: warned below)
    m = len(joints)
    points, bone_ends, frames = _bone_geometry(scene, joints, bind, parents)
    # key matrices are re-expressed in the engine's bind frames (a foreign rig's roll differs)
    correction = np.linalg.inv(bind) @ frames
    control = None
    stage = 0
    mesh_parts, w_l, j_l, dropped = _skinned_parts(scene, skin, joints)
    if dropped:
        warnings.warn(f"{dropped} mesh(es)/primitive(s) not skinned by the first skin (or not "
                      "triangles) are left out of the .phxbn/.obj", LossWarning, stacklevel=2)
    if w_l:
        rows = np.concatenate([np.concatenate(w_l), np.concatenate(j_l)], 1).astype(np.float32)
        v = _corner_v(scene, skin)
        rows = weights_restore(_weights_record(scene, skin), rows, v)
        control = PhxControl(rows[:, :4].astype("<f4"), rows[:, 4:].astype("<f4"),
                             parents.astype("<i4"), [], None)
        stage = 1
    # the engine centres the OBJ on its bounding box and expects the skeleton in that space
    # (also when the OBJ is not written here: the engine centres whatever OBJ goes with it)
    shift = _centre_shift(mesh_parts)
    if np.any(shift):
        warnings.warn(f"the skinned mesh is moved by {np.round(shift, 6).tolist()} so that "
                      "it is centred as the engine centres OBJ files (the skeleton and keys "
                      "move with it)", LossWarning, stacklevel=2)
    obj_doc = None
    kept_obj = _kept_obj(scene, skin, shift) if mesh_parts and write_mesh else None
    if kept_obj is not None:
        obj_doc = kept_obj
    elif mesh_parts and write_mesh:
        allpos = np.concatenate([mp[0] for mp in mesh_parts])
        base, tris = 0, []
        for pos, tri, _, _ in mesh_parts:
            tris.append(tri + base)
            base += len(pos)
        has_uv = all(mp[2] is not None for mp in mesh_parts)
        has_n = all(mp[3] is not None for mp in mesh_parts)
        vt = np.concatenate([mp[2] for mp in mesh_parts]).astype(np.float64) if has_uv else None
        if vt is not None:
            vt[:, 1] = 1.0 - vt[:, 1]
        obj_doc = ObjFile(write_obj(allpos + shift, np.concatenate(tris), vt, None,
                                    name=scene.name or "mesh",
                                    normals=np.concatenate([mp[3] for mp in mesh_parts]) if has_n else None))
    points = points + shift
    frames = frames.copy()
    frames[:, :3, 3] += shift
    mids = frames[:, :3, 3]
    doc = PhxbnFile(
        version=11, rigging_stage=stage, points=points.astype("<f4"),
        point_parents=np.full(len(points), -1, "<i4"), bone_ends=bone_ends.astype("<i4"),
        bone_parents=parents.astype("<i4"), bone_masses=np.ones(m, "<f4"),
        bone_com=mids.astype("<f4"), bone_mats=pack_mats(frames), control=control, simple_ik=[])
    if control is not None:
        control.num_vertices = len(control.weights)
    kept = kept_phxbn(scene.nodes[root].extras, m) if root is not None and native else None
    if kept is not None:
        doc = _with_kept(merge_phxbn, kept, doc, fallback=doc, what=".phxbn")
    if not scene.animations and obj_doc is None:
        return doc
    out: dict[str, Any] = {"": doc}
    if obj_doc is not None:
        out[companion(scene, ".obj", ".phxbn")] = obj_doc
    for anim, key in zip(scene.animations, animation_keys(scene, ".anm", ".phxbn"), strict=True):
        out[key] = _animation_to_anm(scene, anim, joints, parents, root, correction, shift,
                                        native)
    return out


def _corner_v(scene: Scene, skin: Skin) -> np.ndarray | None:
    """The OBJ ``v`` of each corner of the one skinned primitive (None for another mesh)."""
    prims = [p for n in scene.nodes if n.mesh is not None and n.skin is not None
             and scene.skins[n.skin] is skin for p in scene.meshes[n.mesh].primitives]
    if len(prims) != 1 or SOURCE_ATTRS[0] not in prims[0].attributes:
        return None
    p = prims[0]
    idx = (p.indices if p.indices is not None else np.arange(len(p.positions))).astype(np.int64)
    return np.asarray(p.attributes[SOURCE_ATTRS[0]], np.float64).reshape(-1)[idx].astype(np.int64)


def _weights_record(scene: Scene, skin: Skin) -> Any:
    """The weights record of the skinned mesh (:data:`.scene_extras.WEIGHTS_EXACT_KEY`)."""
    found = [scene.meshes[n.mesh].extras.get(WEIGHTS_EXACT_KEY) for n in scene.nodes
             if n.mesh is not None and n.skin is not None and scene.skins[n.skin] is skin]
    return found[0] if len(found) == 1 else None


def _kept_obj(scene: Scene, skin: Skin, shift: np.ndarray) -> ObjFile | None:
    """The skinned mesh's OBJ as read (:func:`exact_obj`), when it is one primitive that kept
    its record."""
    prims = [(scene.meshes[n.mesh], p) for n in scene.nodes if n.mesh is not None
             and n.skin is not None and scene.skins[n.skin] is skin
             for p in scene.meshes[n.mesh].primitives]
    if len(prims) != 1:
        return None
    mesh, p = prims[0]
    # in the file's own space: the engine centres the OBJ on its bounding box, which puts it
    # where the skeleton (moved by ``shift`` when the box changed) expects it
    del shift
    centre = xt.numbers(mesh.extras.get("obj_old_center"), 3) or [0.0, 0.0, 0.0]
    pos = p.positions.astype(np.float64) + np.asarray(centre)
    return exact_obj(mesh.extras, p, pos, mesh.name or "mesh")


def _animation_to_anm(scene: Scene, anim: Animation, joints: list[int], parents: np.ndarray,
                      root: int | None, correction: np.ndarray | None = None,
                      shift: np.ndarray | None = None, native: bool = True) -> AnmFile:
    """One glTF animation as an ``.anm``: sampled at its key times, the joints' model-space
    matrices in the engine's bone frames (``correction``), root motion from the root node; the
    kept file of the same name gets the new matrices, else a version 11 file is made."""
    ex = anim.extras or {}
    kept, times_ms, t, start = _key_times(scene, anim, root, native)
    length_s = xt.number(ex, "length", anim.duration, 0.0, 2**31 / 1000)
    m = len(joints)
    if len(t) * max(m, 1) > LIMITS["sample_bones"]:       # before (keys, bones, 4, 4) arrays
        raise DocumentError(f"animation {anim.name!r}: {len(t)} keys of {m} bones is more than "
                            f"LIMITS['sample_bones'] = {LIMITS['sample_bones']} "
                            "(retromesh.formats.overgrowth.scene.LIMITS; raise it for longer "
                            "animations)")
    local, root_t, root_r = _sample_channels(scene, anim, joints, root, t)
    world = _model_space(scene, joints, parents, root, local)
    if correction is not None:
        world = world @ correction
    if shift is not None:
        world[..., :3, 3] += shift
    weapons = weapon_matrices(scene, anim, root, t, shift)
    if kept is not None:
        merged = _with_kept(_into_kept, kept, world, root_t, root_r, fallback=None, what=".anm")
        if merged is not None:
            apply_to_kept(merged, weapons, anim.name)
            _restore_bone_mats(scene, anim, merged, joints, parents, root, t)
            return merged
    centered = bool(ex.get("centered", root_t is not None or root_r is not None))
    version = 11
    doc = AnmFile(version=version, centered=1 if centered else 0,
                  looping=1 if ex.get("looping", True) else 0, start=None,
                  length=int(round(length_s * 1000)))   # v11 has no start: times from 0
    doc.keyframes = _new_keyframes(scene, anim, root, world, root_t, root_r, t,
                                   times_ms - start, weapon_records(scene, root, weapons, version),
                                   centered)
    return doc


def _restore_bone_mats(scene: Scene, anim: Animation, doc: AnmFile, joints: list[int],
                       parents: np.ndarray, root: int | None, t: np.ndarray) -> None:
    """The file's bone matrix bits in every key whose bone (and its parents) the glTF still
    holds as written (:data:`.scene_extras.ANM_EXACT_KEY`)."""
    if root is None:
        return
    table = load_table(scene.nodes[root].extras.get(ANM_EXACT_KEY))
    at = next((i for i, a in enumerate(scene.animations) if a is anim), 0)
    record = table.get(anm_key(anim.name, sum(a.name == anim.name
                                              for a in scene.animations[:at])))
    if record is None:
        return
    by_node = {(c.node, c.path): c for c in anim.channels}
    chans = [by_node.get((j, path)) for j in joints for path in ("translation", "rotation")]
    found = [c for c in chans if c is not None]
    if len(found) != len(chans):
        return
    T, R = key_inputs(found, t, len(joints))
    hints = unpack_bytes(record.get("hint"), T.size + R.size + 1) if isinstance(record, dict) else None
    if hints is None or len(hints) != T.size + R.size:
        return
    h = np.frombuffer(hints, np.uint8).reshape(len(t), len(joints), 7)
    Tq, _ = snap_keys(T, h[..., :3])
    Rq, _ = snap_keys(canonical_quats(R), h[..., 3:])
    world = key_world(Tq, Rq, parents).reshape(-1, 16)
    restored, same = xor_rows(record, world, world)
    if not same.any():
        return
    m = len(joints)
    for k, kf in enumerate(doc.keyframes):
        rows = same[k * m:(k + 1) * m]
        if rows.any():
            mats = np.array(kf.bone_mats, "<f4").reshape(m, 16)
            mats[rows] = restored[k * m:(k + 1) * m][rows]
            kf.bone_mats = mats


def _key_times(scene: Scene, anim: Animation, root: int | None,
               native: bool) -> tuple[AnmFile | None, np.ndarray, np.ndarray, int]:
    """(the kept file, key times in ms, sample times in s, start in ms): the kept file's own
    keys in its order, else the key times recorded in extras, else 30 Hz on whole ms."""
    ex = anim.extras or {}
    key_ms = xt.integers(ex.get("key_times_ms"))
    start = xt.integer(ex, "start_ms", 0)
    kept = None
    if root is not None and native:
        at = next((i for i, a in enumerate(scene.animations) if a is anim), 0)
        key = anm_key(anim.name, sum(a.name == anim.name for a in scene.animations[:at]))
        kept = kept_anm(scene.nodes[root].extras, key)
    if kept is not None:               # the file's own keys, in its order
        start = kept.start_ms
        times_ms = np.array([int(k.time) for k in kept.keyframes], dtype=np.int64)
        t = (times_ms - start) / 1000.0
    elif key_ms:
        times_ms = np.array(sorted(key_ms), dtype=np.int64)
        t = (times_ms - start) / 1000.0
    else:
        dur = anim.duration
        if dur * DEFAULT_FPS > 200000:
            raise DocumentError(f"animation {anim.name!r} lasts {dur:g} s: more than 200000 "
                                f"samples at {DEFAULT_FPS} fps")
        t = np.arange(0.0, dur + 1e-9, 1 / DEFAULT_FPS) if dur > 0 else np.zeros(1)
        if dur > 0 and dur - t[-1] > 1e-6:
            t = np.append(t, dur)
        times_ms = distinct(np.round(t * 1000).astype(np.int64))   # keys sit on whole ms
        t = times_ms / 1000.0
        start = 0
    return kept, times_ms, t, start


def _sample_channels(scene: Scene, anim: Animation, joints: list[int], root: int | None,
                     t: np.ndarray) -> tuple[np.ndarray, Any, Any]:
    """(joint local matrices per sample (keys, joints, 4, 4), root translations, root
    rotations): the joints' channels over their rest transforms, the root node's channels
    (None where it has none)."""
    rest_nodes = [scene.nodes[j] for j in joints]
    T = np.array([n.translation for n in rest_nodes])[None].repeat(len(t), 0)
    R = np.array([n.rotation for n in rest_nodes])[None].repeat(len(t), 0)
    S = np.array([n.scale for n in rest_nodes])[None].repeat(len(t), 0)
    pos_of = {n: i for i, n in enumerate(joints)}
    root_t = root_r = None
    for c in anim.channels:
        if c.node in pos_of:
            i = pos_of[c.node]
            v = c.sample(t)
            if c.path == "translation":
                T[:, i] = v
            elif c.path == "rotation":
                R[:, i] = v
            elif c.path == "scale":
                S[:, i] = v
        elif root is not None and c.node == root:
            v = c.sample(t)
            if c.path == "translation":
                root_t = v
            elif c.path == "rotation":
                root_r = v
    return compose_trs(T, R, S), root_t, root_r


def _model_space(scene: Scene, joints: list[int], parents: np.ndarray, root: int | None,
                 local: np.ndarray) -> np.ndarray:
    """The joints' model-space matrices per sample from their local ones."""
    m = len(joints)
    # nodes between a joint and its joint parent (an armature node above the root joint, a
    # helper between two joints) keep their rest transforms: the bind matrices include them
    rest = scene.world_matrices()
    parent_of = scene.parents()
    offs = np.tile(np.eye(4), (m, 1, 1))
    inv_parent = np.linalg.inv(rest[[joints[int(p)] for p in parents if p >= 0]])   # one batch
    k = 0
    for i, n in enumerate(joints):
        sp = parent_of[n]
        if sp >= 0 and sp == root:               # the root-motion node: its channels, not rest
            sp = parent_of[sp]
        up = rest[sp] if sp >= 0 else np.eye(4)
        p = int(parents[i])
        if p < 0:
            offs[i] = up
        else:
            offs[i] = inv_parent[k] @ up
            k += 1
    world = np.empty_like(local)
    for i in depth_order(parents):
        p = int(parents[i])
        world[:, i] = offs[i] @ local[:, i] if p < 0 else world[:, p] @ offs[i] @ local[:, i]
    return world


def _new_keyframes(scene: Scene, anim: Animation, root: int | None, world: np.ndarray,
                   root_t: Any, root_r: Any, t: np.ndarray, times_ms: np.ndarray,
                   weapon_recs: Any, centered: bool) -> list[AnmKeyframe]:
    """The keys of a new ``.anm``: bone matrices, weapon records, root motion (when
    ``centered``), and the weights, events, shape and status keys recorded in extras."""
    ex = anim.extras or {}
    if root_r is not None:
        q = np.asarray(root_r)
        rot = 2 * np.arctan2(q[:, 1], q[:, 3])
        rot = np.unwrap(rot)
    else:
        rot = np.zeros(len(t))
    off = root_t if root_t is not None else np.zeros((len(t), 3))
    weights = [xt.numbers(w) or [] for w in ex.get("weights") or []] if isinstance(
        ex.get("weights"), list) else []
    events_by_key: dict[int, list] = {}
    for e in ex["events"] if isinstance(ex.get("events"), list) else []:
        if isinstance(e, dict):
            k = int(np.argmin(np.abs(t - xt.number(e, "time", 0.0))))
            events_by_key.setdefault(k, []).append(e)
    keyframes = []
    for k in range(len(t)):
        kf = AnmKeyframe(time=int(times_ms[k]), bone_mats=pack_mats(world[k]),
                         weights=np.asarray(weights[k] if k < len(weights) else [], "<f4"),
                         weapon_mats=weapon_recs[k] if weapon_recs else np.zeros(0, WEAPON8_DTYPE),
                         use_mobility=0, mobility=None,
                         events=[], ik_bones=[], shape_keys=[], status_keys=[])
        kf.events = [AnmEvent(xt.integer(e, "bone", 0), str(e.get("name", "")).encode("utf-8"))
                     for e in events_by_key.get(k, [])]
        for fld in ("shape_keys", "status_keys"):
            vals = ex.get(fld)
            if isinstance(vals, list) and k < len(vals) and isinstance(vals[k], list):
                setattr(kf, fld, [AnmLabelWeight(xt.number(d, "weight", 0.0),
                                                 str(d.get("label", "")).encode("utf-8"))
                                  for d in vals[k] if isinstance(d, dict)])
        if centered:
            kf.rotation = float(rot[k])
            kf.center_offset = tuple(float(x) for x in off[k])
        keyframes.append(kf)
    return keyframes


def _with_kept(fn, kept, *args, fallback, what: str):
    """``fn(kept, *args)``; a kept document from extras that does not fit together (a damaged
    or hand-made glTF) is dropped with a LossWarning and ``fallback`` is used."""
    try:
        return fn(kept, *args)
    except (IndexError, ValueError, TypeError, KeyError, AttributeError) as exc:
        warnings.warn(f"the {what} data kept in extras is damaged ({type(exc).__name__}); the file "
                      "is made from the scene alone", LossWarning, stacklevel=4)
        return fallback


def _into_kept(kept: AnmFile, world: np.ndarray, root_t: np.ndarray | None,
               root_r: np.ndarray | None) -> AnmFile:
    """The kept animation with the scene's bone matrices and root motion in its keys (kept
    values where the scene's agree with them)."""
    rot = None
    if root_r is not None:
        q = np.asarray(root_r, np.float64)
        rot = 2 * np.arctan2(q[:, 1], q[:, 3])
    for k, kf in enumerate(kept.keyframes):
        kf.bone_mats = pack_mats(world[k])
        if kf.rotation is not None and rot is not None:
            d = (float(rot[k]) - float(kf.rotation) + np.pi) % (2 * np.pi) - np.pi
            if abs(d) > TOL:
                kf.rotation = float(kf.rotation) + d
        if kf.center_offset is not None and root_t is not None \
                and not same(root_t[k], kf.center_offset):
            kf.center_offset = tuple(float(x) for x in root_t[k])
    return kept


def scene_to_anm(scene: Scene, *, animation: str | None = None, native: bool = True,
                 **options: Any) -> AnmFile:
    if not scene.animations:
        raise UnsupportedError("the scene has no animation")
    anims = scene.animations
    if animation is not None:
        anims = [a for a in anims if a.name == animation]
        if not anims:
            raise DocumentError(f"no animation named {animation!r}")
    elif len(anims) > 1:
        warnings.warn(f"{len(anims)} animations: only the first ({anims[0].name!r}) is written "
                      "(pass animation=NAME, or save as .phxbn to get all)", LossWarning,
                      stacklevel=2)
    skin, joints, bind, parents, root = _skeleton_of(scene)
    _warn_unheld(scene, ".anm", uv_sets=99, colors=True, modes=ALL_MODES)
    _, _, frames = _bone_geometry(scene, joints, bind, parents)
    # the same space as the .phxbn written from this scene (centred on its skinned mesh)
    shift = _centre_shift(_skinned_parts(scene, skin, joints)[0])
    correction = np.linalg.inv(bind) @ frames
    if root is not None and scene.nodes[root].extras.get(FIRST_KEY_BIND) is True:
        correction = None       # the joints are the file's own first key: nothing to re-express
    return _animation_to_anm(scene, anims[0], joints, parents, root, correction, shift, native)


def scene_mesh(scene: Scene) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(positions, triangles, uvs, normals) of every triangle primitive, node transforms applied
    (skinned meshes in their bind space)."""
    worlds = scene.world_matrices()
    pos_l: list[np.ndarray] = []
    tri_l: list[np.ndarray] = []
    uv_l: list = []                 # (None for a primitive without UVs: then not joined)
    n_l: list[np.ndarray] = []
    all_uv = all_n = True
    base = 0
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        world = np.eye(4) if node.skin is not None else worlds[ni]
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4:
                continue
            n = len(p.positions)
            pos_l.append((np.c_[p.positions.astype(np.float64), np.ones(n)] @ world.T)[:, :3])
            idx = (p.indices if p.indices is not None else np.arange(n)).astype(np.int64).reshape(-1, 3)
            if np.linalg.det(world[:3, :3]) < 0:
                idx = idx[:, [0, 2, 1]]
            tri_l.append(idx + base)
            all_uv &= bool(p.uvs)
            all_n &= p.normals is not None
            uv_l.append(p.uvs[0] if p.uvs else None)
            if p.normals is not None:
                nn = p.normals.astype(np.float64) @ np.linalg.inv(world[:3, :3])
                n_l.append(nn / np.maximum(np.linalg.norm(nn, axis=1, keepdims=True), 1e-12))
            base += n
    if not pos_l:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64), None, None
    uv = np.concatenate(uv_l) if all_uv else None
    nrm = np.concatenate(n_l) if all_n else None
    return np.concatenate(pos_l), np.concatenate(tri_l), uv, nrm


def scene_to_obj(scene: Scene) -> ObjFile:
    """Every triangle primitive as one OBJ (``v``/``vt``/``vn``); an OBJ's own mesh, its
    faces unedited, as read (:func:`exact_obj`)."""
    _warn_unheld(scene, ".obj", animations=False)
    shown = [(n, p) for n in scene.nodes if n.mesh is not None
             for p in scene.meshes[n.mesh].primitives]
    if len(shown) == 1:
        node, p = shown[0]
        world = np.eye(4) if node.skin is not None else \
            scene.world_matrices()[scene.nodes.index(node)]
        pos = p.positions.astype(np.float64)
        if not np.array_equal(world, np.eye(4)):
            pos = (np.c_[pos, np.ones(len(pos))] @ world.T)[:, :3]
        assert node.mesh is not None                    # (shown: nodes with a mesh)
        mesh = scene.meshes[node.mesh]
        centre = xt.numbers(mesh.extras.get("obj_old_center"), 3)
        if centre is not None and node.skin is not None:
            pos = pos + np.asarray(centre)
        kept = exact_obj(mesh.extras, p, pos, mesh.name or "mesh")
        if kept is not None:
            return kept
    pos, tri, uv, nrm = scene_mesh(scene)
    vt = None if uv is None else np.stack([uv[:, 0], 1.0 - uv[:, 1]], 1)
    return ObjFile(write_obj(pos, tri, vt, None, name=scene.name or "mesh", normals=nrm))


def _source_of(p: Primitive, record: Any = None) -> np.ndarray | None:
    """(n, 3) OBJ source indices (v, vt, vn) of the primitive's vertices, None when it carries
    none (a glTF made elsewhere) or they are not whole numbers."""
    n = len(p.positions)
    cols = {k: np.asarray(p.attributes[a], np.float64).reshape(n, -1)[:, 0]
            for k, a in enumerate(SOURCE_ATTRS) if a in p.attributes}
    if 0 not in cols:
        return None
    for c in cols.values():
        if not np.all(np.isfinite(c)) or np.any(c != np.round(c)) or np.any(c < -1) \
                or np.any(c >= 2**31):
            return None
    ints = {k: c.astype(np.int64) for k, c in cols.items()}
    return sources(ints.pop(0), ints, record)


def _per_element(src: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The mean of ``values`` over the vertices of each source element (NaN for none)."""
    keep = src >= 0
    n = int(src[keep].max()) + 1 if keep.any() else 0
    out = np.zeros((n, values.shape[1]))
    count = np.bincount(src[keep], minlength=n).astype(np.float64)
    for c in range(values.shape[1]):
        out[:, c] = np.bincount(src[keep], weights=values[keep, c], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return out / count[:, None]


def exact_obj(mesh_extras: dict, p: Primitive, positions: np.ndarray,
              what: str) -> ObjFile | None:
    """The OBJ as read when the mesh kept its record (:mod:`.exact`) and its topology is the
    file's (``positions``: the primitive's, float64, in the file's space); None without a
    record, and with a LossWarning when the topology was edited (the OBJ is then written anew:
    the game sees another vertex count, morphs made for the file no longer match)."""
    record = mesh_extras.get(OBJ_EXACT_KEY)
    if not isinstance(record, dict):
        return None
    src = _source_of(p, record)
    idx = (p.indices if p.indices is not None else np.arange(len(p.positions))).astype(np.int64)
    text = None
    if src is not None and p.mode == 4:
        values = {"v": _per_element(src[:, 0], positions)}
        if p.uvs:
            uv = p.uvs[0].astype(np.float64)
            values["vt"] = _per_element(src[:, 1], np.stack([uv[:, 0], 1.0 - uv[:, 1]], 1))
        if p.normals is not None:
            values["vn"] = _per_element(src[:, 2], p.normals.astype(np.float64))
        text = obj_text(record, values, src[idx])
    if text is None:
        warnings.warn(f"{what}: the mesh's faces were edited ({len(idx)} triangle corners, the "
                      f"file had {record.get('corners')}): the OBJ is written anew, in glTF "
                      "vertex order; the game sees another vertex layout, and morph OBJs made "
                      "for the file no longer match it", LossWarning, stacklevel=3)
        return None
    return ObjFile(text)


def _warn_unheld(scene: Scene, target: str, **held: Any) -> None:
    """A LossWarning naming each part of ``scene`` the ``target`` file has no place for
    (:func:`retromesh.scene.unheld`)."""
    for what in unheld(scene, **held):
        warnings.warn(f"{target}: {what} dropped (the format has no place for it)", LossWarning,
                      stacklevel=3)
