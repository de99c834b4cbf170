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
  ``k = value x 10^d`` modulo ``M`` (a power of two per line kind, above twice the largest
  gap between ``k`` and the value the writer gets back from the GLB, with room for Blender's
  float noise: one bit a number for the usual 6 decimals). The writer takes the integer
  nearest its value that has that remainder: the token as read while the value is within
  ``M/2`` decimal units of the original, **an edit smaller than that is dropped**, and a
  larger edit is written to within ``M/2`` units. Lines of numbers in another spelling
  (``1e-05``, ``+1``, ``.5``, other spacing), of more digits than a float32 and Blender's
  noise leave room for (``M`` above 2^16), and lines no vertex uses stay in the template as
  read while the glTF's values are within :data:`LINE_TOLERANCE` (1e-6, relative above 1) of
  theirs, and are written anew (``%.9g``) otherwise; faces with relative indices stay as read.
* **float32 rows** (:func:`retromesh.restore.xor_record`, :func:`~retromesh.restore.xor_restore`,
  kept once per OBJ ``v`` by :func:`per_v_record`): for values the writer recomputes
  from the glTF (``.phxbn`` weights renormalised by glTF, ``.anm`` bone matrices recomposed from
  translation + rotation keys), the XOR of the file's bits with the bits the writer computes
  from the unedited GLB (mostly zero or a few low bits: deflated, small), and one check byte per
  row of the glTF values they came from. A row whose glTF values still give its check byte
  comes back as read; another row is written as the writer computes it (one chance in 256 that
  an edited row is taken for unedited: it is then a few units in the last place off).
"""
from __future__ import annotations

import re
from operator import itemgetter
from typing import Any

import numpy as np

from ...restore import (
    LEVEL_SMALL,
    bits,
    from_steps,
    pack_bytes,
    same_rows,
    steps,
    unpack_bytes,
    xor_record,
    xor_restore,
    xor_rows,
)
from .obj import ObjMesh, corner_form, parsed_lines

__all__ = ["SOURCE_ATTRS", "obj_record", "obj_text", "source_tables", "sources", "per_v_record",
           "per_v_restore", "weights_record", "weights_restore",
           "KEY_GRID", "KEY_HINT", "canonical_quats", "snap_keys",
           "pack"]

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


#: zlib level of a weights record of 64 KiB or more (rows that are not quite noise-free:
#: level 6 took 15 ms on the 17,502 random weight rows of the benchmark's character, for 5 %
#: less than this level's 6 ms)
LEVEL_LARGE = 4


def pack(raw: bytes, level: int = LEVEL_SMALL) -> str:
    """``raw`` packed as Overgrowth's records are (:func:`retromesh.restore.pack_bytes`)."""
    return pack_bytes(raw, level)


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


def _kind(line: str) -> str | None:
    """The kind of a line as :func:`.obj.parse_obj` reads it (``v``, ``vt``, ``vn``, ``f``)."""
    s = line.strip()
    for k in ("v", "vt", "vn", "f"):
        if s.startswith(k + " "):
            return k
    return None


def _lines(text: str) -> list[tuple[str | None, list[str]]]:
    """(kind, whitespace-separated parts with their separators) of each line."""
    return [(_kind(ln), re.split(r"(\s+)", ln)) for ln in text.splitlines(keepends=True)]


#: a canonical number token (what :func:`_spell` writes back), at most 15 digits in all
_CANONICAL = re.compile(r"(?:-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,12})?\n)*\Z")
#: the start of each line (token) of a ``\n``-joined list that is not canonical
_NOT_CANONICAL = re.compile(r"^(?!-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,12})?$)", re.M)


