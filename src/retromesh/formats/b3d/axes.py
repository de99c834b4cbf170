"""Blitz3D's left-handed axes and ``w, x, y, z`` quaternions <-> glTF (shared by both directions).

The mapping is the inverse of Luanti's glTF loader (minetest/luanti ``irr/src/
CGLTFMeshFileLoader.cpp``: ``convertHandedness`` negates Z of positions and normals, node
transforms become ``rightToLeft * M * leftToRight`` with both = ``diag(1, 1, -1, 1)``, index
order reversed) applied to what Irrlicht's B3D loader builds (``CB3DMeshFileLoader::
readChunkNODE``: ``LocalMatrix = T * getMatrix_transposed(quaternion(x, y, z, w)) * S``,
vertices as stored). So a converted model sits in Luanti exactly where the ``.b3d`` did.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Z", "Z32", "rot_to_gltf", "rot_from_gltf", "WRAP_CLAMP", "WRAP_REPEAT"]

#: the Z mirror between B3D's left-handed axes and glTF's: ``(x, y, z) * Z``
Z = np.array([1.0, 1.0, -1.0])
Z32 = Z.astype(np.float32)


def rot_to_gltf(wxyz) -> np.ndarray:
    """B3D rotations ``w, x, y, z`` (..., 4) -> glTF ``x, y, z, w`` across the Z mirror, unit
    length (a zero quaternion is the identity)."""
    q = np.asarray(wxyz, dtype=np.float64)
    if q.shape == (4,):                 # one node's rotation: plain floats are faster
        w, x, y, z = q.tolist()
        n1 = math.sqrt(x * x + y * y + z * z + w * w)
        return np.array((x / n1, y / n1, -z / n1, w / n1) if n1 > 1e-12 else (0.0, 0.0, 0.0, 1.0))
    out = q[..., [1, 2, 3, 0]]
    out[..., 2] *= -1.0
    n = out[..., 0] * out[..., 0]       # summed in the order of the one-rotation path above
    for c in (1, 2, 3):
        n += out[..., c] * out[..., c]
    n = np.sqrt(n)[..., None]
    ok = n > 1e-12
    out /= np.where(ok, n, 1.0)
    if not ok.all():
        out[~ok[..., 0]] = (0.0, 0.0, 0.0, 1.0)
    return out


def rot_from_gltf(xyzw) -> np.ndarray:
    """glTF rotations ``x, y, z, w`` (..., 4) -> B3D ``w, x, y, z`` (the inverse of
    :func:`rot_to_gltf`, without normalising)."""
    q = np.asarray(xyzw, dtype=np.float64)
    return np.stack([q[..., 3], q[..., 0], q[..., 1], -q[..., 2]], axis=-1)


#: glTF sampler wrap modes (CLAMP_TO_EDGE, REPEAT) for the TEXS flags
WRAP_CLAMP, WRAP_REPEAT = 33071, 10497
