"""Scene -> LithTech ABC v6 (``from_scene`` when the scene's ``abc_version`` extra is 6, or
``version=6``; the mapping is in :mod:`.scene`).

The skeleton, the bind pose, the vertices and the node keys are made by the v9..v13 writer
(:func:`.scene_write.from_scene_v9`, so everything it knows about glTF and Blender scenes holds
here too) and then laid out the v6 way:

* one vertex list for the whole model (every piece's LOD 0 in turn); each vertex follows one
  node, its strongest weight (LossWarning when some had several), in that node's bind space;
* the bind matrices and the keys leave the mirrored file space of v9..v13 for the v6 one that
  ``flip_mat`` / ``fix_anim_keyframes`` (kept in the scene's extras, default 1 and 1) say;
* vertex animation comes back from the morph targets: for key ``k`` of an animation, the
  target named ``<animation>:k`` (as ``to_scene`` names them; Blender keeps shape key names),
  else the mesh's ``weights`` channel sampled at the key time; a node whose vertices move
  (or whose kept flags say deformation) gets all its vertices as MD vertices, stored as bytes
  with the kept per-animation ``Scale``/``Transform`` when the positions still fit them, else
  with a new range (minimum and (maximum - minimum) / 255);
* node flags: the kept ones (bit 4 set where there is vertex animation, cleared where there is
  none), else 2 for a node with vertices and 1 for one without; the LOD vertex tables, bounds,
  AnimDims, section order and unknown sections come from :mod:`.scene_extras_v6` when they
  still fit (the LOD vertices only while the full-detail vertex count is unchanged: a
  LossWarning says when they are left out; without them the file has no LODs, NumLODs 0, as
  haekb's exporter writes).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...errors import DocumentError, LossWarning
from ...extras import integer
from ...scene import Scene
from . import scene_extras as xt
from .abc import TRANSFORM, AbcModel
from .abc_v6 import (
    FACE_V6,
    KEY_V6,
    TOKEN,
    VERTEX_V6,
    AbcV6Model,
    AnimationsV6,
    AnimationV6,
    AnimDimsV6,
    GeometryV6,
    HeaderV6,
    NodesV6,
    NodeV6,
    TrackV6,
    TransformInfoV6,
)
from .scene_common import S3, S4, SQ, cross_rows, floats
from .scene_extras_v6 import bounds6, kept_lods, kept_raw_sections
from .scene_write import PieceSource, from_scene_v9

__all__ = ["from_scene_v6", "lay_out", "Part", "Frame"]

_ORDER = ["Header", "Geometry", "Nodes", "Animation", "AnimDims", "TransformInfo"]


def _mesh_of(scene: Scene) -> dict[int, tuple[int, int]]:
    """id(primitive) -> (mesh index, node index)."""
    out: dict[int, tuple[int, int]] = {}
    for ni, nd in enumerate(scene.nodes):
        if nd.mesh is not None:
            for p in scene.meshes[nd.mesh].primitives:
                out.setdefault(id(p), (nd.mesh, ni))
    return out


def _weights_at(scene: Scene, anim_index: int, mesh_index: int, node: int, ms: np.ndarray,
                names: list[str], anim_name: str) -> np.ndarray:
    """(keys, targets) morph weights at the key times (see the module docstring)."""
    mesh = scene.meshes[mesh_index]
    n_t = len(mesh.primitives[0].targets) if mesh.primitives else 0
    w = np.zeros((len(ms), n_t))
    default = np.zeros(n_t)
    if mesh.weights:
        default[:min(n_t, len(mesh.weights))] = np.asarray(mesh.weights, np.float64)[:n_t]
    chan = None
    if anim_index < len(scene.animations):
        chan = next((c for c in scene.animations[anim_index].channels
                     if c.path == "weights" and c.node == node), None)
    for k, t in enumerate(ms):
        name = f"{anim_name}:{k}"
        if name in names and names.index(name) < n_t:
            w[k, names.index(name)] = 1.0
        elif chan is not None:
            v = np.asarray(chan.sample(np.array([t / 1000.0])), np.float64).reshape(-1)
            w[k, :min(n_t, len(v))] = v[:n_t]
        else:
            w[k] = default
    return w


def _quantise(vals: np.ndarray, kept: dict | None) -> tuple[np.ndarray, tuple, tuple]:
    """(keys, m, 3) positions -> bytes, Scale, Transform (the kept ones when they fit)."""
    if kept is not None:
        s = np.asarray(floats(kept.get("scale"), 3) or [0, 0, 0], np.float64)
        t = np.asarray(floats(kept.get("translate"), 3) or [0, 0, 0], np.float64)
        if np.all(s > 0):
            q = (vals - t) / s
            if np.all(q > -0.5 + 1e-3) and np.all(q < 255.5 - 1e-3):
                return np.rint(q).clip(0, 255).astype("u1"), tuple(s), tuple(t)
    lo = vals.reshape(-1, 3).min(0) if vals.size else np.zeros(3)
    hi = vals.reshape(-1, 3).max(0) if vals.size else np.zeros(3)
    s = (hi - lo) / 255.0
    s = np.where(s > 0, s, 1.0 / 255.0)
    q = np.rint((vals - lo) / s).clip(0, 255).astype("u1")
    return q, tuple(np.asarray(s, np.float32).tolist()), tuple(np.asarray(lo, np.float32).tolist())


@dataclass
class Part:
    """One piece's LOD 0 laid out the v6 way: each vertex on one node."""
    node: np.ndarray            # ABC node per vertex (its strongest weight)
    local: np.ndarray           # (n, 3) the vertex in that node's bind space (v12 axes)
    normal: np.ndarray          # (n, 3) the normal in that node's bind space (v12 axes)
    model: np.ndarray           # (n, 3) the vertex in model space (v12 axes)
    faces: np.ndarray           # the LOD's faces, turned to the v6 winding
    base: int                   # index of its first vertex in the model's vertex list
    source: PieceSource


