"""Small Lost Saga documents built with our own writers (fixtures, examples).

* :func:`skinned_column` -- a square tube along +Y skinned to a chain of bones, with its
  :class:`~.skl.SklFile` (``Bip01``, ``Bip01 Spine``, ...).
* :func:`wave_animation` -- the chain bending back and forth (any of the three key versions).
* :func:`full_mesh` -- a static mesh that uses every mask bit that has data (normals, tangents,
  binormals, colours, UV0, UV1, billboard centres, weights) and, for version 2002, control points.
* :func:`collision_mesh` -- a small ``.cms`` (a quad and a few trailing bytes).
* :func:`documents` -- format name -> a small complete native document, one per format
  (``"ani:comp4"`` and ``"ani:comp8"`` for the packed key versions).
* :func:`write_example` -- writes ``column.msh``, ``column.skl``, ``column_wave.ani`` and the
  material script ``column.txt`` into a folder (the lead's shippable example).

Geometry is made in glTF space (right-handed, CCW outward faces) and converted to the engine's
left-handed space exactly like ``to_scene`` converts back.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .ani import AniEvent, AniFile, AniTrack, key_dtype
from .cms import CmsFile
from .common import (
    ANIMATION_VER_COMP4,
    ANIMATION_VER_COMP8,
    ANIMATION_VER_DEFAULT,
    MESH_CONTROL_POINT_VERSION,
)
from .msh import (
    BINORMAL,
    COLOR0,
    INDICES,
    NORMAL,
    POSITION,
    POSITION2,
    SUBMESH_DTYPE,
    TANGENT,
    UV0,
    UV1,
    WEIGHT_DTYPE,
    WEIGHTS,
    ControlPoint,
    MshFile,
)
from .quatcodec import encode_comp4, encode_comp8
from .skl import POSE_DTYPE, SklBone, SklFile

__all__ = ["skinned_column", "wave_animation", "full_mesh", "collision_mesh", "write_example",
           "bone_names", "documents", "WITHOUT_SAMPLE"]

#: formats of the family without a sample document, and why
WITHOUT_SAMPLE: dict[str, str] = {}

_FLIP = np.array([1.0, 1.0, -1.0])


def bone_names(n: int) -> list[bytes]:
    return [b"Bip01"] + [b"Bip01 Spine" + (str(i).encode() if i > 1 else b"") for i in range(1, n)]


def _bbox(p: np.ndarray) -> np.ndarray:
    lo, hi = p.min(axis=0), p.max(axis=0)
    return np.array([*lo, *hi, np.linalg.norm(hi - lo) / 2], dtype=np.float32)


def _tube(segments: int, height: float, width: float, rings_per_segment: int = 2):
    rings = segments * rings_per_segment + 1
    ys = np.linspace(0.0, segments * height, rings)
    corners = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]], dtype=np.float64) * width / 2
    # 4 sides x rings x 2 vertices (flat-shaded sides)
    pos: list = []
    nrm: list = []
    uv: list = []
    faces: list = []
    for side in range(4):
        a, b = corners[side], corners[(side + 1) % 4]
        normal = np.array([a[0] + b[0], 0.0, a[1] + b[1]])
        normal /= np.linalg.norm(normal)
        base = len(pos)
        for r, y in enumerate(ys):
            for c, (x, z) in enumerate((a, b)):
                pos.append((x, y, z))
                nrm.append(normal)
                uv.append(((side + c) / 4.0, 1.0 - r / (rings - 1)))
        for r in range(rings - 1):
            i0 = base + 2 * r
            # glTF CCW seen from outside
            faces.append((i0, i0 + 2, i0 + 1))
            faces.append((i0 + 1, i0 + 2, i0 + 3))
    return np.array(pos), np.array(nrm), np.array(uv), np.array(faces), ys


def skinned_column(segments: int = 3, height: float = 10.0, width: float = 4.0,
                   rings_per_segment: int = 2) -> tuple[MshFile, SklFile]:
    """A skinned tube and its bone chain (one bone per segment plus the root); 8 vertices per
    ring (``segments * rings_per_segment + 1`` rings)."""
    pos, nrm, uv, faces, _ = _tube(segments, height, width, rings_per_segment)
    n_bones = segments + 1
    names = bone_names(n_bones)
    # weights: blend between the two nearest bone joints along Y
    f = np.clip(pos[:, 1] / height, 0, segments)
    lo = np.minimum(np.floor(f), segments - 1).astype(int)
    t = f - lo
    w = np.zeros((len(pos), 4))
    ids = np.zeros((len(pos), 4))
    w[:, 0] = 1.0 - t
    ids[:, 0] = lo
    w[:, 1] = t
    ids[:, 1] = lo + 1
    swap = w[:, 1] > w[:, 0]                          # heaviest first (the engine stops at 0)
    w[swap] = w[swap][:, [1, 0, 2, 3]]
    ids[swap] = ids[swap][:, [1, 0, 2, 3]]
    ids[w <= 0] = 0
    weights = np.zeros(len(pos), WEIGHT_DTYPE)
    weights["weight"] = w
    weights["bone"] = ids
    d3d_pos = (pos * _FLIP).astype(np.float32)
    msh = MshFile(
        version=2000, mesh_type=1,
        vertex_mask=POSITION | NORMAL | UV0 | WEIGHTS | INDICES,
        bbox=_bbox(d3d_pos),
        submeshes=np.array([(0, len(pos), 0, len(faces))], SUBMESH_DTYPE),
        vertex_count=len(pos), positions=d3d_pos, normals=(nrm * _FLIP).astype(np.float32),
        uv0=uv.astype(np.float32), bone_names=list(names), weights=weights,
        faces=faces[:, [0, 2, 1]].astype(np.uint16))
    poses = np.zeros(n_bones, POSE_DTYPE)
    poses["local_rotation"] = (0, 0, 0, 1)
    poses["inverse_rotation"] = (0, 0, 0, 1)
    for i in range(n_bones):
        poses["local_position"][i] = (0.0, height if i else 0.0, 0.0)
        poses["inverse_position"][i] = (0.0, -height * i, 0.0)
        tm = np.eye(4)
        tm[3, :3] = (0.0, height * i, 0.0)                # D3DX row-vector bind world
        poses["object_tm"][i] = tm
    bones = [SklBone(names[i], names[i - 1] if i else b"", [names[i + 1]] if i + 1 < n_bones else [])
             for i in range(n_bones)]
    skl = SklFile(bones=bones, poses=poses, linked_skeleton=b"")
    return msh, skl


def wave_animation(skl: SklFile, version: int = ANIMATION_VER_DEFAULT, *, keys: int = 21,
                   duration_ms: int = 1000, angle: float = 0.5) -> AniFile:
    """Every bone but the root swings about Z: ``angle * sin(2 pi t)``."""
    times = np.linspace(0, duration_ms, keys).round().astype(np.int32)
    a = angle * np.sin(2 * np.pi * times / duration_ms)
    q = np.zeros((keys, 4))
    q[:, 2] = np.sin(a / 2)
    q[:, 3] = np.cos(a / 2)
    dt = key_dtype(version)
    tracks = []
    for i, bone in enumerate(skl.bones):
        k = np.zeros(keys, dt)
        k["time"] = times
        k["translation"] = skl.poses["local_position"][i]
        rot = q if i else np.tile([0.0, 0.0, 0.0, 1.0], (keys, 1))
        if version == ANIMATION_VER_COMP4:
            k["packed"] = encode_comp4(rot)
        elif version == ANIMATION_VER_COMP8:
            k["high"], k["low"] = encode_comp8(rot)
        else:
            k["rotation"] = rot
        tracks.append(AniTrack(bone.name, 1.0, k))
    events = [AniEvent(b"sound", b"swish.wav", duration_ms / 2.0),
              AniEvent(b"end", b"", float(duration_ms))]
    return AniFile(version=version, events=events, total_time=duration_ms, tracks=tracks)


def full_mesh(version: int = MESH_CONTROL_POINT_VERSION, mesh_type: int = 2) -> MshFile:
    """A two-submesh static mesh with every array the loader knows (lightmap UVs in UV0)."""
    pos, nrm, uv, faces, _ = _tube(2, 5.0, 3.0, rings_per_segment=1)
    n = len(pos)
    tan = np.cross(nrm, [0.0, 1.0, 0.0])
    tan /= np.linalg.norm(tan, axis=1)[:, None]
    binormal = np.cross(nrm, tan)
    rgba = np.stack([np.linspace(0, 255, n), np.full(n, 128), np.linspace(255, 0, n),
                     np.full(n, 255)], axis=1).astype(np.uint32)
    colors = (rgba[:, 3] << 24) | (rgba[:, 0] << 16) | (rgba[:, 1] << 8) | rgba[:, 2]
    half = len(faces) // 2
    d3d = (pos * _FLIP).astype(np.float32)
    subs = np.array([(0, n, 0, half), (0, n, 3 * half, len(faces) - half)], SUBMESH_DTYPE)
    weights = np.zeros(n, WEIGHT_DTYPE)
    weights["weight"][:, 0] = 1.0
    doc = MshFile(
        version=version, mesh_type=mesh_type,
        vertex_mask=(POSITION | POSITION2 | NORMAL | TANGENT | BINORMAL | COLOR0 | UV0 | UV1
                     | WEIGHTS | INDICES),
        bbox=_bbox(d3d), submeshes=subs, vertex_count=n, positions=d3d,
        normals=(nrm * _FLIP).astype(np.float32), tangents=(tan * _FLIP).astype(np.float32),
        binormals=(binormal * _FLIP).astype(np.float32), colors=colors.astype(np.uint32),
        uv0=(uv * 0.5).astype(np.float32), uv1=uv.astype(np.float32),
        bone_names=[b"Bip01"], weights=weights, billboard_centers=np.zeros((n, 3), np.float32),
        faces=faces[:, [0, 2, 1]].astype(np.uint16))
    if version == MESH_CONTROL_POINT_VERSION:
        doc.control_points = [ControlPoint(b"1", b"Bip01", b"grip",
                                           np.array([0.0, 2.5, 0.0], np.float32)),
                              ControlPoint(b"2", b"", b"", np.array([1.0, 5.0, -1.0], np.float32))]
    return doc


MATERIAL_SCRIPT = """// column.txt: one material per submesh
material
{
\ttechnique
\t{
\t\tpass
\t\t{
\t\t\tshader_group AnimateToonShade
\t\t\ttexture_unit
\t\t\t{
\t\t\t\ttexture column_diffuse.png
\t\t\t\ttex_coord_set 0
\t\t\t}
\t\t}
\t}
}
"""


def write_example(folder: str | Path, stem: str = "column") -> list[Path]:
    """Write the skinned, animated example (mesh, skeleton, animation, material script)."""
    from ... import write
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    msh, skl = skinned_column()
    out = write(msh, folder / f"{stem}.msh")
    out += write(skl, folder / f"{stem}.skl")
    out += write(wave_animation(skl), folder / f"{stem}_wave.ani")
    script = folder / f"{stem}.txt"
    script.write_text(MATERIAL_SCRIPT.replace("column", stem))
    return out + [script]


def collision_mesh() -> CmsFile:
    """A quad of two triangles, with two trailing bytes the file keeps."""
    return CmsFile(positions=np.arange(12, dtype=np.float32).reshape(4, 3),
                   faces=np.array([[0, 1, 2], [0, 2, 3]], np.uint16), trailing=b"xy")


def documents() -> dict[str, Any]:
    """Format name -> a small complete native document (``"name:variant"`` for more layouts of
    one format)."""
    from ... import read
    _, skl = skinned_column()
    return {"msh": full_mesh(), "skl": skl, "ani": wave_animation(skl),
            "ani:comp4": wave_animation(skl, ANIMATION_VER_COMP4, keys=5),
            "ani:comp8": wave_animation(skl, ANIMATION_VER_COMP8, keys=5),
            "cms": collision_mesh(),
            "lsmat": read(MATERIAL_SCRIPT.encode(), format="lsmat")}
