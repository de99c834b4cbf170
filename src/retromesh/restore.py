"""Values glTF made us change, put back as they were read while the glTF still holds what we
wrote (docs/lossless.md, "Unedited means identical").

glTF wants unit normals and quaternions and weights that sum to 1; our writers recompute some
values from others (a bounding box, a bone's local matrix). Where a file's value does not come
back bit for bit that way, ``to_scene`` keeps a *record* of it in extras (JSON: it rides through
Blender's custom properties), and the writer puts it back where the value is unedited:

* :func:`keep_rows` -- the rows of a float32 array (one row per vertex, key, bone...) that the
  plain conversion back (``back``) does not give bit for bit: their indices and the XOR of
  their bits with ``back``'s (a rounding is a small number, a sign a high bit: zlib makes them
  a few bytes each);
* :func:`put_back_rows` -- on the way back, each kept row is rebuilt from the row the writer
  computes now and, when ``to_gltf`` of it is what the glTF holds now (bit for bit, or within
  :data:`EDITOR_TOLERANCE` when an editor wrote the glTF), written as read. An edited row
  (or one whose neighbours' edit moved it) is the writer's, as without a record;
* :func:`keep_table` / :func:`put_back_table` -- rows of a small table the writer derives from
  other values (a skeleton's poses, a bounding box): the row read and the one the writer derives
  from the glTF as written; the row read comes back while the writer derives the same again.

An editor such as Blender stores floats its own way (a quaternion through its matrices, UVs
flipped twice): the Blender extension marks the scenes it exports (scene extra
``retromesh_blender``, :data:`EDITOR_KEY`), and then a value within the tolerance of what we
wrote counts as unedited: an edit smaller than that is dropped. Values the plain way back gives
as they are have no record here; for a GLB made for Blender, :mod:`retromesh.restore_editor`
keeps them as written and finds them again in the editor's noise.

Every family's records are made with the tools here (a job done once, whatever the format):
:func:`tolerance` (the mark test, with a family's own figure), :func:`same_rows` /
:func:`same_floats` / :func:`put_back` (is a row unedited, and put it back),
:func:`bits` / :func:`differing_rows` (float32 bits), :func:`xor_record` / :func:`xor_rows`
with :func:`check_bytes` (rows told unedited by a check byte of their glTF inputs: Overgrowth),
and the text of records: :func:`pack_bytes` / :func:`unpack_bytes` (base64 of zlib),
:func:`pack_words` (B3D: byte planes), :func:`steps` (sorted row numbers), :func:`pack_small`
(small ints, 4 to 32 bits, without zlib) and :func:`ordered` (float32 values as ints whose
difference is their distance in float32 units: a rounding kept in a few bits). A record keeps
the encoding and zlib level it was first made with: GLBs already written decode as they did.
"""
from __future__ import annotations

import base64
import contextlib
import contextvars
import copy
import dataclasses
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import geometry
from .extras import BLENDER_MARK
from .scene import Animation, Primitive, Scene

__all__ = ["EDITOR_TOLERANCE", "EDITOR_KEY", "tolerance", "keep_rows", "keep_rows_slices",
           "put_back_rows", "same_rows",
           "same_floats", "put_back",
           "keep_table", "put_back_table", "keep_bytes", "put_back_bytes", "as_glb_holds",
           "pack_ints", "unpack_ints", "pack_bytes", "unpack_bytes", "from_base64", "pack_words",
           "unpack_words", "steps", "from_steps", "bits", "differing_rows",
           "check_bytes", "xor_record", "xor_restore", "xor_rows", "LEVEL_FAST", "LEVEL_SMALL",
           "ordered", "unordered", "pack_small", "pack_small_slices", "unpack_small", "pack_raw",
           "unpack_raw", "for_editor",
           "editor_records"]

#: relative tolerance (times max(1, |value|)) of "unedited" for a glTF an editor wrote
EDITOR_TOLERANCE = 2e-5
#: the scene extra an editor's export is marked with (the Blender extension sets it)
EDITOR_KEY = BLENDER_MARK
#: zlib level of the records made here (level 9 took as long as the whole conversion of a mesh;
#: 1 keeps them within a few per cent of its size)
LEVEL_FAST = 1
#: zlib level of the records B3D and Overgrowth make (smaller, for records a conversion makes few
#: of); a record keeps the level it was made with so that GLBs stay byte for byte as they were
LEVEL_SMALL = 6
#: payloads of :func:`pack_words` up to this many bytes are stored as they are (deflating a small
#: one costs more time than the few bytes it saves)
_DEFLATE_FROM = 1024