def _decimals(tokens: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(k, d, negative, spelled as :func:`_spell` gives it back) of each token."""
    n = len(tokens)
    joined = "\n".join(tokens) + "\n" if tokens else ""
    if n and _CANONICAL.match(joined) and max(map(len, tokens)) <= 17:
        # all canonical: signs and decimals from the joined text's bytes, k from one split
        raw = np.frombuffer(joined.encode("latin-1"), np.uint8)
        lens = np.fromiter(map(len, tokens), np.int64, n)
        ends = np.cumsum(lens + 1) - 1              # each token's "\n"
        neg = raw[ends - lens] == ord("-")
        dots = np.flatnonzero(raw == ord("."))
        d = np.zeros(n, np.int64)
        of = np.searchsorted(ends, dots)            # (one dot a token at most)
        d[of] = ends[of] - dots - 1
        k = np.array(joined.replace(".", "").split("\n")[:-1], np.int64)
        ok = np.abs(k) <= _MAX_K
        return np.where(ok, k, 0), d, neg, ok
    k = np.zeros(n, np.int64)
    d = np.zeros(n, np.int64)
    neg = np.zeros(n, bool)
    ok = np.zeros(n, bool)
    # some tokens are not canonical (``1e-05``): those one by one, the others as above
    lens = np.fromiter(map(len, tokens), np.int64, n)
    starts = np.r_[0, np.cumsum(lens + 1)[:-1]]
    odd = np.zeros(n, bool)
    at = [m.start() for m in _NOT_CANONICAL.finditer(joined, 0, len(joined) - 1)]
    odd[np.searchsorted(starts, at)] = True
    odd |= lens > 17
    good = np.flatnonzero(~odd)
    if len(good):
        arr = np.array([tokens[i] for i in good])
        dot = np.char.find(arr, ".")
        kk = np.char.replace(arr, ".", "").astype(np.int64)
        fits = np.abs(kk) <= _MAX_K         # as _decimal: a token past _MAX_K is not kept
        k[good] = np.where(fits, kk, 0)
        d[good] = np.where((dot >= 0) & fits, np.char.str_len(arr) - dot - 1, 0)
        neg[good] = np.char.startswith(arr, "-") & fits
        ok[good] = fits
    for i in np.flatnonzero(odd).tolist():
        x = _decimal(tokens[i])
        if x is not None:
            k[i], d[i], neg[i], ok[i] = x[0], x[1], x[2], True
    return k, d, neg, ok


#: lines of a kind all of which are ``key`` and its numbers, one space apart (tokens of no
#: blank), each ended by ``\n`` or ``\r\n`` (the last one maybe not)
_SIMPLE_LINES = {k: re.compile(rf"(?:{k}(?: \S+){{{w}}}(?:\r?\n|\Z))*") for k, w in _WIDTH.items()}


def _number_lines(lines: list[str], at: tuple[list[int], ...], used: dict[str, np.ndarray],
                  simulated: dict[str, np.ndarray]) -> dict[str, tuple[list[int], list[int],
                                                                        list[str]]]:
    """Per kind, the lines that may be templated: (line numbers, elements, their number
    tokens, ``width`` a line): ``key`` and its numbers separated by single spaces, the element
    used by a face. ``at``: the line numbers of each kind's lines as :func:`.obj.parse_obj`
    finds them (an indented one is counted and kept as read)."""
    out: dict[str, tuple[list[int], list[int], list[str]]] = {k: ([], [], []) for k in _KINDS}
    for ki, key in enumerate(_KINDS):
        if key not in simulated or not len(used[key]):
            continue
        w = _WIDTH[key]
        head = key + " "
        li, el, toks = out[key]
        rows = at[ki]
        if rows and len(rows) == len(used[key]):
            joined = "".join(itemgetter(*rows)(lines)) if len(rows) > 1 else lines[rows[0]]
            if _SIMPLE_LINES[key].fullmatch(joined):
                # every line "key n n n" (the usual case): their tokens from one split
                every = joined.split()
                del every[::w + 1]                  # (the keys)
                sel = np.flatnonzero(used[key])
                if len(sel) == len(rows):
                    li += rows
                    el += range(len(rows))
                    toks += every
                else:
                    li += np.asarray(rows)[sel].tolist()
                    el += sel.tolist()
                    toks += np.array(every, object).reshape(-1, w)[sel].reshape(-1).tolist()
                continue
        use = used[key].tolist()
        for e, i in enumerate(rows):
            ln = lines[i]
            if use[e] and ln.startswith(head):
                parts = ln.split(" ")
                if len(parts) == w + 1:
                    li.append(i)
                    el.append(e)
                    toks += parts[1:w]
                    toks.append(parts[w].rstrip("\r\n"))
    return out


def _line_kinds(lines: list[str]) -> tuple[list[int], ...]:
    """The line numbers of the ``v``, ``vt``, ``vn`` and ``f`` lines (:func:`_kind`)."""
    at: tuple[list[int], ...] = ([], [], [], [])
    for i, ln in enumerate(lines):
        k = _kind(ln)
        if k is not None:
            at[("v", "vt", "vn", "f").index(k)].append(i)
    return at


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
    kept = parsed_lines(mesh, data)         # (the lines parse_obj split: not split again)
    lines, at = kept if kept is not None else (text.splitlines(keepends=True), None)
    if at is None:
        at = _line_kinds(lines)
    cand = _number_lines(lines, at, used, simulated)
    mods = [2, 2, 2]
    rows = []                       # (lines, k, d, neg, kind) of the templated lines
    for ki, key in enumerate(_KINDS):
        li, elems, toks = cand[key]
        if not li:
            continue
        w = _WIDTH[key]
        kv, dv, neg, ok = _decimals(toks)
        sim = simulated[key][np.asarray(elems, np.int64), :w].reshape(-1)
        scale = 10.0 ** dv
        with np.errstate(invalid="ignore", over="ignore"):
            # how far the value the writer gets back is from the token, in its last decimal,
            # with room for Blender's float noise: a few float32 units of the mesh's size
            # (a skinned mesh comes back from Blender's bind pose a hair off)
            size = np.float32(np.abs(sim[np.isfinite(sim)]).max(initial=1.0))
            noise = 4 * float(np.spacing(size)) * scale
            gap = np.abs(sim * scale - kv) + noise
        good = (ok & np.isfinite(gap) & (gap < 2**15)).reshape(-1, w).all(1)
        if not good.any():
            continue
        # the nearest integer with the token's remainder modulo M is the token while the
        # value is within M/2 of it
        gmax, m = float(gap.reshape(-1, w)[good].max()), 2
        while m / 2 <= gmax:
            m *= 2
        mods[ki] = m
        rows.append((np.asarray(li)[good], *(x.reshape(-1, w)[good] for x in (kv, dv, neg)), ki))
    out_lines = list(lines)
    marks = {"v": "v" + (" " + _NUM) * 3, "vn": "vn" + (" " + _NUM) * 3,
             "vt": "vt" + (" " + _NUM) * 2}
    for li, _, _, _, ki in rows:
        key = _KINDS[ki]
        for i in li.tolist():
            ln = out_lines[i]
            out_lines[i] = marks[key] + ln[len(ln.rstrip("\r\n")):]
    # (a line "f " and blanks only is no face, and stays as read with or without templating)
    faces = [i for i in at[3] if lines[i].startswith("f ")]
    for i, t in zip(faces, _face_templates([lines[i] for i in faces])):
        out_lines[i] = t
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
    # a token's minus sign is written back from its value's sign but for a zero ("-0.000"):
    # kept there only, the flags are mostly one value
    flags = (ds | ((ns & (ks == 0)).astype(np.int64) << 7)).astype(np.uint8)
    packed = pack(_pack_remainders(ms, max(mods)))
    out: dict[str, Any] = {"template": pack("".join(out_lines).encode("latin-1")),
                           "d": pack(flags.tobytes()), "m": packed, "mod": mods,
                           "corners": int(len(mesh.corners)), "n": int(len(ks))}
    if max(mods) > 2:
        out["m_bits"] = max(mods).bit_length() - 1
        if len(ms) < 1 << 15:
            # a byte or two a remainder, as records before m_bits: deflate finds the values a
            # file repeats there (the stick's texture coordinates), which bits hide
            whole = pack(ms.astype("u1" if max(mods) <= 256 else "<u2").tobytes())
            if len(whole) < len(packed):
                out["m"] = whole
                del out["m_bits"]
    return out


def _pack_remainders(ms: np.ndarray, mod: int) -> bytes:
    """Remainders below ``mod`` (a power of two), ``log2(mod)`` bits each, first bit highest
    (``"m_bits"``; mod 2: the one bit of records before it; without ``"m_bits"``, a byte or
    two each above 2)."""
    b = max(mod.bit_length() - 1, 1)
    planes = (ms.astype(np.int64)[:, None] >> np.arange(b - 1, -1, -1)) & 1
    return np.packbits(planes.astype(np.uint8).reshape(-1)).tobytes()


def _unpack_remainders(raw: bytes, mod: int, n: int, width: Any = None) -> np.ndarray | None:
    """The remainders :func:`_pack_remainders` packed (``width``: the record's ``"m_bits"``);
    without a width, as records before it: one bit (mod 2), else a byte or two each."""
    if width is not None:
        if type(width) is not int or not 1 <= width <= 16 or 1 << width != mod \
                or len(raw) != (n * width + 7) // 8:
            return None
        planes = np.unpackbits(np.frombuffer(raw, np.uint8))[:n * width].reshape(n, width)
        return planes.astype(np.int64) @ (1 << np.arange(width - 1, -1, -1))
    if mod <= 2:
        if len(raw) != (n + 7) // 8:
            return None
        return np.unpackbits(np.frombuffer(raw, np.uint8))[:n].astype(np.int64)
    dt = "u1" if mod <= 256 else "<u2"
    if len(raw) != n * np.dtype(dt).itemsize:
        return None
    return np.frombuffer(raw, dt).astype(np.int64)


_SUBS = [(re.compile(a), b) for a, b in (
    (r"(?<=\s)[1-9][0-9]*(?=[/\s]|\Z)", _IDX[0]),          # v: first in its token
    (r"(?<=/)[1-9][0-9]*(?=/)", _IDX[1]),                    # vt between slashes
    (r"(?<=\x01/)[1-9][0-9]*(?=\s|\Z)", _IDX[1]),           # vt last: v/vt
    (r"(?<=/)[1-9][0-9]*(?=\s|\Z)", _IDX[2]))]               # vn last: v/vt/vn, v//vn
_FACE_LINE = re.compile(r"\s*f(?:\s+\x01(?:/\x02(?:/\x03)?|//\x03)?)+\s*\Z")
#: a face line (of lines joined by "\n") that is not all placeholders
_ANY_BAD_FACE = re.compile(r"^(?=[^\n])(?!f(?:[ \t]+\x01(?:/\x02(?:/\x03)?|//\x03)?)+[ \t]*\r?$)",
                           re.M)


_N = "[1-9][0-9]*"
#: a corner token's spelling (:func:`.obj.corner_form`) -> the pattern of such a token
#: whole, and its placeholders
_TOKEN_FORMS = {k: (re.compile(rf"(?<=\s){body}(?=\s|\Z)"), mark) for k, body, mark in (
    (0, _N, _IDX[0]), (1, f"{_N}/{_N}", f"{_IDX[0]}/{_IDX[1]}"),
    (2, f"{_N}/{_N}/{_N}", f"{_IDX[0]}/{_IDX[1]}/{_IDX[2]}"),
    (3, f"{_N}//{_N}", f"{_IDX[0]}//{_IDX[2]}"))}


#: face lines (joined) that are all triangles of corners spelled one way, one space apart
_TRIANGLES = {k: re.compile(rf"(?:f(?: {b}){{3}}\n)*(?:f(?: {b}){{3}})?") for k, b in (
    (0, _N), (1, f"{_N}/{_N}"), (2, f"{_N}/{_N}/{_N}"), (3, f"{_N}//{_N}"))}


def _face_templates(lines: list[str]) -> list[str]:
    """Face lines with their indices as placeholders (all in one pass); a line keeps its text
    when a corner is not ``v[/[vt][/vn]]`` with positive indices (relative indices)."""
    if not lines:
        return []
    out = "".join(lines)
    first = lines[0].split()
    kind = corner_form(first[1]) if len(first) > 1 else -1
    if kind in _TRIANGLES and _TRIANGLES[kind].fullmatch(out):
        # triangles "f a/b/c a/b/c a/b/c" one space apart, each line ended by "\n" (a file
        # written by a program): every line's template is the same
        line = "f " + " ".join([_TOKEN_FORMS[kind][1]] * 3)
        done = [line + "\n"] * len(lines)
        if not out.endswith("\n"):
            done[-1] = line
        return done
    form = _TOKEN_FORMS.get(kind)
    if form is not None:
        # every corner spelled as the first one is (the usual case): one pass, whole tokens
        # (a line this does not template whole is templated below, as before)
        done_text = form[0].sub(form[1], out)
        if _ANY_BAD_FACE.search(done_text) is None:
            done = done_text.splitlines(keepends=True)
            if len(done) == len(lines):
                return done
    for pattern, mark in _SUBS:
        out = pattern.sub(mark, out)
    done = out.splitlines(keepends=True)
    if len(done) != len(lines):                     # (a line break inside a line: never)
        return lines
    if _ANY_BAD_FACE.search(out) is None:           # the usual case: every line templated
        return done
    return [t if _FACE_LINE.match(t) else ln for t, ln in zip(done, lines)]


def obj_text(record: Any, values: dict[str, np.ndarray], corners: np.ndarray) -> bytes | None:
    """The OBJ text of :func:`obj_record` with the glTF's values (``values[kind]``: float64
    per element, as the writer computes them) and triangle corners (``(C, 3)`` source indices
    v, vt, vn in the file's corner order); None when the record does not fit them (another
    corner count: the topology was edited)."""
    if not isinstance(record, dict) or record.get("corners") != len(corners):
        return None
    raw = unpack_bytes(record.get("template"))
    ds = unpack_bytes(record.get("d"))
    ms = unpack_bytes(record.get("m"))
    mod = record.get("mod")
    if raw is None or ds is None or ms is None or not isinstance(mod, list) or len(mod) != 3 \
            or not all(isinstance(m, int) and 0 < m <= 1 << 16 for m in mod):
        return None
    d_arr = np.frombuffer(ds, np.uint8)
    m_arr = _unpack_remainders(ms, max(mod), len(d_arr), record.get("m_bits"))
    if m_arr is None:
        return None
    lines = raw.decode("latin-1").splitlines(keepends=True)
    try:
        where = _placeholders(lines, values)
        if where is None:
            return None
        kinds, elems, comps, face_tokens = where
        nums = _numbers(kinds, elems, comps, values, d_arr, m_arr, mod)
        text = _fill("".join(lines).split(_NUM), nums)
        if text is None:
            return None
        idx = _indices(text, face_tokens, corners)
        text = None if idx is None else _fill(_ANY_IDX.split(text), idx)
        return None if text is None else text.encode("latin-1")
    except (IndexError, KeyError, ValueError):       # a record that does not fit the mesh
        return None


def _placeholders(lines: list[str], values: dict[str, np.ndarray]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, list[tuple[int, bool]]] | None:
    """(kind, element, component) of each number placeholder in order, and the token count of
    each face line; lines of numbers kept as read are checked for edits (in place)."""
    count = dict.fromkeys(_KINDS, 0)
    kinds: list[int] = []
    elems: list[int] = []
    comps: list[int] = []
    faces: list[tuple[int, bool]] = []
    fast = {"v \x00": "v", "vt ": "vt", "vn ": "vn"}
    for i, ln in enumerate(lines):
        key = fast.get(ln[:3])
        if key is None:
            c = ln[:1]
            if c == "f" or (c.isspace() and _kind(ln) == "f"):
                n = ln.count(_IDX[0])
                faces.append((n, True) if n else (len(ln.split()) - 1, False))
                continue
            key = _kind(ln) if c in "v \t" else None
            if key not in _WIDTH:
                continue
        assert key is not None
        e = count[key]
        count[key] += 1
        n = ln.count(_NUM)
        if n:
            ki = _KINDS.index(key)
            kinds += [ki] * n
            elems += [e] * n
            comps += range(n)
        else:                                            # kept as read, unless edited
            lines[i] = "".join(_edited_line(re.split(r"(\s+)", ln), key, values.get(key), e))
    return (np.array(kinds, np.int64), np.array(elems, np.int64), np.array(comps, np.int64),
            faces)


def _numbers(kinds: np.ndarray, elems: np.ndarray, comps: np.ndarray,
             values: dict[str, np.ndarray], d_arr: np.ndarray, m_arr: np.ndarray,
             mod: list[int]) -> list[str]:
    """Each number token: the integer nearest the glTF's value (at the token's decimals) with
    the token's remainder, spelled as the token was."""
    if len(kinds) != len(d_arr):
        raise ValueError("placeholders and numbers differ")
    x = np.zeros(len(kinds))
    for ki, key in enumerate(_KINDS):
        sel = kinds == ki
        if sel.any():
            x[sel] = values[key][elems[sel], comps[sel]]
    d = (d_arr & 0x7F).astype(np.int64)
    neg = (d_arr >> 7).astype(bool)
    m = np.array(mod, np.int64)[kinds]
    with np.errstate(invalid="ignore", over="ignore"):
        at = np.where(np.isfinite(x), x * 10.0 ** d, 0.0)
        k = m_arr + m * np.rint((at - m_arr) / m).astype(np.int64)
    if len(k) and (np.abs(k) < 10**15).all():
        # %f of k / 10^d gives k's digits exactly (the double is far nearer than half a unit
        # of the last decimal below 10^15): all numbers of one number of decimals at once
        decimals = set(d.tolist())
        if len(decimals) == 1:                              # (the usual case)
            fmt = f"%.{decimals.pop()}f"
            out = [fmt % v for v in (k / 10.0 ** d[0]).tolist()]
        else:
            out = [""] * len(k)
            for dv in decimals:
                at_d = np.flatnonzero(d == dv).tolist()
                fmt = f"%.{dv}f"
                for i, v in zip(at_d, (k[at_d] / 10.0 ** dv).tolist()):
                    out[i] = fmt % v
        for i in np.nonzero(neg & (k == 0))[0].tolist():        # "-0.000000" as read
            out[i] = "-" + out[i]
        return out
    return [_spell(v, dv, ng) for v, dv, ng in zip(k.tolist(), d.tolist(), neg.tolist())]


