"""LithTech ``.abc`` models, versions 9-13 (No One Lives Forever / LithTech 2.x "Talon").

Layout (little-endian). A file is a chain of sections, each ``uint16 len; char name[len];
int32 next_offset`` (absolute; ``-1`` = last) followed by its body; we follow the offsets.

==============  ==============================================================================
section         body
==============  ==============================================================================
Header          uint32 version; uint32 KeyframeCount, AnimationCount, NodeCount, PieceCount,
                ChildModelCount, FaceCount, VertexCount, WeightCount, LODCount, SocketCount,
                WeightSetCount; [v13: uint32 unknown]; uint32 StringCount, StringLengthTotal;
                String CommandString; float InternalRadius; uint32 LODDistanceCount;
                uint8 padding[60]; float LODDistances[LODDistanceCount]
Pieces          uint32 WeightCount, PieceCount; PieceCount x Piece
  Piece         uint16 MaterialIndex; float SpecularPower, SpecularScale; [v>9: float LODWeight];
                uint16 unknown (0); String Name; LODCount x LOD
  LOD           uint32 nfaces; nfaces x 3 x (float u, v; uint16 vertex) (30 bytes);
                uint32 nverts; nverts x Vertex
  Vertex        uint16 nweights; uint16 SubLODVertexIndex; nweights x (uint32 node;
                vec3 location; float bias); vec3 location; vec3 normal
Nodes           NodeCount x (String name; uint16 index; uint8 flags; float m[16];
                uint32 child_count) depth-first; uint32 WeightSetCount;
                WeightSetCount x (String name; uint32 n; float weights[n])
ChildModels     uint16 count; count x (String name; uint32 build; NodeCount x (vec3; quat))
Animation       uint32 count; count x (vec3 extents; String name; int32 unknown;
                [v>=12: uint32 interpolation_ms]; uint32 nkeys; nkeys x (uint32 time_ms; String);
                NodeCount x ([v13: int32 marker (-1)]; nkeys x (vec3; quat x,y,z,w;
                [v13: float extra[2]])))
Sockets         uint32 count; count x (uint32 node; String name; quat rotation; vec3 location)
AnimBindings    uint32 count; count x (String name; vec3 extents; vec3 origin)
==============  ==============================================================================

``String`` = ``uint16 length; char[length]`` (kept as bytes); ``vec3`` = 3 float32; ``quat`` =
x, y, z, w float32. Node matrices are row-major with the translation in m[3], m[7], m[11]
(column-vector form, as numpy reads them with ``reshape(4, 4)``).

Native model: :class:`AbcModel` holds the sections in chain order (each a dataclass; unknown
ones as :class:`~.common.RawSection`); every section keeps the bytes its parser did not consume
up to the next section as ``gap``. Header counts are stored as read (``recount`` recomputes them);
the writer only insists on the counts that decide the layout (NodeCount, LODCount).
Bulk data (face corners, vertices, weights, keyframe transforms) are numpy record arrays.

Where we differ from the spec text, and why (haekb's ``io_scene_abc`` reader and its 010
templates):

* Vertices start with ``uint16 WeightCount, uint16 SubLODVertexIndex`` (the spec's uint32 count
  is wrong); weight sets live at the end of the Nodes section (missing from the spec).
* The spec's ``LODDistances[LODDistanceCount]``: we read as many floats as LODDistanceCount
  says (haekb's reader sizes the array by LODCount; the two agree in the files described). Any
difference
  lands in the Header's ``gap`` and still round-trips.
* v9 pieces have no LODWeight; v9-v11 animations no interpolation time (200 ms is the engine's
  default, used by ``to_scene``); v13 adds a header uint32 after WeightSetCount, an int32
  marker before each node's keys and two floats after each key (meaning unknown; kept).
* v13 child-model transforms: haekb's reader gives them the two extra floats, its 010 template
  does not. We read both layouts and keep the one that fills the section exactly
  (``ChildModelsSection.extra``).
* A Nodes section that ends right after the nodes (no weight-set count) is accepted
  (``weight_sets`` is ``None``).
* Vertex records have a variable size (``28 + 20 * weights`` bytes), so their starts form a
  chain. It is followed with numpy over runs of equal weight counts (growing blocks; a short
  Python walk where the counts change often); when every vertex of a LOD has the same count
  (the usual case) the whole LOD is one numpy record array both ways. Faces, weights and
  keyframe transforms are single ``frombuffer`` reads.
* Section offsets must move forward (a chain that loops or points outside the file is corrupt);
  sections may come in any order after the Header, which must precede the sections that need
  its counts. Several Header sections are rejected.

Counts checked before allocating: every count is compared with the bytes left in its section
before arrays are made, by ``Reader.count`` as it is read (errors point at the count field);
Header counts used by later sections, and LODDistanceCount (checked after the padding that
follows it), go through ``Reader.check_count`` where they are used. Strings are length-checked
the same way.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError, FormatError, LimitError
from .abc_model import (
    CORNER,
    COUNT_FIELDS,
    SECTION_NAMES,
    TRANSFORM13,
    VERSIONS,
    VERTEX,
    WEIGHT,
    AbcModel,
    Animation,
    AnimationSection,
    AnimBinding,
    AnimBindingsSection,
    ChildModel,
    ChildModelsSection,
    HeaderSection,
    Lod,
    Node,
    NodesSection,
    Piece,
    PiecesSection,
    Socket,
    SocketsSection,
    WeightSet,
)
from .common import (
    TRANSFORM,
    RawSection,
    iter_sections,
    read_string,
    read_vec,
    write_sections,
    write_string,
)

__all__ = ["AbcModel", "HeaderSection", "PiecesSection", "Piece", "Lod", "NodesSection", "Node",
           "WeightSet", "ChildModelsSection", "ChildModel", "AnimationSection", "Animation",
           "SocketsSection", "Socket", "AnimBindingsSection", "AnimBinding", "read", "write",
           "recount", "CORNER", "VERTEX", "WEIGHT", "TRANSFORM", "TRANSFORM13", "VERSIONS"]


# -- reading -------------------------------------------------------------------------------
def _scan_vertices(r: Reader, nv: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Where each variable-size vertex starts and how many weights it has.

    Vertex records are ``28 + 20 * weight_count`` bytes, so the starts form a chain. Runs of
    equal weight counts (the usual case) are followed with numpy in growing blocks; where the
    counts change often, a short Python loop takes over for a while."""
    data, end = r.data, r.end
    buf = np.frombuffer(data, np.uint8)
    starts = np.empty(nv, np.int64)
    counts = np.empty(nv, np.int64)
    pos, i, block = r.pos, 0, 16

    def too_short(at: int, k: int) -> FormatError:
        return r.fail("a vertex of at least 28 bytes and its weights",
                      f"{end - at} bytes left", offset=at, field=f"vertices[{k}]",
                      error=LimitError)

    while i < nv:
        if pos + 28 > end:
            raise too_short(pos, i)
        c = data[pos] | (data[pos + 1] << 8)
        stride = 28 + 20 * c
        fit = (end - pos) // stride
        if fit == 0:
            raise too_short(pos, i)
        m = min(nv - i, fit, block)
        cand = pos + stride * np.arange(m, dtype=np.int64)
        same = (buf[cand] | (buf[cand + 1].astype(np.int64) << 8)) == c
        k = m if same.all() else int(np.argmin(same))
        starts[i:i + k] = cand[:k]
        counts[i:i + k] = c
        i += k
        pos += k * stride
        if k == m:
            block = min(block * 2, 1 << 16)
            continue
        block = 16
        if k < 8:           # counts change often here: walk the next vertices one by one
            stop = min(nv, i + 256)
            while i < stop:
                if pos + 28 > end:
                    raise too_short(pos, i)
                c = data[pos] | (data[pos + 1] << 8)
                starts[i] = pos
                counts[i] = c
                pos += 28 + 20 * c
                i += 1
            if pos > end:
                raise too_short(int(starts[i - 1]), i - 1)
    return starts, counts, pos


