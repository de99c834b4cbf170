"""The byte-exact record of a v6 ``.abc`` (scene extra ``abc_v6_blocks``; issue 32,
docs/lossless.md "LithTech").

The v6 writer (:mod:`.scene_write_v6`) runs the v9..v13 writer for the skeleton, the vertices
and the keys, then lays them out the v6 way (:func:`.scene_write_v6.lay_out`). For a model
``to_scene`` has just read, what the v9..v13 writer will make of the GLB is known without
running it: the nodes in file order with the bind matrices it makes from the inverse bind
matrices, each file vertex (in file order, on its own node) placed by them, the keys read off
the channels at the file's key times (the formulas of :mod:`.exact`, which predicts the same
writer for v9..v13). :func:`keep` makes that model, runs the writer's v6 steps on it, and keeps
the blocks of the file the bytes written do not give (:func:`retromesh.restore.keep_bytes`, the
encoding of the whole-file record ``abc_exact``, against the writer of today: hence a key of
its own). ``from_scene`` writes the model and puts the blocks back where it wrote the same.

:func:`keep` returns None where the v9..v13 writer would lay the model out otherwise than
predicted (several node trees, a vertex no face uses or two alike, keys ``to_scene`` drops,
nameless nodes or animations...): ``scene.py`` then keeps the whole-file record as before.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import geometry, restore
from ...arrays import distinct
from ...extras import integer
from ...scene import Scene
from ...transforms import quat_normalize
from .abc import TRANSFORM, AbcModel, Animation, AnimationSection, Node, NodesSection
from .abc_v6 import TOKEN, AbcV6Model, write
from .scene_common import S3, S4, SQ, rigid, tree_parents, weight_locations
from .scene_write import PieceSource
from .scene_write_v6 import Frame, Part, lay_out

__all__ = ["KEY", "keep", "predicted"]

#: the scene extra of the record
KEY = "abc_v6_blocks"


def keep(scene: Scene, doc: AbcV6Model) -> dict[str, Any] | None:
    """The record of ``doc`` (read as ``scene`` in its own terms; empty when the writer gives
    the file back as it is); None when the writer's model cannot be predicted."""
    made = predicted(scene, doc)
    if made is None:
        return None
    was = write(doc)
    back = write(made)
    if was == back:
        return {}
    return restore.keep_bytes(was, back)


def predicted(scene: Scene, doc: AbcV6Model) -> AbcV6Model | None:
    """The model the v6 writer writes from the GLB of ``scene`` (None: not predictable)."""
    nodes, geo, hd = doc.nodes, doc.geometry, doc.header
    n = len(nodes)
    parents, missing = tree_parents([nd.child_count for nd in nodes])
    ex = scene.extras or {}
    if not 0 < n <= 256 or missing or parents.count(-1) != 1 or geo is None or hd is None or \
            hd.token != TOKEN or len(scene.skins) != 1 or \
            len(scene.nodes) != n + 1 or \
            len(scene.animations) != len(doc.animations) or not doc.animations or \
            any(not nd.name for nd in nodes) or integer(ex, "abc_version", None, 0, 99) != 6:
        return None
    mi = scene.nodes[n].mesh
    if mi is None or len(scene.meshes[mi].primitives) != 1:
        return None
    prim = scene.meshes[mi].primitives[0]
    nvc = int(geo.normal_vertex_count)
    faces = np.asarray(geo.faces)
    verts = np.asarray(geo.vertices)
    if not len(faces) or nvc > len(verts) or nvc > 0xFFFF:
        return None
    fv = faces["vertex"].reshape(-1).astype(np.int64)
    # every full-detail vertex a face uses, each its own glTF vertex group (none alike: the
    # writer merges vertices alike but for their UVs)
    used = np.zeros(nvc, bool)
    if fv.max() >= nvc:
        return None
    used[fv] = True
    if not used.all():
        return None
    pos = prim.positions.astype(np.float64)
    first = np.full(nvc, len(pos), np.int64)
    src = _sources(prim, nvc, fv)
    if src is None:
        return None
    np.minimum.at(first, src, np.arange(len(src)))
    vnode = verts["node"][:nvc].astype(np.int64)
    fpos = pos[first] * S3
    key = np.ascontiguousarray(np.column_stack([(fpos + 0.0).astype(np.float32).view(np.uint32),
                                                vnode.astype(np.uint32)]))
    if len(distinct(key.view(np.dtype((np.void, 16))))) != nvc:
        return None
    m12 = _m12(scene, doc, parents)
    if m12 is None:
        return None
    mats = np.stack([np.asarray(nd.matrix, np.float64) for nd in m12.nodes])
    fr = Frame(flip=bool(integer(ex, "flip_mat", 1, 0, 1)),
               fix=bool(integer(ex, "fix_anim_keyframes", 1, 0, 1)), mats=mats)
    normals = _normals(prim, first)
    if normals is None:
        return None
    local = weight_locations(np.linalg.inv(mats), vnode, fpos).astype(np.float32)
    part = Part(node=vnode, local=local.astype(np.float64),
                normal=np.einsum("nji,nj->ni", fr.rot[vnode], normals),
                model=fpos, faces=faces, base=0,
                source=PieceSource(primitive=prim, vertices=first))
    return lay_out(scene, m12, [part], fr)


