"""Overgrowth ``.phxbn`` skeleton + ``.anm`` animations + OBJ character mesh -> Scene.

Modules: :mod:`.bones` (bone frames, hierarchy checks), :mod:`.playback` (the engine's key
blending), this module (files -> Scene), :mod:`.scene_write` (Scene -> files); the package's
``__init__`` registers the ``.phxbn``/``.anm``/``.obj`` formats with them (the native modules
:mod:`.anm` and :mod:`.phxbn` know nothing of scenes).

Engine facts used (Overgrowth ``bulletworld.cpp``,
``skeletonasset.cpp``, ``animation.cpp``, ``models.cpp``):

* Axes: Overgrowth is OpenGL right-handed +Y up, the same as glTF: no axis change.
* Bind frame of bone i (``GetBoneMat``): ``dir = normalize(end - start)``, ``up = +Z`` (``+X``
  when ``|up . dir| > 0.95``), ``right = normalize(up x dir)``, ``up = normalize(dir x right)``;
  columns ``[right, up, dir, (start + end) / 2]``. A zero-length bone gets ``dir = +Y`` (the
  engine would produce NaNs).
* Hierarchy: ``hier_parents`` of the control-joint section when present, else
  ``bone_parents`` (v8+), else every bone is a root. Joint node local = ``inverse(B_parent) B_i``.
  Every bone hangs below one root node (named after the file) that carries the root motion.
* ``.anm`` key matrices are model-space frames (16 floats, column-major). Per key
  ``local_i = inverse(A_parent) A_i``. Playback as the engine's ``GetMatrices``: 4 keys (wrapped
  when looping, clamped otherwise), ``interp`` between the current and next key, Catmull-Rom
  weights ``w0..w3``, blended as ``BlendFourBones`` does: successive mixes with the running
  ratios ``w1/(w0+w1)``, ``w2/(w0+w1+w2)``, ``w3/1`` (lerp for origins, which equals the
  weighted sum; slerp for rotations, shortest path). glTF has no Catmull-Rom:
  the curve is resampled at ``fps`` (default 30 Hz), always including the key times themselves
  so that the keys are reproduced exactly, and written as LINEAR. At most ``LIMITS["samples"]``
  (200,000) samples and ``LIMITS["sample_bones"]`` (500,000) samples x bones per animation: a
  damaged or hostile length is refused with a LimitError before anything is allocated (a 3 KB
  file could otherwise ask for seconds of sampling); raise the caps for longer animations.
* Root motion (centered files): per key ``rotation`` (radians about +Y) and ``center_offset``;
  linear between the current and next key as in the engine; put on the root node as
  ``T(center_offset) RotY(rotation)`` (``root_motion=False`` leaves it out). Files that are not
  centered are shown as stored (the engine centres them at load time with
  ``Animation::Center``; we do not re-run that, and the exact inverse of it is unknown).
* Weapon matrices become animated nodes ``weapon<n>`` below the root node, sampled as the
  bones are, and are written back from them (:mod:`.weapons`); IK bone paths, mobility matrices
  and shape/status keys are listed in the animation's extras.
* Events, physics weights, shape and status keys go to the animation's ``extras``.
* Mesh (``mesh=`` an OBJ): one vertex per triangle corner in OBJ order (quads split
  ``(a,b,c)``, ``(d,a,c)``), which is the order of the ``.phxbn`` per-corner weights/ids; the
  corner count must equal the ``.phxbn`` vertex count. The OBJ is centred by the centre of the
  bounding box of its used vertices, as ``Model::calcBoundingBox``/``CenterModel`` do for
  ``_MDL_CENTER`` (``center=`` overrides). 4 influences; where a corner's weights
  sum below 0.99 slot 0 becomes (closest bone by distance to its segment, 1.0) as in the engine;
  then weights are renormalised and duplicate joint ids merged. Identical corners are merged.
  OBJ texture ``v`` has its origin at the bottom: glTF ``v = 1 - vt``.

``from_scene`` of a scene made by ``to_scene`` gives back every native field: the files' own
versions, points, masses, ragdoll joints, simple IK bones, key times, events, IK bones, weapon
and mobility matrices... kept on the root node (:mod:`.scene_extras`; ``native=False``
ignores them). Otherwise (glTF -> ``.phxbn`` v11 + ``.anm`` v11): joints of the first skin; bind frames
from the inverse bind matrices; bone ends from the node extras written by ``to_scene``
(``phxbn_bone``: start/end point ids and length) or, for foreign skeletons, from the joint's
origin to the mean origin of its children (a leaf continues its parent's line by half; a lone
joint points along its +Y), never of zero length (``GetBoneMat`` would make NaNs of it). Key
matrices are re-expressed in the engine's frames of those bones (``correction``), so skinning
is unchanged whatever the bone geometry; rest transforms of nodes above or between joints (a
glTF armature node) are part of the key matrices as they are of the inverse binds. The skeleton,
keys and OBJ live in the space the engine centres the OBJ into (also for ``.anm`` alone and with
``write_mesh=False``). Animations are sampled at the key times recorded in
their extras (else at 30 Hz), turned back into model-space matrices, root motion from the root
node's channels.
"""
from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import retromesh

