"""B3D document -> :class:`retromesh.Scene` (glTF conventions): :func:`to_scene`."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from ...errors import DocumentError, LossWarning
from ...scene import Animation, Channel, Material, Mesh, Node, Primitive, Scene, Skin, Texture, TextureRef
from ...transforms import inverse, quat_continuous
from .axes import _WRAP_CLAMP, _WRAP_REPEAT, _Z, _Z32, _rot_to_gltf
from .chunks import AnimChunk, B3dFile, Bone, BrushEntry, Keys, MeshChunk, NodeChunk, TextureEntry

__all__ = ["to_scene"]


def _texture_name(entry: TextureEntry) -> str:
    return entry.file.decode("utf-8", "replace").replace("\\", "/")


def _materials(doc: B3dFile, scene: Scene) -> dict[int, int]:
    """Scene materials for the brushes; returns brush index -> material index."""
    tex_entries = doc.textures
    tex_map: dict[int, int] = {}
    for i, t in enumerate(tex_entries):
        name = _texture_name(t)
        tex_map[i] = scene.add_texture(Texture(
            name=Path(name).stem, uri=name,
            wrap_s=_WRAP_CLAMP if t.flags & 16 else _WRAP_REPEAT,
            wrap_t=_WRAP_CLAMP if t.flags & 32 else _WRAP_REPEAT,
            mipmaps=bool(t.flags & 8) or True,
            extras={"b3d_flags": t.flags, "b3d_blend": t.blend}))
    out: dict[int, int] = {}
    for bi, b in enumerate(doc.brushes):
        mat = Material(name=b.name.decode("utf-8", "replace"),
                       base_color=tuple(float(np.clip(c, 0, 1)) for c in b.color),
                       unlit=bool(b.fx & 1), double_sided=bool(b.fx & 16),
                       extras={"b3d_blend": b.blend, "b3d_fx": b.fx, "b3d_shininess": b.shininess})
        if b.color[3] < 1.0 or b.fx & 32:
            mat.alpha_mode = "BLEND"
        tids = [t for t in b.texture_ids if 0 <= t < len(tex_entries)]
        if tids:
            t = tex_entries[tids[0]]
            mat.base_color_texture = TextureRef(
                texture=tex_map[tids[0]], texcoord=1 if t.flags & 0x10000 else 0,
                offset=tuple(float(x) for x in t.position), scale=tuple(float(x) for x in t.scale),
                rotation=float(t.rotation))
            if t.flags & 4 and mat.alpha_mode == "OPAQUE":
                mat.alpha_mode = "MASK"
            elif t.flags & 2:
                mat.alpha_mode = "BLEND"
            if len(tids) > 1:
                mat.extras["b3d_more_textures"] = [_texture_name(tex_entries[x]) for x in tids[1:]]
        out[bi] = scene.add_material(mat)
    return out


def _mesh_primitives(mesh: MeshChunk, brush_materials: dict[int, int], brushes: list[BrushEntry],
                     label: str) -> tuple[list[Primitive], list[np.ndarray]]:
    """Primitives of one MESH (one per TRIS) and, per primitive, the original vertex ids."""
    v = mesh.vrts
    if v is None:
        raise DocumentError(f"node {label!r}: MESH has no VRTS chunk")
    verts = v.vertices
    n = len(verts)
    pos = verts["position"] * _Z32
    normals = verts["normal"] * _Z32 if v.flags & 1 else None
    colors = verts["color"] if v.flags & 2 else None
    uvs = []
    if v.tex_coord_sets and v.tex_coord_set_size:
        for s in range(min(v.tex_coord_sets, 2)):
            uv = np.zeros((n, 2), np.float32)
            k = min(v.tex_coord_set_size, 2)
            uv[:, :k] = verts["uv"][:, s, :k]
            uvs.append(uv)
    prims, ids = [], []
    tris_list = mesh.tris
    for t in tris_list:
        tri = np.asarray(t.triangles).reshape(-1, 3)
        if not len(tri):
            continue
        if tri.min() < 0 or tri.max() >= n:
            raise DocumentError(f"node {label!r}: TRIS refers to vertex {int(tri.max())} of {n}")
        brush = t.brush_id if t.brush_id >= 0 else mesh.brush_id
        material = brush_materials.get(brush)
        use_colors = colors is not None and (0 <= brush < len(brushes) and brushes[brush].fx & 2)
        if len(tris_list) == 1:
            used = np.arange(n)
            local = tri.view(np.uint32) if tri.dtype == np.int32 else tri.astype(np.uint32)
            pick = lambda a: a                                    # noqa: E731  (no copy)
        else:
            used, inv = np.unique(tri, return_inverse=True)
            local = inv.reshape(-1, 3).astype(np.uint32)
            pick = lambda a, used=used: a[used]                   # noqa: E731
        prim = Primitive(
            positions=pick(pos), indices=local[:, [0, 2, 1]].reshape(-1),
            normals=None if normals is None else pick(normals),
            uvs=[pick(uv) for uv in uvs],
            colors=None if not use_colors else np.clip(pick(colors), 0, 1),
            material=material)
        if colors is not None and not use_colors:
            prim.extras["b3d_vertex_colors_unused"] = True
        prims.append(prim)
        ids.append(used)
    return prims, ids


def _skin_weights(joints: list[tuple[int, np.ndarray]], n_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-4 weights per vertex (joint indices into the skin), renormalised; unweighted
    vertices go to joint 0 (the mesh node)."""
    vs, js, ws = [], [], []
    for j, rec in joints:
        ok = (rec["weight"] > 0) & (rec["vertex"] >= 0) & (rec["vertex"] < n_vertices)
        vs.append(rec["vertex"][ok])
        ws.append(rec["weight"][ok])
        js.append(np.full(int(ok.sum()), j, np.uint16))
    joints_out = np.zeros((n_vertices, 4), np.uint16)
    weights_out = np.zeros((n_vertices, 4), np.float32)
    if vs:
        v = np.concatenate(vs)
        j = np.concatenate(js)
        w = np.concatenate(ws)
        order = np.lexsort((-w, v))
        v, j, w = v[order], j[order], w[order]
        del order
        rank = np.arange(len(v), dtype=np.int64) - np.searchsorted(v, v, side="left")
        keep = rank < 4
        joints_out[v[keep], rank[keep]] = j[keep]
        weights_out[v[keep], rank[keep]] = w[keep]
    total = weights_out.sum(axis=1)
    empty = total <= 0
    weights_out[empty, 0] = 1.0
    joints_out[empty, 0] = 0
    total[empty] = 1.0
    weights_out /= total[:, None]
    return joints_out, weights_out