#: set while a scene is read for an editor (:func:`editor_records`)
_FOR_EDITOR = contextvars.ContextVar("retromesh_records_for_editor", default=False)


@contextlib.contextmanager
def editor_records() -> Any:
    """Within: ``to_scene`` makes records for a GLB an editor will store its own way (the
    Blender extension reads models so): a record that keeps a value as its rounding from the
    value the plain way back gives (a few bits) keeps the value itself, which is found again
    within the editor's tolerance."""
    token = _FOR_EDITOR.set(True)
    try:
        yield
    finally:
        _FOR_EDITOR.reset(token)


def for_editor() -> bool:
    """Whether the scene being read is for an editor (:func:`editor_records`)."""
    return _FOR_EDITOR.get()


def tolerance(extras: dict[str, Any], editor: float = EDITOR_TOLERANCE) -> float:
    """0 (bit for bit) for a glTF written by retromesh or a script, ``editor`` (a family's own
    figure for the value, by default :data:`EDITOR_TOLERANCE`) for one an editor wrote: the one
    test of the editor's mark (``extras`` are the scene's)."""
    return editor if extras.get(EDITOR_KEY) else 0.0


# -- records as text (JSON extras: they ride through Blender's custom properties) ---------------

def pack_bytes(raw: bytes, level: int = LEVEL_FAST, zdict: bytes = b"") -> str:
    """``raw`` as base64 of zlib of it (``zdict``: deflated against those bytes, zlib's preset
    dictionary, so that what they share with ``raw`` costs nothing)."""
    if zdict:
        z = zlib.compressobj(level, zdict=zdict)
        return base64.b64encode(z.compress(raw) + z.flush()).decode("ascii")
    return base64.b64encode(zlib.compress(raw, level)).decode("ascii")


def unpack_bytes(text: Any, limit: int = 1 << 30, zdict: bytes = b"") -> bytes | None:
    """The bytes :func:`pack_bytes` packed, None for anything else: a damaged or hand-made
    glTF, a stream cut short, or more than ``limit`` bytes (extras come from any glTF: a zlib
    bomb there must not grow)."""
    if not isinstance(text, str):
        return None
    try:
        d = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
        out = d.decompress(base64.b64decode(text, validate=True), limit)
    except (ValueError, zlib.error):
        return None
    return out if d.eof and not d.unconsumed_tail else None


def from_base64(text: Any) -> bytes | None:
    """The bytes of base64 ``text`` (no zlib), None for anything else."""
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        return None


def pack_words(data: bytes) -> str:
    """``data`` (4-byte numbers) as base64; a big one shuffled byte plane by byte plane (the
    exponents then compress well) and deflated first, marked ``z:``."""
    if len(data) < _DEFLATE_FROM:
        return base64.b64encode(data).decode("ascii")
    planes = np.frombuffer(data, np.uint8).reshape(-1, 4).T.tobytes()
    return "z:" + pack_bytes(planes, LEVEL_SMALL)


def unpack_words(text: Any) -> bytes | None:
    """The bytes :func:`pack_words` packed, None for anything else."""
    if not isinstance(text, str) or not text.startswith("z:"):
        return from_base64(text)
    planes = unpack_bytes(text[2:])
    if planes is None or len(planes) % 4:
        return None
    return np.frombuffer(planes, np.uint8).reshape(4, -1).T.tobytes()


def steps(values: np.ndarray, dtype: str = "<i4", restart: np.ndarray | None = None) -> bytes:
    """Integers as the bytes (``dtype``) of their steps, the first from 0 and, where the mask
    ``restart`` is set, from 0 again (one list per node in one array): sorted row numbers
    become small numbers that pack to a few bytes."""
    v = np.asarray(values, np.int64).reshape(-1)
    d = np.diff(v, prepend=0)
    if restart is not None:
        d[restart] = v[restart]
    return d.astype(dtype).tobytes()


def from_steps(raw: bytes | None, dtype: str = "<i4") -> np.ndarray | None:
    """The integers (int64) whose :func:`steps` (from 0) ``raw`` holds; None for no bytes or
    a length that is not a whole number of ``dtype``."""
    if raw is None or len(raw) % np.dtype(dtype).itemsize:
        return None
    return np.cumsum(np.frombuffer(raw, dtype).astype(np.int64))