from ...arrays import distinct
from ...errors import DocumentError, FormatError, LimitError, LossWarning, UnsupportedError
from ...geometry import compute_normals, unit_rows
from ...gltf.writer import merge_duplicate_joints, sanitize_weights
from ...restore import xor_record
from ...scene import Animation, Channel, Mesh, Node, Primitive, Scene, Skin
from ...transforms import compose_trs, decompose_trs, inverse, quat_continuous
from .anm import AnmFile
from .bones import depth_order, rot_y, safe_inv, skeleton_bind, unpack_mats
from .exact import (
    SOURCE_ATTRS,
    canonical_quats,
    obj_record,
    pack,
    snap_keys,
    source_tables,
    weights_record,
)
from .obj import ObjFile, ObjMesh, corner_mesh, parse_obj
from .phxbn import PhxbnFile, vertex_count_problem
from .playback import sample_animation, sorted_keys
from .scene_extras import (
    ANM_EXACT_KEY,
    ANM_KEY,
    FIRST_KEY_BIND,
    OBJ_EXACT_KEY,
    PHXBN_KEY,
    WEIGHTS_EXACT_KEY,
    anm_key,
    anm_stub,
    phxbn_stub,
)
from .weapons import weapon_channels

__all__ = ["phxbn_to_scene", "anm_to_scene", "obj_to_scene", "add_animation", "DEFAULT_FPS",
           "LIMITS", "key_world", "key_inputs"]

DEFAULT_FPS = 30.0
#: safety caps of the resampling (the work is set by a length field, not by the file's size);
#: raise them (``retromesh.formats.overgrowth.scene.LIMITS["sample_bones"] = ...``) for longer
#: animations. ``sample_bones``: samples x bones of one animation (a 100-bone rig: 2.8 min
#: at 30 Hz; ~0.3 s of CPU); ``samples``: samples of one animation.
LIMITS = {"sample_bones": 500_000, "samples": 200_000}


def _add_skeleton(scene: Scene, name: str, bind: np.ndarray, parents: np.ndarray,
                  doc: PhxbnFile | None) -> tuple[int, list[int]]:
    root = scene.add_node(Node(name=name, extras={"phxbn_root": True}))
    m = len(bind)
    nodes = [-1] * m
    ends = np.asarray(doc.bone_ends, dtype=np.int64).reshape(-1, 2) if doc is not None else None
    pts = np.asarray(doc.points, dtype=np.float64).reshape(-1, 3) if doc is not None else None
    # every bone's local matrix and its parts at once (numpy's stacked inv, matmul and
    # decomposition work matrix by matrix: the values of one bone at a time)
    par = np.asarray(parents, np.int64).reshape(-1)
    local = np.array(bind, np.float64)
    child = np.flatnonzero(par >= 0)
    if len(child):
        local[child] = inverse(bind[par[child]]) @ bind[child]
    ts, rs, _ = decompose_trs(local)
    for i in depth_order(parents):
        p = int(parents[i])
        t, r = ts[i], rs[i]
        extras: dict[str, Any] = {"phxbn_bone": i}
        if ends is not None and pts is not None:            # (both or neither)
            a, b = int(ends[i, 0]), int(ends[i, 1])
            extras.update(start_point=a, end_point=b,
                          length=float(np.linalg.norm(pts[b] - pts[a])))
        nodes[i] = scene.add_node(Node(name=f"bone{i}", translation=t, rotation=r,
                                       extras=extras), parent=root if p < 0 else nodes[p])
    return root, nodes


