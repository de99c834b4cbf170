"""What glTF has no place for in a Lost Saga file, kept in ``extras`` by :mod:`.scene` and put
back by :mod:`.scene_write` (the list of records is in :mod:`.scene`'s docstring): billboard
centres, the mesh's version, type, bone list, vertex mask, control points and submesh ranges, an
animation's extras (and the scene's copy of them, which Blender keeps), track weights, the file's
key times and a root bone's parent name. Each reader takes a record only where it has the
expected type and fits what is written; anything else reads as not recorded."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import geometry, restore
from ...arrays import isin
from ...extras import animation_extras as kept_animation_extras
from ...keytimes import per_frame
from ...scene import Animation, Scene
from ...transforms import quat_normalize
from . import msh as msh_mod
from .common import (
    MESH_CONTROL_POINT_VERSION,
    MESH_VERSION,
    VERTEX_COLOR_MESH_VERSION,
    encode_name,
    prescale,
    quat_from_gltf,
    quat_to_gltf,
    text,
    unit_rows,
    vec_from_gltf,
    vec_to_gltf,
)
from .msh import MshFile

__all__ = ["MAX_BILLBOARD_EXTRAS", "billboard_extras", "root_parent", "animation_extras",
           "track_weight", "kept_key_times", "resplit", "recorded_mesh", "restore_mesh_extras"]


#: billboard centres (a per-vertex array glTF has no place for) ride in the mesh's extras up to
#: this many vertices (or as one row when they are all the same)
MAX_BILLBOARD_EXTRAS = 4096


def billboard_extras(centers: np.ndarray) -> list[float] | None:
    """The billboard centres as glTF floats for the mesh's extras: one row when all are equal,
    None when they are not finite or too many to keep."""
    c = np.asarray(centers, np.float32).reshape(-1, 3)
    if not np.all(np.isfinite(c)):
        return None
    if len(c) and np.all(c == c[0]):
        c = c[:1]
    elif len(c) > MAX_BILLBOARD_EXTRAS:
        return None
    return [float(str(x)) for x in vec_to_gltf(c).astype(np.float32).reshape(-1)]


def root_parent(extras: dict[str, Any]) -> bytes:
    """The parent name a root bone was read with ("NoParent" in 3ds Max exports), else none."""
    kept = extras.get("lostsaga_parent")
    return encode_name(kept) if isinstance(kept, str) else b""


def animation_extras(scene: Scene, anim: Animation) -> dict:
    """The animation's extras; the copy the scene keeps under its name fills what it lacks
    (Blender's glTF importer drops animation extras, not the scene's)."""
    return kept_animation_extras(scene, anim, "lostsaga_animations")


def track_weight(ex: dict, bone: bytes) -> float:
    w = ex.get("track_weights")
    w = w.get(text(bone), 1.0) if isinstance(w, dict) else 1.0
    return float(w) if isinstance(w, (int, float)) and not isinstance(w, bool) and \
        np.isfinite(w) and abs(w) < 3e38 else 1.0


def kept_key_times(ex: dict, bone: bytes, ms: np.ndarray) -> np.ndarray | None:
    """The bone's key times of the original file (extras ``key_times_ms``/``track_key_times``)
    when the glTF's are among them, or look like an exporter's per-frame sampling of them
    (Blender's, :func:`retromesh.keytimes.per_frame`); else None."""
    lists, which = ex.get("key_times_ms"), ex.get("track_key_times")
    if not isinstance(lists, list) or not isinstance(which, dict):
        return None
    i = which.get(text(bone))
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(lists):
        return None
    kt = lists[i]
    if not isinstance(kt, list) or not kt or not all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**31 for x in kt):
        return None
    kt = np.asarray(kt, np.int64)
    if np.any(np.diff(kt) <= 0) or not len(ms):
        return None
    if isin(ms, kt).all():
        return kt
    return kt if per_frame(ms, kt) else None


