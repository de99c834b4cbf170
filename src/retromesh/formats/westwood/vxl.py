"""Westwood Tiberian Sun / Red Alert 2 voxel models (``.vxl``), and the Ace of Spades
``.vxl`` maps they must be told apart from.

Layout (little-endian; offsets in bytes)

* header (802): ``char[16] "Voxel Animation\\0"``, ``uint32 palette_count`` (1), ``uint32 limb_count``,
  ``uint32 tailer_count`` (= limb_count), ``uint32 body_size``, ``uint8 remap_start`` (16),
  ``uint8 remap_end`` (31), ``uint8 palette[256][3]``
* limb headers (28 x n): ``char name[16]`` (kept raw: garbage after the NUL), ``uint32 index``,
  ``uint32 unknown1`` (1), ``uint32 unknown2`` (0 or 2)
* bodies (body_size): per limb at the tailer's offsets (relative to the start of the body block):
  ``int32 span_start[xs*ys]``, ``int32 span_end[xs*ys]``, span data (see :mod:`.voxels`)
* tailers (92 x n): ``uint32 span_start_off, span_end_off, span_data_off``, ``float32 scale``,
  ``float32[3][4]`` transform (rows ``[R | t]``), ``float32[3] bounds_min, bounds_max``,
  ``uint8 xsize, ysize, zsize``, ``uint8 normal_type`` (2 TS, 4 RA2)
* trailing (rest): bytes after the tailers (none in the corpus; kept)

Deviations from the spec text (``westwood-vxl.txt`` 1.02) and what the corpus taught:

* The spec's tailer (``float transform[4][4]; float scale[3]``) is wrong: the real tailer is
  ``scale``, a 3x4 matrix, bounds min/max (OpenRA ``VxlReader.cs``, vengi ``VXLFormat.cpp``).
  Its "unknown, always 2" is the normal table id: 2 or 4 in the corpus.
* The header's "short 0x1f10" is two bytes: the player-colour remap range 16..31.
* The tailer offsets are relative to the start of the *body block* (802 + 28 n), not to each
  limb's body: limb 1 of ``alplane.vxl`` starts at 112348.
* All 39 corpus files store the bodies in limb order, each as start table, end table, span
  data, with no gaps; the span data of each limb runs to the next limb's start table (or to
  ``body_size``). Such a file is kept as per-limb tables + span bytes; any other layout keeps
  the whole body block verbatim in ``VxlFile.raw_body`` (with the stored offsets).
* Refused although a lenient reader could follow them: limbs whose span tables (8 bytes per
  column) do not all fit in the body block side by side, i.e. limbs pointing at shared
  tables (120 bytes per extra limb would decode into another grid of up to 255^3 cells).
* The reader checks every limb's spans (the walk of :func:`.spans.scan`: every offset and
  count against the bytes of its column) but builds no grid; ``Limb.voxels()`` decodes on
  demand. On the worst-case 255^3 limb the walk is a fraction of the decode's cost.
* Our span encoder reproduces every corpus limb byte for byte (maximal runs, trailing
  ``(skip, 0, 0)`` runs, no empty columns stored as spans).
* Limb names repeat (``alplane.vxl`` has GROUP01 twice) and ``unknown2`` is 0 or 2.
* Scale is usually 1/12 but 0.0533, 0.0733, 0.0555 and even 0.8333 occur.
* Normal indices beyond the table occur (``gmon.vxl`` beyond 243 with the RA2 table,
  ``tsdpod.vxl`` up to 255 with the TS table): kept as they are; the scene clamps them to
  the last entry and ``retromesh check`` warns.
* ``(bounds_max - bounds_min) / size`` is not 1 in most files (0.6 .. 1.07): the bounds are
  the limb's extent in model units, not a voxel count.
* Twelve files have an all-zero palette (the game's unit palette is meant).

Ace of Spades / Voxlap maps share the extension but have no magic: they start directly with
column spans. They are registered as ``aos-vxl``, whose reader only says what the file is.
"""
from __future__ import annotations

import struct
from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError, UnsupportedError
from ...findings import Finding, error, warning
from ...records import record
from .spans import scan
from .voxels import SpanError, VoxelGrid, check_spans, decode_spans, encode_spans, normal_table

__all__ = [
    "HEADER_SIZE",
    "LIMB_HEADER_SIZE",
    "MAGIC",
    "TAILER_SIZE",
    "Limb",
    "RawBody",
    "VxlFile",
    "check",
    "info",
    "read",
    "sniff",
    "write",
]

MAGIC = b"Voxel Animation\0"
HEADER_SIZE = 802
LIMB_HEADER_SIZE = 28
TAILER_SIZE = 92
_TAILER = struct.Struct("<3If12f3f3f4B")


