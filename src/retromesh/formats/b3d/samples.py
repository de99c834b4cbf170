"""Small B3D documents built with our own writers (fixtures, examples; no game files).

* :func:`wiggle_scene` -- a skinned, animated tentacle (4 bones, 2 UV-mapped materials, one
  ANIM of 48 frames at 24 fps): the shape of a Minetest/Luanti mob model.
* :func:`crate_scene` -- a static textured box (a brush with a texture, per-vertex normals).
* :func:`documents` -- the family's sample per format (``{"b3d": B3dFile}``, the wiggle).
* :func:`write_example` -- writes ``wiggle.b3d``/``wiggle.png`` and ``crate.b3d``/``crate.png``.

Both are Scenes in glTF conventions written through ``from_scene``, so the files are original
work of this project.
"""
from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ...scene import (
    Animation,
    Channel,
    Material,
    Mesh,
    Node,
    Primitive,
    Scene,
    Skin,
    Texture,
    TextureRef,
)

__all__ = ["documents", "write_example", "WITHOUT_SAMPLE", "wiggle_scene", "crate_scene",
           "wiggle_png", "crate_png", "png"]

#: formats of the family without a sample document, and why
WITHOUT_SAMPLE: dict[str, str] = {}


def png(width: int, height: int, rgb: np.ndarray) -> bytes:
    """A minimal RGB PNG (no dependency on an imaging library)."""
    raw = b"".join(b"\0" + rgb[y].astype(np.uint8).tobytes() for y in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def tube(segments: int = 8, rings: int = 13, length: float = 4.0, radius: float = 0.4):
    """A capped-less tube along +Y: positions, normals, uvs, triangle indices."""
    a = np.linspace(0, 2 * np.pi, segments + 1)
    y = np.linspace(0, length, rings)
    aa, yy = np.meshgrid(a, y)
    taper = radius * (1.0 - 0.6 * yy / length)
    pos = np.stack([np.cos(aa) * taper, yy, -np.sin(aa) * taper], axis=-1).reshape(-1, 3)
    nrm = np.stack([np.cos(aa), np.zeros_like(aa), -np.sin(aa)], axis=-1).reshape(-1, 3)
    uv = np.stack([aa / (2 * np.pi), 1 - yy / length], axis=-1).reshape(-1, 2)
    idx = []
    for r in range(rings - 1):
        for s in range(segments):
            i0 = r * (segments + 1) + s
            i1, i2, i3 = i0 + 1, i0 + segments + 1, i0 + segments + 2
            idx += [i0, i1, i3, i0, i3, i2]
    return pos, nrm, uv, np.array(idx, np.uint32)


def wiggle_scene(bones: int = 4, frames: int = 48, fps: float = 24.0) -> Scene:
    s = Scene(name="wiggle")
    length = 4.0
    seg = length / bones
    root = s.add_node(Node(name="wiggle"))
    joints = []
    parent = root
    for b in range(bones):
        offset = np.array([0.0, 0.0 if b == 0 else seg, 0.0])
        j = s.add_node(Node(name=f"bone{b}", translation=offset), parent)
        joints.append(j)
        parent = j
    pos, nrm, uv, idx = tube(length=length)
    # weights: linear blend between the two nearest bones along Y
    t = np.clip(pos[:, 1] / seg - 0.5, 0, bones - 1)
    lo = np.floor(t).astype(int)
    hi = np.minimum(lo + 1, bones - 1)
    w_hi = t - lo
    joints_arr = np.zeros((len(pos), 4), np.uint16)
    weights = np.zeros((len(pos), 4), np.float32)
    joints_arr[:, 0] = lo + 1
    joints_arr[:, 1] = hi + 1
    weights[:, 0] = 1 - w_hi
    weights[:, 1] = w_hi
    same = lo == hi
    weights[same, 0] = 1
    weights[same, 1] = 0
    joints_arr[same, 1] = 0
    s.add_texture(Texture(name="wiggle", uri="wiggle.png"))
    skin_mat = s.add_material(Material(name="skin", base_color=(0.55, 0.8, 0.4, 1.0),
                                       base_color_texture=TextureRef(0)))
    tip_mat = s.add_material(Material(name="tip", base_color=(0.9, 0.35, 0.3, 1.0)))
    tri = idx.reshape(-1, 3)
    tip = pos[tri].mean(axis=1)[:, 1] > length * 0.75
    prims = []
    for mat, sel in ((skin_mat, ~tip), (tip_mat, tip)):
        used, inv = np.unique(tri[sel], return_inverse=True)
        prims.append(Primitive(positions=pos[used], normals=nrm[used], uvs=[uv[used]],
                               indices=inv.reshape(-1), joints=joints_arr[used],
                               weights=weights[used], material=mat))
    mesh = s.add_mesh(Mesh(name="wiggle", primitives=prims))
    s.nodes[root].mesh = mesh
    skin_joints = [root] + joints
    worlds = s.world_matrices()
    ibm = np.stack([np.linalg.inv(worlds[j]) @ worlds[root] for j in skin_joints])
    s.nodes[root].skin = s.add_skin(Skin(joints=skin_joints, inverse_bind_matrices=ibm))
    times = np.arange(frames + 1) / fps
    anim = Animation(name="wiggle", extras={"fps": fps, "b3d_first_frame": 1})
    for b, j in enumerate(joints):
        angle = 0.35 * np.sin(2 * np.pi * times * fps / frames + b * 0.8)
        q = np.stack([np.zeros_like(angle), np.zeros_like(angle), np.sin(angle / 2),
                      np.cos(angle / 2)], axis=-1)
        anim.channels.append(Channel(node=j, path="rotation", times=times, values=q))
    sway = np.stack([0.3 * np.sin(2 * np.pi * times * fps / frames), np.zeros_like(times),
                     np.zeros_like(times)], axis=-1)
    anim.channels.append(Channel(node=joints[0], path="translation", times=times, values=sway))
    s.animations.append(anim)
    return s


def crate_scene() -> Scene:
    s = Scene(name="crate")
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u = np.zeros(3)
            u[(axis + 1) % 3] = 1
            v = np.cross(n, u)
            c = [n * 0.5 + (-u - v) * 0.5, n * 0.5 + (u - v) * 0.5, n * 0.5 + (u + v) * 0.5,
                 n * 0.5 + (-u + v) * 0.5]
            faces.append((c, n))
    pos = np.array([p for c, _ in faces for p in c], np.float32)
    nrm = np.array([n for _, n in faces for _ in range(4)], np.float32)
    uv = np.tile(np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32), (6, 1))
    idx = np.array([[4 * f, 4 * f + 1, 4 * f + 2, 4 * f, 4 * f + 2, 4 * f + 3] for f in range(6)],
                   np.uint32).reshape(-1)
    s.add_texture(Texture(name="crate", uri="crate.png"))
    mat = s.add_material(Material(name="crate", base_color_texture=TextureRef(0)))
    mesh = s.add_mesh(Mesh(name="crate", primitives=[Primitive(positions=pos, normals=nrm, uvs=[uv],
                                                               indices=idx, material=mat)]))
    s.add_node(Node(name="crate", mesh=mesh))
    return s