def resplit(scene: Scene, parts: list[dict]) -> list[dict]:
    """Blender's exporter joins the primitives that share a material (submeshes without one come
    back as one primitive): a single part whose triangles add up to the submeshes recorded in the
    mesh's extras is cut into them again, in order."""
    subs = recorded_mesh(scene, world=False)[0].get("submeshes")
    if len(parts) != 1 or not isinstance(subs, list) or len(subs) < 2:
        return parts
    counts = [r[3] for r in subs if isinstance(r, list) and len(r) == 4]
    q = parts[0]
    tri = q["idx"].reshape(-1, 3)
    if len(counts) != len(subs) or not all(isinstance(c, int) and c > 0 for c in counts) or \
            sum(counts) != len(tri):
        return parts
    out, start = [], 0
    for c in counts:
        used, local = np.unique(tri[start:start + c], return_inverse=True)
        start += c
        part = dict(q)
        for k in ("pos", "nrm", "tan", "colors", "joints", "weights"):
            part[k] = None if q[k] is None else q[k][used]
        part["uvs"] = [u[used] for u in q["uvs"]]
        part["idx"] = local.reshape(-1)
        out.append(part)
    return out


def recorded_mesh(scene: Scene, world: bool = True) -> tuple[dict, np.ndarray | None]:
    """The extras ``to_scene`` gave the mesh of a ``.msh`` and (``world``, else None) that
    node's world matrix, when the scene holds exactly one mesh node (else ``({}, None)``)."""
    nodes = [i for i, n in enumerate(scene.nodes) if n.mesh is not None]
    if len(nodes) != 1:
        return {}, None
    mi = scene.nodes[nodes[0]].mesh
    assert mi is not None
    ex = scene.meshes[mi].extras or {}
    if "lostsaga_version" not in ex:
        return {}, None
    return ex, scene.world_matrices()[nodes[0]] if world else None


def restore_mesh_extras(scene: Scene, doc: MshFile, placeholder: bool, version_given: bool,
                         type_given: bool) -> None:
    """What glTF has no place for, from the mesh's extras, where it fits the mesh written:
    version, mesh type (of a skinned mesh on placeholder bones), the bone list with its empty
    names, the INDICES bit, control points (v2002) and the submesh vertex ranges."""
    ex = recorded_mesh(scene, world=False)[0]
    if not ex:
        return
    v = ex.get("lostsaga_version")
    if not version_given and v in (MESH_VERSION, VERTEX_COLOR_MESH_VERSION, MESH_CONTROL_POINT_VERSION):
        doc.version = v
        doc.control_points = [] if v == MESH_CONTROL_POINT_VERSION else None
    if not type_given and (placeholder or doc.weights is None):
        by_name = {name: k for k, name in msh_mod.MESH_TYPES.items()}
        t = ex.get("mesh_type")
        t = by_name.get(t, t) if isinstance(t, str) else t
        if isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 2**31 and \
                (doc.weights is not None or t != 1):
            doc.mesh_type = t
    names = ex.get("bone_names")
    if placeholder and isinstance(names, list) and all(isinstance(n, str) for n in names) and \
            [encode_name(n) for n in names if n] == doc.bone_names:
        doc.bone_names = [encode_name(n) for n in names]
    mask = ex.get("vertex_mask")
    if isinstance(mask, int) and doc.weights is not None and not mask & msh_mod.INDICES:
        doc.vertex_mask &= ~msh_mod.INDICES         # WEIGHTS without INDICES, as the add-on writes
    cps = ex.get("control_points")
    if doc.version == MESH_CONTROL_POINT_VERSION and isinstance(cps, list):
        world = recorded_mesh(scene)[1]
        doc.control_points = []
        for c in cps:
            pt = c.get("point") if isinstance(c, dict) else None
            if not (isinstance(pt, list) and len(pt) == 3 and
                    all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in pt)):
                continue
            q = world @ np.array([*pt, 1.0])
            doc.control_points.append(msh_mod.ControlPoint(
                encode_name(str(c.get("type", ""))), encode_name(str(c.get("bone", ""))),
                encode_name(str(c.get("extra", ""))),
                vec_from_gltf(q[:3]).astype(np.float32)))
    bc = ex.get("billboard_centers")
    if isinstance(bc, list) and len(bc) in (3, 3 * doc.vertex_count) and \
            all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in bc):
        c = vec_from_gltf(np.asarray(bc, np.float64).reshape(-1, 3))
        doc.billboard_centers = np.broadcast_to(c, (doc.vertex_count, 3)).astype(np.float32)
        doc.vertex_mask |= msh_mod.POSITION2
    subs = ex.get("submeshes")
    if isinstance(subs, list) and len(subs) == len(doc.submeshes) and all(
            isinstance(r, list) and len(r) == 4 and
            all(type(x) is int and 0 <= x < 2**31 for x in r) for r in subs):
        rec = np.array([tuple(r) for r in subs], msh_mod.SUBMESH_DTYPE)
        cur = doc.submeshes
        flat = np.asarray(doc.faces, np.int64).reshape(-1)
        fits = np.array_equal(rec["index_start"], cur["index_start"]) and \
            np.array_equal(rec["face_count"], cur["face_count"])
        for r in rec if fits else ():
            used = flat[int(r["index_start"]):int(r["index_start"]) + 3 * int(r["face_count"])]
            lo, n = int(r["min_index"]), int(r["vertex_count"])
            fits = fits and lo >= 0 and lo + n <= doc.vertex_count and \
                (not len(used) or (used.min() >= lo and used.max() < lo + n))
        if fits:             # the recorded ranges cover the vertices each submesh uses
            doc.submeshes = rec


