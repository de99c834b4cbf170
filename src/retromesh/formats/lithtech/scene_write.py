"""Scene -> LithTech ABC v9..v13 (:func:`from_scene_v9`; the mapping is in :mod:`.scene`, which
chooses the version)."""
from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...arrays import as_dtype, distinct, isin
from ...errors import DocumentError, LossWarning
from ...extras import FLOAT32, integer, integers, number, numbers, text
from ...geometry import compute_normals
from ...hierarchy import nearest_in, top_down
from ...keytimes import per_frame
from ...scene import Animation as SAnimation, Channel, Mesh, Primitive, Scene
from ...transforms import compose_trs, decompose_trs, quat_normalize, world_matrices
from . import abc as abcmod, scene_extras as xt
from .abc import (
    CORNER,
    TRANSFORM,
    VERTEX,
    WEIGHT,
    AbcModel,
    AnimationSection,
    AnimBindingsSection,
    ChildModelsSection,
    HeaderSection,
    Lod,
    Node,
    NodesSection,
    Piece,
    PiecesSection,
    Socket,
    SocketsSection,
)
from .scene_common import S3, S4, SQ, rigid, weight_locations

__all__ = ["from_scene_v9", "Written", "PieceSource", "Skeleton", "LIMITS"]

_LOD_NAME = re.compile(r"(.+)_lod([1-9][0-9]*)")


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


def _lod_key(scene: Scene, i: int) -> tuple[str, int] | None:
    """(piece, level > 0) of a node that holds a LOD: from its extras (``abc_piece``/``abc_lod``),
    else from a name ``<piece>_lod<n>`` (node or mesh)."""
    nd = scene.nodes[i]
    piece, lod = text(nd.extras, "abc_piece"), integer(nd.extras, "abc_lod")
    if piece is not None and lod is not None:
        return (piece, lod) if lod > 0 else None
    for name in (nd.name, scene.meshes[nd.mesh].name if nd.mesh is not None else ""):
        m = _LOD_NAME.fullmatch(name or "")
        if m:
            return m.group(1), int(m.group(2))
    return None


def _piece_key(scene: Scene, i: int) -> str:
    nd = scene.nodes[i]
    piece = text(nd.extras, "abc_piece")
    if piece is not None:
        return piece
    return mesh_of(scene, i).name or nd.name


def mesh_of(scene: Scene, i: int) -> Mesh:
    """The mesh of node ``i``, a mesh node."""
    mi = scene.nodes[i].mesh
    assert mi is not None
    return scene.meshes[mi]


def _lod_nodes(scene: Scene, mesh_nodes: list[int], reach: set[int]) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for _, roots in scene.extra_scenes:
        for r in roots:
            if r not in reach and scene.nodes[r].mesh is not None:
                key = _lod_key(scene, r)
                if key is not None:
                    out.setdefault(key, r)
    keys = {i: _lod_key(scene, i) for i in mesh_nodes}
    pieces = {_piece_key(scene, i) for i in mesh_nodes if keys[i] is None}
    for i in mesh_nodes:
        k = keys[i]
        if k is not None and k[0] in pieces:
            out.setdefault(k, i)
    return out

@dataclass
class PieceSource:
    """Where a written piece's LOD 0 came from: the glTF primitive, and for each ABC vertex the
    index of the primitive's vertex it was made from (vertices alike but for their UVs are one
    ABC vertex)."""
    primitive: Primitive
    vertices: np.ndarray


@dataclass
class Written:
    """What :func:`from_scene_v9` made: the model, and one :class:`PieceSource` per piece (the
    v6 writer lays the same vertices out its own way and needs to know where they came from)."""
    model: AbcModel
    sources: list[PieceSource]


@dataclass
class Skeleton:
    """The ABC nodes made from the scene's joints (glTF space unless named ``file``)."""
    order: list[int]            # scene node per ABC node (-1 = synthetic root)
    parents: list[int]          # ABC parent per ABC node (-1 = none)
    index: dict[int, int]       # scene node -> ABC node
    joint_up: list[int]         # per scene node its nearest ABC node's scene node (itself included)
    bind_rigid: np.ndarray      # (n, 4, 4) rotation and translation of the bind worlds
    nonrigid: np.ndarray        # (n, 4, 4) the rest of the bind worlds, baked into the weights
    bind_file: np.ndarray       # (n, 4, 4) the nodes' bind matrices (file space)
    inv_bind_file: np.ndarray