def _read_lod(r: Reader) -> Lod:
    nf = r.count("face count", 30, "I")
    faces = r.records(CORNER, nf * 3, "faces").reshape(nf, 3)
    nv = r.count("vertex count", 28, "I")
    starts, counts, pos = _scan_vertices(r, nv)
    if nv and counts.min() == counts.max():
        # the usual case: every vertex has the same number of weights -> one record array
        c = int(counts[0])
        rec = np.dtype([("head", "u1", (4,)), ("weights", WEIGHT, (c,)), ("tail", "u1", (24,))])
        arr = np.frombuffer(r.data, rec, count=nv, offset=r.pos)
        vertices = np.empty(nv, VERTEX)
        vb = vertices.view(np.uint8).reshape(nv, 28)
        vb[:, :4] = arr["head"]
        vb[:, 4:] = arr["tail"]
        weights = np.ascontiguousarray(arr["weights"]).reshape(-1)
        r.pos = pos
        return Lod(faces=faces, vertices=vertices, weights=weights)
    buf = np.frombuffer(r.data, np.uint8)
    vertices = np.empty(nv, VERTEX)
    vb = vertices.view(np.uint8).reshape(nv, 28)
    vb[:, :4] = buf[starts[:, None] + np.arange(4)]
    tail = starts + 4 + 20 * counts
    vb[:, 4:] = buf[tail[:, None] + np.arange(24)]
    total = int(counts.sum())
    weights = np.empty(total, WEIGHT)
    if total:
        owner = np.repeat(np.arange(nv), counts)
        first = np.cumsum(counts) - counts
        k = np.arange(total) - first[owner]
        wstart = starts[owner] + 4 + 20 * k
        weights.view(np.uint8).reshape(total, 20)[:] = buf[wstart[:, None] + np.arange(20)]
    r.pos = pos
    return Lod(faces=faces, vertices=vertices, weights=weights)


