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

import re
import warnings

import numpy as np

from ...binio import Reader
from ...errors import FormatError, LossWarning
from ...records import record

__all__ = ["ObjMesh", "ObjFile", "parse_obj", "parsed_lines", "corner_form", "write_obj",
           "corner_mesh", "read", "write", "info"]


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


def _offset(lines: list[str], i: int) -> int:
    """The byte offset of line ``i`` (for an error: not counted while reading)."""
    return sum(map(len, lines[:i]))


def _floats(rows_text: list[str], at: list[int], lines: list[str], width: int, what: str,
            file: str | None) -> np.ndarray:
    if not rows_text:
        return np.zeros((0, width))
    split = list(map(str.split, rows_text))
    try:
        if all(len(r) == width for r in split):         # the usual case: one flat list
            return np.array([x for r in split for x in r], np.float64).reshape(-1, width)
        rows = [r[:width] for r in split]
        return np.array([r + ["0"] * (width - len(r)) for r in rows], dtype=np.float64)
    except (ValueError, OverflowError):
        pass
    rows = [r[:width] for r in split]
    for i, r in enumerate(rows):                      # the error path: find the line
        try:
            [float(x) for x in r]
        except (ValueError, OverflowError) as exc:
            raise FormatError(f"numbers in the OBJ {what} lines", file=file,
                              offset=_offset(lines, at[i]), path=f"{what}[{i}]",
                              got=" ".join(r)) from exc
    raise FormatError(f"numbers in the OBJ {what} lines", file=file, path=what)


#: the first two characters of a stripped line -> (its kind: v, vt, vn, f; where its values
#: start); ``vt``/``vn`` count only when a space follows
_HEADS = {"v ": (0, 2), "vt": (1, 3), "vn": (2, 3), "f ": (3, 2)}
#: a corner token's spelling (its first one's) -> which of v, vt, vn it gives, and the pattern
#: all tokens of a file spelled alike match (joined by spaces): their indices then come from
#: one split
_FORMS = {0: ((True, False, False), re.compile(r"[^ /]+(?: [^ /]+)*")),
          1: ((True, True, False), re.compile(r"[^ /]+/[^ /]+(?: [^ /]+/[^ /]+)*")),
          2: ((True, True, True), re.compile(r"[^ /]+/[^ /]+/[^ /]+(?: [^ /]+/[^ /]+/[^ /]+)*")),
          3: ((True, False, True), re.compile(r"[^ /]+//[^ /]+(?: [^ /]+//[^ /]+)*"))}


def corner_form(token: str) -> int:
    """How a face's corner token is spelled: 0 ``a``, 1 ``a/b``, 2 ``a/b/c``, 3 ``a//c``
    (the keys of :data:`_FORMS`), else -1 (the indices themselves are not looked at)."""
    n = token.count("/")
    if n == 2 and "//" in token:
        return 3
    return n if n < 3 else -1


def parse_obj(data: bytes, file: str | None = None) -> ObjMesh:
    text = data.decode("latin-1")            # one character per byte: offsets are byte offsets
    lines = text.splitlines(keepends=True)
    at: tuple[list[int], ...] = ([], [], [], [])       # line numbers of v, vt, vn, f lines
    body: tuple[list[str], ...] = ([], [], [], [])     # their text after the key
    objects = 0
    heads = _HEADS
    for i, ln in enumerate(lines):
        s = ln.strip()
        got = heads.get(s[:2])
        if got is None:
            if s[:2] == "o ":
                objects += 1
            continue
        k, cut = got
        if cut == 3 and s[2:3] != " ":
            continue
        at[k].append(i)
        body[k].append(s[cut:])
    pos = _floats(body[0], at[0], lines, 3, "v", file)
    tex = _floats(body[1], at[1], lines, 2, "vt", file)
    nrm = _floats(body[2], at[2], lines, 3, "vn", file)
    faces = [f.split() for f in body[3]]
    corners = _corners(faces, at, lines, (len(pos), len(tex), len(nrm)), file)
    mesh = ObjMesh(pos, tex, nrm, corners, objects)
    # the lines as split here, for the records that template the text (:mod:`.exact`): kept
    # beside the fields, as ObjFile keeps its parse
    mesh.__dict__["_lines"] = (data, lines, at)
    return mesh


def parsed_lines(mesh: ObjMesh, data: bytes) -> tuple[list[str], tuple[list[int], ...]] | None:
    """(the lines of ``data``, the line numbers of its ``v``, ``vt``, ``vn`` and ``f`` lines)
    as :func:`parse_obj` split them when it parsed ``mesh`` from ``data``, else None."""
    kept = mesh.__dict__.get("_lines")
    if kept is None or (kept[0] is not data and kept[0] != data):
        return None
    return kept[1], kept[2]


