"""Lost Saga <-> :class:`retromesh.Scene` (glTF conventions).

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
  and track weights in the animation's ``extras``). Without a skeleton a skinned mesh converts
  static, with a LossWarning naming the missing skeleton.
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
  ends at its last key (``extras.total_time_ms`` keeps the file's value).

from_scene
----------
``msh`` from a Scene: every mesh node becomes submeshes of one ``.msh`` (static nodes baked to
world space, skinned ones kept in bind space; when the scene is skinned, unskinned mesh nodes are
bound rigidly, weight 1, to the joint they hang under, or to the root bone with a LossWarning: a
type-1 mesh has no unweighted vertices; a further skin over the same joints with the same bind pose
up to one matrix -- exporters write one skin per mesh -- is merged onto the first); with a skin
also a ``.skl`` (joints of the first skin) and one ``.ani`` per animation (``DEFAULT`` 4000, or
``animation_format="comp4"/"comp8"``; ``rounding="engine"|"nearest"``): ``{"": msh, ".skl": skl,
".ani": ani}`` or ``"_<name>.ani"`` keys when there are several animations. Non-joint nodes between
the joints (an exporter's rotated or scaled ``Armature`` node) are folded into the bones' LocalTMs
and, at their rest transform, into the ``.ani`` keys of the bones below them (keys are relative to
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

import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import DocumentError, FormatError, LossWarning
from ...scene import Animation, Channel, Material, Mesh, Node, Primitive, Scene, Skin, Texture, TextureRef
from ...transforms import compose_trs, decompose_trs, inverse, quat_continuous, quat_normalize
from . import ani as ani_mod
from . import material as mat_mod
from . import msh as msh_mod
from .ani import AniEvent, AniFile, AniTrack
from .cms import CmsFile
from .common import (ANIMATION_VER_COMP4, ANIMATION_VER_COMP8, ANIMATION_VER_DEFAULT,
                     MESH_VERSION, VERTEX_COLOR_MESH_VERSION, encode_name, quat_from_gltf,
                     quat_to_gltf, text, vec_from_gltf, vec_to_gltf)
from .msh import MshFile
from .quatcodec import encode_comp4, encode_comp8
from .skl import POSE_DTYPE, SklBone, SklFile

__all__ = ["msh_to_scene", "skl_to_scene", "ani_to_scene", "cms_to_scene", "msh_from_scene",
           "skl_from_scene", "ani_from_scene", "cms_from_scene", "build_scene",
           "script_from_scene"]


# -- loading companions ----------------------------------------------------------------------

def _load(item: Any, kind: type, fmt: str):
    if item is None or isinstance(item, kind):
        return item
    from ... import registry
    from ...fileio import read_source
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

def _prescale(v: np.ndarray) -> np.ndarray:
    """Rows divided by their largest magnitude (no overflow when squaring huge floats)."""
    m = np.max(np.abs(v), axis=-1, keepdims=True) if v.size else np.ones(v.shape[:-1] + (1,))
    return v / np.where(m > 0, m, 1.0)


def _unit_quats(q: np.ndarray) -> np.ndarray:
    q = np.nan_to_num(np.asarray(q, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    return quat_normalize(_prescale(q))


def _finite(a: np.ndarray) -> np.ndarray:
    return np.nan_to_num(np.asarray(a, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)


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
        else:
            scene.nodes[nodes[p]].children.append(nodes[i])
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
    for ti, track in enumerate(doc.tracks):
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
        dropped += int((~ok).sum())
        times, rot, trans = times[ok], rot[ok], trans[ok]
        if len(times) == 0:
            continue
        order = np.argsort(times, kind="stable")
        times, rot, trans = times[order], rot[order], trans[order]
        keep = np.append(times[1:] != times[:-1], True)        # a later key at the same ms wins
        times, rot, trans = times[keep], rot[keep], trans[keep]
        secs = times / 1000.0
        non_unit += int(np.sum(np.abs(np.linalg.norm(rot, axis=1) - 1.0) > 1e-3))
        channels.append(Channel(node, "rotation", secs,
                                quat_continuous(_unit_quats(quat_to_gltf(rot)))))
        channels.append(Channel(node, "translation", secs, vec_to_gltf(trans)))
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
        "events": [{"type": text(e.type), "info": text(e.info), "time": float(e.time) / 1000.0}
                   for e in doc.events],
    }
    if weights:
        extras["track_weights"] = weights
    if non_unit:
        extras["non_unit_rotation_keys"] = non_unit      # normalised for glTF
    if not channels:
        warnings.warn(f"animation {name!r} has no usable keys; left out", LossWarning, stacklevel=3)
        return
    scene.animations.append(Animation(name=name, channels=channels, extras=extras))


# -- mesh --------------------------------------------------------------------------------------

def _colors(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, dtype=np.uint32)
    b = np.stack([(c >> 16) & 255, (c >> 8) & 255, c & 255, (c >> 24) & 255], axis=1)
    return b.astype(np.float32) / 255.0


def _unit_rows(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = _prescale(np.asarray(v, dtype=np.float64))
    n = np.linalg.norm(v, axis=1)
    bad = ~np.isfinite(n) | (n < 1e-8)
    out = np.where(bad[:, None], 0.0, v / np.where(bad, 1.0, n)[:, None])
    return out, bad


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
            mat.base_color = tuple(float(np.clip(c, 0, 1)) for c in sm.diffuse)
        units = [u for u in sm.texture_units if u.texture]
        if units:
            pick = next((u for u in units if u.tex_coord_set == diffuse_set), units[0])
            if pick.texture not in tex_index:
                tex_index[pick.texture] = scene.add_texture(Texture(name=pick.texture,
                                                                    uri=pick.texture))
            texcoord = texcoords.get(pick.tex_coord_set, 0)
            mat.base_color_texture = TextureRef(tex_index[pick.texture], texcoord=texcoord)
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
                     material_ids: list[int]) -> list[Primitive]:
    nv = doc.vertex_count
    if doc.positions is None:
        if nv:
            warnings.warn("mesh without positions (mask lacks POSITION): nothing to convert",
                          LossWarning, stacklevel=3)
        return []
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

    bad_pos = int((~np.isfinite(np.asarray(doc.positions, dtype=np.float32))).any(axis=1).sum())
    if bad_pos:
        warnings.warn(f"{bad_pos} vertex positions hold NaN or infinity; placed at the origin",
                      LossWarning, stacklevel=3)
    pos = vec_to_gltf(_finite(doc.positions)).astype(np.float32)
    normals = recomputed = None
    if doc.normals is not None:
        normals, bad = _unit_rows(vec_to_gltf(_finite(doc.normals)))
        recomputed = bad
    tangents = None
    tangent_bad = None
    if doc.tangents is not None:
        t3, tangent_bad = _unit_rows(vec_to_gltf(_finite(doc.tangents)))
        w = np.ones(nv)
        if doc.binormals is not None and normals is not None:
            b = vec_to_gltf(_finite(doc.binormals))
            d = np.einsum("ij,ij->i", np.cross(normals, t3), b)
            w = np.where(d < 0, -1.0, 1.0)
        tangents = np.concatenate([t3, w[:, None]], axis=1)
    colors = _colors(doc.colors) if doc.colors is not None else None
    uvs = [np.nan_to_num(np.asarray(u, np.float32)) for u in (doc.uv0, doc.uv1) if u is not None]
    joints = weights = None
    if joint_of_id is not None and doc.weights is not None:
        joints, weights = _skin_weights(doc, joint_of_id)

    from ...gltf.writer import compute_normals
    prims = []
    for pi, (a, b) in enumerate(ranges):
        idx = flat[a:b]
        used, local = np.unique(idx, return_inverse=True)
        local = local.reshape(-1, 3)[:, [0, 2, 1]].reshape(-1)       # LH -> RH winding
        extras: dict[str, Any] = {"submesh": pi} if len(doc.submeshes) else {}
        n_ = None
        if normals is not None:
            n_ = normals[used].astype(np.float32)
            badn = recomputed[used]
            if badn.any():
                fix = compute_normals(pos[used], local.astype(np.uint32))
                n_[badn] = fix[badn]
                extras["normals_recomputed"] = int(badn.sum())
        t_ = None
        if tangents is not None:
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
    return prims


def _skin_weights(doc: MshFile, joint_of_id: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(doc.weights["weight"], dtype=np.float64)
    ids = np.asarray(doc.weights["bone"], dtype=np.float64)
    use = msh_mod.engine_weight_mask(w)
    use &= np.isfinite(w)
    ok_id = np.isfinite(ids) & (ids >= 0) & (ids < len(joint_of_id))
    idx = np.where(ok_id, ids, 0).astype(np.int64)
    joint = joint_of_id[idx] if len(joint_of_id) else np.full(idx.shape, -1, np.int64)
    bad = use & (~ok_id | (joint < 0))
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
        if script_path is not None:
            script = mat_mod.parse(Path(script_path).read_bytes())
            if len(script) < len(msh.submeshes):
                warnings.warn(f"material script {script_path.name} has {len(script)} materials for "
                              f"{len(msh.submeshes)} submeshes (the engine skips the extra ones)",
                              LossWarning, stacklevel=3)
        diffuse_set = 1 if msh.mesh_type == 2 and msh.uv1 is not None else 0
        material_ids = _materials(scene, script, mesh_name, diffuse_set, _texcoord_map(msh))
        joint_of_id = None
        skinned = msh.weights is not None and msh.bone_names is not None
        if skinned and skl is None:
            names = [text(n) for n in msh.bone_names if n]
            warnings.warn(f"skinned mesh converted static: no skeleton given (pass skeleton=<the "
                          f".skl with bones {', '.join(names[:4])}{'...' if len(names) > 4 else ''}>)",
                          LossWarning, stacklevel=3)
        elif skinned:
            names = [n for n in msh.bone_names if n]           # the engine skips empty names
            joint_of_id = np.array([bone_index.get(n, -1) for n in names], dtype=np.int64)
        prims = _mesh_primitives(msh, joint_of_id, material_ids)
        mesh = Mesh(name=mesh_name, primitives=prims,
                    extras={"mesh_type": msh_mod.MESH_TYPES.get(msh.mesh_type, msh.mesh_type),
                            "lostsaga_version": msh.version})
        if skinned and joint_of_id is None:
            mesh.extras["bone_names"] = [text(n) for n in msh.bone_names]
        if msh.control_points:
            mesh.extras["control_points"] = [
                {"type": text(c.type), "bone": text(c.bone), "extra": text(c.extra),
                 "point": vec_to_gltf(_finite(c.point)).tolist()} for c in msh.control_points]
        mi = scene.add_mesh(mesh)
        node = Node(name=mesh_name, mesh=mi)
        if joint_of_id is not None and prims and any(p.joints is not None for p in prims):
            node.skin = scene.add_skin(Skin(joints=joint_nodes,
                                            inverse_bind_matrices=_inverse_binds(skl),
                                            skeleton=None, name=(name or "skin")))
        scene.add_node(node)
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
    return scene


def _flat_joints(scene: Scene, anis: Sequence[tuple[str, AniFile]], name: str) -> dict[bytes, int]:
    warnings.warn("animation without a skeleton: joints are placed flat under one root, each at "
                  "its first key (pass skeleton=<.skl> for the hierarchy)", LossWarning, stacklevel=4)
    root = scene.add_node(Node(name=name or "animation", extras={"lostsaga_flat_joints": True}))
    targets: dict[bytes, int] = {}
    for _, doc in anis:
        for track in doc.tracks:
            if track.bone in targets or len(track.keys) == 0:
                continue
            rot = _unit_quats(quat_to_gltf(np.nan_to_num(
                ani_mod.rotations(track, doc.version)[:1].astype(np.float64))))[0]
            t = vec_to_gltf(_finite(track.keys["translation"][0]))
            targets[track.bone] = scene.add_node(Node(name=text(track.bone), translation=t,
                                                      rotation=rot), parent=root)
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
    parents_node = scene.parents()
    pos = {n: i for i, n in enumerate(joints)}
    parents = []
    for n in joints:
        p = parents_node[n]
        while p >= 0 and p not in pos:
            p = parents_node[p]
        parents.append(pos[p] if p >= 0 else -1)
    return parents


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


def skl_from_scene(scene: Scene, **options: Any) -> SklFile:
    return _skeleton(scene)[0]


def _skeleton(scene: Scene) -> tuple[SklFile, list[int], list[int]]:
    """The ``.skl``, the scene node of every bone and every bone's parent bone (-1 = root)."""
    skinned = _skinned_nodes(scene)
    world = scene.world_matrices()
    if skinned:
        skin = scene.skins[scene.nodes[skinned[0]].skin]
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
    n = len(skin.joints)
    ibm = (np.asarray(skin.inverse_bind_matrices, dtype=np.float64)
           if skin.inverse_bind_matrices is not None else inverse(world[skin.joints]))
    rigid, sig = _unscale(world[skin.joints])
    local = np.array([inverse(rigid[p]) @ rigid[k] if p >= 0 else rigid[k]
                      for k, p in enumerate(parents)]).reshape(-1, 4, 4)
    ibm = ibm.copy()
    ibm[:, :3, :] *= sig[:, None, None]                          # diag(sig, sig, sig, 1) @ ibm
    t, r, s = decompose_trs(local)
    if not np.allclose(s, 1.0, atol=1e-4):
        warnings.warn("non-uniform joint scale is not kept by .skl (LocalTM has none)",
                      LossWarning, stacklevel=3)
    poses = np.zeros(n, POSE_DTYPE)
    poses["local_position"] = vec_from_gltf(t)
    poses["local_rotation"] = quat_from_gltf(r)
    it, ir, iscale = decompose_trs(ibm)
    if not np.allclose(np.abs(iscale), 1.0, atol=1e-4):
        warnings.warn("inverse bind matrices with scale: the .skl inverse pair holds only rotation "
                      "and translation (scale dropped)", LossWarning, stacklevel=3)
    poses["inverse_position"] = vec_from_gltf(it)
    poses["inverse_rotation"] = quat_from_gltf(ir)
    bind = inverse(ibm)
    smat = np.diag([1.0, 1.0, -1.0, 1.0])
    poses["object_tm"] = np.swapaxes(smat @ bind @ smat, -1, -2)       # D3DX row-vector form
    names = []
    seen: set[bytes] = set()
    for k, j in enumerate(skin.joints):
        nm = encode_name(scene.nodes[j].name or f"bone{k}")
        while nm in seen:
            nm += b"_"
        seen.add(nm)
        names.append(nm)
    bones = [SklBone(name=names[k], parent=names[parents[k]] if parents[k] >= 0 else b"")
             for k in range(n)]
    for k, p in enumerate(parents):
        if p >= 0:
            bones[p].children.append(names[k])
    return SklFile(bones=bones, poses=poses, linked_skeleton=b""), list(skin.joints), parents


