"""Overgrowth save files (``.sav``), little-endian; no 3D content.

Layout of the current engine (Overgrowth ``Source/Game/savefile.cpp``), version 3 (the engine rejects
versions 1 and 2 and calls anything above 3 too new):

=========================  ==============================================================
field                      type
=========================  ==============================================================
marker                     char[15] ``"Overgrowth Save"`` (no NUL)
version                    uint16 (3)
level_count                uint16
per level                  str campaign_id, str save_category, str save_name, uint8 md5[16],
                           uint16 n, n x (str key, str value),
                           uint16 n, n x (str key, uint16 m, m x str value),
                           uint16 n, n x (str key, int32 value)
``str``                    uint16 length + bytes (no NUL)
=========================  ==============================================================

Versions 1 and 2 (the wiki template's layout, which the engine now refuses): after the version,
``uint16 count`` and per entry ``str name, uint8 md5[16], uint16 n, n x (str key, str value)``.
The version field tells the two apart, so both are read and written; any other version is
rejected (the engine calls > 3 "too new").

Native document: :class:`SavFile` with :class:`SavLevel` (v3) or :class:`SavLegacyLevel`
(v1/v2) entries. Every string stays ``bytes`` (saves hold whatever scripts stored, not always
UTF-8; ``retromesh dump --json`` shows non-UTF-8 strings as base64). Bytes after the last level
are kept as ``trailing``. Editing path: ``retromesh dump --json x.sav > x.json``, edit,
``retromesh build x.json -o x.sav``.

Where we differ from the spec text: the wiki template describes the obsolete v1/v2 layout (one
name per level, string pairs only); the engine's version 3 has three names per level, and
array and int32 values after the string pairs.
"""
from __future__ import annotations

from dataclasses import field

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error
from ...records import record

__all__ = ["SavFile", "SavLevel", "SavLegacyLevel", "SavPair", "SavArray", "SavInt",
           "read", "write", "MARKER", "sniff", "info", "check"]

MARKER = b"Overgrowth Save"
CURRENT_VERSION = 3


@record
class SavPair:
    key: bytes
    value: bytes


@record
class SavArray:
    key: bytes
    values: list[bytes] = field(default_factory=list)


@record
class SavInt:
    key: bytes
    value: int


@record
class SavLevel:
    campaign_id: bytes = b""
    save_category: bytes = b""
    save_name: bytes = b""
    md5: bytes = b"\0" * 16
    values: list[SavPair] = field(default_factory=list)
    arrays: list[SavArray] = field(default_factory=list)
    ints: list[SavInt] = field(default_factory=list)


@record
class SavLegacyLevel:
    name: bytes = b""
    md5: bytes = b"\0" * 16
    values: list[SavPair] = field(default_factory=list)


@record
class SavFile:
    version: int = CURRENT_VERSION
    levels: list = field(default_factory=list)     # SavLevel (v3) or SavLegacyLevel (v1, v2)
    trailing: bytes = b""


def _str(r: Reader, what: str) -> bytes:
    return r.pstring("H", what)


def _pairs(r: Reader) -> list[SavPair]:
    n = r.count("num_values", 4, "H")
    out = []
    for i in range(n):
        with r.at(f"values[{i}]"):
            out.append(SavPair(_str(r, "key"), _str(r, "value")))
    return out


def read(r: Reader) -> SavFile:
    mark = r.raw(len(MARKER), "marker")
    if mark != MARKER:
        raise r.fail(f"the marker {MARKER!r}", mark, offset=0, field="marker")
    version = r.u16("version")
    if version not in (1, 2, 3):
        raise r.fail("a save version 1, 2 or 3 (3 is the engine's)", version, offset=15,
                     field="version")
    doc = SavFile(version)
    n = r.count("level_count", 18 if version < 3 else 28, "H")
    for i in range(n):
        with r.at(f"levels[{i}]"):
            if version < 3:
                name = _str(r, "name")
                md5 = r.raw(16, "md5")
                doc.levels.append(SavLegacyLevel(name, md5, _pairs(r)))
                continue
            lv = SavLevel(_str(r, "campaign_id"), _str(r, "save_category"), _str(r, "save_name"),
                          r.raw(16, "md5"))
            lv.values = _pairs(r)
            k = r.count("num_arrays", 4, "H")
            for j in range(k):
                with r.at(f"arrays[{j}]"):
                    key = _str(r, "key")
                    m = r.count("num_values", 2, "H")
                    lv.arrays.append(SavArray(key, [_str(r, f"values[{x}]") for x in range(m)]))
            k = r.count("num_ints", 6, "H")
            for j in range(k):
                with r.at(f"ints[{j}]"):
                    lv.ints.append(SavInt(_str(r, "key"), r.i32("value")))
            doc.levels.append(lv)
    doc.trailing = r.rest()
    return doc


def _w_str(w: Writer, b: bytes, what: str) -> None:
    b = bytes(b)
    if len(b) > 0xFFFF:
        raise DocumentError(f"{what}: save strings hold at most 65535 bytes, got {len(b)}")
    w.pstring(b, "H")


def _w_count(w: Writer, n: int, what: str) -> None:
    if n > 0xFFFF:
        raise DocumentError(f"{what}: at most 65535 entries, got {n}")
    w.u16(n)


def write(doc: SavFile) -> bytes:
    v = int(doc.version)
    if v not in (1, 2, 3):
        raise DocumentError(f"save version must be 1, 2 or 3, got {v}")
    w = Writer("<")
    w.raw(MARKER)
    w.u16(v)
    _w_count(w, len(doc.levels), "levels")
    want = SavLevel if v == 3 else SavLegacyLevel
    for i, lv in enumerate(doc.levels):
        if not isinstance(lv, want):
            raise DocumentError(f"levels[{i}] must be a {want.__name__} in a version {v} save")
        if len(bytes(lv.md5)) != 16:
            raise DocumentError(f"levels[{i}].md5 must be 16 bytes")
        if isinstance(lv, SavLegacyLevel):      # (v < 3: the level type was checked above)
            _w_str(w, lv.name, "name")
            w.raw(bytes(lv.md5))
        else:
            _w_str(w, lv.campaign_id, "campaign_id")
            _w_str(w, lv.save_category, "save_category")
            _w_str(w, lv.save_name, "save_name")
            w.raw(bytes(lv.md5))
        _w_count(w, len(lv.values), "values")
        for p in lv.values:
            _w_str(w, p.key, "key")
            _w_str(w, p.value, "value")
        if isinstance(lv, SavLevel):            # (v == 3)
            _w_count(w, len(lv.arrays), "arrays")
            for a in lv.arrays:
                _w_str(w, a.key, "key")
                _w_count(w, len(a.values), "array values")
                for x in a.values:
                    _w_str(w, x, "array value")
            _w_count(w, len(lv.ints), "ints")
            for it in lv.ints:
                _w_str(w, it.key, "key")
                w.i32(int(it.value))
    w.raw(bytes(doc.trailing))
    return w.getvalue()


def info(doc: SavFile) -> dict:
    return {"version": doc.version, "levels": len(doc.levels),
            "values": sum(len(lv.values) for lv in doc.levels)}


def check(doc: SavFile) -> list[Finding]:
    if doc.version != CURRENT_VERSION:
        return [error("sav.version", f"save version {doc.version}: the engine reads version "
                      f"{CURRENT_VERSION} only (it refuses 1 and 2 as old, higher as too new)")]
    return []


def sniff(head: bytes) -> bool:
    return head[:15] == MARKER