def from_scene_v9(scene: Scene, version: int, *, morph_targets_kept: bool = False,
                  kept_binds: Callable[[np.ndarray], np.ndarray] | None = None,
                  legacy: bool = False) -> Written:
    """The v9..v13 model of a scene (see :mod:`.scene` for the mapping).
    ``morph_targets_kept``: the caller writes the morph targets itself (the v6 writer), so they
    are not warned about as left out. ``kept_binds``: the nodes' bind matrices as the file had
    them, from the ones made (the ``.abc`` record, :mod:`.exact`), before the weights are
    placed by them. ``legacy``: the floats computed as the writer did when GLBs held the
    whole-file record ``abc_exact`` (its blocks are the bytes that writer wrote): bind
    matrices not rounded before the weights are placed, keys and sockets through the world
    matrices."""
    if version not in abcmod.VERSIONS:
        raise DocumentError(f"ABC from_scene writes versions 6, {abcmod.VERSIONS}, not {version}")
    ex = scene.extras or {}
    scene = xt.in_file_order_scene(scene)
    nodes = scene.nodes
    reach = _reachable(scene)
    rest_world = scene.world_matrices()
    mesh_nodes = [i for i in sorted(reach) if nodes[i].mesh is not None]
    # LOD n > 0 nodes: of other scenes (as to_scene writes them), or of the default scene
    # (Blender imports every scene's nodes into one) when they name a piece that is there
    lod_nodes = _lod_nodes(scene, mesh_nodes, reach)
    lod_set = set(lod_nodes.values())
    mesh_nodes = [i for i in mesh_nodes if i not in lod_set]
    sk = _skeleton(scene, mesh_nodes, sorted(lod_set), rest_world, legacy)
    if kept_binds is not None:
        sk.bind_file = kept_binds(sk.bind_file)
        sk.bind_rigid = S4 @ sk.bind_file @ S4
        sk.inv_bind_file = np.linalg.inv(sk.bind_file)
    pieces, sources, used_lod_nodes = _pieces(scene, sk, rest_world, mesh_nodes, lod_nodes, version,
                                              legacy)
    _warn_left_out(scene, mesh_nodes, morph_targets_kept)
    lod_count = max((len(p.lods) for p in pieces), default=1)
    for p in pieces:              # every piece needs LODCount LODs: repeat the last one
        while len(p.lods) < lod_count:
            p.lods.append(p.lods[-1])
    unused = [r for _, roots in scene.extra_scenes for r in roots
              if r not in reach and nodes[r].mesh is not None and r not in used_lod_nodes]
    unused += [r for r in sorted(lod_set - used_lod_nodes) if r in reach]
    if unused:
        warnings.warn(f"{len(unused)} meshes of other scenes are not LODs of a written piece "
                      "and were left out", LossWarning, stacklevel=3)
    anims = _animations_from_scene(scene, sk.order, sk.parents, version, sk.nonrigid, legacy)
    sockets = _sockets(scene, sk, reach, rest_world, legacy)
    # header and the rest
    nn = len(sk.order)
    allpos = np.concatenate([p.lods[0].vertices["location"] for p in pieces]) if pieces else np.zeros((0, 3))
    radius = xt.kept_radius(ex, pieces)
    ext = tuple(float(x) for x in (np.abs(allpos).max(0) if len(allpos) else np.zeros(3)).astype(np.float32))
    for a in anims:
        if a.extents is None:
            a.extents = ext
    base = np.zeros(nn, TRANSFORM if version < 13 else abcmod.TRANSFORM13)
    inv_par = np.stack([np.eye(4) if p < 0 else sk.inv_bind_file[p] for p in sk.parents])
    bt, bq, _ = decompose_trs(inv_par @ sk.bind_file)
    base["location"] = bt
    base["rotation"] = bq
    header = HeaderSection(version=version, lod_count=lod_count,
                           command_string=str(ex.get("command_string", "")).encode("latin-1", "replace"),
                           internal_radius=radius,
                           lod_distances=np.asarray(_lod_distances(ex, lod_count), "<f4"),
                           unknown_v13=integer(ex, "unknown_v13", 0, 0, 2**32 - 1)
                           if version >= 13 else None)
    model = AbcModel(sections=[
        header, PiecesSection(pieces=pieces),
        NodesSection(nodes=_abc_nodes(scene, sk), weight_sets=xt.weight_sets(ex, nn)),
        ChildModelsSection(child_models=xt.child_models(ex, base), extra=version >= 13),
        AnimationSection(animations=anims), SocketsSection(sockets=sockets),
        AnimBindingsSection(bindings=xt.anim_bindings(ex, [a.name for a in anims], ext))])
    return Written(abcmod.recount(model), sources)


