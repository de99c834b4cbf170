"""Scene (glTF conventions) -> B3D document: :func:`from_scene`.

Two layouts:

* A scene that came from a B3D file (every node carries ``extras["b3d"]``, written by
  :func:`.scene.to_scene`, and each skinned mesh is the root of its own skeleton) is written
  back NODE for NODE by :mod:`.scene_extras`: every MESH on its own node, every BONE (empty ones
  too), KEYS grouped as they were, every ANIM with its flags, frames and fps (0 stays 0), the
  brushes and TEXS entries as recorded in the materials, the file's own weights.
* Any other scene (a glTF made elsewhere) is merged into one MESH, as described in
  :func:`from_scene`.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...arrays import distinct
from ...errors import DocumentError, LossWarning
from ...geometry import compute_normals
from ...scene import Animation, Scene
from ...transforms import decompose_trs, inverse
from .axes import Z, rot_from_gltf
from .chunks import BONE_DTYPE, AnimChunk, B3dFile, Bone, MeshChunk, NodeChunk, Vrts, tris_chunks, vrts_dtype
from .exact import reorder, restore_bone
from .keys import animation_rate, keys_chunks, tracks_for
from .materials import brushes_from_scene
from .original import merge, original_document
from .rawchunks import put_back
from .regroup import regroup
from .restscale import restore_rest_scale
from .scene_extras import anim_record, fold_moved_meshes, native_layout_fits, native_roots
from .shared import restore_order, weld_shared

__all__ = ["from_scene"]


def from_scene(scene: Scene, *, fps: float | None = None, animation: str | None = None,
               write_images: bool = True, original: bytes | None = None
               ) -> B3dFile | dict[str, Any]:
    """glTF conventions -> one B3D file Minetest/Luanti, Irrlicht and assimp load.

    A scene converted from B3D is written back with its own structure (see the module
    docstring). Otherwise all meshes are merged into one MESH on the root NODE (one TRIS per
    material), in the space of the scene (skinned meshes in their bind pose). Skins become
    BONE chunks on the joint nodes, whose rest transforms are set to the bind pose given by the
    inverse bind matrices; unskinned meshes under animated nodes are bound rigidly to their
    node. Animations become KEYS (frames from 1) under one ANIM at ``fps`` (default: the
    source's, else 30); several animations are laid end to end on one timeline (Minetest plays
    frame ranges) and a LossWarning lists their frame ranges.
    ``animation=name`` keeps only that animation. Images embedded in the scene (a GLB from
    Blender) are written beside the B3D under the names its TEXS chunk uses (the result is then
    ``{"": doc, "name.png": bytes}``) unless ``write_images`` is false. ``original``: the bytes
    of the B3D the scene was read from (the Blender extension passes them): each value within
    :data:`.original.TOLERANCE` of the file's is written with the file's bits
    (:mod:`.original`).
    """
    from ...luanti.scene import undress  # a mod's looks and clips have no place in B3D
    scene = restore_rest_scale(undress(scene))       # (Blender drops bones' rest scale)
    images: dict[str, bytes] = {}
    _warn_unheld(scene)
    texs, brus, brush_of, brush_ids = brushes_from_scene(scene, images)
    anims = scene.animations
    if animation is not None:
        anims = [a for a in anims if a.name == animation]
        if not anims:
            raise DocumentError(f"no animation named {animation!r}")
    animated = [{c.node for c in a.channels} for a in anims]
    disjoint = sum(map(len, animated)) == len(set().union(*animated))
    folded = fold_moved_meshes(scene)
    if disjoint and native_layout_fits(folded):    # (B3D: each ANIM moves its own subtree)
        regrouped = regroup(folded)
        roots = native_roots(regrouped, anims, fps, brush_of, brush_ids)
        ids = folded.roots or [i for i, p in enumerate(folded.parents()) if p < 0]
        _put_back_raw(roots, folded, ids)
        weld_shared(roots, regrouped, ids)
        restore_order(roots, regrouped, ids)
        _restore_bones(roots, folded, ids)
    else:
        roots = [_merged_root(scene, anims, fps, brus, brush_of)]
    doc = B3dFile(1, [])
    if texs.textures:
        doc.children.append(texs)
    if brus.brushes:
        doc.children.append(brus)
    doc.children.extend(roots)
    put_back(doc.children, scene.extras.get("b3d_raw"))
    before = original_document(original) if original is not None else None
    if before is not None:
        merge(doc, before)
    if images and write_images:
        return {"": doc, **images}
    return doc


def _warn_unheld(scene: Scene) -> None:
    """A LossWarning naming what a B3D has no place for: morph targets and the animation of
    their weights (B3D animates nodes only), and primitives other than triangles."""
    morphs = [m.name or f"mesh {i}" for i, m in enumerate(scene.meshes)
              if any(p.targets for p in m.primitives)]
    if morphs:
        warnings.warn(f"meshes {', '.join(map(repr, morphs[:5]))}: morph targets dropped (B3D has "
                      "none)", LossWarning, stacklevel=4)
    weights = sorted({a.name or f"animation {i}" for i, a in enumerate(scene.animations)
                      for c in a.channels if c.path == "weights"})
    if weights:
        warnings.warn(f"animations {', '.join(map(repr, weights[:5]))}: their morph target weight "
                      "keys are dropped (B3D KEYS move nodes only)", LossWarning, stacklevel=4)
    other = [m.name or f"mesh {i}" for i, m in enumerate(scene.meshes)
             if any(p.mode != 4 for p in m.primitives)]
    if other:
        warnings.warn(f"meshes {', '.join(map(repr, other[:5]))}: points and lines dropped (a B3D "
                      "holds triangles)", LossWarning, stacklevel=4)


def _put_back_raw(chunks: list[NodeChunk], scene: Scene, ids: list[int]) -> None:
    """The unknown chunks each NODE (and its MESH) had, back in place (:mod:`.rawchunks`);
    ``chunks`` were written from the scene nodes ``ids``, children in order."""
    stack = list(zip(chunks, ids))
    while stack:
        chunk, i = stack.pop()
        native = scene.nodes[i].extras.get("b3d")
        stack.extend(zip(chunk.nodes, scene.nodes[i].children))
        if not isinstance(native, dict):
            continue
        rec, mesh = native.get("mesh"), chunk.mesh
        if mesh is not None and isinstance(rec, dict):
            put_back(mesh.children, rec.get("raw"))
        put_back(chunk.children, native.get("raw"))
        chunk.children = reorder(chunk.children, native.get("order"))


def _restore_bones(chunks: list[NodeChunk], scene: Scene, ids: list[int]) -> None:
    """Each BONE's entries in file order and bits where unedited (:func:`.exact.restore_bone`)."""
    stack = list(zip(chunks, ids))
    while stack:
        chunk, i = stack.pop()
        native = scene.nodes[i].extras.get("b3d")
        stack.extend(zip(chunk.nodes, scene.nodes[i].children))
        if isinstance(native, dict) and "bexact" in native:
            bones = [c for c in chunk.children if isinstance(c, Bone)]
            if len(bones) == 1:
                restore_bone(bones[0], native["bexact"])