# -- values that come back bit for bit (retromesh.restore) ------------------------------------
# mesh extras "lostsaga_exact": {"normals": rows, "weights": rows, "bbox": rows,
# "joint_of_id": [...] (when the skin's joints are not the mesh's bone ids)}, over the file's
# vertex order, written while to_scene keeps it (each submesh's vertices in one run, in order)

def gltf_normals(normals: np.ndarray) -> np.ndarray:
    """A ``.msh``'s normals as its GLB holds them (made unit by to_scene, then by the glTF
    writer)."""
    return geometry.unit_rows(unit_rows(vec_to_gltf(normals))[0].astype(np.float32))


def gltf_skin(weights: np.ndarray, joint_of_id: np.ndarray) -> np.ndarray:
    """``(n, 8)`` float32 of a ``.msh`` weights block as its GLB holds it: WEIGHTS_0, then
    JOINTS_0 (the influences the engine uses, on the joints of their bone ids)."""
    use, idx = msh_mod.usable_influences(weights, len(joint_of_id))
    joint = joint_of_id[idx] if len(joint_of_id) else np.full(idx.shape, -1, np.int64)
    use &= joint >= 0
    w = np.where(use, np.asarray(weights["weight"], np.float64), 0.0).astype(np.float32)
    j, w, _ = geometry.gltf_weights(np.where(use, joint, 0).astype(np.uint16), w)
    return np.concatenate([w, j.astype(np.float32)], axis=1)


def _weights8(rec: np.ndarray) -> np.ndarray:
    """``(n, 8)`` float32 of a weights block: its weights, then its bone ids."""
    if rec.dtype == msh_mod.WEIGHT_DTYPE:        # those 8 floats a row: a copy of the bytes
        return np.ascontiguousarray(rec).view("<f4").reshape(len(rec), 8).copy()
    return np.concatenate([rec["weight"], rec["bone"]], axis=1).astype(np.float32)


