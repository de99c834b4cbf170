"""Unedited means identical: what an Overgrowth file needs beyond the glTF values to come back
byte for byte, kept small (issue 32).

Two kinds of record, both recomputed from what the GLB holds and the kept original:

* **OBJ text** (:func:`obj_record`, :func:`obj_text`): the file's text with each number of a
  ``v``/``vt``/``vn`` line and each index of an ``f`` line taken out (the *template*: comments,
  ``o``/``g``/``s``/``usemtl`` lines, spacing and line ends as read; deflated, it is a few
  hundred bytes whatever the mesh's size). Indices come back from the source index each glTF
  vertex carries (vertex attributes ``_OBJ_V``, ``_OBJ_VT``, ``_OBJ_VN``: Blender keeps them with
  attribute export on), in the file's face order (corner ``c`` of the glTF index buffer is the
  file's triangle corner ``c``; quads and fans as :mod:`.obj` splits them). A number written as
  ``[-]digits[.digits]`` is its value from the glTF (float32) at the token's own number of
  decimals ``d``; the glTF cannot hold every digit, so the record keeps the token's integer
  ``k = value x 10^d`` modulo ``M`` (a power of two per line kind, just above 4 x the largest
  gap between ``k`` and the value the writer gets back from the GLB). The writer takes the
  integer nearest its value that has that remainder: the token as read while the value is
  within ``M/2`` decimal units of the original (Blender's float noise included), **an edit
  smaller than that is dropped**, and a larger edit is written to within ``M/2`` units. Numbers
  in another spelling (``1e-05``, ``+1``, ``.5``), lines no vertex uses and faces with
  relative indices stay in the template as read.
* **float32 rows** (:func:`xor_record`, :func:`xor_restore`): for values the writer recomputes
  from the glTF (``.phxbn`` weights renormalised by glTF, ``.anm`` bone matrices recomposed from
  translation + rotation keys), the XOR of the file's bits with the bits the writer computes
  from the unedited GLB (mostly zero or a few low bits: deflated, small), and one check byte per
  row of the glTF values they came from. A row whose glTF values still give its check byte
  comes back as read; another row is written as the writer computes it (one chance in 256 that
  an edited row is taken for unedited: it is then a few units in the last place off).
"""
from __future__ import annotations

import base64
import re
import zlib
from typing import Any

import numpy as np

from .obj import ObjMesh

__all__ = ["SOURCE_ATTRS", "obj_record", "obj_text", "xor_record", "xor_restore", "xor_rows",
           "check_bytes", "KEY_GRID", "KEY_HINT", "canonical_quats", "snap_keys",
           "pack", "unpack"]

#: vertex attributes carrying each glTF vertex's OBJ source indices (``v``, ``vt``, ``vn``;
#: -1: none)
SOURCE_ATTRS = ("_OBJ_V", "_OBJ_VT", "_OBJ_VN")
_NUM, _IDX = "\x00", ("\x01", "\x02", "\x03")
_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?\Z")
_INDEX = re.compile(r"[1-9][0-9]*\Z")
_WIDTH = {"v": 3, "vt": 2, "vn": 3}
_KINDS = ("v", "vt", "vn")
#: most decimals / largest integer a token's k may have to be rebuilt from a float64
_MAX_D, _MAX_K = 12, 2**52


def pack(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw, 6)).decode("ascii")


def unpack(text: Any, limit: int = 1 << 30) -> bytes | None:
    """The bytes :func:`pack` made, None for anything else (a damaged or hand-made glTF)."""
    if not isinstance(text, str):
        return None
    try:
        d = zlib.decompressobj()
        out = d.decompress(base64.b64decode(text, validate=True), limit)
        return None if d.unconsumed_tail else out
    except (ValueError, zlib.error):
        return None


def _decimal(tok: str) -> tuple[int, int, bool] | None:
    """(k, d, negative) of a ``[-]digits[.digits]`` token that is exactly what
    :func:`_spell` gives back, else None."""
    if not _DECIMAL.match(tok):
        return None
    neg = tok.startswith("-")
    body = tok[1:] if neg else tok
    whole, _, frac = body.partition(".")
    if (len(whole) > 1 and whole[0] == "0") or len(frac) > _MAX_D:
        return None
    k = int(whole + frac)
    if k > _MAX_K:
        return None
    return (-k if neg else k), len(frac), neg


def _spell(k: int, d: int, neg: bool) -> str:
    sign = "-" if k < 0 or (k == 0 and neg) else ""
    s = str(abs(k)).rjust(d + 1, "0")
    return sign + (s[:-d] + "." + s[-d:] if d else s)


