"""Vectorised transform maths in glTF conventions.

Quaternions are ``(..., 4)`` arrays ordered ``x, y, z, w`` (Hamilton product); matrices are
``(..., 4, 4)`` arrays in column-vector form (``p' = M @ p``, translation in ``M[:3, 3]``).
Everything works on stacks so that a whole track of keys is one call.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "quat_normalize", "quat_multiply", "quat_conjugate", "quat_to_matrix", "matrix_to_quat",
    "quat_rotate", "quat_slerp", "quat_continuous", "quat_continuous_tracks", "compose_trs", "decompose_trs",
    "identity", "translation_matrix", "inverse", "world_matrices",
]


def identity(n: int | None = None) -> np.ndarray:
    return np.eye(4) if n is None else np.tile(np.eye(4), (n, 1, 1))


def quat_normalize(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    out = np.where(n > 1e-12, q / np.where(n > 1e-12, n, 1.0), np.array([0.0, 0.0, 0.0, 1.0]))
    return out


def quat_conjugate(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` first, then ``a``)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ], axis=-1)


def quat_rotate(q, v) -> np.ndarray:
    """Rotate vectors ``v`` (..., 3) by quaternions ``q`` (..., 4)."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrices (..., 3, 3) from unit quaternions."""
    q = quat_normalize(q)
    if q.size <= 512:
        # a few quaternions (a skeleton's bones): every product q_i * q_j at once, then the
        # nine entries below with a - b as a + (-1 * b) (the same bits): a dozen numpy calls,
        # not 30 (the gathers cost more than the calls from about 150 quaternions on)
        products = (q[..., :, None] * q[..., None, :]).reshape(q.shape[:-1] + (16,))
        two = 2 * (products[..., _Q2M_A] + products[..., _Q2M_B] * _Q2M_SIGN)
        return np.where(_Q2M_DIAGONAL, 1 - two, two).reshape(q.shape[:-1] + (3, 3))
    x, y, z, w = np.moveaxis(q, -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack([
        1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
        2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
        2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
    ], axis=-1)
    return m.reshape(q.shape[:-1] + (3, 3))


# quat_to_matrix's entries: products a and b (index i * 4 + j of q_i * q_j, x y z w = 0 1 2 3),
# the sign of b, and which entries are 1 - 2 (a + b)
_Q2M_A = np.array([5, 1, 2, 1, 0, 6, 2, 6, 0])          # yy xy xz xy xx yz xz yz xx
_Q2M_B = np.array([10, 14, 13, 14, 10, 12, 13, 12, 5])  # zz wz wy wz zz wx wy wx yy
_Q2M_SIGN = np.array([1.0, -1.0, 1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0])
_Q2M_DIAGONAL = np.array([True, False, False, False, True, False, False, False, True])


def matrix_to_quat(m) -> np.ndarray:
    """Unit quaternions from rotation matrices (..., 3, 3) (any extra scale must be removed)."""
    m = np.asarray(m, dtype=np.float64)[..., :3, :3]
    shape = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    q = np.empty((m.shape[0], 4))
    tr = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    c0 = tr > 0
    c1 = ~c0 & (m[:, 0, 0] >= m[:, 1, 1]) & (m[:, 0, 0] >= m[:, 2, 2])
    c2 = ~c0 & ~c1 & (m[:, 1, 1] >= m[:, 2, 2])
    c3 = ~c0 & ~c1 & ~c2
    # a case no matrix falls in is skipped (a handful of bones: most of the cost was those)
    with np.errstate(invalid="ignore", divide="ignore"):
        if c0.any():
            s = np.sqrt(np.maximum(tr[c0] + 1.0, 1e-300)) * 2
            mm = m[c0]
            q[c0] = np.stack([(mm[:, 2, 1] - mm[:, 1, 2]) / s, (mm[:, 0, 2] - mm[:, 2, 0]) / s,
                              (mm[:, 1, 0] - mm[:, 0, 1]) / s, 0.25 * s], -1)
        if c1.any():
            mm = m[c1]
            s = np.sqrt(np.maximum(1.0 + mm[:, 0, 0] - mm[:, 1, 1] - mm[:, 2, 2], 1e-300)) * 2
            q[c1] = np.stack([0.25 * s, (mm[:, 0, 1] + mm[:, 1, 0]) / s,
                              (mm[:, 0, 2] + mm[:, 2, 0]) / s, (mm[:, 2, 1] - mm[:, 1, 2]) / s], -1)
        if c2.any():
            mm = m[c2]
            s = np.sqrt(np.maximum(1.0 + mm[:, 1, 1] - mm[:, 0, 0] - mm[:, 2, 2], 1e-300)) * 2
            q[c2] = np.stack([(mm[:, 0, 1] + mm[:, 1, 0]) / s, 0.25 * s,
                              (mm[:, 1, 2] + mm[:, 2, 1]) / s, (mm[:, 0, 2] - mm[:, 2, 0]) / s], -1)
        if c3.any():
            mm = m[c3]
            s = np.sqrt(np.maximum(1.0 + mm[:, 2, 2] - mm[:, 0, 0] - mm[:, 1, 1], 1e-300)) * 2
            q[c3] = np.stack([(mm[:, 0, 2] + mm[:, 2, 0]) / s, (mm[:, 1, 2] + mm[:, 2, 1]) / s,
                              0.25 * s, (mm[:, 1, 0] - mm[:, 0, 1]) / s], -1)
    q = quat_normalize(q)
    q = np.where(q[:, 3:4] < 0, -q, q)
    return q.reshape(shape + (4,))


def quat_continuous(q) -> np.ndarray:
    """Flip signs along a track so that neighbouring keys take the short way round."""
    q = np.array(q, dtype=np.float64, copy=True)
    if len(q) < 2:
        return q
    d = np.einsum("ij,ij->i", q[1:], q[:-1])
    flips = np.cumprod(np.where(d < 0, -1.0, 1.0))
    q[1:] *= flips[:, None]
    return q


def quat_continuous_tracks(q, cuts) -> np.ndarray:
    """:func:`quat_continuous` of each track ``q[cuts[k]:cuts[k + 1]]`` (none empty) of a
    stack of tracks: the same values, in one numpy pass (per track, numpy's call overhead was
    most of the cost)."""
    q = np.array(q, dtype=np.float64, copy=True)
    if len(q) < 2:
        return q
    starts_all = np.asarray(cuts, np.int64)[:-1]
    d = np.einsum("ij,ij->i", q[1:], q[:-1])
    neg = (d < 0).astype(np.int64)
    neg[starts_all[1:] - 1] = 0                 # no flip across tracks
    count = np.r_[0, np.cumsum(neg)]            # flips up to each key; restart at each track
    first = np.zeros(len(q), np.int64)
    first[starts_all] = 1
    flips = count - count[starts_all][np.cumsum(first) - 1]
    q[flips % 2 == 1] *= -1.0
    return q


def quat_slerp(a, b, t) -> np.ndarray:
    """Spherical interpolation (shortest path) between stacks of quaternions."""
    a = quat_normalize(a)
    b = quat_normalize(b)
    t = np.asarray(t, dtype=np.float64)[..., None]
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    sin = np.sin(theta)
    small = sin < 1e-6
    safe = np.where(small, 1.0, sin)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(small, t, np.sin(t * theta) / safe)
    return quat_normalize(wa * a + wb * b)


def translation_matrix(t) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., 0, 0] = m[..., 1, 1] = m[..., 2, 2] = m[..., 3, 3] = 1.0
    m[..., :3, 3] = t
    return m