def _read_header(r: Reader) -> HeaderSection:
    h = HeaderSection()
    h.version = r.u32("version")
    if h.version not in VERSIONS:
        raise r.fail("an ABC version of 9, 10, 11, 12 or 13", h.version, offset=r.pos - 4,
                     field="version")
    vals = r.unpack("11I", "header counts")
    for name, v in zip(COUNT_FIELDS, vals):
        setattr(h, name, v)
    if h.version >= 13:
        h.unknown_v13 = r.u32("v13 unknown")
    h.string_count, h.string_length_total = r.unpack("2I", "string counts")
    h.command_string = read_string(r, "command string")
    h.internal_radius = r.f32("internal radius")
    h.lod_distance_count = r.u32("LOD distance count")
    h.padding = r.raw(60, "padding")
    r.check_count(h.lod_distance_count, 4, "lod_distances")
    h.lod_distances = r.records("<f4", h.lod_distance_count, "lod_distances")
    return h


def _read_piece(r: Reader, version: int, lod_count: int) -> Piece:
    p = Piece()
    p.material_index = r.u16("material index")
    p.specular_power = r.f32("specular power")
    p.specular_scale = r.f32("specular scale")
    p.lod_weight = r.f32("LOD weight") if version > 9 else None
    p.unknown = r.u16("unknown")
    p.name = read_string(r, "piece name")
    r.check_count(lod_count, 8, "lods")
    for i in range(lod_count):
        with r.at(f"lods[{i}]"):
            p.lods.append(_read_lod(r))
    return p


def _read_pieces(r: Reader, h: HeaderSection) -> PiecesSection:
    s = PiecesSection()
    s.weight_count = r.u32("weight count")
    n = r.count("piece count", 14, "I")
    for i in range(n):
        with r.at(f"pieces[{i}]"):
            s.pieces.append(_read_piece(r, h.version, h.lod_count))
    return s