def _closest_bones(pos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    d = ends - starts
    dd = np.maximum((d * d).sum(-1), 1e-20)
    rel = pos[:, None, :] - starts[None]
    t = np.clip((rel * d[None]).sum(-1) / dd[None], 0.0, 1.0)
    closest = starts[None] + t[..., None] * d[None]
    return np.argmin(((pos[:, None, :] - closest) ** 2).sum(-1), axis=1)


def _skin_weights(weights: np.ndarray, ids: np.ndarray, pos: np.ndarray, bind_pts: tuple,
                  m: int) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(weights, dtype=np.float64).copy()
    idf = np.asarray(ids, dtype=np.float64)
    w[~np.isfinite(w)] = 0.0
    ok = np.isfinite(idf) & (idf >= 0) & (idf < m)
    j = np.where(ok, np.round(np.where(ok, idf, 0)), 0).astype(np.int64)
    w = np.where(ok, np.maximum(w, 0.0), 0.0)
    low = w.sum(1) < 0.99
    if np.any(low) and m:
        c = _closest_bones(pos[low], *bind_pts)
        j[low, 0] = c
        w[low, 0] = 1.0
    # merge duplicate joint ids within a vertex
    for a in range(4):
        for b in range(a + 1, 4):
            dup = (j[:, a] == j[:, b]) & (w[:, b] > 0)
            w[dup, a] += w[dup, b]
            w[dup, b] = 0.0
    s = w.sum(1, keepdims=True)
    w = np.where(s > 0, w / np.where(s > 0, s, 1.0), np.array([1.0, 0, 0, 0]))
    j = np.where(w > 0, j, 0)
    return j.astype(np.uint16), w.astype(np.float32)


def _load_obj(path: Path) -> tuple[bytes, ObjMesh]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FormatError("a readable OBJ file", file=str(path), got=str(exc)) from exc
    return data, parse_obj(data, str(path))


def source_attributes(corners: np.ndarray, record: dict | None) -> dict[str, np.ndarray]:
    """The vertex attributes carrying each vertex's OBJ source indices (:mod:`.exact`): ``v``,
    and ``vt``/``vn`` unless the file has none or the record's tables give them from ``v``."""
    tables = record.get("of_v", {}) if record is not None else {}
    return {a: corners[:, k].astype(np.float32) for k, a in enumerate(SOURCE_ATTRS)
            if k == 0 or (np.any(corners[:, k] >= 0) and ("vt", "vn")[k - 1] not in tables)}


def obj_exact_record(text: bytes | None, obj: ObjMesh, center: np.ndarray) -> dict | None:
    """What gives the OBJ's text back (:func:`.exact.obj_record`), with its ``v -> vt/vn``
    tables."""
    record = obj_record(text, obj, simulated_values(obj, center)) if text is not None else None
    if record is not None:
        record["of_v"] = source_tables(obj.corners)
    return record


def simulated_values(obj: ObjMesh, center: np.ndarray) -> dict[str, np.ndarray]:
    """Per OBJ element, the values the writer computes back from an unedited GLB (float32
    in the glTF: positions less ``center``, texture ``v`` flipped, unit normals twice, by our
    mapping and by the glTF writer)."""
    c = np.asarray(center, np.float64)
    out = {"v": (obj.positions - c).astype(np.float32).astype(np.float64) + c}
    if len(obj.texcoords):
        t = obj.texcoords
        u = t[:, 0].astype(np.float32).astype(np.float64)
        v = 1.0 - (1.0 - t[:, 1]).astype(np.float32).astype(np.float64)
        out["vt"] = np.stack([u, v], 1)
    if len(obj.normals):
        out["vn"] = unit_rows(unit_rows(obj.normals)).astype(np.float64)
    return out


def _add_mesh(scene: Scene, obj: ObjMesh, doc: PhxbnFile, bind: np.ndarray, joints: list[int],
              center: Any, name: str, text: bytes | None = None) -> int:
    ctl = doc.control
    n = len(obj.corners)
    if ctl is None:
        raise DocumentError("this skeleton has no vertex weights (rigging stage "
                            f"{doc.rigging_stage}): it cannot skin a mesh")
    said = vertex_count_problem(doc, n)
    if said is not None:
        raise DocumentError(f"{said} The .phxbn has {len(ctl.weights)} corner weights, the OBJ "
                            f"{n} triangle corners")
    v = obj.corners[:, 0]
    used = obj.positions[v]
    if center is None:
        # Model::calcBoundingBox over the loaded (per-corner) vertices, then CenterModel
        old_center = (used.min(0) + used.max(0)) / 2 if len(used) else np.zeros(3)
    else:
        old_center = np.asarray(center, dtype=np.float64).reshape(3)
    pos = used - old_center
    pts = np.asarray(doc.points, dtype=np.float64)
    ends = np.asarray(doc.bone_ends, dtype=np.int64)
    jj, ww = _skin_weights(ctl.weights, ctl.ids, pos, (pts[ends[:, 0]], pts[ends[:, 1]]),
                           len(bind))
    _, uv, nrm = corner_mesh(obj)
    # merge the corners that are one OBJ vertex (source indices v, vt, vn) with one weighting:
    # an unedited mesh keeps the file's vertices, order and count (:mod:`.exact`)
    key = np.concatenate([obj.corners.astype(np.int64).view(np.uint32),
                          ww.view(np.uint32), jj.astype(np.uint32)], axis=1)
    key = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1] * 4))).reshape(-1)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    idx = inv.reshape(-1).astype(np.uint32)
    P = pos[first].astype(np.float32)
    normals = unit_rows(nrm[first]) if nrm is not None else compute_normals(P, idx)
    record = obj_exact_record(text, obj, old_center)
    prim = Primitive(positions=P, normals=normals, uvs=[uv[first]] if uv is not None else [],
                     indices=idx, joints=jj[first], weights=ww[first],
                     attributes=source_attributes(obj.corners[first], record))
    extras: dict[str, Any] = {"obj_old_center": [float(c) for c in old_center]}
    # the .phxbn's own weight and id bits where glTF's (renormalised, merged) give others
    gj, gw = merge_duplicate_joints(*sanitize_weights(jj[first], ww[first]))
    glb_rows = np.concatenate([gw, gj.astype(np.float32)], 1)[idx]
    file_rows = np.concatenate([np.asarray(ctl.weights, np.float32),
                                np.asarray(ctl.ids, np.float32)], 1)
    kept = weights_record(file_rows, glb_rows, obj.corners[:, 0])
    if kept is not None:
        extras[WEIGHTS_EXACT_KEY] = kept
    if record is not None:
        extras[OBJ_EXACT_KEY] = record
    mi = scene.add_mesh(Mesh(name=name, primitives=[prim], extras=extras))
    skin = scene.add_skin(Skin(joints=list(joints), inverse_bind_matrices=inverse(bind),
                               name=name))
    return scene.add_node(Node(name=f"{name}_mesh", mesh=mi, skin=skin))


