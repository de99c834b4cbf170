"""Overgrowth skeleton + animations + character mesh <-> Scene.

Engine facts used (format-facts A2, A3, A6; Overgrowth ``bulletworld.cpp``,
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
  so that the keys are reproduced exactly, and written as LINEAR. At most ``MAX_SAMPLE_BONES``
  (5M) samples x bones per animation (a damaged length is refused, not allocated).
* Root motion (centered files): per key ``rotation`` (radians about +Y) and ``center_offset``;
  linear between the current and next key as in the engine; put on the root node as
  ``T(center_offset) RotY(rotation)`` (``root_motion=False`` leaves it out). Files that are not
  centered are shown as stored (the engine centres them at load time with
  ``Animation::Center``; we do not re-run that, and the exact inverse of it is unknown).
* Weapon matrices are not converted (a LossWarning says so); IK bone paths, mobility matrices
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

``from_scene`` (glTF -> ``.phxbn`` v11 + ``.anm`` v11): joints of the first skin; bind frames
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

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DocumentError, FormatError, LossWarning, UnsupportedError
from ...scene import Animation, Channel, Mesh, Node, Primitive, Scene, Skin
from ...transforms import compose_trs, decompose_trs, inverse, quat_continuous, quat_normalize
from .anm import AnmFile, AnmKeyframe, WEAPON8_DTYPE
from .obj import ObjMesh, parse_obj
from .phxbn import PhxbnFile, PhxControl

__all__ = ["bone_frames", "phxbn_to_scene", "anm_to_scene", "scene_to_phxbn", "scene_to_anm",
           "catmull_rom_weights", "sample_animation"]

DEFAULT_FPS = 30.0
#: most (samples x bones) one animation may be resampled into (a 100-bone rig: ~28 min at 30 Hz)
MAX_SAMPLE_BONES = 5_000_000


# -- maths ----------------------------------------------------------------------------------
def bone_frames(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``GetBoneMat`` for stacks of bone ends: (m, 4, 4) column-vector matrices."""
    a = np.asarray(starts, dtype=np.float64)
    b = np.asarray(ends, dtype=np.float64)
    d = b - a
    ln = np.linalg.norm(d, axis=-1, keepdims=True)
    dirv = np.where(ln > 1e-12, d / np.where(ln > 1e-12, ln, 1.0), np.array([0.0, 1.0, 0.0]))
    up = np.broadcast_to(np.array([0.0, 0.0, 1.0]), dirv.shape).copy()
    flip = np.abs(dirv[..., 2]) > 0.95
    up[flip] = (1.0, 0.0, 0.0)
    right = np.cross(up, dirv)
    right /= np.linalg.norm(right, axis=-1, keepdims=True)
    up = np.cross(dirv, right)
    up /= np.linalg.norm(up, axis=-1, keepdims=True)
    m = np.zeros(a.shape[:-1] + (4, 4))
    m[..., :3, 0] = right
    m[..., :3, 1] = up
    m[..., :3, 2] = dirv
    m[..., :3, 3] = (a + b) / 2
    m[..., 3, 3] = 1.0
    return m