def _key_frames(scene: Scene, joints: list[int], bone_parents: list[int]) -> list:
    """Per bone, None or the ``(pre, post)`` matrices that take its glTF-local keys ``L`` to its
    rigid local TM relative to its ``.skl`` parent: ``pre @ L @ post``. ``pre`` holds the rest
    transforms of non-joint nodes in between (an exporter's ``Armature`` node) and the parent's
    baked scale, ``post`` the bone's own (see :func:`_unscale`)."""
    world = scene.world_matrices()
    gparents = scene.parents()
    _, sig = _unscale(world[joints])
    out = []
    for k, n in enumerate(joints):
        gp, bp = gparents[n], bone_parents[k]
        pre = np.eye(4)
        if gp >= 0 and not (bp >= 0 and gp == joints[bp]):
            pre = world[gp] if bp < 0 else inverse(world[joints[bp]]) @ world[gp]
        if bp >= 0:
            pre = np.diag([sig[bp], sig[bp], sig[bp], 1.0]) @ pre
        post = np.diag([1.0 / sig[k], 1.0 / sig[k], 1.0 / sig[k], 1.0])
        trivial = np.allclose(pre, np.eye(4), atol=1e-12) and np.allclose(post, np.eye(4),
                                                                            atol=1e-12)
        out.append(None if trivial else (pre, post))
    return out


