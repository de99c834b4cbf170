"""Lost Saga ``.msh`` meshes (io3DEngine ``ioMeshManager::LoadFileInternal``).

Layout (little-endian; ``str`` = ``int32 length`` + bytes; ``n`` = vertex count):

==========================  ================================  =============================
field                       type                              when
==========================  ================================  =============================
magic                       ``"MSH\\0"``                        always
version                     int32 (2000, 2001, 2002)          always
mesh_type                   int32 (0 static, 1 animation,     always
                            2 lightmap, 3..6 rarer kinds)
vertex_mask                 uint32 (IOFVF_* bits)             always (ONE mask)
bbox                        float32 min[3], max[3], radius    always
submesh_count, submeshes    int32; {int32 min_index,          always
                            vertex_count, index_start,
                            face_count} * count
vertex_count                int32                             always
positions                   float32[n][3]                     mask & 0x0001 POSITION
normals                     float32[n][3]                     mask & 0x0020 NORMAL
tangents                    float32[n][3]                     mask & 0x1000 TANGENT
binormals                   float32[n][3]                     mask & 0x2000 BINORMAL
colors                      uint32[n] D3DCOLOR 0xAARRGGBB     mask & 0x0040 COLOR0
uv0                         float32[n][2]                     mask & 0x0100 UV0
uv1                         float32[n][2]                     mask & 0x0200 UV1
bone_names                  int32 count; str * count          mask & 0x0008 WEIGHTS
weights                     {float32 weight[4], bone[4]}[n]   mask & 0x0008 WEIGHTS
billboard_centers           float32[n][3]                     mask & 0x0002 POSITION2
face_count, faces           int32; uint16[face_count][3]      always
control_points              int32 count; {str type, str       version == 2002
                            bone, str extra, float32[3]}
trailing                    whatever follows (kept)           —
==========================  ================================  =============================

Deviations from the spec text (lostsaga.txt), from the engine source and the real files:

* There is ONE 32-bit vertex mask; the spec's second "vertex mask" does not exist (all corpus
  files have ``bbox_min <= bbox_max`` only when read with one mask).
* The per-vertex arrays come in the fixed order above (normals before tangents, binormals,
  colours, UV0, UV1), not in the spec's listing order; the weights block follows the arrays,
  billboard centres follow the weights.
* Face indices are ``uint16`` (D3D WORD) x 3, not floats; ``index_start`` counts indices (3 per
  face: ``spiral_cube.msh`` has submeshes starting at 0, 12, 168... = 3 x the faces before) and the
  indices are absolute into the shared vertex array (``min_index`` is the submesh's first vertex).
* Colours are D3DCOLOR: a little-endian DWORD ``0xAARRGGBB`` (bytes B, G, R, A).
* The INDICES bit (0x10) has no data of its own: bone ids are inside the WEIGHTS block. COLOR1,
  UV2, UV3 and POSITIONW have no loader branch; their bits are kept but carry no data. The
  add-on's skinned meshes in the corpus set WEIGHTS without INDICES (mask 0x129); ``check``
  reports it as a warning.
* The bounding radius in the corpus files is half the box diagonal (``from_scene`` writes that).
* Bone ids are floats holding integers (the engine casts them to a byte each, so < 256 bones).
  The engine stops reading a vertex's weights at the first weight <= 0.
* Bone names of length 0 are skipped by the engine when it builds its name list (ids refer to
  the list without them); they are kept here as they are in the file.
* Version 2001 ("vertex colour mesh") changes nothing in the layout; only 2002 adds control
  points. Other versions are read like 2000 (the engine does not check the version either).
* UV0 is the engine's TEXCOORD0 and UV1 its TEXCOORD1. In lightmap meshes (type 2) the
  material's lightmap unit uses set 0 and the diffuse unit ``tex_coord_set 1``: UV0 is the lightmap
  UV and UV1 the diffuse UV. Natively the raw order is kept.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record
from .common import (
    MESH_CONTROL_POINT_VERSION,
    MESH_TOKEN,
    long_strings,
    magic,
    nan_to_num,
    read_str,
    write_str,
)

__all__ = ["MshFile", "ControlPoint", "read", "write", "SUBMESH_DTYPE", "WEIGHT_DTYPE",
           "POSITION", "POSITION2", "POSITIONW", "WEIGHTS", "INDICES", "NORMAL", "COLOR0",
           "COLOR1", "UV0", "UV1", "UV2", "UV3", "TANGENT", "BINORMAL", "MESH_TYPES",
           "faces_offset", "SUBMESH_OFFSET"]

POSITION, POSITION2, POSITIONW, WEIGHTS, INDICES = 0x1, 0x2, 0x4, 0x8, 0x10
NORMAL, COLOR0, COLOR1, UV0, UV1, UV2, UV3 = 0x20, 0x40, 0x80, 0x100, 0x200, 0x400, 0x800
TANGENT, BINORMAL = 0x1000, 0x2000

MESH_TYPES = {0: "static", 1: "animation", 2: "lightmap", 3: "billboard",
              4: "normal_billboard", 5: "animate_effect", 6: "static_vertex_color"}

SUBMESH_DTYPE = np.dtype([("min_index", "<i4"), ("vertex_count", "<i4"),
                          ("index_start", "<i4"), ("face_count", "<i4")])
WEIGHT_DTYPE = np.dtype([("weight", "<f4", (4,)), ("bone", "<f4", (4,))])

#: (mask bit, attribute, numpy dtype, width) in file order (before the weights block)
ARRAYS = (
    (POSITION, "positions", "<f4", 3),
    (NORMAL, "normals", "<f4", 3),
    (TANGENT, "tangents", "<f4", 3),
    (BINORMAL, "binormals", "<f4", 3),
    (COLOR0, "colors", "<u4", 1),
    (UV0, "uv0", "<f4", 2),
    (UV1, "uv1", "<f4", 2),
)


@record
class ControlPoint:
    type: bytes = b""
    bone: bytes = b""
    extra: bytes = b""
    point: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))


@record
class MshFile:
    """One ``.msh``. Arrays are None when their mask bit is clear (see the module table)."""
    version: int = 2000
    mesh_type: int = 0
    vertex_mask: int = 0
    #: float32 min x, y, z, max x, y, z, radius (kept as float32 so that any bits round-trip)
    bbox: np.ndarray = field(default_factory=lambda: np.zeros(7, np.float32))
    submeshes: np.ndarray = field(default_factory=lambda: np.zeros(0, SUBMESH_DTYPE))
    vertex_count: int = 0
    positions: np.ndarray | None = None
    normals: np.ndarray | None = None
    tangents: np.ndarray | None = None
    binormals: np.ndarray | None = None
    colors: np.ndarray | None = None          # uint32 0xAARRGGBB
    uv0: np.ndarray | None = None
    uv1: np.ndarray | None = None
    bone_names: list[bytes] | None = None     # with WEIGHTS
    weights: np.ndarray | None = None         # WEIGHT_DTYPE, with WEIGHTS
    billboard_centers: np.ndarray | None = None
    faces: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.uint16))
    control_points: list[ControlPoint] | None = None   # version 2002 only
    trailing: bytes = b""

    @property
    def skinned(self) -> bool:
        return bool(self.vertex_mask & WEIGHTS) and self.weights is not None


def _vertex_size(mask: int) -> int:
    size = sum(4 * width for bit, _, _, width in ARRAYS if mask & bit)
    if mask & WEIGHTS:
        size += WEIGHT_DTYPE.itemsize
    if mask & POSITION2:
        size += 12
    return size


def read(r: Reader) -> MshFile:
    magic(r, MESH_TOKEN, "mesh")
    doc = MshFile()
    doc.version = r.i32("version")
    doc.mesh_type = r.i32("mesh_type")
    doc.vertex_mask = r.u32("vertex_mask")
    doc.bbox = r.records("<f4", 7, "bbox")
    with r.at("submeshes"):
        n = r.count("submesh_count", SUBMESH_DTYPE.itemsize)
        doc.submeshes = r.records(SUBMESH_DTYPE, n, "submeshes")
    mask = doc.vertex_mask
    nv = r.count("vertex_count", _vertex_size(mask))
    doc.vertex_count = nv
    for bit, name, dtype, width in ARRAYS:
        if mask & bit:
            arr = r.records(dtype, nv * width, name)
            setattr(doc, name, arr if width == 1 else arr.reshape(nv, width))
    if mask & WEIGHTS:
        with r.at("bone_names"):
            count = r.count("bone_name_count", 4)
            names = []
            for i in range(count):
                with r.at(f"[{i}]"):
                    names.append(read_str(r, "bone name"))
            doc.bone_names = names
        doc.weights = r.records(WEIGHT_DTYPE, nv, "weights")
    if mask & POSITION2:
        doc.billboard_centers = r.records("<f4", nv * 3, "billboard_centers").reshape(nv, 3)
    with r.at("faces"):
        nf = r.count("face_count", 6)
        doc.faces = r.records("<u2", nf * 3, "faces").reshape(nf, 3)
    if doc.version == MESH_CONTROL_POINT_VERSION:
        with r.at("control_points"):
            count = r.count("control_point_count", 24)
            pts = []
            for i in range(count):
                with r.at(f"[{i}]"):
                    t = read_str(r, "type")
                    b = read_str(r, "bone")
                    e = read_str(r, "extra")
                    pts.append(ControlPoint(t, b, e, r.records("<f4", 3, "point")))
            doc.control_points = pts
    doc.trailing = r.rest()
    return doc


def _array(doc: MshFile, name: str, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    a = getattr(doc, name)
    if a is None:
        raise DocumentError(f"msh: vertex_mask says {name} are present but {name} is None")
    a = np.asarray(a)
    if a.shape != shape:
        raise DocumentError(f"msh: {name} has shape {a.shape}, expected {shape}")
    return as_dtype(a, dtype, f"msh: {name}")


def write(doc: MshFile) -> bytes:
    w = Writer("<")
    w.raw(MESH_TOKEN)
    w.i32(doc.version)
    w.i32(doc.mesh_type)
    w.u32(doc.vertex_mask)
    bbox = np.asarray(doc.bbox)
    if bbox.shape != (7,):
        raise DocumentError(f"msh: bbox must hold 7 floats, got shape {bbox.shape}")
    w.records(bbox, "<f4")
    subs = np.asarray(doc.submeshes)
    w.i32(len(subs))
    w.records(as_dtype(subs, SUBMESH_DTYPE, "msh: submeshes") if subs.dtype.names else
              as_dtype(subs, "<i4", "msh: submeshes").reshape(-1, 4))
    mask = doc.vertex_mask
    nv = int(doc.vertex_count)
    w.i32(nv)
    for bit, name, dtype, width in ARRAYS:
        if mask & bit:
            w.records(_array(doc, name, dtype, (nv,) if width == 1 else (nv, width)))
        elif getattr(doc, name) is not None:
            raise DocumentError(f"msh: {name} given but its vertex_mask bit 0x{bit:x} is clear")
    if mask & WEIGHTS:
        if doc.bone_names is None:
            raise DocumentError("msh: the WEIGHTS bit needs bone_names")
        w.i32(len(doc.bone_names))
        for bone in doc.bone_names:
            write_str(w, bone)
        wt = doc.weights
        if wt is None or len(wt) != nv or wt.dtype != WEIGHT_DTYPE:
            raise DocumentError(f"msh: weights must be {nv} records of {WEIGHT_DTYPE}")
        w.records(wt)
    elif doc.weights is not None or doc.bone_names is not None:
        raise DocumentError("msh: weights given but the WEIGHTS bit (0x8) is clear")
    if mask & POSITION2:
        w.records(_array(doc, "billboard_centers", "<f4", (nv, 3)))
    elif doc.billboard_centers is not None:
        raise DocumentError("msh: billboard_centers given but the POSITION2 bit (0x2) is clear")
    faces = as_dtype(doc.faces, "<u2", "msh: faces").reshape(-1, 3)
    w.i32(len(faces))
    w.records(faces)
    if doc.version == MESH_CONTROL_POINT_VERSION:
        pts = doc.control_points or []
        w.i32(len(pts))
        for p in pts:
            write_str(w, p.type)
            write_str(w, p.bone)
            write_str(w, p.extra)
            w.records(np.asarray(p.point).reshape(3), "<f4")
    elif doc.control_points is not None:
        raise DocumentError("msh: control points exist only in version 2002")
    w.raw(doc.trailing)
    return w.getvalue()


def info(doc: MshFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": doc.version,
        "mesh type": f"{doc.mesh_type} ({MESH_TYPES.get(doc.mesh_type, 'unknown')})",
        "vertex mask": f"0x{doc.vertex_mask:x}",
        "submeshes": len(doc.submeshes),
        "vertices": doc.vertex_count,
        "faces": len(doc.faces),
    }
    if doc.bone_names is not None:
        out["bones"] = len(doc.bone_names)
    if doc.control_points is not None:
        out["control points"] = len(doc.control_points)
    if doc.trailing:
        out["trailing bytes"] = len(doc.trailing)
    return out


def check(doc: MshFile) -> list[Finding]:
    problems: list[Finding] = []
    nv = doc.vertex_count
    if len(doc.faces) and int(np.asarray(doc.faces).max()) >= nv:
        problems.append(error("msh.face_index", "faces refer to vertex "
                              f"{int(np.asarray(doc.faces).max())} of {nv}"))
    nidx = 3 * len(doc.faces)
    for i, s in enumerate(doc.submeshes):
        lo, cnt, start, fc = (int(s[k]) for k in ("min_index", "vertex_count", "index_start",
                                                   "face_count"))
        if lo < 0 or cnt < 0 or lo + cnt > nv:
            problems.append(error("msh.submesh_vertices", f"submesh {i}: vertices "
                                  f"{lo}..{lo + cnt} outside 0..{nv}"))
        if start < 0 or fc < 0 or start + 3 * fc > nidx:
            problems.append(error("msh.submesh_indices", f"submesh {i}: indices "
                                  f"{start}..{start + 3 * fc} outside 0..{nidx}"))
    if doc.weights is not None and doc.bone_names is not None:
        problems += _weight_problems(doc)
    if doc.vertex_mask & WEIGHTS and doc.mesh_type != 1:
        problems.append(warning("msh.weights_type", f"weights in a mesh of type {doc.mesh_type} "
                                "(the engine skins only type 1)"))
    if nv > 65536:
        problems.append(error("msh.vertex_count", f"{nv} vertices cannot all be addressed by "
                              "uint16 indices"))
    return problems


def _weight_problems(doc: MshFile) -> list[Finding]:
    problems: list[Finding] = []
    names = [n for n in doc.bone_names or [] if n]
    w = doc.weights
    assert w is not None                        # the caller checks
    used = _engine_weight_mask(w["weight"])
    later = (np.asarray(w["weight"], np.float32) > 0) & ~used
    if later.any():
        rows = int(later.any(axis=1).sum())
        problems.append(warning("msh.weight_order", f"{rows} vertices have weights after a zero "
                                "one: the engine stops at the first weight <= 0 and drops the "
                                "rest (store them largest first)"))
    ids = np.asarray(w["bone"][used], dtype=np.float64)
    finite = np.isfinite(ids)
    if not finite.all():
        problems.append(error("msh.bone_id", f"{int((~finite).sum())} used bone ids are not "
                              "finite numbers"))
    ids = ids[finite]
    if ids.size and (ids.min() < 0 or ids.max() >= len(names)):
        problems.append(error("msh.bone_id", f"weights refer to bone ids "
                              f"{ids.min():g}..{ids.max():g} of {len(names)} names"))
    if ids.size and ids.max() >= 256:
        problems.append(error("msh.bone_id_byte", "bone ids >= 256 do not fit the engine's "
                              "byte-packed indices"))
    problems += long_strings(doc.bone_names or [], "bone names", "msh.name_length")
    if not doc.vertex_mask & INDICES:
        problems.append(warning("msh.indices_bit", "WEIGHTS without the INDICES bit (0x10)"))
    return problems


#: byte offset of submesh record 0 (magic, version, type, mask, bbox, submesh_count before it)
SUBMESH_OFFSET = 48


def faces_offset(doc: MshFile) -> int:
    """Byte offset of the first face index in the file ``doc`` was read from (for errors found
    after parsing, e.g. by ``to_scene``)."""
    nv = int(doc.vertex_count)
    off = SUBMESH_OFFSET + SUBMESH_DTYPE.itemsize * len(doc.submeshes) + 4
    off += nv * sum(4 * width for bit, _, _, width in ARRAYS if doc.vertex_mask & bit)
    if doc.vertex_mask & WEIGHTS:
        off += 4 + sum(4 + len(n) for n in doc.bone_names or []) + WEIGHT_DTYPE.itemsize * nv
    if doc.vertex_mask & POSITION2:
        off += 12 * nv
    return off + 4


def _engine_weight_mask(weights: np.ndarray) -> np.ndarray:
    """(n, 4) bool: the influences the engine uses (it stops at the first weight <= 0)."""
    w = np.asarray(weights, dtype=np.float32)
    use = w > 0
    for c in range(1, use.shape[1]):            # (a cumprod over the short axis was 5x slower)
        use[:, c] &= use[:, c - 1]
    return use


engine_weight_mask = _engine_weight_mask


def usable_influences(weights: np.ndarray, n_bones: int) -> tuple[np.ndarray, np.ndarray]:
    """``(use, bone)`` of a ``WEIGHT_DTYPE`` array: (n, 4) the influences the engine uses
    (finite, before the first weight <= 0) whose bone id names one of ``n_bones`` bones, and
    the ids as int64 (0 where they do not)."""
    w = np.asarray(weights["weight"], dtype=np.float64)
    ids = np.asarray(weights["bone"], dtype=np.float64)
    use = _engine_weight_mask(w) & np.isfinite(w)
    ok_id = np.isfinite(ids) & (ids >= 0) & (ids < n_bones)
    return use & ok_id, np.where(ok_id, ids, 0).astype(np.int64)


def weight_records(joints: np.ndarray | None, weights: np.ndarray | None, n: int) -> np.ndarray:
    """The weights block of ``n`` vertices from glTF-style joints and weights: heaviest first,
    bone and weight 0 after the first weight <= 0 (where the engine stops); all zero without
    them."""
    rec = np.zeros(n, WEIGHT_DTYPE)
    if joints is not None and weights is not None:
        w = nan_to_num(np.asarray(weights, np.float64))
        bones = np.array(joints, np.float64)
        # heaviest first (the engine stops at w <= 0); a stable sort leaves rows already in
        # that order (most of a mesh's) as they are, so only the others are sorted
        ok = np.ones(len(w), bool)
        for c in range(w.shape[1] - 1):          # column by column: 3x faster than (n, 3) at once
            ok &= w[:, c] >= w[:, c + 1]
        if not ok.all():
            rows = np.flatnonzero(~ok)
            order = np.argsort(-w[rows], axis=1, kind="stable")
            w[rows] = np.take_along_axis(w[rows], order, axis=1)
            bones[rows] = np.take_along_axis(bones[rows], order, axis=1)
        bones[w <= 0] = 0
        w[w <= 0] = 0
        rec["weight"] = w
        rec["bone"] = bones
    return rec


def bounding_box(positions: np.ndarray) -> np.ndarray:
    """``bbox`` as the 3ds Max add-on writes it: min xyz, max xyz and half the diagonal."""
    p = np.asarray(positions, np.float32)
    cols = np.ascontiguousarray(p.T)            # (a reduction over axis 0 was 10x slower)
    lo, hi = cols.min(axis=1), cols.max(axis=1)
    if not (lo.all() and hi.all()) or np.isnan(lo).any() or np.isnan(hi).any():
        # a zero or NaN extreme: which of 0.0 and -0.0 (which NaN) is kept depends on the order
        # of the comparisons; the order that wrote the records of GLBs already written
        lo, hi = p.min(axis=0), p.max(axis=0)
    radius = float(np.linalg.norm(hi - lo)) / 2.0
    return np.array([*lo, *hi, radius], dtype=np.float32)


def sniff(head: bytes) -> bool:
    return head[:4] == MESH_TOKEN