@record
class Limb:
    """One limb (section): header, body and tailer fields."""
    name: bytes = b"\0" * 16                       # raw 16 bytes
    index: int = 0
    unknown1: int = 1
    unknown2: int = 0
    span_start: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    span_end: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    span_data: bytes = b""
    scale: float = float(np.float32(1.0 / 12.0))     # float32-exact, like a read value
    transform: np.ndarray = field(default_factory=lambda: np.eye(3, 4, dtype=np.float32))
    bounds_min: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    bounds_max: np.ndarray = field(default_factory=lambda: np.zeros(3, np.float32))
    xsize: int = 0
    ysize: int = 0
    zsize: int = 0
    normal_type: int = 4

    @property
    def label(self) -> str:
        return self.name.split(b"\0", 1)[0].decode("latin-1")

    @property
    def size(self) -> tuple[int, int, int]:
        return (self.xsize, self.ysize, self.zsize)

    def voxels(self) -> VoxelGrid:
        """The decoded grid (raises SpanError on inconsistent spans)."""
        return decode_spans(self.span_start, self.span_end, self.span_data, self.size)

    def set_voxels(self, grid: VoxelGrid) -> None:
        """Replace the body by the canonical encoding of ``grid`` (sizes follow the grid)."""
        self.xsize, self.ysize, self.zsize = grid.size
        self.span_start, self.span_end, self.span_data = encode_spans(grid)

    @classmethod
    def from_grid(cls, grid: VoxelGrid, name: bytes | str = b"Body", **fields: Any) -> Limb:
        if isinstance(name, str):
            name = name.encode("latin-1")
        # a raw 16-byte field is kept whole; anything else becomes a NUL-terminated name
        raw = name if len(name) == 16 else name[:15].ljust(16, b"\0")
        limb = cls(name=raw, **fields)
        limb.set_voxels(grid)
        if "bounds_min" not in fields and "bounds_max" not in fields:
            size = np.array(grid.size, np.float32)
            limb.bounds_min = np.array([-size[0] / 2, -size[1] / 2, 0], np.float32)
            limb.bounds_max = limb.bounds_min + size
        return limb

    def normals_table(self) -> np.ndarray:
        return normal_table(self.normal_type)


@record
class RawBody:
    """A body block whose layout is not the canonical one: kept whole, with the stored
    ``(span_start_off, span_end_off, span_data_off)`` of every limb."""
    data: bytes = b""
    offsets: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.uint32))


@record
class VxlFile:
    """A whole ``.vxl``. When ``raw_body`` is set (a file with a non-canonical body layout)
    the writer copies it verbatim and ignores the limbs' span fields: set it to None after
    editing voxels to lay the bodies out anew."""
    magic: bytes = MAGIC
    palette_count: int = 1
    remap_start: int = 16
    remap_end: int = 31
    palette: np.ndarray = field(default_factory=lambda: np.zeros((256, 3), np.uint8))
    limbs: list[Limb] = field(default_factory=list)
    raw_body: RawBody | None = None
    trailing: bytes = b""


def sniff(head: bytes) -> bool:
    return head[:16] == MAGIC


def _read_tables(r: Reader, body: bytes, body_at: int, so: int, eo: int, n: int,
                 what: str) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for name, off in (("span_start", so), ("span_end", eo)):
        if off > len(body) or n * 4 > len(body) - off:
            raise r.fail(f"{n} {name} offsets (4 bytes each) inside the {len(body)}-byte body "
                         f"block", f"offset {off}", offset=body_at + min(off, len(body)),
                         field=name)
        out.append(np.frombuffer(body, "<i4", n, off).astype(np.int32))
    return out[0], out[1]