def to_scene(doc: B3dFile, *, source: Path | None = None, fps: float | None = None) -> Scene:
    """Blitz3D scene -> glTF conventions. ``fps`` overrides every ANIM's frame rate."""
    scene = Scene()
    if source is not None:
        scene.extras["source_dir"] = str(Path(source).parent)
    brush_materials = _materials(doc, scene)
    brushes = doc.brushes

    node_index: dict[int, int] = {}            # id(NodeChunk) -> scene node
    mesh_users: list[tuple[int, MeshChunk, list[np.ndarray]]] = []   # node, mesh, vertex ids
    bones_by_mesh: dict[int, list[tuple[int, np.ndarray]]] = {}    # mesh slot -> (node, weights)
    anims: list[tuple[AnimChunk, int]] = []     # ANIM chunk, scene node holding it
    keys_of: dict[int, list[Keys]] = {}        # scene node -> KEYS chunks
    anim_of_node: dict[int, int] = {}          # scene node -> index into anims (-1 = none)

    def visit(chunk: NodeChunk, parent: int | None, anim_slot: int, depth: int) -> None:
        label = chunk.name.decode("utf-8", "replace")
        node = Node(name=label, translation=np.asarray(chunk.position, np.float64) * _Z,
                    rotation=_rot_to_gltf(chunk.rotation), scale=np.asarray(chunk.scale))
        i = scene.add_node(node, parent)
        node_index[id(chunk)] = i
        for c in chunk.children:
            if isinstance(c, AnimChunk):
                anims.append((c, i))
                anim_slot = len(anims) - 1
        anim_of_node[i] = anim_slot
        for c in chunk.children:
            if isinstance(c, MeshChunk):
                prims, ids = _mesh_primitives(c, brush_materials, brushes, label)
                node.mesh = scene.add_mesh(Mesh(name=label, primitives=prims))
                mesh_users.append((i, c, ids))
            elif isinstance(c, Bone):
                if mesh_users:
                    bones_by_mesh.setdefault(len(mesh_users) - 1, []).append((i, c.weights))
                else:
                    warnings.warn(f"node {label!r}: BONE before any MESH ignored", LossWarning,
                                  stacklevel=4)
            elif isinstance(c, Keys):
                keys_of.setdefault(i, []).append(c)
            elif isinstance(c, NodeChunk):
                if depth >= 200:
                    raise DocumentError("NODE nesting deeper than 200")
                visit(c, i, anim_slot, depth + 1)

    for root in doc.root_nodes:
        visit(root, None, -1, 0)

    # skins: the mesh node is joint 0, then every node with a BONE for that mesh
    worlds = scene.world_matrices()
    for slot, bones in bones_by_mesh.items():
        mesh_node, mesh_chunk, id_lists = mesh_users[slot]
        joint_nodes = [mesh_node] + [b for b, _ in bones if b != mesh_node]
        joint_of = {n: k for k, n in enumerate(joint_nodes)}
        n_vertices = len(mesh_chunk.vrts.vertices)
        joints, weights = _skin_weights([(joint_of[b], w) for b, w in bones], n_vertices)
        ibm = np.stack([inverse(worlds[j]) @ worlds[mesh_node] for j in joint_nodes])
        skin = scene.add_skin(Skin(joints=joint_nodes, inverse_bind_matrices=ibm,
                                   name=scene.nodes[mesh_node].name))
        scene.nodes[mesh_node].skin = skin
        for prim, used in zip(scene.meshes[scene.nodes[mesh_node].mesh].primitives, id_lists):
            prim.joints = joints[used]
            prim.weights = weights[used]
            prim.__post_init__()

    _animations(scene, anims, keys_of, anim_of_node, fps)
    return scene


