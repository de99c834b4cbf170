"""Blitz3D ``.b3d`` (Blitz3D, Irrlicht, Minetest/Luanti, assimp).

Layout (little-endian; every chunk is ``char tag[4]; int32 length`` followed by ``length``
bytes; a chunk's fixed data comes first, then child chunks until its end):

=======  ======================================================================  =============
chunk    fixed data                                                              children
=======  ======================================================================  =============
BB3D     int32 version                                                           TEXS BRUS NODE
TEXS     { cstring file; int32 flags, blend; float32 pos[2], scale[2], rotation }  —
BRUS     int32 n_texs; { cstring name; float32 rgba[4], shininess;                —
         int32 blend, fx; int32 texture_id[n_texs] }
NODE     cstring name; float32 position[3], scale[3], rotation[4] (w, x, y, z)   MESH|BONE KEYS* NODE* ANIM
MESH     int32 brush_id                                                          VRTS TRIS+
VRTS     int32 flags, tex_coord_sets, tex_coord_set_size;                         —
         { float32 xyz[3]; [normal[3] if flags&1]; [rgba[4] if flags&2];
         tex_coords[sets][size] }
TRIS     int32 brush_id; { int32 vertex_id[3] }                                   —
BONE     { int32 vertex_id; float32 weight }                                      —
KEYS     int32 flags; { int32 frame; [position[3] if flags&1]; [scale[3] if flags&2];
         [rotation[4] (w, x, y, z) if flags&4] }                                  —
ANIM     int32 flags, frames; float32 fps                                         —
=======  ======================================================================  =============

Native model: every chunk becomes a dataclass in file order (unknown chunks are kept as
:class:`RawChunk` where they stand; a few bytes too short to form a chunk at the end of a
parent are kept as ``tail``; bytes after the BB3D chunk as ``trailing``), so ``write(read(f))``
is byte-identical. Bulk data (vertices, triangles, weights, keys) are numpy record arrays.

Where we differ from the spec text, and why (format-facts B; the engines' loaders):

* The version is not checked (Blitz3D rejects > 1, Irrlicht ignores it); we write 1.
* ``tex_coord_set_size`` > 4 or ``tex_coord_sets`` > 8 are rejected as corrupt (Blitz's buffer is
  4 floats; the spec's maxima). A VRTS payload that is not a whole number of vertices is corrupt.
* Several TRIS per MESH and several KEYS per NODE are normal; keys of several KEYS chunks of one
  node are merged per channel on conversion (a later key at the same frame wins).
* BONE vertex ids refer to the most recent MESH before the BONE chunk in file order (Irrlicht's
  rule; in practice the mesh of the node that holds the ANIM).
* Quaternions are stored ``w, x, y, z`` and rotate by the conjugate of the usual reading
  (Blitz's matrix uses the transpose); together with the left-handed axes the conversion to
  glTF is: position ``(x, y, -z)``, rotation ``(w, x, y, z) -> [x, y, -z, w]``, normals
  ``(x, y, -z)``, triangle winding reversed. UVs are top-left based like glTF: no flip.
* Key frames usually start at 1. glTF time = ``(frame - first frame of the ANIM) / fps``; fps 60
  when ANIM says 0 or less. Keys beyond ``ANIM.frames`` are kept (the clip just gets longer; assimp
  fails validation there). Each ANIM chunk gives one animation covering the keys of its subtree
  (assimp drops them all when there are several).
* Skinning follows Blitz: the mesh node is joint 0 and every node with a BONE chunk is a joint;
  per vertex the 4 largest weights are kept and renormalised; vertices without weight follow
  the mesh node. The bind pose is the NODE rest transform (not the first key).

Quirks of the engines that read these files, documented for users, not imitated:

* Irrlicht (Minetest/Luanti) ignores a BONE chunk of 8 bytes or less, i.e. a bone with exactly
  one weight entry has no effect there; ``check`` reports such bones.
* Irrlicht subtracts 1 from frame numbers (1-based frames) and rejects ``tex_coord_sets >= 3`` or
  ``tex_coord_set_size >= 4``; ``from_scene`` writes at most 2 sets of size 2 and frames from 1.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from ..binio import Reader, Writer
from ..errors import DocumentError, LossWarning
from ..registry import Format, register
from ..scene import (Animation, Channel, Material, Mesh, Node, Primitive, Scene, Skin, Texture,
                     TextureRef)
from ..transforms import decompose_trs, inverse, quat_continuous

__all__ = ["B3dFile", "TextureEntry", "Texs", "BrushEntry", "Brus", "NodeChunk", "MeshChunk",
           "Vrts", "Tris", "Bone", "Keys", "AnimChunk", "RawChunk", "read", "write",
           "to_scene", "from_scene", "vrts_dtype", "keys_dtype"]

BONE_DTYPE = np.dtype([("vertex", "<i4"), ("weight", "<f4")])
TRI_DTYPE = np.dtype("<i4")


def vrts_dtype(flags: int, sets: int, size: int) -> np.dtype:
    fields: list[tuple] = [("position", "<f4", (3,))]
    if flags & 1:
        fields.append(("normal", "<f4", (3,)))
    if flags & 2:
        fields.append(("color", "<f4", (4,)))
    if sets and size:
        fields.append(("uv", "<f4", (sets, size)))
    return np.dtype(fields)


def keys_dtype(flags: int) -> np.dtype:
    fields: list[tuple] = [("frame", "<i4")]
    if flags & 1:
        fields.append(("position", "<f4", (3,)))
    if flags & 2:
        fields.append(("scale", "<f4", (3,)))
    if flags & 4:
        fields.append(("rotation", "<f4", (4,)))
    return np.dtype(fields)


# -- native document -----------------------------------------------------------------------

@dataclass
class TextureEntry:
    file: bytes
    flags: int = 1
    blend: int = 2
    position: tuple[float, float] = (0.0, 0.0)
    scale: tuple[float, float] = (1.0, 1.0)
    rotation: float = 0.0


@dataclass
class Texs:
    textures: list[TextureEntry] = field(default_factory=list)


@dataclass
class BrushEntry:
    name: bytes
    color: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    shininess: float = 0.0
    blend: int = 1
    fx: int = 0
    texture_ids: list[int] = field(default_factory=list)


@dataclass
class Brus:
    n_texs: int = 0
    brushes: list[BrushEntry] = field(default_factory=list)


@dataclass
class Vrts:
    flags: int
    tex_coord_sets: int
    tex_coord_set_size: int
    vertices: np.ndarray          # vrts_dtype(flags, sets, size)


@dataclass
class Tris:
    brush_id: int
    triangles: np.ndarray         # (n, 3) int32


@dataclass
class RawChunk:
    """A chunk this reader does not interpret (kept byte for byte)."""
    tag: bytes
    payload: bytes


@dataclass
class MeshChunk:
    brush_id: int = -1
    children: list[Union[Vrts, Tris, RawChunk]] = field(default_factory=list)
    tail: bytes = b""

    @property
    def vrts(self) -> Vrts | None:
        return next((c for c in self.children if isinstance(c, Vrts)), None)

    @property
    def tris(self) -> list[Tris]:
        return [c for c in self.children if isinstance(c, Tris)]


@dataclass
class Bone:
    weights: np.ndarray           # BONE_DTYPE records


@dataclass
class Keys:
    flags: int
    keys: np.ndarray              # keys_dtype(flags) records


@dataclass
class AnimChunk:
    flags: int = 0
    frames: int = 0
    fps: float = 60.0


@dataclass
class NodeChunk:
    name: bytes
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rotation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)   # w, x, y, z
    children: list[Union["MeshChunk", Bone, Keys, "NodeChunk", AnimChunk, RawChunk]] = \
        field(default_factory=list)
    tail: bytes = b""

    @property
    def mesh(self) -> MeshChunk | None:
        return next((c for c in self.children if isinstance(c, MeshChunk)), None)

    @property
    def nodes(self) -> list["NodeChunk"]:
        return [c for c in self.children if isinstance(c, NodeChunk)]


@dataclass
class B3dFile:
    version: int = 1
    children: list[Union[Texs, Brus, NodeChunk, RawChunk]] = field(default_factory=list)
    tail: bytes = b""
    trailing: bytes = b""

    @property
    def textures(self) -> list[TextureEntry]:
        return [t for c in self.children if isinstance(c, Texs) for t in c.textures]

    @property
    def brushes(self) -> list[BrushEntry]:
        return [b for c in self.children if isinstance(c, Brus) for b in c.brushes]

    @property
    def root_nodes(self) -> list[NodeChunk]:
        return [c for c in self.children if isinstance(c, NodeChunk)]

    def walk(self):
        """Every NODE in file (pre-)order with its depth."""
        stack = [(n, 0) for n in reversed(self.root_nodes)]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            stack.extend((c, depth + 1) for c in reversed(node.nodes))


# -- reading -------------------------------------------------------------------------------

def _read_texs(r: Reader) -> Texs:
    out = Texs()
    while not r.eof():
        with r.at(f"textures[{len(out.textures)}]"):
            name = r.cstring("file name")
            flags, blend = r.unpack("ii", "flags, blend")
            f = r.unpack("5f", "position, scale, rotation")
            out.textures.append(TextureEntry(name, flags, blend, (f[0], f[1]), (f[2], f[3]), f[4]))
    return out


def _read_brus(r: Reader) -> Brus:
    n = r.i32("n_texs")
    if not 0 <= n <= 8:
        raise r.fail("n_texs between 0 and 8", n, offset=r.pos - 4, field="n_texs")
    out = Brus(n_texs=n)
    while not r.eof():
        with r.at(f"brushes[{len(out.brushes)}]"):
            name = r.cstring("name")
            f = r.unpack("5f", "colour, shininess")
            blend, fx = r.unpack("ii", "blend, fx")
            ids = list(r.unpack(f"{n}i", "texture ids")) if n else []
            out.brushes.append(BrushEntry(name, f[:4], f[4], blend, fx, ids))
    return out


def _read_vrts(r: Reader) -> Vrts:
    flags, sets, size = r.unpack("iii", "flags, tex_coord_sets, tex_coord_set_size")
    if not 0 <= sets <= 8:
        raise r.fail("tex_coord_sets between 0 and 8", sets, offset=r.pos - 8)
    if not 0 <= size <= 4:
        raise r.fail("tex_coord_set_size between 0 and 4", size, offset=r.pos - 4)
    dt = vrts_dtype(flags, sets, size)
    n, rest = divmod(r.remaining, dt.itemsize)
    if rest:
        raise r.fail(f"a whole number of {dt.itemsize}-byte vertices", f"{rest} bytes over")
    return Vrts(flags, sets, size, r.records(dt, n, "vertices"))


def _read_tris(r: Reader) -> Tris:
    brush = r.i32("brush_id")
    n, rest = divmod(r.remaining, 12)
    if rest:
        raise r.fail("a whole number of 12-byte triangles", f"{rest} bytes over")
    return Tris(brush, r.records(TRI_DTYPE, 3 * n, "triangles").reshape(n, 3))


def _read_bone(r: Reader) -> Bone:
    n, rest = divmod(r.remaining, 8)
    if rest:
        raise r.fail("a whole number of 8-byte weights", f"{rest} bytes over")
    return Bone(r.records(BONE_DTYPE, n, "weights"))


def _read_keys(r: Reader) -> Keys:
    flags = r.i32("flags")
    dt = keys_dtype(flags)
    n, rest = divmod(r.remaining, dt.itemsize)
    if rest:
        raise r.fail(f"a whole number of {dt.itemsize}-byte keys", f"{rest} bytes over")
    return Keys(flags, r.records(dt, n, "keys"))


def _read_anim(r: Reader) -> AnimChunk:
    flags, frames = r.unpack("ii", "flags, frames")
    return AnimChunk(flags, frames, r.f32("fps"))


def _read_mesh(r: Reader) -> MeshChunk:
    m = MeshChunk(r.i32("brush_id"))
    m.children, m.tail = _read_children(r)
    return m


def _read_node(r: Reader) -> NodeChunk:
    name = r.cstring("name")
    f = r.unpack("10f", "position, scale, rotation")
    n = NodeChunk(name, f[0:3], f[3:6], f[6:10])
    n.children, n.tail = _read_children(r)
    return n


_READERS = {b"TEXS": _read_texs, b"BRUS": _read_brus, b"NODE": _read_node, b"MESH": _read_mesh,
            b"VRTS": _read_vrts, b"TRIS": _read_tris, b"BONE": _read_bone, b"KEYS": _read_keys,
            b"ANIM": _read_anim}


def _read_children(r: Reader) -> tuple[list, bytes]:
    out: list = []
    counts: dict[bytes, int] = {}
    while r.remaining >= 8:
        tag = r.raw(4, "chunk tag")
        length = r.i32("chunk length")
        label = tag.decode("latin-1")
        k = counts.get(tag, 0)
        counts[tag] = k + 1
        with r.chunk(length, f"{label}[{k}]" if k else label, skip_rest=False):
            reader = _READERS.get(tag)
            out.append(reader(r) if reader else RawChunk(tag, r.rest()))
    return out, r.rest()


def read(r: Reader) -> B3dFile:
    tag = r.raw(4, "BB3D tag")
    if tag != b"BB3D":
        raise r.fail("the chunk tag 'BB3D'", tag, offset=0)
    length = r.i32("BB3D length")
    doc = B3dFile()
    with r.chunk(length, "BB3D", skip_rest=False):
        doc.version = r.i32("version")
        doc.children, doc.tail = _read_children(r)
    doc.trailing = r.rest()
    return doc


# -- writing -------------------------------------------------------------------------------

def _check_records(arr: np.ndarray, dtype: np.dtype, what: str) -> np.ndarray:
    a = np.asarray(arr)
    if a.dtype != dtype:
        try:
            a = a.astype(dtype)
        except (TypeError, ValueError) as exc:
            raise DocumentError(f"{what}: records of {dtype} expected, got {a.dtype}") from exc
    return a


def _write_chunk(w: Writer, c: Any) -> None:
    if isinstance(c, RawChunk):
        if len(c.tag) != 4:
            raise DocumentError(f"raw chunk tag {c.tag!r} is not 4 bytes")
        w.raw(c.tag)
        w.i32(len(c.payload))
        w.raw(c.payload)
        return
    if isinstance(c, Texs):
        with w.chunk(b"TEXS"):
            for t in c.textures:
                w.cstring(t.file)
                w.pack("ii5f", t.flags, t.blend, *t.position, *t.scale, t.rotation)
    elif isinstance(c, Brus):
        with w.chunk(b"BRUS"):
            w.i32(c.n_texs)
            for b in c.brushes:
                if len(b.texture_ids) != c.n_texs:
                    raise DocumentError(f"brush {b.name!r} has {len(b.texture_ids)} texture ids, "
                                        f"BRUS.n_texs is {c.n_texs}")
                w.cstring(b.name)
                w.pack("5f2i", *b.color, b.shininess, b.blend, b.fx)
                w.ints(b.texture_ids)
    elif isinstance(c, NodeChunk):
        with w.chunk(b"NODE"):
            w.cstring(c.name)
            w.pack("10f", *c.position, *c.scale, *c.rotation)
            for ch in c.children:
                _write_chunk(w, ch)
            w.raw(c.tail)
    elif isinstance(c, MeshChunk):
        with w.chunk(b"MESH"):
            w.i32(c.brush_id)
            for ch in c.children:
                _write_chunk(w, ch)
            w.raw(c.tail)
    elif isinstance(c, Vrts):
        with w.chunk(b"VRTS"):
            w.pack("iii", c.flags, c.tex_coord_sets, c.tex_coord_set_size)
            dt = vrts_dtype(c.flags, c.tex_coord_sets, c.tex_coord_set_size)
            w.records(_check_records(c.vertices, dt, "VRTS.vertices"))
    elif isinstance(c, Tris):
        with w.chunk(b"TRIS"):
            w.i32(c.brush_id)
            w.records(np.asarray(c.triangles).reshape(-1, 3), TRI_DTYPE)
    elif isinstance(c, Bone):
        with w.chunk(b"BONE"):
            w.records(_check_records(c.weights, BONE_DTYPE, "BONE.weights"))
    elif isinstance(c, Keys):
        with w.chunk(b"KEYS"):
            w.i32(c.flags)
            w.records(_check_records(c.keys, keys_dtype(c.flags), "KEYS.keys"))
    elif isinstance(c, AnimChunk):
        with w.chunk(b"ANIM"):
            w.pack("iif", c.flags, c.frames, c.fps)
    else:
        raise DocumentError(f"{type(c).__name__} is not a B3D chunk")


def write(doc: B3dFile) -> bytes:
    w = Writer("<")
    with w.chunk(b"BB3D"):
        w.i32(doc.version)
        for c in doc.children:
            _write_chunk(w, c)
        w.raw(doc.tail)
    w.raw(doc.trailing)
    return w.getvalue()


# -- inspection ----------------------------------------------------------------------------

def _all_chunks(doc: B3dFile):
    stack = list(reversed(doc.children))
    while stack:
        c = stack.pop()
        yield c
        if isinstance(c, (NodeChunk, MeshChunk)):
            stack.extend(reversed(c.children))


def info(doc: B3dFile) -> dict[str, Any]:
    chunks = list(_all_chunks(doc))
    meshes = [c for c in chunks if isinstance(c, MeshChunk)]
    return {
        "version": doc.version,
        "nodes": sum(isinstance(c, NodeChunk) for c in chunks),
        "meshes": len(meshes),
        "vertices": sum(len(c.vertices) for c in chunks if isinstance(c, Vrts)),
        "triangles": sum(len(c.triangles) for c in chunks if isinstance(c, Tris)),
        "bones": sum(isinstance(c, Bone) for c in chunks),
        "weights": sum(len(c.weights) for c in chunks if isinstance(c, Bone)),
        "keys": sum(len(c.keys) for c in chunks if isinstance(c, Keys)),
        "animations": sum(isinstance(c, AnimChunk) for c in chunks),
        "textures": len(doc.textures),
        "brushes": len(doc.brushes),
        "unknown chunks": sum(isinstance(c, RawChunk) for c in chunks),
    }


def check(doc: B3dFile) -> list[str]:
    """Structural problems a loader would trip over (the file still round-trips).

    Entries starting with ``warning:`` are quirks engines tolerate; the others are errors."""
    problems: list[str] = []
    n_tex, n_brush = len(doc.textures), len(doc.brushes)
    for bi, b in enumerate(doc.brushes):
        bad = [t for t in b.texture_ids if not -1 <= t < n_tex]
        if bad:
            problems.append(f"warning: brush {bi} ({b.name!r}) refers to textures {bad} of "
                            f"{n_tex} (ignored)")
    last_count: int | None = None
    for node, _ in doc.walk():
        label = node.name.decode("latin-1")
        for c in node.children:
            if isinstance(c, MeshChunk):
                v = c.vrts
                last_count = 0 if v is None else len(v.vertices)
                if v is None:
                    problems.append(f"node {label!r}: MESH without VRTS")
                if not (-1 <= c.brush_id < n_brush):
                    problems.append(f"node {label!r}: MESH brush {c.brush_id} of {n_brush}")
                for t in c.tris:
                    if len(t.triangles) and (t.triangles.min() < 0 or t.triangles.max() >= last_count):
                        problems.append(f"node {label!r}: TRIS index out of 0..{last_count - 1}")
                    if not (-1 <= t.brush_id < n_brush):
                        problems.append(f"node {label!r}: TRIS brush {t.brush_id} of {n_brush}")
            elif isinstance(c, Bone):
                if last_count is None:
                    problems.append(f"node {label!r}: BONE before any MESH")
                elif len(c.weights) and (c.weights["vertex"].min() < 0
                                         or c.weights["vertex"].max() >= last_count):
                    problems.append(f"node {label!r}: BONE vertex id out of 0..{last_count - 1}")
                if len(c.weights) == 1:
                    problems.append(f"warning: node {label!r}: BONE with a single weight "
                                    "(ignored by Irrlicht/Minetest)")
            elif isinstance(c, Keys):
                if c.flags & ~7:
                    problems.append(f"node {label!r}: KEYS flags {c.flags} has unknown bits")
    return problems


# -- to_scene ------------------------------------------------------------------------------

_Z = np.array([1.0, 1.0, -1.0])
_Z32 = _Z.astype(np.float32)


def _rot_to_gltf(wxyz) -> np.ndarray:
    q = np.asarray(wxyz, dtype=np.float64)
    out = np.stack([q[..., 1], q[..., 2], -q[..., 3], q[..., 0]], axis=-1)
    n = np.linalg.norm(out, axis=-1, keepdims=True)
    return np.where(n > 1e-12, out / np.where(n > 1e-12, n, 1), [0.0, 0.0, 0.0, 1.0])


def _rot_from_gltf(xyzw) -> np.ndarray:
    q = np.asarray(xyzw, dtype=np.float64)
    return np.stack([q[..., 3], q[..., 0], q[..., 1], -q[..., 2]], axis=-1)


_WRAP_CLAMP, _WRAP_REPEAT = 33071, 10497


def _texture_name(entry: TextureEntry) -> str:
    return entry.file.decode("utf-8", "replace").replace("\\", "/")


def _materials(doc: B3dFile, scene: Scene) -> dict[int, int]:
    """Scene materials for the brushes; returns brush index -> material index."""
    tex_entries = doc.textures
    tex_map: dict[int, int] = {}
    for i, t in enumerate(tex_entries):
        name = _texture_name(t)
        tex_map[i] = scene.add_texture(Texture(
            name=Path(name).stem, uri=name,
            wrap_s=_WRAP_CLAMP if t.flags & 16 else _WRAP_REPEAT,
            wrap_t=_WRAP_CLAMP if t.flags & 32 else _WRAP_REPEAT,
            mipmaps=bool(t.flags & 8) or True,
            extras={"b3d_flags": t.flags, "b3d_blend": t.blend}))
    out: dict[int, int] = {}
    for bi, b in enumerate(doc.brushes):
        mat = Material(name=b.name.decode("utf-8", "replace"),
                       base_color=tuple(float(np.clip(c, 0, 1)) for c in b.color),
                       unlit=bool(b.fx & 1), double_sided=bool(b.fx & 16),
                       extras={"b3d_blend": b.blend, "b3d_fx": b.fx, "b3d_shininess": b.shininess})
        if b.color[3] < 1.0 or b.fx & 32:
            mat.alpha_mode = "BLEND"
        tids = [t for t in b.texture_ids if 0 <= t < len(tex_entries)]
        if tids:
            t = tex_entries[tids[0]]
            mat.base_color_texture = TextureRef(
                texture=tex_map[tids[0]], texcoord=1 if t.flags & 0x10000 else 0,
                offset=tuple(float(x) for x in t.position), scale=tuple(float(x) for x in t.scale),
                rotation=float(t.rotation))
            if t.flags & 4 and mat.alpha_mode == "OPAQUE":
                mat.alpha_mode = "MASK"
            elif t.flags & 2:
                mat.alpha_mode = "BLEND"
            if len(tids) > 1:
                mat.extras["b3d_more_textures"] = [_texture_name(tex_entries[x]) for x in tids[1:]]
        out[bi] = scene.add_material(mat)
    return out


def _mesh_primitives(mesh: MeshChunk, brush_materials: dict[int, int], brushes: list[BrushEntry],
                     label: str) -> tuple[list[Primitive], list[np.ndarray]]:
    """Primitives of one MESH (one per TRIS) and, per primitive, the original vertex ids."""
    v = mesh.vrts
    if v is None:
        raise DocumentError(f"node {label!r}: MESH has no VRTS chunk")
    verts = v.vertices
    n = len(verts)
    pos = verts["position"] * _Z32
    normals = verts["normal"] * _Z32 if v.flags & 1 else None
    colors = verts["color"] if v.flags & 2 else None
    uvs = []
    if v.tex_coord_sets and v.tex_coord_set_size:
        for s in range(min(v.tex_coord_sets, 2)):
            uv = np.zeros((n, 2), np.float32)
            k = min(v.tex_coord_set_size, 2)
            uv[:, :k] = verts["uv"][:, s, :k]
            uvs.append(uv)
    prims, ids = [], []
    tris_list = mesh.tris
    for t in tris_list:
        tri = np.asarray(t.triangles).reshape(-1, 3)
        if not len(tri):
            continue
        if tri.min() < 0 or tri.max() >= n:
            raise DocumentError(f"node {label!r}: TRIS refers to vertex {int(tri.max())} of {n}")
        brush = t.brush_id if t.brush_id >= 0 else mesh.brush_id
        material = brush_materials.get(brush)
        use_colors = colors is not None and (0 <= brush < len(brushes) and brushes[brush].fx & 2)
        if len(tris_list) == 1:
            used = np.arange(n)
            local = tri.view(np.uint32) if tri.dtype == np.int32 else tri.astype(np.uint32)
            pick = lambda a: a                                    # noqa: E731  (no copy)
        else:
            used, inv = np.unique(tri, return_inverse=True)
            local = inv.reshape(-1, 3).astype(np.uint32)
            pick = lambda a, used=used: a[used]                   # noqa: E731
        prim = Primitive(
            positions=pick(pos), indices=local[:, [0, 2, 1]].reshape(-1),
            normals=None if normals is None else pick(normals),
            uvs=[pick(uv) for uv in uvs],
            colors=None if not use_colors else np.clip(pick(colors), 0, 1),
            material=material)
        if colors is not None and not use_colors:
            prim.extras["b3d_vertex_colors_unused"] = True
        prims.append(prim)
        ids.append(used)
    return prims, ids


def _skin_weights(joints: list[tuple[int, np.ndarray]], n_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-4 weights per vertex (joint indices into the skin), renormalised; unweighted
    vertices go to joint 0 (the mesh node)."""
    vs, js, ws = [], [], []
    for j, rec in joints:
        ok = (rec["weight"] > 0) & (rec["vertex"] >= 0) & (rec["vertex"] < n_vertices)
        vs.append(rec["vertex"][ok])
        ws.append(rec["weight"][ok])
        js.append(np.full(int(ok.sum()), j, np.uint16))
    joints_out = np.zeros((n_vertices, 4), np.uint16)
    weights_out = np.zeros((n_vertices, 4), np.float32)
    if vs:
        v = np.concatenate(vs)
        j = np.concatenate(js)
        w = np.concatenate(ws)
        order = np.lexsort((-w, v))
        v, j, w = v[order], j[order], w[order]
        del order
        rank = np.arange(len(v), dtype=np.int64) - np.searchsorted(v, v, side="left")
        keep = rank < 4
        joints_out[v[keep], rank[keep]] = j[keep]
        weights_out[v[keep], rank[keep]] = w[keep]
    total = weights_out.sum(axis=1)
    empty = total <= 0
    weights_out[empty, 0] = 1.0
    joints_out[empty, 0] = 0
    total[empty] = 1.0
    weights_out /= total[:, None]
    return joints_out, weights_out


