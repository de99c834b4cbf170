"""Lost Saga <-> :class:`retromesh.Scene` (glTF conventions).

This module holds the ``to_scene`` side; :mod:`.scene_write` the ``from_scene`` side (its
functions are re-exported here); :mod:`.scene_extras` reads back what rides in ``extras``.

to_scene
--------
* ``.msh`` -> one mesh node; each submesh is a primitive (its faces, with the vertices they use);
  normals, tangents (w from the stored binormal), colours (D3DCOLOR -> RGBA 0..1), UV0 ->
  TEXCOORD_0, UV1 -> TEXCOORD_1. Lightmap meshes (type 2): UV0 is the lightmap set and UV1 the
  diffuse set; the material's base colour texture uses TEXCOORD_1 and each primitive says so in
  ``extras`` (``diffuse_texcoord``/``lightmap_texcoord``).
* The material script ``<mesh>.txt`` (beside the mesh or in ``../material/``; or ``material=``)
  gives one material per submesh (``Sub1``, ``Sub2``... like the engine) with its texture names.
* With ``skeleton=`` (.skl): joints from the LocalTMs, inverse binds from the "ObjectTM inverse"
  pairs, a skin (4 influences; the influences after the first weight <= 0 are dropped like the
  engine does; the glTF writer then renormalises each vertex's weights to sum 1, as glTF
  requires). ``animations=[...]`` (.ani) become glTF animations (ms -> s; events, total time
  and track weights in the animation's ``extras``). Without a skeleton a skinned mesh is bound
  to placeholder bones of its bone list, resting at the origin with identity inverse binds (so it
  looks as stored and keeps its weights; extras ``lostsaga_placeholder``), with a LossWarning
  naming the missing skeleton; ``from_scene`` writes no ``.skl`` for such bones. (With
  animations but no skeleton it converts static.)
* ``.skl`` alone -> the joint hierarchy (``mesh=``, ``animations=`` may be added);
  ``.ani`` alone -> joint nodes named by its tracks, placed flat under one root (the hierarchy is
  in the skeleton: pass ``skeleton=`` for the real one), animated; ``.cms`` -> a collision mesh
  node (``extras.collision = true``).
* Units are kept as stored (3ds Max units, probably centimetres): no scaling.
* Colours are passed as stored (0..255 -> 0..1, no sRGB decoding): the engine feeds them to its
  shaders unchanged.
* Axes: D3D left-handed -> glTF: ``(x, y, -z)``, quaternions ``(-x, -y, z, w)``, inverse binds
  ``S M^T S``, winding reversed.
* Sanitised for glTF: zero-length or non-finite normals are recomputed from the faces, tangents
  of zero length make the primitive drop its tangents (noted in the primitive's ``extras``).
* Rotation keys are normalised. The corpus animation (exported by the Blender add-on) holds
  non-unit quaternions at in-between keys (norm down to 0.80); the engine would use them as they
  are (D3DX slerp/matrix of a non-unit quaternion also scales the bone). Their count is kept in the
  animation's ``extras.non_unit_rotation_keys``.
* The corpus animation has keys up to 1 ms after its ``total_time``; the glTF animation simply
  ends at its last key (``extras.total_time_ms`` keeps the file's value, ``last_key_ms`` the last
  key's time: ``from_scene`` writes the file's total time back while the keys end there).
* What glTF has no place for rides in extras and comes back when it fits the scene: mesh
  ``lostsaga_version``, ``mesh_type``, ``vertex_mask`` (the INDICES bit that has no data),
  ``submeshes`` (the vertex ranges, written back when they cover the vertices each submesh
  uses), ``bone_names`` (with empty names), ``control_points`` (v2002) and
  ``billboard_centers`` (one row when they are all equal, else up to 4096 vertices).
  Scene: ``lostsaga_skeleton`` (the ``.skl`` version and linked skeleton).
  Animation: ``lostsaga_version``, ``total_time_ms``, ``last_key_ms``, ``events``,
  ``track_weights``, ``key_times_ms`` (each distinct list of track key times once) with
  ``track_key_times`` ({bone: which list}, in the file's track order, which comes back).
  Blender's glTF importer (glTF-Blender-IO 4.2 and main) drops animation extras but keeps
  node, bone, mesh, material and scene extras as custom properties (written back with
  ``export_extras``), so the scene also keeps a copy of every animation's extras under
  ``lostsaga_animations`` ([{name, ...}]; Blender exports an imported animation under its name
  again); ``from_scene`` reads the animation's own extras first.
  An exporter that samples every frame (Blender's default) changes the key times: ``from_scene``
  samples each track at the file's key times again when the glTF's lie on one frame grid
  (24/25/30/50/60 fps) within the file's time span (:func:`retromesh.keytimes.per_frame`), with a
  LossWarning.

from_scene
----------
``msh`` from a Scene: every mesh node becomes submeshes of one ``.msh`` (static nodes baked to
world space, skinned ones kept in bind space; when the scene is skinned, unskinned mesh nodes are
bound rigidly, weight 1, to the joint they hang under, or to the root bone with a LossWarning: a
type-1 mesh has no unweighted vertices; a further skin over the same joints with the same bind pose
up to one matrix -- exporters write one skin per mesh -- is merged onto the first); with a skin
also a ``.skl`` (joints of the first skin) and one ``.ani`` per animation (the version it was
read from, else ``DEFAULT`` 4000; ``animation_format="default"/"comp4"/"comp8"`` overrides;
``rounding="engine"|"nearest"``): ``{"": msh, ".skl": skl, "_<name>.ani": ani}``, each
companion under the name it was read from (:mod:`retromesh.filenames`). Non-joint nodes
between the joints (an exporter's rotated or scaled ``Armature`` node) are folded into the
bones' LocalTMs and, at their rest transform, into the ``.ani`` keys of the bones below them
(keys are relative to
the ``.skl`` parent). ``.skl``/``.ani`` hold no scale: a constant uniform joint scale (B3D roots,
an Armature scaled by 0.01) is baked into the bone offsets and inverse binds (skinned vertices stay
put); non-uniform or animated scale and channels of non-joint nodes are dropped with a LossWarning.
The mesh type is 1 when skinned, else the type recorded in ``Mesh.extras.mesh_type`` by
``to_scene`` (so a lightmap mesh stays type 2 through glTF), else 0. Weights are sorted heaviest
first (the engine stops at the first weight <= 0). Key times are whole milliseconds (rounded); a
glTF animation that starts late (one clip of a longer timeline) is moved to start at 0 ms with its
events, one read from an ``.ani`` (``extras.lostsaga_version``) keeps its times; STEP channels get a
hold key 1 ms before each key (``.ani`` keys are interpolated linearly). When the meshes
have materials, the material script ``<mesh>.txt`` (one ``material`` block per submesh with the
base colour texture's name, :func:`script_from_scene`) is written too (``material_script=False`` to
leave it out).
"""
from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ... import registry, restore
from ...errors import DocumentError, FormatError, LossWarning
from ...fileio import read_source
from ...geometry import compute_normals, gltf_node_trs
from ...scene import Animation, Channel, Material, Mesh, Node, Primitive, Scene, Skin, Texture, TextureRef
from ...transforms import compose_trs, quat_continuous_tracks, quat_normalize
from . import ani as ani_mod, material as mat_mod, msh as msh_mod
from .ani import AniFile
from .cms import CmsFile
from .common import nan_to_num, prescale, quat_to_gltf, text, unit_rows, vec_to_gltf
from .msh import MshFile
from .scene_extras import (
    billboard_extras,
    mesh_exact,
    pose_fields,
    script_record,
    tracks_exact,
)
from .scene_write import (
    ani_from_scene,
    cms_from_scene,
    msh_from_scene,
    script_from_scene,
    skeleton_poses,
    skl_from_scene,
)
from .skl import SklFile

