"""Scene (glTF conventions) -> B3D document: :func:`from_scene`."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...errors import DocumentError, LossWarning
from ...scene import Scene, Texture
from ...transforms import decompose_trs, inverse
from .axes import _WRAP_CLAMP, _Z, _rot_from_gltf
from .chunks import (BONE_DTYPE, AnimChunk, B3dFile, Bone, BrushEntry, Brus, Keys, MeshChunk,
                     NodeChunk, Texs, TextureEntry, Tris, Vrts, keys_dtype, vrts_dtype)

__all__ = ["from_scene"]


def _image_file_name(t: Texture, index: int) -> str:
    """A file name for an image embedded in the scene (B3D refers to textures by name)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in (t.name or "")) or f"texture{index}"
    ext = ".jpg" if t.mime_type == "image/jpeg" else ".png"
    return stem if stem.lower().endswith(ext) else stem + ext


def _brushes_for(scene: Scene, images: dict[str, bytes]) -> tuple[Texs, Brus, dict[int, int]]:
    """TEXS and BRUS for the scene's materials; embedded images to write go into ``images``."""
    texs = Texs()
    tex_index: dict[tuple, int] = {}
    brus = Brus(n_texs=0)
    brush_of: dict[int, int] = {}
    entries = []
    for mi, m in enumerate(scene.materials):
        tids = []
        ref = m.base_color_texture
        if ref is not None and 0 <= ref.texture < len(scene.textures):
            t = scene.textures[ref.texture]
            if t.uri is None and t.image is not None:
                name = _image_file_name(t, ref.texture)
                images[name] = t.image
            else:
                name = (t.uri or t.name or f"texture{ref.texture}.png")
            flags = 1 | 8
            if m.alpha_mode == "BLEND":
                flags |= 2
            elif m.alpha_mode == "MASK":
                flags |= 4
            if t.wrap_s == _WRAP_CLAMP:
                flags |= 16
            if t.wrap_t == _WRAP_CLAMP:
                flags |= 32
            if ref.texcoord == 1:
                flags |= 0x10000
            key = (name, flags, tuple(ref.offset), tuple(ref.scale), ref.rotation)
            if key not in tex_index:
                tex_index[key] = len(texs.textures)
                texs.textures.append(TextureEntry(name.encode("utf-8"), flags, 2,
                                                  tuple(ref.offset), tuple(ref.scale), ref.rotation))
            tids.append(tex_index[key])
        fx = (1 if m.unlit else 0) | (16 if m.double_sided else 0)
        color = tuple(float(c) for c in m.base_color)
        entries.append(BrushEntry((m.name or f"material{mi}").encode("utf-8"), color, 0.0, 1, fx,
                                  tids))
        brush_of[mi] = len(entries) - 1
    brus.n_texs = max((len(e.texture_ids) for e in entries), default=0)
    for e in entries:
        e.texture_ids = e.texture_ids + [-1] * (brus.n_texs - len(e.texture_ids))
    brus.brushes = entries
    return texs, brus, brush_of


def _frames_for(times: np.ndarray, fps: float) -> tuple[np.ndarray, bool]:
    f = np.asarray(times, np.float64) * fps
    on_frames = np.allclose(f, np.round(f), atol=1e-3)
    return np.round(f).astype(np.int64), on_frames