def _read_nodes(r: Reader, h: HeaderSection) -> NodesSection:
    s = NodesSection()
    r.check_count(h.node_count, 73, "nodes")
    for i in range(h.node_count):
        with r.at(f"nodes[{i}]"):
            name = read_string(r, "node name")
            index, flags = r.unpack("HB", "index and flags")
            m = np.array(r.floats(16, "matrix"), dtype="<f4").reshape(4, 4)
            s.nodes.append(Node(name=name, index=index, flags=flags, matrix=m,
                                child_count=r.u32("child count")))
    if r.remaining == 0:
        s.weight_sets = None
        return s
    n = r.count("weight set count", 6, "I")
    assert s.weight_sets is not None                # a new section's list
    for i in range(n):
        with r.at(f"weight_sets[{i}]"):
            name = read_string(r, "weight set name")
            k = r.u32("weight count")
            s.weight_sets.append(WeightSet(name=name, weights=r.records("<f4", k, "weights")))
    return s


def _read_child_models(r: Reader, h: HeaderSection, extra: bool) -> ChildModelsSection:
    s = ChildModelsSection(extra=extra)
    dt = TRANSFORM13 if extra else TRANSFORM
    n = r.count("child model count", 6, "H")
    for i in range(n):
        with r.at(f"child_models[{i}]"):
            name = read_string(r, "child model name")
            build = r.u32("build number")
            s.child_models.append(ChildModel(name=name, build_number=build,
                                             transforms=r.records(dt, h.node_count, "transforms")))
    return s


def _read_animations(r: Reader, h: HeaderSection) -> AnimationSection:
    s = AnimationSection()
    v13 = h.version >= 13
    dt = TRANSFORM13 if v13 else TRANSFORM
    n = r.count("animation count", 22, "I")
    for i in range(n):
        with r.at(f"animations[{i}]"):
            a = Animation()
            a.extents = read_vec(r, 3, "extents")
            a.name = read_string(r, "animation name")
            a.unknown = r.i32("unknown")
            a.interpolation_ms = r.u32("interpolation time") if h.version >= 12 else None
            nk = r.count("keyframe count", 6, "I")
            times = np.empty(nk, "<u4")
            for k in range(nk):
                with r.at(f"keyframes[{k}]"):
                    times[k] = r.u32("time")
                    a.key_strings.append(read_string(r, "keyframe string"))
            a.key_times = times
            r.check_count(h.node_count, (4 if v13 else 0) + nk * dt.itemsize, "node transforms")
            if v13:
                markers = np.empty(h.node_count, "<i4")
                rows = []
                for j in range(h.node_count):
                    with r.at(f"transforms[{j}]"):
                        markers[j] = r.i32("marker")
                        rows.append(r.records(dt, nk, "keys"))
                a.markers = markers
                a.transforms = (np.stack(rows) if rows else np.zeros((0, nk), dt))
            else:
                a.transforms = r.records(dt, h.node_count * nk, "transforms").reshape(h.node_count, nk)
            s.animations.append(a)
    return s


def _read_sockets(r: Reader, h: HeaderSection) -> SocketsSection:
    s = SocketsSection()
    n = r.count("socket count", 34, "I")
    for i in range(n):
        with r.at(f"sockets[{i}]"):
            node = r.u32("node")
            name = read_string(r, "socket name")
            s.sockets.append(Socket(node=node, name=name, rotation=read_vec(r, 4, "rotation"),
                                    location=read_vec(r, 3, "location")))
    return s


def _read_bindings(r: Reader, h: HeaderSection) -> AnimBindingsSection:
    s = AnimBindingsSection()
    n = r.count("anim binding count", 26, "I")
    for i in range(n):
        with r.at(f"bindings[{i}]"):
            name = read_string(r, "binding name")
            s.bindings.append(AnimBinding(name=name, extents=read_vec(r, 3, "extents"),
                                          origin=read_vec(r, 3, "origin")))
    return s


_READERS = {b"Pieces": _read_pieces, b"Nodes": _read_nodes, b"Animation": _read_animations,
            b"Sockets": _read_sockets, b"AnimBindings": _read_bindings}


