"""Overgrowth ``.fzx`` ragdoll bounding volumes, little-endian.

Layout (Overgrowth ``Source/Asset/Asset/fzx_file.cpp``; how the engine uses the volumes:
``Source/Graphics/skeleton.cpp``):

=============  ==========================  ===============================================
offset         type                        field
=============  ==========================  ===============================================
0              uint8 + char[7]             header ``D3 'F' 'Z' 'X' 0D 0A 20 0A``
8              int32                       version (must be 1)
12             int32                       object_count
16             per object                  int32 label_length (<= 255); char[label_length]
                                           (no NUL); float32 rotation[4] (w, x, y, z);
                                           float32 location[3]; float32 scale[3]
end - 7        int32                       file_size = file size minus the 7-byte footer
end - 3        char[3]                     ``"FZX"``
=============  ==========================  ===============================================

Native document: :class:`FzxFile` holding :class:`FzxObject` (label bytes, rotation as stored
``(w, x, y, z)``, location, scale). The footer is checked, not stored: it is recomputed on
writing (``file_size`` must match, ``FZX`` must close the file: a clear FormatError otherwise).

Where we differ from the spec text, and why:

* Rotation and location are in Blender's Z-up space (the exporter writes them raw): the engine
  builds ``quaternion(x=r[1], y=r[3], z=-r[2], w=r[0])`` and places the volume at
  ``(x, z, -y) - old_model_center``, then scales by the body scale. ``to_scene`` does the same
  (``center=`` the OBJ's old centre, or ``mesh=`` the OBJ to take it from; default 0;
  ``body_scale=`` the body scale, on the root node).
* Shapes: box half-extents ``(sx, sz, sy)``; capsule radius ``scale[0]`` and half-length of
  its straight part ``scale[2]`` along the volume's local Y; sphere radius = mean of the scale.
* Labels: tokens (case-insensitive) ``l r m capsule box sphere`` + a body part; ``M`` adds a
  mirrored copy (``loc.x`` negated, ``r[2]`` and ``r[3]`` negated) named with ``" (mirror)"``.
* ``from_scene`` (:mod:`.fzx_write`) writes the volumes back from the nodes; each node keeps the
  values it was made from (``fzx_object``), written as they were while the node still gives
  them back.
"""
from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record
from ...scene import Mesh, Node, Primitive, Scene
from .obj import parse_obj

__all__ = ["FzxFile", "FzxObject", "read", "write", "to_scene", "from_scene", "HEADER", "FOOTER",
           "sniff", "info", "check"]

HEADER = b"\xd3FZX\r\n \n"
FOOTER = b"FZX"
MAX_LABEL = 255


@record
class FzxObject:
    label: bytes
    rotation: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)   # w, x, y, z (Blender)
    location: tuple[float, ...] = (0.0, 0.0, 0.0)
    scale: tuple[float, ...] = (1.0, 1.0, 1.0)


@record
class FzxFile:
    version: int = 1
    objects: list[FzxObject] = field(default_factory=list)


def read(r: Reader) -> FzxFile:
    head = r.raw(8, "header")
    if head != HEADER:
        raise r.fail(f"the header {HEADER!r}", head, offset=0, field="header")
    version = r.i32("version")
    if version != 1:
        raise r.fail("version 1", version, offset=8, field="version")
    if r.end < 7 + 16 or r.remaining < 7:
        raise r.fail("a 7-byte footer (int32 size, 'FZX')", f"{r.remaining} bytes left")
    footer_at = r.end - 7
    body_end = footer_at
    count = r.count("object_count", 44)
    doc = FzxFile(version)
    with r.chunk(body_end - r.pos, skip_rest=False):
        for i in range(count):
            with r.at(f"objects[{i}]"):
                s = r.pos
                n = r.i32("label_length")
                if not 0 <= n <= MAX_LABEL:
                    raise r.fail(f"a label length in 0..{MAX_LABEL}", n, offset=s)
                label = r.raw(n, "label")
                vals = r.floats(10, "rotation, location, scale")
                doc.objects.append(FzxObject(label, tuple(vals[0:4]), tuple(vals[4:7]),
                                             tuple(vals[7:10])))
    size = r.i32("footer.file_size")
    if size != footer_at:
        raise r.fail(f"footer file_size {footer_at} (the file size minus the 7-byte footer)",
                     size, offset=footer_at, field="footer.file_size")
    mark = r.raw(3, "footer")
    if mark != FOOTER:
        raise r.fail(f"the footer mark {FOOTER!r}", mark, offset=footer_at + 4, field="footer")
    return doc


