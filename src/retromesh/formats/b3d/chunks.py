"""B3D chunks: the native document (dataclasses + numpy records), :func:`read` and :func:`write`.

The layout table and the deviations from the spec are in the package docstring
(:mod:`retromesh.formats.b3d`). This module never imports the scene mapping.
"""
from __future__ import annotations

import functools
import struct
from collections.abc import Iterator
from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype, distinct
from ...binio import Reader, Writer
from ...errors import DocumentError
from ...records import record

__all__ = ["in_file_order", "B3dFile", "TextureEntry", "Texs", "BrushEntry", "Brus", "NodeChunk", "MeshChunk",
           "Vrts", "Tris", "Bone", "Keys", "AnimChunk", "RawChunk", "read", "write",
           "vrts_dtype", "keys_dtype", "BONE_DTYPE", "TRI_DTYPE"]

BONE_DTYPE = np.dtype([("vertex", "<i4"), ("weight", "<f4")])
TRI_DTYPE = np.dtype("<i4")


@functools.lru_cache(maxsize=1024)
def vrts_dtype(flags: int, sets: int, size: int) -> np.dtype:
    fields: list[tuple] = [("position", "<f4", (3,))]
    if flags & 1:
        fields.append(("normal", "<f4", (3,)))
    if flags & 2:
        fields.append(("color", "<f4", (4,)))
    if sets and size:
        fields.append(("uv", "<f4", (sets, size)))
    return np.dtype(fields)


@functools.lru_cache(maxsize=1024)
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

@record
class TextureEntry:
    """One texture of TEXS: file name, flags, blend, UV position, scale, rotation."""
    file: bytes
    flags: int = 1
    blend: int = 2
    position: tuple[float, ...] = (0.0, 0.0)          # u, v
    scale: tuple[float, ...] = (1.0, 1.0)
    rotation: float = 0.0


@record
class Texs:
    """TEXS: the file's textures."""
    textures: list[TextureEntry] = field(default_factory=list)


@record
class BrushEntry:
    """One brush of BRUS: name, RGBA, shininess, blend, fx, texture ids."""
    name: bytes
    color: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)     # r, g, b, a
    shininess: float = 0.0
    blend: int = 1
    fx: int = 0
    texture_ids: list[int] = field(default_factory=list)


@record
class Brus:
    """BRUS: the file's brushes, each naming ``n_texs`` textures."""
    n_texs: int = 0
    brushes: list[BrushEntry] = field(default_factory=list)


@record
class Vrts:
    """VRTS: vertex flags, texture coordinate sets and set size, the vertex records."""
    flags: int
    tex_coord_sets: int
    tex_coord_set_size: int
    vertices: np.ndarray          # vrts_dtype(flags, sets, size)


@record
class Tris:
    """TRIS: a brush id and triangles (vertex ids)."""
    brush_id: int
    triangles: np.ndarray         # (n, 3) int32


#: Irrlicht (and Luanti's copy) makes one mesh buffer of each TRIS, holding the vertices its
#: triangles use, indexed with 16 bits
MAX_TRIS_VERTICES = 65535


def tris_chunks(brush_id: int, triangles: np.ndarray) -> list[Tris]:
    """``triangles`` as one TRIS, or as several when they use more than 65535 distinct vertices
    (runs of 21845 triangles: at most 65535 vertices each), so that Irrlicht's 16-bit mesh
    buffers can hold every chunk."""
    tri = as_dtype(triangles, TRI_DTYPE, "TRIS.triangles").reshape(-1, 3)
    if len(tri) * 3 <= MAX_TRIS_VERTICES or len(distinct(tri)) <= MAX_TRIS_VERTICES:
        return [Tris(brush_id, tri)]
    step = MAX_TRIS_VERTICES // 3
    return [Tris(brush_id, tri[i:i + step]) for i in range(0, len(tri), step)]


@record
class RawChunk:
    """A chunk this reader does not interpret (kept byte for byte)."""
    tag: bytes
    payload: bytes


@record
class MeshChunk:
    """MESH: a brush id, one VRTS and its TRIS (and any chunk not known, kept)."""
    brush_id: int = -1
    children: list[Vrts | Tris | RawChunk] = field(default_factory=list)
    tail: bytes = b""

    @property
    def vrts(self) -> Vrts | None:
        return next((c for c in self.children if isinstance(c, Vrts)), None)

    @property
    def tris(self) -> list[Tris]:
        return [c for c in self.children if isinstance(c, Tris)]


@record
class Bone:
    """BONE: (vertex, weight) records."""
    weights: np.ndarray           # BONE_DTYPE records


@record
class Keys:
    """KEYS: flags (1 position, 2 scale, 4 rotation) and the key records."""
    flags: int
    keys: np.ndarray              # keys_dtype(flags) records


@record
class AnimChunk:
    """ANIM: flags, frame count, frames per second."""
    flags: int = 0
    frames: int = 0
    fps: float = 60.0