def _fill(pieces: list[str], items: list[str]) -> str | None:
    """The ``pieces`` of a text cut at its placeholders joined again with ``items`` in their
    places, in order."""
    if len(pieces) != len(items) + 1:
        return None
    out = [""] * (2 * len(items) + 1)
    out[0::2] = pieces
    out[1::2] = items
    return "".join(out)


_ANY_IDX = re.compile("[\x01\x02\x03]")


def _indices(text: str, faces: list[tuple[int, bool]], corners: np.ndarray) -> list[str] | None:
    """Each index placeholder's number: the source index of its corner (faces in order, as
    ``(tokens, templated)``; a quad or larger face as :func:`_face_corners` maps its tokens)."""
    marks = np.frombuffer("".join(_ANY_IDX.findall(text)).encode("latin-1"), np.uint8)
    comp = marks.astype(np.int64) - 1
    token = np.cumsum(comp == 0) - 1
    slots: list[int] = []
    base = 0
    for n, templated in faces:
        if templated:
            slots += [base + s for s in (_face_corners(n) if n != 3 else (0, 1, 2))]
        base += 3 * max(n - 2, 0)
    if base != len(corners) or (len(token) and token[-1] >= len(slots)):
        return None
    if not len(token):
        return []
    src = corners[np.array(slots, np.int64)[token], comp]
    if (src < 0).any():
        return None
    return list(map(str, (src + 1).tolist()))


