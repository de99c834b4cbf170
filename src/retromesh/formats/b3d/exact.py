"""The file's own float bits and chunk order, restored after glTF when unedited (issue 32).

glTF makes us change some values: unit normals and quaternions, a transform near the default
left out (so ``1.0000001`` reads back as ``1.0``), a sign of zero lost, a key quaternion flipped
to the hemisphere of the key before it (so that it interpolates the short way). :func:`.scene.to_scene`
writes the glTF values and keeps, for each value the plain way back would not give back bit for
bit, the value as the file had it:

* NODE: ``node.extras["b3d"]["order"]`` the kinds of its child chunks in file order when they
  are not in the order the writer uses (an ANIM before the child NODEs); ``["trs"]`` the file's
  10 floats when the way back would not give them back;
* VRTS normals and colours: ``b3d_tris[k]["exact"]`` (mesh extras) per primitive, the rows that
  would not come back and their file values (:func:`pack`);
* KEYS rotations: ``node.extras["b3d"]["kexact"]``, per KEYS chunk, the keys flipped to the
  other hemisphere and the rows that would not come back with their file values.

On the way back each kept value is used only while the scene still holds what we wrote from it
(recomputed from the kept value: bit for bit on the plain path, within :data:`BLENDER_TOLERANCE`
when the GLB came through Blender, which stores floats its own way); otherwise the scene's
(edited) value is written. Edits smaller than the tolerance are thus dropped. Records live
where Blender keeps them (node and mesh extras).
"""
from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

import numpy as np

from ...geometry import unit_rows
from .axes import Z32, Z, rot_from_gltf, rot_to_gltf
from .chunks import AnimChunk, Bone, Keys, MeshChunk, NodeChunk, RawChunk

__all__ = ["BLENDER_TOLERANCE", "BLENDER_MARK", "tolerance", "pack", "unpack", "node_record",
           "node_values", "reorder", "normal_naive", "restore_rows", "flip_rows", "keys_record",
           "restore_keys"]

#: scene extras key the Blender extension sets on a GLB Blender wrote (its generator)
BLENDER_MARK = "retromesh_blender"
#: how far a value may be from what we wrote and still count as unedited, through Blender
#: (float32 matrices, per-corner normals stored in its own form): relative to max(1, |value|)
BLENDER_TOLERANCE = {"trs": 1e-5, "normal": 2e-3, "color": 2e-3, "rotation": 1e-4}


def tolerance(scene, kind: str) -> float:
    """0 (bit for bit) unless the scene came through Blender."""
    return BLENDER_TOLERANCE[kind] if scene.extras.get(BLENDER_MARK) else 0.0


def _close(a: np.ndarray, b: np.ndarray, tol: float) -> np.ndarray:
    """Per row, a equals b (tol 0: as float32), or within tol x max(1, |b|)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if tol == 0:
        return np.all(a.astype(np.float32) == b.astype(np.float32), axis=-1)
    return np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b)), axis=-1)


# -- float32 rows, packed -----------------------------------------------------------------------

def _b64(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode("ascii")


def _unb64(text: Any) -> bytes | None:
    if not isinstance(text, str):
        return None
    try:
        return zlib.decompress(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, zlib.error):
        return None


def pack(orig: np.ndarray, naive: np.ndarray) -> dict | None:
    """The rows of ``orig`` (k, c) float32 whose bits ``naive`` does not give back:
    ``{"n": k, "rows": ..., "f32": ...}`` (rows left out when all differ; the float bytes
    shuffled byte plane by byte plane, then deflated: the exponents compress well), or None."""
    o = np.ascontiguousarray(orig, np.float32)
    differ = np.any(o.view(np.uint32) != np.ascontiguousarray(naive, np.float32).view(np.uint32),
                    axis=1)
    if not differ.any():
        return None
    rec: dict[str, Any] = {"n": int(len(o))}
    if not differ.all():
        rows = np.flatnonzero(differ)
        rec["rows"] = _b64(np.diff(rows, prepend=0).astype("<u4").tobytes())
        o = o[rows]
    rec["f32"] = _b64(np.ascontiguousarray(o.astype("<f4")).view(np.uint8).reshape(-1, 4).T.tobytes())
    return rec


def unpack(rec: Any, n: int, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows, values (m, width) float32) of a :func:`pack` record for ``n`` rows; None when it
    is missing or does not fit."""
    if not isinstance(rec, dict) or rec.get("n") != n:
        return None
    data = _unb64(rec.get("f32"))
    if data is None or len(data) % (4 * width):
        return None
    m = len(data) // (4 * width)
    values = np.frombuffer(data, np.uint8).reshape(4, -1).T.copy().view("<f4").reshape(m, width)
    if "rows" in rec:
        raw = _unb64(rec["rows"])
        if raw is None or len(raw) != 4 * m:
            return None
        rows = np.cumsum(np.frombuffer(raw, "<u4").astype(np.int64))
        if m and (rows[-1] >= n or (np.diff(rows) <= 0).any()):
            return None
    elif m == n:
        rows = np.arange(n)
    else:
        return None
    return rows, values.astype(np.float32)


