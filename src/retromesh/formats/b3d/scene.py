"""B3D document -> :class:`retromesh.Scene` (glTF conventions): :func:`to_scene`."""
from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DocumentError, LossWarning, UnsupportedError
from ...geometry import gltf_weights, merge_duplicate_joints
from ...restore import for_editor
from ...scene import Animation, Channel, Mesh, Node, Primitive, Scene, Skin
from ...transforms import compose_trs, inverse
from .axes import Z32, Z, rot_to_gltf
from .chunks import AnimChunk, B3dFile, Bone, BrushEntry, Keys, MeshChunk, NodeChunk
from .exact import (
    KEYS_SCENE_KEY,
    bone_records,
    keys_records_at,
    keys_scene_record,
    node_records,
    node_trs,
    normal_records,
    pack,
)
from .keys import jump_step
from .materials import materials_to_scene
from .rawchunks import raw_record
from .regroup import twin_firsts, twins
from .scene_extras import SOURCE_ATTR, needs_source_ids
from .shared import order_records, shared_records
from .skinning import WEIGHT_MODES, entries, odd_vertices, record_entries, skin_weights, weight_record
from .uvmore import encode as uv_more

__all__ = ["to_scene"]


def _mesh_primitives(mesh: MeshChunk, brush_materials: dict[int, int], brushes: list[BrushEntry],
                     label: str, pending: list[tuple[dict, np.ndarray]]
                     ) -> tuple[list[Primitive], list[np.ndarray], list[dict]]:
    """Primitives of one MESH (one per TRIS) and, per primitive, the original vertex ids and
    its record for the mesh's ``extras["b3d_tris"]`` (the TRIS brush, the vertex and triangle
    counts, the twin triangles: :mod:`.regroup`; the vertices an earlier TRIS has:
    :mod:`.shared`); ``pending`` gets each primitive's record and file normals (their records
    are made for all meshes at once: :func:`_normal_records`)."""
    v = mesh.vrts
    if v is None:
        raise DocumentError(f"node {label!r}: MESH has no VRTS chunk")
    verts = v.vertices
    n = len(verts)
    pos = verts["position"] * Z32
    normals = verts["normal"] * Z32 if v.flags & 1 else None
    colors = verts["color"] if v.flags & 2 else None
    uvs = []
    if v.tex_coord_sets and v.tex_coord_set_size:
        for s in range(min(v.tex_coord_sets, 2)):
            uv = np.zeros((n, 2), np.float32)
            k = min(v.tex_coord_set_size, 2)
            uv[:, :k] = verts["uv"][:, s, :k]
            uvs.append(uv)
    prims, ids, records = [], [], []
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
        pick: Callable[[np.ndarray], np.ndarray]
        if len(tris_list) == 1:
            used = np.arange(n)
            local = tri.view(np.uint32) if tri.dtype == np.int32 else tri.astype(np.uint32)
            pick = lambda a: a                                    # noqa: E731  (no copy)
        else:
            used, inv = np.unique(tri, return_inverse=True)
            local = inv.reshape(-1, 3).astype(np.uint32)
            pick = operator.itemgetter(used)                      # a -> a[used]
        wound = np.empty_like(local)        # winding reversed (column copies: 3x a gather)
        wound[:, 0], wound[:, 1], wound[:, 2] = local[:, 0], local[:, 2], local[:, 1]
        prim = Primitive(
            positions=pick(pos), indices=wound.reshape(-1),
            normals=None if normals is None else pick(normals),
            uvs=[pick(uv) for uv in uvs],
            colors=None if not use_colors or colors is None else np.clip(pick(colors), 0, 1),
            material=material)
        if colors is not None and not use_colors:
            prim.extras["b3d_vertex_colors_unused"] = True
        # Blender's split copies must be told from the file's: only in the GLB made for it
        # (the plain way back never splits; the plain GLB's records are bit for bit anyway)
        if for_editor() and needs_source_ids(prim):
            prim.attributes[SOURCE_ATTR] = np.arange(len(prim.positions), dtype=np.float32)
        prims.append(prim)
        ids.append(used)
        rec: dict[str, Any] = {"brush": int(t.brush_id), "count": int(len(used)),
                               "tris": int(len(tri))}
        more = uv_more(pick(verts["uv"])) if v.tex_coord_sets and v.tex_coord_set_size \
            else None
        if more is not None:
            rec["uv_more"] = more
        exact = _exact_vertices(verts, v.flags, pick, use_colors)
        if exact:
            rec["exact"] = exact
        if v.flags & 1:         # (its record made with every mesh's: :func:`_normal_records`)
            pending.append((rec, pick(verts["normal"])))
        assert prim.indices is not None             # given above
        tw = twins(prim.indices.reshape(-1, 3))
        if tw:
            rec["twins"] = tw
            rec["twins0"] = twin_firsts(prim.indices.reshape(-1, 3), tw)
        records.append(rec)
    if len(ids) > 1:
        for rec, shared in zip(records, shared_records(ids, n)):
            if shared:
                rec["shared"] = shared
        for rec, src in zip(records, order_records(ids, n) or []):
            rec["src"] = src
    return prims, ids, records


