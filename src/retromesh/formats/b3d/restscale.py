"""Bones whose NODE has a scale, back from Blender (issue 32).

A B3D bone may have a rest scale (``mobs_cow``'s spine: 3.77; ``mobs_panda``, ``mobs_penguin``).
Blender's bones have none: its glTF importer builds the armature's rest from the nodes without
their scale (each child keeps its own local translation), puts the scale on the pose, and
skins the mesh into that rest: a vertex ``v`` of the file comes in as
``v' = sum_j w_j J_j v`` with ``J_j = B_j . F_j^-1`` (``B_j`` the joint's world matrix in
Blender's rest, ``F_j`` in the file's). Its exporter then writes Blender's rest: the scale is
gone from the nodes, the vertices are ``v'`` and the inverse bind matrices Blender's.

:func:`restore_rest_scale` undoes that, for a scene Blender wrote, where a node's record
(``node.extras["b3d"]["trs"]``, :mod:`.exact`; kept for every node with a scale) says the file
had a scale the node no longer has while its translation and rotation are still what we wrote:
the node gets the file's scale back, each skinned vertex ``v = (sum_j w_j J_j)^-1 v'``
(normals by the transpose), and the skin the file's inverse bind matrices. The writer then
finds every value where :mod:`.exact` and :mod:`.original` look for it.
"""
from __future__ import annotations

import copy

import numpy as np

from ...extras import BLENDER_MARK
from ...scene import Scene
from ...transforms import inverse
from .exact import BLENDER_TOLERANCE, recorded_gltf_trs

__all__ = ["restore_rest_scale"]


def _dropped_scales(scene: Scene) -> dict[int, np.ndarray]:
    """Node index -> the file's scale, for nodes whose scale Blender dropped."""
    tol = BLENDER_TOLERANCE["trs"]
    out: dict[int, np.ndarray] = {}
    for i, node in enumerate(scene.nodes):
        native = node.extras.get("b3d")
        if not isinstance(native, dict) or "trs" not in native:
            continue
        rec = recorded_gltf_trs(native)
        if rec is None:
            continue
        t, r, s = (np.asarray(v, np.float64) for v in rec)
        if np.all(np.abs(s - 1.0) <= tol) or not np.all(np.abs(node.scale - 1.0) <= tol):
            continue
        lim = tol * np.maximum(1.0, np.abs(t))
        same_r = np.all(np.abs(node.rotation - r) <= tol) or np.all(np.abs(node.rotation + r) <= tol)
        if np.all(np.abs(node.translation - t) <= lim) and same_r:
            out[i] = s
    return out


def _unskin(p, joints_b: np.ndarray, joints_f: np.ndarray, mesh_b: np.ndarray,
            mesh_f: np.ndarray):
    """Primitive ``p`` with its vertices taken from Blender's rest to the file's (see the
    module docstring); ``joints_b``/``joints_f`` the skin's joints' world matrices in each."""
    if p.joints is None or p.weights is None or not len(p.positions):
        return p
    # J_j in mesh space, then per vertex the blend of its joints' J (n, 4, 4)
    jm = inverse(mesh_b) @ joints_b @ inverse(joints_f) @ mesh_f
    j = np.clip(p.joints.astype(np.int64), 0, len(jm) - 1)
    w = p.weights.astype(np.float64)
    total = w.sum(axis=1)
    w = np.where(total[:, None] > 0, w / np.where(total > 0, total, 1.0)[:, None], 0.0)
    blend = np.einsum("nk,nkij->nij", w, jm[j])
    blend[total <= 0] = np.eye(4)
    a = blend[:, :3, :3]
    good = np.abs(np.linalg.det(a)) > 1e-12
    a[~good] = np.eye(3)
    inv_a = np.linalg.inv(a)
    pts = p.positions.astype(np.float64) - blend[:, :3, 3]
    q = copy.copy(p)
    q.positions = np.einsum("nij,nj->ni", inv_a, pts).astype(p.positions.dtype)
    if p.normals is not None:
        nrm = np.einsum("nji,nj->ni", a, p.normals.astype(np.float64))   # A^T n'
        length = np.linalg.norm(nrm, axis=1, keepdims=True)
        nrm = np.where(length > 1e-12, nrm / np.where(length > 1e-12, length, 1.0), p.normals)
        q.normals = nrm.astype(p.normals.dtype)
    return q


def restore_rest_scale(scene: Scene) -> Scene:
    """The scene with the rest scales Blender dropped put back (module docstring); the same
    scene when it did not come through Blender or no node lost its scale."""
    if not scene.extras.get(BLENDER_MARK) or not scene.nodes:
        return scene
    dropped = _dropped_scales(scene)
    if not dropped:
        return scene
    out = copy.copy(scene)
    out.nodes = list(scene.nodes)
    for i, s in dropped.items():
        out.nodes[i] = copy.copy(scene.nodes[i])
        out.nodes[i].scale = s.copy()
    before, after = scene.world_matrices(), out.world_matrices()
    out.meshes = list(scene.meshes)
    out.skins = list(scene.skins)
    done: set[int] = set()
    for ni, node in enumerate(scene.nodes):
        if node.skin is None or node.mesh is None or node.mesh in done:
            continue
        done.add(node.mesh)
        skin = scene.skins[node.skin]
        js = list(skin.joints)
        if np.allclose(before[js], after[js], rtol=0, atol=1e-9) and \
                np.allclose(before[ni], after[ni], rtol=0, atol=1e-9):
            continue
        m = copy.copy(scene.meshes[node.mesh])
        m.primitives = [_unskin(p, before[js], after[js], before[ni], after[ni])
                        for p in m.primitives]
        out.meshes[node.mesh] = m
        sk = copy.copy(skin)
        sk.inverse_bind_matrices = inverse(after[js]) @ after[ni]
        out.skins[node.skin] = sk
    return out
