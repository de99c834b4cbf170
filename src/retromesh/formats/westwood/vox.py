"""MagicaVoxel ``.vox`` files (read/write), their scene (to_scene; from_scene gives a kept
``.vox`` back, :mod:`.vox_keep`, else voxelises via :mod:`.voxelize`), and the direct
converters ``vxl -> vox`` and ``vox -> vxl`` (registered with ``registry.register_converter``).

``.vox -> .glb -> .vox`` (the plain path and Blender 4.2 / 4.5 alike) gives the file back byte
for byte when nothing was edited: the file rides in the root node's extras and the meshes are
compared with the ones ``to_scene`` makes of it (:mod:`.vox_keep`); an edited model is
voxelised again in its own SIZE with the file's palette, a moved one gets a new ``_t``.

Layout (little-endian)

| part | fields |
|---|---|
| header | ``char[4] "VOX "``, ``int32 version`` (150 or 200) |
| chunk | ``char[4] id``, ``int32 content_size``, ``int32 children_size``, content, children |
| MAIN | no content; children: ``PACK``? then ``SIZE``+``XYZI`` per model, scene graph, palette |
| SIZE | ``int32 x, y, z`` (model size, z up) |
| XYZI | ``int32 n``, ``n x (uint8 x, y, z, colour_index)``; colour index 1..255 (0 = empty) |
| RGBA | ``256 x uint8[4]``: entry ``k`` is the colour of index ``k + 1`` |
| nTRN | ``int32 node``, DICT (``_name``, ``_hidden``), ``int32 child, reserved (-1), layer, frames``, frames x DICT (``_r`` rotation byte, ``_t`` "x y z", ``_f``) |
| nGRP | ``int32 node``, DICT, ``int32 n``, n x ``int32 child`` |
| nSHP | ``int32 node``, DICT, ``int32 n``, n x (``int32 model``, DICT) |
| LAYR | ``int32 layer``, DICT (``_name``, ``_hidden``), ``int32 reserved`` |
| DICT | ``int32 n``, n x (STRING key, STRING value); STRING = ``int32 size`` + bytes |

Limits (hostile files): the SIZE volumes of all models add up to at most :data:`MAX_CELLS`
(a 24-byte SIZE would otherwise buy a 256^3 grid), and so do those of all shape instances
(nSHP references); a non-finite ``_t`` is a FormatError.

SIZE, XYZI and RGBA are decoded (numpy); every other chunk (scene graph, MATL, rOBJ, rCAM,
NOTE, IMAP, unknown ones) is kept as raw content + children, so files round-trip byte for
byte. The scene-graph chunks are parsed on demand (:func:`scene_graph`). A model's pivot is
``floor(size / 2)``; ``_t`` places that pivot.

Bridge to ``.vxl`` (both are Z-up voxel grids, so axes map one to one):

* palette: vox index ``c`` (1..255) <-> vxl colour ``c``; the vxl colour 0 (a present voxel in
  VXL, impossible in VOX) is stored in the unused RGBA entry 255 and its voxels take the
  nearest other palette colour (LossWarning; ``vxl_colour0`` lists them so that an unedited
  model gets colour 0 back).
* limbs <-> models: one SIZE/XYZI per limb under its own nTRN (``_name`` = limb name, layer
  = a LAYR per limb named like it). The tailer fields that VOX cannot express (bounds,
  scale, matrix, normal table, raw name, header words) ride along as ``vxl_*`` keys of the
  nTRN dictionary, so ``vxl -> vox -> vxl`` restores them; editors ignore such keys.
* normals: VOX has none. ``vxl -> vox`` keeps them as ``vxl_normals`` (hex, XYZI order) with
  ``vxl_voxels`` (size, count, CRC-32 of the filled positions); ``vox -> vxl`` restores them
  when the positions are unchanged and the table is the same, else recomputes them from the
  shape (outward direction of the empty neighbourhood, nearest entry of the table: the
  limb's own, or ``normal_type=2|4`` / ``game=ts|ra2``, RA2 for foreign files). On the corpus,
  vxl -> vox -> vxl gives back 39 of 39 .vxl byte for byte.
* placement: frame 0 of the ``.hva`` beside the source (else the tailer) places each model
  (translation only: rotated limbs get a LossWarning); all HVA frames ride along as
  ``vxl_hva`` and come back in the ``.hva`` companion that ``vox -> vxl`` always writes (the
  games need one): 36 of 37 corpus .hva come back byte for byte (``tsjeep.hva`` has one
  section for two limbs and comes back with two).
"""
from __future__ import annotations