def _bind_worlds(scene: Scene, skinned: list[int], rest_world: np.ndarray) -> dict[int, np.ndarray]:
    """The bind world (glTF space) of every joint of the skins of the ``skinned`` nodes: the
    inverse of its inverse bind matrix (the first skin's), or where it rests when that is
    singular (both warned)."""
    nodes = scene.nodes
    bind: dict[int, np.ndarray] = {}
    conflicts: set[int] = set()
    singular: set[int] = set()
    for i in skinned:
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
            m = np.linalg.inv(ibm[k].astype(np.float64)) if usable and ibm is not None \
                else rest_world[j]
            if j not in bind:
                bind[j] = m
            elif not np.allclose(bind[j], m, atol=1e-4):
                conflicts.add(j)
    if singular:
        warnings.warn(f"{len(singular)} joints have singular inverse bind matrices; they are "
                      "bound where they rest", LossWarning, stacklevel=4)
    if conflicts:
        warnings.warn(f"{len(conflicts)} joints have different bind poses in different skins; "
                      "ABC has one bind matrix per node, the first skin's is used", LossWarning,
                      stacklevel=4)
    return bind


def _skeleton(scene: Scene, mesh_nodes: list[int], lod_nodes: list[int],
              rest_world: np.ndarray, legacy: bool = False) -> Skeleton:
    """The joints of the skins used by the meshes, and the unskinned meshes that must move on
    their own, as ABC nodes (a synthetic root when there is not exactly one root)."""
    nodes = scene.nodes
    parents = scene.parents()
    bind = _bind_worlds(scene, mesh_nodes + lod_nodes, rest_world)
    # a mesh without skin follows its nearest joint ancestor when nothing between them moves;
    # under animated nodes it becomes a node of its own (bound where it rests) so that it
    # keeps its motion; without a joint ancestor it hangs on a static synthetic root
    animated = {c.node for a in scene.animations for c in a.channels if c.path != "weights"}
    skin_joints = set(bind)
    static_root = False
    # per node, in one pass down the tree (not a walk up from every mesh node): its nearest
    # skin joint (itself included) and whether anything from it up to that joint moves
    joint_up = nearest_in(parents, skin_joints)
    moving = [False] * len(nodes)
    for x in top_down(parents):
        p = parents[x]
        moving[x] = x in animated or (p >= 0 and p not in skin_joints and moving[p])
    for i in mesh_nodes:
        if nodes[i].skin is not None or i in bind:
            continue
        if moving[i]:
            bind[i] = rest_world[i]
        elif joint_up[i] < 0:
            static_root = True
    jset = set(bind)
    jset_up = nearest_in(parents, jset)          # each node's nearest joint, itself included
    jparent = {j: jset_up[parents[j]] if parents[j] >= 0 else -1 for j in jset}
    roots = sorted(j for j in jset if jparent[j] < 0)
    synthetic = len(roots) != 1 or static_root
    order: list[int] = []
    kids: dict[int, list[int]] = {j: [] for j in jset}
    for c in sorted(jset):
        if jparent[c] >= 0:
            kids[jparent[c]].append(c)
    stack = list(reversed(roots))
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(kids[j]))
    if synthetic:
        order.insert(0, -1)
    index = {j: i for i, j in enumerate(order)}
    abc_par = [-1 if j < 0 else (index[jparent[j]] if jparent[j] >= 0 else (0 if synthetic else -1))
               for j in order]
    bind_gl = np.stack([np.eye(4) if j < 0 else bind[j] for j in order])
    # ABC keys hold no scale: the nodes are the rigid part of the bind worlds, and whatever
    # scale a joint's world carries (``nonrigid``, constant over time in nearly every file)
    # is baked into its weight locations (inverse(m) @ vertex)
    bind_rigid = rigid(bind_gl)
    # as the file holds them (float32): the weights are placed by the matrices written
    bind_file = S4 @ bind_rigid @ S4
    if not legacy:
        bind_file = bind_file.astype(np.float32).astype(np.float64)
    return Skeleton(order=order, parents=abc_par, index=index, joint_up=jset_up,
                    bind_rigid=bind_rigid, nonrigid=np.linalg.inv(bind_rigid) @ bind_gl,
                    bind_file=bind_file, inv_bind_file=np.linalg.inv(bind_file))