def mesh_exact(doc: MshFile, prims: list, order: np.ndarray, joint_of_id: np.ndarray | None
               ) -> dict[str, Any]:
    """The records (:func:`retromesh.restore.keep_rows`) of the values of ``doc`` that its
    primitives do not give back bit for bit; empty when the primitives hold the vertices in
    another order than the file."""
    n = doc.vertex_count
    if len(order) != n or not np.array_equal(order, np.arange(n)) or not prims:
        return {}
    out: dict[str, Any] = {}
    if doc.normals is not None and all(p.normals is not None for p in prims):
        gl = geometry.unit_rows(np.concatenate([p.normals for p in prims]))
        rec = restore.keep_rows(doc.normals, vec_from_gltf(gl).astype(np.float32))
        if rec:
            out["normals"] = rec
    if doc.weights is not None and joint_of_id is not None and \
            all(p.joints is not None for p in prims):
        # gltf_skin(doc.weights, joint_of_id): the primitives hold its joints and weights
        # before the glTF writer's step (to_scene keeps the same influences)
        j, w, _ = geometry.gltf_weights(np.concatenate([p.joints for p in prims]),
                                        np.concatenate([p.weights for p in prims]))
        gl = np.concatenate([w, j.astype(np.float32)], axis=1)
        back = msh_mod.weight_records(gl[:, 4:], gl[:, :4], n)
        rec = restore.keep_rows(_weights8(doc.weights), _weights8(back))
        if rec:
            out["weights"] = rec
            if not np.array_equal(joint_of_id, np.arange(len(joint_of_id))):
                out["joint_of_id"] = [int(j) for j in joint_of_id]
    if doc.positions is not None and n:
        back = msh_mod.bounding_box(doc.positions)     # the axis flip there and back is exact
        rec = restore.keep_table(np.asarray(doc.bbox, np.float32)[None], back[None])
        if rec:
            out["bbox"] = rec
    return out


def put_back_mesh(scene: Scene, doc: MshFile, parts: list[dict[str, Any]], tol: float) -> None:
    """The values :func:`mesh_exact` kept, where the parts (glTF side) still hold what was
    written."""
    ex = recorded_mesh(scene, world=False)[0].get("lostsaga_exact")
    if not isinstance(ex, dict) or doc.vertex_count != sum(len(q["pos"]) for q in parts):
        return
    if doc.normals is not None and "normals" in ex:
        now = np.concatenate([q["nrm"] for q in parts]).astype(np.float32)
        restore.put_back_rows(doc.normals, now, ex["normals"], lambda was: gltf_normals(was), tol)
    if doc.weights is not None and "weights" in ex and all(q["joints"] is not None for q in parts):
        jid = ex.get("joint_of_id")
        jid = np.asarray(jid if isinstance(jid, list) and all(type(j) is int for j in jid)
                         else np.arange(len(doc.bone_names or [])), np.int64)
        now = np.concatenate([np.concatenate([q["weights"], q["joints"]], axis=1)
                              for q in parts]).astype(np.float32)
        w8 = _weights8(doc.weights)

        def skin(was: np.ndarray) -> np.ndarray:
            rec = np.zeros(len(was), msh_mod.WEIGHT_DTYPE)
            rec["weight"], rec["bone"] = was[:, :4], was[:, 4:]
            return gltf_skin(rec, jid)
        if restore.put_back_rows(w8, now, ex["weights"], skin, tol):
            doc.weights["weight"], doc.weights["bone"] = w8[:, :4], w8[:, 4:]
    if "bbox" in ex:       # the file's box while the positions span what they did
        box = np.array(doc.bbox, np.float32)[None]
        restore.put_back_table(box, ex["bbox"], tol)
        doc.bbox = box[0]


def pose_fields(poses: np.ndarray) -> dict[str, np.ndarray]:
    """A ``.skl``'s poses as one (n, width) float32 table per field (one row per bone)."""
    return {f: np.ascontiguousarray(poses[f], np.float32).reshape(len(poses), -1)
            for f in poses.dtype.names or ()}


def put_back_poses(scene: Scene, poses: np.ndarray) -> np.ndarray:
    """The poses the scene's ``lostsaga_skeleton.exact`` kept (field by field: a moved bone's
    translation does not take its rotation along), where the writer derives what it derived
    from the GLB as written (see :func:`retromesh.restore.as_glb_holds`)."""
    kept = scene.extras.get("lostsaga_skeleton")
    rec = kept.get("exact") if isinstance(kept, dict) else None
    if not isinstance(rec, dict):
        return poses
    poses = np.ascontiguousarray(poses).copy()
    tol = restore.tolerance(scene.extras)
    for f, table in pose_fields(poses).items():
        if restore.put_back_table(table, rec.get(f), tol):
            poses[f] = table.reshape(poses[f].shape)
    return poses


# -- .ani keys: the scene's copy of the animation's extras, "exact": {bone: {"rotation": rows,
# "translation": rows}} (DEFAULT-version files; a track whose keys to_scene sorted has none)

