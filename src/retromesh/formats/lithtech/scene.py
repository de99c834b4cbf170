"""LithTech ABC <-> :class:`~retromesh.scene.Scene` (glTF conventions).

Axes: LithTech is Direct3D left-handed, +Y up, +Z forward. Everything crosses into glTF here,
once, by mirroring Z (format-facts summary table): positions, normals and translations
``(x, y, -z)``, quaternions ``(x, y, z, w) -> (-x, -y, z, w)``, matrices ``S M S`` with
``S = diag(1, 1, -1, 1)``, triangle winding reversed. UVs are top-left based like glTF (no flip).

v9-v13 -> Scene
  * every node becomes a joint node (in depth-first order, parents from the child counts; when
    the counts leave several trees, an identity node ``abc_roots`` holds them); its
    rest transform is the bind pose (``inverse(parent m) @ m``), the skin's inverse bind matrices
    are ``inverse(m)`` (node ``m`` is the model-space bind matrix);
  * each piece's LOD 0 is a skinned mesh on a root node named after the piece; LOD n > 0 goes to
    a node ``<piece>_lod<n>`` in a second scene ``"lods"`` (``Scene.extra_scenes``, option
    ``lods=False`` leaves them out); face corners are split into glTF vertices per distinct
    (vertex, u, v); one material per material index (specular values in its extras);
  * weights: the 4 largest biases per vertex, renormalised (LossWarning saying how many
    vertices lost weights); a vertex without weights follows node 0. The bind pose is checked:
    ``max |sum(bias * m_node @ weight.location) - vertex.location|`` is the mesh's
    ``extras["bind_max_deviation"]``;
  * each animation becomes one glTF animation (ms -> s; ``interpolation_ms``, ``unknown``,
    extents and the keyframe strings as ``extras["markers"]``); keys are parent-relative; nodes
    with flag 0x02 (rotation only) get their bind offset instead of the key's translation;
    a node whose bind matrix carries scale gets a scale channel of 1 (engine keys have none);
  * sockets become nodes under their node (``extras["abc_socket"]``); command string, LOD
    distances, weight sets, child models and anim bindings go to the scene's extras.

v6 -> Scene
  * the bind pose is the first key of the first animation (haekb's reading; v6 stores no bind
    matrices); vertices are in their node's space and are placed with it; each vertex has one
    node (weight 1);
  * vertex animation becomes **morph targets**: one target per (animation, key) on the mesh,
    holding the displacement of the deformation-node vertices (decoded ``byte * Scale +
    Transform``, placed by the node's bind transform) and a ``weights`` channel per animation
    that switches linearly from one key's target to the next (so the glTF interpolates the
    vertices the way the engine does; the node animation moves the deformation node on top).
    ``morph=False`` leaves the targets out;
  * ``TransformInfo``: FixAnimKeyframes = 1 conjugates the key quaternions; FlipMat = 1 says
    the data are already mirrored in Z, so no axis flip is applied (both default to 1 when the
    section is absent, as the LithTech 1.5 engine does). Options ``flip_mat`` and
    ``fix_anim_keyframes`` override them (``--set flip_mat=0``). This reading of FlipMat is
    derived from format-facts (the engine mirrors Z when it is set) and is unverified;
  * only the full-detail mesh is converted (how faces map to the v6 LOD vertices is unknown).

Scene -> v12 (``from_scene``; ``version=9..13`` writes another version)
  * joints of the skins used by the default scene's meshes become the nodes (parent = nearest
    joint ancestor; a synthetic ``root`` when there is not exactly one root); bind matrices are
    ``S rigid(inverse(IBM)) S`` (rotation and translation only: ABC keys hold no scale, so a
    joint's scale, e.g. an armature object's unapplied scale, is baked into its weight
    locations instead); vertices are the glTF vertices (model space), weights the non-zero
    ones with ``location = inverse(m) @ vertex``; a mesh without skin under an animated node
    becomes a node of its own (bound where it rests) so that it keeps its motion; other meshes
    without skin are frozen in place (turned over when their transform mirrors) and follow
    their nearest joint ancestor as it rests, or a static synthetic ``root`` when they have
    none;
  * every animation is sampled at the union of its key times (rounded to whole ms): animated
    world matrices of the whole glTF hierarchy are evaluated and each node's key is
    ``inverse(parent world) @ world`` of the rigid parts (so armature objects and non-joint
    parents are baked in, which is what keeps Blender round trips from "exploding"); scale
    that differs from the bind pose's is dropped with a LossWarning; a scene without animations gets one one-key animation of the rest pose;
  * a primitive of more than 65535 vertices (ABC faces index vertices with uint16) becomes
    several pieces ``<name>_part<k>``, runs of its triangles (without LODs);
  * LOD n > 0 comes back from the nodes ``<piece>_lod<n>`` of other scenes (``extras``
    ``abc_piece``/``abc_lod``, as ``to_scene`` writes them); a piece with fewer LODs than the
    others repeats its last one (every piece must have LODCount LODs);
  * node flags, sockets, keyframe strings, interpolation times, LOD distances, command string
    and weight sets come back from the extras ``to_scene`` wrote.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...errors import DocumentError, FormatError, LossWarning
from ...scene import Animation as SAnimation
from ...scene import Channel, Material, Mesh, MorphTarget, Node as SNode, Primitive, Scene, Skin
from ...transforms import (compose_trs, decompose_trs, quat_continuous, quat_normalize, world_matrices)
from . import abc as abcmod
from .abc import (CORNER, TRANSFORM, VERTEX, WEIGHT, AbcModel, AnimationSection,
                  AnimBinding, AnimBindingsSection, ChildModel, ChildModelsSection,
                  HeaderSection, Lod, Node, NodesSection, Piece, PiecesSection, Socket,
                  SocketsSection, WeightSet)
from .abc_v6 import AbcV6Model

__all__ = ["to_scene", "from_scene", "structural_problems", "bind_deviation", "tree_parents"]

#: v6 vertex animation larger than this is left out (with a LossWarning) instead of becoming
#: morph targets: targets per mesh, and targets x vertices
MAX_TARGETS = 4096
MAX_MORPH_VERTICES = 1 << 25

S3 = np.array([1.0, 1.0, -1.0])
SQ = np.array([-1.0, -1.0, 1.0, 1.0])
S4 = np.diag([1.0, 1.0, -1.0, 1.0])


def _txt(b: bytes) -> str:
    return bytes(b).decode("latin-1")


def _fail(expected: str, got: Any = None, path: str = "to_scene") -> FormatError:
    return FormatError(expected, path=path, got=got)


def tree_parents(child_counts: list[int]) -> tuple[list[int], int]:
    """Parents of depth-first nodes from their child counts; also the number of announced
    children that never came (0 in a well-formed file). Nodes after a finished tree are roots."""
    parents: list[int] = []
    stack: list[list[int]] = []
    for i, c in enumerate(child_counts):
        while stack and stack[-1][1] <= 0:
            stack.pop()
        if stack:
            parents.append(stack[-1][0])
            stack[-1][1] -= 1
        else:
            parents.append(-1)
        stack.append([i, int(c)])
    missing = sum(max(s[1], 0) for s in stack)
    return parents, missing


def _finite(a: np.ndarray, what: str, path: str) -> None:
    if not np.all(np.isfinite(a)):
        raise _fail(f"finite {what}", "NaN or infinity", path)


def _unit_normals(n: np.ndarray) -> np.ndarray | None:
    n = np.asarray(n, np.float64)
    if not np.all(np.isfinite(n)):
        return None
    ln = np.linalg.norm(n, axis=1)
    if len(n) and ln.min() < 1e-8:
        return None
    return n / ln[:, None] if len(n) else n


def _split_corners(vertex_idx: np.ndarray, uv: np.ndarray):
    """Unique (vertex, u, v) corners: (source vertex per glTF vertex, uv per glTF vertex,
    index per corner). Two sorts of uint64 keys: the distinct UV pairs, then (vertex, uv id)."""
    uv = np.ascontiguousarray(uv, np.float32)
    uvkey = uv.view(np.uint64).reshape(-1)
    uv_u, uv_id = np.unique(uvkey, return_inverse=True)
    key = vertex_idx.astype(np.uint64) * np.uint64(len(uv_u)) + uv_id.reshape(-1).astype(np.uint64)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return vertex_idx[first].astype(np.int64), uv[first], inverse.reshape(-1)


def _top4(owner: np.ndarray, node: np.ndarray, bias: np.ndarray, nv: int):
    """Top 4 weights per vertex by bias, renormalised. Returns joints, weights, the number of
    vertices that lost weights and the number without any usable weight."""
    joints = np.zeros((nv, 4), np.uint16)
    weights = np.zeros((nv, 4), np.float32)
    bias = np.where(np.isfinite(bias) & (bias > 0), bias, 0.0)
    order = np.lexsort((-bias, owner))
    owner_s, node_s, bias_s = owner[order], node[order], bias[order]
    counts = np.bincount(owner_s, minlength=nv)
    first = np.cumsum(counts) - counts
    rank = np.arange(len(owner_s)) - first[owner_s]
    keep = rank < 4
    dropped_v = np.unique(owner_s[(~keep) & (bias_s > 0)])
    joints[owner_s[keep], rank[keep]] = node_s[keep]
    weights[owner_s[keep], rank[keep]] = bias_s[keep]
    total = weights.sum(axis=1)
    empty = total <= 0
    weights[empty] = (1.0, 0.0, 0.0, 0.0)
    joints[empty] = 0
    weights /= weights.sum(axis=1, keepdims=True)
    joints[weights == 0] = 0
    return joints, weights, len(dropped_v), int(empty.sum())


def _material(scene: Scene, mat_map: dict[int, int], index: int, extras: dict) -> int:
    if index not in mat_map:
        mat_map[index] = scene.add_material(Material(name=f"material_{index}", extras=extras))
    return mat_map[index]


# -- v9..v13 -> Scene ----------------------------------------------------------------------
def bind_deviation(lod: Lod, mats: np.ndarray) -> float | None:
    """``max |sum(bias * m_node @ weight.location) - vertex.location|`` over the weighted
    vertices of a LOD (file space; ``mats`` are the nodes' bind matrices): how far the engine's
    bind pose is from the stored vertex positions. None without weighted vertices."""
    verts, wts = np.asarray(lod.vertices), np.asarray(lod.weights)
    counts = verts["weight_count"].astype(np.int64)
    if not len(wts) or int(counts.sum()) != len(wts):
        return None
    node = wts["node"].astype(np.int64)
    if node.max() >= len(mats):
        return None
    owner = np.repeat(np.arange(len(verts)), counts)
    wl = np.concatenate([wts["location"].astype(np.float64), np.ones((len(wts), 1))], 1)
    placed = np.einsum("nij,nj->ni", mats[node], wl)[:, :3]
    b = wts["bias"].astype(np.float64)[:, None]
    acc = np.zeros((len(verts), 3))
    with np.errstate(all="ignore"):
        np.add.at(acc, owner, placed * np.where(np.isfinite(b), b, 0.0))
        dev = np.linalg.norm(acc[counts > 0] - verts["location"][counts > 0], axis=1)
    dev = dev[np.isfinite(dev)]
    return float(dev.max()) if len(dev) else None


def _lod_primitive(lod: Lod, world_file: np.ndarray, path: str, n_nodes: int):
    faces = np.asarray(lod.faces)
    verts = np.asarray(lod.vertices)
    wts = np.asarray(lod.weights)
    nv = len(verts)
    if len(faces) == 0:
        return None, {}
    vidx = faces["vertex"].reshape(-1).astype(np.int64)
    if vidx.max() >= nv:
        raise _fail(f"face vertex indices below the {nv} vertices", int(vidx.max()), path)
    uv = faces["uv"].reshape(-1, 2)
    loc = verts["location"].astype(np.float64)
    _finite(uv, "UVs", path)
    _finite(loc, "vertex locations", path)
    counts = verts["weight_count"].astype(np.int64)
    if int(counts.sum()) != len(wts):
        raise _fail(f"{int(counts.sum())} weights", len(wts), path)
    owner = np.repeat(np.arange(nv), counts)
    wnode = wts["node"].astype(np.int64)
    extras: dict[str, Any] = {}
    if len(wts) and wnode.max() >= max(n_nodes, 1):
        raise _fail(f"weight node indices below the {n_nodes} nodes", int(wnode.max()), path)
    if n_nodes:
        joints, weights, lost, empty = _top4(owner, wnode, wts["bias"].astype(np.float64), nv)
        extras["bind_max_deviation"] = bind_deviation(lod, world_file)
        extras["vertices_with_dropped_weights"] = lost
        extras["unweighted_vertices"] = empty
    src, uv_g, corner = _split_corners(vidx, uv)
    idx = corner.reshape(-1, 3)[:, [0, 2, 1]].reshape(-1).astype(np.uint32)
    normals = _unit_normals(verts["normal"][src] * S3)
    prim = Primitive(positions=loc[src] * S3, normals=normals, uvs=[uv_g], indices=idx)
    if n_nodes:
        prim.joints = joints[src]
        prim.weights = weights[src]
    return prim, extras


def _v9_scene(doc: AbcModel, lods: bool) -> Scene:
    h = doc.header
    scene = Scene(name="abc")
    nodes = doc.nodes
    n = len(nodes)
    mats = np.stack([np.asarray(nd.matrix, np.float64).reshape(4, 4) for nd in nodes]) if n \
        else np.zeros((0, 4, 4))
    _finite(mats, "node matrices", "nodes")
    if n and np.any(np.abs(np.linalg.det(mats)) < 1e-12):
        raise _fail("invertible node bind matrices", "a singular matrix", "nodes")
    parents, missing = tree_parents([nd.child_count for nd in nodes])
    world = S4 @ mats @ S4
    inv_world = np.linalg.inv(world) if n else world
    local = np.array([world[i] if parents[i] < 0 else inv_world[parents[i]] @ world[i]
                      for i in range(n)]).reshape(n, 4, 4)
    t_rest, r_rest, s_rest = decompose_trs(local) if n else (np.zeros((0, 3)),) * 3
    for i, nd in enumerate(nodes):
        scene.add_node(SNode(name=_txt(nd.name), translation=t_rest[i], rotation=r_rest[i],
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
            raise _fail(f"a socket node below {n}", s.node, f"sockets[{si}]")
        t = np.asarray(s.location, np.float64) * S3
        q = quat_normalize(np.asarray(s.rotation, np.float64) * SQ)
        _finite(np.concatenate([t, q]), "socket transform", f"sockets[{si}]")
        scene.add_node(SNode(name=_txt(s.name), translation=t, rotation=q,
                             extras={"abc_socket": True}), parent=s.node)
    # meshes
    mat_map: dict[int, int] = {}
    lod_roots: list[int] = []
    lost_total = 0
    for pi, piece in enumerate(doc.pieces):
        m = _material(scene, mat_map, piece.material_index,
                      {"specular_power": float(piece.specular_power),
                       "specular_scale": float(piece.specular_scale)})
        pname = _txt(piece.name) or f"piece{pi}"
        for li, lod in enumerate(piece.lods):
            if li > 0 and not lods:
                break
            prim, extras = _lod_primitive(lod, mats, f"pieces[{pi}].lods[{li}]", n)
            if prim is None:
                continue
            prim.material = m
            lost_total += extras.get("vertices_with_dropped_weights", 0)
            extras.update(piece=pname, lod=li, material_index=int(piece.material_index))
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
    scene.extras = {
        "abc_version": int(h.version),
        "command_string": _txt(h.command_string),
        "internal_radius": float(h.internal_radius),
        "lod_distances": [float(x) for x in np.asarray(h.lod_distances).reshape(-1)],
        "weight_sets": {_txt(w.name): [float(x) for x in np.asarray(w.weights).reshape(-1)]
                        for w in doc.weight_sets},
        "child_models": [{"name": _txt(c.name), "build_number": int(c.build_number)}
                         for c in doc.child_models],
        "anim_bindings": [{"name": _txt(b.name), "extents": list(b.extents),
                           "origin": list(b.origin)} for b in doc.anim_bindings],
    }
    if missing:
        scene.extras["missing_children"] = missing
    return scene


def _increasing(times_ms: np.ndarray, name: str) -> np.ndarray:
    # compared as the float32 seconds glTF stores (past ~4.6 hours whole ms run together)
    t = (times_ms.astype(np.float64) / 1000.0).astype(np.float32)
    prev = np.maximum.accumulate(np.concatenate([[-1.0], t[:-1]]).astype(np.float32))
    keep = t > prev
    if not keep.all():
        warnings.warn(f"animation {name!r}: {int((~keep).sum())} keys whose time does not "
                      "increase were dropped", LossWarning, stacklevel=4)
    return keep


def _v9_animation(a, nodes, parents, t_rest, s_rest, path: str) -> SAnimation | None:
    name = _txt(a.name)
    times = np.asarray(a.key_times).reshape(-1)
    tr = np.asarray(a.transforms)
    n = len(nodes)
    if len(times) == 0 or n == 0:
        return None
    if tr.shape != (n, len(times)):
        raise _fail(f"transforms of shape ({n}, {len(times)})", tr.shape, path)
    keep = _increasing(times, name)
    times = times[keep]
    loc = tr["location"][:, keep].astype(np.float64) * S3
    rot = tr["rotation"][:, keep].astype(np.float64) * SQ
    _finite(loc, "key locations", path)
    _finite(rot, "key rotations", path)
    secs = times.astype(np.float64) / 1000.0
    anim = SAnimation(name=name)
    for j in range(n):
        if nodes[j].flags & 0x02:
            t = np.repeat(t_rest[j][None], len(secs), 0)
        else:
            t = loc[j]
        anim.channels.append(Channel(node=j, path="translation", times=secs, values=t))
        anim.channels.append(Channel(node=j, path="rotation", times=secs,
                                     values=quat_continuous(quat_normalize(rot[j]))))
        if np.any(np.abs(s_rest[j] - 1.0) > 1e-6):
            # a bind matrix with scale: the engine's animated transforms have none
            anim.channels.append(Channel(node=j, path="scale", times=secs[:1],
                                         values=np.ones((1, 3))))
    markers = [{"time": float(t) / 1000.0, "string": _txt(s)}
               for t, s, k in zip(np.asarray(a.key_times).tolist(), a.key_strings, keep) if s and k]
    anim.extras = {"interpolation_ms": 200 if a.interpolation_ms is None else int(a.interpolation_ms),
                   "unknown": int(a.unknown), "extents": [float(x) for x in a.extents],
                   "markers": markers}
    return anim


# -- v6 -> Scene ---------------------------------------------------------------------------
def _v6_scene(doc: AbcV6Model, lods: bool, flip_mat, fix_anim, morph: bool) -> Scene:
    ti = doc.transform_info
    flip = bool(ti.flip_mat if ti is not None else 1) if flip_mat is None else bool(flip_mat)
    fix = bool(ti.fix_anim_keyframes if ti is not None else 1) if fix_anim is None else bool(fix_anim)
    s3 = np.ones(3) if flip else S3
    sq = np.ones(4) if flip else SQ
    scene = Scene(name="abc")
    nodes = doc.nodes
    n = len(nodes)
    anims = doc.animations
    parents, missing = tree_parents([nd.child_count for nd in nodes])

    def key_trs(a, k):
        t = np.stack([np.asarray(tk.transforms["location"][k], np.float64) for tk in a.tracks])
        q = np.stack([np.asarray(tk.transforms["rotation"][k], np.float64) for tk in a.tracks])
        if fix:
            q = q * np.array([-1.0, -1.0, -1.0, 1.0])
        return t * s3, quat_normalize(q * sq)

    for ai, a in enumerate(anims):
        if len(a.tracks) != n:
            raise _fail(f"{n} tracks", len(a.tracks), f"animations[{ai}]")
        for j, tk in enumerate(a.tracks):
            _finite(np.asarray(tk.transforms["location"], np.float64), "key locations",
                    f"animations[{ai}].tracks[{j}]")
            _finite(np.asarray(tk.transforms["rotation"], np.float64), "key rotations",
                    f"animations[{ai}].tracks[{j}]")
    if anims and len(anims[0].keys):
        t_rest, r_rest = key_trs(anims[0], 0)
    else:
        t_rest, r_rest = np.zeros((n, 3)), np.tile([0.0, 0.0, 0.0, 1.0], (n, 1))
    for i, nd in enumerate(nodes):
        scene.add_node(SNode(name=_txt(nd.name), translation=t_rest[i], rotation=r_rest[i],
                             extras={"abc_flags": int(nd.flags), "abc_index": int(nd.index)}),
                       parent=None if parents[i] < 0 else parents[i])
    world = scene.world_matrices()[:n] if n else np.zeros((0, 4, 4))
    geo = doc.geometry
    if geo is not None and len(geo.faces) and n:
        verts = np.asarray(geo.vertices)
        nv = len(verts)
        faces = np.asarray(geo.faces)
        vidx = faces["vertex"].reshape(-1).astype(np.int64)
        if vidx.max() >= nv:
            raise _fail(f"face vertex indices below the {nv} vertices", int(vidx.max()), "Geometry")
        vnode = verts["node"].astype(np.int64)
        if vnode.max() >= n:
            raise _fail(f"vertex node indices below the {n} nodes", int(vnode.max()), "Geometry")
        uv = faces["uv"].reshape(-1, 2)
        _finite(uv, "UVs", "Geometry")
        local = verts["location"].astype(np.float64) * s3
        # deformation vertices take their first-frame position
        md_of = {}
        for j, nd in enumerate(nodes):
            md = np.asarray(nd.md_verts).astype(np.int64)
            if len(md) and md.max() >= nv:
                raise _fail(f"MD vertex indices below {nv}", int(md.max()), f"nodes[{j}]")
            if len(md):
                md_of[j] = md

        def deformed(a, j, k=None):
            tk = a.tracks[j]
            d = np.asarray(tk.deform, np.float64)
            vals = d * np.asarray(tk.scale) + np.asarray(tk.translate)
            return (vals if k is None else vals[k]) * s3

        if anims and len(anims[0].keys):
            for j, md in md_of.items():
                local[md] = deformed(anims[0], j, 0)
        _finite(local, "vertex locations", "Geometry")
        wpos = np.einsum("nij,nj->ni", world[vnode], np.concatenate([local, np.ones((nv, 1))], 1))[:, :3]
        nrm = verts["normal"].astype(np.float64) / 127.0 * s3
        nrm = np.einsum("nij,nj->ni", world[vnode][:, :3, :3], nrm)
        src, uv_g, corner = _split_corners(vidx, uv)
        tri = corner.reshape(-1, 3)
        if not flip:
            tri = tri[:, [0, 2, 1]]
        prim = Primitive(positions=wpos[src], normals=_unit_normals(nrm[src]), uvs=[uv_g],
                         indices=tri.reshape(-1).astype(np.uint32),
                         joints=np.column_stack([vnode[src], np.zeros((len(src), 3), int)]),
                         weights=np.tile([1.0, 0.0, 0.0, 0.0], (len(src), 1)))
        mesh = Mesh(name="model", primitives=[prim], extras={"normal_vertex_count": int(geo.normal_vertex_count)})
        target_names: list[tuple[int, int]] = []
        n_targets = sum(len(a.keys) for a in anims)
        if morph and md_of and (n_targets > MAX_TARGETS or n_targets * len(src) > MAX_MORPH_VERTICES):
            warnings.warn(f"{n_targets} vertex-animation keys on {len(src)} vertices are more than "
                          f"the morph-target limits ({MAX_TARGETS} targets, {MAX_MORPH_VERTICES} "
                          "target vertices); the vertex animation was left out", LossWarning,
                          stacklevel=3)
            morph = False
        if morph and md_of:
            base = wpos[src]
            for ai, a in enumerate(anims):
                for k in range(len(a.keys)):
                    full = wpos.copy()
                    for j, md in md_of.items():
                        vals = deformed(a, j, k)
                        full[md] = (world[j] @ np.concatenate([vals, np.ones((len(md), 1))], 1).T).T[:, :3]
                    disp = full[src] - base
                    _finite(disp, "vertex animation", f"animations[{ai}]")
                    prim.targets.append(MorphTarget(positions=disp, name=f"{_txt(a.name)}:{k}"))
                    target_names.append((ai, k))
            mesh.weights = [0.0] * len(target_names)
            mesh.extras["targetNames"] = [f"{_txt(anims[a].name)}:{k}" for a, k in target_names]
        scene.add_material(Material(name="material_0"))
        prim.material = 0
        mi = scene.add_mesh(mesh)
        mnode = scene.add_node(SNode(name="model"))
        scene.nodes[mnode].mesh = mi
        scene.nodes[mnode].skin = scene.add_skin(Skin(joints=list(range(n)),
                                                      inverse_bind_matrices=np.linalg.inv(world),
                                                      skeleton=0, name="skeleton"))
    else:
        mnode, target_names = None, []
    for ai, a in enumerate(anims):
        times = np.asarray(a.keys["time"]).reshape(-1)
        if len(times) == 0 or n == 0:
            continue
        keep = _increasing(times, _txt(a.name))
        secs = times[keep].astype(np.float64) / 1000.0
        anim = SAnimation(name=_txt(a.name), extras={
            "length": int(a.length),
            "markers": [{"time": float(t) / 1000.0, "string": _txt(s)}
                        for t, s, k in zip(times.tolist(), a.key_strings, keep) if s and k]})
        ks = np.nonzero(keep)[0]
        trs = [key_trs(a, k) for k in ks]
        tt = np.stack([x[0] for x in trs], 1)   # (n, k, 3)
        rr = np.stack([x[1] for x in trs], 1)
        for j in range(n):
            anim.channels.append(Channel(node=j, path="translation", times=secs, values=tt[j]))
            anim.channels.append(Channel(node=j, path="rotation", times=secs,
                                         values=quat_continuous(rr[j])))
        if target_names and mnode is not None:
            w = np.zeros((len(ks), len(target_names)), np.float32)
            col = {tk: c for c, tk in enumerate(target_names)}
            for r_, k in enumerate(ks):
                w[r_, col[(ai, int(k))]] = 1.0
            anim.channels.append(Channel(node=mnode, path="weights", times=secs, values=w))
        scene.animations.append(anim)
    hd = doc.header
    scene.extras = {"abc_version": 6, "command_string": _txt(hd.command_string) if hd else "",
                    "flip_mat": int(flip), "fix_anim_keyframes": int(fix),
                    "vertex_animation": "morph targets" if target_names else "none"}
    if missing:
        scene.extras["missing_children"] = missing
    return scene


def to_scene(doc, *, source=None, lods: bool = True, flip_mat: int | None = None,
             fix_anim_keyframes: int | None = None, morph: bool = True) -> Scene:
    """An ABC model as a Scene (see the module docstring for the mapping)."""
    with np.errstate(all="ignore"):     # nonsense values are caught by the finite checks
        if isinstance(doc, AbcV6Model):
            return _v6_scene(doc, lods, flip_mat, fix_anim_keyframes, morph)
        if isinstance(doc, AbcModel):
            return _v9_scene(doc, lods)
    raise DocumentError(f"{type(doc).__name__} is not an ABC model")


# -- Scene -> v9..v13 ----------------------------------------------------------------------
def _reachable(scene: Scene) -> set[int]:
    out: set[int] = set()
    stack = list(scene.roots)
    while stack:
        i = stack.pop()
        if i in out:
            continue
        out.add(i)
        stack.extend(scene.nodes[i].children)
    return out


def from_scene(scene: Scene, *, version: int = 12, **options) -> AbcModel:
    """A Scene as an ABC model (v12 unless ``version`` says otherwise); see the module docstring."""
    if version not in abcmod.VERSIONS:
        raise DocumentError(f"ABC from_scene writes versions {abcmod.VERSIONS}, not {version}")
    nodes = scene.nodes
    parents = scene.parents()
    reach = _reachable(scene)
    rest_world = scene.world_matrices()
    mesh_nodes = [i for i in sorted(reach) if nodes[i].mesh is not None]
    # joints and their bind worlds (glTF space)
    bind: dict[int, np.ndarray] = {}
    conflicts: set[int] = set()
    singular: set[int] = set()
    for i in mesh_nodes:
        si = nodes[i].skin
        if si is None:
            continue
        skin = scene.skins[si]
        ibm = skin.inverse_bind_matrices
        for k, j in enumerate(skin.joints):
            usable = ibm is not None and np.all(np.isfinite(ibm[k])) and \
                abs(np.linalg.det(ibm[k].astype(np.float64))) > 1e-12
            if ibm is not None and not usable:
                singular.add(j)
            m = np.linalg.inv(ibm[k].astype(np.float64)) if usable else rest_world[j]
            if j not in bind:
                bind[j] = m
            elif not np.allclose(bind[j], m, atol=1e-4):
                conflicts.add(j)
    # a mesh without skin follows its nearest joint ancestor when nothing between them moves;
    # under animated nodes it becomes a node of its own (bound where it rests) so that it
    # keeps its motion; without a joint ancestor it hangs on a static synthetic root
    animated = {c.node for a in scene.animations for c in a.channels if c.path != "weights"}
    skin_joints = set(bind)
    static_root = False
    for i in mesh_nodes:
        if nodes[i].skin is not None or i in bind:
            continue
        j, moves = i, False
        while j >= 0 and j not in skin_joints:
            moves = moves or j in animated
            j = parents[j]
        if moves:
            bind[i] = rest_world[i]
        elif j < 0:
            static_root = True
    jset = set(bind)
    if singular:
        warnings.warn(f"{len(singular)} joints have singular inverse bind matrices; they are "
                      "bound where they rest", LossWarning, stacklevel=2)
    if conflicts:
        warnings.warn(f"{len(conflicts)} joints have different bind poses in different skins; "
                      "ABC has one bind matrix per node, the first skin's is used", LossWarning,
                      stacklevel=2)

    def abc_parent(j: int) -> int:
        p = parents[j]
        while p >= 0 and p not in jset:
            p = parents[p]
        return p

    jparent = {j: abc_parent(j) for j in jset}
    roots = sorted(j for j in jset if jparent[j] < 0)
    synthetic = len(roots) != 1 or static_root
    order: list[int] = []          # scene node per ABC node (-1 = synthetic root)
    kids = {j: sorted(c for c in jset if jparent[c] == j) for j in jset}
    stack = list(reversed(roots))
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(kids[j]))
    if synthetic:
        order.insert(0, -1)
    abc_index = {j: i for i, j in enumerate(order)}
    nn = len(order)
    abc_par = [-1 if j < 0 else (abc_index[jparent[j]] if jparent[j] >= 0 else (0 if synthetic else -1))
               for j in order]
    bind_gl = np.stack([np.eye(4) if j < 0 else bind[j] for j in order])
    # ABC keys hold no scale: the nodes are the rigid part of the bind worlds, and whatever
    # scale a joint's world carries (``nonrigid``, constant over time in nearly every file)
    # is baked into its weight locations (inverse(m) @ vertex)
    bind_rigid = _rigid(bind_gl)
    nonrigid = np.linalg.inv(bind_rigid) @ bind_gl
    bind_file = S4 @ bind_rigid @ S4
    inv_bind_file = np.linalg.inv(bind_file)
    abc_nodes = []
    for i, j in enumerate(order):
        src = nodes[j] if j >= 0 else None
        name = (src.name if src is not None else "root") or f"node{i}"
        flags = _xint(src.extras.get("abc_flags"), 0, 0, 0xFF) if src is not None else 1
        abc_nodes.append(Node(name=name.encode("latin-1", "replace"),
                              index=_xint(src.extras.get("abc_index"), i, 0, 0xFFFF) if src is not None else i,
                              flags=flags & 0xFF, matrix=bind_file[i].astype("<f4"),
                              child_count=sum(1 for p in abc_par if p == i)))
    # meshes -> pieces (LOD 0 from the default scene; LOD n from "<piece>_lod<n>" nodes of
    # other scenes, as to_scene writes them)
    ctx = dict(scene=scene, parents=parents, jset=jset, abc_index=abc_index,
               rest_world=rest_world, inv_bind_file=inv_bind_file, bind_rigid=bind_rigid)
    lod_nodes: dict[tuple[str, int], int] = {}
    for _, roots in scene.extra_scenes:
        for r in roots:
            nd = nodes[r]
            if r in reach or nd.mesh is None:
                continue
            piece, lod = nd.extras.get("abc_piece"), nd.extras.get("abc_lod")
            if isinstance(piece, str) and isinstance(lod, int) and lod > 0:
                lod_nodes[(piece, lod)] = r
    used_lod_nodes: set[int] = set()
    pieces: list[Piece] = []
    for mi_node in mesh_nodes:
        nd = nodes[mi_node]
        mesh = scene.meshes[nd.mesh]
        for pi, prim in enumerate(mesh.primitives):
            if prim.mode != 4:
                warnings.warn(f"mesh {mesh.name!r}: primitive mode {prim.mode} is not triangles; "
                              "left out", LossWarning, stacklevel=2)
                continue
            parts = _uint16_parts(prim)
            lods = [_prim_lod(ctx, mi_node, parts[0], mesh.name)]
            key = nd.extras.get("abc_piece")
            level = 1
            while len(parts) == 1 and isinstance(key, str) and (key, level) in lod_nodes:
                ln = lod_nodes[(key, level)]
                lmesh = scene.meshes[nodes[ln].mesh]
                if pi >= len(lmesh.primitives) or lmesh.primitives[pi].mode != 4 or \
                        len(lmesh.primitives[pi].positions) > 0xFFFF:
                    break
                lods.append(_prim_lod(ctx, ln, lmesh.primitives[pi], lmesh.name))
                used_lod_nodes.add(ln)
                level += 1
            mat = scene.materials[prim.material] if prim.material is not None else None
            pname = mesh.name or nd.name or f"piece{len(pieces)}"
            if len(mesh.primitives) > 1:
                pname = f"{pname}_{pi}"
            for k, part in enumerate(parts):
                pieces.append(Piece(
                    material_index=prim.material or 0,
                    specular_power=_xfloat(mat.extras.get("specular_power"), 0.0) if mat else 0.0,
                    specular_scale=_xfloat(mat.extras.get("specular_scale"), 1.0) if mat else 1.0,
                    lod_weight=1.0 if version > 9 else None,
                    name=(pname if len(parts) == 1 else f"{pname}_part{k}").encode("latin-1", "replace"),
                    lods=lods if k == 0 else [_prim_lod(ctx, mi_node, part, mesh.name)]))
    lost = []
    for mi_node in mesh_nodes:
        for prim in scene.meshes[nodes[mi_node].mesh].primitives:
            if prim.targets:
                lost.append("morph targets")
            if len(prim.uvs) > 1:
                lost.append("UV sets after the first")
            if prim.colors is not None:
                lost.append("vertex colours")
    if lost:
        warnings.warn("ABC has no place for " + ", ".join(sorted(set(lost))) + "; left out",
                      LossWarning, stacklevel=2)
    lod_count = max((len(p.lods) for p in pieces), default=1)
    for p in pieces:              # every piece needs LODCount LODs: repeat the last one
        while len(p.lods) < lod_count:
            p.lods.append(p.lods[-1])
    unused = [r for _, roots in scene.extra_scenes for r in roots
              if r not in reach and nodes[r].mesh is not None and r not in used_lod_nodes]
    if unused:
        warnings.warn(f"{len(unused)} meshes of other scenes are not LODs of a written piece "
                      "and were left out", LossWarning, stacklevel=2)
    # animations
    anims = _animations_from_scene(scene, order, abc_par, version, nonrigid)
    # sockets
    sockets = []
    for i in sorted(reach):
        nd = nodes[i]
        if not nd.extras.get("abc_socket") or i in jset:
            continue
        anc = parents[i]
        while anc >= 0 and anc not in jset:
            anc = parents[anc]
        if anc < 0:
            continue
        local = np.linalg.inv(_rigid(rest_world[anc])) @ rest_world[i]
        t, q, _ = decompose_trs(local)
        sockets.append(Socket(node=abc_index[anc], name=nd.name.encode("latin-1", "replace"),
                              rotation=tuple(float(x) for x in (q * SQ).astype(np.float32)),
                              location=tuple(float(x) for x in (t * S3).astype(np.float32))))
    # header and the rest
    allpos = np.concatenate([p.lods[0].vertices["location"] for p in pieces]) if pieces else np.zeros((0, 3))
    radius = float(np.linalg.norm(allpos, axis=1).max()) if len(allpos) else 0.0
    ext = tuple(float(x) for x in (np.abs(allpos).max(0) if len(allpos) else np.zeros(3)).astype(np.float32))
    for a in anims:
        a.extents = ext
    ex = scene.extras or {}
    weight_sets = []
    sets = ex.get("weight_sets")
    for name, vals in (sets.items() if isinstance(sets, dict) else ()):
        if isinstance(vals, list) and len(vals) == nn and \
                all(_xfloat(x, None) is not None for x in vals):
            weight_sets.append(WeightSet(name=str(name).encode("latin-1", "replace"),
                                         weights=np.asarray(vals, "<f4")))
    base = np.zeros(nn, TRANSFORM if version < 13 else abcmod.TRANSFORM13)
    inv_par = np.stack([np.eye(4) if p < 0 else inv_bind_file[p] for p in abc_par])
    bt, bq, _ = decompose_trs(inv_par @ bind_file)
    base["location"] = bt
    base["rotation"] = bq
    header = HeaderSection(version=version, lod_count=lod_count,
                           command_string=str(ex.get("command_string", "")).encode("latin-1", "replace"),
                           internal_radius=radius,
                           lod_distances=np.asarray(_lod_distances(ex, lod_count), "<f4"),
                           unknown_v13=0 if version >= 13 else None)
    model = AbcModel(sections=[
        header, PiecesSection(pieces=pieces),
        NodesSection(nodes=abc_nodes, weight_sets=weight_sets),
        ChildModelsSection(child_models=[ChildModel(name=b"", build_number=0, transforms=base)],
                           extra=version >= 13),
        AnimationSection(animations=anims), SocketsSection(sockets=sockets),
        AnimBindingsSection(bindings=[AnimBinding(name=a.name, extents=ext) for a in anims])])
    return abcmod.recount(model)


def _xint(v: Any, default, lo: int, hi: int):
    """An integer from glTF extras (anything a user or tool may have put there), else default."""
    try:
        x = int(v)
    except (TypeError, ValueError, OverflowError):
        return default
    return x if lo <= x <= hi else default


def _xfloat(v: Any, default):
    """A float32-sized finite float from glTF extras, else default."""
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        return default
    return x if np.isfinite(x) and abs(x) < 3.0e38 else default


def _lod_distances(extras: dict, lod_count: int) -> list[float]:
    d = extras.get("lod_distances")
    if isinstance(d, list) and len(d) == lod_count:
        vals = [_xfloat(x, None) for x in d]
        if None not in vals:
            return vals
    return [0.0] + [float(10 * i) for i in range(1, lod_count)]


def _uint16_parts(prim: Primitive) -> list[Primitive]:
    """The primitive itself, or consecutive runs of its triangles that use at most 65535
    vertices each (an ABC LOD indexes its vertices with uint16)."""
    n = len(prim.positions)
    if n <= 0xFFFF:
        return [prim]
    tri = prim.indices if prim.indices is not None else np.arange(n, dtype=np.uint32)
    tri = tri[:len(tri) - len(tri) % 3].reshape(-1, 3)
    parts, start = [], 0
    while start < len(tri):
        window = tri[start:start + 4 * 0xFFFF].reshape(-1)
        _, first = np.unique(window, return_index=True)
        fresh = np.zeros(len(window), np.int64)
        fresh[first] = 1
        used = np.cumsum(fresh)[2::3]             # distinct vertices up to each triangle
        k = int(np.searchsorted(used, 0xFFFF, side="right"))
        chunk = tri[start:start + k]
        keep = np.unique(chunk)
        skinned = prim.joints is not None and prim.weights is not None
        parts.append(Primitive(positions=prim.positions[keep],
                               normals=None if prim.normals is None else prim.normals[keep],
                               uvs=[uv[keep] for uv in prim.uvs[:1]],
                               joints=prim.joints[keep] if skinned else None,
                               weights=prim.weights[keep] if skinned else None,
                               material=prim.material,
                               indices=np.searchsorted(keep, chunk.reshape(-1)).astype(np.uint32)))
        start += k
    return parts


def _prim_lod(ctx: dict, node_index: int, prim: Primitive, mesh_name: str) -> Lod:
    """One glTF primitive as an ABC LOD (vertices in model space, weights on ABC nodes)."""
    scene, parents, jset = ctx["scene"], ctx["parents"], ctx["jset"]
    abc_index, rest_world, inv_bind_file = ctx["abc_index"], ctx["rest_world"], ctx["inv_bind_file"]
    nd = scene.nodes[node_index]
    skin = scene.skins[nd.skin] if nd.skin is not None else None
    follow = 0
    if skin is None:
        anc = node_index
        while anc >= 0 and anc not in jset:
            anc = parents[anc]
        follow = abc_index[anc] if anc >= 0 else 0
        # placed relative to where the followed node rests, moved to where it is bound
        place = ctx["bind_rigid"][follow] @ np.linalg.inv(_rigid(rest_world[anc])) \
            @ rest_world[node_index] if anc >= 0 else rest_world[node_index]
    pos = prim.positions.astype(np.float64)
    nv = len(pos)
    idx = (prim.indices if prim.indices is not None else np.arange(nv)).astype(np.int64)
    idx = idx[:len(idx) - len(idx) % 3]          # a non-indexed list may end in a partial triangle
    if nv > 0xFFFF:
        raise DocumentError(f"mesh {mesh_name!r} has {nv} vertices; an ABC LOD holds at most 65535")
    normals = prim.normals.astype(np.float64) if prim.normals is not None else None
    if skin is None:
        m = place
        pos = (m[:3, :3] @ pos.T).T + m[:3, 3]
        if normals is not None:
            normals = (np.linalg.inv(m[:3, :3]).T @ normals.T).T
        if np.linalg.det(m[:3, :3]) < 0:      # a mirroring transform turns the faces over
            idx = idx.reshape(-1, 3)[:, [0, 2, 1]].reshape(-1)
    if normals is None:
        from ...gltf.writer import compute_normals
        normals = compute_normals(pos, idx).astype(np.float64)
    ln = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.where(ln > 1e-12, normals / np.where(ln > 1e-12, ln, 1.0), 0.0)
    fpos = pos * S3
    if skin is not None and prim.joints is not None:
        jmap = np.array([abc_index[j] for j in skin.joints], np.int64)
        w = prim.weights.astype(np.float64)
        w = np.where(np.isfinite(w) & (w > 0), w, 0.0)
        empty = w.sum(1) <= 0
        jj = jmap[np.clip(prim.joints.astype(np.int64), 0, len(jmap) - 1)]
        w[empty, 0] = 1.0
        jj[empty, 0] = 0
        w /= w.sum(1, keepdims=True)
    else:
        jj = np.zeros((nv, 4), np.int64)
        jj[:, 0] = follow
        w = np.zeros((nv, 4))
        w[:, 0] = 1.0
    mask = w > 0
    owner = np.nonzero(mask)[0]
    wnode = jj[mask]
    loc = np.einsum("nij,nj->ni", inv_bind_file[wnode],
                    np.concatenate([fpos[owner], np.ones((len(owner), 1))], 1))[:, :3]
    verts = np.zeros(nv, VERTEX)
    verts["weight_count"] = mask.sum(1)
    verts["location"] = fpos
    verts["normal"] = normals * S3
    weights = np.zeros(len(owner), WEIGHT)
    weights["node"] = wnode
    weights["location"] = loc
    weights["bias"] = w[mask]
    tri = idx.reshape(-1, 3)[:, [0, 2, 1]]
    faces = np.zeros(tri.shape, CORNER)
    faces["vertex"] = tri
    uv = prim.uvs[0] if prim.uvs else np.zeros((nv, 2), np.float32)
    faces["uv"] = uv[tri]
    return Lod(faces=faces, vertices=verts, weights=weights)


def _rigid(m: np.ndarray) -> np.ndarray:
    """The rotation and translation of affine matrices (scale and mirroring removed)."""
    t, q, _ = decompose_trs(m)
    return compose_trs(t, q, np.ones_like(t))


def _animations_from_scene(scene: Scene, order: list[int], abc_par: list[int], version: int,
                           nonrigid: np.ndarray):
    nodes = scene.nodes
    parents = scene.parents()
    n_all = len(nodes)
    t0 = np.stack([n.translation for n in nodes]) if n_all else np.zeros((0, 3))
    r0 = np.stack([n.rotation for n in nodes]) if n_all else np.zeros((0, 4))
    s0 = np.stack([n.scale for n in nodes]) if n_all else np.zeros((0, 3))
    dt = abcmod.TRANSFORM13 if version >= 13 else TRANSFORM
    out = []
    src_anims = scene.animations or [SAnimation(name="base")]
    scaled = False
    for a in src_anims:
        chans = [c for c in a.channels if c.path != "weights"]
        if chans:
            allt = np.concatenate([c.times.astype(np.float64) for c in chans])
            ms = np.unique(np.round(allt * 1000.0).astype(np.int64))
            ms = ms - min(int(ms[0]), 0)
            if int(ms[-1]) > 0xFFFFFFFF:
                raise DocumentError(f"animation {a.name!r} lasts {ms[-1] / 1000.0:g} s; ABC key "
                                    "times are uint32 milliseconds (at most about 49.7 days)")
        else:
            ms = np.zeros(1, np.int64)
        secs = ms / 1000.0
        k = len(ms)
        T = np.repeat(t0[None], k, 0)
        R = np.repeat(r0[None], k, 0)
        Sc = np.repeat(s0[None], k, 0)
        for c in chans:
            vals = c.sample(secs)
            if c.path == "translation":
                T[:, c.node] = vals
            elif c.path == "rotation":
                R[:, c.node] = vals
            else:
                Sc[:, c.node] = vals
        world = world_matrices(compose_trs(T, R, Sc), parents) if n_all else np.zeros((k, 0, 4, 4))
        Wfull = np.stack([np.broadcast_to(np.eye(4), (k, 4, 4)) if j < 0 else world[:, j]
                          for j in order], 1)                               # (k, nn, 4, 4)
        W = _rigid(Wfull)
        # the scale part baked into the weights must be the one the animation has
        if np.any(np.abs(np.linalg.inv(W) @ Wfull - nonrigid[None]) > 1e-3 * (1.0 + np.abs(nonrigid[None]))):
            scaled = True
        P = np.stack([np.broadcast_to(np.eye(4), (k, 4, 4)) if p < 0 else W[:, p]
                      for p in abc_par], 1)
        local = np.linalg.inv(P) @ W
        lf = S4 @ local @ S4
        t, q, _ = decompose_trs(lf)
        tr = np.zeros((len(order), k), dt)
        tr["location"] = np.transpose(t, (1, 0, 2))
        tr["rotation"] = np.transpose(quat_normalize(q), (1, 0, 2))
        ex = a.extras or {}
        strings = [b""] * k
        markers = ex.get("markers")
        for m in (markers if isinstance(markers, list) else ()):
            try:
                at = int(np.argmin(np.abs(ms - round(float(m["time"]) * 1000.0))))
                strings[at] = str(m["string"]).encode("latin-1", "replace")
            except (KeyError, TypeError, ValueError, OverflowError):
                continue
        out.append(abcmod.Animation(
            name=(a.name or f"anim{len(out)}").encode("latin-1", "replace"),
            unknown=_xint(ex.get("unknown"), -1, -2**31, 2**31 - 1),
            interpolation_ms=_xint(ex.get("interpolation_ms"), 200, 0, 2**32 - 1)
            if version >= 12 else None,
            key_times=ms.astype("<u4"), key_strings=strings,
            markers=np.full(len(order), -1, "<i4") if version >= 13 else None, transforms=tr))
    if scaled:
        warnings.warn("ABC keyframes hold no scale: joint scale that differs from the bind "
                      "pose's (baked into the weights) was dropped", LossWarning, stacklevel=3)
    return out


# -- checks --------------------------------------------------------------------------------
def structural_problems(doc) -> list[str]:
    """Problems a loader would trip over; ``warning:`` ones are tolerated by the engine."""
    out: list[str] = []
    if isinstance(doc, AbcV6Model):
        n = len(doc.nodes)
        g = doc.geometry
        if g is not None and len(g.vertices):
            if len(g.faces) and int(np.asarray(g.faces["vertex"]).max()) >= len(g.vertices):
                out.append("a face refers to a vertex beyond the vertex list")
            if int(np.asarray(g.vertices["node"]).max()) >= max(n, 1):
                out.append("a vertex refers to a node beyond the node list")
        for a in doc.animations:
            t = np.asarray(a.keys["time"]).astype(np.int64)
            if len(t) > 1 and np.any(np.diff(t) <= 0):
                out.append(f"warning: animation {_txt(a.name)!r} has key times that do not increase")
        return out
    h = doc.header
    n = len(doc.nodes)
    tparents, missing = tree_parents([nd.child_count for nd in doc.nodes])
    if missing:
        out.append(f"the node tree announces {missing} children that are not there")
    if tparents.count(-1) > 1:
        out.append(f"the child counts leave {tparents.count(-1)} node trees; the engine has one root")
    ref = abcmod.recount(_shallow_copy(doc)).header
    for f in ("keyframe_count", "animation_count", "piece_count", "child_model_count",
              "face_count", "vertex_count", "weight_count", "socket_count", "weight_set_count",
              "string_count", "string_length_total"):
        if getattr(h, f) != getattr(ref, f):
            out.append(f"warning: header {f} is {getattr(h, f)}, the content has {getattr(ref, f)}")
    for pi, p in enumerate(doc.pieces):
        for li, lod in enumerate(p.lods):
            nv = len(lod.vertices)
            if len(lod.faces) and int(np.asarray(lod.faces["vertex"]).max()) >= nv:
                out.append(f"piece {pi} LOD {li}: a face refers to a vertex beyond {nv}")
            if len(lod.weights) and int(np.asarray(lod.weights["node"]).max()) >= n:
                out.append(f"piece {pi} LOD {li}: a weight refers to a node beyond {n}")
    mats = np.stack([np.asarray(nd.matrix, np.float64).reshape(4, 4) for nd in doc.nodes]) \
        if n else np.zeros((0, 4, 4))
    for pi, p in enumerate(doc.pieces):
        for li, lod in enumerate(p.lods):
            dev = bind_deviation(lod, mats)
            if dev is not None and dev > 1e-3:
                out.append(f"warning: piece {_txt(p.name)!r} LOD {li}: the weighted bind positions "
                           f"are up to {dev:.4g} away from the vertex locations (the model will "
                           "not look the same in the engine)")
    for s in doc.sockets:
        if s.node >= n:
            out.append(f"socket {_txt(s.name)!r} refers to node {s.node} of {n}")
    for a in doc.animations:
        t = np.asarray(a.key_times).astype(np.int64)
        if len(t) > 1 and np.any(np.diff(t) <= 0):
            out.append(f"warning: animation {_txt(a.name)!r} has key times that do not increase")
    return out


def _shallow_copy(doc: AbcModel) -> AbcModel:
    import copy
    return AbcModel(sections=[copy.copy(s) if isinstance(s, (HeaderSection, PiecesSection)) else s
                              for s in doc.sections])