def _abc_nodes(scene: Scene, sk: Skeleton) -> list[Node]:
    """The ABC nodes: names, and the flags and indices kept in the joints' extras."""
    n_children = [0] * len(sk.order)
    for p in sk.parents:
        if p >= 0:
            n_children[p] += 1
    out = []
    for i, j in enumerate(sk.order):
        src = scene.nodes[j] if j >= 0 else None
        name = (src.name if src is not None else "root") or f"node{i}"
        flags = integer(src.extras, "abc_flags", 0, 0, 0xFF) if src is not None else 1
        out.append(Node(name=name.encode("latin-1", "replace"),
                        index=integer(src.extras, "abc_index", i, 0, 0xFFFF) if src is not None else i,
                        flags=flags & 0xFF, matrix=sk.bind_file[i].astype("<f4"),
                        child_count=n_children[i]))
    return out


def _pieces(scene: Scene, sk: Skeleton, rest_world: np.ndarray, mesh_nodes: list[int],
            lod_nodes: dict[tuple[str, int], int], version: int, legacy: bool = False
            ) -> tuple[list[Piece], list[PieceSource], set[int]]:
    """Meshes -> pieces (LOD 0 from the default scene; LOD n from "<piece>_lod<n>" nodes of
    other scenes, as to_scene writes them), where each LOD 0 came from, and the LOD nodes used."""
    nodes = scene.nodes
    used_lod_nodes: set[int] = set()
    pieces: list[Piece] = []
    sources: list[PieceSource] = []
    for mi_node in mesh_nodes:
        nd = nodes[mi_node]
        mesh = mesh_of(scene, mi_node)
        for pi, prim in enumerate(mesh.primitives):
            if prim.mode != 4:
                warnings.warn(f"mesh {mesh.name!r}: primitive mode {prim.mode} is not triangles; "
                              "left out", LossWarning, stacklevel=4)
                continue
            parts = _uint16_parts(prim)
            lod0, kept = _prim_lod(scene, sk, rest_world, mi_node, parts[0], mesh.name, legacy)
            lods = [lod0]
            key = _piece_key(scene, mi_node)
            level = 1
            while len(parts) == 1 and isinstance(key, str) and (key, level) in lod_nodes:
                ln = lod_nodes[(key, level)]
                lmesh = mesh_of(scene, ln)
                if pi >= len(lmesh.primitives) or lmesh.primitives[pi].mode != 4 or \
                        len(lmesh.primitives[pi].positions) > 0xFFFF:
                    break
                lods.append(_prim_lod(scene, sk, rest_world, ln, lmesh.primitives[pi], lmesh.name,
                                      legacy)[0])
                used_lod_nodes.add(ln)
                level += 1
            mat = scene.materials[prim.material] if prim.material is not None else None
            pname = mesh.name or nd.name or f"piece{len(pieces)}"
            if len(mesh.primitives) > 1:
                pname = f"{pname}_{pi}"
            mex = mesh.extras or {}
            mat_index = integer(mex, "material_index", prim.material or 0, 0, 0xFFFF) \
                if len(mesh.primitives) == 1 else prim.material or 0
            lod_weight = number(mex, "lod_weight", 1.0, *FLOAT32) if version > 9 else None
            for k, part in enumerate(parts):
                if k > 0:
                    lod0, kept = _prim_lod(scene, sk, rest_world, mi_node, part, mesh.name, legacy)
                    lods = [lod0]
                pieces.append(Piece(
                    material_index=mat_index,
                    specular_power=number(mat.extras, "specular_power", 0.0, *FLOAT32) if mat else 0.0,
                    specular_scale=number(mat.extras, "specular_scale", 1.0, *FLOAT32) if mat else 1.0,
                    lod_weight=lod_weight,
                    name=(pname if len(parts) == 1 else f"{pname}_part{k}").encode("latin-1", "replace"),
                    lods=lods))
                sources.append(PieceSource(primitive=part, vertices=kept))
    return pieces, sources, used_lod_nodes