def gltf_rotations(rot: np.ndarray) -> np.ndarray:
    """``.ani`` rotation keys as the GLB holds them (unit, in glTF's axes; the sign may be
    flipped for continuity)."""
    q = np.nan_to_num(np.asarray(rot, np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    q = quat_normalize(prescale(quat_to_gltf(q))).astype(np.float32)      # a Channel's values
    return geometry.unit_rows(q, fallback=(0.0, 0.0, 0.0, 1.0))


def tracks_exact(tracks: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """The records of DEFAULT tracks' keys that the writer does not give back bit for bit from
    their channels' values (``(bone, keys, rot_gl, tr_gl)``, ``rot_gl`` and ``tr_gl`` as
    to_scene gives them to the glTF writer), as ``{bone: record}`` (bones with one only). What
    the writer gives back and the rows it does not give back
    (:func:`retromesh.restore.keep_rows_slices`) are found for all tracks in one numpy pass: an
    animation has a track per bone of a few keys each, and per track numpy's call overhead was
    most of the record's cost."""
    if not tracks:
        return {}
    cuts = np.r_[0, np.cumsum([len(k) for _, k, _, _ in tracks])]
    gl = geometry.unit_rows(np.concatenate([np.asarray(r, np.float32) for _, _, r, _ in tracks]),
                            fallback=(0.0, 0.0, 0.0, 1.0))
    back = {"rotation": quat_from_gltf(quat_normalize(gl.astype(np.float64))).astype(np.float32),
            "translation": vec_from_gltf(np.concatenate(
                [np.asarray(t, np.float32) for _, _, _, t in tracks])).astype(np.float32)}
    recs = {field: restore.keep_rows_slices(
        np.ascontiguousarray(np.concatenate([k[field] for _, k, _, _ in tracks]), np.float32),
        rows, cuts) for field, rows in back.items()}
    out = {}
    for i, (bone, _, _, _) in enumerate(tracks):
        rec = {field: recs[field][i] for field in ("rotation", "translation")
               if recs[field][i] is not None}
        if rec:
            out[bone] = rec
    return out


def put_back_keys(ex: dict, bone: bytes, keys: np.ndarray, chs: dict, times: np.ndarray,
                  tol: float) -> None:
    """The key values the animation's ``exact`` record kept for ``bone``, where its channels
    still hold, at the file's key times, what was written."""
    kept = ex.get("exact")
    rec = kept.get(text(bone)) if isinstance(kept, dict) else None
    if not isinstance(rec, dict):
        return
    for path, field, to_gltf in (("rotation", "rotation", gltf_rotations),
                                 ("translation", "translation", vec_to_gltf)):
        c = chs.get(path)
        if path not in rec or c is None or len(c.times) != len(times) or \
                not np.array_equal(c.times.astype(np.float64), times):
            continue
        now = np.asarray(c.values, np.float32).reshape(len(times), -1)
        out = np.ascontiguousarray(keys[field])
        if restore.put_back_rows(out, now, rec[path], to_gltf, tol,
                                 either_sign=path == "rotation"):
            keys[field] = out


# -- the material script: its text as read (comments, layout), scene extra "lostsaga_script":
# {"text": base64 of the file deflated against what the writer generated (zlib's preset
# dictionary: what they share costs nothing), "generated": digest of that}

def _digest(data: bytes) -> str:
    import hashlib  # only a model with a material script needs it (start-up time)
    return hashlib.sha256(data).hexdigest()[:24]


def script_record(raw: bytes, generated: bytes) -> dict[str, str] | None:
    """The record of a material script whose text is not what the writer generates."""
    if raw == generated:
        return None
    return {"text": restore.pack_bytes(raw, 9, zdict=generated), "generated": _digest(generated)}


def kept_script(scene: Scene, generated: bytes) -> bytes:
    """The material script as read while the writer generates from the scene what it
    generated when the script was read (the materials unedited), else ``generated``."""
    rec = scene.extras.get("lostsaga_script")
    if not isinstance(rec, dict) or rec.get("generated") != _digest(generated):
        return generated
    text = restore.unpack_bytes(rec.get("text"), zdict=generated)
    return generated if text is None else text
