"""LithTech ABC v9..v13 -> :class:`~retromesh.scene.Scene` (the mapping is in :mod:`.scene`)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...arrays import distinct
from ...errors import LossWarning
from ...scene import Animation as SAnimation, Channel, Material, Mesh, Node as SNode, Primitive, Scene, Skin
from ...transforms import decompose_trs, quat_normalize
from .abc import AbcModel, Lod
from .scene_common import (
    S3,
    S4,
    SQ,
    bind_deviation,
    check_finite,
    increasing_keys,
    latin1,
    scene_error,
    split_corners,
    tree_parents,
    unit_normals,
)
from .scene_extras import bounds_radius, f32, scene_extras


def top4_weights(owner: np.ndarray, node: np.ndarray, bias: np.ndarray, nv: int):
    """Top 4 weights per vertex by bias, renormalised. Returns joints, weights, the number of
    vertices that lost weights and the number without any usable weight. ``owner`` is sorted
    (each vertex's weights follow one another, as in the file)."""
    joints = np.zeros((nv, 4), np.uint16)
    weights = np.zeros((nv, 4), np.float32)
    bias = np.where(np.isfinite(bias) & (bias > 0), bias, 0.0)
    counts = np.bincount(owner, minlength=nv)
    first = np.cumsum(counts) - counts
    width = int(counts.max(initial=0))
    if not (bias[1:] > bias[:-1])[owner[1:] == owner[:-1]].any():
        # each vertex's weights already strongest first (as exporters and our writer write
        # them): a stable sort would keep them where they are
        rank = np.arange(len(owner)) - first[owner]
        if width <= 4:          # (no vertex loses a weight: no masks)
            joints[owner, rank] = node
            weights[owner, rank] = bias
            dropped = 0
        else:
            keep = rank < 4
            joints[owner[keep], rank[keep]] = node[keep]
            weights[owner[keep], rank[keep]] = bias[keep]
            dropped = int((np.bincount(owner[(~keep) & (bias > 0)], minlength=nv) > 0).sum())
    elif width <= 16:
        # each vertex's weights in a row of a table, sorted along the rows (stable: equal
        # biases keep the file's order, as a lexsort by vertex and bias does)
        rank = np.arange(len(owner)) - first[owner]
        key = np.full((nv, width), np.inf)
        key[owner, rank] = -bias
        order = np.argsort(key, axis=1, kind="stable")
        dropped = int((np.take_along_axis(key, order[:, 4:], 1) < 0).any(axis=1).sum()) \
            if width > 4 else 0
        top = min(width, 4)
        valid = np.arange(top) < counts[:, None]
        at = np.where(valid, first[:, None] + order[:, :top], 0)
        joints[:, :top] = np.where(valid, node[at] if len(node) else 0, 0)
        weights[:, :top] = np.where(valid, bias[at] if len(bias) else 0.0, 0.0)
    else:
        order = np.lexsort((-bias, owner))
        owner_s, node_s, bias_s = owner[order], node[order], bias[order]
        rank = np.arange(len(owner_s)) - first[owner_s]
        keep = rank < 4
        dropped = len(distinct(owner_s[(~keep) & (bias_s > 0)]))
        joints[owner_s[keep], rank[keep]] = node_s[keep]
        weights[owner_s[keep], rank[keep]] = bias_s[keep]
    total = weights.sum(axis=1)
    empty = total <= 0
    weights[empty] = (1.0, 0.0, 0.0, 0.0)
    joints[empty] = 0
    weights /= weights.sum(axis=1, keepdims=True)
    joints[weights == 0] = 0
    return joints, weights, dropped, int(empty.sum())


def _material(scene: Scene, mat_map: dict[int, int], index: int, extras: dict) -> int:
    if index not in mat_map:
        mat_map[index] = scene.add_material(Material(name=f"material_{index}", extras=extras))
    return mat_map[index]


# -- v9..v13 -> Scene ----------------------------------------------------------------------
def _lod_primitive(lod: Lod, world_file: np.ndarray, path: str, n_nodes: int,
                   keep: list | None = None):
    faces = np.asarray(lod.faces)
    verts = np.asarray(lod.vertices)
    wts = np.asarray(lod.weights)
    nv = len(verts)
    if len(faces) == 0:
        return None, {}
    vidx = faces["vertex"].reshape(-1).astype(np.int64)
    if vidx.max() >= nv:
        raise scene_error(f"face vertex indices below the {nv} vertices", int(vidx.max()), path)
    # (the UVs copied out of the face records once: the finite test and the corner split
    # both read them, and a strided read cost as much as the copy)
    uv = np.ascontiguousarray(faces["uv"].reshape(-1, 2), np.float32)
    loc = verts["location"]         # (float32: times S3 in float64 exactly as a float64 copy)
    check_finite(uv, "UVs", path)
    check_finite(loc, "vertex locations", path)
    counts = verts["weight_count"].astype(np.int64)
    if int(counts.sum()) != len(wts):
        raise scene_error(f"{int(counts.sum())} weights", len(wts), path)
    wnode = wts["node"].astype(np.int64)
    extras: dict[str, Any] = {}
    if len(wts) and wnode.max() >= max(n_nodes, 1):
        raise scene_error(f"weight node indices below the {n_nodes} nodes", int(wnode.max()), path)
    # the corners first, their temporaries gone before the weights' (a big model's peak of
    # fresh temporaries is what it pays in page faults)
    src, uv_g, corner = split_corners(vidx, uv)
    del vidx
    # each face turned over (corners 0, 2, 1), written column by column into the uint32
    # indices (a gather of columns made an int64 copy first)
    idx = np.empty(len(corner), np.uint32)
    for to, fro in ((0, 0), (1, 2), (2, 1)):
        idx[to::3] = corner[fro::3]
    del corner
    if n_nodes:
        joints, weights, lost, empty = top4_weights(np.repeat(np.arange(nv), counts), wnode,
                                                    wts["bias"].astype(np.float64), nv)
        del wnode
        extras["bind_max_deviation"] = bind_deviation(lod, world_file)
        extras["vertices_with_dropped_weights"] = lost
        extras["unweighted_vertices"] = empty
    # per file vertex (unit_normals is row by row; a vertex no face uses may have none)
    normals = unit_normals(verts["normal"] * S3)
    # (np.take: a row gather with [] costs numpy several times more)
    normals = np.take(normals, src, 0) if normals is not None else \
        unit_normals(np.take(verts["normal"], src, 0) * S3)
    prim = Primitive(positions=np.take(loc, src, 0) * S3, normals=normals, uvs=[uv_g], indices=idx)
    if n_nodes:
        prim.joints = np.take(joints, src, 0)
        prim.weights = np.take(weights, src, 0)
    if keep is not None:        # what the .abc record needs of each file vertex (scene.py)
        keep.append((src, joints if n_nodes else None, weights if n_nodes else None))
    return prim, extras


def to_scene_v9(doc: AbcModel, lods: bool, keep: list | None = None) -> Scene:
    """A v9..v13 model as a Scene; ``keep`` (a list) gets, per LOD converted, the file vertex
    of each glTF vertex and the joints and weights of each file vertex."""
    scene = Scene(name="abc")
    nodes = doc.nodes
    n = len(nodes)
    mats = np.stack([np.asarray(nd.matrix, np.float64).reshape(4, 4) for nd in nodes]) if n \
        else np.zeros((0, 4, 4))
    check_finite(mats, "node matrices", "nodes")
    if n and np.any(np.abs(np.linalg.det(mats)) < 1e-12):
        raise scene_error("invertible node bind matrices", "a singular matrix", "nodes")
    parents, missing = tree_parents([nd.child_count for nd in nodes])
    world = S4 @ mats @ S4
    inv_world = np.linalg.inv(world) if n else world
    local = np.array([world[i] if parents[i] < 0 else inv_world[parents[i]] @ world[i]
                      for i in range(n)]).reshape(n, 4, 4)
    t_rest, r_rest, s_rest = decompose_trs(local) if n else (np.zeros((0, 3)),) * 3
    for i, nd in enumerate(nodes):
        scene.add_node(SNode(name=latin1(nd.name), translation=t_rest[i], rotation=r_rest[i],
                             scale=s_rest[i], extras={"abc_flags": int(nd.flags),
                                                      "abc_index": int(nd.index)}),
                       parent=None if parents[i] < 0 else parents[i])
    top = [i for i in range(n) if parents[i] < 0]
    if len(top) > 1:
        # child counts that end before the last node leave a forest; glTF joints need a
        # common root, so the trees hang below an identity node of our own
        hub = scene.add_node(SNode(name="abc_roots", extras={"abc_synthetic": True}))
        for i in top:
            scene.roots.remove(i)
        scene.nodes[hub].children.extend(top)
        top = [hub]
    skin = scene.add_skin(Skin(joints=list(range(n)), inverse_bind_matrices=inv_world,
                               skeleton=top[0], name="skeleton")) if n else None
    # sockets
    for si, s in enumerate(doc.sockets):
        if not 0 <= s.node < n:
            raise scene_error(f"a socket node below {n}", s.node, f"sockets[{si}]")
        t = np.asarray(s.location, np.float64) * S3
        q = quat_normalize(np.asarray(s.rotation, np.float64) * SQ)
        check_finite(np.concatenate([t, q]), "socket transform", f"sockets[{si}]")
        scene.add_node(SNode(name=latin1(s.name), translation=t, rotation=q,
                             extras={"abc_socket": True}), parent=s.node)
    # meshes
    mat_map: dict[int, int] = {}
    lod_roots: list[int] = []
    lost_total = 0
    for pi, piece in enumerate(doc.pieces):
        m = _material(scene, mat_map, piece.material_index,
                      {"specular_power": float(piece.specular_power),
                       "specular_scale": float(piece.specular_scale)})
        pname = latin1(piece.name) or f"piece{pi}"
        for li, lod in enumerate(piece.lods):
            if li > 0 and not lods:
                break
            prim, extras = _lod_primitive(lod, mats, f"pieces[{pi}].lods[{li}]", n, keep)
            if prim is None:
                if keep is not None:
                    keep.append(None)
                continue
            prim.material = m
            lost_total += extras.get("vertices_with_dropped_weights", 0)
            extras.update(piece=pname, lod=li, material_index=int(piece.material_index))
            sublod = np.asarray(lod.vertices)["sublod"]
            if sublod.any():
                extras["sublod"] = sublod.tolist()
            if piece.lod_weight is not None:
                extras["lod_weight"] = float(piece.lod_weight)
            name = pname if li == 0 else f"{pname}_lod{li}"
            mi = scene.add_mesh(Mesh(name=name, primitives=[prim], extras=extras))
            node = SNode(name=name, extras={"abc_piece": pname, "abc_lod": li})
            node.mesh = mi
            node.skin = skin
            idx = scene.add_node(node)
            if li > 0:
                scene.roots.remove(idx)
                lod_roots.append(idx)
    if lod_roots:
        # the skeleton's roots too: a skinned mesh's scene must hold its joints
        scene.extra_scenes.append(("lods", top + lod_roots))
    if lost_total:
        warnings.warn(f"{lost_total} vertices had more than 4 weights; the 4 largest were kept "
                      "and renormalised", LossWarning, stacklevel=3)
    # animations
    for ai, a in enumerate(doc.animations):
        anim = _v9_animation(a, nodes, parents, t_rest, s_rest, f"animations[{ai}]")
        if anim is not None:
            scene.animations.append(anim)
    scene.extras = scene_extras(doc, [{"name": a.name, **a.extras} for a in scene.animations])
    scene.extras["bounds_radius"] = bounds_radius(doc.pieces)
    if missing:
        scene.extras["missing_children"] = missing
    return scene



def _v9_animation(a, nodes, parents, t_rest, s_rest, path: str) -> SAnimation | None:
    name = latin1(a.name)
    times = np.asarray(a.key_times).reshape(-1)
    tr = np.asarray(a.transforms)
    n = len(nodes)
    if len(times) == 0 or n == 0:
        return None
    if tr.shape != (n, len(times)):
        raise scene_error(f"transforms of shape ({n}, {len(times)})", tr.shape, path)
    keep = increasing_keys(times, name)
    times = times[keep]
    loc = tr["location"][:, keep].astype(np.float64) * S3
    rot = tr["rotation"][:, keep].astype(np.float64) * SQ
    check_finite(loc, "key locations", path)
    check_finite(rot, "key rotations", path)
    secs = times.astype(np.float64) / 1000.0
    k = len(secs)
    # every node's tracks at once (the same values as node by node: quat_normalize and
    # quat_continuous work row by row)
    fixed = np.array([bool(nd.flags & 0x02) for nd in nodes])
    loc[fixed] = t_rest[fixed][:, None, :]
    rot = quat_normalize(rot)
    if k > 1:
        d = np.einsum("nki,nki->nk", rot[:, 1:], rot[:, :-1])
        rot[:, 1:] *= np.cumprod(np.where(d < 0, -1.0, 1.0), axis=1)[..., None]
    starts = np.zeros(n * k, bool)
    starts[::k] = True
    all_times = np.tile(secs, n)
    nodes_i = list(range(n))
    tch = Channel.tracks(nodes_i, "translation", all_times, loc.reshape(-1, 3), starts)
    rch = Channel.tracks(nodes_i, "rotation", all_times, rot.reshape(-1, 4), starts)
    anim = SAnimation(name=name)
    scaled = np.any(np.abs(s_rest - 1.0) > 1e-6, axis=1)
    for j in range(n):
        anim.channels += (tch[j], rch[j])
        if scaled[j]:
            # a bind matrix with scale: the engine's animated transforms have none
            anim.channels.append(Channel(node=j, path="scale", times=secs[:1],
                                         values=np.ones((1, 3))))
    markers = [{"time": float(t) / 1000.0, "string": latin1(s)}
               for t, s, k in zip(np.asarray(a.key_times).tolist(), a.key_strings, keep) if s and k]
    anim.extras = {"interpolation_ms": 200 if a.interpolation_ms is None else int(a.interpolation_ms),
                   "unknown": int(a.unknown), "extents": f32(a.extents),
                   "markers": markers, "key_times_ms": [int(t) for t in times]}
    return anim