@record
class NodeChunk:
    """NODE: name, position, scale, rotation (w, x, y, z) and child chunks."""
    name: bytes
    position: tuple[float, ...] = (0.0, 0.0, 0.0)
    scale: tuple[float, ...] = (1.0, 1.0, 1.0)
    rotation: tuple[float, ...] = (1.0, 0.0, 0.0, 0.0)   # w, x, y, z
    children: list[MeshChunk | Bone | Keys | NodeChunk | AnimChunk | RawChunk] = \
        field(default_factory=list)
    tail: bytes = b""

    @property
    def mesh(self) -> MeshChunk | None:
        return next((c for c in self.children if isinstance(c, MeshChunk)), None)

    @property
    def nodes(self) -> list[NodeChunk]:
        return [c for c in self.children if isinstance(c, NodeChunk)]


@record
class B3dFile:
    """A whole BB3D file: version, top-level chunks, bytes after them."""
    version: int = 1
    children: list[Texs | Brus | NodeChunk | RawChunk] = field(default_factory=list)
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

    def chunks(self):
        """Every chunk in file order (NODE and MESH children included)."""
        return in_file_order(self.children)

    def walk(self):
        """Every NODE in file (pre-)order with its depth."""
        stack = [(n, 0) for n in reversed(self.root_nodes)]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            stack.extend((c, depth + 1) for c in reversed(node.nodes))


def in_file_order(chunks: list[Any]) -> Iterator[Any]:
    """``chunks`` and every chunk below them (NODE and MESH children) in file (pre-)order."""
    stack = list(reversed(chunks))
    while stack:
        c = stack.pop()
        yield c
        if isinstance(c, (NodeChunk, MeshChunk)):
            stack.extend(reversed(c.children))


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
        tag, length = r.unpack("4si", "chunk tag and length")
        label = tag.decode("latin-1")
        k = counts.get(tag, 0)
        counts[tag] = k + 1
        with r.chunk(length, f"{label}[{k}]" if k else label, skip_rest=False):
            reader = _READERS.get(tag)
            out.append(reader(r) if reader else RawChunk(tag, r.rest()))
    return out, r.rest()


# -- the fast path ---------------------------------------------------------------------------
# A well-formed file is read by the functions below, which test the same things as the
# checked readers above but keep no field path for error messages (a model's hundreds of
# small chunks cost a dozen Python calls each there). Anything they do not accept, they give
# up on (_Slow), and the checked readers read the file again for the error they report.

class _Slow(Exception):
    """The fast path gives up: the checked readers read the file."""


_U = struct.Struct("<i").unpack_from
_TAG = struct.Struct("<4si").unpack_from
_III = struct.Struct("<iii").unpack_from
_TEX = struct.Struct("<ii5f").unpack_from
_BRUSH = struct.Struct("<5fii").unpack_from
_NODE = struct.Struct("<10f").unpack_from
_ANIM = struct.Struct("<iif").unpack_from
#: nesting the fast path follows (the checked readers' limit, MAX_DEPTH, is higher)
_FAST_DEPTH = 128


def _records_at(data: bytes, dt: np.dtype, pos: int, end: int) -> np.ndarray:
    n, rest = divmod(end - pos, dt.itemsize)
    if rest:
        raise _Slow
    return np.frombuffer(data, dtype=dt, count=n, offset=pos).copy()


def _cstring_at(data: bytes, pos: int, end: int) -> tuple[bytes, int]:
    nul = data.find(b"\0", pos, end)
    if nul < 0:
        raise _Slow
    return data[pos:nul], nul + 1


def _fast_node(data: bytes, pos: int, end: int, depth: int) -> NodeChunk:
    name, pos = _cstring_at(data, pos, end)
    if end - pos < 40:
        raise _Slow
    f = _NODE(data, pos)
    n = NodeChunk(name, f[0:3], f[3:6], f[6:10])
    n.children, n.tail = _fast_children(data, pos + 40, end, depth)
    return n


