"""MagicaVoxel ``.vox`` files, the native layer: read and write byte for byte, the scene graph
(:func:`scene_graph`, :func:`placements`) and the models as voxel grids (:func:`models`).

Its scene mapping is :mod:`.vox_scene`, its writer :mod:`.vox_scene_write` (with the kept
file, :mod:`.vox_scene_extras`), and the direct converters ``vxl -> vox`` and ``vox -> vxl`` are in
:mod:`.convert`.

Layout (little-endian)

* header: ``char[4] "VOX "``, ``int32 version`` (150 or 200)
* chunk: ``char[4] id``, ``int32 content_size``, ``int32 children_size``, content, children
* MAIN: no content; children: ``PACK``? then ``SIZE``+``XYZI`` per model, scene graph, palette
* SIZE: ``int32 x, y, z`` (model size, z up)
* XYZI: ``int32 n``, ``n x (uint8 x, y, z, colour_index)``; colour index 1..255 (0 = empty)
* RGBA: ``256 x uint8[4]``: entry ``k`` is the colour of index ``k + 1``
* nTRN: ``int32 node``, DICT (``_name``, ``_hidden``), ``int32 child, reserved (-1), layer, frames``, frames x
  DICT (``_r`` rotation byte, ``_t`` "x y z", ``_f``)
* nGRP: ``int32 node``, DICT, ``int32 n``, n x ``int32 child``
* nSHP: ``int32 node``, DICT, ``int32 n``, n x (``int32 model``, DICT)
* LAYR: ``int32 layer``, DICT (``_name``, ``_hidden``), ``int32 reserved``
* DICT: ``int32 n``, n x (STRING key, STRING value); STRING = ``int32 size`` + bytes

Limits (hostile files): the SIZE volumes of all models add up to at most :data:`MAX_CELLS`
(a 24-byte SIZE would otherwise buy a 256^3 grid), and so do those of all shape instances
(nSHP references); a non-finite ``_t`` is a FormatError.

SIZE, XYZI and RGBA are decoded (numpy); every other chunk (scene graph, MATL, rOBJ, rCAM,
NOTE, IMAP, unknown ones) is kept as raw content + children, so files round-trip byte for
byte. The scene-graph chunks are parsed on demand (:func:`scene_graph`). A model's pivot is
``floor(size / 2)``; ``_t`` places that pivot.
"""
from __future__ import annotations

import struct
import warnings
from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError, FormatError, LossWarning
from ...records import record
from .voxels import VoxelGrid

__all__ = [
    "DEFAULT_PALETTE",
    "MAX_CELLS",
    "VoxChunk",
    "VoxFile",
    "VoxRgba",
    "VoxSize",
    "VoxXyzi",
    "build_dict",
    "info",
    "instances",
    "models",
    "palette_of",
    "parse_dict",
    "placements",
    "read",
    "rotation_matrix",
    "scene_graph",
    "write",
]

MAGIC = b"VOX "
XYZI_DTYPE = np.dtype([("x", "u1"), ("y", "u1"), ("z", "u1"), ("i", "u1")])


@record
class VoxSize:
    x: int = 0
    y: int = 0
    z: int = 0


@record
class VoxXyzi:
    voxels: np.ndarray = field(default_factory=lambda: np.zeros(0, XYZI_DTYPE))


@record
class VoxRgba:
    colors: np.ndarray = field(default_factory=lambda: np.zeros((256, 4), np.uint8))


@record
class VoxChunk:
    """Any other chunk, kept raw."""
    id: bytes = b"NOTE"
    content: bytes = b""
    children: list[VoxChunk] = field(default_factory=list)


@record
class VoxFile:
    version: int = 150
    main_content: bytes = b""
    chunks: list[Any] = field(default_factory=list)      # MAIN's children
    trailing: bytes = b""


def sniff(head: bytes) -> bool:
    return head[:4] == MAGIC


