"""LithTech 1.0/1.5 ``.abc`` models, version 6 (Shogo, Blood 2): a layout of its own.

Little-endian; the same section chain as v9-v13 (``uint16 len; char name[len];
int32 next_offset``, absolute, ``-1`` = last), but different sections:

=============  ===============================================================================
section        body
=============  ===============================================================================
Header         String token ("MonolithExport Model File v6"); String CommandString
Geometry       vec3 BoundsMin, BoundsMax; uint32 NumLODs; uint16 VertexStartNum[NumLODs + 1];
               uint32 NumTris; NumTris x Triangle; uint32 NumVerts; uint32 NormalVerts;
               NumVerts x Vertex
  Triangle     float uv[3][2]; uint16 vertex[3]; int8 face_normal[3]           (33 bytes)
  Vertex       vec3 position (in its node's space); int8 normal[3]; uint8 node;
               uint16 replacements[2]                                            (20 bytes)
Nodes          depth-first nodes until every announced child is read: vec3 BoundsMin,
               BoundsMax; String name; uint16 TransformationIndex; uint8 flags;
               uint32 NumMDVerts; uint16 MDVertList[NumMDVerts]; uint32 NumChildren
Animation      uint32 count; count x (String name; uint32 length; vec3 BoundsMin, BoundsMax;
               uint32 nkeys; nkeys x (uint32 time; vec3 BoundsMin, BoundsMax; String);
               per node: nkeys x (vec3 translation; quat x,y,z,w);
               [NumMDVerts > 0: uint8 position[nkeys][NumMDVerts][3]]; vec3 Scale, Transform)
AnimDims       vec3 dims[animation count]
TransformInfo  int32 FlipMat; int32 FixAnimKeyframes                  (LithTech 1.5 only)
TriStrips      (unknown; kept raw like any other section we do not know)
=============  ===============================================================================

Vertex animation is MD2-like: a deformed vertex at key k is ``byte * Scale + Transform`` in its
node's space. Node flags: 1 null, 2 has triangles, 4 deformation, 8.. environment map/scroll.

Native model: :class:`AbcV6Model` holds the sections in chain order; each keeps what its parser
did not consume as ``gap``; unknown sections are :class:`~.common.RawSection`.

Where we differ from the spec text (haekb's v6 specification and template), and why:

* haekb's reader reads only ``NormalVerts`` vertices; the template and specification say
  ``NumVerts`` follow. We read ``NumVerts`` (LOD vertices included): the section chain makes
  the difference harmless and the bytes round-trip either way.
* The node count is not stored: the Nodes section ends when every announced child has been
  read (the template's rule); a section that ends first is corrupt.
* AnimDims holds one vec3 per animation; without an Animation section before it we read as
  many as fit and keep the rest as ``gap``.
* The vertex ``node`` byte is used as an index into the depth-first node list (haekb's reading;
  in the files described TransformationIndex equals that position).
* Writing from a scene (:mod:`.scene_write_v6`): the vertices after ``NormalVerts`` (LOD
  vertices, whose ``replacements`` name the model vertices they stand in for) and
  ``VertexStartNum`` are carried through glTF as they were, since how faces map to them is
  unknown; without them we write ``NumLODs = 0`` with one ``VertexStartNum`` of 0, as haekb's
  v6 exporter does. Face normals are the triangle's, turned to the side of its vertex normals
  (the convention of the real files is not documented). Vertex animation is quantised per
  animation and node as haekb's exporter does: ``Transform`` = minimum, ``Scale`` =
  (maximum - minimum) / 255, unless the file's own range still holds the positions.
"""
from __future__ import annotations

import struct
from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError
from ...records import record
from .common import TRANSFORM, RawSection, iter_sections, read_string, read_vec, write_sections, write_string

__all__ = ["AbcV6Model", "HeaderV6", "GeometryV6", "NodeV6", "NodesV6", "TrackV6",
           "AnimationV6", "AnimationsV6", "AnimDimsV6", "TransformInfoV6", "read", "write",
           "TOKEN", "FACE_V6", "VERTEX_V6", "KEY_V6"]

TOKEN = b"MonolithExport Model File v6"

FACE_V6 = np.dtype([("uv", "<f4", (3, 2)), ("vertex", "<u2", (3,)), ("normal", "i1", (3,))])
VERTEX_V6 = np.dtype([("location", "<f4", (3,)), ("normal", "i1", (3,)), ("node", "u1"),
                      ("replacements", "<u2", (2,))])
