"""A small Wavefront OBJ reader/writer for the character meshes a ``.phxbn`` skins.

Only what Overgrowth's ``SimpleLoadTriangleCutObj`` uses: ``v``, ``vt``, ``vn`` and ``f``
(triangles and quads; a quad ``a b c d`` becomes ``(a, b, c)`` and ``(d, a, c)`` as the engine
splits it). Faces with more corners are fanned (the engine does not support them; a
LossWarning says so). ``o``/``g``/``s``/``usemtl`` and comments are ignored. Indices may be
negative (relative).

Registered as the ``obj`` format so that ``from_scene`` of a skinned glTF can write the
character mesh beside its ``.phxbn`` (one OBJ corner per ``.phxbn`` weight entry, in order) and
so that ``retromesh convert x.obj x.glb`` works. The native document :class:`ObjFile` keeps the
text as bytes (lossless). The scene mapping: :func:`.scene.obj_to_scene` makes one static
mesh (OBJ ``vt`` has its origin at the bottom: glTF ``v = 1 - vt``; no centring),
:func:`.scene_write.scene_to_obj` writes every triangle primitive (node transforms applied)
with ``v``/``vt``/``vn``.
"""
from __future__ import annotations

import warnings

import numpy as np

from ...binio import Reader
from ...errors import FormatError, LossWarning
from ...records import record

__all__ = ["ObjMesh", "ObjFile", "parse_obj", "write_obj", "corner_mesh", "read", "write", "info"]


@record
class ObjMesh:
    positions: np.ndarray        # (V, 3) float64
    texcoords: np.ndarray        # (VT, 2)
    normals: np.ndarray          # (VN, 3)
    corners: np.ndarray          # (3T, 3) int64: v, vt, vn (0-based; -1 = none)
    objects: int = 0

    @property
    def triangle_count(self) -> int:
        return len(self.corners) // 3


def _floats(lines: list[str], where: list[int], width: int, what: str,
            file: str | None) -> np.ndarray:
    if not lines:
        return np.zeros((0, width))
    rows = [ln.split()[:width] for ln in lines]
    try:
        return np.array([r + ["0"] * (width - len(r)) for r in rows], dtype=np.float64)
    except (ValueError, OverflowError):
        pass
    for i, r in enumerate(rows):                      # the error path: find the line
        try:
            [float(x) for x in r]
        except (ValueError, OverflowError) as exc:
            raise FormatError(f"numbers in the OBJ {what} lines", file=file, offset=where[i],
                              path=f"{what}[{i}]", got=" ".join(r)) from exc
    raise FormatError(f"numbers in the OBJ {what} lines", file=file, path=what)


def parse_obj(data: bytes, file: str | None = None) -> ObjMesh:
    text = data.decode("latin-1")            # one character per byte: offsets are byte offsets
    v, vt, vn, faces = [], [], [], []
    v_at, vt_at, vn_at, f_at = [], [], [], []
    f_counts = []                            # (v, vt, vn) defined before each face
    objects = 0
    offset = 0
    for ln in text.splitlines(keepends=True):
        s = ln.strip()
        if s.startswith("v "):
            v.append(s[2:])
            v_at.append(offset)
        elif s.startswith("vt "):
            vt.append(s[3:])
            vt_at.append(offset)
        elif s.startswith("vn "):
            vn.append(s[3:])
            vn_at.append(offset)
        elif s.startswith("f "):
            faces.append(s[2:].split())
            f_at.append(offset)
            f_counts.append((len(v), len(vt), len(vn)))
        elif s.startswith("o "):
            objects += 1
        offset += len(ln)
    pos = _floats(v, v_at, 3, "v", file)
    tex = _floats(vt, vt_at, 2, "vt", file)
    nrm = _floats(vn, vn_at, 3, "vn", file)
    tokens: list[str] = []
    owner: list[int] = []                    # face of each corner token
    fanned = False
    for fi, f in enumerate(faces):
        n = len(f)
        if n < 3:
            raise FormatError("faces of 3 or 4 corners", file=file, offset=f_at[fi],
                              path=f"f[{fi}]", got=" ".join(f))
        if n == 3:
            tokens += f
        elif n == 4:
            a, b, c, d = f
            tokens += [a, b, c, d, a, c]
        else:
            fanned = True
            for k in range(1, n - 1):
                tokens += [f[0], f[k], f[k + 1]]
        owner += [fi] * (3 * (n - 2))
    if fanned:
        warnings.warn("OBJ faces with more than 4 corners were fanned (Overgrowth does not read "
                      "them)", LossWarning, stacklevel=2)
    corners = np.full((len(tokens), 3), -1, dtype=np.int64)
    counts = (len(pos), len(tex), len(nrm))
    face = np.asarray(owner, dtype=np.int64)
    before = np.asarray(f_counts, dtype=np.int64).reshape(-1, 3)[face] if len(face) else \
        np.zeros((0, 3), np.int64)
    parts = [t.split("/") for t in tokens]
    for k in range(3):
        given = np.array([len(p) > k and bool(p[k]) for p in parts], bool)
        try:
            vals = np.array([p[k] if g else "0" for p, g in zip(parts, given)], dtype=np.int64)
        except (ValueError, OverflowError) as exc:
            for i, p in enumerate(parts):
                try:
                    int(p[k]) if given[i] else 0
                except (ValueError, OverflowError):
                    fi = int(face[i])
                    raise FormatError("integer indices in the OBJ faces", file=file,
                                      offset=f_at[fi], path=f"f[{fi}]",
                                      got=tokens[i]) from exc
            raise FormatError("integer indices in the OBJ faces", file=file, path="f") from exc
        # negative indices count back from the last element defined before the face
        vals = np.where(vals < 0, vals + before[:, k], vals - 1)
        corners[:, k] = np.where(given, vals, -1)
        bad = given & ((corners[:, k] < 0) | (corners[:, k] >= counts[k]))
        if k == 0:
            bad |= ~given
        if np.any(bad):
            i = int(np.argmax(bad))
            fi = int(face[i])
            raise FormatError(f"{('v', 'vt', 'vn')[k]} indices within 1..{counts[k]} (or "
                              "-1..-count before the face)", file=file, offset=f_at[fi],
                              path=f"f[{fi}]", got=tokens[i])
    return ObjMesh(pos, tex, nrm, corners, objects)