def read(r: Reader) -> AbcModel:
    model = AbcModel()
    header: HeaderSection | None = None
    sec: Any                        # one of the section records (``sections`` holds any)
    for name, body, end in iter_sections(r):
        label = name.decode("latin-1")
        with r.chunk(end - body, label):
            if name == b"Header":
                if header is not None:
                    raise r.fail("one Header section", "a second one")
                sec = header = _read_header(r)
            elif name in _READERS or name == b"ChildModels":
                if header is None:
                    raise r.fail(f"the Header section before the {label} section", label)
                if name == b"ChildModels":
                    sec = _read_child_models_any(r, header)
                else:
                    sec = _READERS[name](r, header)
            else:
                sec = RawSection(name=name, data=r.rest())
            if not isinstance(sec, RawSection):
                sec.gap = r.rest()
        model.sections.append(sec)
    if header is None:
        raise r.fail("a Header section", "none", offset=0)
    return model


def _read_child_models_any(r: Reader, h: HeaderSection) -> ChildModelsSection:
    if h.version < 13:
        return _read_child_models(r, h, False)
    start = r.pos
    try:
        sec = _read_child_models(r, h, False)
        if r.remaining == 0:
            return sec
    except FormatError:
        sec = None
    end_plain = r.pos
    r.pos = start
    try:
        sec13 = _read_child_models(r, h, True)
        if r.remaining == 0:
            return sec13
    except FormatError:
        pass
    r.pos = start
    if sec is None:
        return _read_child_models(r, h, False)    # raises the plain layout's error
    r.pos = end_plain
    return sec


# -- writing -------------------------------------------------------------------------------
def _arr(a, dtype, name: str, shape=None) -> np.ndarray:
    a = as_dtype(a, dtype, name)
    if shape is not None and a.shape[1:] != shape:
        raise DocumentError(f"{name} must have shape (n, {', '.join(map(str, shape))}), got {a.shape}")
    return np.ascontiguousarray(a)


def _write_lod(w: Writer, lod: Lod, where: str = "lod") -> None:
    faces = _arr(lod.faces, CORNER, f"{where}.faces")
    if faces.ndim != 2 or faces.shape[1] != 3:
        raise DocumentError(f"faces must have shape (n, 3), got {faces.shape}")
    verts = _arr(lod.vertices, VERTEX, f"{where}.vertices").reshape(-1)
    weights = _arr(lod.weights, WEIGHT, f"{where}.weights").reshape(-1)
    counts = verts["weight_count"].astype(np.int64)
    if int(counts.sum()) != len(weights):
        raise DocumentError(f"the vertices' weight counts add up to {int(counts.sum())}, "
                            f"but there are {len(weights)} weights")
    w.u32(len(faces))
    w.records(faces)
    w.u32(len(verts))
    n = len(verts)
    if n and counts.min() == counts.max():
        c = int(counts[0])
        rec = np.empty(n, [("head", "u1", (4,)), ("weights", WEIGHT, (c,)), ("tail", "u1", (24,))])
        vb = verts.view(np.uint8).reshape(n, 28)
        rec["head"] = vb[:, :4]
        rec["weights"] = weights.reshape(n, c)
        rec["tail"] = vb[:, 4:]
        w.raw(rec.tobytes())
        return
    sizes = 28 + 20 * counts
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), np.uint8)
    vb = verts.view(np.uint8).reshape(n, 28)
    out[starts[:, None] + np.arange(4)] = vb[:, :4]
    out[(starts + 4 + 20 * counts)[:, None] + np.arange(24)] = vb[:, 4:]
    if len(weights):
        owner = np.repeat(np.arange(n), counts)
        first = np.cumsum(counts) - counts
        k = np.arange(len(weights)) - first[owner]
        out[(starts[owner] + 4 + 20 * k)[:, None] + np.arange(20)] = \
            weights.view(np.uint8).reshape(-1, 20)
    w.raw(out.tobytes())


