"""Overgrowth skeleton maths shared by both directions of the scene mapping (engine facts in
:mod:`.scene`): ``GetBoneMat`` bone frames, Catmull-Rom weights, column-major matrix packing,
bone hierarchy depth/order checks and the checked bind pose of a ``.phxbn``."""
from __future__ import annotations

import numpy as np

from ...errors import DocumentError
from .phxbn import PhxbnFile

__all__ = ["bone_frames", "catmull_rom_weights", "unpack_mats", "pack_mats", "rot_y", "depths",
           "check_parents", "depth_order", "skeleton_bind", "safe_inv"]


def bone_frames(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``GetBoneMat`` for stacks of bone ends: (m, 4, 4) column-vector matrices."""
    a = np.asarray(starts, dtype=np.float64)
    b = np.asarray(ends, dtype=np.float64)
    d = b - a
    ln = np.linalg.norm(d, axis=-1, keepdims=True)
    dirv = np.where(ln > 1e-12, d / np.where(ln > 1e-12, ln, 1.0), np.array([0.0, 1.0, 0.0]))
    up = np.broadcast_to(np.array([0.0, 0.0, 1.0]), dirv.shape).copy()
    flip = np.abs(dirv[..., 2]) > 0.95
    up[flip] = (1.0, 0.0, 0.0)
    right = np.cross(up, dirv)
    right /= np.linalg.norm(right, axis=-1, keepdims=True)
    up = np.cross(dirv, right)
    up /= np.linalg.norm(up, axis=-1, keepdims=True)
    m = np.zeros(a.shape[:-1] + (4, 4))
    m[..., :3, 0] = right
    m[..., :3, 1] = up
    m[..., :3, 2] = dirv
    m[..., :3, 3] = (a + b) / 2
    m[..., 3, 3] = 1.0
    return m


def catmull_rom_weights(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    t2, t3 = t * t, t * t * t
    return np.stack([0.5 * (-t3 + 2 * t2 - t), 0.5 * (3 * t3 - 5 * t2 + 2),
                     0.5 * (-3 * t3 + 4 * t2 + t), 0.5 * (t3 - t2)], axis=-1)


def unpack_mats(flat: np.ndarray) -> np.ndarray:
    """(..., 16) column-major floats -> (..., 4, 4) column-vector matrices."""
    a = np.asarray(flat, dtype=np.float64)
    return np.swapaxes(a.reshape(a.shape[:-1] + (4, 4)), -1, -2)


def pack_mats(m: np.ndarray) -> np.ndarray:
    return np.swapaxes(np.asarray(m), -1, -2).reshape(np.shape(m)[:-2] + (16,)).astype("<f4")


def rot_y(theta: np.ndarray) -> np.ndarray:
    h = np.asarray(theta, dtype=np.float64) / 2
    return np.stack([np.zeros_like(h), np.sin(h), np.zeros_like(h), np.cos(h)], axis=-1)


def depths(parents: np.ndarray) -> np.ndarray:
    """Depth of every bone (roots 0) by binary lifting: O(m log m) whatever the hierarchy's
    shape; a cycle raises DocumentError."""
    p = np.asarray(parents, dtype=np.int64)
    m = len(p)
    up = [p]
    for _ in range(max(1, m.bit_length())):
        prev = up[-1]
        up.append(np.where(prev >= 0, prev[np.maximum(prev, 0)], -1))
    if m and np.any(up[-1] >= 0):           # an ancestor 2**K > m steps up: a cycle
        i = int(np.argmax(up[-1] >= 0))
        raise DocumentError(f"the bone hierarchy has a cycle through bone {i}")
    depth = np.zeros(m, np.int64)
    cur = np.arange(m)
    for k in range(len(up) - 2, -1, -1):
        nxt = up[k][cur]
        move = nxt >= 0
        depth[move] += 1 << k
        cur = np.where(move, nxt, cur)
    return depth


def check_parents(parents: np.ndarray, m: int) -> np.ndarray:
    p = np.asarray(parents, dtype=np.int64)
    if len(p) != m:
        raise DocumentError(f"{len(p)} parents for {m} bones")
    if m and (p.min() < -1 or p.max() >= m):
        raise DocumentError(f"bone parents must be -1 or 0..{m - 1}")
    depths(p)
    return p


def depth_order(parents: np.ndarray) -> list[int]:
    """Bones sorted so that every parent comes before its children."""
    return np.argsort(depths(parents), kind="stable").tolist()


def skeleton_bind(doc: PhxbnFile) -> tuple[np.ndarray, np.ndarray]:
    """(bind world matrices (m, 4, 4), parents (m,)) of a skeleton, checked."""
    pts = np.asarray(doc.points, dtype=np.float64).reshape(-1, 3)
    ends = np.asarray(doc.bone_ends, dtype=np.int64).reshape(-1, 2)
    m = len(ends)
    if m and (ends.min() < 0 or ends.max() >= len(pts)):
        raise DocumentError(f"bone ends must refer to points 0..{len(pts) - 1}")
    if not np.all(np.isfinite(pts)):
        raise DocumentError("skeleton points must be finite")
    bind = bone_frames(pts[ends[:, 0]], pts[ends[:, 1]]) if m else np.zeros((0, 4, 4))
    return bind, check_parents(doc.parents(), m)


def safe_inv(m: np.ndarray) -> np.ndarray:
    out = np.tile(np.eye(4), (len(m), 1, 1))
    det = np.linalg.det(m)
    ok = np.isfinite(det) & (np.abs(det) > 1e-12)
    out[ok] = np.linalg.inv(m[ok])
    return out