def _rows(prefix: str, arr: np.ndarray) -> str:
    arr = np.asarray(arr, np.float64)
    if not len(arr):
        return ""
    fmt = prefix + " " + " ".join(["%.9g"] * arr.shape[1])
    return "\n".join(fmt % tuple(r) for r in arr.tolist()) + "\n"


def write_obj(positions: np.ndarray, triangles: np.ndarray, texcoords: np.ndarray | None = None,
              uv_corners: np.ndarray | None = None, name: str = "mesh",
              normals: np.ndarray | None = None) -> bytes:
    """A minimal OBJ: one object, ``v``/``vt``/``vn`` and triangle faces (1-based; ``vn``
    indexed like ``v``)."""
    out = f"o {name}\n" + _rows("v", positions)
    tri = np.asarray(triangles, np.int64).reshape(-1, 3) + 1
    cols = [tri]
    if texcoords is not None:
        out += _rows("vt", texcoords)
        cols.append((np.asarray(uv_corners, np.int64).reshape(-1, 3) + 1) if uv_corners is not None
                    else tri)
    if normals is not None:
        out += _rows("vn", normals)
    if texcoords is not None and normals is not None:
        corner = [f"{a}/{b}/{a}" for a, b in zip(cols[0].ravel().tolist(), cols[1].ravel().tolist())]
    elif texcoords is not None:
        corner = [f"{a}/{b}" for a, b in zip(cols[0].ravel().tolist(), cols[1].ravel().tolist())]
    elif normals is not None:
        corner = [f"{a}//{a}" for a in cols[0].ravel().tolist()]
    else:
        corner = [str(a) for a in cols[0].ravel().tolist()]
    faces = ["f " + " ".join(corner[k:k + 3]) for k in range(0, len(corner), 3)]
    return (out + "\n".join(faces) + ("\n" if faces else "")).encode("ascii")


@record
class ObjFile:
    """An OBJ file kept as its bytes (parse with :meth:`mesh`)."""
    text: bytes = b""

    @classmethod
    def parsed(cls, text: bytes, mesh: ObjMesh) -> ObjFile:
        """The file of ``text`` whose parsed mesh is already ``mesh`` (not parsed again)."""
        doc = cls(bytes(text))
        doc.__dict__["_parsed"] = (doc.text, mesh)
        return doc

    def mesh(self, file: str | None = None) -> ObjMesh:
        # parsed once per text (read() parses it to check it): kept beside the fields, so
        # equality, dumps and the bytes written are the text's alone
        kept = self.__dict__.get("_parsed")
        if kept is None or kept[0] is not self.text:
            kept = (self.text, parse_obj(self.text, file))
            self.__dict__["_parsed"] = kept
        return kept[1]


def corner_mesh(obj: ObjMesh) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Per-corner (positions, glTF uvs or None, normals or None)."""
    c = obj.corners
    pos = obj.positions[c[:, 0]]
    uv = nrm = None
    if len(c) and len(obj.texcoords) and np.all(c[:, 1] >= 0):
        t = obj.texcoords[c[:, 1]]
        uv = np.stack([t[:, 0], 1.0 - t[:, 1]], 1)
    if len(c) and len(obj.normals) and np.all(c[:, 2] >= 0):
        nrm = obj.normals[c[:, 2]]
    return pos, uv, nrm


def read(r: Reader) -> ObjFile:
    doc = ObjFile(r.rest())
    try:
        doc.mesh(r.file)
    except FormatError as exc:
        exc.with_file(r.file)           # fills in the file, keeps the exception's own chain
        raise
    return doc


def write(doc: ObjFile) -> bytes:
    return bytes(doc.text)


def info(doc: ObjFile) -> dict[str, int]:
    return {"triangles": doc.mesh().triangle_count}
