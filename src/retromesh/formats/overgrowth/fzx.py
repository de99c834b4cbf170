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
  ``(x, z, -y) - old_model_center``, then scales by the body scale.
  :mod:`.fzx_scene_read` does the same (``center=`` the OBJ's old centre, or ``mesh=`` the OBJ
  to take it from; default 0; ``body_scale=`` the body scale, on the root node).
* Shapes: box half-extents ``(sx, sz, sy)``; capsule radius ``scale[0]`` and half-length of
  its straight part ``scale[2]`` along the volume's local Y; sphere radius = mean of the scale.
* Labels: tokens (case-insensitive) ``l r m capsule box sphere`` + a body part; ``M`` adds a
  mirrored copy (``loc.x`` negated, ``r[2]`` and ``r[3]`` negated) named with ``" (mirror)"``.
* :mod:`.fzx_scene_write` writes the volumes back from the nodes; each node keeps the
  values it was made from (``fzx_object``), written as they were while the node still gives
  them back.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record

__all__ = ["FzxFile", "FzxObject", "read", "write", "parse_label", "HEADER", "FOOTER", "sniff",
           "info", "check"]

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


def sniff(head: bytes) -> bool:
    return head[:8] == HEADER