def read(r: Reader) -> VxlFile:
    doc = VxlFile()
    doc.magic = r.fixed(16, "magic")
    if doc.magic != MAGIC:
        raise r.fail(f"the magic {MAGIC!r}", doc.magic, offset=0, field="magic")
    doc.palette_count = r.u32("palette_count")
    limb_count = r.u32("limb_count")
    tailer_count = r.u32("tailer_count")
    body_size = r.u32("body_size")
    if tailer_count != limb_count:
        raise r.fail(f"tailer_count equal to limb_count {limb_count}", tailer_count,
                     offset=24, field="tailer_count")
    doc.remap_start = r.u8("remap_start")
    doc.remap_end = r.u8("remap_end")
    doc.palette = r.records(np.dtype((np.uint8, 3)), 256, "palette").reshape(256, 3)
    # limb_count sits in the header; its limb headers and tailers come after the palette
    r.check_count(limb_count, LIMB_HEADER_SIZE + TAILER_SIZE, "limb_count")
    heads = []
    with r.at("limbs"):
        for i in range(limb_count):
            with r.at(f"[{i}]"):
                name = r.fixed(16, "name")
                idx, u1, u2 = r.unpack("3I", "limb header")
                heads.append((name, idx, u1, u2))
    body_at = r.pos
    if body_size > r.remaining - TAILER_SIZE * limb_count:
        raise r.fail(f"body_size within the {r.remaining - TAILER_SIZE * limb_count} bytes "
                     f"before the tailers", body_size, offset=28, field="body_size")
    body = r.raw(body_size, "body")
    tailers = []
    with r.at("tailers"):
        for i in range(limb_count):
            with r.at(f"[{i}]"):
                tailers.append((r.pos, _TAILER.unpack(r.raw(TAILER_SIZE, "tailer"))))
    doc.trailing = r.rest()

    offsets = np.array([t[1][:3] for t in tailers], np.uint32).reshape(-1, 3)
    # every limb needs its own start and end tables (8 bytes per column): limbs pointing at
    # shared tables would let a few bytes decode into any number of 255^3 grids
    tables = 0
    for i, (tpos, t) in enumerate(tailers):
        tables += 8 * t[22] * t[23]
        if tables > body_size:
            raise r.fail(f"the span tables of limbs 0..{i} (8 bytes per column, "
                         f"{tables} bytes in all) within the {body_size}-byte body block",
                         f"{t[22]}x{t[23]} columns", offset=tpos + 88,
                         field=f"tailers[{i}].xsize")
    # canonical: limb bodies in order, each start table, end table, span data, no gaps
    canonical = True
    for i, (_tpos, t) in enumerate(tailers):
        so, eo, do = t[:3]
        n = t[22] * t[23]
        nxt = tailers[i + 1][1][0] if i + 1 < limb_count else body_size
        if eo != so + 4 * n or do != eo + 4 * n or do > nxt or (i == 0 and so != 0):
            canonical = False
    limbs = []
    for i, ((name, idx, u1, u2), (tpos, t)) in enumerate(zip(heads, tailers)):
        with r.at(f"limbs[{i}]"):
            so, eo, do = t[:3]
            xs, ys, zs, nt = t[22:26]
            n = xs * ys
            start, end = _read_tables(r, body, body_at, so, eo, n, "span tables")
            if canonical:
                nxt = tailers[i + 1][1][0] if i + 1 < limb_count else body_size
                data = body[do:nxt]
            else:
                if do > len(body):
                    raise r.fail(f"span_data_off within the {len(body)}-byte body block", do,
                                 offset=tpos + 8, field="span_data_off")
                used = int(end.max()) + 1 if n and (end >= 0).any() else 0
                data = body[do:do + used]
            limb = Limb(name=name, index=idx, unknown1=u1, unknown2=u2, span_start=start,
                        span_end=end, span_data=data, scale=t[3],
                        transform=np.array(t[4:16], np.float32).reshape(3, 4),
                        bounds_min=np.array(t[16:19], np.float32),
                        bounds_max=np.array(t[19:22], np.float32),
                        xsize=xs, ysize=ys, zsize=zs, normal_type=nt)
            try:
                check_spans(start, end, data, limb.size)      # the walk only, no grid
            except SpanError as exc:
                raise r.fail(exc.message, exc.got, offset=body_at + do + exc.offset,
                             field=f"span_data.column[{exc.column}]") from None
            limbs.append(limb)
    doc.limbs = limbs
    if not canonical:
        doc.raw_body = RawBody(data=body, offsets=offsets)
    return doc


def _body(doc: VxlFile) -> tuple[bytes, list[tuple[int, int, int]]]:
    if doc.raw_body is not None:
        rows = np.asarray(doc.raw_body.offsets, np.int64).reshape(-1, 3)
        if len(rows) != len(doc.limbs):
            raise DocumentError(f"raw_body has {len(rows)} offset rows for {len(doc.limbs)} "
                                f"limbs")
        return bytes(doc.raw_body.data), [(int(a), int(b), int(c)) for a, b, c in rows]
    w = Writer("<")
    offs: list[tuple[int, int, int]] = []
    for i, limb in enumerate(doc.limbs):
        n = limb.xsize * limb.ysize
        st = as_dtype(limb.span_start, "<i4", f"limbs[{i}].span_start").reshape(-1)
        en = as_dtype(limb.span_end, "<i4", f"limbs[{i}].span_end").reshape(-1)
        if len(st) != n or len(en) != n:
            raise DocumentError(f"limb {i}: span tables of {len(st)}/{len(en)} entries for "
                                f"{limb.xsize}x{limb.ysize} columns")
        so = w.pos
        w.records(st)
        w.records(en)
        offs.append((so, so + 4 * n, so + 8 * n))
        w.raw(bytes(limb.span_data))
    return w.getvalue(), offs


