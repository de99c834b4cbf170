"""LithTech ABC v6 (Shogo / Blood 2) -> :class:`~retromesh.scene.Scene` (the mapping is in
:mod:`.scene`)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...errors import LossWarning
from ...scene import (
    Animation as SAnimation,
    Channel,
    Material,
    Mesh,
    MorphTarget,
    Node as SNode,
    Primitive,
    Scene,
    Skin,
)
from ...transforms import quat_continuous_tracks, quat_normalize
from .abc_v6 import AbcV6Model, AnimationV6, GeometryV6
from .common import TRANSFORM
from .scene_common import (
    S3,
    SQ,
    check_finite,
    increasing_keys,
    latin1,
    scene_error,
    split_corners,
    tree_parents,
    unit_normals,
)
from .scene_extras import f32
from .scene_extras_v6 import animation_extras, file_extras, lod_extras

__all__ = ["to_scene_v6", "MAX_TARGETS", "MAX_MORPH_VERTICES"]

#: v6 vertex animation larger than this is left out (with a LossWarning) instead of becoming
#: morph targets: targets per mesh, and targets x vertices
MAX_TARGETS = 4096
MAX_MORPH_VERTICES = 1 << 25


# -- v6 -> Scene ---------------------------------------------------------------------------
@dataclass
class _Axes:
    """How the v6 file's data become glTF's: TransformInfo's flags (or the options)."""
    flip: bool                  # FlipMat: the data are mirrored in Z already (no axis flip)
    fix: bool                   # FixAnimKeyframes: the key quaternions are conjugated

    @property
    def s3(self) -> np.ndarray:
        return np.ones(3) if self.flip else S3

    @property
    def sq(self) -> np.ndarray:
        return np.ones(4) if self.flip else SQ


def _key_trs(a: AnimationV6, k: int, ax: _Axes) -> tuple[np.ndarray, np.ndarray]:
    """Every node's translation and rotation at key ``k`` (glTF axes)."""
    t = np.stack([np.asarray(tk.transforms["location"][k], np.float64) for tk in a.tracks])
    q = np.stack([np.asarray(tk.transforms["rotation"][k], np.float64) for tk in a.tracks])
    if ax.fix:
        q = q * np.array([-1.0, -1.0, -1.0, 1.0])
    return t * ax.s3, quat_normalize(q * ax.sq)


def _deformed(a: AnimationV6, j: int, k: int, ax: _Axes) -> np.ndarray:
    """Node ``j``'s MD vertices at key ``k`` (decoded ``byte * Scale + Transform``, its space)."""
    tk = a.tracks[j]
    vals = np.asarray(tk.deform, np.float64) * np.asarray(tk.scale) + np.asarray(tk.translate)
    return vals[k] * ax.s3


def to_scene_v6(doc: AbcV6Model, lods: bool, flip_mat: int | None, fix_anim: int | None,
                morph: bool) -> Scene:
    """A v6 model as a Scene (the mapping is in :mod:`.scene`; ``lods`` has no effect: only the
    full-detail mesh is converted)."""
    ti = doc.transform_info
    ax = _Axes(flip=bool(ti.flip_mat if ti is not None else 1) if flip_mat is None else bool(flip_mat),
               fix=bool(ti.fix_anim_keyframes if ti is not None else 1) if fix_anim is None
               else bool(fix_anim))
    scene = Scene(name="abc")
    nodes = doc.nodes
    n = len(nodes)
    anims = doc.animations
    parents, missing = tree_parents([nd.child_count for nd in nodes])
    for ai, a in enumerate(anims):
        if len(a.tracks) != n:
            raise scene_error(f"{n} tracks", len(a.tracks), f"animations[{ai}]")
        tr = [np.asarray(tk.transforms) for tk in a.tracks]
        if n and len({(t.shape, t.dtype) for t in tr}) == 1 and tr[0].dtype == TRANSFORM and \
                np.isfinite(np.stack(tr).view(np.float32)).all():
            continue                    # (all at once; else the first track that is not)
        for j, t in enumerate(tr):
            check_finite(np.asarray(t["location"], np.float64), "key locations",
                         f"animations[{ai}].tracks[{j}]")
            check_finite(np.asarray(t["rotation"], np.float64), "key rotations",
                         f"animations[{ai}].tracks[{j}]")
    # the bind pose is the first key of the first animation
    if anims and len(anims[0].keys):
        t_rest, r_rest = _key_trs(anims[0], 0, ax)
    else:
        t_rest, r_rest = np.zeros((n, 3)), np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    for i, nd in enumerate(nodes):
        scene.add_node(SNode(name=latin1(nd.name), translation=t_rest[i], rotation=r_rest[i],
                             extras={"abc_flags": int(nd.flags), "abc_index": int(nd.index),
                                     "abc_bounds": f32([*nd.bounds_min, *nd.bounds_max])}),
                       parent=None if parents[i] < 0 else parents[i])
    geo = doc.geometry
    mnode: int | None = None
    target_names: list[tuple[int, int]] = []
    if geo is not None and len(geo.faces) and n:
        mnode, target_names = _add_mesh(scene, doc, geo, ax, morph)
    _add_animations(scene, doc, ax, mnode, target_names)
    hd = doc.header
    scene.extras = {"abc_version": 6, "command_string": latin1(hd.command_string) if hd else "",
                    "flip_mat": int(ax.flip), "fix_anim_keyframes": int(ax.fix),
                    "vertex_animation": "morph targets" if target_names else "none",
                    **file_extras(doc),
                    "abc_animations": [{"name": a.name, **a.extras} for a in scene.animations]}
    if missing:
        scene.extras["missing_children"] = missing
    return scene