def _animation_to_ani(scene: Scene, anim: Animation, joints: list[int], names: list[bytes],
                      bone_parents: list[int], version: int, rounding: str) -> AniFile:
    by_node: dict[int, dict[str, Channel]] = {}
    for c in anim.channels:
        by_node.setdefault(c.node, {})[c.path] = c
    if any(c.interpolation == "CUBICSPLINE" for c in anim.channels):
        warnings.warn(f"animation {anim.name!r}: cubic-spline keys sampled linearly", LossWarning,
                      stacklevel=4)
    jset = set(joints)
    others = sorted({scene.nodes[n].name or f"node{n}" for n in by_node if n not in jset})
    if others:
        warnings.warn(f"animation {anim.name!r}: channels of nodes that are not joints are not kept "
                      f"by .ani ({', '.join(others[:5])}{'...' if len(others) > 5 else ''})",
                      LossWarning, stacklevel=4)
    frames = _key_frames(scene, joints, bone_parents)
    dt = ani_mod.key_dtype(version)
    tracks = []
    # an animation laid on a longer timeline starts at 0 in the .ani; one read from a Lost Saga
    # file keeps its times as they were (its first key need not be at 0 ms)
    t0 = (0.0 if "lostsaga_version" in anim.extras
          else min((float(c.times[0]) for c in anim.channels), default=0.0))
    end = 0
    scaled = False
    for k, node in enumerate(joints):
        chs = by_node.get(node)
        if not chs or not ({"rotation", "translation"} & chs.keys()):
            continue
        used = [c for p, c in chs.items() if p in ("rotation", "translation")]
        # .ani keys are interpolated linearly: a STEP channel gets a hold key 1 ms before each key
        holds = [c.times[1:].astype(np.float64) - 0.001 for c in used if c.interpolation == "STEP"]
        times = np.unique(np.concatenate([c.times.astype(np.float64) for c in used] + holds))
        ms = np.round((times - t0) * 1000.0).astype(np.int64)
        keep = np.append(ms[1:] != ms[:-1], True)
        times, ms = times[keep], ms[keep]
        nd = scene.nodes[node]
        rot = (chs["rotation"].sample(times) if "rotation" in chs
               else np.tile(nd.rotation, (len(times), 1)))
        tr = (chs["translation"].sample(times) if "translation" in chs
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
        tracks.append(AniTrack(bone=names[k], weight=1.0, keys=keys))
    if scaled:
        warnings.warn(f"animation {anim.name!r}: scale that changes over time or is not uniform "
                      "is not kept by .ani keys", LossWarning, stacklevel=4)
    events = []
    for e in anim.extras.get("events", []) if isinstance(anim.extras.get("events"), list) else []:
        if isinstance(e, dict):
            events.append(AniEvent(encode_name(str(e.get("type", ""))),
                                   encode_name(str(e.get("info", ""))),
                                   (float(e.get("time", 0.0)) - t0) * 1000.0))
    total = anim.extras.get("total_time_ms")
    total = int(total) if isinstance(total, (int, float)) and total >= end else end
    return AniFile(version=version, events=events, total_time=total, tracks=tracks)


def _animations(scene: Scene, joints: list[int], names: list[bytes], bone_parents: list[int],
                animation_format: Any, rounding: str) -> dict[str, AniFile]:
    version = _ani_version(animation_format)
    out: dict[str, AniFile] = {}
    for i, anim in enumerate(scene.animations):
        doc = _animation_to_ani(scene, anim, joints, names, bone_parents, version, rounding)
        if not doc.tracks:
            continue
        label = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in (anim.name or f"anim{i}"))
        key = f"_{label}.ani"
        while key in out:
            key = key[:-4] + "_.ani"
        out[key] = doc
    return out