def to_scene(doc: B3dFile, *, source: Path | None = None, fps: float | None = None) -> Scene:
    """Blitz3D scene -> glTF conventions. ``fps`` overrides every ANIM's frame rate."""
    scene = Scene()
    if source is not None:
        scene.extras["source_dir"] = str(Path(source).parent)
    brush_materials = _materials(doc, scene)
    brushes = doc.brushes

    node_index: dict[int, int] = {}            # id(NodeChunk) -> scene node
    mesh_users: list[tuple[int, MeshChunk, list[np.ndarray]]] = []   # node, mesh, vertex ids
    bones_by_mesh: dict[int, list[tuple[int, np.ndarray]]] = {}    # mesh slot -> (node, weights)
    anims: list[tuple[AnimChunk, int]] = []     # ANIM chunk, scene node holding it
    keys_of: dict[int, list[Keys]] = {}        # scene node -> KEYS chunks
    anim_of_node: dict[int, int] = {}          # scene node -> index into anims (-1 = none)

    def visit(chunk: NodeChunk, parent: int | None, anim_slot: int, depth: int) -> None:
        label = chunk.name.decode("utf-8", "replace")
        node = Node(name=label, translation=np.asarray(chunk.position, np.float64) * _Z,
                    rotation=_rot_to_gltf(chunk.rotation), scale=np.asarray(chunk.scale))
        i = scene.add_node(node, parent)
        node_index[id(chunk)] = i
        for c in chunk.children:
            if isinstance(c, AnimChunk):
                anims.append((c, i))
                anim_slot = len(anims) - 1
        anim_of_node[i] = anim_slot
        for c in chunk.children:
            if isinstance(c, MeshChunk):
                prims, ids = _mesh_primitives(c, brush_materials, brushes, label)
                node.mesh = scene.add_mesh(Mesh(name=label, primitives=prims))
                mesh_users.append((i, c, ids))
            elif isinstance(c, Bone):
                if mesh_users:
                    bones_by_mesh.setdefault(len(mesh_users) - 1, []).append((i, c.weights))
                else:
                    warnings.warn(f"node {label!r}: BONE before any MESH ignored", LossWarning,
                                  stacklevel=4)
            elif isinstance(c, Keys):
                keys_of.setdefault(i, []).append(c)
            elif isinstance(c, NodeChunk):
                if depth >= 200:
                    raise DocumentError("NODE nesting deeper than 200")
                visit(c, i, anim_slot, depth + 1)

    for root in doc.root_nodes:
        visit(root, None, -1, 0)

    # skins: the mesh node is joint 0, then every node with a BONE for that mesh
    worlds = scene.world_matrices()
    for slot, bones in bones_by_mesh.items():
        mesh_node, mesh_chunk, id_lists = mesh_users[slot]
        joint_nodes = [mesh_node] + [b for b, _ in bones if b != mesh_node]
        joint_of = {n: k for k, n in enumerate(joint_nodes)}
        n_vertices = len(mesh_chunk.vrts.vertices)
        joints, weights = _skin_weights([(joint_of[b], w) for b, w in bones], n_vertices)
        ibm = np.stack([inverse(worlds[j]) @ worlds[mesh_node] for j in joint_nodes])
        skin = scene.add_skin(Skin(joints=joint_nodes, inverse_bind_matrices=ibm,
                                   name=scene.nodes[mesh_node].name))
        scene.nodes[mesh_node].skin = skin
        for prim, used in zip(scene.meshes[scene.nodes[mesh_node].mesh].primitives, id_lists):
            prim.joints = joints[used]
            prim.weights = weights[used]
            prim.__post_init__()

    _animations(scene, anims, keys_of, anim_of_node, fps)
    return scene