def catmull_rom_weights(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    t2, t3 = t * t, t * t * t
    return np.stack([0.5 * (-t3 + 2 * t2 - t), 0.5 * (3 * t3 - 5 * t2 + 2),
                     0.5 * (-3 * t3 + 4 * t2 + t), 0.5 * (t3 - t2)], axis=-1)


def _mats(flat: np.ndarray) -> np.ndarray:
    """(..., 16) column-major floats -> (..., 4, 4) column-vector matrices."""
    a = np.asarray(flat, dtype=np.float64)
    return np.swapaxes(a.reshape(a.shape[:-1] + (4, 4)), -1, -2)


def _flat(m: np.ndarray) -> np.ndarray:
    return np.swapaxes(np.asarray(m), -1, -2).reshape(np.shape(m)[:-2] + (16,)).astype("<f4")


def _rot_y(theta: np.ndarray) -> np.ndarray:
    h = np.asarray(theta, dtype=np.float64) / 2
    return np.stack([np.zeros_like(h), np.sin(h), np.zeros_like(h), np.cos(h)], axis=-1)


def _depths(parents: np.ndarray) -> np.ndarray:
    """Depth of every bone (roots 0) by binary lifting: O(m log m) whatever the hierarchy's
    shape; a cycle raises DocumentError."""
    p = np.asarray(parents, dtype=np.int64)
    m = len(p)
    up = [p]
    for _ in range(max(1, m.bit_length())):
        prev = up[-1]
        up.append(np.where(prev >= 0, prev[np.maximum(prev, 0)], -1))
    if m and np.any(up[-1] >= 0):           # an ancestor 2**K > m steps up: a cycle
        i = int(np.argmax(up[-1] >= 0))
        raise DocumentError(f"the bone hierarchy has a cycle through bone {i}")
    depth = np.zeros(m, np.int64)
    cur = np.arange(m)
    for k in range(len(up) - 2, -1, -1):
        nxt = up[k][cur]
        move = nxt >= 0
        depth[move] += 1 << k
        cur = np.where(move, nxt, cur)
    return depth


def _check_parents(parents: np.ndarray, m: int) -> np.ndarray:
    p = np.asarray(parents, dtype=np.int64)
    if len(p) != m:
        raise DocumentError(f"{len(p)} parents for {m} bones")
    if m and (p.min() < -1 or p.max() >= m):
        raise DocumentError(f"bone parents must be -1 or 0..{m - 1}")
    _depths(p)
    return p


def _depth_order(parents: np.ndarray) -> list[int]:
    """Bones sorted so that every parent comes before its children."""
    return np.argsort(_depths(parents), kind="stable").tolist()


# -- skeleton ---------------------------------------------------------------------------------
def skeleton_bind(doc: PhxbnFile) -> tuple[np.ndarray, np.ndarray]:
    """(bind world matrices (m, 4, 4), parents (m,)) of a skeleton, checked."""
    pts = np.asarray(doc.points, dtype=np.float64).reshape(-1, 3)
    ends = np.asarray(doc.bone_ends, dtype=np.int64).reshape(-1, 2)
    m = len(ends)
    if m and (ends.min() < 0 or ends.max() >= len(pts)):
        raise DocumentError(f"bone ends must refer to points 0..{len(pts) - 1}")
    if not np.all(np.isfinite(pts)):
        raise DocumentError("skeleton points must be finite")
    bind = bone_frames(pts[ends[:, 0]], pts[ends[:, 1]]) if m else np.zeros((0, 4, 4))
    return bind, _check_parents(doc.parents(), m)


def _add_skeleton(scene: Scene, name: str, bind: np.ndarray, parents: np.ndarray,
                  doc: PhxbnFile | None) -> tuple[int, list[int]]:
    root = scene.add_node(Node(name=name, extras={"phxbn_root": True}))
    m = len(bind)
    nodes = [-1] * m
    ends = np.asarray(doc.bone_ends, dtype=np.int64).reshape(-1, 2) if doc is not None else None
    pts = np.asarray(doc.points, dtype=np.float64).reshape(-1, 3) if doc is not None else None
    for i in _depth_order(parents):
        p = int(parents[i])
        local = bind[i] if p < 0 else inverse(bind[p]) @ bind[i]
        t, r, s = decompose_trs(local)
        extras: dict[str, Any] = {"phxbn_bone": i}
        if ends is not None:
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


def _load_obj(path: Path) -> ObjMesh:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FormatError("a readable OBJ file", file=str(path), got=str(exc)) from exc
    return parse_obj(data, str(path))


def _add_mesh(scene: Scene, obj: ObjMesh, doc: PhxbnFile, bind: np.ndarray, joints: list[int],
              center: Any, name: str) -> int:
    ctl = doc.control
    n = len(obj.corners)
    if ctl is None:
        raise DocumentError("this skeleton has no vertex weights (rigging stage "
                            f"{doc.rigging_stage}): it cannot skin a mesh")
    if len(ctl.weights) != n:
        raise DocumentError(f"skeleton file and model file have different vertex counts: the "
                            f".phxbn has {len(ctl.weights)} corner weights, the OBJ "
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
    has_uv = len(obj.texcoords) and np.all(obj.corners[:, 1] >= 0)
    uv = np.zeros((n, 2))
    if has_uv:
        t = obj.texcoords[obj.corners[:, 1]]
        uv = np.stack([t[:, 0], 1.0 - t[:, 1]], 1)
    # merge identical corners
    key = np.concatenate([pos.astype(np.float32).view(np.uint32),
                          uv.astype(np.float32).view(np.uint32),
                          ww.view(np.uint32), jj.astype(np.uint32)], axis=1)
    key = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1] * 4))).reshape(-1)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    idx = inv.reshape(-1).astype(np.uint32)
    P = pos[first].astype(np.float32)
    from ...gltf.writer import compute_normals
    prim = Primitive(positions=P, normals=compute_normals(P, idx), uvs=[uv[first]] if has_uv else [],
                     indices=idx, joints=jj[first], weights=ww[first])
    mi = scene.add_mesh(Mesh(name=name, primitives=[prim],
                             extras={"obj_old_center": [float(c) for c in old_center]}))
    skin = scene.add_skin(Skin(joints=list(joints), inverse_bind_matrices=inverse(bind),
                               name=name))
    return scene.add_node(Node(name=f"{name}_mesh", mesh=mi, skin=skin))