KEY_V6 = np.dtype([("time", "<u4"), ("bounds_min", "<f4", (3,)), ("bounds_max", "<f4", (3,))])


@record
class HeaderV6:
    token: bytes = TOKEN
    command_string: bytes = b""
    gap: bytes = b""


@record
class GeometryV6:
    bounds_min: tuple[float, ...] = (0.0, 0.0, 0.0)
    bounds_max: tuple[float, ...] = (0.0, 0.0, 0.0)
    vertex_start: np.ndarray = field(default_factory=lambda: np.zeros(1, "<u2"))  # NumLODs + 1
    faces: np.ndarray = field(default_factory=lambda: np.zeros(0, FACE_V6))
    normal_vertex_count: int = 0
    vertices: np.ndarray = field(default_factory=lambda: np.zeros(0, VERTEX_V6))
    gap: bytes = b""


@record
class NodeV6:
    bounds_min: tuple[float, ...] = (0.0, 0.0, 0.0)
    bounds_max: tuple[float, ...] = (0.0, 0.0, 0.0)
    name: bytes = b""
    index: int = 0
    flags: int = 0
    md_verts: np.ndarray = field(default_factory=lambda: np.zeros(0, "<u2"))
    child_count: int = 0


@record
class NodesV6:
    nodes: list[NodeV6] = field(default_factory=list)
    gap: bytes = b""


@record
class TrackV6:
    """One node's keys in one animation."""
    transforms: np.ndarray = field(default_factory=lambda: np.zeros(0, TRANSFORM))   # (nkeys,)
    deform: np.ndarray | None = None        # (nkeys, NumMDVerts, 3) uint8, None without MD verts
    scale: tuple[float, ...] = (1.0, 1.0, 1.0)
    translate: tuple[float, ...] = (0.0, 0.0, 0.0)


@record
class AnimationV6:
    name: bytes = b""
    length: int = 0
    bounds_min: tuple[float, ...] = (0.0, 0.0, 0.0)
    bounds_max: tuple[float, ...] = (0.0, 0.0, 0.0)
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, KEY_V6))
    key_strings: list[bytes] = field(default_factory=list)
    tracks: list[TrackV6] = field(default_factory=list)     # one per node


@record
class AnimationsV6:
    animations: list[AnimationV6] = field(default_factory=list)
    gap: bytes = b""


@record
class AnimDimsV6:
    dims: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), "<f4"))
    gap: bytes = b""


@record
class TransformInfoV6:
    flip_mat: int = 1
    fix_anim_keyframes: int = 1
    gap: bytes = b""


SECTION_NAMES = {HeaderV6: b"Header", GeometryV6: b"Geometry", NodesV6: b"Nodes",
                 AnimationsV6: b"Animation", AnimDimsV6: b"AnimDims", TransformInfoV6: b"TransformInfo"}


@record
class AbcV6Model:
    """A version 6 ABC file: its sections in chain order."""
    sections: list = field(default_factory=list)

    def _find(self, cls):
        for s in self.sections:
            if isinstance(s, cls):
                return s
        return None

    version = 6

    @property
    def header(self) -> HeaderV6 | None:
        return self._find(HeaderV6)

    @property
    def geometry(self) -> GeometryV6 | None:
        return self._find(GeometryV6)

    @property
    def nodes(self) -> list[NodeV6]:
        s = self._find(NodesV6)
        return s.nodes if s else []

    @property
    def animations(self) -> list[AnimationV6]:
        s = self._find(AnimationsV6)
        return s.animations if s else []

    @property
    def transform_info(self) -> TransformInfoV6 | None:
        return self._find(TransformInfoV6)


# -- reading -------------------------------------------------------------------------------
def _read_geometry(r: Reader) -> GeometryV6:
    g = GeometryV6()
    g.bounds_min = read_vec(r, 3, "bounds min")
    g.bounds_max = read_vec(r, 3, "bounds max")
    nl = r.count("LOD count", 2, "I")
    g.vertex_start = r.records("<u2", nl + 1, "vertex_start")
    nf = r.u32("triangle count")
    g.faces = r.records(FACE_V6, nf, "faces")
    nv = r.u32("vertex count")
    g.normal_vertex_count = r.u32("normal vertex count")
    g.vertices = r.records(VERTEX_V6, nv, "vertices")
    return g