def _merge_keys(chunks: list[Keys], field_name: str, bit: int) -> tuple[np.ndarray, np.ndarray] | None:
    frames, values = [], []
    for c in chunks:
        if c.flags & bit and len(c.keys):
            frames.append(c.keys["frame"].astype(np.int64))
            values.append(c.keys[field_name].astype(np.float64))
    if not frames:
        return None
    f = np.concatenate(frames)
    v = np.concatenate(values)
    order = np.argsort(f, kind="stable")
    f, v = f[order], v[order]
    last = np.r_[f[1:] != f[:-1], True]        # a later key at the same frame wins
    return f[last], v[last]


def _animations(scene: Scene, anims: list[tuple[AnimChunk, int]], keys_of: dict[int, list[Keys]],
                anim_of_node: dict[int, int], fps_override: float | None) -> None:
    groups: dict[int, list[int]] = {}
    for node, slot in anim_of_node.items():
        if node in keys_of:
            groups.setdefault(slot, []).append(node)
    for slot, nodes in sorted(groups.items()):
        if slot >= 0:
            chunk, holder = anims[slot]
            name = scene.nodes[holder].name or f"anim{slot}"
        else:
            chunk, name = AnimChunk(0, 0, 60.0), "keys"
        fps = fps_override or (chunk.fps if chunk.fps > 0 else 60.0)
        tracks = []
        for n in sorted(nodes):
            for path, fld, bit in (("translation", "position", 1), ("rotation", "rotation", 4),
                                   ("scale", "scale", 2)):
                merged = _merge_keys(keys_of[n], fld, bit)
                if merged is not None:
                    tracks.append((n, path, *merged))
        if not tracks:
            continue
        first = min(int(f[0]) for _, _, f, _ in tracks)
        anim = Animation(name=name, extras={"b3d_fps": float(chunk.fps), "b3d_frames": chunk.frames,
                                            "b3d_first_frame": first, "fps": fps})
        last = max(int(f[-1]) for _, _, f, _ in tracks)
        if chunk.frames and last - first > chunk.frames:
            anim.extras["b3d_keys_beyond_frames"] = last
        for n, path, frames, values in tracks:
            times = (frames - first) / fps
            if path == "translation":
                values = values * _Z
            elif path == "rotation":
                values = quat_continuous(_rot_to_gltf(values))
            anim.channels.append(Channel(node=n, path=path, times=times, values=values))
        scene.animations.append(anim)