def _add_mesh(scene: Scene, doc: AbcV6Model, geo: GeometryV6, ax: _Axes,
              morph: bool) -> tuple[int, list[tuple[int, int]]]:
    """The full-detail mesh, skinned to the nodes (each vertex to its own), on a node
    ``model``; its morph targets unless ``morph`` is False. Returns the mesh node and the
    (animation, key) of each target."""
    nodes = doc.nodes
    n = len(nodes)
    world = scene.world_matrices()[:n]
    verts = np.asarray(geo.vertices)
    nv = len(verts)
    faces = np.asarray(geo.faces)
    vidx = faces["vertex"].reshape(-1).astype(np.int64)
    if vidx.max() >= nv:
        raise scene_error(f"face vertex indices below the {nv} vertices", int(vidx.max()), "Geometry")
    vnode = verts["node"].astype(np.int64)
    if vnode.max() >= n:
        raise scene_error(f"vertex node indices below the {n} nodes", int(vnode.max()), "Geometry")
    uv = faces["uv"].reshape(-1, 2)
    check_finite(uv, "UVs", "Geometry")
    local = verts["location"].astype(np.float64) * ax.s3
    # deformation vertices take their first-frame position
    md_of = {}
    for j, nd in enumerate(nodes):
        md = np.asarray(nd.md_verts).astype(np.int64)
        if len(md) and md.max() >= nv:
            raise scene_error(f"MD vertex indices below {nv}", int(md.max()), f"nodes[{j}]")
        if len(md):
            md_of[j] = md
    anims = doc.animations
    if anims and len(anims[0].keys):
        for j, md in md_of.items():
            local[md] = _deformed(anims[0], j, 0, ax)
    check_finite(local, "vertex locations", "Geometry")
    wpos = np.einsum("nij,nj->ni", world[vnode], np.concatenate([local, np.ones((nv, 1))], 1))[:, :3]
    nrm = verts["normal"].astype(np.float64) / 127.0 * ax.s3
    nrm = np.einsum("nij,nj->ni", world[vnode][:, :3, :3], nrm)
    src, uv_g, corner = split_corners(vidx, uv)
    tri = corner.reshape(-1, 3)
    if not ax.flip:
        tri = tri[:, [0, 2, 1]]
    prim = Primitive(positions=wpos[src], normals=unit_normals(nrm[src]), uvs=[uv_g],
                     indices=tri.reshape(-1).astype(np.uint32),
                     joints=np.column_stack([vnode[src], np.zeros((len(src), 3), int)]),
                     weights=np.tile([1.0, 0.0, 0.0, 0.0], (len(src), 1)))
    mesh = Mesh(name="model", primitives=[prim], extras={
        "normal_vertex_count": int(geo.normal_vertex_count),
        "abc_v6_lods": lod_extras(geo)})
    target_names: list[tuple[int, int]] = []
    n_targets = sum(len(a.keys) for a in anims)
    if morph and md_of and (n_targets > MAX_TARGETS or n_targets * len(src) > MAX_MORPH_VERTICES):
        warnings.warn(f"{n_targets} vertex-animation keys on {len(src)} vertices are more than "
                      f"the morph-target limits ({MAX_TARGETS} targets, {MAX_MORPH_VERTICES} "
                      "target vertices); the vertex animation was left out", LossWarning,
                      stacklevel=4)
        morph = False
    if morph and md_of:
        target_names = _add_targets(prim, anims, md_of, wpos, src, world, ax)
        mesh.weights = [0.0] * len(target_names)
        mesh.extras["targetNames"] = [f"{latin1(anims[a].name)}:{k}" for a, k in target_names]
    scene.add_material(Material(name="material_0"))
    prim.material = 0
    mi = scene.add_mesh(mesh)
    mnode = scene.add_node(SNode(name="model"))
    scene.nodes[mnode].mesh = mi
    scene.nodes[mnode].skin = scene.add_skin(Skin(joints=list(range(n)),
                                                  inverse_bind_matrices=np.linalg.inv(world),
                                                  skeleton=0, name="skeleton"))
    return mnode, target_names