# -- animation --------------------------------------------------------------------------------
def _sorted_keys(anm: AnmFile) -> tuple[list[AnmKeyframe], np.ndarray, float]:
    start = anm.start_ms
    kfs = sorted(anm.keyframes, key=lambda k: k.time)
    times = np.array([k.time - start for k in kfs], dtype=np.float64)
    length = float(anm.length - start)
    return kfs, times, length


def sample_animation(anm: AnmFile, parents: np.ndarray, n_bones: int, sample_ms: np.ndarray):
    """Engine playback at ``sample_ms``: (translations (S, m, 3), rotations (S, m, 4),
    root (S, 3) centre offsets, (S,) rotations or None)."""
    kfs, times, length = _sorted_keys(anm)
    n = len(kfs)
    mats = np.zeros((n, n_bones, 4, 4))
    mats[:] = np.eye(4)
    for k, kf in enumerate(kfs):
        a = np.asarray(kf.bone_mats, dtype=np.float64).reshape(-1, 16)[:n_bones]
        mats[k, :len(a)] = _mats(a)
    if not np.all(np.isfinite(mats)):
        raise DocumentError("animation matrices must be finite")
    local = mats.copy()
    has_p = parents >= 0
    if np.any(has_p):
        pi = np.where(has_p, parents, 0)
        local[:, has_p] = np.linalg.inv(mats[:, pi[has_p]]) @ mats[:, has_p]
    t, r, _ = decompose_trs(local)
    s = np.asarray(sample_ms, dtype=np.float64)
    fid = np.searchsorted(times, s, side="right") - 1
    if anm.is_looping:
        idx = np.stack([(fid + n + j - 1) % n for j in range(4)], 1)
    else:
        idx = np.stack([np.clip(fid + j - 1, 0, n - 1) for j in range(4)], 1)
    ft = times[idx[:, 1]].copy()
    nt = times[idx[:, 2]].copy()
    ft = np.where(ft > s, ft - length, ft)
    nt = np.where(nt < s, nt + length, nt)
    den = nt - ft
    with np.errstate(divide="ignore", invalid="ignore"):
        interp = np.where((idx[:, 1] != idx[:, 2]) & (den != 0), (s - ft) / np.where(den != 0, den, 1), 0.0)
    interp = np.clip(np.nan_to_num(interp), 0.0, 1.0)
    w = catmull_rom_weights(interp)                              # (S, 4)
    T = np.einsum("sj,sjmc->smc", w, t[idx])
    R = _blend_four_rotations(r[idx], w)
    if anm.is_centered:
        rot = np.array([float(k.rotation) for k in kfs])
        off = np.array([list(k.center_offset) for k in kfs], dtype=np.float64)
        if not (np.all(np.isfinite(rot)) and np.all(np.isfinite(off))):
            raise DocumentError("root motion values must be finite")
        a, b = idx[:, 1], idx[:, 2]
        root_t = off[a] * (1 - interp[:, None]) + off[b] * interp[:, None]
        root_r = rot[a] * (1 - interp) + rot[b] * interp
        return T, R, root_t, root_r
    return T, R, None, None