def _write_header(w: Writer, h: HeaderSection) -> None:
    if h.version not in VERSIONS:
        raise DocumentError(f"ABC version must be one of {VERSIONS}, got {h.version}")
    w.u32(h.version)
    w.pack("11I", *(getattr(h, f) for f in COUNT_FIELDS))
    if h.version >= 13:
        w.u32(h.unknown_v13 or 0)
    w.pack("2I", h.string_count, h.string_length_total)
    write_string(w, h.command_string)
    w.f32(h.internal_radius)
    dist = _arr(h.lod_distances, np.dtype("<f4"), "lod_distances").reshape(-1)
    w.u32(h.lod_distance_count)
    if len(h.padding) != 60:
        raise DocumentError(f"header padding must be 60 bytes, got {len(h.padding)}")
    w.raw(h.padding)
    if len(dist) != h.lod_distance_count:
        raise DocumentError(f"lod_distance_count is {h.lod_distance_count} but there are "
                            f"{len(dist)} LOD distances")
    w.records(dist)


def _write_body(w: Writer, sec, h: HeaderSection) -> None:
    if isinstance(sec, RawSection):
        w.raw(sec.data)
        return
    v = h.version
    if isinstance(sec, HeaderSection):
        _write_header(w, sec)
    elif isinstance(sec, PiecesSection):
        w.pack("2I", sec.weight_count, len(sec.pieces))
        for i, p in enumerate(sec.pieces):
            w.u16(p.material_index)
            w.f32(p.specular_power)
            w.f32(p.specular_scale)
            if v > 9:
                w.f32(1.0 if p.lod_weight is None else p.lod_weight)
            w.u16(p.unknown)
            write_string(w, p.name)
            if len(p.lods) != h.lod_count:
                raise DocumentError(f"piece {p.name!r} has {len(p.lods)} LODs, the header says "
                                    f"{h.lod_count}")
            for j, lod in enumerate(p.lods):
                _write_lod(w, lod, f"pieces[{i}].lods[{j}]")
    elif isinstance(sec, NodesSection):
        if len(sec.nodes) != h.node_count:
            raise DocumentError(f"{len(sec.nodes)} nodes but the header's NodeCount is {h.node_count}")
        for i, n in enumerate(sec.nodes):
            write_string(w, n.name)
            w.pack("HB", n.index, n.flags)
            w.records(_arr(n.matrix, np.dtype("<f4"), f"nodes[{i}].matrix").reshape(16))
            w.u32(n.child_count)
        if sec.weight_sets is not None:
            w.u32(len(sec.weight_sets))
            for i, ws in enumerate(sec.weight_sets):
                write_string(w, ws.name)
                arr = _arr(ws.weights, np.dtype("<f4"), f"weight_sets[{i}].weights").reshape(-1)
                w.u32(len(arr))
                w.records(arr)
    elif isinstance(sec, ChildModelsSection):
        dt = TRANSFORM13 if sec.extra else TRANSFORM
        w.u16(len(sec.child_models))
        for i, c in enumerate(sec.child_models):
            write_string(w, c.name)
            w.u32(c.build_number)
            t = _arr(c.transforms, dt, f"child_models[{i}].transforms").reshape(-1)
            if len(t) != h.node_count:
                raise DocumentError(f"child model {c.name!r} has {len(t)} transforms for "
                                    f"{h.node_count} nodes")
            w.records(t)
    elif isinstance(sec, AnimationSection):
        dt = TRANSFORM13 if v >= 13 else TRANSFORM
        w.u32(len(sec.animations))
        for i, a in enumerate(sec.animations):
            w.floats(a.extents)
            write_string(w, a.name)
            w.i32(a.unknown)
            if v >= 12:
                w.u32(200 if a.interpolation_ms is None else a.interpolation_ms)
            times = _arr(a.key_times, np.dtype("<u4"), f"animations[{i}].key_times").reshape(-1)
            if len(times) != len(a.key_strings):
                raise DocumentError(f"animation {a.name!r}: {len(times)} key times but "
                                    f"{len(a.key_strings)} key strings")
            w.u32(len(times))
            for t, s in zip(times.tolist(), a.key_strings):
                w.u32(t)
                write_string(w, s)
            tr = _arr(a.transforms, dt, f"animations[{i}].transforms")
            if tr.shape != (h.node_count, len(times)):
                raise DocumentError(f"animation {a.name!r}: transforms must have shape "
                                    f"({h.node_count}, {len(times)}), got {tr.shape}")
            if v >= 13:
                markers = (np.full(h.node_count, -1, "<i4") if a.markers is None
                           else _arr(a.markers, np.dtype("<i4"), f"animations[{i}].markers")
                           .reshape(-1))
                if len(markers) != h.node_count:
                    raise DocumentError(f"animation {a.name!r}: {len(markers)} markers for "
                                        f"{h.node_count} nodes")
                rec = np.empty(h.node_count, [("marker", "<i4"), ("keys", dt, (len(times),))]) \
                    if len(times) else None
                if rec is None:
                    w.records(markers)
                else:
                    rec["marker"] = markers
                    rec["keys"] = tr
                    w.records(rec)
            else:
                w.records(tr)
    elif isinstance(sec, SocketsSection):
        w.u32(len(sec.sockets))
        for sk in sec.sockets:
            w.u32(sk.node)
            write_string(w, sk.name)
            w.floats(sk.rotation)
            w.floats(sk.location)
    elif isinstance(sec, AnimBindingsSection):
        w.u32(len(sec.bindings))
        for b in sec.bindings:
            write_string(w, b.name)
            w.floats(b.extents)
            w.floats(b.origin)
    else:
        raise DocumentError(f"{type(sec).__name__} is not an ABC v9-v13 section")
    w.raw(sec.gap)