def crate_png(size: int = 32) -> bytes:
    y, x = np.mgrid[0:size, 0:size]
    edge = (x < 3) | (y < 3) | (x >= size - 3) | (y >= size - 3) | (np.abs(x - y) < 2)
    rgb = np.where(edge[..., None], [110, 70, 30], [190, 140, 80]).astype(np.uint8)
    return png(size, size, rgb)


def wiggle_png(size: int = 16) -> bytes:
    y, x = np.mgrid[0:size, 0:size]
    rgb = np.where(((x // 4 + y // 4) % 2 == 0)[..., None], [120, 200, 90], [80, 150, 60])
    return png(size, size, rgb.astype(np.uint8))


def documents() -> dict[str, Any]:
    """Format name -> a small complete native document (the skinned, animated wiggle), as
    read from its file (floats already float32)."""
    from ... import from_scene, read, to_bytes
    return {"b3d": read(to_bytes(from_scene(wiggle_scene(), "b3d")), format="b3d")}


def write_example(folder: str | Path) -> list[Path]:
    """Write ``wiggle.b3d`` + ``wiggle.png`` and ``crate.b3d`` + ``crate.png`` into ``folder``."""
    from ... import save
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = save(wiggle_scene(), folder / "wiggle.b3d")
    out += save(crate_scene(), folder / "crate.b3d")
    for name, data in (("wiggle.png", wiggle_png()), ("crate.png", crate_png())):
        (folder / name).write_bytes(data)
        out.append(folder / name)
    return out