def _sources(prim, nvc: int, fv: np.ndarray) -> np.ndarray | None:
    """The file vertex of each glTF vertex (from the faces: the glTF corners are the file's,
    in their order or turned over)."""
    idx = np.asarray(prim.indices).astype(np.int64) if prim.indices is not None else None
    if idx is None or len(idx) != len(fv):
        return None
    src = np.full(len(prim.positions), -1, np.int64)
    tri = idx.reshape(-1, 3)
    ft = fv.reshape(-1, 3)
    src[tri.reshape(-1)] = ft.reshape(-1)
    if (src < 0).any():
        return None
    if not np.array_equal(src[tri], ft):
        src[tri[:, [0, 2, 1]].reshape(-1)] = ft.reshape(-1)
        if not np.array_equal(src[tri[:, [0, 2, 1]]], ft):
            return None
    return src


def _normals(prim, first: np.ndarray) -> np.ndarray | None:
    """The v12 writer's vertex normals (file axes, float32) of the file vertices, as it makes
    them from the unit normals the GLB holds."""
    if prim.normals is None:
        return None
    held = geometry.unit_rows(prim.normals)
    if np.einsum("ij,ij->i", prim.normals, prim.normals).min(initial=1.0) < 1e-24:
        return None
    nrm = held.astype(np.float64)
    ln = np.linalg.norm(nrm, axis=1, keepdims=True)
    nrm = np.where(ln > 1e-12, nrm / np.where(ln > 1e-12, ln, 1.0), 0.0)
    return (nrm[first] * S3).astype(np.float32).astype(np.float64)


def _m12(scene: Scene, doc: AbcV6Model, parents: list[int]) -> AbcModel | None:
    """The v9..v13 writer's nodes (file order, bind matrices from the GLB's inverse binds)
    and animations (keys off the channels at the file's key times)."""
    n = len(doc.nodes)
    ibm = scene.skins[0].inverse_bind_matrices
    if ibm is None or len(ibm) != n:
        return None
    ibm64 = np.asarray(ibm, np.float32).astype(np.float64)
    binds = (S4 @ rigid(np.linalg.inv(ibm64)) @ S4).astype(np.float32)
    kids = np.bincount([p for p in parents if p >= 0], minlength=n)
    m_nodes = [Node(name=nd.name, index=int(nd.index), flags=int(nd.flags), matrix=binds[j],
                    child_count=int(kids[j])) for j, nd in enumerate(doc.nodes)]
    anims = []
    rots: list[np.ndarray] = []
    for a, sa in zip(doc.animations, scene.animations):
        ms = np.asarray(a.keys["time"]).astype(np.int64)
        if not a.name or not len(ms) or (len(ms) > 1 and np.any(np.diff(ms) <= 0)):
            return None
        tch = [c for c in sa.channels if c.path == "translation"]
        rch = [c for c in sa.channels if c.path == "rotation"]
        if len(tch) != n or len(rch) != n or len(sa.channels) > 2 * n + 1 or \
                [c.node for c in tch] != list(range(n)) or [c.node for c in rch] != list(range(n)):
            return None
        chans = tch + rch
        times = np.stack([c.times for c in chans]) if all(len(c.times) == len(ms) for c in chans) \
            else None
        if times is None or not np.array_equal(np.round(times.astype(np.float64) * 1000.0),
                                                np.broadcast_to(ms, times.shape)) or \
                any(c.interpolation == "CUBICSPLINE" for c in chans):
            return None
        tr = np.zeros((n, len(ms)), TRANSFORM)
        tr["location"] = np.stack([c.values for c in tch]).astype(np.float64) * S3
        rots += [c.values for c in rch]
        anims.append(Animation(name=a.name, key_times=ms.astype("<u4"),
                               key_strings=list(a.key_strings), transforms=tr))
    # every animation's rotations in one pass (row by row: the writer's values)
    r = quat_normalize(geometry.unit_rows(np.concatenate(rots), fallback=(0.0, 0.0, 0.0, 1.0))
                       .astype(np.float64) * SQ)
    at = 0
    for an in anims:
        size = an.transforms.size
        an.transforms["rotation"] = r[at:at + size].reshape(*an.transforms.shape, 4)
        at += size
    return AbcModel(sections=[NodesSection(nodes=m_nodes), AnimationSection(animations=anims)])