import struct
import warnings
import zlib
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError, FormatError, LossWarning
from ...records import record
from ...registry import Format, register, register_converter
from ...scene import Node, Scene
from .hva import HvaFile
from .voxels import VoxelGrid, normal_indices
from .vxl import Limb, VxlFile

__all__ = [
    "DEFAULT_PALETTE",
    "MAX_CELLS",
    "VoxChunk",
    "VoxFile",
    "VoxRgba",
    "VoxSize",
    "VoxXyzi",
    "build_dict",
    "models",
    "parse_dict",
    "read",
    "scene_graph",
    "vox_to_vxl",
    "vxl_to_vox",
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
    out = []
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


def _rotation(r: int) -> np.ndarray:
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


def _placements(doc: VoxFile, n_models: int, trn: list[int] | None = None
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
                    t[:3, :3] = _rotation(int(f["_r"]))
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


def _instances(doc: VoxFile, grids: list[VoxelGrid]
               ) -> list[tuple[int, np.ndarray, dict[str, str]]]:
    """:func:`_placements`, with the cells of all shape instances bounded by
    :data:`MAX_CELLS` (each instance is meshed or converted on its own: 60 bytes of nTRN +
    nSHP would otherwise buy another pass over a 256^3 model)."""
    out = _placements(doc, len(grids))
    cells = 0
    for i, (mid, _, _) in enumerate(out):
        cells += grids[mid].mask.size
        if cells > MAX_CELLS:
            raise FormatError(f"shape instances of at most {MAX_CELLS} cells in all",
                              path=f"scene graph instance {i} (model {mid})",
                              got=f"{cells} cells")
    return out


def to_scene(doc: VoxFile, *, source: Path | None = None, greedy: bool = True,
             scale: float = 1.0) -> Scene:
    from .scene import grid_scene, positive_option
    scale = positive_option("scale", scale)
    grids = models(doc)
    pal = palette_of(doc)
    # vox index c uses RGBA[c - 1]: shift so that grid colours index a 256-entry palette
    palette = np.zeros((256, 3), np.uint8)
    palette[1:] = pal[:255, :3]
    name = Path(source).stem if source is not None else "vox"
    scene = Scene(name=name, extras={"format": "vox"})
    root = scene.add_node(Node(name=name, scale=np.full(3, float(scale))))
    items = []
    mats = []
    for mid, m, attrs in _instances(doc, grids):
        g = grids[mid]
        limb = Limb(name=(attrs.get("_name") or f"model{mid}").encode("latin-1")[:15]
                    .ljust(16, b"\0"), xsize=g.size[0], ysize=g.size[1], zsize=g.size[2],
                    normal_type=4)
        pivot = np.floor(np.array(g.size) / 2)
        limb.bounds_min = (-pivot).astype(np.float32)
        limb.bounds_max = (limb.bounds_min + np.array(g.size)).astype(np.float32)
        items.append((g, limb))
        mats.append(m[None])
    # a model that came from a .vxl keeps its player-remap range in the root's vxl_header
    remap = (256, 256)
    head = scene_graph(doc)["nodes"].get(0, {}).get("attrs", {}).get("vxl_header", "").split()
    if len(head) == 3 and all(h.isdigit() for h in head):
        remap = (int(head[1]), int(head[2]))
    nodes = grid_scene(scene, items, palette, remap, mats, root, greedy, "face")
    # the file itself, so that from_scene can give it back (see .vox_keep)
    from . import vox_keep
    for k, node in enumerate(nodes):
        scene.nodes[node].extras[vox_keep.INSTANCE_KEY] = k
    scene.nodes[root].extras[vox_keep.FILE_KEY] = vox_keep.file_extras(write(doc), greedy,
                                                                       len(nodes))
    return scene


# -- converters ---------------------------------------------------------------------------

def _dict_bytes(d: dict[str, str]) -> bytes:
    w = Writer("<")
    build_dict(w, d)
    return w.getvalue()


def _floats(a) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(a, np.float32).reshape(-1))


def vxl_to_vox(doc: VxlFile, *, source: Path | None = None, hva: Any = None,
               **options: Any) -> VoxFile:
    """A MagicaVoxel file with one model per limb (see the module docstring). The limbs are
    placed by frame 0 of the ``.hva`` found beside the source (or given), else by the
    tailers; the HVA's frames ride along so that ``vox -> vxl`` writes them back."""
    from .scene import _find_hva, limb_matrices, match_sections
    hdoc, _ = _find_hva(Path(source) if source is not None else None, hva)
    sections: list[int | None] = [None] * len(doc.limbs)
    if hdoc is not None and hdoc.frames and hdoc.matrices.shape[1]:
        sections = match_sections([limb.name for limb in doc.limbs], hdoc.section_names)
    else:
        hdoc = None
    out = VoxFile(version=150)
    pal = np.asarray(doc.palette, np.uint8)
    rgba = np.full((256, 4), 255, np.uint8)
    rgba[:255, :3] = pal[1:]
    rgba[255, :3] = pal[0]
    # nearest non-zero palette entry for colour 0
    d = ((pal[1:].astype(np.int64) - pal[0].astype(np.int64)) ** 2).sum(1)
    zero_to = int(np.argmin(d)) + 1
    n_zero = 0
    graph: list[VoxChunk] = []
    limb_ids = []
    rotated: list[str] = []
    for i, limb in enumerate(doc.limbs):
        g = limb.voxels()
        if max(g.size) > 256:
            raise DocumentError(f"limb {i} is larger than a MagicaVoxel model (256)")
        x, y, z = np.nonzero(g.mask)
        c = g.colour[x, y, z].copy()
        zeros = np.flatnonzero(c == 0).astype("<u4")
        n_zero += len(zeros)
        c[zeros] = zero_to
        vox = np.zeros(len(x), XYZI_DTYPE)
        vox["x"], vox["y"], vox["z"], vox["i"] = x, y, z, c
        out.chunks.append(VoxSize(*g.size))
        out.chunks.append(VoxXyzi(vox))
        sec = sections[i]
        hm = None if sec is None or hdoc is None else hdoc.matrices[:, sec]
        m = limb_matrices(limb, None if hm is None else hm[:1], f"limbs[{i}]")[0]
        if np.abs(m[:3, :3] - np.eye(3)).max() > 1e-3:
            rotated.append(limb.label)
        pivot = np.floor(np.array(g.size) / 2)
        size = np.maximum(np.array(limb.size, np.float64), 1)
        k = (limb.bounds_max.astype(np.float64) - limb.bounds_min) / size
        centre = m[:3, :3] @ (limb.bounds_min + pivot * k) + m[:3, 3]
        attrs = {"_name": limb.label, "vxl_name": limb.name.hex(),
                 "vxl_header": f"{limb.index} {limb.unknown1} {limb.unknown2}",
                 "vxl_scale": repr(float(limb.scale)),
                 "vxl_transform": _floats(limb.transform),
                 "vxl_bounds": _floats(np.concatenate([limb.bounds_min, limb.bounds_max])),
                 "vxl_normal_type": str(limb.normal_type)}
        attrs["vxl_normals"] = g.normal[x, y, z].tobytes().hex()
        attrs["vxl_voxels"] = _shape_key(g.mask)
        if len(zeros):
            attrs["vxl_colour0"] = f"{zero_to}:{zeros.tobytes().hex()}"
        if hm is not None:
            attrs["vxl_hva"] = _floats(hm)
            attrs["vxl_hva_section"] = bytes(hdoc.section_names[sec]).hex()
        limb_ids.append((i, attrs, centre))
    if rotated:
        warnings.warn(f"limbs {rotated} are rotated: .vox places them by translation only",
                      LossWarning, stacklevel=2)
    if n_zero:
        warnings.warn(f"{n_zero} voxels of colour 0 (not representable in .vox) use the nearest "
                      f"colour {zero_to}", LossWarning, stacklevel=2)
    # scene graph: 0 nTRN -> 1 nGRP -> per limb nTRN (2+2i) -> nSHP (3+2i)
    n = len(limb_ids)
    w = Writer("<")
    w.i32(0)
    root_attrs = {"vxl_header": f"{doc.palette_count} {doc.remap_start} {doc.remap_end}",
                  "vxl_magic": doc.magic.hex()}
    if hdoc is not None:
        root_attrs["vxl_hva_name"] = bytes(hdoc.name).hex()
        root_attrs["vxl_hva_frames"] = str(hdoc.frames)
    build_dict(w, root_attrs)
    w.pack("4i", 1, -1, -1, 1)
    build_dict(w, {})
    graph.append(VoxChunk(b"nTRN", w.getvalue()))
    w = Writer("<")
    w.i32(1)
    build_dict(w, {})
    w.i32(n)
    w.pack(f"{n}i", *[2 + 2 * i for i in range(n)])
    graph.append(VoxChunk(b"nGRP", w.getvalue()))
    for i, attrs, centre in limb_ids:
        w = Writer("<")
        w.i32(2 + 2 * i)
        build_dict(w, attrs)
        w.pack("4i", 3 + 2 * i, -1, i, 1)
        t = np.rint(centre).astype(np.int64)
        build_dict(w, {"_t": f"{t[0]} {t[1]} {t[2]}"})
        graph.append(VoxChunk(b"nTRN", w.getvalue()))
        w = Writer("<")
        w.i32(3 + 2 * i)
        build_dict(w, {})
        w.pack("2i", 1, i)
        build_dict(w, {})
        graph.append(VoxChunk(b"nSHP", w.getvalue()))
    out.chunks.extend(graph)
    for i, attrs, _ in limb_ids:
        w = Writer("<")
        w.i32(i)
        build_dict(w, {"_name": attrs["_name"]})
        w.i32(-1)
        out.chunks.append(VoxChunk(b"LAYR", w.getvalue()))
    out.chunks.append(VoxRgba(rgba))
    return out


def _shape_key(mask: np.ndarray) -> str:
    """Size, count and CRC-32 of the filled positions: tells whether an editor changed them."""
    flat = np.flatnonzero(mask).astype("<u4")
    return f"{'x'.join(map(str, mask.shape))}:{len(flat)}:{zlib.crc32(flat.tobytes()):08x}"


def _parse_floats(text: str | None, n: int) -> np.ndarray | None:
    if not text:
        return None
    try:
        v = np.array([float(t) for t in text.split()], np.float32)
    except ValueError:
        return None
    return v if len(v) == n else None


def vox_to_vxl(doc: VoxFile, *, source: Path | None = None, normal_type: int | None = None,
               game: str | None = None, **options: Any) -> dict[str, Any]:
    """A ``.vxl`` + ``.hva`` from a MagicaVoxel file: one limb per shape.

    The normal table is ``normal_type`` (2 TS, 4 RA2) or ``game`` ("ts"/"ra2") when given,
    else the table a limb came from (``vxl_normal_type``), else RA2. Normals kept from a
    ``vxl -> vox`` conversion are restored when the limb's voxels were not edited and the table
    is the same; otherwise they are recomputed from the shape."""
    if game is not None:
        if str(game).lower() not in ("ts", "ra2"):
            raise DocumentError(f"game must be 'ts' or 'ra2', got {game!r}")
        normal_type = {"ts": 2, "ra2": 4}[str(game).lower()]
    if normal_type is not None and normal_type not in (2, 4):
        raise DocumentError(f"normal_type must be 2 (TS) or 4 (RA2), got {normal_type}")
    chosen = normal_type
    grids = models(doc)
    rgba = palette_of(doc)
    out = VxlFile()
    pal = np.zeros((256, 3), np.uint8)
    pal[1:] = rgba[:255, :3]
    pal[0] = rgba[255, :3]
    out.palette = pal
    root = scene_graph(doc)["nodes"].get(0, {}).get("attrs", {})
    head = root.get("vxl_header", "").split()
    if len(head) == 3 and all(h.isdigit() for h in head):
        out.palette_count, out.remap_start, out.remap_end = (int(h) for h in head)
    try:
        magic = bytes.fromhex(root.get("vxl_magic", ""))
        if len(magic) == 16:
            out.magic = magic
    except ValueError:
        pass
    matrices = []
    hva_names = []
    try:
        frames = int(root.get("vxl_hva_frames", "0"))
    except ValueError:
        frames = 0
    for k, (mid, m, attrs) in enumerate(_instances(doc, grids)):
        g = grids[mid]
        if max(g.size) > 255:
            raise DocumentError(f"model {mid} is {g.size}: VXL limbs are at most 255 a side")
        grid = VoxelGrid(g.colour.copy(), np.zeros(g.size, np.uint8), g.mask.copy())
        stored = attrs.get("vxl_normals")
        source_table = attrs.get("vxl_normal_type")
        normal_type = chosen
        if normal_type is None:
            normal_type = int(source_table) if source_table in ("2", "4") else 4
        same_table = source_table == str(normal_type)
        if (stored is not None and same_table and attrs.get("vxl_voxels") == _shape_key(g.mask)
                and len(stored) == 2 * g.count):
            try:
                grid.normal[g.mask] = np.frombuffer(bytes.fromhex(stored), np.uint8)
            except ValueError:
                stored = None
        else:
            stored = None
        zero = attrs.get("vxl_colour0", "")
        if zero and attrs.get("vxl_voxels") == _shape_key(g.mask):
            # voxels of vxl colour 0 (stored under the nearest colour): put 0 back where the
            # colour was not edited
            try:
                to, hexed = zero.split(":", 1)
                order = np.frombuffer(bytes.fromhex(hexed), "<u4")
                xs_, ys_, zs_ = np.nonzero(g.mask)
                order = order[order < len(xs_)]
                at = (xs_[order], ys_[order], zs_[order])
                keep = grid.colour[at] == int(to)
                grid.colour[tuple(a[keep] for a in at)] = 0
            except ValueError:
                pass
        if stored is None:                   # edited (or foreign) model: recompute
            normals = normal_indices(g.mask, normal_type)
            grid.normal[g.mask] = normals[g.mask]
        full = (attrs.get("_name") or f"model{mid}").encode("latin-1", "replace")
        name = full[:15].ljust(16, b"\0")
        try:
            # the raw field (garbage after the NUL) unless the name was edited
            raw = bytes.fromhex(attrs.get("vxl_name", ""))
            if len(raw) == 16 and raw.split(b"\0", 1)[0] == full:
                name = raw
        except ValueError:
            pass
        limb = Limb.from_grid(grid, name=name, index=k, normal_type=normal_type)
        hdr = attrs.get("vxl_header", "").split()
        if len(hdr) == 3 and all(h.isdigit() for h in hdr):
            limb.unknown1, limb.unknown2 = int(hdr[1]), int(hdr[2])
        tr = _parse_floats(attrs.get("vxl_transform"), 12)
        bounds = _parse_floats(attrs.get("vxl_bounds"), 6)
        scale = _parse_floats(attrs.get("vxl_scale"), 1)
        if tr is not None and bounds is not None and scale is not None:
            limb.transform = tr.reshape(3, 4)
            limb.bounds_min, limb.bounds_max = bounds[:3].copy(), bounds[3:].copy()
            limb.scale = float(scale[0])
        else:
            pivot = np.floor(np.array(g.size) / 2)
            limb.bounds_min = (-pivot).astype(np.float32)
            limb.bounds_max = (limb.bounds_min + np.array(g.size)).astype(np.float32)
            t = np.eye(3, 4, dtype=np.float32)
            t[:, :3] = m[:3, :3]
            t[:, 3] = m[:3, 3]
            limb.transform = t
        out.limbs.append(limb)
        kept = _parse_floats(attrs.get("vxl_hva"), frames * 12) if frames else None
        if kept is not None:
            matrices.append(kept.reshape(frames, 3, 4))
        else:
            hm = np.asarray(limb.transform, np.float32).copy()
            hm[:, 3] = hm[:, 3] / np.float32(limb.scale if limb.scale else 1.0)
            matrices.append(hm[None])
        section = name.split(b"\0", 1)[0].ljust(16, b"\0")
        try:
            raw_section = bytes.fromhex(attrs.get("vxl_hva_section", ""))
            if len(raw_section) == 16:
                section = raw_section
        except ValueError:
            pass
        hva_names.append(section)
    n_frames = max((len(mm) for mm in matrices), default=1)
    stacked = np.stack([mm if len(mm) == n_frames else np.repeat(mm[:1], n_frames, 0)
                        for mm in matrices], axis=1) if matrices else np.zeros((1, 0, 3, 4))
    hva_name = b"retromesh".ljust(16, b"\0")
    try:
        raw_name = bytes.fromhex(root.get("vxl_hva_name", ""))
        if len(raw_name) == 16:
            hva_name = raw_name
    except ValueError:
        pass
    h = HvaFile(name=hva_name, section_names=hva_names,
                matrices=np.asarray(stacked, np.float32))
    return {"": out, ".hva": h}


def from_scene(scene: Scene, *, native: bool = True, **options: Any) -> VoxFile:
    """Voxelise a scene (see :mod:`.voxelize`; same options) into a MagicaVoxel file; a scene
    made from a ``.vox`` gives that file back (edited models voxelised again in their own
    grids: :mod:`.vox_keep`) unless ``native=False`` or a voxelisation option (``resolution``,
    ``voxel_size``, ``game``) is given."""
    from .voxelize import from_scene as voxelize
    if native and all(options.get(k) is None for k in ("resolution", "voxel_size", "game")):
        from .vox_keep import restore
        kept = restore(scene)
        if kept is not None:
            return kept
    return vxl_to_vox(voxelize(scene, native=native, **options)[""])


register(Format(
    name="vox", family="Westwood",
    description="MagicaVoxel voxel models (bridge for .vxl editing)",
    extensions=("vox",), doc_types=(VoxFile,), sniff=sniff, magic_certain=True, read=read,
    write=write, to_scene=to_scene, from_scene=from_scene, endian="<",
    scene_options=("source", "greedy"),
    info=lambda d: {"models": len([c for c in d.chunks if isinstance(c, VoxXyzi)]),
                    "voxels": sum(len(c.voxels) for c in d.chunks if isinstance(c, VoxXyzi)),
                    "version": d.version}))

register_converter("vxl", "vox", vxl_to_vox)
register_converter("vox", "vxl", vox_to_vxl)