def _face_corners(n: int) -> list[int]:
    """The triangle corner (0-based, within the face's triangles) each of a face's ``n``
    tokens is read back from (:func:`.obj.parse_obj`: a quad ``a b c d`` is ``(a, b, c),
    (d, a, c)``, a larger face a fan ``(f0, fk, fk+1)``)."""
    if n == 4:
        return [0, 1, 2, 3]
    return [0, 1] + [3 * (j - 2) + 2 for j in range(2, n)]


def _lines(text: str) -> list[tuple[str, list[str]]]:
    """(keyword, whitespace-separated parts with their separators) of each line."""
    out = []
    for ln in text.splitlines(keepends=True):
        parts = re.split(r"(\s+)", ln)
        key = next((p for p in parts if p and not p.isspace()), "")
        out.append((key, parts))
    return out


_VLINE = re.compile(r"(\s*(?:vt|vn|v)\s+)(\S+)(\s+)(\S+)(?:(\s+)(\S+))?(.*)\Z", re.S)


def _decimals(tokens: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(k, d, negative, spelled as :func:`_spell` gives it back) of each token."""
    n = len(tokens)
    k = np.zeros(n, np.int64)
    d = np.zeros(n, np.int64)
    neg = np.zeros(n, bool)
    ok = np.zeros(n, bool)
    for i, tok in enumerate(tokens):
        x = _decimal(tok)
        if x is not None:
            k[i], d[i], neg[i], ok[i] = x[0], x[1], x[2], True
    return k, d, neg, ok


def obj_record(data: bytes, mesh: ObjMesh, simulated: dict[str, np.ndarray]) -> dict | None:
    """The record that gives ``data`` back from the glTF, or None when its text cannot be
    templated (control characters in it). ``simulated[kind]``: per element of ``kind`` (``v``,
    ``vt``, ``vn``) the values the writer will compute from the unedited GLB (float64), absent
    for a kind the glTF does not carry."""
    text = data.decode("latin-1")
    if any(c in text for c in (_NUM, *_IDX)):
        return None
    used = {k: np.zeros(len(a), bool) for k, a in
            zip(_KINDS, (mesh.positions, mesh.texcoords, mesh.normals))}
    for c, k in enumerate(_KINDS):
        col = mesh.corners[:, c]
        used[k][col[col >= 0]] = True
    lines = text.splitlines(keepends=True)
    # the number lines of used elements: their tokens, and the gaps to the simulated values
    count = dict.fromkeys(_KINDS, 0)
    cand: dict[str, list] = {k: [] for k in _KINDS}           # (line, element, match)
    for li, ln in enumerate(lines):
        head = ln.lstrip()[:3]
        key = "vt" if head.startswith("vt") else "vn" if head.startswith("vn") else \
            "v" if head.startswith("v") else None
        if key is None or not (head[len(key):len(key) + 1] or " ").isspace():
            continue
        e = count[key]
        count[key] += 1
        m = _VLINE.match(ln)
        if m is None or key not in simulated or e >= len(used[key]) or not used[key][e] \
                or (m.group(6) is None and key != "vt"):
            continue
        cand[key].append((li, e, m))
    mods = [4, 4, 4]
    keep: dict[int, tuple[str, Any]] = {}
    rows = []                       # (k, d, neg) per token in file order, by line
    for ki, key in enumerate(_KINDS):
        if not cand[key]:
            continue
        w = _WIDTH[key]
        toks = [m.group(2 + 2 * c) for _, _, m in cand[key] for c in range(w)]
        kv, dv, neg, ok = _decimals(toks)
        elems = np.array([e for _, e, _ in cand[key]], np.int64)
        sim = simulated[key][elems, :w].reshape(-1)
        scale = 10.0 ** dv
        with np.errstate(invalid="ignore", over="ignore"):
            est = np.rint(sim * scale)
            # room for Blender's float noise too: a few float32 units of the value
            noise = 4 * np.spacing(np.abs(sim).astype(np.float32)).astype(np.float64) * scale
            gap = np.maximum(np.abs(est - kv), noise)
        good = (ok & np.isfinite(gap) & (gap < 2**13)).reshape(-1, w).all(1)
        if not good.any():
            continue
        mods[ki] = max(4, 1 << int(np.ceil(np.log2(4 * float(gap.reshape(-1, w)[good].max()) + 4))))
        for j in np.nonzero(good)[0]:
            keep[cand[key][j][0]] = (key, cand[key][j][2])
        kk, dd, nn = (a.reshape(-1, w)[good] for a in (kv, dv, neg))
        rows.append((np.array([cand[key][j][0] for j in np.nonzero(good)[0]]), kk, dd, nn, ki))
    out_lines: list[str] = []
    for li, ln in enumerate(lines):
        if li in keep:
            key, m = keep[li]
            third = _NUM if key != "vt" else (m.group(6) or "")
            out_lines.append(m.group(1) + _NUM + m.group(3) + _NUM + (m.group(5) or "") + third
                             + m.group(7))
        elif ln.lstrip().startswith("f") and ln.lstrip()[1:2].isspace():
            out_lines.append(_face_template(ln))
        else:
            out_lines.append(ln)
    if rows:
        line_of = np.concatenate([np.repeat(r[0], _WIDTH[_KINDS[r[4]]]) for r in rows])
        order = np.argsort(line_of, kind="stable")
        ks = np.concatenate([r[1].reshape(-1) for r in rows])[order]
        ds = np.concatenate([r[2].reshape(-1) for r in rows])[order]
        ns = np.concatenate([r[3].reshape(-1) for r in rows])[order]
        kinds = np.concatenate([np.full(r[1].size, r[4]) for r in rows])[order]
        ms = ks % np.array(mods, np.int64)[kinds]
    else:
        ks = ds = ms = np.zeros(0, np.int64)
        ns = np.zeros(0, bool)
    flags = (ds | (ns.astype(np.int64) << 7)).astype(np.uint8)
    return {"template": pack("".join(out_lines).encode("latin-1")), "d": pack(flags.tobytes()),
            "m": pack(ms.astype("<u2").tobytes()), "mod": mods,
            "corners": int(len(mesh.corners)), "n": int(len(ks))}


_SUBS = [(re.compile(a), b) for a, b in (
    (r"(?<=\s)[1-9][0-9]*(?=[/\s]|\Z)", _IDX[0]),          # v: first in its token
    (r"(?<=/)[1-9][0-9]*(?=/)", _IDX[1]),                    # vt between slashes
    (r"(?<=\x01/)[1-9][0-9]*(?=\s|\Z)", _IDX[1]),           # vt last: v/vt
    (r"(?<=/)[1-9][0-9]*(?=\s|\Z)", _IDX[2]))]               # vn last: v/vt/vn, v//vn
_FACE_LINE = re.compile(r"\s*f(?:\s+\x01(?:/\x02(?:/\x03)?|//\x03)?)+\s*\Z")


def _face_template(line: str) -> str:
    """A face line with its indices as placeholders; as read when a corner is not
    ``v[/[vt][/vn]]`` with positive indices (relative indices stay as read)."""
    out = line
    for pattern, mark in _SUBS:
        out = pattern.sub(mark, out)
    return out if _FACE_LINE.match(out) else line


def obj_text(record: Any, values: dict[str, np.ndarray], corners: np.ndarray) -> bytes | None:
    """The OBJ text of :func:`obj_record` with the glTF's values (``values[kind]``: float64
    per element, as the writer computes them) and triangle corners (``(C, 3)`` source indices
    v, vt, vn in the file's corner order); None when the record does not fit them (another
    corner count: the topology was edited)."""
    if not isinstance(record, dict) or record.get("corners") != len(corners):
        return None
    raw = unpack(record.get("template"))
    ds = unpack(record.get("d"))
    ms = unpack(record.get("m"))
    mod = record.get("mod")
    if raw is None or ds is None or ms is None or not isinstance(mod, list) or len(mod) != 3 \
            or len(ds) * 2 != len(ms) or not all(isinstance(m, int) and m > 0 for m in mod):
        return None
    d_arr = np.frombuffer(ds, np.uint8)
    m_arr = np.frombuffer(ms, "<u2").astype(np.int64)
    text = raw.decode("latin-1")
    out: list[str] = []
    count = dict.fromkeys(_KINDS, 0)
    num = 0
    corner = 0
    try:
        for key, parts in _lines(text):
            if key in _WIDTH:
                e = count[key]
                count[key] += 1
                comp = 0
                for i, p in enumerate(parts):
                    if p == _NUM:
                        dn = int(d_arr[num])
                        d, neg = dn & 0x7F, bool(dn >> 7)
                        m = mod[_KINDS.index(key)]
                        x = float(values[key][e, comp])
                        est = int(np.rint(x * 10.0 ** d)) if np.isfinite(x) else 0
                        delta = (int(m_arr[num]) - est) % m
                        if delta >= m // 2:
                            delta -= m
                        parts[i] = _spell(est + delta, d, neg)
                        num += 1
                        comp += 1
            elif key == "f":
                toks = [i for i, p in enumerate(parts) if p and not p.isspace()][1:]
                slots = _face_corners(len(toks))
                for j, i in enumerate(toks):
                    if any(c in parts[i] for c in _IDX):
                        src = corners[corner + slots[j]]
                        for c in range(3):
                            if _IDX[c] in parts[i]:
                                if src[c] < 0:
                                    return None
                                parts[i] = parts[i].replace(_IDX[c], str(int(src[c]) + 1))
                corner += 3 * max(len(toks) - 2, 0)
            out.append("".join(parts))
    except (IndexError, KeyError):          # a record that does not fit the mesh
        return None
    if num != len(d_arr) or corner != len(corners):
        return None
    return "".join(out).encode("latin-1")


def check_bytes(rows: np.ndarray) -> np.ndarray:
    """One byte per row of float32 values: a hash of their bits (an edited row changes it
    with probability 255/256)."""
    bits = np.ascontiguousarray(rows, np.float32).reshape(len(rows), -1).view(np.uint32)
    h = np.zeros(len(rows), np.uint64)
    for c in range(bits.shape[1]):
        h = (h * np.uint64(1000003)) ^ bits[:, c].astype(np.uint64)
        h ^= h >> np.uint64(29)
    h *= np.uint64(0x9E3779B97F4A7C15)
    return (h >> np.uint64(56)).astype(np.uint8)


def xor_record(original: np.ndarray, written: np.ndarray, inputs: np.ndarray,
               always: bool = False) -> dict | None:
    """The record of float32 ``original`` rows against the rows ``written`` (what the writer
    computes from the unedited glTF) and the glTF ``inputs`` they are computed from (one row
    each); None when every row already comes back (unless ``always``)."""
    a = np.ascontiguousarray(original, np.float32).reshape(len(original), -1).view(np.uint32)
    b = np.ascontiguousarray(written, np.float32).reshape(len(written), -1).view(np.uint32)
    if a.shape != b.shape or len(inputs) != len(a):
        return None
    x = a ^ b
    if not x.any() and not always:
        return None
    return {"rows": len(a), "xor": pack(x.astype("<u4").tobytes()),
            "check": pack(check_bytes(inputs).tobytes())}


def xor_restore(record: Any, written: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """``written`` (float32 rows the writer computed) with the rows whose ``inputs`` still give
    their check byte put back as read."""
    return xor_rows(record, written, inputs)[0]


def xor_rows(record: Any, written: np.ndarray,
             inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`xor_restore`, which rows were put back)."""
    out = np.array(written, np.float32).reshape(len(written), -1)
    same = np.zeros(len(out), bool)
    if not isinstance(record, dict) or record.get("rows") != len(out) or len(inputs) != len(out):
        return out, same
    x = unpack(record.get("xor"), 4 * out.size + 1)
    chk = unpack(record.get("check"), len(out) + 1)
    if x is None or chk is None or len(x) != 4 * out.size or len(chk) != len(out):
        return out, same
    same = check_bytes(inputs) == np.frombuffer(chk, np.uint8)
    bits = out.view(np.uint32)
    bits[same] ^= np.frombuffer(x, "<u4").reshape(out.shape)[same]
    return out, same