#: how far a number of a line kept as read may be from the glTF's value and still count as
#: unedited (Blender's float noise); a larger edit rewrites the line
LINE_TOLERANCE = 1e-6


def _edited_line(parts: list[str], key: str, values: np.ndarray | None, e: int) -> list[str]:
    """A ``v``/``vt``/``vn`` line kept as read, or written anew from the glTF's values when
    they are farther than :data:`LINE_TOLERANCE` from its numbers."""
    if values is None or e >= len(values):
        return parts
    new = values[e, :_WIDTH[key]]
    toks = [p for p in parts if p and not p.isspace()][1:1 + _WIDTH[key]]
    try:
        old = np.array([float(t) for t in toks], np.float64)
    except ValueError:
        return parts
    if len(old) != len(new) or not np.all(np.isfinite(new)) or \
            same_rows(new[None], old[None], LINE_TOLERANCE)[0]:
        return parts
    ending = "".join(parts)[len("".join(parts).rstrip("\r\n")):]
    return [key + "".join(f" {x:.9g}" for x in new) + ending]


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


def source_tables(corners: np.ndarray) -> dict[str, str]:
    """For ``vt`` and ``vn``: when every corner of an OBJ ``v`` has the same one (an exporter
    writing ``k/k/k``), the table ``v -> vt`` (packed deltas: a few bytes), so that the
    column needs no vertex attribute (:func:`sources`)."""
    out = {}
    v = corners[:, 0]
    n = int(v.max()) + 1 if len(v) else 0
    for c, key in ((1, "vt"), (2, "vn")):
        col = corners[:, c]
        if not np.any(col >= 0):
            continue
        tab = np.full(n, -1, np.int64)
        tab[v] = col
        if np.array_equal(tab[v], col):
            out[key] = pack(steps(tab))
    return out