# -- the merged layout (a glTF made elsewhere) -----------------------------------------------

def _bind_pose(scene: Scene, worlds: np.ndarray) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Skinned vertices are in bind space; B = W_j . IBM_j (the same for every joint when the
    rest pose is the bind pose) takes them to scene space, and B . inverse(IBM_j) is joint j's
    bind-pose world matrix, which becomes its B3D rest transform."""
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
    return bind_world, skin_space


class _Merged:
    """Every mesh of the scene in one VRTS, TRIS per brush, BONE weights per node."""

    def __init__(self, scene: Scene, worlds: np.ndarray, skin_space: dict[int, np.ndarray],
                 brush_of: dict[int, list[int]]):
        self.scene, self.worlds, self.skin_space, self.brush_of = scene, worlds, skin_space, brush_of
        prims = [p for m in scene.meshes for p in m.primitives]
        self.any_normals = any(p.normals is not None for p in prims)
        self.any_colors = any(p.colors is not None for p in prims)
        n_sets = max((len(p.uvs) for p in prims), default=0)
        if n_sets > 2:
            warnings.warn("UV sets beyond the second are dropped (Irrlicht reads two)",
                          LossWarning, stacklevel=4)
        kept_uv = [m.name for m in scene.meshes if isinstance(m.extras.get("b3d_tris"), list)
                   and any(isinstance(r, dict) and "uv_more" in r for r in m.extras["b3d_tris"])]
        if kept_uv:
            warnings.warn(f"meshes {', '.join(map(repr, kept_uv[:5]))}: the B3D's UV sets beyond "
                          "the second and components beyond the second are dropped (the scene is "
                          "no longer laid out as the B3D it came from: one merged MESH, 2 sets "
                          "of 2)", LossWarning, stacklevel=4)
        self.n_sets = min(n_sets, 2)
        self.pos: list[np.ndarray] = []
        self.nrm: list[np.ndarray] = []
        self.col: list[np.ndarray] = []
        self.uv: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
        self.tris_by_brush: dict[int, list[np.ndarray]] = {}
        self.weights_by_node: dict[int, list[np.ndarray]] = {}
        self.base = 0
        animated = {c.node for a in scene.animations for c in a.channels}
        self.has_motion = bool(animated) or bool(scene.skins)

    def add_node(self, ni: int) -> None:
        node = self.scene.nodes[ni]
        assert node.mesh is not None                    # called for mesh nodes
        world = self.worlds[ni] if node.skin is None else self.skin_space[node.skin]
        skin = self.scene.skins[node.skin] if node.skin is not None else None
        for p in self.scene.meshes[node.mesh].primitives:
            if p.mode != 4:
                continue                    # (warned by _warn_unheld)
            self._add_primitive(ni, p, world, skin)

    def _add_primitive(self, ni: int, p, world: np.ndarray, skin) -> None:
        n = len(p.positions)
        pts = p.positions.astype(np.float64)
        nrm = p.normals.astype(np.float64) if p.normals is not None else None
        if not np.allclose(world, np.eye(4)):
            pts = pts @ world[:3, :3].T + world[:3, 3]
            if nrm is not None:
                nrm = nrm @ np.linalg.inv(world[:3, :3])
                nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
        self.pos.append(pts * Z)
        if self.any_normals:
            if nrm is None:
                nrm = compute_normals(pts, p.indices).astype(np.float64)
            self.nrm.append(nrm * Z)
        if self.any_colors:
            self.col.append(p.colors if p.colors is not None else np.ones((n, 4), np.float32))
        for s, lst in enumerate(self.uv[:self.n_sets]):
            lst.append(p.uvs[s] if s < len(p.uvs) else np.zeros((n, 2), np.float32))
        idx = (p.indices if p.indices is not None else np.arange(n)).astype(np.int64)
        brush = self.brush_of.get(p.material, [-1])[0] if p.material is not None else -1
        self.tris_by_brush.setdefault(brush, []).append(idx.reshape(-1, 3)[:, [0, 2, 1]] + self.base)
        vid = np.arange(self.base, self.base + n, dtype=np.int64)
        if skin is not None and p.joints is not None:
            for k in range(4):
                ok = p.weights[:, k] > 0
                for jslot in distinct(p.joints[ok, k]):
                    sel = ok & (p.joints[:, k] == jslot)
                    rec = np.zeros(int(sel.sum()), BONE_DTYPE)
                    rec["vertex"] = vid[sel]
                    rec["weight"] = p.weights[sel, k]
                    self.weights_by_node.setdefault(skin.joints[int(jslot)], []).append(rec)
        elif self.has_motion:
            rec = np.zeros(n, BONE_DTYPE)
            rec["vertex"] = vid
            rec["weight"] = 1.0
            self.weights_by_node.setdefault(ni, []).append(rec)
        self.base += n

    def mesh_chunk(self) -> MeshChunk:
        v_dt = vrts_dtype((1 if self.any_normals else 0) | (2 if self.any_colors else 0),
                          self.n_sets, 2 if self.n_sets else 0)
        verts = np.zeros(self.base, v_dt)
        verts["position"] = np.concatenate(self.pos)
        if self.any_normals:
            verts["normal"] = np.concatenate(self.nrm)
        if self.any_colors:
            verts["color"] = np.concatenate(self.col)
        for s, lst in enumerate(self.uv[:self.n_sets]):
            verts["uv"][:, s, :] = np.concatenate(lst)
        flags = (1 if self.any_normals else 0) | (2 if self.any_colors else 0)
        mesh = MeshChunk(-1, [Vrts(flags, self.n_sets, 2 if self.n_sets else 0, verts)])
        for brush, tris in sorted(self.tris_by_brush.items()):
            mesh.children += tris_chunks(brush, np.concatenate(tris))
        return mesh


def _timeline(anims: list[Animation], fps: float | None, recorded):
    """KEYS per node for the animations laid end to end; rate, last frame, ranges."""
    rate = animation_rate(anims[0], fps, recorded[2] if recorded else None) if anims \
        else float(fps or 30.0)
    first_frame = int(next((a.extras["b3d_first_frame"] for a in anims
                            if isinstance(a.extras.get("b3d_first_frame"), int)),
                           recorded[3] if recorded else 1))
    keys_by_node: dict[int, list] = {}
    offset = first_frame
    ranges = []
    for a in anims:
        tracks, length = tracks_for(a, rate, offset)
        for n, t in tracks.items():          # a later animation's KEYS follow the earlier ones
            keys_by_node.setdefault(n, []).extend(keys_chunks(t))
        ranges.append((a.name, offset, offset + length))
        offset += length + 1
    if len(anims) > 1:
        warnings.warn("B3D holds one timeline: animations laid end to end at frames "
                      + ", ".join(f"{n!r} {s}-{e}" for n, s, e in ranges), LossWarning, stacklevel=4)
    return keys_by_node, rate, offset - 1


def _anim_chunk(anims: list[Animation], rate: float, last: int, recorded) -> AnimChunk:
    # frames = the last key's frame, so that no key lies past the clip (assimp rejects that),
    # unless the B3D file this came from said otherwise
    declared = max((a.extras.get("b3d_frames", 0) for a in anims
                    if isinstance(a.extras.get("b3d_frames", 0), int)), default=0)
    flags, out_fps = 0, rate
    if recorded and len(anims) == 1:
        flags, declared = recorded[0], recorded[1]
        if recorded[2] <= 0 and np.isclose(rate, animation_rate(anims[0], None, recorded[2])):
            out_fps = recorded[2]           # the file said 0 (the engine's default): keep it
    return AnimChunk(flags, max(last, declared if len(anims) == 1 else 0), out_fps)


def _rest_trs(scene: Scene, worlds: np.ndarray, bind_world: np.ndarray,
              parents: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, 3), (n, 4), (n, 3): each node's own TRS, or for a joint whose bind pose differs
    from the scene's pose, its bind pose relative to its parent's."""
    n = len(scene.nodes)
    t = np.array([nd.translation for nd in scene.nodes], dtype=np.float64).reshape(n, 3)
    r = np.array([nd.rotation for nd in scene.nodes], dtype=np.float64).reshape(n, 4)
    s = np.array([nd.scale for nd in scene.nodes], dtype=np.float64).reshape(n, 3)
    # np.allclose(bind_world[i], worlds[i], atol=1e-6) for every node
    moved = np.flatnonzero(~np.all(np.abs(bind_world - worlds) <= 1e-6 + 1e-5 * np.abs(worlds),
                                   axis=(1, 2)))
    if len(moved):
        p = np.asarray(parents, dtype=np.int64)[moved]
        parent_w = np.where((p >= 0)[:, None, None], bind_world[np.maximum(p, 0)], np.eye(4))
        t[moved], r[moved], s[moved] = decompose_trs(inverse(parent_w) @ bind_world[moved])
    return t, r, s