def _read_nodes(r: Reader) -> NodesV6:
    s = NodesV6()
    left = 1
    while left > 0:
        with r.at(f"nodes[{len(s.nodes)}]"):
            n = NodeV6()
            n.bounds_min = read_vec(r, 3, "bounds min")
            n.bounds_max = read_vec(r, 3, "bounds max")
            n.name = read_string(r, "node name")
            n.index, n.flags = r.unpack("HB", "index and flags")
            k = r.u32("MD vertex count")
            n.md_verts = r.records("<u2", k, "md_verts")
            n.child_count = r.count("child count", 37, "I")
        left += n.child_count - 1
        s.nodes.append(n)
    return s


def _read_animations(r: Reader, nodes: list[NodeV6]) -> AnimationsV6:
    s = AnimationsV6()
    n = r.count("animation count", 38, "I")
    md = [len(nd.md_verts) for nd in nodes]
    for i in range(n):
        with r.at(f"animations[{i}]"):
            a = AnimationV6()
            a.name = read_string(r, "animation name")
            a.length = r.u32("length")
            a.bounds_min = read_vec(r, 3, "bounds min")
            a.bounds_max = read_vec(r, 3, "bounds max")
            nk = r.count("keyframe count", 30, "I")
            keys = np.empty(nk, KEY_V6)
            for k in range(nk):
                with r.at(f"keys[{k}]"):
                    keys[k] = r.records(KEY_V6, 1, "key")[0]
                    a.key_strings.append(read_string(r, "key string"))
            a.keys = keys
            r.check_count(len(nodes), 24 + 28 * nk, "tracks")
            for j, m in enumerate(md):
                with r.at(f"tracks[{j}]"):
                    t = TrackV6(transforms=r.records(TRANSFORM, nk, "transforms"))
                    if m:
                        t.deform = r.records("u1", nk * m * 3, "deform").reshape(nk, m, 3)
                    t.scale = read_vec(r, 3, "scale")
                    t.translate = read_vec(r, 3, "transform")
                    a.tracks.append(t)
            s.animations.append(a)
    return s


def read(r: Reader) -> AbcV6Model:
    model = AbcV6Model()
    nodes: NodesV6 | None = None
    anims: AnimationsV6 | None = None
    sec: Any                        # one of the section records (``sections`` holds any)
    for name, body, end in iter_sections(r):
        label = name.decode("latin-1")
        with r.chunk(end - body, label):
            if name == b"Header":
                sec = HeaderV6(token=read_string(r, "file token"),
                               command_string=read_string(r, "command string"))
            elif name == b"Geometry":
                sec = _read_geometry(r)
            elif name == b"Nodes":
                sec = nodes = _read_nodes(r)
            elif name == b"Animation":
                if nodes is None:
                    raise r.fail("the Nodes section before the Animation section", label)
                sec = anims = _read_animations(r, nodes.nodes)
            elif name == b"AnimDims":
                n = len(anims.animations) if anims is not None else r.remaining // 12
                sec = AnimDimsV6(dims=r.records("<f4", n * 3, "dims").reshape(n, 3))
            elif name == b"TransformInfo":
                sec = TransformInfoV6(*r.unpack("2i", "transform info"))
            else:
                sec = RawSection(name=name, data=r.rest())
            if not isinstance(sec, RawSection):
                sec.gap = r.rest()
        model.sections.append(sec)
    if model.header is None:
        raise r.fail("a Header section", "none", offset=0)
    return model


# -- writing -------------------------------------------------------------------------------
def _a(v, dtype, name: str) -> np.ndarray:
    return np.ascontiguousarray(as_dtype(v, dtype, name))