# -- from_scene ----------------------------------------------------------------------------

def _image_file_name(t: Texture, index: int) -> str:
    """A file name for an image embedded in the scene (B3D refers to textures by name)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in (t.name or "")) or f"texture{index}"
    ext = ".jpg" if t.mime_type == "image/jpeg" else ".png"
    return stem if stem.lower().endswith(ext) else stem + ext


def _brushes_for(scene: Scene, images: dict[str, bytes]) -> tuple[Texs, Brus, dict[int, int]]:
    """TEXS and BRUS for the scene's materials; embedded images to write go into ``images``."""
    texs = Texs()
    tex_index: dict[tuple, int] = {}
    brus = Brus(n_texs=0)
    brush_of: dict[int, int] = {}
    entries = []
    for mi, m in enumerate(scene.materials):
        tids = []
        ref = m.base_color_texture
        if ref is not None and 0 <= ref.texture < len(scene.textures):
            t = scene.textures[ref.texture]
            if t.uri is None and t.image is not None:
                name = _image_file_name(t, ref.texture)
                images[name] = t.image
            else:
                name = (t.uri or t.name or f"texture{ref.texture}.png")
            flags = 1 | 8
            if m.alpha_mode == "BLEND":
                flags |= 2
            elif m.alpha_mode == "MASK":
                flags |= 4
            if t.wrap_s == _WRAP_CLAMP:
                flags |= 16
            if t.wrap_t == _WRAP_CLAMP:
                flags |= 32
            if ref.texcoord == 1:
                flags |= 0x10000
            key = (name, flags, tuple(ref.offset), tuple(ref.scale), ref.rotation)
            if key not in tex_index:
                tex_index[key] = len(texs.textures)
                texs.textures.append(TextureEntry(name.encode("utf-8"), flags, 2,
                                                  tuple(ref.offset), tuple(ref.scale), ref.rotation))
            tids.append(tex_index[key])
        fx = (1 if m.unlit else 0) | (16 if m.double_sided else 0)
        color = tuple(float(c) for c in m.base_color)
        entries.append(BrushEntry((m.name or f"material{mi}").encode("utf-8"), color, 0.0, 1, fx,
                                  tids))
        brush_of[mi] = len(entries) - 1
    brus.n_texs = max((len(e.texture_ids) for e in entries), default=0)
    for e in entries:
        e.texture_ids = e.texture_ids + [-1] * (brus.n_texs - len(e.texture_ids))
    brus.brushes = entries
    return texs, brus, brush_of