def compose_trs(t, r, s) -> np.ndarray:
    """``T @ R @ S`` matrices from translations, xyzw quaternions and scales."""
    t = np.asarray(t, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    rot = quat_to_matrix(r)
    shape = np.broadcast_shapes(t.shape[:-1], s.shape[:-1], rot.shape[:-2])
    m = np.zeros(shape + (4, 4))
    m[..., :3, :3] = rot * s[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def decompose_trs(m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split affine matrices into translation, xyzw rotation and (positive or mirrored) scale.

    A mirroring matrix gets a negative X scale so that the rotation stays proper.
    """
    m = np.asarray(m, dtype=np.float64)
    t = m[..., :3, 3].copy()
    basis = m[..., :3, :3]
    s = np.linalg.norm(basis, axis=-2)
    det = np.linalg.det(basis)
    s[..., 0] = np.where(det < 0, -s[..., 0], s[..., 0])
    safe = np.where(np.abs(s) > 1e-12, s, 1.0)
    r = matrix_to_quat(basis / safe[..., None, :])
    return t, r, s


def inverse(m) -> np.ndarray:
    return np.linalg.inv(np.asarray(m, dtype=np.float64))


def world_matrices(local: np.ndarray, parents: list[int] | np.ndarray) -> np.ndarray:
    """World matrices from local ones and parent indices (-1 = root), parents in any order.

    ``local`` is ``(n, 4, 4)`` or ``(k, n, 4, 4)`` (a stack of poses).
    """
    local = np.asarray(local, dtype=np.float64)
    n = local.shape[-3]
    parents = [int(p) for p in parents]
    world = np.empty_like(local)
    done = [False] * n
    # one pose: node k's matrix is [k] (the same 4x4 views as [..., k, :, :], indexed faster)
    w, loc = (world, local) if local.ndim == 3 else \
        (np.moveaxis(world, -3, 0), np.moveaxis(local, -3, 0))
    for i in range(n):
        chain = []
        j = i
        while j >= 0 and not done[j]:
            chain.append(j)
            j = parents[j]
            if len(chain) > n:
                raise ValueError("cycle in the parent indices")
        for k in reversed(chain):
            p = parents[k]
            w[k] = loc[k] if p < 0 else w[p] @ loc[k]
            done[k] = True
    return world