def write(doc: VxlFile) -> bytes:
    if len(doc.magic) != 16:
        raise DocumentError("VxlFile.magic must be 16 bytes")
    palette = as_dtype(doc.palette, np.uint8, "VxlFile.palette")
    if palette.shape != (256, 3):
        raise DocumentError(f"VxlFile.palette must be (256, 3), got {palette.shape}")
    body, offs = _body(doc)
    w = Writer("<")
    w.raw(doc.magic)
    w.pack("4I", doc.palette_count, len(doc.limbs), len(doc.limbs), len(body))
    w.pack("2B", doc.remap_start, doc.remap_end)
    w.records(palette)
    for limb in doc.limbs:
        if len(limb.name) != 16:
            raise DocumentError(f"limb name {limb.name!r} must be 16 raw bytes")
        w.raw(limb.name)
        w.pack("3I", limb.index, limb.unknown1, limb.unknown2)
    w.raw(body)
    for limb, (so, eo, do) in zip(doc.limbs, offs):
        w.pack("3I", so, eo, do)
        w.records(np.asarray([limb.scale], "<f4"))
        w.records(np.asarray(limb.transform, "<f4").reshape(12))
        w.records(np.asarray(limb.bounds_min, "<f4").reshape(3))
        w.records(np.asarray(limb.bounds_max, "<f4").reshape(3))
        w.pack("4B", limb.xsize, limb.ysize, limb.zsize, limb.normal_type)
    w.raw(doc.trailing)
    return w.getvalue()


def info(doc: VxlFile) -> dict[str, Any]:
    voxels = 0
    for limb in doc.limbs:
        try:        # the runs' counts: no grid needed
            voxels += int(scan(limb.span_start, limb.span_end, limb.span_data,
                               limb.size).count.sum())
        except SpanError:
            pass
    largest = max((l.size for l in doc.limbs), default=(0, 0, 0), key=lambda s: s[0] * s[1] * s[2])
    return {
        "limbs": len(doc.limbs),
        "voxels": voxels,
        "normal tables": ",".join(sorted({"TS" if l.normal_type == 2 else "RA2" if
                                           l.normal_type == 4 else str(l.normal_type)
                                           for l in doc.limbs})),
        "remap range": f"{doc.remap_start}..{doc.remap_end}",
        "largest limb": "x".join(map(str, largest)),
    }


def check(doc: VxlFile) -> list[Finding]:
    problems: list[Finding] = []
    for i, limb in enumerate(doc.limbs):
        label = limb.label
        if limb.normal_type not in (2, 4):
            problems.append(warning("vxl.normal_type", f"limb {i} ({label!r}) normal table id "
                                    f"{limb.normal_type} (2 = TS, 4 = RA2)"))
        try:
            grid = limb.voxels()
        except SpanError as exc:
            problems.append(error("vxl.spans", f"limb {i} ({label!r}) column {exc.column}: "
                                  f"{exc.message}"))
            continue
        table = len(normal_table(limb.normal_type))
        if grid.count and int(grid.normal[grid.mask].max()) >= table:
            problems.append(warning("vxl.normal_index", f"limb {i} ({label!r}) uses normal "
                                    f"indices beyond the {table}-entry table (clamped)"))
        if limb.index != i:
            problems.append(warning("vxl.limb_index", f"limb {i} ({label!r}) has index "
                                    f"{limb.index}"))
        if not np.all(np.isfinite(np.asarray(limb.transform, np.float64))):
            problems.append(error("vxl.transform", f"limb {i} ({label!r}) has a non-finite "
                                  "transform"))
    return problems


# -- Ace of Spades / Voxlap maps --------------------------------------------------------

class AosMap:
    """Never built: the aos-vxl reader only explains what the file is."""


def sniff_aos(head: bytes) -> bool:
    """Voxlap column spans: ``N S E A`` with S <= E+1 <= 64 and N*4 covering the colours."""
    if len(head) < 8 or head[:16] == MAGIC or head[:5] == b"Voxel":
        return False
    n, s, e, _a = head[0], head[1], head[2], head[3]
    if s > 63 or e > 63 or e + 1 < s:
        return False
    colours = e - s + 1
    if n and n * 4 < 4 + 4 * colours:
        return False
    return 8 + 4 * colours <= len(head) + 4 or len(head) >= 4096


def read_aos(r: Reader) -> AosMap:
    raise UnsupportedError(
        "this .vxl is an Ace of Spades / Voxlap map (column spans, no 'Voxel Animation' "
        "header), not a Westwood voxel model; retromesh does not read Voxlap maps")