def restore_rows(out: np.ndarray, expect_of, got: np.ndarray, rec: Any, tol: float,
                 degenerate: bool = False) -> None:
    """Where a kept row still gives what the scene holds (``expect_of(kept)`` against ``got``,
    both (m, c) in the scene's terms), write the kept file value into ``out`` (in place);
    ``degenerate``: kept rows of zero length match anything (normals glTF had to compute)."""
    got_rows = unpack(rec, len(out), out.shape[1])
    if got_rows is None:
        return
    rows, kept = got_rows
    if not len(rows):
        return
    ok = _close(expect_of(kept), got[rows], tol)
    if degenerate:
        # a zero or non-finite normal: glTF got one computed from the faces (any unit normal)
        sq = np.einsum("ij,ij->i", kept.astype(np.float64), kept.astype(np.float64))
        ok |= ~((sq > 1e-24) & np.isfinite(sq))
    out[rows[ok]] = kept[ok]


def normal_naive(normals: np.ndarray) -> np.ndarray:
    """B3D normals as the plain way back gives them: through glTF's unit normals."""
    return unit_rows(normals * Z32) * Z32


# -- NODE -------------------------------------------------------------------------------------

_KIND = {MeshChunk: "M", Bone: "B", Keys: "K", NodeChunk: "N", AnimChunk: "A", RawChunk: "R"}
_RANK = {"M": 0, "B": 1, "K": 2, "N": 3, "A": 4}


def _kinds(children: list) -> str:
    return "".join(_KIND.get(type(c), "R") for c in children)