def _read_chunk(r: Reader) -> Any:
    start = r.pos
    cid = r.raw(4, "chunk id")
    n_content = r.i32("content size")
    n_children = r.i32("children size")
    if n_content < 0 or n_children < 0 or n_content + n_children > r.remaining:
        raise r.fail(f"content and children sizes within the {r.remaining} bytes left",
                     f"{n_content} + {n_children}", offset=start + 4)
    with r.nested(cid.decode("latin-1")):
        if n_children == 0 and cid == b"SIZE" and n_content == 12:
            return VoxSize(*r.unpack("3i", "SIZE"))
        if n_children == 0 and cid == b"RGBA" and n_content == 1024:
            return VoxRgba(r.records(np.uint8, 1024, "colors").reshape(256, 4))
        if n_children == 0 and cid == b"XYZI" and n_content >= 4:
            n = struct.unpack_from("<i", r.data, r.pos)[0]
            if 0 <= n and 4 + 4 * n == n_content:
                r.pos += 4
                return VoxXyzi(r.records(XYZI_DTYPE, n, "voxels"))
        content = r.raw(n_content, "content")
        children = []
        with r.chunk(n_children, "children"):
            i = 0
            while not r.eof():
                with r.at(f"[{i}]"):
                    children.append(_read_chunk(r))
                i += 1
        return VoxChunk(cid, content, children)


def read(r: Reader) -> VoxFile:
    magic = r.raw(4, "magic")
    if magic != MAGIC:
        raise r.fail(f"the magic {MAGIC!r}", magic, offset=0, field="magic")
    doc = VoxFile(version=r.i32("version"))
    start = r.pos
    main = r.raw(4, "MAIN id")
    if main != b"MAIN":
        raise r.fail("a MAIN chunk", main, offset=start)
    n_content = r.i32("MAIN content size")
    n_children = r.i32("MAIN children size")
    if n_content < 0 or n_children < 0 or n_content + n_children > r.remaining:
        raise r.fail(f"MAIN sizes within the {r.remaining} bytes left",
                     f"{n_content} + {n_children}", offset=start + 4)
    doc.main_content = r.raw(n_content, "MAIN content")
    with r.chunk(n_children, "MAIN"):
        i = 0
        while not r.eof():
            with r.at(f"[{i}]"):
                doc.chunks.append(_read_chunk(r))
            i += 1
    doc.trailing = r.rest()
    return doc


def _write_chunk(w: Writer, c: Any) -> None:
    if isinstance(c, VoxSize):
        w.raw(b"SIZE")
        w.pack("5i", 12, 0, c.x, c.y, c.z)
    elif isinstance(c, VoxXyzi):
        v = as_dtype(c.voxels, XYZI_DTYPE, "XYZI.voxels")
        w.raw(b"XYZI")
        w.pack("3i", 4 + 4 * len(v), 0, len(v))
        w.records(v)
    elif isinstance(c, VoxRgba):
        col = as_dtype(c.colors, np.uint8, "RGBA.colors")
        if col.shape != (256, 4):
            raise DocumentError(f"RGBA colors must be (256, 4), got {col.shape}")
        w.raw(b"RGBA")
        w.pack("2i", 1024, 0)
        w.records(col)
    elif isinstance(c, VoxChunk):
        if len(c.id) != 4:
            raise DocumentError(f"chunk id {c.id!r} must be 4 bytes")
        sub = Writer("<")
        for ch in c.children:
            _write_chunk(sub, ch)
        body = sub.getvalue()
        w.raw(c.id)
        w.pack("2i", len(c.content), len(body))
        w.raw(c.content)
        w.raw(body)
    else:
        raise DocumentError(f"not a VOX chunk: {type(c).__name__}")


def write(doc: VoxFile) -> bytes:
    sub = Writer("<")
    for c in doc.chunks:
        _write_chunk(sub, c)
    body = sub.getvalue()
    w = Writer("<")
    w.raw(MAGIC)
    w.i32(doc.version)
    w.raw(b"MAIN")
    w.pack("2i", len(doc.main_content), len(body))
    w.raw(doc.main_content)
    w.raw(body)
    w.raw(doc.trailing)
    return w.getvalue()


# -- dictionaries and the scene graph ---------------------------------------------------

def parse_dict(r: Reader) -> dict[str, str]:
    n = r.count("dict size", 8)
    out = {}
    for _ in range(n):
        k = r.pstring("i", "dict key").decode("latin-1")
        v = r.pstring("i", "dict value").decode("latin-1")
        out[k] = v
    return out