def ani_from_scene(scene: Scene, *, animation_format: Any = "default",
                   rounding: str = "engine", **options: Any):
    if not scene.animations:
        raise DocumentError("ani: the scene has no animations")
    skl, joints, bone_parents = _skeleton(scene)
    anis = _animations(scene, joints, skl.names(), bone_parents, animation_format, rounding)
    if not anis:
        raise DocumentError("ani: no animation targets a joint")
    docs = list(anis.values())
    if len(docs) == 1:
        return docs[0]
    out: dict[str, Any] = {"": docs[0]}
    out.update(list(anis.items())[1:])
    return out


def _d3d_colors(c: np.ndarray) -> np.ndarray:
    b = np.clip(np.round(np.nan_to_num(c) * 255.0), 0, 255).astype(np.uint32)
    return (b[:, 3] << 24) | (b[:, 0] << 16) | (b[:, 1] << 8) | b[:, 2]


def msh_from_scene(scene: Scene, *, animation_format: Any = "default", rounding: str = "engine",
                   version: int | None = None, mesh_type: int | None = None, **options: Any):
    from ...gltf.writer import compute_normals
    world = scene.world_matrices()
    skinned_nodes = _skinned_nodes(scene)
    skl = joints = bone_parents = None
    if skinned_nodes:
        skl, joints, bone_parents = _skeleton(scene)
        if len(joints) > 256:
            raise DocumentError(f"msh: {len(joints)} joints; the engine packs bone ids in a byte "
                                "(at most 256)")
    main_skin = scene.nodes[skinned_nodes[0]].skin if skinned_nodes else None
    if skl is not None:
        skin = scene.skins[main_skin]
        ibm = (np.asarray(skin.inverse_bind_matrices, dtype=np.float64)
               if skin.inverse_bind_matrices is not None else inverse(world[joints]))
        bone_of = {n: k for k, n in enumerate(joints)}
        gparents = scene.parents()
    parts = []
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        skinned = node.skin is not None and node.skin == main_skin
        m = world[ni]
        remap = None
        if node.skin is not None and not skinned:
            remap, c = _skin_onto(scene.skins[node.skin], bone_of, ibm, world)
            if remap is None:
                warnings.warn(f"node {node.name!r}: a second skin with other joints or bind poses "
                              "than the first is not supported; bound rigidly", LossWarning,
                              stacklevel=2)
            else:
                m = c
        rigid = None
        if skl is not None and not skinned and remap is None:
            # a type-1 mesh has no unskinned vertices (a vertex without weight collapses): bind
            # the node rigidly to the joint it hangs under, in that bone's bind space
            j = ni
            while j >= 0 and j not in bone_of:
                j = gparents[j]
            if j < 0:
                rigid = bone_parents.index(-1)
                warnings.warn(f"node {node.name!r}: a mesh under no joint is bound to the root bone "
                              f"{text(skl.bones[rigid].name)!r} (it follows that bone's keys)",
                              LossWarning, stacklevel=2)
            else:
                rigid = bone_of[j]
            m = inverse(ibm[rigid]) @ inverse(world[joints[rigid]]) @ m
        nm = np.linalg.inv(m[:3, :3]).T if abs(np.linalg.det(m[:3, :3])) > 1e-12 else np.eye(3)
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
            if not skinned:
                pos = pos @ m[:3, :3].T + m[:3, 3]
                nrm = _unit_rows(nrm @ nm.T)[0]              # a scaled node: unit normals again
                mirror = np.linalg.det(m[:3, :3]) < 0
                if tan is not None:
                    tan = np.concatenate([_unit_rows(tan[:, :3] @ m[:3, :3].T)[0],
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
    if not parts:
        raise DocumentError("msh: the scene has no triangle meshes")
    total = sum(len(q["pos"]) for q in parts)
    if total > 65536:
        raise DocumentError(f"msh: {total} vertices; uint16 face indices address at most 65536")
    has_uv1 = any(len(q["uvs"]) > 1 for q in parts)
    has_col = any(q["colors"] is not None for q in parts)
    has_tan = all(q["tan"] is not None for q in parts)
    has_w = skl is not None
    mask = msh_mod.POSITION | msh_mod.NORMAL | msh_mod.UV0
    mask |= msh_mod.UV1 if has_uv1 else 0
    mask |= msh_mod.COLOR0 if has_col else 0
    mask |= (msh_mod.TANGENT | msh_mod.BINORMAL) if has_tan else 0
    mask |= (msh_mod.WEIGHTS | msh_mod.INDICES) if has_w else 0
    pos, nrm, tan, bin_, uv0, uv1, col, wts, faces = [], [], [], [], [], [], [], [], []
    subs = np.zeros(len(parts), msh_mod.SUBMESH_DTYPE)
    base = istart = 0
    for k, q in enumerate(parts):
        n = len(q["pos"])
        pos.append(vec_from_gltf(q["pos"]))
        nrm.append(vec_from_gltf(q["nrm"]))
        if has_tan:
            t = q["tan"]
            b = np.cross(q["nrm"], t[:, :3]) * np.where(t[:, 3:4] < 0, -1.0, 1.0)
            tan.append(vec_from_gltf(t[:, :3]))
            bin_.append(vec_from_gltf(b))
        zero_uv = np.zeros((n, 2))
        uv0.append(q["uvs"][0] if q["uvs"] else zero_uv)
        if has_uv1:
            uv1.append(q["uvs"][1] if len(q["uvs"]) > 1 else zero_uv)
        if has_col:
            col.append(_d3d_colors(q["colors"]) if q["colors"] is not None
                       else np.full(n, 0xFFFFFFFF, np.uint32))
        if has_w:
            rec = np.zeros(n, msh_mod.WEIGHT_DTYPE)
            if q["joints"] is not None:
                w = np.nan_to_num(q["weights"].astype(np.float64))
                j = q["joints"].astype(np.float64)
                order = np.argsort(-w, axis=1, kind="stable")      # the engine stops at w <= 0
                w = np.take_along_axis(w, order, axis=1)
                j = np.take_along_axis(j, order, axis=1)
                j[w <= 0] = 0
                w[w <= 0] = 0
                rec["weight"] = w
                rec["bone"] = j
            wts.append(rec)
        f = q["idx"].reshape(-1, 3)[:, [0, 2, 1]] + base
        faces.append(f)
        subs[k] = (base, n, istart, len(f))
        base += n
        istart += 3 * len(f)
    P = np.concatenate(pos).astype(np.float32)
    doc = MshFile(
        version=version if version is not None else (VERTEX_COLOR_MESH_VERSION if has_col
                                                    else MESH_VERSION),
        mesh_type=mesh_type if mesh_type is not None else _mesh_type(scene, has_w),
        vertex_mask=mask, submeshes=subs, vertex_count=len(P), positions=P,
        normals=np.concatenate(nrm).astype(np.float32),
        tangents=np.concatenate(tan).astype(np.float32) if has_tan else None,
        binormals=np.concatenate(bin_).astype(np.float32) if has_tan else None,
        colors=np.concatenate(col).astype(np.uint32) if has_col else None,
        uv0=np.concatenate(uv0).astype(np.float32),
        uv1=np.concatenate(uv1).astype(np.float32) if has_uv1 else None,
        bone_names=skl.names() if has_w else None,
        weights=np.concatenate(wts) if has_w else None,
        faces=np.concatenate(faces).astype(np.uint16))
    if doc.version == 2002:
        doc.control_points = []
    lo, hi = P.min(axis=0), P.max(axis=0)
    radius = float(np.linalg.norm(hi - lo)) / 2.0     # what the add-on's files hold
    doc.bbox = np.array([*lo, *hi, radius], dtype=np.float32)
    script = None
    if any(q["material"] is not None for q in parts) and options.get("material_script", True):
        script = mat_mod.MaterialScript(script_from_scene(scene).encode("utf-8"))
    if not has_w:
        if scene.animations:
            warnings.warn("animations without a skin are not written (.ani needs a skeleton)",
                          LossWarning, stacklevel=2)
        return doc if script is None else {"": doc, ".txt": script}
    out: dict[str, Any] = {"": doc, ".skl": skl}
    if script is not None:
        out[".txt"] = script
    anis = _animations(scene, joints, skl.names(), bone_parents, animation_format, rounding)
    if len(anis) == 1:
        out[".ani"] = next(iter(anis.values()))
    else:
        out.update(anis)
    return out


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
    by_name = {v: k for k, v in msh_mod.MESH_TYPES.items()}
    kinds = {by_name.get(m.extras.get("mesh_type")) for m in scene.meshes}
    kinds.discard(1)
    if len(kinds) == 1 and None not in kinds:
        return kinds.pop()
    return 0


def cms_from_scene(scene: Scene, **options: Any) -> CmsFile:
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