def _exact_vertices(verts: np.ndarray, flags: int, pick, use_colors) -> dict:
    """The colours of a primitive's vertices that glTF does not give back bit for bit
    (:mod:`.exact`): outside 0..1 or not drawn; and a place for the normals' record
    (:func:`_normal_records`)."""
    out: dict[str, Any] = {"normal": None} if flags & 1 else {}
    if flags & 2:
        c = pick(verts["color"])
        rec = pack(c, np.clip(c, 0, 1) if use_colors else np.ones_like(c))
        if rec:
            out["color"] = rec
    return out


def _normal_records(pending: list[tuple[dict, np.ndarray]]) -> None:
    """Each primitive's record of its normals not of unit length (:func:`.exact.normal_records`,
    every primitive in one pass) into its ``b3d_tris`` record (``pending``: the record and
    the primitive's file normals)."""
    for (rec, _), made in zip(pending, normal_records([n for _, n in pending])):
        exact = rec.get("exact", {})
        if made is not None:
            exact["normal"] = made
        else:
            exact.pop("normal", None)
        if "exact" in rec and not exact:
            del rec["exact"]


DEFAULT_FPS = 25.0
"""Frame rate when ANIM says 0 or less, or there is no ANIM: Irrlicht's (``SkinnedMesh``
``FramesPerSecond(25.f)``; ``readChunkANIM`` only sets a speed above 0), so Luanti plays such
files at 25 frames a second. Blitz3D ignores ANIM's fps altogether (``Animate`` steps one frame
per ``UpdateWorld``)."""


def to_scene(doc: B3dFile, *, source: Path | None = None, fps: float | None = None,
             weights: str = "blitz3d") -> Scene:
    """Blitz3D scene -> glTF conventions. ``fps`` overrides every ANIM's frame rate;
    ``weights`` is ``"blitz3d"`` (normalised, all-zero weights animate) or ``"raw"`` (Irrlicht's
    reading: zero weights ignored); see :mod:`.skinning`."""
    if weights not in WEIGHT_MODES:
        raise UnsupportedError(f"weights={weights!r}: one of {', '.join(WEIGHT_MODES)}")
    scene = Scene()
    if source is not None:
        scene.extras["source_dir"] = str(Path(source).parent)
    walk = _Walk(scene, materials_to_scene(doc, scene), doc.brushes)
    nodes = _nodes_in_file_order(doc.children)
    floats = np.array([(*c.position, *c.scale, *c.rotation) for c in nodes],
                      np.float64).reshape(len(nodes), 10)
    walk.trs = node_trs(floats)
    walk.node_records = node_records(nodes, floats.astype(np.float32), walk.trs)
    walk.row_of = {id(c): k for k, c in enumerate(nodes)}
    seen: set[bytes] = set()
    for c in nodes:         # names Blender changes: a name taken (Object03.001), over 63 bytes
        if c.name in seen or len(c.name) > 63:
            walk.renamed.add(c.name)
        seen.add(c.name)
    raw = raw_record(doc.children)
    if raw:
        scene.extras["b3d_raw"] = raw
    for root in doc.root_nodes:
        walk.visit(root, None, -1, 0)
    _normal_records(walk.pending_normals)
    used = {p.material for m in scene.meshes for p in m.primitives}
    unused = [m.extras["b3d_brush"] for i, m in enumerate(scene.materials) if i not in used]
    if unused:      # Blender exports only the materials a mesh uses; scene extras it keeps
        scene.extras["b3d_unused_brushes"] = unused
    _skins(scene, walk, weights)
    _animations(scene, walk.anims, walk.keys_of, walk.anim_of_node, fps)
    return scene