def _warn_left_out(scene: Scene, mesh_nodes: list[int], morph_targets_kept: bool) -> None:
    """One LossWarning naming what the meshes have and ABC has no place for."""
    lost = []
    for mi_node in mesh_nodes:
        for prim in mesh_of(scene, mi_node).primitives:
            if prim.targets and not morph_targets_kept:
                lost.append("morph targets")
            if len(prim.uvs) > 1:
                lost.append("UV sets after the first")
            if prim.colors is not None:
                lost.append("vertex colours")
    if lost:
        warnings.warn("ABC has no place for " + ", ".join(sorted(set(lost))) + "; left out",
                      LossWarning, stacklevel=4)


def _sockets(scene: Scene, sk: Skeleton, reach: set[int], rest_world: np.ndarray,
             legacy: bool = False) -> list[Socket]:
    """Nodes marked ``abc_socket`` that are no ABC node, on their nearest ABC node above."""
    sockets = []
    parents = scene.parents()
    for i in sorted(reach):
        nd = scene.nodes[i]
        if not nd.extras.get("abc_socket") or i in sk.index:
            continue
        anc = sk.joint_up[i]                      # i is no joint: its nearest joint above
        if anc < 0:
            continue
        if parents[i] == anc and not legacy and _unscaled(rest_world[anc]):
            # on an unscaled joint: the node's own transform (without the rounding of the products)
            t, q = np.asarray(nd.translation, np.float64), quat_normalize(nd.rotation)
        else:
            local = np.linalg.inv(rigid(rest_world[anc])) @ rest_world[i]
            t, q, _ = decompose_trs(local)
        sockets.append(Socket(node=sk.index[anc], name=nd.name.encode("latin-1", "replace"),
                              rotation=tuple(float(x) for x in (q * SQ).astype(np.float32)),
                              location=tuple(float(x) for x in (t * S3).astype(np.float32))))
    return sockets


def _unscaled(m: np.ndarray) -> bool:
    """Whether an affine matrix is a rotation and translation (within float32 rounding)."""
    b = m[:3, :3]
    return bool(np.all(np.abs(np.linalg.norm(b, axis=0) - 1.0) <= 1e-6) and np.linalg.det(b) > 0)


def _lod_distances(extras: dict, lod_count: int) -> list[float]:
    vals = numbers(extras.get("lod_distances"), lod_count, *FLOAT32)
    if vals is not None:
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
        keep = distinct(chunk)
        skinned = prim.joints is not None and prim.weights is not None
        parts.append(Primitive(positions=prim.positions[keep],
                               normals=None if prim.normals is None else prim.normals[keep],
                               uvs=[uv[keep] for uv in prim.uvs[:1]],
                               joints=prim.joints[keep] if skinned and prim.joints is not None
                               else None,
                               weights=prim.weights[keep] if skinned and prim.weights is not None
                               else None,
                               material=prim.material,
                               indices=np.searchsorted(keep, chunk.reshape(-1)).astype(np.uint32)))
        start += k
    return parts


def _prim_lod(scene: Scene, sk: Skeleton, rest_world: np.ndarray, node_index: int,
              prim: Primitive, mesh_name: str, legacy: bool = False) -> tuple[Lod, np.ndarray]:
    """One glTF primitive as an ABC LOD (vertices in model space, weights on ABC nodes), and
    for each ABC vertex the index of the primitive's vertex it was made from."""
    abc_index = sk.index
    nd = scene.nodes[node_index]
    skin = scene.skins[nd.skin] if nd.skin is not None else None
    follow = 0
    if skin is None:
        anc = sk.joint_up[node_index]
        follow = abc_index[anc] if anc >= 0 else 0
        # placed relative to where the followed node rests, moved to where it is bound
        place = sk.bind_rigid[follow] @ np.linalg.inv(rigid(rest_world[anc])) \
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
        normals = compute_normals(pos, idx).astype(np.float64)
    ln = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.where(ln > 1e-12, normals / np.where(ln > 1e-12, ln, 1.0), 0.0)
    fpos = pos * S3
    if skin is not None and prim.joints is not None and prim.weights is not None:  # (together)
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
    uv = prim.uvs[0] if prim.uvs else np.zeros((nv, 2), np.float32)
    corner_uv = uv[idx.reshape(-1, 3)]
    fpos, normals, jj, w, idx, kept = _merge_vertices(fpos, normals, jj, w, idx)
    nv = len(fpos)
    mask = w > 0
    owner = np.nonzero(mask)[0]
    wnode = jj[mask]
    if legacy:
        loc = np.einsum("nij,nj->ni", sk.inv_bind_file[wnode],
                        np.concatenate([fpos[owner], np.ones((len(owner), 1))], 1))[:, :3]
    else:
        loc = weight_locations(sk.inv_bind_file, wnode, fpos[owner])
    verts = np.zeros(nv, VERTEX)
    verts["weight_count"] = mask.sum(1)
    verts["location"] = fpos
    verts["normal"] = normals * S3
    sublod = xt.kept_sublod(scene.meshes[nd.mesh].extras if nd.mesh is not None else {}, nv,
                            mesh_name)
    if sublod is not None:
        verts["sublod"] = sublod
    weights = np.zeros(len(owner), WEIGHT)
    weights["node"] = wnode
    weights["location"] = loc
    weights["bias"] = w[mask]
    tri = idx.reshape(-1, 3)[:, [0, 2, 1]]
    faces = np.zeros(tri.shape, CORNER)
    faces["vertex"] = tri
    faces["uv"] = corner_uv[:, [0, 2, 1]]
    return Lod(faces=faces, vertices=verts, weights=weights), kept



