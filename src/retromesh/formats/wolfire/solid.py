"""Lugaru ``.solid`` models (Wolfire's first engine), big-endian.

Layout (Lugaru's ``Model::load`` in ``Source/Graphic/Models.cpp``; 37 shipped models checked:
the file size is exactly ``4 + 12 V + 36 T`` for each):

========  ===========================  =====================================================
offset    type                         field
========  ===========================  =====================================================
0         int16                        vertex_count (V, signed: at most 32767)
2         int16                        triangle_count (T)
4         float32[3] x V               vertices (x, y, z)
4+12V     36 bytes x T                 triangles: int16 i0, u0, i1, u1, i2, u2;
                                       float32 gx[3], gy[3] (per-corner texture coordinates)
4+12V+36T                              end of file (no trailer in any shipped model)
========  ===========================  =====================================================

Native document: :class:`SolidFile` with ``vertices`` ``(V, 3) >f4`` and ``triangles`` a
record array of :data:`TRI_DTYPE`; bytes after the last triangle (none in real files) are kept
as ``trailing`` so that ``write(read(f)) == f`` always.

Where we differ from the spec text (the template), and why:

* The template's hidden ``_unused`` shorts are not random: in all 16,140 triangles of the
  37 shipped files ``u0 == i1``, ``u1 == i2``, ``u2 == 0`` (an edge-list leftover of the
  exporter). They are kept verbatim; :func:`from_scene` writes ``(i1, i2, 0)``.
* ``gx``/``gy`` are per-corner texture coordinates (corner k = ``gx[k], gy[k]``), not "g"
  anything else. Normals are not stored: Lugaru computes area-weighted vertex normals.
* A vertex index outside ``0..V-1`` or a negative count is rejected as corrupt (Lugaru would
  read out of bounds).

Conversion to glTF (``to_scene``):

* Vertices are split per distinct (position, UV) pair so that per-corner UVs survive.
* Normals: area-weighted sums of un-normalised face normals, normalised, as
  ``Model::CalculateNormals`` does; Lugaru negates them because characters are drawn with
  front-face culling; we compute them on the corrected (outward CCW) winding instead, so they
  point outwards in glTF.
* Winding: the signed volume ``sum(v0 . (v1 x v2)) / 6`` decides. Objects (Box, Rock, Wall...)
  are stored CCW-outward; characters (Body*, Wolf*, Rabbit) and weapons (Sword, Staff,
  ThrowingKnife) CW-outward: for those the corner order is reversed (UVs with it).
* UVs: textures are uploaded bottom-up (OpenGL), so for objects ``v = 1 - gy``. Character
  bodies (and Belt, their clothes) are drawn after ``FlipTexCoords`` (``gy = -gy``,
  GL_REPEAT), so ``v = gy`` for them.
* Orientation: most models are stored lying down or upside down and the game turns them when
  it loads them. The mesh node gets exactly that turn, by model kind (table and sources in
  :mod:`.solid_kinds`): characters ``Rotate(180, 0, 0)``; objects (TreeTrunk, Leaves, Bush,
  Wall, Chimney, Box, Rock, ... and the Hawk) ``Rotate(90, 1, 1)``; Platform one more
  ``Rotate(90, 0, 0)`` first; weapons their ``Weapon::Load`` turns; Eye/Cornea/Iris none.
  So after conversion +Y is up as in the game (a tree grows up from y = 0), and the mesh
  data stays as stored. The kind comes from the option ``kind``, else the file name, else
  ``character`` for a CW-outward model tallest along Y (which picks exactly Body*, BodyLow,
  Rabbit, Wolf*, WolfLow of the shipped models), else ``plain``; ``character=True/False`` is
  the older spelling.
* Units are the file's (Lugaru scales characters by 0.04 and objects by 0.3 x their level scale);
  no scale is applied (the generic ``scale=`` load option does that).

``from_scene``: every triangle primitive of the scene (node transforms applied, the
upright turn of a node made by ``to_scene`` left out, any other mesh turned back by its kind's
rotation), vertices merged by position in the scene's vertex order (so an unedited model gets
the file's vertex order back: .solid -> .glb -> .solid is byte-identical for all 37 shipped
models), per-corner UVs kept (``gx = u``, ``gy = 1 - v``, or ``gy = v`` for characters),
winding written CCW (objects) or CW (``clockwise=True``, as characters and weapons are stored).
``kind``/``clockwise`` default to what ``to_scene`` recorded in the node's extras; when those
are gone (Blender exports no custom properties by default) to the kind of the mesh node's name
(``Rabbit``, ``TreeTrunk``), a node whose own rotation is exactly that kind's being taken as
to_scene's upright turn. ``kind="character"`` on a foreign (upright) mesh writes it upside
down, as Lugaru stores characters, and CW-outward unless ``clockwise=False``.
More than 32767 vertices or triangles is refused with a DocumentError.
"""
from __future__ import annotations