def write(model: AbcModel) -> bytes:
    h = model.header
    w = Writer("<")
    try:
        write_sections(w, model.sections, lambda w_, s: _write_body(w_, s, h),
                       lambda s: s.name if isinstance(s, RawSection) else SECTION_NAMES[type(s)])
    except (struct.error, OverflowError) as exc:
        raise DocumentError(f"a value does not fit its ABC field: {exc}") from None
    return w.getvalue()


# -- helpers -------------------------------------------------------------------------------
def _strings(model: AbcModel) -> set[bytes]:
    strings = {model.header.command_string}
    strings.update(n.name for n in model.nodes)
    strings.update(c.name for c in model.child_models)
    for a in model.animations:
        strings.add(a.name)
        strings.update(a.key_strings)
    strings.discard(b"")
    return strings


def recount(model: AbcModel) -> AbcModel:
    """Recompute the Header's counts from the content (in place; returns the model)."""
    h = model.header
    pieces = model.pieces
    anims = model.animations
    h.keyframe_count = sum(len(a.key_strings) for a in anims)
    h.animation_count = len(anims)
    h.node_count = len(model.nodes)
    h.piece_count = len(pieces)
    h.child_model_count = len(model.child_models)
    h.lod_count = len(pieces[0].lods) if pieces else h.lod_count
    h.face_count = sum(len(l.faces) for p in pieces for l in p.lods)
    h.vertex_count = sum(len(l.vertices) for p in pieces for l in p.lods)
    h.weight_count = sum(len(l.weights) for p in pieces for l in p.lods)
    h.socket_count = len(model.sockets)
    h.weight_set_count = len(model.weight_sets)
    strings = _strings(model)
    h.string_count = len(strings)
    h.string_length_total = sum(len(s) for s in strings)
    h.lod_distances = np.asarray(h.lod_distances, "<f4").reshape(-1)
    h.lod_distance_count = len(h.lod_distances)
    ps = model._find(PiecesSection)
    if ps is not None:
        ps.weight_count = h.weight_count
    if h.version >= 13 and h.unknown_v13 is None:
        h.unknown_v13 = 0
    return model