@dataclass
class Frame:
    """How v12 data go to the v6 file: its axes, keys and the v12 writer's bind matrices."""
    flip: bool                  # FlipMat: the v6 file space is mirrored in Z like v12's
    fix: bool                   # FixAnimKeyframes: the key quaternions are conjugated
    mats: np.ndarray            # (nodes, 4, 4) the v12 bind matrices (rigid)

    @property
    def rot(self) -> np.ndarray:
        return self.mats[:, :3, :3]

    @property
    def mirror(self) -> np.ndarray:                    # v12 (mirrored) -> v6 file space
        return S3 if self.flip else np.ones(3)


def from_scene_v6(scene: Scene, legacy: bool = False) -> AbcV6Model:
    """The v6 model of a scene (see the module docstring and :mod:`.scene`; ``legacy``: as
    :func:`.scene_write.from_scene_v9`)."""
    ex = scene.extras or {}
    scene = xt.in_file_order_scene(scene)
    written = from_scene_v9(scene, 12, morph_targets_kept=True,     # v6 keeps the targets
                            legacy=legacy)
    m12 = written.model
    nn = len(m12.nodes)
    if nn > 256:
        raise DocumentError(f"{nn} nodes: an ABC v6 vertex names its node in one byte (256)")
    fr = Frame(flip=bool(integer(ex, "flip_mat", 1, 0, 1)),
               fix=bool(integer(ex, "fix_anim_keyframes", 1, 0, 1)),
               mats=np.stack([np.asarray(n.matrix, np.float64).reshape(4, 4) for n in m12.nodes]))
    return lay_out(scene, m12, _parts(m12, written.sources, fr), fr)


def lay_out(scene: Scene, m12: AbcModel, parts: list[Part], fr: Frame) -> AbcV6Model:
    """The v6 model of ``scene`` from what the v9..v13 writer made of it (``m12``: its nodes
    and animations; ``parts``: the vertices, one node each): the writer's v6 steps, which
    :mod:`.exact_v6` also runs on a model it predicts (without the v9..v13 writer)."""
    ex = scene.extras or {}
    from_v6 = integer(ex, "abc_version", None, 0, 99) == 6
    owner_of = _mesh_of(scene)
    disp = _vertex_animation(scene, m12, parts, owner_of, fr)
    nodes = _nodes(scene, m12, parts, disp, fr, from_v6)
    geo = _geometry(scene, ex, parts, owner_of, fr)
    anims, dims = _animations(scene, m12, nodes, parts, disp, fr)
    return _sections(ex, geo, nodes, anims, dims, fr)