import warnings
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np

from ...binio import Reader, Writer
from ...errors import DocumentError, LossWarning
from ...findings import Finding, warning
from ...records import record
from ...scene import Mesh, Node, Primitive, Scene
from .solid_kinds import CW_KINDS, ROTATIONS, kind_of_name, rotation_matrix, rotation_quat

__all__ = ["SolidFile", "TRI_DTYPE", "read", "write", "to_scene", "from_scene", "signed_volume",
           "is_character", "sniff", "info", "check"]

TRI_DTYPE = np.dtype([("i0", ">i2"), ("u0", ">i2"), ("i1", ">i2"), ("u1", ">i2"),
                      ("i2", ">i2"), ("u2", ">i2"), ("gx", ">f4", (3,)), ("gy", ">f4", (3,))])
VERT_DTYPE = np.dtype((">f4", (3,)))
MAX_COUNT = 32767
#: node extras key marking the upright rotation to_scene adds (from_scene leaves it out)
UPRIGHT_KEY = "lugaru_upright"


@record
class SolidFile:
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), ">f4"))
    triangles: np.ndarray = field(default_factory=lambda: np.zeros(0, TRI_DTYPE))
    trailing: bytes = b""

    def indices(self) -> np.ndarray:
        """``(T, 3)`` int64 vertex indices."""
        t = self.triangles
        return np.stack([t["i0"], t["i1"], t["i2"]], axis=1).astype(np.int64)


def read(r: Reader) -> SolidFile:
    with r.at("header"):
        nv = r.count("vertex_count", VERT_DTYPE.itemsize, "h")
        nt = r.count("triangle_count", TRI_DTYPE.itemsize, "h")
    verts = r.records(VERT_DTYPE, nv, "vertices").reshape(nv, 3)
    start = r.pos
    tris = r.records(TRI_DTYPE, nt, "triangles")
    if nt:
        idx = np.stack([tris["i0"], tris["i1"], tris["i2"]], axis=1)
        bad = np.nonzero((idx < 0) | (idx >= nv))
        if len(bad[0]):
            t, k = int(bad[0][0]), int(bad[1][0])
            raise r.fail(f"a vertex index in 0..{nv - 1}", int(idx[t, k]),
                         offset=start + 36 * t + 4 * k, field=f"triangles[{t}].i{k}")
    trailing = r.rest()
    return SolidFile(verts, tris, trailing)


def write(doc: SolidFile) -> bytes:
    verts = np.asarray(doc.vertices)
    tris = np.asarray(doc.triangles)
    if verts.ndim != 2 or verts.shape[1] != 3:
        raise DocumentError(f"SolidFile.vertices must have shape (V, 3), got {verts.shape}")
    if tris.dtype != TRI_DTYPE:
        try:
            tris = tris.astype(TRI_DTYPE)
        except (TypeError, ValueError) as exc:
            raise DocumentError(f"SolidFile.triangles must be records of {TRI_DTYPE}") from exc
    if len(verts) > MAX_COUNT or len(tris) > MAX_COUNT:
        raise DocumentError(f".solid holds at most {MAX_COUNT} vertices and triangles, got "
                            f"{len(verts)} vertices and {len(tris)} triangles")
    w = Writer(">")
    w.i16(len(verts))
    w.i16(len(tris))
    w.records(verts, ">f4")
    w.records(tris, TRI_DTYPE)
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def signed_volume(positions: np.ndarray, tri: np.ndarray) -> float:
    """``sum(v0 . (v1 x v2)) / 6``: > 0 when the index order is CCW seen from outside."""
    p = np.asarray(positions, dtype=np.float64)
    if not len(tri):
        return 0.0
    return float(np.einsum("ij,ij->i", p[tri[:, 0]], np.cross(p[tri[:, 1]], p[tri[:, 2]])).sum() / 6)