def _merged_root(scene: Scene, anims: list[Animation], fps: float | None, brus,
                 brush_of: dict[int, list[int]]) -> NodeChunk:
    worlds = scene.world_matrices() if scene.nodes else np.zeros((0, 4, 4))
    parents = scene.parents()
    bind_world, skin_space = _bind_pose(scene, worlds)
    merged = _Merged(scene, worlds, skin_space, brush_of)
    for ni, node in enumerate(scene.nodes):
        if node.mesh is not None:
            merged.add_node(ni)
    recorded = next((r for r in map(anim_record, scene.nodes) if r), None)
    keys_by_node, rate, last = _timeline(anims, fps, recorded)

    # every node's rest TRS at once (numpy per node made 20,000 nodes take seconds)
    rest_t, rest_r, rest_s = _rest_trs(scene, worlds, bind_world, parents)
    pos_z, rot_b3d = (rest_t * Z).tolist(), rot_from_gltf(rest_r).tolist()
    scl = rest_s.tolist()

    def local_rest(i: int):
        return rest_t[i], rest_r[i], rest_s[i]

    def build(i: int, depth: int) -> NodeChunk:
        if depth > 200:
            raise DocumentError("node tree deeper than 200")
        node = scene.nodes[i]
        out = NodeChunk((node.name or f"node{i}").encode("utf-8"),
                        tuple(pos_z[i]), tuple(scl[i]), tuple(rot_b3d[i]))
        native = node.extras["b3d"] if isinstance(node.extras.get("b3d"), dict) else {}
        if i in merged.weights_by_node:
            out.children.append(Bone(np.concatenate(merged.weights_by_node[i])))
        elif native.get("bone"):
            out.children.append(Bone(np.zeros(0, BONE_DTYPE)))   # a bone without weights
        out.children.extend(keys_by_node.get(i, []))
        out.children.extend(build(c, depth + 1) for c in node.children)
        return out

    roots = scene.roots or [i for i, p in enumerate(parents) if p < 0]
    # the merged mesh is in scene space: it can live on the one root when that root is at the
    # origin (the usual shape of a Minetest model), else on a new "root" node above them all
    own_root = False
    if len(roots) == 1:
        t, r, s = local_rest(roots[0])
        own_root = np.allclose(t, 0) and np.allclose(r, (0, 0, 0, 1)) and np.allclose(s, 1)
    if own_root:
        # a node is a MESH or a BONE, not both: vertices weighted to the mesh's own node follow
        # it anyway (Blitz binds unweighted vertices to the mesh node)
        merged.weights_by_node.pop(roots[0], None)
    root = build(roots[0], 0) if own_root else NodeChunk(b"root")
    head: list = []
    if merged.base:
        head.append(merged.mesh_chunk())
        if merged.any_colors:
            for b in brus.brushes:
                b.fx |= 2
    if anims and keys_by_node:
        head.append(_anim_chunk(anims, rate, last, recorded))
    if own_root:
        root.children[0:0] = [h for h in head]
        root.children = [c for c in root.children
                         if not (isinstance(c, Bone) and not len(c.weights) and merged.base)]
    else:
        root.children = head + [build(r, 0) for r in roots]
    return root