def _row_groups(key: np.ndarray) -> np.ndarray:
    """A group number per row of ``key`` (float64), equal rows in one group (numbered in no
    particular order): rows grouped by a 64-bit hash of their bits (an integer sort, where
    ``np.unique(axis=0)`` sorts rows column by column), checked against the rows themselves;
    on a collision, grouped by ``np.unique``."""
    bits = np.ascontiguousarray(key).view(np.uint64)
    h = np.zeros(len(bits), np.uint64)
    with np.errstate(over="ignore"):
        for c in range(bits.shape[1]):
            h = (h ^ bits[:, c]) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(31)
    _, first, gid = np.unique(h, return_index=True, return_inverse=True)
    gid = gid.reshape(-1)
    if np.array_equal(bits, bits[first[gid]]):
        return gid
    return np.unique(key, axis=0, return_inverse=True)[1].reshape(-1)


def _merge_vertices(pos, normals, joints, weights, idx, tol: float = 2e-3):
    """glTF vertices that differ only in their UVs are one ABC vertex (ABC keeps UVs per face
    corner, and ``to_scene`` splits its vertices per distinct UV): vertices with equal location
    and influences and normals within ``tol`` (Blender writes each face corner's normal, a few
    1e-4 apart) are merged, in the order of their first use."""
    nv = len(pos)
    if nv < 2:
        return pos, normals, joints, weights, idx, np.arange(nv)
    order = np.argsort(-weights, 1, kind="stable")
    w = np.take_along_axis(weights, order, 1)
    j = np.where(w > 0, np.take_along_axis(joints, order, 1), 0)
    key = np.concatenate([pos, w, j.astype(np.float64)], 1) + 0.0   # -0.0 -> 0.0
    gid = _row_groups(key)
    srt = np.lexsort((normals[:, 2], normals[:, 1], normals[:, 0], gid))
    g_s, n_s = gid[srt], normals[srt]
    new = np.ones(nv, bool)
    new[1:] = (g_s[1:] != g_s[:-1]) | (np.abs(n_s[1:] - n_s[:-1]).max(1) > tol)
    cluster = np.empty(nv, np.int64)
    cluster[srt] = np.cumsum(new) - 1
    nc = int(new.sum())
    if nc == nv:
        return pos, normals, joints, weights, idx, np.arange(nv)
    first = np.full(nc, nv, np.int64)
    np.minimum.at(first, cluster, np.arange(nv))
    rank = np.empty(nc, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(nc)
    keep = np.sort(first)
    return pos[keep], normals[keep], joints[keep], weights[keep], rank[cluster][idx], keep


def _kept_key_times(kept, ms: np.ndarray, name: str) -> np.ndarray:
    """The file's key times from the extras when the glTF keys are among them (an unedited
    round trip); also when they look like an exporter's per-frame sampling of them (Blender's,
    :func:`per_frame`): the animation is then sampled at the file's times (warned). Otherwise the
    glTF key times."""
    if not isinstance(kept, list) or not kept or len(kept) > 1 << 20:
        return ms
    times = integers(kept, None, 0, 0xFFFFFFFF)
    if times is None:
        return ms
    kt = np.asarray(times, np.int64)
    if np.any(np.diff(kt) <= 0):
        return ms
    if isin(ms, kt).all():
        return kt
    if per_frame(ms, kt):
        warnings.warn(f"animation {name!r}: sampled at the {len(kt)} key times of the original "
                      f"file (the glTF has {len(ms)} other key times)", LossWarning, stacklevel=4)
        return kt
    return ms


#: an ABC animation holds a transform per node per key: each animation is sampled at
#: ``keys x nodes`` poses (about 1 us each). Raise the cap
#: (``retromesh.formats.lithtech.scene_write.LIMITS["node_keys"] = ...``) for a bigger job.
LIMITS = {"node_keys": 500_000}


def _animations_from_scene(scene: Scene, order: list[int], abc_par: list[int], version: int,
                           nonrigid: np.ndarray, legacy: bool = False):
    nodes = scene.nodes
    parents = scene.parents()
    n_all = len(nodes)
    t0 = np.stack([n.translation for n in nodes]) if n_all else np.zeros((0, 3))
    r0 = np.stack([n.rotation for n in nodes]) if n_all else np.zeros((0, 4))
    s0 = np.stack([n.scale for n in nodes]) if n_all else np.zeros((0, 3))
    dt = abcmod.TRANSFORM13 if version >= 13 else TRANSFORM
    out: list[abcmod.Animation] = []
    src_anims = scene.animations or [SAnimation(name="base")]
    scaled = False
    # each ABC node's glTF parent is its ABC parent (a root's: none, or still identities such
    # as an editor's armature object): its keys are its channels' values
    par_scene = [order[p] if p >= 0 else -1 for p in abc_par]
    animated = {c.node for a in src_anims for c in a.channels}
    direct = not legacy and bool(order) and all(
        j >= 0 and (parents[j] == q or (q < 0 and _still_above(nodes, parents, j, animated)))
        for j, q in zip(order, par_scene))
    for a in src_anims:
        chans = [c for c in a.channels if c.path != "weights"]
        if chans:
            allt = np.concatenate([c.times.astype(np.float64) for c in chans])
            ms = _sorted_unique(np.round(allt * 1000.0).astype(np.int64))
            ms = ms - min(int(ms[0]), 0)
            if int(ms[-1]) > 0xFFFFFFFF:
                raise DocumentError(f"animation {a.name!r} lasts {ms[-1] / 1000.0:g} s; ABC key "
                                    "times are uint32 milliseconds (at most about 49.7 days)")
        else:
            ms = np.zeros(1, np.int64)
        ex = xt.animation_extras(scene, a)
        ms = _kept_key_times(ex.get("key_times_ms"), ms, a.name)
        secs = ms / 1000.0
        k = len(ms)
        if k * max(n_all, 1) > LIMITS["node_keys"]:
            raise DocumentError(f"animation {a.name!r}: {k} keys of {n_all} nodes is more than "
                                f"LIMITS['node_keys'] = {LIMITS['node_keys']} poses "
                                "(retromesh.formats.lithtech.scene_write.LIMITS; raise it for a "
                                "bigger scene)")
        T = np.repeat(t0[None], k, 0)
        R = np.repeat(r0[None], k, 0)
        Sc = np.repeat(s0[None], k, 0)
        for c, vals in zip(chans, Channel.sample_many(chans, secs) if legacy
                           else _sampled(chans, secs, ms)):
            if c.path == "translation":
                T[:, c.node] = vals
            elif c.path == "rotation":
                R[:, c.node] = vals
            else:
                Sc[:, c.node] = vals
        tr = np.zeros((len(order), k), dt)
        if direct:
            t, q = _direct_keys(T, R, Sc, order)
        else:
            t, q = None, None
        if t is not None and q is not None:
            scaled |= bool(np.any(np.abs(nonrigid - np.eye(4)) > 1e-3 * (1.0 + np.abs(nonrigid))))
        else:
            t, q, bad_scale = _world_keys(T, R, Sc, parents, order, abc_par, nonrigid)
            scaled |= bad_scale
        tr["location"] = np.transpose(t, (1, 0, 2))
        tr["rotation"] = np.transpose(quat_normalize(q), (1, 0, 2))
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
            unknown=integer(ex, "unknown", -1, -2**31, 2**31 - 1),
            interpolation_ms=integer(ex, "interpolation_ms", 200, 0, 2**32 - 1)
            if version >= 12 else None,
            key_times=as_dtype(ms, "<u4", f"animations[{len(out)}].key_times"),
            key_strings=strings,
            extents=tuple(numbers(ex.get("extents"), 3, *FLOAT32) or ()) or None,
            markers=np.full(len(order), -1, "<i4") if version >= 13 else None, transforms=tr))
    if scaled:
        warnings.warn("ABC keyframes hold no scale: joint scale that differs from the bind "
                      "pose's (baked into the weights) was dropped", LossWarning, stacklevel=3)
    return out