def from_scene(scene: Scene, *, fps: float | None = None, animation: str | None = None,
               write_images: bool = True) -> B3dFile | dict[str, Any]:
    """glTF conventions -> one B3D file Minetest/Luanti, Irrlicht and assimp load.

    All meshes are merged into one MESH on the root NODE (one TRIS per material), in the space
    of the scene (skinned meshes in their bind pose). Skins become BONE chunks on the joint
    nodes, whose rest transforms are set to the bind pose given by the inverse bind matrices;
    unskinned meshes under animated nodes are bound rigidly to their node. Animations become
    KEYS (frames from 1) under one ANIM at ``fps`` (default: the source's, else 30); several
    animations are laid end to end on one timeline (Minetest plays frame ranges) and a
    LossWarning lists their frame ranges.
    ``animation=name`` keeps only that animation. Images embedded in the scene (a GLB from
    Blender) are written beside the B3D under the names its TEXS chunk uses (the result is then
    ``{"": doc, "name.png": bytes}``) unless ``write_images`` is false.
    """
    images: dict[str, bytes] = {}
    texs, brus, brush_of = _brushes_for(scene, images)
    worlds = scene.world_matrices() if scene.nodes else np.zeros((0, 4, 4))
    parents = scene.parents()

    # Skinned vertices are in bind space; B = W_j . IBM_j (the same for every joint when the
    # rest pose is the bind pose) takes them to scene space, and B . inverse(IBM_j) is joint j's
    # bind-pose world matrix, which becomes its B3D rest transform.
    bind_world = worlds.copy()
    skin_space: dict[int, np.ndarray] = {}
    for si, skin in enumerate(scene.skins):
        if skin.inverse_bind_matrices is None:
            skin_space[si] = np.eye(4)
            continue
        b = worlds[skin.joints[0]] @ skin.inverse_bind_matrices[0]
        skin_space[si] = b
        for j, ibm in zip(skin.joints, skin.inverse_bind_matrices):
            bind_world[j] = b @ inverse(ibm)

    animated = {c.node for a in scene.animations for c in a.channels}
    has_motion = bool(animated) or bool(scene.skins)

    # merge meshes
    pos_l, nrm_l, col_l, uv0_l, uv1_l = [], [], [], [], []
    tris_by_brush: dict[int, list[np.ndarray]] = {}
    weights_by_node: dict[int, list[np.ndarray]] = {}
    any_normals = any(p.normals is not None for m in scene.meshes for p in m.primitives)
    any_colors = any(p.colors is not None for m in scene.meshes for p in m.primitives)
    n_sets = max((len(p.uvs) for m in scene.meshes for p in m.primitives), default=0)
    if n_sets > 2:
        warnings.warn("UV sets beyond the second are dropped (Irrlicht reads two)", LossWarning,
                      stacklevel=2)
    n_sets = min(n_sets, 2)
    base = 0
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        skin = scene.skins[node.skin] if node.skin is not None else None
        world = worlds[ni] if skin is None else skin_space[node.skin]
        normal_m = np.linalg.inv(world[:3, :3]).T
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4:
                warnings.warn("non-triangle primitive dropped", LossWarning, stacklevel=2)
                continue
            n = len(p.positions)
            pts = p.positions.astype(np.float64)
            nrm = p.normals.astype(np.float64) if p.normals is not None else None
            if not np.allclose(world, np.eye(4)):
                pts = pts @ world[:3, :3].T + world[:3, 3]
                if nrm is not None:
                    nrm = nrm @ normal_m.T
                    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
            pos_l.append(pts * _Z)
            if any_normals:
                if nrm is None:
                    from ..gltf.writer import compute_normals
                    nrm = compute_normals(pts, p.indices).astype(np.float64)
                nrm_l.append(nrm * _Z)
            if any_colors:
                col_l.append(p.colors if p.colors is not None else np.ones((n, 4), np.float32))
            for s, lst in enumerate((uv0_l, uv1_l)[:n_sets]):
                lst.append(p.uvs[s] if s < len(p.uvs) else np.zeros((n, 2), np.float32))
            idx = (p.indices if p.indices is not None else np.arange(n)).astype(np.int64)
            tri = idx.reshape(-1, 3)[:, [0, 2, 1]] + base
            brush = brush_of.get(p.material, -1) if p.material is not None else -1
            tris_by_brush.setdefault(brush, []).append(tri)
            vid = np.arange(base, base + n, dtype=np.int64)
            if skin is not None and p.joints is not None:
                for k in range(4):
                    w = p.weights[:, k]
                    ok = w > 0
                    for jslot in np.unique(p.joints[ok, k]):
                        sel = ok & (p.joints[:, k] == jslot)
                        jnode = skin.joints[int(jslot)]
                        rec = np.zeros(int(sel.sum()), BONE_DTYPE)
                        rec["vertex"] = vid[sel]
                        rec["weight"] = w[sel]
                        weights_by_node.setdefault(jnode, []).append(rec)
            elif has_motion:
                rec = np.zeros(n, BONE_DTYPE)
                rec["vertex"] = vid
                rec["weight"] = 1.0
                weights_by_node.setdefault(ni, []).append(rec)
            base += n

    # animations -> frames on one timeline
    anims = scene.animations
    if animation is not None:
        anims = [a for a in anims if a.name == animation]
        if not anims:
            raise DocumentError(f"no animation named {animation!r}")
    src_fps = next((a.extras.get("fps") for a in anims if a.extras.get("fps")), None)
    rate = float(fps or src_fps or 30.0)
    first_frame = int(next((a.extras.get("b3d_first_frame") for a in anims
                            if "b3d_first_frame" in a.extras), 1))
    keys_by_node: dict[int, list[Keys]] = {}
    offset = first_frame
    ranges = []
    for a in anims:
        length = 0
        for path, fld, bit in (("translation", "position", 1), ("scale", "scale", 2),
                               ("rotation", "rotation", 4)):
            for c in a.channels:
                if c.path != path:
                    continue
                frames, on = _frames_for(c.times, rate)
                if on and c.interpolation == "LINEAR":
                    vals = c.values.astype(np.float64)
                else:
                    frames = np.arange(0, int(np.ceil(float(c.times[-1]) * rate - 1e-6)) + 1)
                    vals = c.sample(frames / rate)
                frames, uniq = np.unique(frames, return_index=True)
                vals = vals[uniq]
                rec = np.zeros(len(frames), keys_dtype(bit))
                rec["frame"] = frames + offset
                if path == "translation":
                    rec[fld] = vals * _Z
                elif path == "rotation":
                    rec[fld] = _rot_from_gltf(vals)
                else:
                    rec[fld] = vals
                keys_by_node.setdefault(c.node, []).append(Keys(bit, rec))
                length = max(length, int(frames[-1]))
        ranges.append((a.name, offset, offset + length))
        offset += length + 1
    if len(anims) > 1:
        warnings.warn("B3D holds one timeline: animations laid end to end at frames "
                      + ", ".join(f"{n!r} {s}-{e}" for n, s, e in ranges), LossWarning, stacklevel=2)

    # node tree: rest transforms from the bind pose where joints need it
    def local_rest(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        node = scene.nodes[i]
        if not np.allclose(bind_world[i], worlds[i], atol=1e-6):
            p = parents[i]
            parent_w = bind_world[p] if p >= 0 else np.eye(4)
            t, r, s = decompose_trs(inverse(parent_w) @ bind_world[i])
            return t, r, s
        return node.translation, node.rotation, node.scale

    def build(i: int, depth: int) -> NodeChunk:
        if depth > 200:
            raise DocumentError("node tree deeper than 200")
        t, r, s = local_rest(i)
        node = scene.nodes[i]
        out = NodeChunk((node.name or f"node{i}").encode("utf-8"),
                        tuple(float(x) for x in np.asarray(t) * _Z),
                        tuple(float(x) for x in s), tuple(float(x) for x in _rot_from_gltf(r)))
        if i in weights_by_node:
            out.children.append(Bone(np.concatenate(weights_by_node[i])))
        out.children.extend(keys_by_node.get(i, []))
        out.children.extend(build(c, depth + 1) for c in node.children)
        return out

    roots = scene.roots or [i for i, p in enumerate(parents) if p < 0]
    # the merged mesh is in scene space: it can live on the one root when that root is at the
    # origin (the usual shape of a Minetest model), else on a new "root" node above them all
    own_root = len(roots) == 1 and np.allclose(local_rest(roots[0])[0], 0) and \
        np.allclose(local_rest(roots[0])[1], (0, 0, 0, 1)) and np.allclose(local_rest(roots[0])[2], 1)
    if own_root:
        # a node is a MESH or a BONE, not both: vertices weighted to the mesh's own node follow
        # it anyway (Blitz binds unweighted vertices to the mesh node)
        weights_by_node.pop(roots[0], None)
    root = build(roots[0], 0) if own_root else NodeChunk(b"root")
    head: list = []
    if base:
        v_dt = vrts_dtype((1 if any_normals else 0) | (2 if any_colors else 0), n_sets,
                          2 if n_sets else 0)
        verts = np.zeros(base, v_dt)
        verts["position"] = np.concatenate(pos_l)
        if any_normals:
            verts["normal"] = np.concatenate(nrm_l)
        if any_colors:
            verts["color"] = np.concatenate(col_l)
        for s_, lst in enumerate((uv0_l, uv1_l)[:n_sets]):
            verts["uv"][:, s_, :] = np.concatenate(lst)
        mesh = MeshChunk(-1, [Vrts(v_dt_flags(v_dt), n_sets, 2 if n_sets else 0, verts)])
        for brush, tris in sorted(tris_by_brush.items()):
            mesh.children.append(Tris(brush, np.concatenate(tris).astype(np.int32)))
        head.append(mesh)
        if any_colors:
            for b in brus.brushes:
                b.fx |= 2
    if anims and keys_by_node:
        # frames = the last key's frame, so that no key lies past the clip (assimp rejects that)
        declared = max((int(a.extras.get("b3d_frames", 0)) for a in anims), default=0)
        head.append(AnimChunk(0, max(offset - 1, declared if len(anims) == 1 else 0), rate))
    if own_root:
        root.children[0:0] = head
    else:
        root.children = head + [build(r, 0) for r in roots]
    doc = B3dFile(1, [])
    if texs.textures:
        doc.children.append(texs)
    if brus.brushes:
        doc.children.append(brus)
    doc.children.append(root)
    if images and write_images:
        return {"": doc, **images}
    return doc


def v_dt_flags(dt: np.dtype) -> int:
    return (1 if "normal" in dt.names else 0) | (2 if "color" in dt.names else 0)