def _nodes_in_file_order(chunks: list) -> list[NodeChunk]:
    """The NODEs of :meth:`.chunks.B3dFile.chunks` (file pre-order; NODE and MESH children
    included), without going through the other chunks (a mob has hundreds of KEYS)."""
    out = []
    stack = [c for c in reversed(chunks) if isinstance(c, (NodeChunk, MeshChunk))]
    while stack:
        c = stack.pop()
        if isinstance(c, NodeChunk):
            out.append(c)
        stack.extend([x for x in reversed(c.children) if isinstance(x, (NodeChunk, MeshChunk))])
    return out


class _Walk:
    """Scene nodes for the NODE tree, and what the skins and animations need of it."""

    def __init__(self, scene: Scene, brush_materials: dict[int, int], brushes: list[BrushEntry]):
        self.scene, self.brush_materials, self.brushes = scene, brush_materials, brushes
        self.mesh_users: list[tuple[int, MeshChunk, list[np.ndarray]]] = []  # node, mesh, ids
        self.bones_by_mesh: dict[int, list[tuple[int, np.ndarray]]] = {}   # mesh slot -> bones
        self.anims: list[tuple[AnimChunk, int]] = []       # ANIM chunk, scene node holding it
        self.keys_of: dict[int, list[Keys]] = {}           # scene node -> KEYS chunks
        self.anim_of_node: dict[int, int] = {}             # scene node -> anims slot (-1 none)
        self.node_records: dict[int, dict] = {}            # id of a NODE -> :mod:`.exact` record
        self.renamed: set[bytes] = set()                   # NODE names Blender would change
        self.pending_normals: list[tuple[dict, np.ndarray]] = []     # :func:`_normal_records`
        self.row_of: dict[int, int] = {}                   # id of a NODE -> its row in trs
        self.trs: tuple[np.ndarray, ...] = ()              # every NODE's glTF TRS: node_trs
        self.rows: list[int] = []                          # scene node -> its row in trs
        self.depths: list[int] = []                        # scene node -> its depth

    def visit(self, chunk: NodeChunk, parent: int | None, anim_slot: int, depth: int) -> None:
        label = chunk.name.decode("utf-8", "replace")
        k = self.row_of[id(chunk)]
        node = Node(name=label, translation=self.trs[0][k], rotation=self.trs[1][k],
                    scale=self.trs[2][k])
        i = self.scene.add_node(node, parent)
        self.rows.append(k)
        self.depths.append(depth)
        # what glTF has no place for, to write the same NODE back
        native: dict = {"v": 1, **self.node_records.get(id(chunk), {})}
        if chunk.name in self.renamed:
            native["name"] = label
        for c in chunk.children:
            if isinstance(c, AnimChunk):
                self.anims.append((c, i))
                anim_slot = len(self.anims) - 1
                native["anim"] = [int(c.flags), int(c.frames), float(c.fps)]
        self.anim_of_node[i] = anim_slot
        for c in chunk.children:
            if isinstance(c, MeshChunk):
                prims, ids, tris = _mesh_primitives(c, self.brush_materials, self.brushes, label,
                                                    self.pending_normals)
                # per primitive, the TRIS brush (and later the file's own weights): on the mesh,
                # whose extras Blender keeps (it drops primitive extras); see :mod:`.scene_extras`
                node.mesh = self.scene.add_mesh(Mesh(name=label, primitives=prims,
                                                     extras={"b3d_tris": tris}))
                self.mesh_users.append((i, c, ids))
                v = c.vrts
                assert v is not None                # _mesh_primitives raised without one
                native["mesh"] = {"brush": int(c.brush_id),
                                  "vrts": [int(v.flags), int(v.tex_coord_sets),
                                           int(v.tex_coord_set_size)]}
                raw = raw_record(c.children)
                if raw:
                    native["mesh"]["raw"] = raw
            elif isinstance(c, Bone):
                native["bone"] = True
                if self.mesh_users:
                    self.bones_by_mesh.setdefault(len(self.mesh_users) - 1, []).append((i, c.weights))
                else:
                    warnings.warn(f"node {label!r}: BONE before any MESH ignored", LossWarning,
                                  stacklevel=5)
            elif isinstance(c, Keys):
                self.keys_of.setdefault(i, []).append(c)
                native.setdefault("keys", []).append(int(c.flags))
                native.setdefault("nkeys", []).append(len(c.keys))
            elif isinstance(c, NodeChunk):
                if depth >= 200:
                    raise DocumentError("NODE nesting deeper than 200")
                self.visit(c, i, anim_slot, depth + 1)
        raw = raw_record(chunk.children)
        if raw:
            native["raw"] = raw
        node.extras["b3d"] = native