def _add_targets(prim: Primitive, anims: list[AnimationV6], md_of: dict[int, np.ndarray],
                 wpos: np.ndarray, src: np.ndarray, world: np.ndarray,
                 ax: _Axes) -> list[tuple[int, int]]:
    """Vertex animation as morph targets: one per (animation, key), the displacement of the
    deformation nodes' vertices from the bind pose; returns the (animation, key) of each."""
    target_names: list[tuple[int, int]] = []
    base = wpos[src]
    for ai, a in enumerate(anims):
        for k in range(len(a.keys)):
            full = wpos.copy()
            for j, md in md_of.items():
                vals = _deformed(a, j, k, ax)
                full[md] = (world[j] @ np.concatenate([vals, np.ones((len(md), 1))], 1).T).T[:, :3]
            disp = full[src] - base
            check_finite(disp, "vertex animation", f"animations[{ai}]")
            prim.targets.append(MorphTarget(positions=disp, name=f"{latin1(a.name)}:{k}"))
            target_names.append((ai, k))
    return target_names


def _add_animations(scene: Scene, doc: AbcV6Model, ax: _Axes, mnode: int | None,
                    target_names: list[tuple[int, int]]) -> None:
    """Each animation: the node keys, and a ``weights`` channel that switches from one key's
    morph target to the next."""
    n = len(doc.nodes)
    for ai, a in enumerate(doc.animations):
        times = np.asarray(a.keys["time"]).reshape(-1)
        if len(times) == 0 or n == 0:
            continue
        keep = increasing_keys(times, latin1(a.name))
        secs = times[keep].astype(np.float64) / 1000.0
        anim = SAnimation(name=latin1(a.name), extras={
            "length": int(a.length),
            "markers": [{"time": float(t) / 1000.0, "string": latin1(s)}
                        for t, s, k in zip(times.tolist(), a.key_strings, keep) if s and k],
            **animation_extras(doc, ai, keep)})
        ks = np.nonzero(keep)[0]
        nk = len(ks)
        # every node's keys at once ((n, k, 3|4): the values of :func:`_key_trs`, key by key)
        tr = np.stack([np.asarray(tk.transforms)[ks] for tk in a.tracks])
        tt = tr["location"].astype(np.float64) * ax.s3
        q = tr["rotation"].astype(np.float64)
        if ax.fix:
            q = q * np.array([-1.0, -1.0, -1.0, 1.0])
        rr = quat_continuous_tracks(quat_normalize((q * ax.sq).reshape(-1, 4)),
                                    np.arange(n + 1) * nk).reshape(n, nk, 4)
        for j in range(n):
            anim.channels.append(Channel(node=j, path="translation", times=secs, values=tt[j]))
            anim.channels.append(Channel(node=j, path="rotation", times=secs, values=rr[j]))
        if target_names and mnode is not None:
            w = np.zeros((len(ks), len(target_names)), np.float32)
            col = {tk: c for c, tk in enumerate(target_names)}
            for r_, k in enumerate(ks):
                w[r_, col[(ai, int(k))]] = 1.0
            anim.channels.append(Channel(node=mnode, path="weights", times=secs, values=w))
        scene.animations.append(anim)