def is_character(doc: SolidFile) -> bool:
    """A CW-outward model that is tallest along Y: a Lugaru character body."""
    if not len(doc.triangles) or not len(doc.vertices):
        return False
    p = np.asarray(doc.vertices, dtype=np.float64)
    ext = np.ptp(p, axis=0)
    return signed_volume(p, doc.indices()) < 0 and ext[1] > ext[0] and ext[1] > ext[2]


def mesh_arrays(doc: SolidFile, character: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(positions, normals, uvs, indices) of the glTF primitive (vertices split per UV)."""
    p = np.asarray(doc.vertices, dtype=np.float64)
    tri = doc.indices()
    gx = np.asarray(doc.triangles["gx"], dtype=np.float32)
    gy = np.asarray(doc.triangles["gy"], dtype=np.float32)
    if not np.all(np.isfinite(p)):
        raise DocumentError("vertex coordinates must be finite")
    if signed_volume(p, tri) < 0:
        tri = tri[:, [0, 2, 1]]
        gx = gx[:, [0, 2, 1]]
        gy = gy[:, [0, 2, 1]]
    # area-weighted normals per position
    acc = np.zeros_like(p)
    if len(tri):
        fn = np.cross(p[tri[:, 1]] - p[tri[:, 0]], p[tri[:, 2]] - p[tri[:, 0]])
        for k in range(3):
            np.add.at(acc, tri[:, k], fn)
    nrm = np.linalg.norm(acc, axis=1, keepdims=True)
    ok = (nrm[:, 0] > 1e-20) & np.all(np.isfinite(acc), axis=1)
    normals = np.tile([0.0, 1.0, 0.0], (len(p), 1))
    normals[ok] = acc[ok] / nrm[ok]
    # split per distinct (vertex, u, v)
    u = gx.reshape(-1)
    v = (gy if character else 1.0 - gy).reshape(-1).astype(np.float32)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        raise DocumentError("texture coordinates must be finite")
    corner = np.zeros(len(u), dtype=[("i", "<i8"), ("u", "<u4"), ("v", "<u4")])
    corner["i"] = tri.reshape(-1)
    corner["u"] = u.view(np.uint32)
    corner["v"] = v.view(np.uint32)
    uniq, first, inverse = np.unique(corner, return_index=True, return_inverse=True)
    vi = uniq["i"]
    positions = p[vi].astype(np.float32)
    uvs = np.stack([u[first], v[first]], axis=1).astype(np.float32)
    return positions, normals[vi].astype(np.float32), uvs, inverse.reshape(-1).astype(np.uint32)


def _kind(doc: SolidFile | None, name: Any, character: bool | None, kind: str | None) -> str:
    if kind is not None:
        if kind not in ROTATIONS:
            raise DocumentError(f"kind must be one of {sorted(ROTATIONS)}, got {kind!r}")
        return kind
    found = kind_of_name(name)
    if character is not None:
        if character:
            return "character"
        return "plain" if found in (None, "character") else found
    if found is None:
        found = "character" if doc is not None and is_character(doc) else "plain"
    return found


def to_scene(doc: SolidFile, *, source: Path | None = None, character: bool | None = None,
             kind: str | None = None) -> Scene:
    """``kind`` (see :mod:`.solid_kinds`) defaults to the one of the file name, else
    ``character`` when the shape says so, else ``plain``; ``character=True/False`` is the
    older spelling of ``kind="character"`` / not a character."""
    kind = _kind(doc, source, character, kind)
    name = source.stem if source else "solid"
    scene = Scene(name=name)
    is_char = kind == "character"
    pos, nrm, uvs, idx = mesh_arrays(doc, is_char)
    if len(idx):
        prim = Primitive(positions=pos, normals=nrm, uvs=[uvs], indices=idx)
        m = scene.add_mesh(Mesh(name=name, primitives=[prim]))
    else:
        m = None
    extras = {"lugaru_kind": kind, "lugaru_character": is_char,
              "lugaru_clockwise": signed_volume(doc.vertices, doc.indices()) < 0}
    rotation = [0.0, 0.0, 0.0, 1.0]
    if kind != "plain":
        rotation = rotation_quat(kind)      # the game's load-time Rotate(...) calls
        extras[UPRIGHT_KEY] = True
    scene.add_node(Node(name=name, mesh=m, rotation=np.asarray(rotation), extras=extras))
    return scene


def _scene_kind(scene: Scene, character: bool | None, kind: str | None) -> tuple[str, bool]:
    """(kind, whether it was recorded or named rather than guessed) of a scene's meshes."""
    meshes = [n for n in scene.nodes if n.mesh is not None]
    if kind is not None or character is not None:
        return _kind(None, meshes[0].name if meshes else None, character, kind), True
    for n in meshes:
        k = n.extras.get("lugaru_kind")
        if isinstance(k, str) and k in ROTATIONS:
            return k, True
        if n.extras.get("lugaru_character"):
            return "character", True
    for n in meshes:                    # extras lost (Blender exports none by default): names
        k = kind_of_name(n.name)
        if k is not None:
            return k, True
    return "plain", False


def _is_upright(node: Node, kind: str) -> bool:
    """The node carries to_scene's upright rotation: marked so, or (marks lost) a node whose
    own rotation is exactly the kind's, with no translation or scale."""
    if node.extras.get(UPRIGHT_KEY):
        return True
    if kind == "plain" or "lugaru_kind" in node.extras:
        return False
    q = np.asarray(node.rotation, np.float64)
    r = np.asarray(rotation_quat(kind))
    return (min(np.abs(q - r).max(), np.abs(q + r).max()) < 1e-5
            and np.abs(np.asarray(node.translation)).max() < 1e-6
            and np.abs(np.asarray(node.scale) - 1).max() < 1e-6)


def from_scene(scene: Scene, *, clockwise: bool | None = None,
               character: bool | None = None, kind: str | None = None) -> SolidFile:
    """``kind`` (:mod:`.solid_kinds`), ``clockwise`` and ``character`` default to what
    ``to_scene`` recorded on the mesh node (``lugaru_kind``/``lugaru_clockwise``/
    ``lugaru_character`` extras), else to the kind of the mesh node's name (``TreeTrunk``),
    else ``plain`` (no rotation, counter-clockwise). A model is written as Lugaru stores it:
    the game's load-time rotation is undone (a node carrying to_scene's upright rotation just
    leaves it out) and characters and weapons are written clockwise-outward unless told."""
    kind, _ = _scene_kind(scene, character, kind)
    is_char = kind == "character"
    marks = [n.extras for n in scene.nodes if n.mesh is not None]
    if clockwise is None:
        if any("lugaru_clockwise" in e for e in marks):
            clockwise = any(bool(e.get("lugaru_clockwise")) for e in marks)
        else:
            names = [kind_of_name(n.name) for n in scene.nodes if n.mesh is not None]
            belt = any(Path(str(n.name)).stem.lower().endswith("belt")
                       for n in scene.nodes if n.mesh is not None)
            clockwise = kind in CW_KINDS and not (belt and kind in names)
    game = np.eye(4)
    game[:3, :3] = rotation_matrix(kind).T             # undo the game's load-time turn
    worlds = scene.world_matrices()
    parents = scene.parents()
    pos_l, uv_l, tri_l = [], [], []
    base = 0
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        if node.skin is None and _is_upright(node, kind):
            # leave the upright rotation out: undo the node's own local transform
            world = worlds[parents[ni]] if parents[ni] >= 0 else np.eye(4)
        else:
            world = np.eye(4) if node.skin is not None else worlds[ni]
            world = game @ world
        for p in scene.meshes[node.mesh].primitives:
            if p.mode != 4:
                warnings.warn("non-triangle primitive dropped", LossWarning, stacklevel=2)
                continue
            n = len(p.positions)
            pos = p.positions.astype(np.float64)
            if not np.array_equal(world, np.eye(4)):
                pos = (np.c_[pos, np.ones(n)] @ world.T)[:, :3]
            pos_l.append(pos)
            uv_l.append(p.uvs[0].astype(np.float64) if p.uvs else np.zeros((n, 2)))
            idx = (p.indices if p.indices is not None else np.arange(n)).astype(np.int64)
            t = idx.reshape(-1, 3)
            if np.linalg.det(world[:3, :3]) < 0:
                t = t[:, [0, 2, 1]]
            tri_l.append(t + base)
            base += n
    if not pos_l:
        return SolidFile()
    pos = np.concatenate(pos_l)
    uv = np.concatenate(uv_l)
    tri = np.concatenate(tri_l) if tri_l else np.zeros((0, 3), np.int64)
    # merge vertices by position, in the order of the scene's vertices (to_scene keeps the
    # file's order, so an unedited model gets its vertex order back); UVs live on the corners
    p32 = pos.astype("<f4")
    _, first, inverse = np.unique(p32.view("<u4").reshape(-1, 3), axis=0, return_index=True,
                                  return_inverse=True)
    inverse = inverse.reshape(-1)
    used = np.unique(inverse[tri.reshape(-1)]) if len(tri) else np.zeros(0, np.int64)
    used = used[np.argsort(first[used], kind="stable")]
    remap = np.full(len(first), -1, np.int64)
    remap[used] = np.arange(len(used))
    verts = p32[first[used]].astype(">f4")
    corners = remap[inverse[tri]]
    uvc = uv[tri]                                    # (T, 3, 2)
    if clockwise:
        corners = corners[:, [0, 2, 1]]
        uvc = uvc[:, [0, 2, 1]]
    if len(verts) > MAX_COUNT or len(corners) > MAX_COUNT:
        raise DocumentError(f".solid holds at most {MAX_COUNT} vertices and {MAX_COUNT} triangles; "
                            f"this scene has {len(verts)} distinct vertex positions and "
                            f"{len(corners)} triangles")
    tris = np.zeros(len(corners), TRI_DTYPE)
    tris["i0"], tris["i1"], tris["i2"] = corners[:, 0], corners[:, 1], corners[:, 2]
    tris["u0"], tris["u1"], tris["u2"] = corners[:, 1], corners[:, 2], 0
    tris["gx"] = uvc[:, :, 0]
    tris["gy"] = uvc[:, :, 1] if is_char else 1.0 - uvc[:, :, 1]
    return SolidFile(verts.reshape(-1, 3), tris)


def info(doc: SolidFile) -> dict:
    return {"vertices": len(doc.vertices), "triangles": len(doc.triangles),
            "signed_volume": round(signed_volume(doc.vertices, doc.indices()), 3),
            "character": is_character(doc)}


def check(doc: SolidFile) -> list[Finding]:
    out = []
    t = doc.triangles
    if len(t) and not (np.array_equal(t["u0"], t["i1"]) and np.array_equal(t["u1"], t["i2"])
                       and not np.any(t["u2"])):
        out.append(warning("solid.unused_shorts", "the unused shorts are not (i1, i2, 0) as in "
                           "the shipped models"))
    if doc.trailing:
        out.append(warning("solid.trailing", f"{len(doc.trailing)} bytes after the last triangle"))
    return out


def sniff(head: bytes) -> bool:
    if len(head) < 4:
        return False
    nv, nt = int.from_bytes(head[0:2], "big", signed=True), int.from_bytes(head[2:4], "big", signed=True)
    return nv >= 0 and nt >= 0
