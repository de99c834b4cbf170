"""Uniform scaling of a whole :class:`~retromesh.scene.Scene` (the ``scale`` load option).

Every format keeps the game's own units by default; ``retromesh.load(..., scale=s)`` (CLI
``--scale s``) multiplies every length by ``s``: node translations, mesh positions, morph
target position offsets, the translation of inverse bind matrices and translation keys.
Rotations, node scales, normals and UVs are unchanged, so the scene is exactly the original
one seen through a uniform scale about the origin (``world' = s * world``), skins included.
The factor is recorded (multiplied) in ``scene.extras["scale"]`` (the glTF's top-level
extras), so that a writer that needs the game's units (a voxel grid) can undo it.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import DocumentError
from .scene import Scene

__all__ = ["check_scale", "positive", "scale_scene"]


def positive(name: str, value: Any) -> float:
    """A finite number > 0 from an option (CLI values arrive as strings), else a DocumentError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise DocumentError(f"{name} must be a number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise DocumentError(f"{name} must be finite and greater than 0, got {value!r}")
    return v


def check_scale(value: Any) -> float:
    """The ``scale=`` factor: a finite number > 0."""
    return positive("scale", value)


def scale_scene(scene: Scene, factor: float) -> Scene:
    """Scale ``scene`` in place by ``factor`` (see the module docstring); returns it."""
    s = check_scale(factor)
    if s == 1.0:
        return scene
    for node in scene.nodes:
        node.translation = np.asarray(node.translation, np.float64) * s
    for mesh in scene.meshes:
        for p in mesh.primitives:
            p.positions = (p.positions * s).astype(p.positions.dtype, copy=False)
            for t in p.targets:
                if t.positions is not None:
                    t.positions = (t.positions * s).astype(t.positions.dtype, copy=False)
    for skin in scene.skins:
        if skin.inverse_bind_matrices is not None:
            ibm = np.array(skin.inverse_bind_matrices, copy=True)
            ibm[..., :3, 3] *= s
            skin.inverse_bind_matrices = ibm
    for anim in scene.animations:
        for c in anim.channels:
            if c.path == "translation":      # CUBICSPLINE tangents scale with the values
                c.values = (c.values * s).astype(c.values.dtype, copy=False)
    before = scene.extras.get("scale", 1.0)
    try:
        total = float(before) * s
    except (TypeError, ValueError):
        total = s
    if total == 1.0:
        scene.extras.pop("scale", None)
    else:
        scene.extras["scale"] = total
    return scene