def build_dict(w: Writer, d: dict[str, str]) -> None:
    w.i32(len(d))
    for k, v in d.items():
        w.pstring(str(k).encode("latin-1"), "i")
        w.pstring(str(v).encode("latin-1"), "i")


def scene_graph(doc: VoxFile) -> dict[str, Any]:
    """Parse nTRN/nGRP/nSHP/LAYR: ``{"nodes": {id: {...}}, "layers": {id: {...}}}``."""
    nodes: dict[int, dict[str, Any]] = {}
    layers: dict[int, dict[str, str]] = {}
    for i, c in enumerate(doc.chunks):
        if not isinstance(c, VoxChunk) or c.id not in (b"nTRN", b"nGRP", b"nSHP", b"LAYR"):
            continue
        r = Reader(c.content)
        with r.at(f"chunks[{i}].{c.id.decode()}"):
            nid = r.i32("id")
            attrs = parse_dict(r)
            if c.id == b"LAYR":
                layers[nid] = attrs
                continue
            node: dict[str, Any] = {"type": c.id.decode(), "attrs": attrs}
            if c.id == b"nTRN":
                child, _reserved, layer = r.unpack("3i", "nTRN")
                frames = r.count("frames", 4)
                node.update(child=child, layer=layer,
                            frames=[parse_dict(r) for _ in range(frames)])
            elif c.id == b"nGRP":
                n = r.count("children", 4)
                node["children"] = list(r.unpack(f"{n}i", "children"))
            else:
                n = r.count("models", 8)
                node["models"] = []
                for _ in range(n):
                    mid = r.i32("model id")
                    node["models"].append((mid, parse_dict(r)))
            nodes[nid] = node
    return {"nodes": nodes, "layers": layers}


#: the most cells (sum of SIZE volumes) :func:`models` decodes: a SIZE chunk costs 24 bytes
#: but its dense grid up to 16.7M cells, and meshing or converting one takes ~0.1 s; this
#: bounds a hostile file to seconds (64 models of 256^3)
MAX_CELLS = 1 << 30


def models(doc: VoxFile) -> list[VoxelGrid]:
    """Each SIZE+XYZI pair as a grid (colour = vox index 1..255, normal 0)."""
    out: list[VoxelGrid] = []
    size: VoxSize | None = None
    cells = 0
    for c in doc.chunks:
        if isinstance(c, VoxSize):
            size = c
        elif isinstance(c, VoxXyzi):
            if size is None:
                raise FormatError("a SIZE chunk before XYZI", path=f"models[{len(out)}]")
            shape = (size.x, size.y, size.z)
            if min(shape) < 0 or max(shape) > 256:
                raise FormatError("model sizes of 0..256", path=f"models[{len(out)}].SIZE",
                                  got=shape)
            cells += shape[0] * shape[1] * shape[2]
            if cells > MAX_CELLS:
                raise FormatError(f"models of at most {MAX_CELLS} cells in all (64 of 256^3)",
                                  path=f"models[{len(out)}].SIZE", got=f"{cells} cells")
            g = VoxelGrid.empty(shape)
            v = c.voxels
            ok = (v["x"] < shape[0]) & (v["y"] < shape[1]) & (v["z"] < shape[2]) & (v["i"] > 0)
            if not ok.all():
                warnings.warn(f"model {len(out)}: {int((~ok).sum())} voxels outside the model "
                              f"size or with colour 0 (dropped)", LossWarning, stacklevel=2)
            v = v[ok]
            idx = (v["x"].astype(np.intp), v["y"].astype(np.intp), v["z"].astype(np.intp))
            g.mask[idx] = True
            g.colour[idx] = v["i"]
            out.append(g)
            size = None
    return out


def palette_of(doc: VoxFile) -> np.ndarray:
    for c in doc.chunks:
        if isinstance(c, VoxRgba):
            return np.asarray(c.colors, np.uint8)
    return DEFAULT_PALETTE