def _tokens(faces: list[list[str]], f_at: list[int], lines: list[str],
            file: str | None) -> tuple[list[str], np.ndarray]:
    """Each triangle corner's token (quads split ``(a, b, c), (d, a, c)``, larger faces
    fanned) and the face it is of."""
    counts = np.fromiter(map(len, faces), np.int64, len(faces))
    if len(counts) and (counts == 3).all():
        return [t for f in faces for t in f], np.repeat(np.arange(len(faces)), 3)
    tokens: list[str] = []
    fanned = False
    for fi, f in enumerate(faces):
        n = len(f)
        if n < 3:
            raise FormatError("faces of 3 or 4 corners", file=file, offset=_offset(lines, f_at[fi]),
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
    if fanned:
        warnings.warn("OBJ faces with more than 4 corners were fanned (Overgrowth does not read "
                      "them)", LossWarning, stacklevel=4)
    return tokens, np.repeat(np.arange(len(faces)), 3 * np.maximum(counts - 2, 0))


def _corners(faces: list[list[str]], at: tuple[list[int], ...], lines: list[str],
             counts: tuple[int, int, int], file: str | None) -> np.ndarray:
    """(3T, 3) source indices v, vt, vn of the faces' triangle corners (0-based, -1: none)."""
    f_at = at[3]
    tokens, face = _tokens(faces, f_at, lines, file)
    corners = np.full((len(tokens), 3), -1, dtype=np.int64)
    # (v, vt, vn) defined before each face: negative indices count back from there
    lines_of = np.asarray(f_at, np.int64)[face]
    before = np.stack([np.searchsorted(np.asarray(at[k], np.int64), lines_of) for k in range(3)],
                      1) if len(face) else np.zeros((0, 3), np.int64)
    try:
        fast = _same_form(tokens)
    except (ValueError, OverflowError):      # (the tokens one by one tell which one)
        fast = None
    parts = None if fast is not None else [t.split("/") for t in tokens]
    for k in range(3):
        try:
            if fast is not None:
                given = np.full(len(tokens), fast[0][k])
                vals = fast[1][k] if fast[0][k] else np.zeros(len(tokens), np.int64)
            else:
                assert parts is not None
                given = np.array([len(p) > k and bool(p[k]) for p in parts], bool)
                vals = np.array([p[k] if g else "0" for p, g in zip(parts, given)],
                                dtype=np.int64)
        except (ValueError, OverflowError) as exc:
            for i, t in enumerate(tokens):
                p = t.split("/")
                try:
                    int(p[k]) if len(p) > k and p[k] else 0
                except (ValueError, OverflowError):
                    fi = int(face[i])
                    raise FormatError("integer indices in the OBJ faces", file=file,
                                      offset=_offset(lines, f_at[fi]), path=f"f[{fi}]",
                                      got=tokens[i]) from exc
            raise FormatError("integer indices in the OBJ faces", file=file, path="f") from exc
        vals = np.where(vals < 0, vals + before[:, k], vals - 1)
        corners[:, k] = np.where(given, vals, -1)
        bad = given & ((corners[:, k] < 0) | (corners[:, k] >= counts[k]))
        if k == 0:
            bad |= ~given
        if np.any(bad):
            i = int(np.argmax(bad))
            fi = int(face[i])
            raise FormatError(f"{('v', 'vt', 'vn')[k]} indices within 1..{counts[k]} (or "
                              "-1..-count before the face)", file=file,
                              offset=_offset(lines, f_at[fi]), path=f"f[{fi}]", got=tokens[i])
    return corners


def _same_form(tokens: list[str]) -> tuple[tuple[bool, ...], list[np.ndarray]] | None:
    """When every token is spelled as the first (``a``, ``a/b``, ``a/b/c``, ``a//c``: each
    index given), which of v, vt, vn they give and the indices of each (one split of them
    all); else None. Raises ValueError on an index that is not an integer (or OverflowError)."""
    if not tokens:
        return None
    form = _FORMS.get(corner_form(tokens[0]))
    if form is None:
        return None
    given, pattern = form
    joined = " ".join(tokens)
    if pattern.fullmatch(joined) is None:
        return None
    width = sum(given)
    fields = np.array(joined.replace("/", " ").split(), dtype=np.int64).reshape(-1, width)
    cols = iter(fields.T)
    return given, [next(cols) if g else np.zeros(0, np.int64) for g in given]


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