def _frames_for(times: np.ndarray, fps: float) -> tuple[np.ndarray, bool]:
    f = np.asarray(times, np.float64) * fps
    on_frames = np.allclose(f, np.round(f), atol=1e-3)
    return np.round(f).astype(np.int64), on_frames


def from_scene(scene: Scene, *, fps: float | None = None, animation: str | None = None,
               write_images: bool = True) -> B3dFile | dict[str, Any]:
    """glTF conventions -> one B3D file Minetest/Luanti, Irrlicht and assimp load.

    All meshes are merged into one MESH on the root NODE (one TRIS per material), in the space
    of the scene (skinned meshes in their bind pose). Skins become BONE chunks on the joint
    nodes, whose rest transforms are set to the bind pose given by the inverse bind matrices;
    unskinned meshes under animated nodes are bound rigidly to their node. Animations become
    KEYS (frames from 1) under one ANIM at ``fps`` (default: the source's, else 30); several
    animations are laid end to end on one timeline (Minetest plays frame ranges) and a
    LossWarning lists their frame ranges.
    ``animation=name`` keeps only that animation. Images embedded in the scene (a GLB from
    Blender) are written beside the B3D under the names its TEXS chunk uses (the result is then
    ``{"": doc, "name.png": bytes}``) unless ``write_images`` is false.
    """
    images: dict[str, bytes] = {}
    texs, brus, brush_of = _brushes_for(scene, images)
    worlds = scene.world_matrices() if scene.nodes else np.zeros((0, 4, 4))
    parents = scene.parents()

    # Skinned vertices are in bind space; B = W_j . IBM_j (the same for every joint when the
    # rest pose is the bind pose) takes them to scene space, and B . inverse(IBM_j) is joint j's
    # bind-pose world matrix, which becomes its B3D rest transform.
    bind_world = worlds.copy()
    skin_space: dict[int, np.ndarray] = {}
    for si, skin in enumerate(scene.skins):
        if skin.inverse_bind_matrices is None:
            skin_space[si] = np.eye(4)
            continue
        b = worlds[skin.joints[0]] @ skin.inverse_bind_matrices[0]
        skin_space[si] = b
        for j, ibm in zip(skin.joints, skin.inverse_bind_matrices):
            bind_world[j] = b @ inverse(ibm)

    animated = {c.node for a in scene.animations for c in a.channels}
    has_motion = bool(animated) or bool(scene.skins)

    # merge meshes
    pos_l, nrm_l, col_l, uv0_l, uv1_l = [], [], [], [], []
    tris_by_brush: dict[int, list[np.ndarray]] = {}
    weights_by_node: dict[int, list[np.ndarray]] = {}
    any_normals = any(p.normals is not None for m in scene.meshes for p in m.primitives)
    any_colors = any(p.colors is not None for m in scene.meshes for p in m.primitives)
    n_sets = max((len(p.uvs) for m in scene.meshes for p in m.primitives), default=0)
    if n_sets > 2:
        warnings.warn("UV sets beyond the second are dropped (Irrlicht reads two)", LossWarning,
                      stacklevel=2)
    n_sets = min(n_sets, 2)
    base = 0
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        skin = scene.skins[node.skin] if node.skin is not None else None
        world = worlds[ni] if skin is None else skin_space[node.skin]
        normal_m = np.linalg.inv(world[:3, :3]).T
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4:
                warnings.warn("non-triangle primitive dropped", LossWarning, stacklevel=2)
                continue
            n = len(p.positions)
            pts = p.positions.astype(np.float64)
            nrm = p.normals.astype(np.float64) if p.normals is not None else None
            if not np.allclose(world, np.eye(4)):
                pts = pts @ world[:3, :3].T + world[:3, 3]
                if nrm is not None:
                    nrm = nrm @ normal_m.T
                    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-12)
            pos_l.append(pts * _Z)
            if any_normals:
                if nrm is None:
                    from ..gltf.writer import compute_normals
                    nrm = compute_normals(pts, p.indices).astype(np.float64)
                nrm_l.append(nrm * _Z)
            if any_colors:
                col_l.append(p.colors if p.colors is not None else np.ones((n, 4), np.float32))
            for s, lst in enumerate((uv0_l, uv1_l)[:n_sets]):
                lst.append(p.uvs[s] if s < len(p.uvs) else np.zeros((n, 2), np.float32))
            idx = (p.indices if p.indices is not None else np.arange(n)).astype(np.int64)
            tri = idx.reshape(-1, 3)[:, [0, 2, 1]] + base
            brush = brush_of.get(p.material, -1) if p.material is not None else -1
            tris_by_brush.setdefault(brush, []).append(tri)
            vid = np.arange(base, base + n, dtype=np.int64)
            if skin is not None and p.joints is not None:
                for k in range(4):
                    w = p.weights[:, k]
                    ok = w > 0
                    for jslot in np.unique(p.joints[ok, k]):
                        sel = ok & (p.joints[:, k] == jslot)
                        jnode = skin.joints[int(jslot)]
                        rec = np.zeros(int(sel.sum()), BONE_DTYPE)
                        rec["vertex"] = vid[sel]
                        rec["weight"] = w[sel]
                        weights_by_node.setdefault(jnode, []).append(rec)
            elif has_motion:
                rec = np.zeros(n, BONE_DTYPE)
                rec["vertex"] = vid
                rec["weight"] = 1.0
                weights_by_node.setdefault(ni, []).append(rec)
            base += n

    # animations -> frames on one timeline
    anims = scene.animations
    if animation is not None:
        anims = [a for a in anims if a.name == animation]
        if not anims:
            raise DocumentError(f"no animation named {animation!r}")
    src_fps = next((a.extras.get("fps") for a in anims if a.extras.get("fps")), None)
    rate = float(fps or src_fps or 30.0)
    first_frame = int(next((a.extras.get("b3d_first_frame") for a in anims
                            if "b3d_first_frame" in a.extras), 1))
    keys_by_node: dict[int, list[Keys]] = {}
    offset = first_frame
    ranges = []
    for a in anims:
        length = 0
        for path, fld, bit in (("translation", "position", 1), ("scale", "scale", 2),
                               ("rotation", "rotation", 4)):
            for c in a.channels:
                if c.path != path:
                    continue
                frames, on = _frames_for(c.times, rate)
                if on and c.interpolation == "LINEAR":
                    vals = c.values.astype(np.float64)
                else:
                    frames = np.arange(0, int(np.ceil(float(c.times[-1]) * rate - 1e-6)) + 1)
                    vals = c.sample(frames / rate)
                frames, uniq = np.unique(frames, return_index=True)
                vals = vals[uniq]
                rec = np.zeros(len(frames), keys_dtype(bit))
                rec["frame"] = frames + offset
                if path == "translation":
                    rec[fld] = vals * _Z
                elif path == "rotation":
                    rec[fld] = _rot_from_gltf(vals)
                else:
                    rec[fld] = vals
                keys_by_node.setdefault(c.node, []).append(Keys(bit, rec))
                length = max(length, int(frames[-1]))
        ranges.append((a.name, offset, offset + length))
        offset += length + 1
    if len(anims) > 1:
        warnings.warn("B3D holds one timeline: animations laid end to end at frames "
                      + ", ".join(f"{n!r} {s}-{e}" for n, s, e in ranges), LossWarning, stacklevel=2)

    # node tree: rest transforms from the bind pose where joints need it
    def local_rest(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        node = scene.nodes[i]
        if not np.allclose(bind_world[i], worlds[i], atol=1e-6):
            p = parents[i]
            parent_w = bind_world[p] if p >= 0 else np.eye(4)
            t, r, s = decompose_trs(inverse(parent_w) @ bind_world[i])
            return t, r, s
        return node.translation, node.rotation, node.scale

    def build(i: int, depth: int) -> NodeChunk:
        if depth > 200:
            raise DocumentError("node tree deeper than 200")
        t, r, s = local_rest(i)
        node = scene.nodes[i]
        out = NodeChunk((node.name or f"node{i}").encode("utf-8"),
                        tuple(float(x) for x in np.asarray(t) * _Z),
                        tuple(float(x) for x in s), tuple(float(x) for x in _rot_from_gltf(r)))
        if i in weights_by_node:
            out.children.append(Bone(np.concatenate(weights_by_node[i])))
        out.children.extend(keys_by_node.get(i, []))
        out.children.extend(build(c, depth + 1) for c in node.children)
        return out

    roots = scene.roots or [i for i, p in enumerate(parents) if p < 0]
    # the merged mesh is in scene space: it can live on the one root when that root is at the
    # origin (the usual shape of a Minetest model), else on a new "root" node above them all
    own_root = len(roots) == 1 and np.allclose(local_rest(roots[0])[0], 0) and \
        np.allclose(local_rest(roots[0])[1], (0, 0, 0, 1)) and np.allclose(local_rest(roots[0])[2], 1)
    if own_root:
        # a node is a MESH or a BONE, not both: vertices weighted to the mesh's own node follow
        # it anyway (Blitz binds unweighted vertices to the mesh node)
        weights_by_node.pop(roots[0], None)
    root = build(roots[0], 0) if own_root else NodeChunk(b"root")
    head: list = []
    if base:
        v_dt = vrts_dtype((1 if any_normals else 0) | (2 if any_colors else 0), n_sets,
                          2 if n_sets else 0)
        verts = np.zeros(base, v_dt)
        verts["position"] = np.concatenate(pos_l)
        if any_normals:
            verts["normal"] = np.concatenate(nrm_l)
        if any_colors:
            verts["color"] = np.concatenate(col_l)
        for s_, lst in enumerate((uv0_l, uv1_l)[:n_sets]):
            verts["uv"][:, s_, :] = np.concatenate(lst)
        mesh = MeshChunk(-1, [Vrts(v_dt_flags(v_dt), n_sets, 2 if n_sets else 0, verts)])
        for brush, tris in sorted(tris_by_brush.items()):
            mesh.children.append(Tris(brush, np.concatenate(tris).astype(np.int32)))
        head.append(mesh)
        if any_colors:
            for b in brus.brushes:
                b.fx |= 2
    if anims and keys_by_node:
        # frames = the last key's frame, so that no key lies past the clip (assimp rejects that)
        declared = max((int(a.extras.get("b3d_frames", 0)) for a in anims), default=0)
        head.append(AnimChunk(0, max(offset - 1, declared if len(anims) == 1 else 0), rate))
    if own_root:
        root.children[0:0] = head
    else:
        root.children = head + [build(r, 0) for r in roots]
    doc = B3dFile(1, [])
    if texs.textures:
        doc.children.append(texs)
    if brus.brushes:
        doc.children.append(brus)
    doc.children.append(root)
    if images and write_images:
        return {"": doc, **images}
    return doc


def v_dt_flags(dt: np.dtype) -> int:
    return (1 if "normal" in dt.names else 0) | (2 if "color" in dt.names else 0)


register(Format(
    name="b3d", family="Blitz3D", description="Blitz3D model/scene (Minetest/Luanti, Irrlicht)",
    extensions=("b3d",), doc_types=(B3dFile,), sniff=lambda h: h[:4] == b"BB3D",
    magic_certain=True, read=read, write=write, to_scene=to_scene, from_scene=from_scene,
    scene_options=("source", "fps"), info=info, check=check))