def _blend_four_rotations(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The engine's ``BlendFourBones`` on rotations: successive slerps with the running
    weight ratios. ``q`` is (S, 4, m, 4) (sample, key, bone, xyzw), ``w`` (S, 4)."""
    from ...transforms import quat_slerp
    ident = np.zeros_like(q[:, 0])
    ident[..., 3] = 1.0
    total = w[:, 0] + w[:, 1]
    ratio = np.where(total > 0, w[:, 1] / np.where(total > 0, total, 1.0), 0.0)
    x = np.where((total > 0)[:, None, None], quat_slerp(q[:, 0], q[:, 1], ratio[:, None]), ident)
    for j in (2, 3):
        total = total + w[:, j]
        ratio = np.where(total > 0, w[:, j] / np.where(total > 0, total, 1.0), 0.0)
        x = np.where((total > 0)[:, None, None], quat_slerp(x, q[:, j], ratio[:, None]), x)
    return quat_normalize(x)


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
    kfs, times, length = _sorted_keys(anm)
    if not np.all(np.isfinite(times)):
        raise DocumentError("key times must be finite")
    end = max(length, float(times[-1]), 0.0)
    step = 1000.0 / fps
    n_grid = int(end // step) + 2            # checked before np.arange allocates it
    if n_grid > 200000 or n_grid * max(m, 1) > MAX_SAMPLE_BONES:
        raise DocumentError(f"animation {name!r} would need {n_grid} samples of {m} bones "
                            f"(length {end / 1000:g} s); lower fps")
    grid = np.arange(0.0, end + 1e-9, step)
    keyt = times[(times >= 0) & (times <= end)]
    sample = np.unique(np.round(np.concatenate([grid, keyt, [end]]), 6))
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
    if root_t is not None and root_motion:
        channels.append(Channel(root, "translation", secs, root_t))
        channels.append(Channel(root, "rotation", secs, quat_continuous(_rot_y(root_r))))
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
        extras["mobility"] = [[float(x) for x in k.mobility] if k.use_mobility else None
                              for k in kfs]
    if any(k.weapon_mats is not None and len(k.weapon_mats) for k in kfs):
        warnings.warn(f"animation {name!r}: weapon matrices are not converted", LossWarning,
                      stacklevel=3)
    anim = Animation(name=name, channels=channels, extras=extras)
    scene.animations.append(anim)
    return anim


def _read_native(path: Any, kind: type, what: str):
    import retromesh
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
    if mesh is not None:
        obj = mesh if isinstance(mesh, ObjMesh) else _load_obj(Path(mesh))
        _add_mesh(scene, obj, doc, bind, joints, center,
                  Path(mesh).stem if isinstance(mesh, (str, Path)) else "mesh")
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
    kfs, _, _ = _sorted_keys(doc)
    first = np.asarray(kfs[0].bone_mats, dtype=np.float64).reshape(-1, 16)
    if not len(first):
        raise DocumentError("the animation has no bone matrices")
    bind = _mats(first)
    if not np.all(np.isfinite(bind)):
        raise DocumentError("animation matrices must be finite")
    parents = np.full(len(bind), -1, np.int64)
    scene = Scene(name=name)
    root, joints = _add_skeleton(scene, name, bind, parents, None)
    scene.add_skin(Skin(joints=list(joints), inverse_bind_matrices=_safe_inv(bind), name=name))
    add_animation(scene, doc, name, root, joints, parents, fps, root_motion)
    return scene


def _safe_inv(m: np.ndarray) -> np.ndarray:
    out = np.tile(np.eye(4), (len(m), 1, 1))
    det = np.linalg.det(m)
    ok = np.isfinite(det) & (np.abs(det) > 1e-12)
    out[ok] = np.linalg.inv(m[ok])
    return out


# -- from_scene -------------------------------------------------------------------------------
def _skeleton_of(scene: Scene):
    if not scene.skins:
        raise UnsupportedError("the scene has no skin (joints) to make a skeleton from")
    skin = scene.skins[0]
    joints = list(skin.joints)
    bones = [scene.nodes[j].extras.get("phxbn_bone") for j in joints]
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
    parents = np.full(len(joints), -1, np.int64)
    for i, n in enumerate(joints):
        p = parent_of[n]
        while p >= 0 and p not in pos_of:
            p = parent_of[p]
        parents[i] = pos_of.get(p, -1)
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
    lengths = np.array([float(e.get("length", 0.0)) for e in ex])
    have = np.array([("start_point" in e and "end_point" in e and "length" in e) for e in ex])
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
        ids = np.array([[e["start_point"], e["end_point"]] for e in ex], np.int64)
        npts = int(ids.max()) + 1
        points = np.zeros((npts, 3))
        points[ids[:, 0]] = starts
        points[ids[:, 1]] = ends_p
        bone_ends = ids
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


def scene_to_phxbn(scene: Scene, *, write_mesh: bool = True, **options: Any):
    """Skeleton (v11), plus ``.obj`` (the skinned mesh, one corner per weight entry) and
    ``.anm`` companions (``<stem>_<animation>.anm`` when there are several animations)."""
    skin, joints, bind, parents, root = _skeleton_of(scene)
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
        control = PhxControl(np.concatenate(w_l).astype("<f4"), np.concatenate(j_l).astype("<f4"),
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
    if mesh_parts and write_mesh:
        allpos = np.concatenate([mp[0] for mp in mesh_parts])
        from .obj import ObjFile, write_obj
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
        bone_com=mids.astype("<f4"), bone_mats=_flat(frames), control=control, simple_ik=[])
    if control is not None:
        control.num_vertices = len(control.weights)
    if not scene.animations and obj_doc is None:
        return doc
    out: dict[str, Any] = {"": doc}
    if obj_doc is not None:
        out[".obj"] = obj_doc
    for i, anim in enumerate(scene.animations):
        if len(scene.animations) == 1:
            suffix = ".anm"
        else:
            stem = "_" + (re.sub(r"[^A-Za-z0-9_.-]+", "_", anim.name) or f"animation{i}")
            suffix, k = stem + ".anm", 2
            while suffix in out:                     # two animations of the same (file) name
                suffix, k = f"{stem}_{k}.anm", k + 1
        out[suffix] = _animation_to_anm(scene, anim, joints, parents, root, correction, shift)
    return out


def _animation_to_anm(scene: Scene, anim: Animation, joints: list[int], parents: np.ndarray,
                      root: int | None, correction: np.ndarray | None = None,
                      shift: np.ndarray | None = None) -> AnmFile:
    ex = anim.extras or {}
    key_ms = ex.get("key_times_ms")
    start = int(ex.get("start_ms", 0))
    if key_ms:
        times_ms = np.array(sorted(int(k) for k in key_ms), dtype=np.int64)
        t = (times_ms - start) / 1000.0
    else:
        dur = anim.duration
        if dur * DEFAULT_FPS > 200000:
            raise DocumentError(f"animation {anim.name!r} lasts {dur:g} s: more than 200000 "
                                f"samples at {DEFAULT_FPS} fps")
        t = np.arange(0.0, dur + 1e-9, 1 / DEFAULT_FPS) if dur > 0 else np.zeros(1)
        if dur > 0 and dur - t[-1] > 1e-6:
            t = np.append(t, dur)
        times_ms = np.unique(np.round(t * 1000).astype(np.int64))   # keys sit on whole ms
        t = times_ms / 1000.0
        start = 0
    length_s = float(ex.get("length", anim.duration))
    m = len(joints)
    local = np.tile(np.eye(4), (len(t), m, 1, 1))
    rest = [scene.nodes[j] for j in joints]
    T = np.array([n.translation for n in rest])[None].repeat(len(t), 0)
    R = np.array([n.rotation for n in rest])[None].repeat(len(t), 0)
    S = np.array([n.scale for n in rest])[None].repeat(len(t), 0)
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
    local = compose_trs(T, R, S)
    # nodes between a joint and its joint parent (an armature node above the root joint, a
    # helper between two joints) keep their rest transforms: the bind matrices include them
    rest = scene.world_matrices()
    parent_of = scene.parents()
    offs = np.tile(np.eye(4), (m, 1, 1))
    for i, n in enumerate(joints):
        sp = parent_of[n]
        if sp >= 0 and sp == root:               # the root-motion node: its channels, not rest
            sp = parent_of[sp]
        up = rest[sp] if sp >= 0 else np.eye(4)
        p = int(parents[i])
        offs[i] = up if p < 0 else np.linalg.inv(rest[joints[p]]) @ up
    world = np.empty_like(local)
    for i in _depth_order(parents):
        p = int(parents[i])
        world[:, i] = offs[i] @ local[:, i] if p < 0 else world[:, p] @ offs[i] @ local[:, i]
    if correction is not None:
        world = world @ correction
    if shift is not None:
        world[..., :3, 3] += shift
    centered = bool(ex.get("centered", root_t is not None or root_r is not None))
    version = 11
    doc = AnmFile(version=version, centered=1 if centered else 0,
                  looping=1 if ex.get("looping", True) else 0, start=None,
                  length=int(round(length_s * 1000)))   # v11 has no start: times from 0
    if root_r is not None:
        q = np.asarray(root_r)
        rot = 2 * np.arctan2(q[:, 1], q[:, 3])
        rot = np.unwrap(rot)
    else:
        rot = np.zeros(len(t))
    off = root_t if root_t is not None else np.zeros((len(t), 3))
    weights = ex.get("weights")
    events_by_key: dict[int, list] = {}
    for e in ex.get("events", []):
        k = int(np.argmin(np.abs(t - float(e.get("time", 0)))))
        events_by_key.setdefault(k, []).append(e)
    for k in range(len(t)):
        kf = AnmKeyframe(time=int(times_ms[k] - start), bone_mats=_flat(world[k]),
                         weights=np.asarray(weights[k] if weights and k < len(weights) else [],
                                            "<f4"),
                         weapon_mats=np.zeros(0, WEAPON8_DTYPE), use_mobility=0, mobility=None,
                         events=[], ik_bones=[], shape_keys=[], status_keys=[])
        from .anm import AnmEvent, AnmLabelWeight
        kf.events = [AnmEvent(int(e.get("bone", 0)), str(e.get("name", "")).encode("utf-8"))
                     for e in events_by_key.get(k, [])]
        for fld in ("shape_keys", "status_keys"):
            vals = ex.get(fld)
            if vals and k < len(vals):
                setattr(kf, fld, [AnmLabelWeight(float(d["weight"]), str(d["label"]).encode("utf-8"))
                                  for d in vals[k]])
        if centered:
            kf.rotation = float(rot[k])
            kf.center_offset = tuple(float(x) for x in off[k])
        doc.keyframes.append(kf)
    return doc


def scene_to_anm(scene: Scene, *, animation: str | None = None, **options: Any) -> AnmFile:
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
    _, _, frames = _bone_geometry(scene, joints, bind, parents)
    # the same space as the .phxbn written from this scene (centred on its skinned mesh)
    shift = _centre_shift(_skinned_parts(scene, skin, joints)[0])
    return _animation_to_anm(scene, anims[0], joints, parents, root, np.linalg.inv(bind) @ frames,
                             shift)
