"""What glTF has no place for in a Lost Saga file, kept in ``extras`` by :mod:`.scene` and put
back by :mod:`.scene_write` (the list of records is in :mod:`.scene`'s docstring): billboard
centres, the mesh's version, type, bone list, vertex mask, control points and submesh ranges, an
animation's extras (and the scene's copy of them, which Blender keeps), track weights, the file's
key times and a root bone's parent name. Each reader takes a record only where it has the
expected type and fits what is written; anything else reads as not recorded."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...keytimes import per_frame
from ...scene import Animation, Scene
from . import msh as msh_mod
from .common import (
    MESH_CONTROL_POINT_VERSION,
    MESH_VERSION,
    VERTEX_COLOR_MESH_VERSION,
    encode_name,
    text,
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
    kept = scene.extras.get("lostsaga_animations")
    kept = next((k for k in kept if isinstance(k, dict) and k.get("name") == anim.name), None) \
        if isinstance(kept, list) else None
    out = dict(kept) if kept is not None else {}
    out.update(anim.extras or {})
    return out


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
    if np.isin(ms, kt).all():
        return kt
    return kt if per_frame(ms, kt) else None


def resplit(scene: Scene, parts: list[dict]) -> list[dict]:
    """Blender's exporter joins the primitives that share a material (submeshes without one come
    back as one primitive): a single part whose triangles add up to the submeshes recorded in the
    mesh's extras is cut into them again, in order."""
    subs = recorded_mesh(scene)[0].get("submeshes")
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


def recorded_mesh(scene: Scene) -> tuple[dict, np.ndarray | None]:
    """The extras ``to_scene`` gave the mesh of a ``.msh`` and that node's world matrix, when
    the scene holds exactly one mesh node (else ``({}, None)``)."""
    nodes = [i for i, n in enumerate(scene.nodes) if n.mesh is not None]
    if len(nodes) != 1:
        return {}, None
    mi = scene.nodes[nodes[0]].mesh
    assert mi is not None
    ex = scene.meshes[mi].extras or {}
    return (ex, scene.world_matrices()[nodes[0]]) if "lostsaga_version" in ex else ({}, None)


def restore_mesh_extras(scene: Scene, doc: MshFile, placeholder: bool, version_given: bool,
                         type_given: bool) -> None:
    """What glTF has no place for, from the mesh's extras, where it fits the mesh written:
    version, mesh type (of a skinned mesh on placeholder bones), the bone list with its empty
    names, the INDICES bit, control points (v2002) and the submesh vertex ranges."""
    ex, world = recorded_mesh(scene)
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