def _default_palette() -> np.ndarray:
    # MagicaVoxel's default: a 6x6x6 cube (ff, cc, 99, 66, 33, 00) then ramps of red, green,
    # blue and grey; entry k is index k + 1
    steps = [0xFF, 0xCC, 0x99, 0x66, 0x33, 0x00]
    cube = [(r, g, b) for b in steps for g in steps for r in steps][:215]
    ramp = [0xEE, 0xDD, 0xBB, 0xAA, 0x88, 0x77, 0x55, 0x44, 0x22, 0x11]
    rest = ([(v, 0, 0) for v in ramp] + [(0, v, 0) for v in ramp] + [(0, 0, v) for v in ramp]
            + [(v, v, v) for v in ramp])
    rgb = np.array(cube + rest + [(0, 0, 0)], np.uint8)[:256]
    out = np.full((256, 4), 255, np.uint8)
    out[:len(rgb), :3] = rgb
    return out


DEFAULT_PALETTE = _default_palette()


def rotation_matrix(r: int) -> np.ndarray:
    """The 3x3 matrix of a ``_r`` byte (row indices in bits 0-1 and 2-3, signs in 4-6)."""
    i0, i1 = r & 3, (r >> 2) & 3
    if i0 > 2 or i1 > 2 or i0 == i1:
        return np.eye(3)
    i2 = 3 - i0 - i1
    m = np.zeros((3, 3))
    m[0, i0] = -1.0 if r & 16 else 1.0
    m[1, i1] = -1.0 if r & 32 else 1.0
    m[2, i2] = -1.0 if r & 64 else 1.0
    return m


def placements(doc: VoxFile, n_models: int, trn: list[int] | None = None
                ) -> list[tuple[int, np.ndarray, dict[str, str]]]:
    """(model, 4x4 world matrix in vox units, nTRN attributes) for every shape instance;
    ``trn`` (when given) receives the node id of each instance's nearest nTRN (-1: none)."""
    g = scene_graph(doc)
    nodes = g["nodes"]
    if 0 not in nodes:
        if trn is not None:
            trn.extend([-1] * n_models)
        return [(i, np.eye(4), {}) for i in range(n_models)]
    out = []
    seen: set[int] = set()
    stack: list[tuple[int, np.ndarray, dict[str, str], int, int]] = [(0, np.eye(4), {}, 0, -1)]
    while stack:
        nid, m, attrs, depth, above = stack.pop()
        if nid not in nodes:
            continue
        if nid in seen or depth > 256:
            raise FormatError("a scene graph that is a tree (each node used once)",
                              path=f"scene graph node {nid}", got="a node reached twice")
        seen.add(nid)
        node = nodes[nid]
        if node["type"] == "nTRN":
            f = node["frames"][0] if node["frames"] else {}
            t = np.eye(4)
            if "_r" in f:
                try:
                    t[:3, :3] = rotation_matrix(int(f["_r"]))
                except ValueError:
                    pass
            if "_t" in f:
                try:
                    t[:3, 3] = [float(v) for v in f["_t"].split()[:3]]
                except ValueError:
                    pass
                if not np.all(np.isfinite(t[:3, 3])):
                    raise FormatError("a finite translation", path=f"scene graph node {nid}._t",
                                      got=f["_t"])
            stack.append((node["child"], m @ t, node["attrs"], depth + 1, nid))
        elif node["type"] == "nGRP":
            for c in reversed(node["children"]):
                stack.append((c, m, attrs, depth + 1, above))
        else:
            for mid, _ in node["models"]:
                if 0 <= mid < n_models:
                    out.append((mid, m, attrs))
                    if trn is not None:
                        trn.append(above)
    return out


def instances(doc: VoxFile, grids: list[VoxelGrid]
               ) -> list[tuple[int, np.ndarray, dict[str, str]]]:
    """:func:`placements`, with the cells of all shape instances bounded by
    :data:`MAX_CELLS` (each instance is meshed or converted on its own: 60 bytes of nTRN +
    nSHP would otherwise buy another pass over a 256^3 model)."""
    out = placements(doc, len(grids))
    cells = 0
    for i, (mid, _, _) in enumerate(out):
        cells += grids[mid].mask.size
        if cells > MAX_CELLS:
            raise FormatError(f"shape instances of at most {MAX_CELLS} cells in all",
                              path=f"scene graph instance {i} (model {mid})",
                              got=f"{cells} cells")
    return out


def info(doc: VoxFile) -> dict[str, Any]:
    return {"models": len([c for c in doc.chunks if isinstance(c, VoxXyzi)]),
            "voxels": sum(len(c.voxels) for c in doc.chunks if isinstance(c, VoxXyzi)),
            "version": doc.version}