def _parts(m12: AbcModel, sources: list[PieceSource], fr: Frame) -> list[Part]:
    """The vertices: every piece's LOD 0, one node each (warned when some had several)."""
    parts, several = [], 0
    base = 0
    for piece, source in zip(m12.pieces, sources):
        lod = piece.lods[0]
        v = np.asarray(lod.vertices)
        wt = np.asarray(lod.weights)
        counts = v["weight_count"].astype(np.int64)
        owner = np.repeat(np.arange(len(v)), counts)
        order = np.lexsort((-wt["bias"].astype(np.float64), owner))
        first = np.searchsorted(owner[order], np.arange(len(v)))
        dom = order[first]
        several += int(((counts > 1) & (np.bincount(owner[wt["bias"] > 1e-6], minlength=len(v)) > 1)).sum())
        node = wt["node"][dom].astype(np.int64)
        faces = np.asarray(lod.faces)
        parts.append(Part(node=node, local=wt["location"][dom].astype(np.float64),
                           normal=np.einsum("nji,nj->ni", fr.rot[node], v["normal"].astype(np.float64)),
                           model=v["location"].astype(np.float64),
                           faces=faces[:, [0, 2, 1]] if fr.flip else faces, base=base, source=source))
        base += len(v)
    if base > 0xFFFF:
        raise DocumentError(f"{base} vertices: ABC v6 faces index at most 65535")
    if several:
        warnings.warn(f"{several} vertices are weighted to several nodes: an ABC v6 vertex follows "
                      "one node, its strongest", LossWarning, stacklevel=4)
    return parts


def _joined(parts: list[Part], field: str, width: int | None) -> np.ndarray:
    """One field of every part, end to end (the model's vertex list)."""
    if parts:
        return np.concatenate([getattr(p, field) for p in parts])
    return np.zeros(0, np.int64) if width is None else np.zeros((0, width))


def _vertex_animation(scene: Scene, m12: AbcModel, parts: list[Part],
                      owner_of: dict[int, tuple[int, int]], fr: Frame) -> list[np.ndarray]:
    """Vertex animation from the morph targets: per animation, the (keys, vertices, 3)
    displacement of every vertex in its node's space (v12 axes)."""
    vnode = _joined(parts, "node", None)
    nv = len(vnode)
    disp = []
    for ai, a in enumerate(m12.animations):
        ms = np.asarray(a.key_times, np.int64)
        d = np.zeros((len(ms), nv, 3))
        for p in parts:
            prim, kept = p.source.primitive, p.source.vertices
            if not prim.targets or id(prim) not in owner_of:
                continue
            mi, ni = owner_of[id(prim)]
            names = scene.meshes[mi].extras.get("targetNames")
            names = [n if isinstance(n, str) else "" for n in names] if isinstance(names, list) \
                else [t.name for t in prim.targets]
            w = _weights_at(scene, ai, mi, ni, ms, names, a.name.decode("latin-1"))
            tgt = np.stack([np.asarray(t.positions, np.float64)[kept]
                            if t.positions is not None else np.zeros((len(kept), 3))
                            for t in prim.targets]) * S3       # glTF -> v12 (mirrored) axes
            moved = np.einsum("kt,tvc->kvc", w, tgt)
            sl = slice(p.base, p.base + len(kept))
            d[:, sl] = np.einsum("vji,kvj->kvi", fr.rot[vnode[sl]], moved)
        disp.append(d)
    return disp


def _nodes(scene: Scene, m12: AbcModel, parts: list[Part], disp: list[np.ndarray], fr: Frame,
           from_v6: bool) -> list[NodeV6]:
    """The v6 nodes: flags (kept ones of a v6 file, bit 4 where vertices move), bounds and the
    MD vertices of the deformation nodes."""
    nn = len(m12.nodes)
    vnode = _joined(parts, "node", None)
    vlocal = _joined(parts, "local", 3)
    moving = np.zeros(nn, bool)
    for d in disp:
        if d.size:
            np.logical_or.at(moving, vnode, np.abs(d).max(axis=(0, 2)) > 1e-6)
    by_name: dict[bytes, dict] = {}
    for nd in scene.nodes:
        by_name.setdefault(nd.name.encode("latin-1", "replace"), nd.extras)
    has_verts = np.bincount(vnode, minlength=nn)[:nn] > 0
    nodes: list[NodeV6] = []
    for j, n12 in enumerate(m12.nodes):
        kept = by_name.get(n12.name, {}) if isinstance(by_name.get(n12.name), dict) else {}
        # v9..v13 flags mean other things (2 = rotation only): kept ones of a v6 file only
        flags = integer(kept, "abc_flags", None, 0, 0xFF) if from_v6 else None
        if flags is None:
            flags = 2 if has_verts[j] else 1
        deform = bool(has_verts[j] and (moving[j] or flags & 4))
        flags = (flags & ~4) | (4 if deform else 0)
        bmin, bmax = bounds6(kept.get("abc_bounds"), (None, None))
        if bmin is None:
            own = vlocal[vnode == j] * fr.mirror
            bmin = tuple(own.min(0).tolist()) if len(own) else (0.0, 0.0, 0.0)
            bmax = tuple(own.max(0).tolist()) if len(own) else (0.0, 0.0, 0.0)
        nodes.append(NodeV6(bounds_min=bmin, bounds_max=bmax, name=n12.name, index=n12.index,
                            flags=flags, child_count=n12.child_count,
                            md_verts=np.flatnonzero(vnode == j).astype("<u2") if deform
                            else np.zeros(0, "<u2")))
    return nodes