#: :func:`pack_small`: the text's prefix for each width of int (``n:``/``o:``: 4 bits each, two
#: to a byte, an even or odd count of them)
_SMALL = {"1:": "<i1", "2:": "<i2", "4:": "<i4"}
_NIBBLES = ("n:", "o:")
#: per byte of a ``n:``/``o:`` text, its two signed 4-bit values
_NIBBLE_VALUES = np.stack([np.arange(256) & 15, np.arange(256) >> 4], axis=1).astype(np.int64)
_NIBBLE_VALUES[_NIBBLE_VALUES >= 8] -= 16


def pack_small(values: np.ndarray) -> str:
    """Signed ints (row steps, residues in float32 units) as base64 of the narrowest of 4 bits,
    int8, int16, int32 that holds them all, after a prefix naming it (``n:``/``o:``: 4 bits
    each, two to a byte, an even or odd count; ``1:``, ``2:``, ``4:``); from
    :data:`_DEFLATE_FROM` bytes on deflated, the prefix after a ``z`` (a record of a few dozen
    rows, of which a model has hundreds, costs more to deflate than it saves)."""
    v = np.asarray(values, np.int64).reshape(-1)
    return _small_one(v, int(v.min()), int(v.max())) if len(v) else "n:"


def _small_text(prefix: str, raw: bytes) -> str:
    if len(raw) >= _DEFLATE_FROM:
        return "z" + prefix + pack_bytes(raw)
    return prefix + base64.b64encode(raw).decode("ascii")


def _small_one(seg: np.ndarray, low: int, high: int) -> str:
    """:func:`pack_small` of int64 ``seg`` whose least and greatest are ``low``, ``high``."""
    if low >= -8 and high <= 7:             # two to a byte, the first in the low bits
        u = (seg & 15).astype(np.uint8)
        odd = len(seg) % 2
        if odd:
            u = np.append(u, np.uint8(0))
        return _small_text("o:" if odd else "n:", (u[0::2] | (u[1::2] << 4)).tobytes())
    for prefix, dtype in _SMALL.items():
        if -(1 << (8 * int(dtype[2]) - 1)) <= low and high < 1 << (8 * int(dtype[2]) - 1):
            return _small_text(prefix, seg.astype(dtype).tobytes())
    raise ValueError("pack_small: beyond int32")