def sources(v: np.ndarray, columns: dict[int, np.ndarray], record: Any) -> np.ndarray:
    """(n, 3) source indices of vertices: ``v``, and the ``vt``/``vn`` columns from their
    attributes (``columns``), else from the record's tables, else -1."""
    out = np.full((len(v), 3), -1, np.int64)
    out[:, 0] = v
    tables = record.get("of_v") if isinstance(record, dict) else None
    for c, key in ((1, "vt"), (2, "vn")):
        if c in columns:
            out[:, c] = columns[c]
            continue
        tab = from_steps(unpack_bytes(tables.get(key))) if isinstance(tables, dict) else None
        if tab is None:
            continue
        ok = (v >= 0) & (v < len(tab))
        out[ok, c] = tab[v[ok]]
    return out


def per_v_record(original: np.ndarray, written: np.ndarray, v: np.ndarray,
                 level: int = LEVEL_SMALL) -> dict | None:
    """:func:`xor_record` of per-corner rows kept once per OBJ ``v`` when every corner of a
    ``v`` has the same rows (a vertex's weights), else per corner (``level``: zlib's)."""
    _, first, inv = np.unique(v, return_index=True, return_inverse=True)
    rep = first[inv.reshape(-1)]
    a, b = bits(original), bits(written)
    if np.array_equal(a, a[rep]) and np.array_equal(b, b[rep]):
        record = xor_record(original[first], written[first], written[first], level=level)
        if record is not None:
            record["per"] = "v"
        return record
    return xor_record(original, written, written, level=level)