__all__ = ["msh_to_scene", "skl_to_scene", "ani_to_scene", "cms_to_scene", "msh_from_scene",
           "skl_from_scene", "ani_from_scene", "cms_from_scene", "build_scene",
           "script_from_scene"]


# -- loading companions ----------------------------------------------------------------------

def _load(item: Any, kind: type, fmt: str):
    if item is None or isinstance(item, kind):
        return item
    data, name, path = read_source(item)
    return registry.parse(registry.get(fmt), data, name, path)


def _as_list(items) -> list:
    if items is None:
        return []
    if isinstance(items, (str, Path, AniFile, bytes)):
        return [items]
    return list(items)


def _stem(item: Any, default: str) -> str:
    if isinstance(item, (str, Path)):
        return Path(item).stem
    return default


# -- skeleton ----------------------------------------------------------------------------------

def _unit_quats(q: np.ndarray) -> np.ndarray:
    q = nan_to_num(np.asarray(q, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    return quat_normalize(prescale(q))


def _finite(a: np.ndarray) -> np.ndarray:
    return nan_to_num(np.asarray(a, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)


def _add_skeleton(scene: Scene, skl: SklFile) -> tuple[list[int], dict[bytes, int]]:
    """Joint nodes for every bone; returns (node index per bone, bone name -> bone index)."""
    parents = skl.parent_indices()
    cycle = skl.cycle_bone()
    if cycle is not None:
        raise FormatError("bones whose parent names form a tree", path=f"bones[{cycle}].parent",
                          offset=skl.parent_offset(cycle),
                          got=f"a parent cycle through {text(skl.bones[cycle].name)!r}")
    poses = skl.poses
    t = vec_to_gltf(_finite(poses["local_position"]))
    r = quat_to_gltf(_unit_quats(poses["local_rotation"]))
    first = len(scene.nodes)
    nodes = []
    for i, b in enumerate(skl.bones):
        scene.nodes.append(Node(name=text(b.name), translation=t[i], rotation=r[i],
                                extras={"lostsaga_bone": i}))
        nodes.append(first + i)
    for i, p in enumerate(parents):
        if p < 0:
            scene.roots.append(nodes[i])
            if skl.bones[i].parent:          # a root's "NoParent" (3ds Max) comes back as it was
                scene.nodes[nodes[i]].extras["lostsaga_parent"] = text(skl.bones[i].parent)
        else:
            scene.nodes[nodes[p]].children.append(nodes[i])
    scene.extras["lostsaga_skeleton"] = {"version": int(skl.version)}
    if skl.linked_skeleton is None:          # the field is absent at the end of the file
        scene.extras["lostsaga_skeleton"]["linked_skeleton_absent"] = True
    elif skl.linked_skeleton:
        scene.extras["lostsaga_skeleton"]["linked_skeleton"] = text(skl.linked_skeleton)
    index: dict[bytes, int] = {}
    for i, b in enumerate(skl.bones):
        index.setdefault(b.name, i)
    return nodes, index


def _inverse_binds(skl: SklFile) -> np.ndarray:
    p = skl.poses
    return compose_trs(vec_to_gltf(_finite(p["inverse_position"])),
                       quat_to_gltf(_unit_quats(p["inverse_rotation"])), np.ones((len(p), 3)))


# -- animation ---------------------------------------------------------------------------------

def _add_animation(scene: Scene, doc: AniFile, name: str, targets: dict[bytes, int]) -> None:
    channels: list[Channel] = []
    missing: list[str] = []
    dropped = 0
    non_unit = 0
    weights: dict[str, float] = {}
    track_times: dict[str, list[int]] = {}
    exact_of: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    kept: list[tuple[int, str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]] = []
    for track in doc.tracks:
        if len(track.keys) == 0:
            continue
        node = targets.get(track.bone)
        if node is None:
            missing.append(text(track.bone))
            continue
        if track.weight != 1.0:
            weights[text(track.bone)] = float(track.weight)
        keys = track.keys
        times = keys["time"].astype(np.int64)
        rot = ani_mod.rotations(track, doc.version).astype(np.float64)
        trans = keys["translation"].astype(np.float64)
        ok = np.isfinite(rot).all(axis=1) & np.isfinite(trans).all(axis=1)
        in_order = bool(ok.all()) and bool(np.all(np.diff(times) > 0))
        if not in_order:
            dropped += int((~ok).sum())
            times, rot, trans = times[ok], rot[ok], trans[ok]
            if len(times) == 0:
                continue
            order = np.argsort(times, kind="stable")
            times, rot, trans = times[order], rot[order], trans[order]
            keep = np.append(times[1:] != times[:-1], True)    # a later key at the same ms wins
            times, rot, trans = times[keep], rot[keep], trans[keep]
        track_times[text(track.bone)] = times.tolist()
        kept.append((node, text(track.bone), times, rot, trans, keys, in_order))
    if kept:
        # the keys of every track in one numpy pass (per track, numpy's call overhead was
        # most of the cost); row by row the same values
        cuts = np.r_[0, np.cumsum([len(k[2]) for k in kept])]
        rot_all = np.concatenate([k[3] for k in kept])
        non_unit += int(np.sum(np.abs(np.linalg.norm(rot_all, axis=1) - 1.0) > 1e-3))
        rot_all = quat_continuous_tracks(_unit_quats(quat_to_gltf(rot_all)), cuts)
        tr_all = vec_to_gltf(np.concatenate([k[4] for k in kept]))
        secs_all = np.concatenate([k[2] for k in kept]) / 1000.0
        for i, (node, bone, _, _, _, keys, in_order) in enumerate(kept):
            lo, hi = cuts[i], cuts[i + 1]
            rot_gl, tr_gl = rot_all[lo:hi], tr_all[lo:hi]
            channels.append(Channel(node, "rotation", secs_all[lo:hi], rot_gl))
            channels.append(Channel(node, "translation", secs_all[lo:hi], tr_gl))
            if in_order and doc.version == ani_mod.ANIMATION_VER_DEFAULT:
                exact_of.append((bone, keys, rot_gl, tr_gl))
    exact = tracks_exact(exact_of)
    if missing:
        warnings.warn(f"animation {name!r}: {len(missing)} tracks name bones the skeleton lacks "
                      f"({', '.join(missing[:5])}{'...' if len(missing) > 5 else ''}); dropped",
                      LossWarning, stacklevel=3)
    if dropped:
        warnings.warn(f"animation {name!r}: {dropped} keys with non-finite values dropped",
                      LossWarning, stacklevel=3)
    extras: dict[str, Any] = {
        "lostsaga_version": doc.version,
        "total_time_ms": doc.total_time,
        "last_key_ms": max(int(c.times[-1] * 1000.0 + 0.5) for c in channels) if channels else 0,
        "events": [{"type": text(e.type), "info": text(e.info), "time": float(e.time) / 1000.0}
                   for e in doc.events],
    }
    if weights:
        extras["track_weights"] = weights
    # the key times of every track (distinct lists once): what an exporter that samples every
    # frame (Blender's) changes; from_scene samples at them again
    distinct: dict[tuple, int] = {}
    for ts in track_times.values():
        distinct.setdefault(tuple(ts), len(distinct))
    extras["key_times_ms"] = [list(ts) for ts in distinct]
    extras["track_key_times"] = {bone: distinct[tuple(ts)] for bone, ts in track_times.items()}
    if non_unit:
        extras["non_unit_rotation_keys"] = non_unit      # normalised for glTF
    if not channels:
        warnings.warn(f"animation {name!r} has no usable keys; left out", LossWarning, stacklevel=3)
        return
    scene.animations.append(Animation(name=name, channels=channels, extras=extras))
    # Blender's glTF importer drops animation extras but keeps the scene's: a copy by name
    # (the records of key values that come back bit for bit: in the scene's copy only)
    scene.extras.setdefault("lostsaga_animations", []).append(
        {"name": name, **extras, **({"exact": exact} if exact else {})})


# -- mesh --------------------------------------------------------------------------------------

def _colors(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=np.uint32)
    b = np.stack([(c >> 16) & 255, (c >> 8) & 255, c & 255, (c >> 24) & 255], axis=1)
    return b.astype(np.float32) / 255.0


def _texcoord_map(doc: MshFile) -> dict[int, int]:
    """Engine texture-coordinate set (0 = UV0, 1 = UV1) -> glTF TEXCOORD_n index."""
    present = [i for i, u in enumerate((doc.uv0, doc.uv1)) if u is not None]
    return {raw: n for n, raw in enumerate(present)}


def _materials(scene: Scene, script: list[mat_mod.ScriptMaterial], mesh_name: str,
               diffuse_set: int, texcoords: dict[int, int]) -> list[int]:
    out = []
    tex_index: dict[str, int] = {}
    for i, sm in enumerate(script):
        mat = Material(name=f"{mesh_name}/Sub{i + 1}",
                       extras={"shader_group": sm.shader_group} if sm.shader_group else {})
        if sm.diffuse is not None:
            r, g, b, a = (float(np.clip(c, 0, 1)) for c in sm.diffuse)
            mat.base_color = (r, g, b, a)
        units = [u for u in sm.texture_units if u.texture]
        if units:
            pick = next((u for u in units if u.tex_coord_set == diffuse_set), units[0])
            if pick.texture not in tex_index:
                tex_index[pick.texture] = scene.add_texture(Texture(name=pick.texture,
                                                                    uri=pick.texture))
            texcoord = texcoords.get(pick.tex_coord_set, 0)
            mat.base_color_texture = TextureRef(tex_index[pick.texture], texcoord=texcoord)
            mat.extras["lostsaga_texture"] = pick.texture
            others = [{"texture": u.texture, "tex_coord_set": u.tex_coord_set}
                      for u in units if u is not pick]
            if others:
                mat.extras["other_texture_units"] = others
        if sm.scene_blend and "alpha" in sm.scene_blend:
            mat.alpha_mode = "BLEND"
        elif sm.alpha_rejection:
            mat.alpha_mode = "MASK"
        out.append(scene.add_material(mat))
    return out


def _mesh_primitives(doc: MshFile, joint_of_id: np.ndarray | None,
                     material_ids: list[int]) -> tuple[list[Primitive], np.ndarray]:
    """The primitives of ``doc`` and the file's index of each of their vertices, in order."""
    nv = doc.vertex_count
    if doc.positions is None:
        if nv:
            warnings.warn("mesh without positions (mask lacks POSITION): nothing to convert",
                          LossWarning, stacklevel=3)
        return [], np.zeros(0, np.int64)
    faces = np.asarray(doc.faces, dtype=np.int64).reshape(-1, 3)
    flat = faces.reshape(-1)
    if len(flat) and int(flat.max()) >= nv:
        first = int(np.argmax(flat >= nv))
        raise FormatError(f"face indices below the vertex count {nv}", path=f"faces[{first // 3}]",
                          offset=msh_mod.faces_offset(doc) + 2 * first, got=int(flat[first]))
    ranges = []
    if len(doc.submeshes) == 0:
        ranges.append((0, len(flat)))
    for i, s in enumerate(doc.submeshes):
        start, fc = int(s["index_start"]), int(s["face_count"])
        if start < 0 or fc < 0 or start + 3 * fc > len(flat):
            raise FormatError(f"submesh indices within the {len(flat)} face indices",
                              path=f"submeshes[{i}].index_start",
                              offset=msh_mod.SUBMESH_OFFSET + msh_mod.SUBMESH_DTYPE.itemsize * i + 8,
                              got=f"{start}..{start + 3 * fc}")
        ranges.append((start, start + 3 * fc))

    finite = np.isfinite(np.asarray(doc.positions, dtype=np.float32))
    bad_pos = 0 if finite.all() else int((~finite).any(axis=1).sum())
    if bad_pos:
        warnings.warn(f"{bad_pos} vertex positions hold NaN or infinity; placed at the origin",
                      LossWarning, stacklevel=3)
    pos = vec_to_gltf(_finite(doc.positions)).astype(np.float32)
    normals: np.ndarray | None = None
    recomputed: np.ndarray | None = None
    if doc.normals is not None:
        normals, bad = unit_rows(vec_to_gltf(_finite(doc.normals)))
        recomputed = bad
    tangents = None
    tangent_bad = None
    if doc.tangents is not None:
        t3, tangent_bad = unit_rows(vec_to_gltf(_finite(doc.tangents)))
        w = np.ones(nv)
        if doc.binormals is not None and normals is not None:
            bn = vec_to_gltf(_finite(doc.binormals))
            d = np.einsum("ij,ij->i", np.cross(normals, t3), bn)
            w = np.where(d < 0, -1.0, 1.0)
        tangents = np.concatenate([t3, w[:, None]], axis=1)
    colors = _colors(doc.colors) if doc.colors is not None else None
    uvs = [nan_to_num(np.asarray(u, np.float32)) for u in (doc.uv0, doc.uv1) if u is not None]
    joints: np.ndarray | None = None
    weights: np.ndarray | None = None
    if joint_of_id is not None and doc.weights is not None:
        joints, weights = _skin_weights(doc, joint_of_id)

    prims = []
    order = []
    for pi, (a, b) in enumerate(ranges):
        idx = flat[a:b]
        used, local = _vertices_used(idx)
        order.append(used)
        local = local.reshape(-1, 3)[:, [0, 2, 1]].reshape(-1)       # LH -> RH winding
        extras: dict[str, Any] = {"submesh": pi} if len(doc.submeshes) else {}
        n_ = None
        if normals is not None and recomputed is not None:      # (set together)
            n_ = normals[used].astype(np.float32)
            badn = recomputed[used]
            if badn.any():
                fix = compute_normals(pos[used], local.astype(np.uint32))
                n_[badn] = fix[badn]
                extras["normals_recomputed"] = int(badn.sum())
        t_ = None
        if tangents is not None:
            assert tangent_bad is not None                  # set with tangents
            if tangent_bad[used].any():
                extras["tangents_dropped"] = (f"{int(tangent_bad[used].sum())} zero-length "
                                              "tangents in the file")
            else:
                t_ = tangents[used].astype(np.float32)
        if doc.mesh_type == 2:
            tc = _texcoord_map(doc)
            if 0 in tc and 1 in tc:
                extras["lightmap_texcoord"] = tc[0]
            extras["diffuse_texcoord"] = tc.get(1, tc.get(0, 0))
        prim = Primitive(
            positions=pos[used], indices=local.astype(np.uint32), normals=n_, tangents=t_,
            uvs=[u[used] for u in uvs],
            colors=colors[used] if colors is not None else None,
            joints=joints[used] if joints is not None else None,
            weights=weights[used] if weights is not None else None,
            material=material_ids[pi] if pi < len(material_ids) else None,
            extras=extras)
        prims.append(prim)
    return prims, np.concatenate(order) if order else np.zeros(0, np.int64)


def _vertices_used(idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(idx, return_inverse=True)`` of a submesh's face indices (>= 0): without
    the sort (20x slower) when they use every vertex from the smallest to the largest, as a
    submesh's vertex range usually is."""
    if len(idx):
        lo, hi = int(idx.min()), int(idx.max())
        seen = np.zeros(hi - lo + 1, bool)
        seen[idx - lo] = True
        if seen.all():
            return np.arange(lo, hi + 1, dtype=idx.dtype), idx - lo
    return np.unique(idx, return_inverse=True)


def _skin_weights(doc: MshFile, joint_of_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    assert doc.weights is not None                  # called for a mesh with weights
    w = np.asarray(doc.weights["weight"], dtype=np.float64)
    use = msh_mod.engine_weight_mask(w) & np.isfinite(w)
    known, idx = msh_mod.usable_influences(doc.weights, len(joint_of_id))
    joint = joint_of_id[idx] if len(joint_of_id) else np.full(idx.shape, -1, np.int64)
    bad = use & (~known | (joint < 0))
    if bad.any():
        warnings.warn(f"{int(bad.sum())} vertex influences name bones that are not in the mesh's "
                      "bone list or the skeleton; dropped", LossWarning, stacklevel=4)
    use &= ~bad
    weights = np.where(use, w, 0.0).astype(np.float32)
    joints = np.where(use, joint, 0).astype(np.uint16)
    return joints, weights


def build_scene(msh: MshFile | None = None, skl: SklFile | None = None,
                anis: Sequence[tuple[str, AniFile]] = (), *, source: Path | None = None,
                material: Any = None, cms: CmsFile | None = None, name: str = "") -> Scene:
    """A Scene from any of the four documents (the to_scene functions call this)."""
    # garbage floats (signalling NaNs, 1e38) are sanitised explicitly: no numpy chatter
    with np.errstate(all="ignore"):
        return _build_scene(msh, skl, anis, source=source, material=material, cms=cms, name=name)


def _build_scene(msh: MshFile | None, skl: SklFile | None, anis: Sequence[tuple[str, AniFile]],
                 *, source: Path | None, material: Any, cms: CmsFile | None, name: str) -> Scene:
    scene = Scene(name=name)
    if source is not None:
        scene.extras["source_dir"] = str(Path(source).parent)
    joint_nodes: list[int] = []
    bone_index: dict[bytes, int] = {}
    if skl is not None:
        joint_nodes, bone_index = _add_skeleton(scene, skl)
    if msh is not None:
        mesh_name = name or "mesh"
        script_path = Path(material) if material is not None else mat_mod.find_script(source)
        script = []
        script_raw = None
        if script_path is not None:
            script_raw = Path(script_path).read_bytes()
            script = mat_mod.parse(script_raw)
            if len(script) < len(msh.submeshes):
                warnings.warn(f"material script {script_path.name} has {len(script)} materials for "
                              f"{len(msh.submeshes)} submeshes (the engine skips the extra ones)",
                              LossWarning, stacklevel=3)
        diffuse_set = 1 if msh.mesh_type == 2 and msh.uv1 is not None else 0
        material_ids = _materials(scene, script, mesh_name, diffuse_set, _texcoord_map(msh))
        joint_of_id = None
        placeholder = False
        bone_names = msh.bone_names if msh.weights is not None else None
        if bone_names is not None and skl is None:                # (skinned)
            names = [n for n in bone_names if n]           # the engine skips empty names
            shown = ", ".join(text(n) for n in names[:4]) + ("..." if len(names) > 4 else "")
            if names and not anis:
                # the weights and bone names are kept on bones of our own that rest at the
                # origin with identity inverse binds (so the mesh looks as it is stored);
                # from_scene writes no .skl for them
                warnings.warn(f"skinned mesh bound to placeholder bones at the origin: no skeleton "
                              f"given (pass skeleton=<the .skl with bones {shown}>)", LossWarning,
                              stacklevel=3)
                root = scene.add_node(Node(name="skeleton", extras={"lostsaga_placeholder": True}))
                joint_nodes = [scene.add_node(Node(name=text(n), extras={"lostsaga_placeholder": True}),
                                              parent=root) for n in names]
                joint_of_id = np.arange(len(names), dtype=np.int64)
                placeholder = True
            else:
                warnings.warn(f"skinned mesh converted static: no skeleton given (pass skeleton=<the "
                              f".skl with bones {shown}>)", LossWarning, stacklevel=3)
        elif bone_names is not None:                               # (skinned)
            names = [n for n in bone_names if n]           # the engine skips empty names
            joint_of_id = np.array([bone_index.get(n, -1) for n in names], dtype=np.int64)
        prims, order = _mesh_primitives(msh, joint_of_id, material_ids)
        mesh = Mesh(name=mesh_name, primitives=prims,
                    extras={"mesh_type": msh_mod.MESH_TYPES.get(msh.mesh_type, msh.mesh_type),
                            "lostsaga_version": msh.version, "vertex_mask": msh.vertex_mask})
        exact = mesh_exact(msh, prims, order, joint_of_id)
        if exact:
            mesh.extras["lostsaga_exact"] = exact
        if len(msh.submeshes):
            mesh.extras["submeshes"] = [[int(x) for x in row.tolist()] for row in msh.submeshes]
        if msh.billboard_centers is not None:
            bc = billboard_extras(msh.billboard_centers)
            if bc is not None:
                mesh.extras["billboard_centers"] = bc
            else:
                warnings.warn(f"{msh.vertex_count} billboard centres have no place in glTF; left out",
                              LossWarning, stacklevel=3)
        if bone_names is not None and (joint_of_id is None or placeholder):   # (skinned)
            mesh.extras["bone_names"] = [text(n) for n in bone_names]
        if msh.control_points:
            mesh.extras["control_points"] = [
                {"type": text(c.type), "bone": text(c.bone), "extra": text(c.extra),
                 "point": vec_to_gltf(_finite(c.point)).tolist()} for c in msh.control_points]
        mi = scene.add_mesh(mesh)
        node = Node(name=mesh_name, mesh=mi)
        if joint_of_id is not None and prims and any(p.joints is not None for p in prims):
            node.skin = scene.add_skin(Skin(joints=joint_nodes,
                                            inverse_bind_matrices=np.tile(np.eye(4), (len(joint_nodes), 1, 1))
                                            if placeholder or skl is None else _inverse_binds(skl),
                                            skeleton=None, name=(name or "skin")))
        scene.add_node(node)
        if script_raw is not None:
            rec = script_record(script_raw, script_from_scene(scene).encode("utf-8"))
            if rec:
                scene.extras["lostsaga_script"] = rec
    if cms is not None:
        faces = np.asarray(cms.faces, dtype=np.int64).reshape(-1, 3)
        n = len(cms.positions)
        flat = faces.reshape(-1)
        if len(flat) and int(flat.max()) >= n:
            first = int(np.argmax(flat >= n))
            raise FormatError(f"face indices below the vertex count {n}", path=f"faces[{first // 3}]",
                              offset=12 + 12 * n + 4 + 2 * first, got=int(flat[first]))
        prim = Primitive(positions=vec_to_gltf(_finite(cms.positions)),
                         indices=faces[:, [0, 2, 1]].reshape(-1).astype(np.uint32))
        mi = scene.add_mesh(Mesh(name=name or "collision", primitives=[prim],
                                 extras={"collision": True}))
        scene.add_node(Node(name=name or "collision", mesh=mi, extras={"collision": True}))
    if anis:
        if skl is not None:
            targets = {b.name: joint_nodes[i] for b, i in
                       ((skl.bones[i], i) for i in bone_index.values())}
        else:
            targets = _flat_joints(scene, anis, name)
        for ani_name, doc in anis:
            _add_animation(scene, doc, ani_name, targets)
    if skl is not None and skl.bones:
        _keep_skeleton(scene, skl)
    return scene


def _keep_skeleton(scene: Scene, skl: SklFile) -> None:
    """The poses the writer does not give back bit for bit from the scene as a GLB holds it
    (``lostsaga_skeleton.exact``, :func:`retromesh.restore.keep_table`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            back = skeleton_poses(_transforms_held(scene))
        except DocumentError:
            return
    if len(back) == len(skl.poses):
        was, got = pose_fields(skl.poses), pose_fields(back)
        rec = {f: r for f in was if (r := restore.keep_table(was[f], got[f])) is not None}
        if rec:
            scene.extras["lostsaga_skeleton"]["exact"] = rec


def _transforms_held(scene: Scene) -> Scene:
    """A copy of ``scene`` whose node transforms and inverse binds are as a GLB holds them, the
    rest shared: :func:`retromesh.restore.as_glb_holds` without its copies of the extras
    through JSON (the skeleton's poses read no extras; copying them was a third of the record's
    cost), meshes and animations."""
    n = len(scene.nodes)
    cols = [np.array([getattr(x, a) for x in scene.nodes], np.float64).reshape(n, w)
            for a, w in (("translation", 3), ("rotation", 4), ("scale", 3))]
    (t, r, s), _ = gltf_node_trs(*cols)
    out = copy.copy(scene)
    out.nodes = [copy.copy(x) for x in scene.nodes]
    for i, x in enumerate(out.nodes):
        x.translation, x.rotation, x.scale = t[i], r[i], s[i]
    out.skins = [copy.copy(k) for k in scene.skins]
    for k in out.skins:
        if k.inverse_bind_matrices is not None:
            k.inverse_bind_matrices = np.asarray(k.inverse_bind_matrices, np.float32).astype(np.float64)
    return out


def _flat_joints(scene: Scene, anis: Sequence[tuple[str, AniFile]], name: str) -> dict[bytes, int]:
    warnings.warn("animation without a skeleton: joints are placed flat under one root, each at "
                  "its first key (pass skeleton=<.skl> for the hierarchy)", LossWarning, stacklevel=4)
    root = scene.add_node(Node(name=name or "animation", extras={"lostsaga_flat_joints": True}))
    first: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for _, doc in anis:
        for track in doc.tracks:
            if track.bone in first or len(track.keys) == 0:
                continue
            first[track.bone] = (ani_mod.rotations(track, doc.version)[:1],
                                 track.keys["translation"][:1])
    targets: dict[bytes, int] = {}
    if not first:
        return targets
    # every joint's first key in one numpy pass (row by row the same values)
    rots = _unit_quats(quat_to_gltf(np.nan_to_num(
        np.concatenate([r for r, _ in first.values()]).astype(np.float64))))
    ts = vec_to_gltf(_finite(np.concatenate([t for _, t in first.values()])))
    for k, bone in enumerate(first):
        targets[bone] = scene.add_node(Node(name=text(bone), translation=ts[k], rotation=rots[k]),
                                       parent=root)
    return targets


def _anis(animations, fallback: AniFile | None = None, fallback_name: str = "") -> list:
    out = []
    if fallback is not None:
        out.append((fallback_name or "animation", fallback))
    for i, item in enumerate(_as_list(animations)):
        out.append((_stem(item, f"animation{i}"), _load(item, AniFile, "ani")))
    return out


def msh_to_scene(doc: MshFile, *, source: Path | None = None, skeleton: Any = None,
                 animations: Any = None, material: Any = None) -> Scene:
    scene = build_scene(doc, _load(skeleton, SklFile, "skl"), _anis(animations), source=source,
                        material=material, name=_stem(source, "mesh"))
    if source is not None and Path(source).suffix.lower() == ".cms":
        for m in scene.meshes:                   # a mesh used as a collision shape
            m.extras["collision"] = True
    return scene


def skl_to_scene(doc: SklFile, *, source: Path | None = None, mesh: Any = None,
                 animations: Any = None) -> Scene:
    return build_scene(_load(mesh, MshFile, "msh"), doc, _anis(animations),
                       source=Path(mesh) if isinstance(mesh, (str, Path)) else source,
                       name=_stem(mesh, _stem(source, "skeleton")))


def ani_to_scene(doc: AniFile, *, source: Path | None = None, skeleton: Any = None,
                 mesh: Any = None, animations: Any = None) -> Scene:
    return build_scene(_load(mesh, MshFile, "msh"), _load(skeleton, SklFile, "skl"),
                       _anis(animations, doc, _stem(source, "animation")),
                       source=Path(mesh) if isinstance(mesh, (str, Path)) else source,
                       name=_stem(mesh, _stem(source, "animation")))


def cms_to_scene(doc: CmsFile, *, source: Path | None = None) -> Scene:
    return build_scene(cms=doc, source=source, name=_stem(source, "collision"))