def _fast_chunk(data: bytes, tag: bytes, pos: int, end: int, depth: int) -> Any:
    """The chunk ``tag`` whose payload is ``data[pos:end]``."""
    size = end - pos
    if tag == b"KEYS":
        if size < 4:
            raise _Slow
        flags = _U(data, pos)[0]
        return Keys(flags, _records_at(data, keys_dtype(flags), pos + 4, end))
    if tag == b"NODE":
        return _fast_node(data, pos, end, depth)
    if tag == b"BONE":
        return Bone(_records_at(data, BONE_DTYPE, pos, end))
    if tag == b"MESH":
        if size < 4:
            raise _Slow
        m = MeshChunk(_U(data, pos)[0])
        m.children, m.tail = _fast_children(data, pos + 4, end, depth)
        return m
    if tag == b"VRTS":
        if size < 12:
            raise _Slow
        flags, sets, width = _III(data, pos)
        if not (0 <= sets <= 8 and 0 <= width <= 4):
            raise _Slow
        return Vrts(flags, sets, width,
                    _records_at(data, vrts_dtype(flags, sets, width), pos + 12, end))
    if tag == b"TRIS":
        if size < 4 or (size - 4) % 12:
            raise _Slow
        return Tris(_U(data, pos)[0], _records_at(data, TRI_DTYPE, pos + 4, end).reshape(-1, 3))
    if tag == b"ANIM":
        if size != 12:
            raise _Slow
        flags, frames, fps = _ANIM(data, pos)
        return AnimChunk(flags, frames, fps)
    if tag == b"TEXS":
        texs = Texs()
        while pos < end:
            name, pos = _cstring_at(data, pos, end)
            if end - pos < 28:
                raise _Slow
            flags, blend, *f = _TEX(data, pos)
            pos += 28
            texs.textures.append(TextureEntry(name, flags, blend, (f[0], f[1]), (f[2], f[3]), f[4]))
        return texs
    if tag == b"BRUS":
        return _fast_brus(data, pos, end)
    return RawChunk(tag, data[pos:end])


def _fast_brus(data: bytes, pos: int, end: int) -> Brus:
    if end - pos < 4:
        raise _Slow
    n = _U(data, pos)[0]
    if not 0 <= n <= 8:
        raise _Slow
    pos += 4
    out = Brus(n_texs=n)
    ids_of = struct.Struct(f"<{n}i").unpack_from
    while pos < end:
        name, pos = _cstring_at(data, pos, end)
        if end - pos < 28 + 4 * n:
            raise _Slow
        *f, blend, fx = _BRUSH(data, pos)
        ids = list(ids_of(data, pos + 28)) if n else []
        pos += 28 + 4 * n
        out.brushes.append(BrushEntry(name, tuple(f[:4]), f[4], blend, fx, ids))
    return out


def _fast_children(data: bytes, pos: int, end: int, depth: int) -> tuple[list, bytes]:
    if depth >= _FAST_DEPTH:
        raise _Slow
    out: list = []
    while end - pos >= 8:
        tag, length = _TAG(data, pos)
        pos += 8
        if length < 0 or length > end - pos:
            raise _Slow
        out.append(_fast_chunk(data, tag, pos, pos + length, depth + 1))
        pos += length
    return out, data[pos:end]


def read_fast(r: Reader) -> B3dFile | None:
    """The file read without the checked readers (:func:`read_checked`), or None where they
    must read it."""
    data = r.data
    if not isinstance(data, bytes) or r.pos != 0 or r.end != len(data) or len(data) < 12:
        return None
    tag, length = _TAG(data, 0)
    if tag != b"BB3D" or not 4 <= length <= len(data) - 8:
        return None
    try:
        doc = B3dFile(version=_U(data, 8)[0])
        doc.children, doc.tail = _fast_children(data, 12, 8 + length, 1)
    except _Slow:
        return None
    doc.trailing = data[8 + length:]
    r.pos = r.end
    return doc


def read(r: Reader) -> B3dFile:
    """The B3D file of ``r``: :func:`read_fast`, else :func:`read_checked`."""
    fast = read_fast(r)
    return fast if fast is not None else read_checked(r)


def read_checked(r: Reader) -> B3dFile:
    """The B3D file of ``r`` read field by field, every error naming where it is."""
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
            for i, b in enumerate(c.brushes):
                if len(b.texture_ids) != c.n_texs:
                    raise DocumentError(f"brush {b.name!r} has {len(b.texture_ids)} texture ids, "
                                        f"BRUS.n_texs is {c.n_texs}")
                w.cstring(b.name)
                w.pack("5f2i", *b.color, b.shininess, b.blend, b.fx)
                w.records(as_dtype(b.texture_ids, "<i4", f"BRUS.brushes[{i}].texture_ids"))
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
            for mch in c.children:
                _write_chunk(w, mch)
            w.raw(c.tail)
    elif isinstance(c, Vrts):
        with w.chunk(b"VRTS"):
            w.pack("iii", c.flags, c.tex_coord_sets, c.tex_coord_set_size)
            dt = vrts_dtype(c.flags, c.tex_coord_sets, c.tex_coord_set_size)
            w.records(as_dtype(c.vertices, dt, "VRTS.vertices"))
    elif isinstance(c, Tris):
        with w.chunk(b"TRIS"):
            w.i32(c.brush_id)
            w.records(as_dtype(c.triangles, TRI_DTYPE, "TRIS.triangles").reshape(-1, 3))
    elif isinstance(c, Bone):
        with w.chunk(b"BONE"):
            w.records(as_dtype(c.weights, BONE_DTYPE, "BONE.weights"))
    elif isinstance(c, Keys):
        with w.chunk(b"KEYS"):
            w.i32(c.flags)
            w.records(as_dtype(c.keys, keys_dtype(c.flags), "KEYS.keys"))
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