def write(doc: FzxFile) -> bytes:
    if int(doc.version) != 1:
        raise DocumentError(f".fzx version must be 1, got {doc.version}")
    w = Writer("<")
    w.raw(HEADER)
    w.i32(1)
    w.i32(len(doc.objects))
    for o in doc.objects:
        label = bytes(o.label)
        if len(label) > MAX_LABEL:
            raise DocumentError(f".fzx labels hold at most {MAX_LABEL} bytes: {label[:40]!r}...")
        if len(o.rotation) != 4 or len(o.location) != 3 or len(o.scale) != 3:
            raise DocumentError("FzxObject: rotation has 4 floats, location and scale 3")
        w.pstring(label, "i")
        w.floats(list(o.rotation) + list(o.location) + list(o.scale))
    w.i32(w.pos)
    w.raw(FOOTER)
    return w.getvalue()


# -- scene ----------------------------------------------------------------------------------
def parse_label(label: bytes) -> dict[str, Any]:
    tokens = label.decode("latin-1").lower().split()
    out: dict[str, Any] = {"side": None, "shape": None, "part": None, "mirror": False}
    for t in tokens:
        if t in ("l", "r"):
            out["side"] = t
        elif t == "m":
            out["mirror"] = True
        elif t in ("capsule", "box", "sphere"):
            out["shape"] = t
        else:
            out["part"] = t
    return out


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


def to_scene(doc: FzxFile, *, source: Path | None = None, center: Any = None,
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
        from ...gltf.writer import compute_normals
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


def info(doc: FzxFile) -> dict:
    return {"version": doc.version, "objects": len(doc.objects),
            "mirrored": sum(parse_label(o.label)["mirror"] for o in doc.objects)}


#: the label words the engine knows (``Skeleton``'s FZX key words); others it skips
SIDES, SHAPES = ("l", "r"), ("capsule", "box", "sphere")
PARTS = ("eartip", "earbase", "head", "chest", "upperarm", "forearm", "abdomen", "hip", "thigh",
         "shin", "foot", "tail1", "tail2", "tail3", "tail4", "tail5", "tail6")
#: parts the engine finds through a left or right IK chain: without L or R it places nothing
SIDED = ("eartip", "earbase", "upperarm", "forearm", "thigh", "shin", "foot")
#: volumes the engine keeps per bone (a fixed array: more overwrite the next bone's)
MAX_SHAPES_PER_BONE = 5


def check(doc: FzxFile) -> list[Finding]:
    out = []
    per_bone: dict[tuple[str, str | None], int] = {}
    for i, o in enumerate(doc.objects):
        words = o.label.decode("latin-1").lower().split(" ")
        unknown = [w for w in words if w and w not in (*SIDES, "m", *SHAPES, *PARTS)]
        if unknown:
            out.append(error("fzx.token", f"object {i} ({o.label!r}): {', '.join(map(repr, unknown))} "
                             f"is not a label word of the format ({', '.join(PARTS)}, "
                             "L, R, M, Capsule, Box, Sphere); the engine skips it"))
        p = parse_label(o.label)
        part = next((w for w in reversed(words) if w in PARTS), None)   # the last one counts
        if p["shape"] is None or part is None:
            missing = "a volume type" if p["shape"] is None else "a body part"
            out.append(warning("fzx.unplaced", f"object {i} ({o.label!r}) names no {missing}: "
                               "the engine leaves it out of the ragdoll"))
            continue
        side = p["side"] if part in SIDED else None
        if part in SIDED and side is None:
            out.append(warning("fzx.unplaced", f"object {i} ({o.label!r}): {part} needs L or R; "
                               "the engine leaves it out of the ragdoll"))
            continue
        per_bone[(part, side)] = per_bone.get((part, side), 0) + 1
        if p["mirror"] and side is not None:
            other = (part, "r" if side == "l" else "l")
            per_bone[other] = per_bone.get(other, 0) + 1
    for (part, side), count in per_bone.items():
        if count > MAX_SHAPES_PER_BONE:
            where = f"{side.upper()} {part}" if side else part
            out.append(error("fzx.shapes_per_bone", f"{count} volumes on {where} (mirrored copies "
                             f"included): the engine holds {MAX_SHAPES_PER_BONE} per bone and "
                             "writes the rest over other bones' volumes"))
    return out


def from_scene(scene: Scene, **options: Any) -> FzxFile:
    """Ragdoll volumes from a scene: :mod:`.fzx_write`."""
    from .fzx_write import from_scene as volumes_from_scene
    return volumes_from_scene(scene, **options)


def kept_values(o: FzxObject) -> list[float]:
    """The stored values of a volume (rotation, location, scale) as the shortest floats that
    give the float32 values back: the ``fzx_object`` extra :mod:`.fzx_write` writes back."""
    vals = np.asarray(list(o.rotation) + list(o.location) + list(o.scale), np.float32)
    return [float(str(v)) for v in vals]


def sniff(head: bytes) -> bool:
    return head[:8] == HEADER