def _body(w: Writer, sec, nodes: list[NodeV6]) -> None:
    if isinstance(sec, RawSection):
        w.raw(sec.data)
        return
    if isinstance(sec, HeaderV6):
        write_string(w, sec.token)
        write_string(w, sec.command_string)
    elif isinstance(sec, GeometryV6):
        w.floats(sec.bounds_min)
        w.floats(sec.bounds_max)
        vs = _a(sec.vertex_start, "<u2", "vertex_start").reshape(-1)
        if len(vs) < 1:
            raise DocumentError("vertex_start needs NumLODs + 1 >= 1 entries")
        w.u32(len(vs) - 1)
        w.records(vs)
        faces = _a(sec.faces, FACE_V6, "faces").reshape(-1)
        w.u32(len(faces))
        w.records(faces)
        verts = _a(sec.vertices, VERTEX_V6, "vertices").reshape(-1)
        w.u32(len(verts))
        w.u32(sec.normal_vertex_count)
        w.records(verts)
    elif isinstance(sec, NodesV6):
        w.raw(b"".join(_node_bytes(i, n) for i, n in enumerate(sec.nodes)))
    elif isinstance(sec, AnimationsV6):
        w.u32(len(sec.animations))
        for i, a in enumerate(sec.animations):
            write_string(w, a.name)
            w.u32(a.length)
            w.floats(a.bounds_min)
            w.floats(a.bounds_max)
            keys = _a(a.keys, KEY_V6, f"animations[{i}].keys").reshape(-1)
            if len(keys) != len(a.key_strings):
                raise DocumentError(f"animation {a.name!r}: {len(keys)} keys, "
                                    f"{len(a.key_strings)} key strings")
            w.u32(len(keys))
            w.raw(_keys_bytes(keys, a.key_strings))
            if len(a.tracks) != len(nodes):
                raise DocumentError(f"animation {a.name!r} has {len(a.tracks)} tracks for "
                                    f"{len(nodes)} nodes")
            w.raw(b"".join(_track_bytes(a, i, j, t, len(nd.md_verts), len(keys))
                           for j, (t, nd) in enumerate(zip(a.tracks, nodes))))
    elif isinstance(sec, AnimDimsV6):
        w.records(_a(sec.dims, "<f4", "dims").reshape(-1))
    elif isinstance(sec, TransformInfoV6):
        w.pack("2i", sec.flip_mat, sec.fix_anim_keyframes)
    else:
        raise DocumentError(f"{type(sec).__name__} is not an ABC v6 section")
    w.raw(sec.gap)


def _node_bytes(i: int, n: NodeV6) -> bytes:
    name = bytes(n.name)
    if len(name) > 0xFFFF:
        raise DocumentError(f"an ABC string holds at most 65535 bytes, got {len(name)}")
    md = _a(n.md_verts, "<u2", f"nodes[{i}].md_verts").reshape(-1)
    return b"".join((_VEC6.pack(*n.bounds_min, *n.bounds_max), len(name).to_bytes(2, "little"),
                     name, _NODE.pack(n.index, n.flags, len(md)), md.tobytes(),
                     _U32.pack(n.child_count)))


def _keys_bytes(keys: np.ndarray, strings: list[bytes]) -> bytes:
    """The keys, each followed by its string (joined once: a write call per key cost more)."""
    rows = [keys[k:k + 1].tobytes() for k in range(len(keys))]
    out: list[bytes] = []
    for row, s in zip(rows, strings):
        s = bytes(s)
        if len(s) > 0xFFFF:
            raise DocumentError(f"an ABC string holds at most 65535 bytes, got {len(s)}")
        out += (row, len(s).to_bytes(2, "little"), s)
    return b"".join(out)


def _track_bytes(a: AnimationV6, i: int, j: int, t: TrackV6, m: int, nk: int) -> bytes:
    """One node's keys in one animation: transforms, MD vertex bytes, Scale, Transform."""
    where = f"animations[{i}].tracks[{j}]"
    tr = _a(t.transforms, TRANSFORM, f"{where}.transforms").reshape(-1)
    if len(tr) != nk:
        raise DocumentError(f"animation {a.name!r}: a track has {len(tr)} keys of {nk}")
    out = tr.tobytes()
    if m:
        d = _a(t.deform if t.deform is not None else np.zeros(0), "u1", f"{where}.deform")
        if d.shape != (nk, m, 3):
            raise DocumentError(f"animation {a.name!r}: deform must have shape "
                                f"({nk}, {m}, 3), got {d.shape}")
        out += d.tobytes()
    return out + _VEC6.pack(*t.scale, *t.translate)


_VEC6 = struct.Struct("<6f")
_NODE = struct.Struct("<HBI")
_U32 = struct.Struct("<I")


def write(model: AbcV6Model) -> bytes:
    w = Writer("<")
    state: list[NodeV6] = []

    def body(w_: Writer, sec) -> None:
        if isinstance(sec, NodesV6):
            state[:] = sec.nodes
        _body(w_, sec, state)

    try:
        write_sections(w, model.sections, body,
                       lambda s: s.name if isinstance(s, RawSection) else SECTION_NAMES[type(s)])
    except (struct.error, OverflowError) as exc:
        raise DocumentError(f"a value does not fit its ABC field: {exc}") from None
    return w.getvalue()