#: the grid (absolute) that ``.anm`` key inputs are snapped to before the bone matrices are
#: composed from them, and the modulus of the hint kept per value: a value comes back on its
#: grid point while it is within ``KEY_HINT / 2`` steps (3.1e-5) of it, which covers what
#: Blender moves a key's translation or rotation by (up to 4e-6 measured, re-basing bones)
KEY_GRID = 2.0 ** -22
KEY_HINT = 256


def canonical_quats(q: np.ndarray) -> np.ndarray:
    """Quaternions with ``w >= 0`` (``q`` and ``-q`` are one rotation; Blender may flip it)."""
    q = np.asarray(q, np.float64)
    return np.where(q[..., 3:4] < 0, -q, q)


def snap_keys(values: np.ndarray, hints: np.ndarray | None = None) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """(``values`` on :data:`KEY_GRID`, their hints): without ``hints`` the nearest grid
    points; with them, the grid point nearest each value whose index has its hint."""
    v = np.nan_to_num(np.asarray(values, np.float64), posinf=0.0, neginf=0.0)
    q = np.rint(np.clip(v, -1e9, 1e9) / KEY_GRID).astype(np.int64)
    if hints is not None:
        delta = (hints.astype(np.int64) - q) % KEY_HINT
        q = q + np.where(delta >= KEY_HINT // 2, delta - KEY_HINT, delta)
    return q * KEY_GRID, (q % KEY_HINT).astype(np.uint8)
