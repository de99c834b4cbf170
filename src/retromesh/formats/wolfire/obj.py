"""A small Wavefront OBJ reader/writer for the character meshes a ``.phxbn`` skins.

Only what Overgrowth's ``SimpleLoadTriangleCutObj`` uses: ``v``, ``vt``, ``vn`` and ``f``
(triangles and quads; a quad ``a b c d`` becomes ``(a, b, c)`` and ``(d, a, c)`` as the engine
splits it). Faces with more corners are fanned (the engine does not support them; a
LossWarning says so). ``o``/``g``/``s``/``usemtl`` and comments are ignored. Indices may be
negative (relative). Not registered as a file format of its own: it is read through the
``mesh=`` option of the ``.phxbn``/``.anm`` conversions.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ...errors import FormatError, LossWarning

__all__ = ["ObjMesh", "parse_obj", "write_obj"]


@dataclass
class ObjMesh:
    positions: np.ndarray        # (V, 3) float64
    texcoords: np.ndarray        # (VT, 2)
    normals: np.ndarray          # (VN, 3)
    corners: np.ndarray          # (3T, 3) int64: v, vt, vn (0-based; -1 = none)
    objects: int = 0

    @property
    def triangle_count(self) -> int:
        return len(self.corners) // 3


def _floats(lines: list[str], width: int, what: str, file: str | None) -> np.ndarray:
    if not lines:
        return np.zeros((0, width))
    try:
        rows = [ln.split()[:width] for ln in lines]
        arr = np.array([r + ["0"] * (width - len(r)) for r in rows], dtype=np.float64)
    except ValueError as exc:
        raise FormatError(f"numbers in the OBJ {what} lines", file=file, path=what,
                          got=str(exc)) from exc
    return arr


def parse_obj(data: bytes, file: str | None = None) -> ObjMesh:
    text = data.decode("latin-1")
    v, vt, vn, faces = [], [], [], []
    objects = 0
    for ln in text.splitlines():
        s = ln.strip()
        if s.startswith("v "):
            v.append(s[2:])
        elif s.startswith("vt "):
            vt.append(s[3:])
        elif s.startswith("vn "):
            vn.append(s[3:])
        elif s.startswith("f "):
            faces.append(s[2:].split())
        elif s.startswith("o "):
            objects += 1
    pos = _floats(v, 3, "v", file)
    tex = _floats(vt, 2, "vt", file)
    nrm = _floats(vn, 3, "vn", file)
    tokens: list[str] = []
    fanned = False
    for f in faces:
        n = len(f)
        if n < 3:
            raise FormatError("faces of 3 or 4 corners", file=file, path="f", got=" ".join(f))
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
                      "them)", LossWarning, stacklevel=2)
    corners = np.full((len(tokens), 3), -1, dtype=np.int64)
    counts = (len(pos), len(tex), len(nrm))
    try:
        parts = [t.split("/") for t in tokens]
        for k in range(3):
            col = [p[k] if len(p) > k and p[k] else "0" for p in parts]
            vals = np.array(col, dtype=np.int64)
            vals = np.where(vals < 0, vals + counts[k], vals - 1)
            vals = np.where(np.array([len(p) > k and bool(p[k]) for p in parts], bool), vals, -1)
            corners[:, k] = vals
    except ValueError as exc:
        raise FormatError("integer indices in the OBJ faces", file=file, path="f",
                          got=str(exc)) from exc
    for k, name in enumerate(("v", "vt", "vn")):
        col = corners[:, k]
        if k == 0 and np.any(col < 0):
            raise FormatError("every face corner to name a vertex", file=file, path="f")
        if len(col) and col.max() >= counts[k]:
            raise FormatError(f"{name} indices within 1..{counts[k]}", file=file, path="f",
                              got=int(col.max()) + 1)
    return ObjMesh(pos, tex, nrm, corners, objects)


def write_obj(positions: np.ndarray, triangles: np.ndarray, texcoords: np.ndarray | None = None,
              uv_corners: np.ndarray | None = None, name: str = "mesh") -> bytes:
    """A minimal OBJ: one object, ``v``/``vt`` and triangle faces (1-based)."""
    out = [f"o {name}"]
    out += [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in np.asarray(positions, np.float64)]
    tri = np.asarray(triangles, np.int64).reshape(-1, 3) + 1
    if texcoords is not None:
        out += [f"vt {u:.6f} {v:.6f}" for u, v in np.asarray(texcoords, np.float64)]
        uvt = (np.asarray(uv_corners, np.int64).reshape(-1, 3) + 1) if uv_corners is not None else tri
        out += [f"f {a}/{ta} {b}/{tb} {c}/{tc}" for (a, b, c), (ta, tb, tc) in zip(tri, uvt)]
    else:
        out += [f"f {a} {b} {c}" for a, b, c in tri]
    return ("\n".join(out) + "\n").encode("ascii")