def _as_written(t, r, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A node's TRS as our glTF writer writes it and the reader reads it back: values near the
    default left out (np.allclose's tolerance, gltf/writer._near), the rotation unit."""
    t, r, s = (np.asarray(v, np.float64) for v in (t, r, s))
    if np.all(np.abs(t) <= 1e-8):
        t = np.zeros(3)
    if np.all(np.abs(r - (0, 0, 0, 1)) <= 1e-8 + 1e-5 * np.array([0, 0, 0, 1.0])):
        r = np.array([0.0, 0.0, 0.0, 1.0])
    else:
        n = np.sqrt(np.dot(r, r))
        r = r / n if n > 0 else r
    if np.all(np.abs(s - 1) <= 1e-8 + 1e-5):
        s = np.ones(3)
    return t, r, s


def _gltf_trs(position, rotation, scale):
    return np.asarray(position, np.float64) * Z, rot_to_gltf(rotation), np.asarray(scale, np.float64)


def node_values(t, r, s) -> tuple[tuple, tuple, tuple]:
    """A node's glTF TRS as NODE floats (zeros written +0.0: a zero's sign glTF may not keep)."""
    pos = np.asarray(t, np.float64) * Z + 0.0
    rot = rot_from_gltf(r) + 0.0
    return (tuple(pos.astype(np.float32).tolist()), tuple((np.asarray(s, np.float64) + 0.0)
            .astype(np.float32).tolist()), tuple(rot.astype(np.float32).tolist()))


def _floats(chunk_or_values) -> np.ndarray:
    return np.asarray(chunk_or_values, np.float32)


def node_record(chunk: NodeChunk) -> dict:
    """What ``node.extras["b3d"]`` needs besides the glTF node to give ``chunk`` back."""
    out: dict[str, Any] = {}
    kinds = _kinds(chunk.children)
    plain = [k for k in kinds if k != "R"]
    if plain != sorted(plain, key=_RANK.__getitem__):
        out["order"] = kinds
    file = _floats([*chunk.position, *chunk.scale, *chunk.rotation])
    pos, scale, rot = node_values(*_as_written(*_gltf_trs(chunk.position, chunk.rotation,
                                                         chunk.scale)))
    if _floats([*pos, *scale, *rot]).tobytes() != file.tobytes():
        out["trs"] = base64.b64encode(file.astype("<f4").tobytes()).decode("ascii")
    return out


def kept_trs(native: dict, node, tol: float) -> tuple[tuple, tuple, tuple] | None:
    """The NODE's kept position, scale, rotation when ``node`` still has what we wrote."""
    text = native.get("trs")
    try:
        raw = base64.b64decode(text, validate=True) if isinstance(text, str) else b""
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 40:
        return None
    f = np.frombuffer(raw, "<f4")
    t, r, s = _as_written(*_gltf_trs(f[0:3], f[6:10], f[3:6]))
    got_r = np.asarray(node.rotation, np.float64)
    if not (_close(node.translation, t, tol) and _close(node.scale, s, tol)
            and (_close(got_r, r, tol) or _close(-got_r, r, tol))):
        return None
    vals = f.tolist()
    return tuple(vals[0:3]), tuple(vals[3:6]), tuple(vals[6:10])


def reorder(children: list, order: Any) -> list:
    """``children`` in the recorded order of kinds, when they are still those kinds."""
    if not isinstance(order, str) or sorted(order) != sorted(_kinds(children)):
        return children
    by_kind: dict[str, list] = {}
    for c in children:
        by_kind.setdefault(_KIND.get(type(c), "R"), []).append(c)
    return [by_kind[k].pop(0) for k in order]


# -- KEYS rotations -----------------------------------------------------------------------------

def rotation_naive(wxyz: np.ndarray) -> np.ndarray:
    """B3D key rotations as the plain way back gives them (unit in glTF, float32 twice)."""
    g = rot_to_gltf(np.asarray(wxyz, np.float64)).astype(np.float32)
    return rot_from_gltf(unit_rows(g, fallback=(0.0, 0.0, 0.0, 1.0))).astype(np.float32)


def flip_rows(flipped: np.ndarray) -> list[int] | None:
    return np.flatnonzero(flipped).tolist() or None


def keys_record(chunks: list[Keys], flips: list[np.ndarray]) -> list | None:
    """Per KEYS chunk of a node: ``[flipped rows, pack record]`` (None when nothing to keep)."""
    out: list = []
    for c, flipped in zip(chunks, flips):
        rec = None
        if c.flags & 4 and len(c.keys):
            q = c.keys["rotation"]
            rec = [flip_rows(flipped), pack(q, rotation_naive(q))]
            if rec == [None, None]:
                rec = None
        out.append(rec)
    return out if any(r is not None for r in out) else None


def restore_keys(chunks: list[Keys], rec: Any, counts: Any, tol: float) -> None:
    """The kept rotation signs and bits back into the KEYS chunks written for a node (in
    place), each while the chunk has its recorded number of keys."""
    if not isinstance(rec, list) or not isinstance(counts, list):
        return
    for c, r, n in zip(chunks, rec, counts):
        if not (isinstance(r, list) and len(r) == 2 and c.flags & 4 and len(c.keys) == n):
            continue
        q = c.keys["rotation"]
        flipped, kept = r
        if isinstance(flipped, list) and all(isinstance(i, int) and 0 <= i < n for i in flipped):
            q[flipped] *= -1
        rows_vals = unpack(kept, n, 4) if kept is not None else None
        if rows_vals is not None:
            rows, vals = rows_vals
            got, exp = q[rows].astype(np.float64), rotation_naive(vals)
            ok = _close(got, exp, tol) | _close(-got, exp, tol)
            q[rows[ok]] = vals[ok]


# -- BONE entries ---------------------------------------------------------------------------------

#: a written weight this close to the file's counts as unedited (glTF weights are the file's
#: renormalised in float32: they differ in the last bits)
WEIGHT_TOLERANCE = 1e-5


def bone_record(weights: np.ndarray, odd: np.ndarray | None) -> dict | None:
    """What the BONE's entries need to come back in file order with the file's bits: ``v`` the
    vertex ids when they are not in increasing order (the writer's), ``w`` the weights when a
    weight glTF renormalises could come back in other bits (a positive weight other than 1
    of a vertex whose entries glTF holds as they are)."""
    v, w = weights["vertex"], weights["weight"]
    out: dict[str, Any] = {}
    if len(v) > 1 and (np.diff(v.astype(np.int64)) < 0).any():
        out["v"] = _b64(np.ascontiguousarray(v, "<i4").tobytes())
    ok = (v >= 0) & (v < len(odd)) if odd is not None else np.zeros(len(v), bool)
    loose = (w > 0) & (w != 1.0)
    loose[ok] &= ~odd[v[ok]] if odd is not None else True
    if loose.any():
        out["w"] = _b64(np.ascontiguousarray(w, "<f4").view(np.uint8).reshape(-1, 4).T.tobytes())
    return out or None


def restore_bone(bone: Bone, rec: Any) -> None:
    """The BONE's entries in file order and with the file's weight bits where they are still
    the written ones (same vertices; weights within :data:`WEIGHT_TOLERANCE`), in place."""
    if not isinstance(rec, dict):
        return
    w = bone.weights
    n = len(w)
    v_file = None
    if "v" in rec:
        raw = _unb64(rec["v"])
        if raw is None or len(raw) != 4 * n:
            return
        v_file = np.frombuffer(raw, "<i4")
        order = np.argsort(v_file, kind="stable")
        if not np.array_equal(v_file[order], w["vertex"]):
            return
        back = np.empty(n, np.int64)
        back[order] = np.arange(n)
        w = w[back]
    if "w" in rec:
        raw = _unb64(rec["w"])
        if raw is not None and len(raw) == 4 * n:
            kept = np.frombuffer(raw, np.uint8).reshape(4, -1).T.copy().view("<f4").reshape(-1)
            w = w.copy()
            near = np.abs(w["weight"].astype(np.float64) - kept) <= WEIGHT_TOLERANCE
            w["weight"][near] = kept[near]
    bone.weights = w