def per_v_restore(record: Any, written: np.ndarray, v: np.ndarray | None) -> np.ndarray:
    """The rows :func:`per_v_record` kept, put back where the glTF still holds them."""
    if not isinstance(record, dict) or record.get("per") != "v":
        return xor_restore(record, written, written)
    if v is None or len(v) != len(written):
        return np.array(written, np.float32)
    _, first, inv = np.unique(v, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    rep = written[first]
    restored, same = xor_rows(record, rep, rep)
    out = np.array(written, np.float32)
    take = same[inv] & (bits(out) == bits(rep)[inv]).all(1)
    out[take] = restored[inv[take]]
    return out



def _scaled(rows: np.ndarray, scale: np.ndarray) -> np.ndarray:
    out = np.array(rows, np.float32)
    out[:, :4] *= scale[:, None]
    return out


def weights_record(original: np.ndarray, written: np.ndarray, v: np.ndarray) -> dict | None:
    """:func:`per_v_record` of ``.phxbn`` weight rows (4 weights, 4 ids), smaller where the
    file's weights do not sum to 1 (glTF's renormalised weights then share no bits with them,
    so their XOR is random): each row's weight sum is kept (``scale``) and the XOR taken
    against the written weights times it, which differs from the file's in a rounding.
    :func:`weights_restore` puts them back."""
    o = np.ascontiguousarray(original, np.float32)
    w = np.ascontiguousarray(written, np.float32)
    if o.shape != w.shape or o.ndim != 2 or o.shape[1] < 4 or len(v) != len(o):
        return per_v_record(original, written, v)
    if np.array_equal(o.view(np.uint32), w.view(np.uint32)):
        return None
    level = LEVEL_LARGE if o.nbytes >= 1 << 16 else LEVEL_SMALL
    _, first, inv = np.unique(v, return_index=True, return_inverse=True)
    rep = first[inv.reshape(-1)]
    per_v = np.array_equal(o.view(np.uint32), o.view(np.uint32)[rep]) and \
        np.array_equal(w.view(np.uint32), w.view(np.uint32)[rep])
    if per_v:
        o, w = o[first], w[first]
    scale = o[:, :4].sum(1, dtype=np.float32)
    if np.all(np.abs(scale - 1.0) <= 1e-6):     # (a rounding off 1: the scales would cost more)
        return _plain(o, w, per_v, level)
    record = xor_record(o, _scaled(w, scale), w, always=True, level=level)
    if record is None:
        return None
    record["scale"] = pack(scale.astype("<f4").tobytes(), level)
    if per_v:
        record["per"] = "v"
    if o.nbytes < 1 << 16:          # small: the plain record may be smaller (deflating is cheap)
        plain = _plain(o, w, per_v, level)
        if plain is not None and _size(plain) <= _size(record):
            return plain
    return record


def _plain(o: np.ndarray, w: np.ndarray, per_v: bool, level: int) -> dict | None:
    """:func:`per_v_record` of rows already taken once per ``v`` (``per_v``) or not."""
    record = xor_record(o, w, w, level=level)
    if record is not None and per_v:
        record["per"] = "v"
    return record


def _size(record: dict) -> int:
    return sum(len(x) for x in record.values() if isinstance(x, str))


def weights_restore(record: Any, written: np.ndarray, v: np.ndarray | None) -> np.ndarray:
    """The rows :func:`weights_record` kept, put back where the glTF still holds them."""
    if not isinstance(record, dict) or "scale" not in record:
        return per_v_restore(record, written, v)
    out = np.array(written, np.float32).reshape(len(written), -1)
    if record.get("per") == "v":
        if v is None or len(v) != len(out):
            return out
        _, first, inv = np.unique(v, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
    else:
        first = inv = np.arange(len(out))
    rep = out[first]
    raw = unpack_bytes(record["scale"], 4 * len(rep) + 1)
    if raw is None or len(raw) != 4 * len(rep) or rep.shape[1] < 4:
        return out
    restored, same = xor_rows(record, _scaled(rep, np.frombuffer(raw, "<f4")), rep)
    take = same[inv] & (out.view(np.uint32) == rep.view(np.uint32)[inv]).all(1)
    out[take] = restored[inv[take]]
    return out
