"""Small valid Lugaru skeletons, animations and models built with our own writers (for
tests and examples; the shipped files cannot be copied into the repository).

:func:`figure` is a 20-joint stick figure in the game's joint order and labels, about 9 units
tall like ``BasicFigure``; :func:`body` a box per muscle (a ``.solid`` in the game's
storage: upside down, clockwise outward); :func:`animation` a few frames of a swaying walk;
:func:`solid_box` a box model stored as the game stores objects.

``documents()`` gives a small complete native document per format of the family,
``WITHOUT_SAMPLE`` the formats without one, ``write_example(folder)`` writes ``box.solid``
(used by the lead's examples script): the samples API of every family.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import solid
from .animation import AnimationFile
from .skeleton import JOINT_DTYPE, MUSCLE_DTYPE, SkeletonFile

__all__ = ["figure", "body", "animation", "solid_box", "documents", "write_example",
           "WITHOUT_SAMPLE", "JOINT_POSITIONS", "BONES"]

#: formats of the family without a sample document, and why
WITHOUT_SAMPLE: dict[str, str] = {}

#: label -> position (x, y, z): the game's bodypart order (head, neck, leftshoulder, ...)
JOINT_POSITIONS = np.array([
    (0.0, 8.8, 0.0), (0.0, 7.8, -0.15), (1.05, 7.3, -0.15), (1.15, 6.2, -0.15),
    (1.18, 5.1, -0.1), (1.19, 4.4, -0.15), (-1.02, 7.3, -0.15), (-1.1, 6.2, -0.15),
    (-1.13, 5.1, -0.15), (-1.16, 4.3, -0.15), (0.03, 6.0, -0.15), (0.48, 5.2, -0.17),
    (-0.34, 5.1, -0.15), (0.05, 4.7, -0.15), (0.65, 3.2, 0.03), (0.65, 1.6, -0.26),
    (0.68, 0.66, 0.53), (-0.65, 3.2, 0.09), (-0.65, 1.65, -0.24), (-0.65, 0.65, 0.57)])
#: muscles with vertices (label pairs), as the shipped figure's skinning muscles
BONES = ((0, 1), (1, 10), (10, 13), (2, 3), (3, 4), (4, 5), (6, 7), (7, 8), (8, 9),
         (11, 14), (14, 15), (15, 16), (12, 17), (17, 18), (18, 19))
#: constraint muscles without vertices (shoulders, hips)
CONSTRAINTS = ((1, 2), (1, 6), (13, 11), (13, 12), (11, 12))
#: a cube's corners (index = 4x + 2y + z bits) and its 12 triangles, CCW seen from outside
BOX = np.array([(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float64)
BOX_TRIS = np.array([(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1),
                     (2, 3, 7), (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)])


def figure(vertices_per_muscle: int = 8) -> SkeletonFile:
    """The joints in label order, one muscle per bone owning ``vertices_per_muscle``
    consecutive vertices of :func:`body`, then the constraint muscles."""
    joints = np.zeros(20, JOINT_DTYPE)
    joints["position"] = JOINT_POSITIONS
    joints["mass"] = 1.0
    joints["label"] = np.arange(20)
    joints["parent"] = -1
    bones = list(BONES) + list(CONSTRAINTS)
    muscles = np.zeros(len(bones), MUSCLE_DTYPE)
    muscles["parent1"] = [a for a, _ in bones]
    muscles["parent2"] = [b for _, b in bones]
    d = np.linalg.norm(JOINT_POSITIONS[muscles["parent1"]] - JOINT_POSITIONS[muscles["parent2"]],
                       axis=1)
    muscles["length"] = muscles["targetlength"] = d
    muscles["maxlength"] = 10.0
    muscles["strength"] = 1.0
    muscles["type"] = [0] * len(BONES) + [1] * len(CONSTRAINTS)
    muscles["visible"] = [1] * len(BONES) + [0] * len(CONSTRAINTS)
    verts = [np.arange(i * vertices_per_muscle, (i + 1) * vertices_per_muscle, dtype=">i4")
             if i < len(BONES) else np.zeros(0, ">i4") for i in range(len(bones))]
    return SkeletonFile(joints, muscles, verts, (11, 10, 12), (11, 13, 12))


def body(width: float = 0.25) -> solid.SolidFile:
    """A box around each bone of :func:`figure` (8 vertices, 12 triangles each), stored as
    the game stores character models: turned ``Rx(180)``, clockwise outward, scaled 1/0.04
    (the engine scales models by 0.04 and skeletons not at all)."""
    pos, tris = [], []
    for k, (a, b) in enumerate(BONES):
        p, q = JOINT_POSITIONS[a], JOINT_POSITIONS[b]
        mid, half = (p + q) / 2, np.abs(p - q) / 2 + width
        pos.append(mid + BOX * half)
        tris.append(BOX_TRIS + 8 * k)
    p = np.concatenate(pos)
    t = np.concatenate(tris)
    # outward CCW boxes; the game stores characters upside down (y, z negated) and CW
    stored = p * np.array([1.0, -1.0, -1.0]) / 0.04
    t = t[:, [0, 2, 1]]
    tri = np.zeros(len(t), solid.TRI_DTYPE)
    tri["i0"], tri["i1"], tri["i2"] = t[:, 0], t[:, 1], t[:, 2]
    tri["u0"], tri["u1"] = t[:, 1], t[:, 2]
    uv = (p[:, [0, 1]] - p[:, [0, 1]].min(0)) / np.ptp(p[:, [0, 1]], axis=0)
    tri["gx"] = uv[t, 0]
    tri["gy"] = uv[t, 1]
    return solid.SolidFile(stored.astype(">f4"), tri)


def animation(frames: int = 4, sway: float = 0.4) -> AnimationFile:
    """``frames`` frames of :func:`figure`'s joints swinging the arms and legs."""
    pos = np.repeat(JOINT_POSITIONS[None].astype(np.float64), frames, axis=0)
    phase = np.sin(np.linspace(0, 2 * np.pi, frames, endpoint=False))
    for limb, sign in (((3, 4, 5), 1), ((7, 8, 9), -1), ((14, 15, 16), -1), ((17, 18, 19), 1)):
        for depth, j in enumerate(limb, start=1):
            pos[:, j, 2] += sign * sway * depth * phase
    twist = np.zeros((frames, 20))
    onground = np.zeros((frames, 20), "u1")
    onground[:, [16, 19]] = 1
    return AnimationFile(pos.astype(">f4"), twist.astype(">f4"), onground,
                         np.full(frames, 4.0, ">f4"), np.zeros((frames, 20), ">f4"),
                         np.zeros(frames, ">i4"), 0, np.zeros((frames, 3), ">f4"))


def solid_box() -> solid.SolidFile:
    """A 20-unit box stored as the game stores objects (CCW outward)."""
    verts = (BOX * 10).astype(">f4")
    t = np.zeros(12, solid.TRI_DTYPE)
    t["i0"], t["i1"], t["i2"] = BOX_TRIS[:, 0], BOX_TRIS[:, 1], BOX_TRIS[:, 2]
    t["u0"], t["u1"], t["u2"] = BOX_TRIS[:, 1], BOX_TRIS[:, 2], 0
    t["gx"] = (BOX[BOX_TRIS][:, :, 0] + 1) / 2
    t["gy"] = (BOX[BOX_TRIS][:, :, 1] + 1) / 2
    return solid.SolidFile(verts, t)


def documents() -> dict[str, Any]:
    """Format name -> a small complete native document."""
    return {"solid": solid_box(), "lugaru-skeleton": figure(), "lugaru-animation": animation()}


def write_example(folder: str | Path) -> list[Path]:
    """Write box.solid."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    (d / "box.solid").write_bytes(solid.write(solid_box()))
    return [d / "box.solid"]
