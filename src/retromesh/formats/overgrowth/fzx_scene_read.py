"""Overgrowth ``.fzx`` ragdoll volumes -> Scene (the file layout and the engine's reading of it:
:mod:`.fzx`; the way back: :mod:`.fzx_scene_write`).

Each volume becomes a mesh node below a root node named after the file (the body scale on the
root): a box, capsule or sphere mesh of the volume's scale, placed as the engine places it
(``(x, z, -y) - old_model_center``, quaternion ``(x=r[1], y=r[3], z=-r[2], w=r[0])``); an
``M`` label adds a mirrored copy ``"<label> (mirror)"``. Each node keeps the values it was made
from (``fzx_object``) so that an unedited trip gives the same bytes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DocumentError
from ...geometry import compute_normals
from ...scene import Mesh, Node, Primitive, Scene
from .fzx import FzxFile, FzxObject, parse_label
from .obj import parse_obj

__all__ = ["fzx_to_scene", "volume_transform", "volume_mesh", "kept_values"]


def _box() -> tuple[np.ndarray, np.ndarray]:
    c = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
    faces = []
    for axis in range(3):
        for sign in (-1, 1):
            quad = [i for i in range(8) if c[i, axis] == sign]
            a, b, cc, d = quad
            # order the quad around the face normal
            pts = c[[a, b, d, cc]]
            n = np.zeros(3)
            n[axis] = sign
            tri = [(0, 1, 2), (0, 2, 3)]
            ids = [a, b, d, cc]
            for t in tri:
                p0, p1, p2 = pts[list(t)]
                if np.dot(np.cross(p1 - p0, p2 - p0), n) < 0:
                    t = (t[0], t[2], t[1])
                faces.append([ids[k] for k in t])
    # split per face so normals are flat
    idx = np.array(faces, np.int64).reshape(-1)
    pos = c[idx]
    return pos, np.arange(len(pos), dtype=np.uint32)


def _capsule(radius: float, half: float, rings: int = 6, seg: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """A capsule along Y: hemispheres of ``radius`` around ``y = +-half``."""
    phis = np.concatenate([np.linspace(0, np.pi / 2, rings + 1), np.linspace(np.pi / 2, np.pi, rings + 1)])
    offs = np.concatenate([np.full(rings + 1, half), np.full(rings + 1, -half)])
    th = np.linspace(0, 2 * np.pi, seg, endpoint=False)
    y = radius * np.cos(phis)[:, None] + offs[:, None]
    rr = radius * np.sin(phis)[:, None]
    pos = np.stack([rr * np.sin(th)[None], np.broadcast_to(y, (len(phis), seg)),
                    rr * np.cos(th)[None]], -1).reshape(-1, 3)
    rows = len(phis)
    i = np.arange(rows - 1)[:, None] * seg
    j = np.arange(seg)[None]
    a = i + j
    b = i + (j + 1) % seg
    c = a + seg
    d = b + seg
    tris = np.concatenate([np.stack([a, c, b], -1).reshape(-1, 3), np.stack([b, c, d], -1).reshape(-1, 3)])
    # drop degenerate triangles at the poles
    p = pos
    area = np.linalg.norm(np.cross(p[tris[:, 1]] - p[tris[:, 0]], p[tris[:, 2]] - p[tris[:, 0]]), axis=1)
    tris = tris[area > 1e-9 * max(radius, 1e-9) ** 2]
    return pos.astype(np.float32), tris.reshape(-1).astype(np.uint32)


def volume_transform(o: FzxObject, center=(0.0, 0.0, 0.0), mirror: bool = False):
    """(translation, xyzw rotation) of a volume in engine/glTF space."""
    r = list(o.rotation)
    loc = list(o.location)
    if mirror:
        loc[0] = -loc[0]
        r[2], r[3] = -r[2], -r[3]
    q = np.array([r[1], r[3], -r[2], r[0]], dtype=np.float64)
    nq = np.linalg.norm(q)
    q = q / nq if nq > 1e-12 and np.isfinite(nq) else np.array([0.0, 0.0, 0.0, 1.0])
    t = np.array([loc[0], loc[2], -loc[1]], dtype=np.float64) - np.asarray(center, np.float64)
    return t, q


def volume_mesh(o: FzxObject, shape: str | None) -> tuple[np.ndarray, np.ndarray]:
    sx, sy, sz = (abs(float(v)) for v in o.scale)
    if shape == "sphere":
        radius = (sx + sy + sz) / 3
        return _capsule(max(radius, 1e-6), 0.0)
    if shape == "capsule":
        return _capsule(max(sx, 1e-6), sz)
    pos, idx = _box()
    return (pos * np.array([sx, sz, sy], np.float32)).astype(np.float32), idx


def fzx_to_scene(doc: FzxFile, *, source: Path | None = None, center: Any = None,
             mesh: Any = None, body_scale: float = 1.0) -> Scene:
    """Volumes in engine (= glTF) space. ``center``: the character OBJ's old centre (what the
    engine subtracts); ``mesh``: an OBJ to take that centre from (its bounding-box centre);
    ``body_scale``: the character's body scale (applied on a root node; the generic ``scale``
    load option scales the whole scene instead)."""
    if center is None and mesh is not None:
        o = parse_obj(Path(mesh).read_bytes(), str(mesh))
        pos = o.positions[o.corners[:, 0]]
        center = (pos.min(0) + pos.max(0)) / 2 if len(pos) else (0.0, 0.0, 0.0)
    center = (0.0, 0.0, 0.0) if center is None else tuple(float(c) for c in np.ravel(center))
    if len(center) != 3:
        raise DocumentError("center takes 3 numbers")
    try:
        scale = float(body_scale)
    except (TypeError, ValueError):
        raise DocumentError(f"body_scale must be a number, got {body_scale!r}") from None
    if not np.isfinite(scale) or scale <= 0:
        raise DocumentError(f"body_scale must be a positive number, got {body_scale!r}")
    scene = Scene(name=source.stem if source else "fzx")
    root = scene.add_node(Node(name=scene.name, scale=np.array([scale] * 3),
                               extras={"fzx_version": doc.version, "center": list(center)}))
    for i, ob in enumerate(doc.objects):
        vals = np.array(list(ob.rotation) + list(ob.location) + list(ob.scale), dtype=np.float64)
        if not np.all(np.isfinite(vals)):
            raise DocumentError(f"fzx object {i} has non-finite values")
        info = parse_label(ob.label)
        label = ob.label.decode("utf-8", "replace")
        pos, idx = volume_mesh(ob, info["shape"])
        m = scene.add_mesh(Mesh(name=label, primitives=[
            Primitive(positions=pos, normals=compute_normals(pos, idx), indices=idx)]))
        copies = [False, True] if info["mirror"] else [False]
        for mirror in copies:
            t, q = volume_transform(ob, center, mirror)
            name = label + (" (mirror)" if mirror else "")
            scene.add_node(Node(name=name, translation=t, rotation=q, mesh=m,
                                extras={"fzx_label": label, "shape": info["shape"] or "box",
                                        "part": info["part"], "side": info["side"],
                                        "mirrored_copy": mirror,
                                        **({} if mirror else {"fzx_index": i,
                                                              "fzx_object": kept_values(ob)})}),
                           parent=root)
    return scene


def kept_values(o: FzxObject) -> list[float]:
    """The stored values of a volume (rotation, location, scale) as the shortest floats that
    give the float32 values back: the ``fzx_object`` extra :mod:`.fzx_scene_write` writes back."""
    vals = np.asarray(list(o.rotation) + list(o.location) + list(o.scale), np.float32)
    return [float(str(v)) for v in vals]