def _skins(scene: Scene, walk: _Walk, mode: str) -> None:
    """The mesh node is joint 0, then every node with a BONE for that mesh (empty ones too)."""
    if not walk.bones_by_mesh:
        return
    worlds = _world_matrices(scene, walk)
    for slot, bones in walk.bones_by_mesh.items():
        mesh_node, mesh_chunk, id_lists = walk.mesh_users[slot]
        joint_nodes = [mesh_node] + [b for b, _ in bones if b != mesh_node]
        joint_of = {n: k for k, n in enumerate(joint_nodes)}
        vrts = mesh_chunk.vrts
        assert vrts is not None                     # a mesh of the scene: it has a VRTS
        n_vertices = len(vrts.vertices)
        ent = entries([(joint_of[b], w) for b, w in bones], n_vertices)
        joints, weights = skin_weights(ent, n_vertices, mode, id_lists)    # primitives in turn
        odd = odd_vertices(ent, n_vertices)
        counted = [b for b, _ in bones]
        once = [(b, w) for b, w in bones if counted.count(b) == 1]

        def written(once=once, joint_of=joint_of, joints=joints, weights=weights,
                    id_lists=id_lists, n_vertices=n_vertices):
            return (*_glb_weights(joints, weights, id_lists, n_vertices),
                    [joint_of[b] for b, _ in once])
        for (b, _), rec in zip(once, bone_records([w for _, w in once], odd, written)):
            if rec:
                scene.nodes[b].extras["b3d"]["bexact"] = rec
        kept = record_entries(ent, odd)     # only these are needed below: frees the rest
        del ent
        ibm = inverse(worlds[joint_nodes]) @ worlds[mesh_node]
        skin = scene.add_skin(Skin(joints=joint_nodes, inverse_bind_matrices=ibm,
                                   name=scene.nodes[mesh_node].name))
        scene.nodes[mesh_node].skin = skin
        mi = scene.nodes[mesh_node].mesh
        assert mi is not None                       # a mesh user
        mesh = scene.meshes[mi]
        taken = np.zeros(n_vertices, bool)
        at = 0
        for k, (prim, used) in enumerate(zip(mesh.primitives, id_lists)):
            # (rows of skin_weights' (n, 4) uint16 and float32 tables, as a Primitive holds
            # them: no second validation of the whole primitive; convert_to_scene validates)
            prim.joints = np.ascontiguousarray(joints[at:at + len(used)], np.uint16)
            prim.weights = np.ascontiguousarray(weights[at:at + len(used)], np.float32)
            at += len(used)
            record = weight_record(kept, odd, used, taken)
            if record is not None:
                mesh.extras["b3d_tris"][k]["weights"] = record


def _world_matrices(scene: Scene, walk: _Walk) -> np.ndarray:
    """``scene.world_matrices()`` (the same bits: the same local matrices, each world matrix
    its parent's times its local one) from the glTF TRS to_scene has (``walk.trs``), the nodes
    of each depth at once (a model's nodes are a few levels of one chain or tree: one matrix
    product per node cost more than the rest of the skin)."""
    rows = np.asarray(walk.rows, np.intp)
    local = compose_trs(*(a[rows] for a in walk.trs))
    parents = np.asarray(scene.parents(), np.intp)
    depth = np.asarray(walk.depths, np.intp)
    world = local.copy()                    # (the roots')
    by_depth = np.argsort(depth, kind="stable")
    cut = np.searchsorted(depth[by_depth], np.arange(1, max(walk.depths, default=0) + 2)).tolist()
    for a, b in zip(cut[:-1], cut[1:]):
        at = by_depth[a:b]
        world[at] = world[parents[at]] @ local[at]
    return world