def _geometry(scene: Scene, ex: dict, parts: list[Part], owner_of: dict[int, tuple[int, int]],
              fr: Frame) -> GeometryV6:
    """The Geometry section: vertices, faces (normals recomputed, on the vertex normals' side),
    the kept LOD vertices while they fit, bounds."""
    vnode = _joined(parts, "node", None)
    nv = len(vnode)
    verts = np.zeros(nv, VERTEX_V6)
    verts["location"] = _joined(parts, "local", 3) * fr.mirror
    nrm = _joined(parts, "normal", 3) * fr.mirror
    verts["normal"] = np.rint(nrm * 127).clip(-127, 127)
    verts["node"] = vnode
    faces = np.zeros(sum(len(p.faces) for p in parts), FACE_V6)
    at = 0
    pos_file = _joined(parts, "model", 3) * fr.mirror
    for p in parts:
        sl = slice(at, at + len(p.faces))
        faces["vertex"][sl] = p.faces["vertex"] + p.base
        faces["uv"][sl] = p.faces["uv"]
        at += len(p.faces)
    if len(faces):
        tri = pos_file[faces["vertex"].astype(np.int64)]
        fn = cross_rows(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        ln = np.linalg.norm(fn, axis=1, keepdims=True)
        fn = np.where(ln > 1e-12, fn / np.where(ln > 1e-12, ln, 1.0), 0.0)
        # the side the vertex normals (placed by their nodes) are on
        world_n = np.einsum("nij,nj->ni", (S4 @ fr.mats @ S4 if fr.flip else fr.mats)[vnode][:, :3, :3],
                            nrm)[faces["vertex"].astype(np.int64)].sum(1)
        fn = np.where((np.einsum("ni,ni->n", fn, world_n) < 0)[:, None], -fn, fn)
        faces["normal"] = np.rint(fn * 127).clip(-127, 127)
    mesh_extras = {}
    if len(parts) == 1 and id(parts[0].source.primitive) in owner_of:
        mesh_extras = scene.meshes[owner_of[id(parts[0].source.primitive)][0]].extras or {}
    lods = kept_lods(mesh_extras, nv)
    if lods is None:
        starts = mesh_extras.get("abc_v6_lods", {}).get("vertex_start") \
            if isinstance(mesh_extras.get("abc_v6_lods"), dict) else None
        if isinstance(starts, list) and len(starts) > 1:
            warnings.warn(f"the model has {nv} vertices, it had "
                          f"{mesh_extras.get('normal_vertex_count')}: its LOD vertices no longer "
                          "fit and were left out (NumLODs 0)", LossWarning, stacklevel=4)
        vertex_start, extra = np.zeros(1, "<u2"), np.zeros(0, VERTEX_V6)
    else:
        vertex_start, extra = lods
    gb = bounds6(ex.get("geometry_bounds"), (None, None))
    if gb[0] is None:
        allv = verts["location"].astype(np.float64)
        gb = (tuple(allv.min(0).tolist()), tuple(allv.max(0).tolist())) if nv else \
            ((0.0,) * 3, (0.0,) * 3)
    return GeometryV6(bounds_min=gb[0], bounds_max=gb[1], vertex_start=vertex_start, faces=faces,
                      normal_vertex_count=nv, vertices=np.concatenate([verts, extra]))


def _animations(scene: Scene, m12: AbcModel, nodes: list[NodeV6], parts: list[Part],
                disp: list[np.ndarray], fr: Frame) -> tuple[list[AnimationV6], list[list[float]]]:
    """The animations (keys in the v6 file's axes, MD vertices as bytes) and their AnimDims."""
    vlocal = _joined(parts, "local", 3)
    pos_file = _joined(parts, "model", 3) * fr.mirror
    box = ((tuple(pos_file.min(0).tolist()), tuple(pos_file.max(0).tolist())) if len(pos_file)
           else ((0.0,) * 3, (0.0,) * 3))
    anims, dims = [], []
    for ai, a in enumerate(m12.animations):
        aex = xt.animation_extras(scene, scene.animations[ai]) if ai < len(scene.animations) else {}
        ms = np.asarray(a.key_times, np.int64)
        nk = len(ms)
        bmin, bmax = bounds6(aex.get("bounds"), box)
        keys = np.zeros(nk, KEY_V6)
        keys["time"] = ms
        kept_bounds = floats(aex.get("key_bounds"), 6 * nk)
        if kept_bounds is not None:
            kb = np.asarray(kept_bounds).reshape(nk, 6)
            keys["bounds_min"], keys["bounds_max"] = kb[:, :3], kb[:, 3:]
        else:
            keys["bounds_min"], keys["bounds_max"] = bmin, bmax
        tr = np.asarray(a.transforms)                      # (nodes, keys) in v12 space
        loc = tr["location"].astype(np.float64) * fr.mirror
        q = tr["rotation"].astype(np.float64) * (SQ if fr.flip else np.ones(4))
        if fr.fix:
            q = q * np.array([-1.0, -1.0, -1.0, 1.0])
        deform_value = aex.get("deform")
        deform = deform_value if isinstance(deform_value, list) else []
        kept_deform = {integer(d, "node", None, 0, 2**31 - 1): d for d in deform
                       if isinstance(d, dict)}
        tracks = []
        every = np.zeros((len(nodes), nk), TRANSFORM)     # (every node's at once)
        every["location"], every["rotation"] = loc, q
        for j, nd in enumerate(nodes):
            track = TrackV6(transforms=every[j])
            if len(nd.md_verts):
                md = nd.md_verts.astype(np.int64)
                vals = (vlocal[md][None] + disp[ai][:, md]) * fr.mirror
                track.deform, track.scale, track.translate = _quantise(vals, kept_deform.get(j))
            tracks.append(track)
        length = integer(aex, "length", None, 0, 0xFFFFFFFF)
        anims.append(AnimationV6(name=a.name, length=int(ms[-1]) if length is None else length,
                                 bounds_min=bmin, bounds_max=bmax, keys=keys,
                                 key_strings=list(a.key_strings), tracks=tracks))
        d = floats(aex.get("dims"), 3)
        dims.append(d if d is not None else ((np.asarray(bmax) - np.asarray(bmin)) / 2).tolist())
    return anims, dims


def _sections(ex: dict, geo: GeometryV6, nodes: list[NodeV6], anims: list[AnimationV6],
              dims: list[list[float]], fr: Frame) -> AbcV6Model:
    """The sections in the kept order (TransformInfo when its flags are not the defaults),
    unknown sections kept raw where they were."""
    made = {"Header": HeaderV6(token=TOKEN, command_string=str(ex.get("command_string", ""))
                               .encode("latin-1", "replace")),
            "Geometry": geo, "Nodes": NodesV6(nodes=nodes), "Animation": AnimationsV6(anims),
            "AnimDims": AnimDimsV6(dims=np.asarray(dims, "<f4").reshape(-1, 3)),
            "TransformInfo": TransformInfoV6(flip_mat=int(fr.flip), fix_anim_keyframes=int(fr.fix))}
    names = ex.get("abc_sections")
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)
            and names[:1] == ["Header"] and all(n in names for n in _ORDER[1:5])
            and names.index("Nodes") < names.index("Animation")):
        names = _ORDER[:5]
    names = [n for n in names if n in made]
    if "TransformInfo" not in names and (not fr.flip or not fr.fix):
        names.append("TransformInfo")                   # the defaults without it are 1 and 1
    sections: list = [made[n] for n in names]
    for index, raw in sorted(kept_raw_sections(ex), key=lambda x: x[0]):
        sections.insert(min(index, len(sections)), raw)
    return AbcV6Model(sections=sections)