def _merge_keys(chunks: list[Keys], field_name: str, bit: int) -> tuple[np.ndarray, np.ndarray] | None:
    frames, values = [], []
    for c in chunks:
        if c.flags & bit and len(c.keys):
            frames.append(c.keys["frame"].astype(np.int64))
            values.append(c.keys[field_name].astype(np.float64))
    if not frames:
        return None
    f = np.concatenate(frames)
    v = np.concatenate(values)
    order = np.argsort(f, kind="stable")
    f, v = f[order], v[order]
    last = np.r_[f[1:] != f[:-1], True]        # a later key at the same frame wins
    return f[last], v[last]


def _animations(scene: Scene, anims: list[tuple[AnimChunk, int]], keys_of: dict[int, list[Keys]],
                anim_of_node: dict[int, int], fps_override: float | None) -> None:
    groups: dict[int, list[int]] = {}
    for node, slot in anim_of_node.items():
        if node in keys_of:
            groups.setdefault(slot, []).append(node)
    for slot, nodes in sorted(groups.items()):
        if slot >= 0:
            chunk, holder = anims[slot]
            name = scene.nodes[holder].name or f"anim{slot}"
        else:
            chunk, name = AnimChunk(0, 0, 60.0), "keys"
        fps = fps_override or (chunk.fps if chunk.fps > 0 else 60.0)
        tracks = []
        for n in sorted(nodes):
            for path, fld, bit in (("translation", "position", 1), ("rotation", "rotation", 4),
                                   ("scale", "scale", 2)):
                merged = _merge_keys(keys_of[n], fld, bit)
                if merged is not None:
                    tracks.append((n, path, *merged))
        if not tracks:
            continue
        first = min(int(f[0]) for _, _, f, _ in tracks)
        anim = Animation(name=name, extras={"b3d_fps": float(chunk.fps), "b3d_frames": chunk.frames,
                                            "b3d_first_frame": first, "fps": fps})
        last = max(int(f[-1]) for _, _, f, _ in tracks)
        if chunk.frames and last - first > chunk.frames:
            anim.extras["b3d_keys_beyond_frames"] = last
        for n, path, frames, values in tracks:
            times = (frames - first) / fps
            if path == "translation":
                values = values * _Z
            elif path == "rotation":
                values = quat_continuous(_rot_to_gltf(values))
            anim.channels.append(Channel(node=n, path=path, times=times, values=values))
        scene.animations.append(anim)