def _events(anm: AnmFile) -> list[dict]:
    out = []
    start = anm.start_ms
    for k in anm.keyframes:
        for e in k.events or []:
            out.append({"time": (k.time - start) / 1000.0, "bone": int(e.bone),
                        "name": e.name.decode("utf-8", "replace")})
    return out


def _labelled(items) -> list[dict]:
    return [{"label": it.label.decode("utf-8", "replace"), "weight": float(it.weight)}
            for it in items or []]


def add_animation(scene: Scene, anm: AnmFile, name: str, root: int, joints: list[int],
                  parents: np.ndarray, fps: float | None = None, root_motion: bool = True) -> Animation:
    fps = float(fps or DEFAULT_FPS)
    if not np.isfinite(fps) or fps <= 0 or fps > 1000:
        raise DocumentError(f"fps must be in (0, 1000], got {fps}")
    m = len(joints)
    nb = {len(k.bone_mats) for k in anm.keyframes}
    if nb != {m}:
        warnings.warn(f"animation {name!r} holds {sorted(nb)} bone matrices for a skeleton of "
                      f"{m} bones: missing bones keep the identity, extra ones are dropped",
                      LossWarning, stacklevel=3)
    kfs, times, length = sorted_keys(anm)
    if not np.all(np.isfinite(times)):
        raise DocumentError("key times must be finite")
    end = max(length, float(times[-1]), 0.0)
    step = 1000.0 / fps
    # checked before np.arange allocates the grid: the grid, the key times and the end
    n_samples = int(end // step) + 2 + len(times)
    if n_samples > LIMITS["samples"] or n_samples * max(m, 1) > LIMITS["sample_bones"]:
        raise LimitError(f"an animation of at most {LIMITS['samples']} samples and "
                         f"{LIMITS['sample_bones']} samples x bones (LIMITS['samples'], "
                         "LIMITS['sample_bones'] of retromesh.formats.overgrowth.scene; raise them "
                         "for longer animations, or lower fps)", path=f"animation {name!r}",
                         got=f"{n_samples} samples of {m} bones (length {end / 1000:g} s at "
                             f"{fps:g} fps)")
    grid = np.arange(0.0, end + 1e-9, step)
    keyt = times[(times >= 0) & (times <= end)]
    sample = distinct(np.round(np.concatenate([grid, keyt, [end]]), 6))
    # keep times distinct once stored as float32 seconds
    secs32 = (sample / 1000.0).astype(np.float32)
    keep = np.concatenate([[True], np.diff(secs32) > 0])
    sample, secs = sample[keep], secs32[keep].astype(np.float64)
    # in batches, so that the (samples, 4 keys, bones) intermediates stay small
    step_n = max(1, 200000 // max(m, 1))
    parts = [sample_animation(anm, parents, m, sample[i:i + step_n])
             for i in range(0, len(sample), step_n)]
    T = np.concatenate([p[0] for p in parts])
    R = np.concatenate([p[1] for p in parts])
    root_t = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
    root_r = None if parts[0][3] is None else np.concatenate([p[3] for p in parts])
    channels = []
    for i, node in enumerate(joints):
        channels.append(Channel(node, "translation", secs, T[:, i]))
        channels.append(Channel(node, "rotation", secs, quat_continuous(R[:, i])))
    if root_t is not None and root_r is not None and root_motion:     # (both or neither)
        channels.append(Channel(root, "translation", secs, root_t))
        channels.append(Channel(root, "rotation", secs, quat_continuous(rot_y(root_r))))
    extras: dict[str, Any] = {
        "anm_version": anm.version, "looping": anm.is_looping, "centered": anm.is_centered,
        "length": length / 1000.0, "key_times_ms": [int(k.time) for k in kfs],
        "start_ms": anm.start_ms, "sample_fps": fps,
    }
    ev = _events(anm)
    if ev:
        extras["events"] = ev
    if any(k.weights is not None and len(k.weights) for k in kfs):
        extras["weights"] = [[float(x) for x in (k.weights if k.weights is not None else [])]
                             for k in kfs]
    for fld in ("shape_keys", "status_keys"):
        vals = [_labelled(getattr(k, fld)) for k in kfs]
        if any(vals):
            extras[fld] = vals
    if any(k.ik_bones for k in kfs):
        extras["ik_bones"] = [[{"label": ik.label.decode("utf-8", "replace"),
                                "path": [int(x) for x in ik.path]} for ik in k.ik_bones or []]
                              for k in kfs]
    if any(k.use_mobility for k in kfs):
        extras["mobility"] = [[float(x) for x in k.mobility]
                              if k.use_mobility and k.mobility is not None else None
                              for k in kfs]
    bone_channels = channels[:2 * m]
    channels += weapon_channels(scene, anm, root, sample, secs, LIMITS["sample_bones"])
    anim = Animation(name=name, channels=channels, extras=extras)
    kept = scene.nodes[root].extras.setdefault(ANM_KEY, {})
    key = anm_key(name, sum(a.name == name for a in scene.animations))
    kept[key] = anm_stub(anm)
    _keep_bone_mats(scene.nodes[root].extras, key, anm, bone_channels, parents)
    scene.animations.append(anim)
    return anim


def key_world(translations: np.ndarray, rotations: np.ndarray,
              parents: np.ndarray) -> np.ndarray:
    """(keys, bones, 16) float32: the bones' model-space matrices composed from their glTF
    keys (local translation and rotation, joint parents), column-major as an ``.anm`` stores
    them: what the exact record of the bone matrices is kept against (:mod:`.exact`)."""
    local = compose_trs(translations, rotations, np.ones(translations.shape[:-1] + (3,)))
    world = np.empty_like(local)
    for i in depth_order(parents):
        p = int(parents[i])
        world[:, i] = local[:, i] if p < 0 else world[:, p] @ local[:, i]
    return np.swapaxes(world, -1, -2).reshape(world.shape[0], world.shape[1], 16) \
        .astype(np.float32)


def key_inputs(channels: list[Channel], t: np.ndarray, bones: int) -> tuple[np.ndarray, np.ndarray]:
    """(translations, rotations) of ``bones`` joints at key times ``t`` from their channels
    (translation then rotation per joint, as :func:`add_animation` makes them), all joints
    sampled together (:meth:`Channel.sample_many`: a value may be a unit in the last place off
    ``sample``'s, which :func:`.exact.snap_keys` absorbs, so records made either way agree)."""
    got = Channel.sample_many(channels[:2 * bones], t)
    T = np.stack([np.asarray(g, np.float64) for g in got[0::2]], 1)
    R = np.stack([np.asarray(g, np.float64) for g in got[1::2]], 1)
    return T, R


def _with_values(c: Channel, values: np.ndarray) -> Channel:
    """A copy of a checked channel with other values of its shape (float32)."""
    out = copy.copy(c)
    out.values = values
    return out


def _keep_bone_mats(extras: dict, key: str, anm: AnmFile, channels: list[Channel],
                    parents: np.ndarray) -> None:
    """The record giving back the file's bone matrices bit for bit (:func:`.exact.xor_record`
    against :func:`key_world` of the keys as the GLB holds them, rotations made unit, snapped
    to :data:`.exact.KEY_GRID` with a hint per value so that Blender's float noise snaps back
    to the same point)."""
    m = len(parents)
    mats = [np.asarray(k.bone_mats, np.float32).reshape(-1, 16) for k in anm.keyframes]
    if not mats or any(len(a) != m for a in mats) or len(channels) != 2 * m:
        return
    # the rotations made unit all at once (row by row the same values), in copies of the
    # channels (checked when made: a Channel's checks cost more than its sampling)
    rot = [c for c in channels if c.path == "rotation"]
    units = np.split(unit_rows(np.concatenate([c.values for c in rot]), (0.0, 0.0, 0.0, 1.0)),
                     np.cumsum([len(c.values) for c in rot[:-1]])) if rot else []
    unit_of = {id(c): u for c, u in zip(rot, units)}
    held = [c if c.path != "rotation" else _with_values(c, unit_of[id(c)]) for c in channels]
    t = (np.array([k.time for k in anm.keyframes], np.float64) - anm.start_ms) / 1000.0
    T, R = key_inputs(held, t, m)
    (Tq, ht), (Rq, hr) = snap_keys(T), snap_keys(canonical_quats(R))
    world = key_world(Tq, Rq, parents).reshape(-1, 16)
    # (byte planes: the XOR's high bytes are mostly zero; 200 keys of 6 bones: 10.8 -> 7.8 KB,
    # deflated in 0.8 ms instead of 1.9)
    record = xor_record(np.concatenate(mats), world, world, always=True, planes=True)
    if record is not None:
        record["hint"] = pack(np.concatenate([ht, hr], -1).tobytes())
        extras.setdefault(ANM_EXACT_KEY, {})[key] = record


def _read_native(path: Any, kind: type, what: str):
    doc = retromesh.read(path)
    if not isinstance(doc, kind):
        raise UnsupportedError(f"{path}: expected {what}, got a {type(doc).__name__}")
    return doc


def _anim_list(animations: Any) -> list:
    if animations is None:
        return []
    if isinstance(animations, (str, Path, AnmFile)):
        return [animations]
    return list(animations)


def phxbn_to_scene(doc: PhxbnFile, *, source: Path | None = None, mesh: Any = None,
                   animations: Any = None, fps: float | None = None, root_motion: bool = True,
                   center: Any = None) -> Scene:
    name = Path(source).stem if source else "skeleton"
    bind, parents = skeleton_bind(doc)
    if not len(bind):
        raise DocumentError("the skeleton has no bones")
    scene = Scene(name=name)
    root, joints = _add_skeleton(scene, name, bind, parents, doc)
    scene.extras["phxbn_version"] = doc.version
    scene.nodes[root].extras[PHXBN_KEY] = phxbn_stub(doc, weights=mesh is None)
    if mesh is not None:
        text = None
        if isinstance(mesh, ObjFile):
            obj, text = mesh.mesh(), bytes(mesh.text)
        elif isinstance(mesh, ObjMesh):
            obj = mesh
        else:
            text, obj = _load_obj(Path(mesh))
        _add_mesh(scene, obj, doc, bind, joints, center,
                  Path(mesh).stem if isinstance(mesh, (str, Path)) else "mesh", text)
    else:
        # a skin without a mesh shows the joints as a skeleton in importers
        scene.add_skin(Skin(joints=list(joints), inverse_bind_matrices=inverse(bind), name=name))
    for i, a in enumerate(_anim_list(animations)):
        if isinstance(a, dict):                      # {name: AnmFile}
            (aname, anm), = a.items()
        else:
            anm = a if isinstance(a, AnmFile) else _read_native(a, AnmFile, "an .anm animation")
            aname = Path(a).stem if isinstance(a, (str, Path)) else f"animation{i}"
        add_animation(scene, anm, aname, root, joints, parents, fps, root_motion)
    return scene


def anm_to_scene(doc: AnmFile, *, source: Path | None = None, skeleton: Any = None,
                 mesh: Any = None, animations: Any = None, fps: float | None = None,
                 root_motion: bool = True, center: Any = None) -> Scene:
    """This animation (named after its file) first, then any further ``animations``."""
    name = Path(source).stem if source else "animation"
    if skeleton is not None:
        skel = skeleton if isinstance(skeleton, PhxbnFile) else _read_native(
            skeleton, PhxbnFile, "a .phxbn skeleton")
        named = {name: doc}
        return phxbn_to_scene(skel, source=Path(skeleton) if isinstance(skeleton, (str, Path)) else None,
                              mesh=mesh, animations=[named] + _anim_list(animations), fps=fps,
                              root_motion=root_motion, center=center)
    if mesh is not None or animations:
        raise UnsupportedError("a mesh or further animations need the skeleton (skeleton=...)")
    warnings.warn("no skeleton given: joints are made from the first key, without hierarchy",
                  LossWarning, stacklevel=2)
    kfs, _, _ = sorted_keys(doc)
    first = np.asarray(kfs[0].bone_mats, dtype=np.float64).reshape(-1, 16)
    if not len(first):
        raise DocumentError("the animation has no bone matrices")
    bind = unpack_mats(first)
    if not np.all(np.isfinite(bind)):
        raise DocumentError("animation matrices must be finite")
    parents = np.full(len(bind), -1, np.int64)
    scene = Scene(name=name)
    root, joints = _add_skeleton(scene, name, bind, parents, None)
    scene.nodes[root].extras[FIRST_KEY_BIND] = True
    scene.add_skin(Skin(joints=list(joints), inverse_bind_matrices=safe_inv(bind), name=name))
    add_animation(scene, doc, name, root, joints, parents, fps, root_motion)
    return scene


def obj_to_scene(doc: ObjFile, *, source: Path | None = None) -> Scene:
    """An OBJ alone: one static mesh, one vertex per OBJ source (v, vt, vn), in the file's
    order of first use; what else gives its text back is kept in the mesh's extras
    (:mod:`.exact`)."""
    obj = doc.mesh()
    name = source.stem if source else "obj"
    scene = Scene(name=name)
    pos, uv, nrm = corner_mesh(obj)
    if not len(pos):
        scene.add_node(Node(name=name))
        return scene
    if not np.all(np.isfinite(pos)):
        raise FormatError("finite OBJ vertex coordinates", path="v")
    if uv is not None and not np.all(np.isfinite(uv)):
        raise FormatError("finite OBJ texture coordinates", path="vt")
    key = np.ascontiguousarray(obj.corners.astype(np.int64))
    _, first, inv = np.unique(key.view(np.dtype((np.void, 24))).reshape(-1),
                              return_index=True, return_inverse=True)
    # vertices in the order the faces first use them (np.unique sorts them by source index)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    first = first[order]
    idx = rank[inv.reshape(-1)].astype(np.uint32)
    p = pos[first].astype(np.float32)
    record = obj_exact_record(bytes(doc.text), obj, np.zeros(3))
    prim = Primitive(positions=p, indices=idx,
                     normals=unit_rows(nrm[first]) if nrm is not None else compute_normals(p, idx),
                     uvs=[uv[first]] if uv is not None else [],
                     attributes=source_attributes(obj.corners[first], record))
    extras: dict[str, Any] = {}
    if record is not None:
        extras[OBJ_EXACT_KEY] = record
    m = scene.add_mesh(Mesh(name=name, primitives=[prim], extras=extras))
    scene.add_node(Node(name=name, mesh=m))
    return scene