def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-D integer array (which, called so, imports ``numpy.ma``: 6 ms of a
    command line's start)."""
    s = np.sort(a)
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def _still_above(nodes: list, parents: list[int], j: int, animated: set[int]) -> bool:
    """Whether every node above ``j`` is a still identity (within float32 rounding)."""
    p = parents[j]
    while p >= 0:
        nd = nodes[p]
        if p in animated or np.abs(np.asarray(nd.translation)).max() > 1e-6 or \
                np.abs(np.asarray(nd.scale) - 1.0).max() > 1e-6 or \
                np.abs(np.abs(np.asarray(nd.rotation)) - (0.0, 0.0, 0.0, 1.0)).max() > 1e-6:
            return False
        p = parents[p]
    return True


def _sampled(chans: list[Channel], secs: np.ndarray, ms: np.ndarray) -> list[np.ndarray]:
    """Each channel's values at ``secs``: its own values when its keys are those times (an
    unedited or key-edited animation; interpolating there would move a value by the rounding
    of its time to float32), else sampled (the others, in one pass)."""
    out: list[np.ndarray | None] = [None] * len(chans)
    on_keys: dict[bytes, bool] = {}             # (channels share their key times)
    rest = []
    for n, c in enumerate(chans):
        key = c.times.tobytes()
        hit = on_keys.get(key)
        if hit is None:
            hit = on_keys[key] = len(c.times) == len(ms) and \
                np.array_equal(np.round(c.times.astype(np.float64) * 1000.0), ms)
        if hit and c.interpolation != "CUBICSPLINE":
            out[n] = c.values.astype(np.float64)
        else:
            rest.append(n)
    for n, v in zip(rest, Channel.sample_many([chans[n] for n in rest], secs) if rest else ()):
        out[n] = v
    return out  # type: ignore[return-value]


def _direct_keys(T: np.ndarray, R: np.ndarray, Sc: np.ndarray, order: list[int]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The keys (file space, (keys, nodes, 3|4)) of a skeleton whose nodes hang on their ABC
    parents in the glTF too, read off the channels when nothing is scaled (then
    ``inverse(parent world) @ world`` is the node's own transform, without the rounding of the
    matrix products); (None, None) when something is scaled."""
    if np.any(np.abs(Sc[:, order] - 1.0) > 1e-6):
        return None, None
    return T[:, order] * S3, R[:, order] * SQ


def _world_keys(T: np.ndarray, R: np.ndarray, Sc: np.ndarray, parents: list[int], order: list[int],
                abc_par: list[int], nonrigid: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The keys (file space) as ``inverse(parent world) @ world`` of the rigid parts of the
    animated world matrices of the whole glTF hierarchy, and whether a joint's scale differs
    from the one baked into the weights."""
    k = len(T)
    world = world_matrices(compose_trs(T, R, Sc), parents) if len(parents) else np.zeros((k, 0, 4, 4))
    Wfull = np.stack([np.broadcast_to(np.eye(4), (k, 4, 4)) if j < 0 else world[:, j]
                      for j in order], 1)                               # (k, nn, 4, 4)
    W = rigid(Wfull)
    # the scale part baked into the weights must be the one the animation has
    scaled = bool(np.any(np.abs(np.linalg.inv(W) @ Wfull - nonrigid[None])
                         > 1e-3 * (1.0 + np.abs(nonrigid[None]))))
    P = np.stack([np.broadcast_to(np.eye(4), (k, 4, 4)) if p < 0 else W[:, p]
                  for p in abc_par], 1)
    t, q, _ = decompose_trs(S4 @ (np.linalg.inv(P) @ W) @ S4)
    return t, q, scaled