def _glb_weights(joints: np.ndarray, weights: np.ndarray, id_lists: list[np.ndarray],
                 n_vertices: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(each vertex's row in the next two, -1 for a vertex no primitive holds; the joints and
    weights of each row of ``joints``, ``weights`` (the primitives' rows one after another) as
    the glTF writer stores them): what the BONE records are made against
    (:func:`.boneexact.bone_records`)."""
    row_of = np.full(n_vertices, -1, np.int64)
    at = np.array([0, *accumulate(len(u) for u in id_lists)], np.int64)
    for k in range(len(id_lists) - 1, -1, -1):     # a vertex's first primitive
        row_of[id_lists[k]] = np.arange(at[k], at[k + 1])
    j, w, _ = gltf_weights(joints, weights, merge=False)
    j, w = merge_duplicate_joints(j, w)             # (as the writer: sanitize_weights)
    return row_of, j, w


def _continuous(q: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quaternions of tracks one after another (``start`` marks each track's first key), each
    key flipped where needed to take the short way from the one before (``quat_continuous``
    per track, all tracks in one pass); and which keys were flipped (kept for the way back:
    :mod:`.exact`)."""
    turn = np.zeros(len(q), bool)         # this key is flipped relative to the one before
    turn[1:] = np.einsum("ij,ij->i", q[1:], q[:-1]) < 0
    turn &= ~start
    odd = np.cumsum(turn)                 # flips so far, counted from each track's start
    odd -= np.maximum.accumulate(np.where(start, odd, 0))
    flipped = odd % 2 == 1
    q[flipped] *= -1.0
    return q, flipped


#: the paths of an animation's channels, the KEYS fields and flag bits that hold them
_KEY_FIELDS = (("translation", "position", 1), ("rotation", "rotation", 4), ("scale", "scale", 2))


def _gather_all(keys: list[tuple[int, Keys]]) -> dict[str, tuple]:
    """:func:`_gather` of each channel path (:data:`_KEY_FIELDS`), the chunks gone through once
    (a mob has hundreds of small KEYS chunks)."""
    live = [(t, c) for t, c in keys if c.flags & 7 and len(c.keys)]
    if live and len({c.flags for _, c in live}) == 1 and len({c.keys.dtype for _, c in live}) == 1:
        return _gather_alike(live)
    got: dict[str, tuple[list, list, list, list]] = {p: ([], [], [], []) for p, _, _ in _KEY_FIELDS}
    at = [0, 0, 0]          # per path, the keys of the chunks before that hold it
    for t, c in keys:
        k = c.keys
        n = len(k)
        if n and c.flags & 7:
            frames = k["frame"]
            for p, (path, field_name, bit) in enumerate(_KEY_FIELDS):
                if c.flags & bit:
                    ids, fr, values, starts = got[path]
                    ids.append(t)
                    fr.append(frames)
                    values.append(k[field_name])
                    starts.append(at[p])
                    at[p] += n
    return {path: _gather(*got[path]) for path in got}


def _gather_alike(live: list[tuple[int, Keys]]) -> dict[str, tuple]:
    """:func:`_gather_all` of KEYS chunks that all have the same flags and dtype (most
    files): their keys joined as bytes once (numpy joins record arrays field by field, at a
    cost per chunk), tracks, frames and their order shared by the paths."""
    ids = [t for t, _ in live]
    flags = live[0][1].flags
    rec = np.frombuffer(b"".join([c.keys.tobytes() for _, c in live]), live[0][1].keys.dtype)
    track = np.repeat(np.asarray(ids, np.intp), [len(c.keys) for _, c in live])
    f = rec["frame"].astype(np.int64)
    back = f[1:] < f[:-1]
    back &= track[1:] == track[:-1]
    order = None
    if len(set(ids)) < len(ids) or back.any():     # several chunks, or keys out of order
        order = np.lexsort((f, track))
        track, f = track[order], f[order]
    tracks = sorted(set(ids))
    out: dict[str, tuple] = {}
    for path, field_name, bit in _KEY_FIELDS:
        if flags & bit:
            v = rec[field_name].astype(np.float64)
            out[path] = (tracks, track, f, v if order is None else v[order], order)
        else:
            out[path] = _gather([], [], [], [])
    return out


def _gather(ids: list[int], frames: list[np.ndarray], values: list[np.ndarray],
            starts: list[int]) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray,
                                        np.ndarray | None]:
    """The keys of one channel path of every track of one animation (:func:`_gather_all`:
    per KEYS chunk holding them, its track, frames, values and the place of its first key
    among the keys of the animation's chunks holding the path, one after another), tracks one
    after another in frame order (several KEYS chunks of a node merged, keys of one frame in
    file order): the track numbers (slots in the animation's node order), each key's track,
    frames, values (float64) and where each key came from (its place among those keys; None
    when each is in its place, as in most files)."""
    if not ids:
        return [], np.zeros(0, np.intp), np.zeros(0, np.int64), np.zeros((0, 0)), None
    lengths = [len(f) for f in frames]
    track = np.repeat(np.asarray(ids, np.intp), lengths)
    f = np.concatenate(frames, dtype=np.int64)
    v = np.concatenate(values, dtype=np.float64)
    back = f[1:] < f[:-1]
    back &= track[1:] == track[:-1]
    origin = None
    if len(set(ids)) < len(ids) or back.any():     # several chunks, or keys out of order
        before = np.array([0, *accumulate(lengths[:-1])], np.int64)
        origin = np.repeat(np.asarray(starts, np.int64) - before,
                           lengths) + np.arange(sum(lengths))
        order = np.lexsort((f, track))
        track, f, v, origin = track[order], f[order], v[order], origin[order]
    return sorted(set(ids)), track, f, v, origin


def _key_times(track: np.ndarray, starts: np.ndarray, frames: np.ndarray, first: int,
               fps: float) -> np.ndarray:
    """Seconds for the key frames of tracks one after another (``track``: each key's track,
    ``starts``: each track's first key). Several keys at one frame (a
    jump: h3dview ``ninja`` has them) follow each other :func:`.keys.jump_step` apart, so that
    glTF keeps them (its times increase strictly), Blender keeps them (its importer merged keys
    a ten-thousandth of a frame apart: h3dview ``ninja`` lost 32 keys) and from_scene gives
    back the same frame numbers."""
    t = (frames - first) / fps
    new = starts.copy()
    new[1:] |= frames[1:] != frames[:-1]
    if new.all():
        return t
    at = np.arange(len(frames))
    rank = at - np.maximum.accumulate(np.where(new, at, 0))
    last = np.ones(len(frames), bool)          # each track's last key
    last[:-1] = starts[1:]
    end = np.zeros(int(track.max()) + 1)
    end[track[last]] = np.abs(t[last])
    spacing = np.spacing(np.maximum(end, 1.0).astype(np.float32)).astype(np.float64)
    step = np.maximum(jump_step(fps), 4 * spacing)
    return t + rank * step[track]


def _keep_key_bits(scene: Scene, keys: list[tuple[int, Keys]], node_of: list[int],
                   origin: np.ndarray, flipped: np.ndarray, file_q: np.ndarray,
                   gltf_q: np.ndarray) -> None:
    """Each node's record of the rotation keys glTF changes (:func:`.exact.keys_records_at`);
    ``keys`` are grouped by node (its slot ``t`` in ``node_of``) in chunk order; ``origin``:
    each key's place among the rotation keys of those chunks; ``file_q``, ``gltf_q``: the
    keys' file and glTF rotations (float32, in the order of ``origin``)."""
    chunks: dict[int, list[Keys]] = {}
    for t, c in keys:
        chunks.setdefault(t, []).append(c)
    for t, rec in zip(chunks, keys_records_at(list(chunks.values()), origin, flipped,
                                              file_q, gltf_q)):
        if rec is not None:
            scene.nodes[node_of[t]].extras["b3d"]["kexact"] = rec


def _animations(scene: Scene, anims: list[tuple[AnimChunk, int]], keys_of: dict[int, list[Keys]],
                anim_of_node: dict[int, int], fps_override: float | None) -> None:
    groups: dict[int, list[int]] = {}
    for node, slot in anim_of_node.items():
        if node in keys_of:
            groups.setdefault(slot, []).append(node)
    kept = _KeptKeys()
    for slot, nodes in sorted(groups.items()):
        if slot >= 0:
            chunk, holder = anims[slot]
            name = scene.nodes[holder].name or f"anim{slot}"
        else:
            chunk, name = AnimChunk(0, 0, 0.0), "keys"
        fps = fps_override or (chunk.fps if chunk.fps > 0 else DEFAULT_FPS)
        node_of = sorted(nodes)
        keys = [(t, c) for t, n in enumerate(node_of) for c in keys_of[n]]
        got = _gather_all(keys)
        if not any(ids for ids, *_ in got.values()):
            continue
        first = min(int(f.min()) for ids, _, f, _, _ in got.values() if ids)
        last = max(int(f.max()) for ids, _, f, _, _ in got.values() if ids)
        anim = Animation(name=name, extras={"b3d_fps": float(chunk.fps), "b3d_frames": chunk.frames,
                                            "b3d_first_frame": first, "fps": fps,
                                            "b3d_holder": holder if slot >= 0 else -1})
        if slot >= 0:       # on the node too: Blender keeps node extras, not animation extras
            scene.nodes[holder].extras["b3d"]["first"] = first
        if chunk.frames and last - first > chunk.frames:
            anim.extras["b3d_keys_beyond_frames"] = last
        channels: dict[tuple[int, str], Channel] = {}
        for path, (ids, track, frames, values, origin) in got.items():
            if not ids:
                continue
            starts = np.ones(len(track), bool)
            starts[1:] = track[1:] != track[:-1]
            if path == "translation":
                values = values * Z
            elif path == "rotation":
                gltf_q = rot_to_gltf(values)
                file_q, gltf32 = values.astype(np.float32), gltf_q.astype(np.float32)
                values, flipped = _continuous(gltf_q, starts)
                if for_editor():        # (per node: Blender keeps node extras, f32 values)
                    _keep_key_bits(scene, keys, node_of,
                                   np.arange(len(track)) if origin is None else origin,
                                   flipped, file_q, gltf32)
                else:
                    kept.add(node_of, track, origin, flipped, file_q, gltf32)
            times = _key_times(track, starts, frames, first, fps)
            made = Channel.tracks([node_of[t] for t in ids], path, times, values, starts)
            channels.update(((t, path), c) for t, c in zip(ids, made))
        anim.channels.extend(channels[k] for k in sorted(
            channels, key=lambda k: (k[0], ("translation", "rotation", "scale").index(k[1]))))
        scene.animations.append(anim)
    rec = kept.record()
    if rec is not None:
        scene.extras[KEYS_SCENE_KEY] = rec


class _KeptKeys:
    """The rotation keys of every animation of a model, for one record of them all
    (:func:`.exact.keys_scene_record`): each animation's keys put in the order of its nodes'
    chunks (``origin``), animations one after another."""

    def __init__(self) -> None:
        self.nodes: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.file_q: list[np.ndarray] = []
        self.gltf_q: list[np.ndarray] = []
        self.flipped: list[np.ndarray] = []
        self.at = 0

    def add(self, node_of: list[int], track: np.ndarray, origin: np.ndarray | None,
            flipped: np.ndarray, file_q: np.ndarray, gltf_q: np.ndarray) -> None:
        """One animation's rotation keys (``origin``: :func:`_gather`'s, None when each key
        is in its place)."""
        if origin is None:
            q, g = file_q, gltf_q
            flips = np.flatnonzero(flipped)
        else:
            q, g = np.empty_like(file_q), np.empty_like(gltf_q)
            q[origin], g[origin] = file_q, gltf_q
            flips = np.sort(origin[flipped])
        self.nodes.append(np.asarray(node_of, np.int64))
        self.counts.append(np.bincount(track, minlength=len(node_of)))
        self.file_q.append(q)
        self.gltf_q.append(g)
        self.flipped.append(flips + self.at if self.at else flips)
        self.at += len(q)

    def record(self) -> dict | None:
        if not self.nodes:
            return None
        if len(self.nodes) == 1:
            return keys_scene_record(self.nodes[0], self.counts[0], self.file_q[0],
                                     self.gltf_q[0], self.flipped[0])
        return keys_scene_record(*(np.concatenate(p) for p in (
            self.nodes, self.counts, self.file_q, self.gltf_q, self.flipped)))