def pack_small_slices(values: np.ndarray, cuts: np.ndarray) -> list[str]:
    """:func:`pack_small` of each slice ``values[cuts[k]:cuts[k + 1]]`` (a record per node: the
    ranges of all slices found in one numpy pass, and the bytes of all slices of 4-bit values,
    most of them, packed in one: per slice only its bytes are cut out and encoded)."""
    v = np.asarray(values, np.int64).reshape(-1)
    cuts = np.asarray(cuts, np.int64)
    lens = cuts[1:] - cuts[:-1]
    lo, hi = np.zeros(len(lens), np.int64), np.zeros(len(lens), np.int64)
    full = np.flatnonzero(lens > 0)
    if len(full):
        part = v[:cuts[-1]]
        lo[full] = np.minimum.reduceat(part, cuts[full])
        hi[full] = np.maximum.reduceat(part, cuts[full])
    nib = (lo >= -8) & (hi <= 7)
    # every 4-bit slice padded to an even count, one after the other: byte k // 2 of slice k's
    padded = np.where(nib, lens + (lens & 1), 0)
    start = np.zeros(len(padded) + 1, np.int64)
    np.cumsum(padded, out=start[1:])
    buf = np.zeros(int(start[-1]), np.uint8)
    if len(buf):
        slice_of = np.repeat(np.arange(len(lens)), lens)
        take = nib[slice_of]
        at = np.arange(len(slice_of)) - cuts[:-1][slice_of] + start[:-1][slice_of]
        buf[at[take]] = (v[:len(slice_of)][take] & 15).astype(np.uint8)
    raw = (buf[0::2] | (buf[1::2] << 4)).tobytes()
    out = []
    for a, b, low, high, s0, s1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), lo.tolist(),
                                       hi.tolist(), (start[:-1] // 2).tolist(),
                                       (start[1:] // 2).tolist()):
        if a == b:
            out.append("n:")                # (most nodes: nothing to keep)
        elif low >= -8 and high <= 7:
            out.append(_small_text("o:" if (b - a) & 1 else "n:", raw[s0:s1]))
        else:
            out.append(_small_one(v[a:b], low, high))
    return out


def unpack_small(text: Any) -> np.ndarray | None:
    """The ints :func:`pack_small` packed (int64), None for anything else."""
    if not isinstance(text, str):
        return None
    deflated = text[:1] == "z"
    prefix = text[1:3] if deflated else text[:2]
    if prefix not in _SMALL and prefix not in _NIBBLES:
        return None
    raw = unpack_bytes(text[3:]) if deflated else from_base64(text[2:])
    if raw is None:
        return None
    if prefix in _NIBBLES:
        u = _NIBBLE_VALUES[np.frombuffer(raw, np.uint8)].reshape(-1)
        if prefix == "o:":
            if not len(u) or u[-1]:
                return None
            u = u[:-1]
        return u
    dtype = np.dtype(_SMALL[prefix])
    if len(raw) % dtype.itemsize:
        return None
    return np.frombuffer(raw, dtype).astype(np.int64)


def pack_raw(data: bytes) -> str:
    """Bytes (check bytes) as base64, from :data:`_DEFLATE_FROM` bytes on deflated after
    ``z:``."""
    if len(data) < _DEFLATE_FROM:
        return base64.b64encode(data).decode("ascii")
    return "z:" + pack_bytes(data)


def unpack_raw(text: Any) -> bytes | None:
    """The bytes :func:`pack_raw` packed, None for anything else."""
    if isinstance(text, str) and text.startswith("z:"):
        return unpack_bytes(text[2:])
    return from_base64(text)


def pack_ints(values: np.ndarray, delta: bool = True) -> str:
    """int32 values as base64 of zlib of them (``delta``: of their :func:`steps`, so that
    sorted lists shrink to a few bytes)."""
    return pack_bytes(steps(values) if delta else
                      np.asarray(values, np.int64).reshape(-1).astype("<i4").tobytes())


def unpack_ints(text: Any, delta: bool = True, limit: int = 1 << 26) -> np.ndarray | None:
    """The values :func:`pack_ints` packed, or None when ``text`` is not such a record."""
    raw = unpack_bytes(text, 4 * limit)
    if delta or raw is None or len(raw) % 4:
        return from_steps(raw)
    return np.frombuffer(raw, "<i4").astype(np.int64)


# -- float32 values, bit for bit ----------------------------------------------------------------

def bits(a: np.ndarray) -> np.ndarray:
    """The bits of float32 rows (one row per item), (n, width) uint32: a view when ``a`` is
    already contiguous float32."""
    a = np.ascontiguousarray(a, np.float32)
    return a.view(np.uint32).reshape(len(a), -1 if a.size else 0)


def ordered(a: np.ndarray) -> np.ndarray:
    """float32 bits as int64 in the order of the values (-0.0 just below +0.0): the difference
    of two is how many float32 values apart they are (a rounding: a small number)."""
    b = np.ascontiguousarray(a, np.float32).view(np.int32).astype(np.int64)
    return np.where(b >= 0, b, -1 - (b & 0x7FFFFFFF))


def unordered(m: np.ndarray) -> np.ndarray:
    """The float32 values of :func:`ordered` ints."""
    b = np.where(m >= 0, m, (-1 - m) | 0x80000000).astype(np.int64)
    return (b & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def differing_rows(was: np.ndarray, back: np.ndarray) -> np.ndarray | None:
    """The rows (increasing) of float32 ``was`` whose bits ``back`` does not give; None when
    their shapes differ."""
    a, b = bits(was), bits(back)
    if a.shape != b.shape:
        return None
    if a.tobytes() == b.tobytes():          # the usual case, 20x faster than the test per row
        return np.zeros(0, np.int64)
    return np.flatnonzero((a != b).any(axis=1))


def keep_rows(was: np.ndarray, back: np.ndarray) -> dict[str, str] | None:
    """The record of the rows of ``was`` (float32, one row per item) that ``back`` (what the
    writer computes from the glTF as written) does not give bit for bit; None when all do."""
    rows = differing_rows(was, back)
    if rows is None or not len(rows):
        return None
    x = (bits(was)[rows] ^ bits(back)[rows]).view(np.int32)
    return {"at": pack_ints(rows), "xor": pack_ints(x.reshape(-1), delta=False)}


def keep_rows_slices(was: np.ndarray, back: np.ndarray, cuts: np.ndarray) -> list[dict | None]:
    """:func:`keep_rows` of each slice ``was[cuts[k]:cuts[k + 1]]`` against ``back``'s (a
    record per track or bone: the same texts), the rows and their bits found for all slices
    in one numpy pass; per slice only its bytes are deflated."""
    a, b = bits(was), bits(back)
    cuts = np.asarray(cuts, np.int64)
    k_count = len(cuts) - 1
    if a.shape != b.shape:
        return [None] * k_count
    rows = differing_rows(a.view(np.float32), b.view(np.float32))
    if rows is None or not len(rows):
        return [None] * k_count
    width = a.shape[1]
    rcut = np.searchsorted(rows, cuts).tolist()
    node_of = np.searchsorted(cuts, rows, side="right") - 1
    local = rows - cuts[node_of]
    first = np.ones(len(rows), bool)
    first[1:] = node_of[1:] != node_of[:-1]
    at_b = steps(local, restart=first)
    xor_b = (a[rows] ^ b[rows]).view(np.int32).astype("<i4").tobytes()
    out: list[dict | None] = []
    for lo, hi in zip(rcut[:-1], rcut[1:]):
        out.append(None if lo == hi else {
            "at": pack_bytes(at_b[4 * lo:4 * hi]),
            "xor": pack_bytes(xor_b[4 * width * lo:4 * width * hi])})
    return out


def same_rows(now: np.ndarray, wrote: np.ndarray, tol: float) -> np.ndarray:
    """Per row, whether the value is unedited: ``now`` (what the glTF holds now) is ``wrote``
    (what we wrote, recomputed from the value kept), bit for bit as float32 when ``tol`` is 0,
    else within ``tol`` times max(1, |wrote|). False for every row when the shapes differ."""
    if tol == 0.0:
        a, b = bits(now), bits(wrote)
        if a.shape != b.shape:
            return np.zeros(len(now), bool)
        return np.asarray((a == b).all(axis=1), bool)
    x = np.asarray(now, np.float64)
    y = np.asarray(wrote, np.float64)
    x, y = x.reshape(len(x), x[:1].size), y.reshape(len(y), y[:1].size)
    if x.shape != y.shape:
        return np.zeros(len(x), bool)
    return np.asarray((np.abs(x - y) <= tol * np.maximum(1.0, np.abs(y))).all(axis=1), bool)


def _f32_bits(x: float) -> bytes | float:
    try:
        return struct.pack("<f", x)
    except OverflowError:                   # beyond float32: the float itself
        return x


def same_floats(now: Sequence[float], wrote: Sequence[float], tol: float) -> bool:
    """:func:`same_rows` of one short row of plain floats (a node's translation: numpy per
    node would cost more than the node)."""
    if tol == 0.0:
        return all(_f32_bits(a) == _f32_bits(b) for a, b in zip(now, wrote))
    return all(abs(a - b) <= tol * max(1.0, abs(b)) for a, b in zip(now, wrote))


def put_back(out: np.ndarray, rows: np.ndarray, was: np.ndarray, now: np.ndarray,
             to_gltf: Callable[[np.ndarray], np.ndarray], tol: float, *,
             either_sign: bool = False, also: np.ndarray | None = None) -> int:
    """``out[rows]`` set to the values read ``was`` where they are unedited: ``to_gltf(was)``
    (what we wrote from them) is ``now`` (what the glTF holds now for those rows, :func:`same_rows`;
    ``either_sign``: or its negation, for quaternions; ``also``: rows taken whatever the glTF
    holds); in place. Returns how many rows were put back."""
    wrote = np.asarray(to_gltf(was), np.float32)
    ok = same_rows(now, wrote, tol)
    if either_sign:
        ok |= same_rows(now, -wrote, tol)
    if also is not None:
        ok |= also
    out[rows[ok]] = was[ok]
    return int(ok.sum())


def put_back_rows(out: np.ndarray, now_gltf: np.ndarray, record: Any,
                  to_gltf: Callable[[np.ndarray], np.ndarray], tol: float = 0.0, *,
                  either_sign: bool = False) -> int:
    """Rows of ``out`` (float32, what the writer computed from ``now_gltf``) as read, where
    ``record`` (:func:`keep_rows`) kept them and ``to_gltf`` of the row read is ``now_gltf``'s
    row (``either_sign``: or its negation, for quaternions); in place. Returns how many rows
    were put back (0 for a record that does not fit)."""
    if not isinstance(record, dict):
        return 0
    rows, d = unpack_ints(record.get("at")), unpack_ints(record.get("xor"), delta=False)
    n = len(out)
    width = int(np.prod(out.shape[1:], dtype=np.int64)) if out.ndim > 1 else 1
    if rows is None or d is None or len(d) != len(rows) * width or not len(rows) or \
            rows.min() < 0 or rows.max() >= n or len(now_gltf) != n:
        return 0
    was = (bits(out[rows]) ^ d.astype(np.uint32).reshape(len(rows), width)).view(np.float32)
    was = was.reshape((len(rows),) + out.shape[1:])
    return put_back(out, rows, was, now_gltf[rows], to_gltf, tol, either_sign=either_sign)


def keep_table(was: np.ndarray, back: np.ndarray) -> dict[str, str] | None:
    """The record of the rows of a small float32 table (a skeleton's poses, a bounding box) that
    the writer derives from other values: for each row that ``back`` (what the writer derives
    from the glTF as written) does not give bit for bit, the row read and ``back``'s; None when
    all rows come back."""
    a = np.asarray(was, np.float32).reshape(len(was), -1)
    b = np.asarray(back, np.float32).reshape(len(back), -1)
    rows = differing_rows(a, b)
    if rows is None or not len(rows):
        return None
    # the rows read and written are mostly the same floats: zlib keeps one copy
    both = np.concatenate([a[rows], b[rows]]).astype("<f4").tobytes()
    return {"at": pack_ints(rows), "rows": pack_bytes(both)}


def put_back_table(out: np.ndarray, record: Any, tol: float = 0.0) -> int:
    """Rows of ``out`` (float32, what the writer derived now) as read, where :func:`keep_table`
    kept them and the writer derives now what it derived from the glTF as written; in place.
    Returns how many rows were put back."""
    if not isinstance(record, dict):
        return 0
    flat = out.reshape(len(out), -1)
    width = flat.shape[1]
    rows = unpack_ints(record.get("at"))
    if rows is None or not len(rows) or rows.min() < 0 or rows.max() >= len(out):
        return 0
    both = unpack_bytes(record.get("rows"), 8 * len(rows) * width + 1)
    if both is None or len(both) != 8 * len(rows) * width:
        return 0
    was, back = np.frombuffer(both, "<f4").reshape(2, len(rows), width)
    ok = same_rows(flat[rows], back, tol)
    flat[rows[ok]] = was[ok]
    return int(ok.sum())


# -- check bytes, and rows checked by their glTF inputs ------------------------------------------
# Two hashes, each of the records that hold its bytes: one byte per row of glTF inputs
# (:func:`check_bytes`, :func:`xor_record`) and one per 4-byte word of a file block
# (:func:`_hash8`, :func:`keep_bytes`).

def check_bytes(rows: np.ndarray, width: int = 1) -> np.ndarray:
    """``width`` (1 or 2) bytes per row of float32 values, the top ones of a hash of their
    bits: an edited row changes them with probability 255/256 (65,535/65,536 for 2)."""
    b = bits(rows)
    h = np.zeros(len(rows), np.uint64)
    for c in range(b.shape[1]):
        h = (h * np.uint64(1000003)) ^ b[:, c].astype(np.uint64)
        h ^= h >> np.uint64(29)
    h *= np.uint64(0x9E3779B97F4A7C15)
    if width == 2:
        return (h >> np.uint64(48)).astype("<u2")
    return (h >> np.uint64(56)).astype(np.uint8)


def xor_record(original: np.ndarray, written: np.ndarray, inputs: np.ndarray,
               always: bool = False, level: int = LEVEL_SMALL, planes: bool = False) -> dict | None:
    """The record of float32 ``original`` rows against the rows ``written`` (what the writer
    computes from the unedited glTF) and the glTF ``inputs`` they are computed from (one row
    each); None when every row already comes back (unless ``always``). For values whose
    recomputation the writer cannot repeat from the row alone (Overgrowth: ``.phxbn`` weights,
    ``.anm`` bone matrices): an edited row is told by its inputs' check byte. ``level``: zlib's
    (any level reads back the same); ``planes``: the XOR words kept byte plane by byte plane
    (``"xor_planes"``: their zero high bytes then deflate to almost nothing, sooner)."""
    a, b = bits(original), bits(written)
    if a.shape != b.shape or len(inputs) != len(a):
        return None
    x = a ^ b
    if not x.any() and not always:
        return None
    words = x.astype("<u4")
    return {"rows": len(a), **({"xor_planes": pack_bytes(
                words.view(np.uint8).reshape(-1, 4).T.tobytes(), level)} if planes else
            {"xor": pack_bytes(words.tobytes(), level)}),
            "check": pack_bytes(check_bytes(inputs).tobytes(), level)}


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
    x = unpack_bytes(record.get("xor"), 4 * out.size + 1)
    if x is None and "xor" not in record:               # (xor_record(planes=True))
        x = unpack_bytes(record.get("xor_planes"), 4 * out.size + 1)
        if x is not None and len(x) == 4 * out.size:
            x = np.frombuffer(x, np.uint8).reshape(4, -1).T.tobytes()
    chk = unpack_bytes(record.get("check"), len(out) + 1)
    if x is None or chk is None or len(x) != 4 * out.size or len(chk) != len(out):
        return out, same
    same = check_bytes(inputs) == np.frombuffer(chk, np.uint8)
    out.view(np.uint32)[same] ^= np.frombuffer(x, "<u4").reshape(out.shape)[same]
    return out, same


def _hash8(words: np.ndarray) -> np.ndarray:
    """One byte per uint32 word (a multiplicative hash): the check of a word in a block."""
    return ((np.asarray(words, np.uint32).astype(np.uint64) * 0x9E3779B1 >> 24) & 0xFF
            ).astype(np.uint8)


# -- a whole file, block by block ---------------------------------------------------------------
#: bytes per block of :func:`keep_bytes` (a block's check costs 4 bytes)
BLOCK = 64
#: a file whose layout the writer does not give back (another length) is kept whole up to this
WHOLE_LIMIT = 1 << 16


def _blocks(data: bytes, block: int) -> list[bytes]:
    return [data[i:i + block] for i in range(0, len(data), block)]


def keep_bytes(was: bytes, back: bytes, block: int = BLOCK) -> dict[str, Any] | None:
    """The record of a file the writer does not give back byte for byte (``back``: what it
    writes from the scene as a GLB holds it): for each block of ``block`` bytes that differs,
    the CRC-32 of the block written, the XOR that makes it the block read (zlib) and, for each
    4-byte word the XOR changes, one check byte of the word written (so that in a block an edit
    changed, the words it did not change still come back); a file of another length is kept
    whole (zlib) when it is small, with the CRC of what was written. None when ``back`` is
    ``was``."""
    if was == back:
        return None
    if len(was) != len(back):
        if len(was) > WHOLE_LIMIT:
            return None
        return {"whole": pack_bytes(was),
                "crc": [zlib.crc32(back), len(back)]}
    block -= block % 4
    n = (len(was) + block - 1) // block
    a, b = (np.zeros(n * block, np.uint8) for _ in range(2))
    a[:len(was)] = np.frombuffer(was, np.uint8)
    b[:len(back)] = np.frombuffer(back, np.uint8)
    x = (a ^ b).reshape(n, block)
    rows = np.nonzero(x.any(axis=1))[0]
    xw = x[rows].view("<u4")
    checks = _hash8(b.reshape(n, block)[rows].view("<u4")[xw != 0])
    crcs = [zlib.crc32(back[int(r) * block:(int(r) + 1) * block]) for r in rows]
    return {"block": block, "size": len(was), "at": pack_ints(rows),
            "crc": base64.b64encode(np.asarray(crcs, "<u4").tobytes()).decode("ascii"),
            "check": base64.b64encode(checks.tobytes()).decode("ascii"),
            "xor": pack_bytes(x[rows].tobytes())}


def put_back_bytes(now: bytes, record: Any) -> tuple[bytes, int]:
    """``now`` (what the writer wrote) with what :func:`keep_bytes` kept put back: each block the
    writer wrote as it wrote it from the GLB as written (its CRC-32 matches), and in the other
    blocks each word whose check byte matches. Returns the bytes and how many blocks it
    changed."""
    if not isinstance(record, dict):
        return now, 0
    if "whole" in record:
        if record.get("crc") != [zlib.crc32(now), len(now)]:
            return now, 0
        whole_file = unpack_bytes(record["whole"])
        return (now, 0) if whole_file is None else (whole_file, 1)
    block, size = record.get("block"), record.get("size")
    rows = unpack_ints(record.get("at"))
    raw = [from_base64(record.get("crc")), from_base64(record.get("check")),
           unpack_bytes(record.get("xor"))]
    if raw[0] is None or raw[1] is None or raw[2] is None or len(raw[0]) % 4:
        return now, 0
    crcs = np.frombuffer(raw[0], "<u4")
    checks, xor = np.frombuffer(raw[1], np.uint8), np.frombuffer(raw[2], np.uint8)
    if type(block) is not int or block <= 0 or block % 4 or size != len(now) or rows is None \
            or len(crcs) != len(rows) or len(xor) != len(rows) * block or \
            (len(rows) and (rows.min() < 0 or rows.max() * block >= len(now))):
        return now, 0
    n = (len(now) + block - 1) // block
    buf = np.zeros(n * block, np.uint8)
    buf[:len(now)] = np.frombuffer(now, np.uint8)
    blocks = buf.reshape(n, block)
    xw = xor.reshape(len(rows), block).view("<u4")
    changed = xw != 0
    if int(changed.sum()) != len(checks):
        return now, 0
    cur = blocks[rows].view("<u4")
    whole = np.array([zlib.crc32(now[r * block:(r + 1) * block]) for r in rows.tolist()],
                     np.uint32) == crcs
    word_ok = np.zeros(changed.shape, bool)
    word_ok[changed] = _hash8(cur[changed]) == checks
    apply = changed & (whole[:, None] | word_ok)
    blocks[rows] = np.where(apply, cur ^ xw, cur).view(np.uint8)
    return buf[:len(now)].tobytes(), int(apply.any(axis=1).sum())


# -- the scene as a GLB holds it ---------------------------------------------------------------

def _plain_extras(value: Any) -> Any:
    """Extras as they come back from a GLB: tuples as lists, None and empty values of dicts
    left out (as the glTF writer's JSON encoder leaves them out)."""
    if isinstance(value, dict):
        return {str(k): _plain_extras(v) for k, v in value.items()
                if v is not None and not (isinstance(v, (str, list, tuple, dict)) and not v)}
    if isinstance(value, (list, tuple)):
        return [_plain_extras(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def as_glb_holds(scene: Scene, *, meshes: bool = True, animations: bool = True) -> Scene:
    """A copy of ``scene`` as a glTF reader finds it after the glTF writer (node transforms,
    inverse binds as float32, extras through JSON; with ``meshes`` unit normals and weights as
    stored, with ``animations`` unit rotation keys and times from 0), sharing the rest; what a
    writer gives from it is what it will give from the GLB when nothing was edited."""
    cols = [np.array([getattr(n, a) for n in scene.nodes], np.float64).reshape(len(scene.nodes), w)
            for a, w in (("translation", 3), ("rotation", 4), ("scale", 3))]
    (t, r, s), _ = geometry.gltf_node_trs(*cols)
    nodes = [dataclasses.replace(n, translation=t[i], rotation=r[i], scale=s[i],
                                 extras=_plain_extras(n.extras))
             for i, n in enumerate(scene.nodes)]
    skins = [dataclasses.replace(k, inverse_bind_matrices=None if k.inverse_bind_matrices is None
                                 else np.asarray(k.inverse_bind_matrices, np.float32).astype(np.float64))
             for k in scene.skins]
    out = dataclasses.replace(scene, nodes=nodes, skins=skins, extras=_plain_extras(scene.extras))
    if meshes:
        out.meshes = [dataclasses.replace(m, primitives=[_prim_as_held(p) for p in m.primitives],
                                          extras=_plain_extras(m.extras)) for m in scene.meshes]
        out.materials = [dataclasses.replace(m, extras=_plain_extras(m.extras))
                         for m in scene.materials]
    if animations:
        out.animations = [_anim_as_held(a) for a in scene.animations]
    return out


def _prim_as_held(p: Primitive) -> Primitive:
    q = dataclasses.replace(p)
    if p.mode == 4 and p.normals is not None:
        q.normals = geometry.unit_rows(p.normals)
        bad = np.einsum("ij,ij->i", p.normals, p.normals) < 1e-24
        if bad.any():
            q.normals[bad] = geometry.compute_normals(p.positions, p.indices)[bad]
    if p.joints is not None and p.weights is not None:
        q.joints, q.weights, _ = geometry.gltf_weights(p.joints, p.weights)
    return q


def _anim_as_held(a: Animation) -> Animation:
    chans = [c for c in a.channels]
    start = min((float(c.times[0]) for c in chans), default=0.0)
    shift = -start if start < 0 else 0.0
    # every rotation channel's values made unit in one pass (row by row, as one by one); a
    # channel is copied without its checks (they held when it was made) and shared when
    # nothing changes: a skeleton has hundreds of channels and each call costs
    rot = [c.values for c in chans if c.path == "rotation"]
    units = iter(np.split(geometry.unit_rows(np.concatenate(rot), fallback=(0.0, 0.0, 0.0, 1.0)),
                          np.cumsum([len(v) for v in rot[:-1]])) if rot else ())
    out = []
    for c in chans:
        if c.path != "rotation" and not shift:
            out.append(c)
            continue
        q = copy.copy(c)
        if shift:
            q.times = (c.times.astype(np.float64) + shift).astype(np.float32)
        if c.path == "rotation":
            q.values = next(units)
        out.append(q)
    return dataclasses.replace(a, channels=out, extras=_plain_extras(a.extras))
