"""The span (run-length) codec of Westwood ``.vxl`` limb bodies, on numpy arrays.

A limb body is three blocks; a column is the voxels ``(x, y, 0..zsize-1)`` with column
index ``i = x + y*xsize`` (so the file lists columns in ``[y, x]`` order):

* span_start (int32 x (xsize*ysize)): offset of the column's first byte in the span data, -1 = empty column
* span_end (int32 x (xsize*ysize)): offset of the column's last byte, -1 = empty column
* span data (runs, per column): ``uint8 skip`` (empty voxels before the run), ``uint8 count``,
  ``count x (uint8 colour, uint8 normal)``, ``uint8 count`` again; repeated until z reaches zsize

A run with ``count = 0`` is a trailing skip (vengi and the Westwood tools write one when
the column's last voxel is below the top). Presence comes from the spans: colour 0 is a voxel.

Checks (:func:`scan`; each raises :class:`SpanError` with the column and the offset):
offsets inside the data, every run inside ``start..end`` of its column, z never beyond
``zsize``, and no run with ``skip = count = 0`` (it would never advance; no writer makes
one). Not checked, because readers ignore them and the bytes are kept verbatim anyway: the
repeated count byte, and whether ``end`` is exactly the column's last byte (it is in every
corpus file). The reader runs :func:`scan` only (no grid is built); :func:`decode` builds
the grid when it is asked for.

How the decoder works (no Python loop per voxel, per run or per column):

* :func:`scan` walks every column at once, one *run index* per step: the header of run k of
  every unfinished column is gathered in one go (``buf[p]``, ``buf[p + 1]``), the next header
  is at ``p + 3 + 2*count``, finished columns (z reached zsize) drop out. A column has at most
  ``zsize`` runs (each advances z), so the loop runs at most 255 times, and far fewer on
  real models (a column has few runs). Every check is one combined mask per step;
  only a failing step looks for which check failed first (same message as a check-by-check
  walk). ``buf`` is read with ``take(mode="clip")``: a header one byte past the column's end
  is refused by the same ``tail > end`` test without reading past the data. The memory used
  is a few integers per run, and a run takes at least 3 bytes of the data.
* :func:`decode` (data listing the runs in grid order without sharing bytes, as every
  writer does): a range mask marks the voxel bytes of the data, another the filled cells of
  the ``[y, x, z]`` grid; one masked copy of ``uint16`` (colour, normal) pairs, then one
  transpose to ``[x, y, z]``. Other layouts (columns out of order, shared bytes) take one
  index per voxel.
* The full decode is about ten numpy passes over the grid and the data (range masks, the
  masked copy, the transposes); going past that needs a compiled loop (one pass), which is
  not done: numpy only, by choice. ``buf.take(p, mode="clip")`` is used rather than
  ``buf[p]``, which is slower. Speeds: ``benchmarks/bench_native.py`` and docs/performance.md.
* :func:`encode` is the mirror: runs from the edges of the mask, headers written with
  fancy indexing, the voxel pairs with one masked copy into a range mask of the output.

The encoder writes the canonical form every corpus file uses (checked on all 39 files of the
corpus): maximal runs, a ``(skip, 0, 0)`` run when the column's last voxel is below the top,
columns stored in column-index order without gaps, empty columns as -1.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Runs", "SpanError", "decode", "encode", "scan"]


class SpanError(ValueError):
    """A column's span data is inconsistent; ``offset`` is relative to the span data block."""

    def __init__(self, message: str, column: int, offset: int, got: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column
        self.offset = offset
        self.got = got


class Runs(NamedTuple):
    """Every run of a limb (trailing skips included), in walk order: step by step, columns
    in column-index order within a step."""
    col: np.ndarray       # column index
    head: np.ndarray      # offset of the run's skip byte in the span data
    z: np.ndarray         # first voxel of the run (after its skip)
    # (a field named like tuple.count, which it shadows on purpose)
    count: np.ndarray     # type: ignore[assignment]  # voxels in the run (0 for a trailing skip)


def _first_failure(buf: np.ndarray, cols: np.ndarray, p: np.ndarray, lim: np.ndarray,
                   z: np.ndarray, zs: int) -> SpanError:
    """The error of a failing step, checks in the order a plain walk makes them."""
    over = np.flatnonzero(p + 1 > lim)
    if len(over):
        i = int(over[0])
        return SpanError("a run header (skip, count) inside the column", int(cols[i]),
                         int(p[i]), f"the column ends at byte {int(lim[i])}")
    skip = buf[p].astype(np.int64)
    cnt = buf[p + 1].astype(np.int64)
    nz = z + skip + cnt
    over = np.flatnonzero(nz > zs)
    if len(over):
        i = int(over[0])
        return SpanError(f"runs that stay within zsize {zs}", int(cols[i]), int(p[i]),
                         f"z {int(nz[i])}")
    stuck = np.flatnonzero(skip + cnt == 0)
    if len(stuck):
        i = int(stuck[0])
        return SpanError("a run that skips or fills at least one voxel", int(cols[i]),
                         int(p[i]), "skip 0, count 0")
    i = int(np.flatnonzero(p + 2 + 2 * cnt > lim)[0])
    return SpanError("the run's voxels and repeated count inside the column", int(cols[i]),
                     int(p[i]), f"the column ends at byte {int(lim[i])}")


def scan(start: np.ndarray, end: np.ndarray, data: bytes | np.ndarray,
         size: tuple[int, int, int], keep: bool = True) -> Runs:
    """Check a limb body and list its runs (``keep=False``: check only, the runs come back
    empty); raises :class:`SpanError`."""
    xs, ys, zs = size
    n = xs * ys
    start = np.asarray(start).reshape(-1)
    end = np.asarray(end).reshape(-1)
    if len(start) != n or len(end) != n:
        raise SpanError(f"{n} span offsets", 0, 0, f"{len(start)} starts, {len(end)} ends")
    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data
    size_data = len(buf)
    cols = np.flatnonzero(start != -1)
    # int32 offsets when they fit (halves the work of every step)
    itype = np.int32 if size_data < 2**31 - 1024 else np.int64
    p = start[cols].astype(np.int64)
    bad = np.flatnonzero((p < 0) | (p >= size_data))
    if len(bad):
        c = int(cols[bad[0]])
        raise SpanError(f"a span start of -1 or within the {size_data} bytes of span data", c,
                        0, int(start[c]))
    lim = end[cols].astype(np.int64)
    bad = np.flatnonzero((lim < p) | (lim >= size_data))
    if len(bad):
        c = int(cols[bad[0]])
        raise SpanError(f"a span end between the span start {int(start[c])} and the end of "
                        f"the {size_data} bytes of span data", c, int(start[c]), int(end[c]))
    empty = np.zeros(0, itype)
    if zs == 0:
        if len(cols):
            raise SpanError("no spans in a limb of zsize 0", int(cols[0]), int(start[cols[0]]))
        return Runs(empty, empty, empty, empty)
    cols = cols.astype(itype)
    p = p.astype(itype)
    lim = lim.astype(itype)
    z: np.ndarray = np.zeros(len(cols), itype)
    # per step: run headers, z before the skip, owner columns, skips, counts (kept as they
    # are gathered: gathering them again from the data afterwards costs as much as the walk)
    steps: list[tuple[np.ndarray, ...]] = []
    while len(cols):
        skip = buf.take(p, mode="clip")     # take(clip) is twice as fast as buf[p] here
        cnt: np.ndarray = buf.take(p + 1, mode="clip").astype(itype)
        nz = z + skip
        nz += cnt
        tail = p + cnt
        tail += cnt
        tail += 2
        # tail > lim also catches a header past the column (tail >= p + 2)
        bad = tail > lim
        bad |= nz > zs
        bad |= nz == z
        if bad.any():
            raise _first_failure(buf, cols.astype(np.int64), p.astype(np.int64),
                                 lim.astype(np.int64), z.astype(np.int64), zs)
        if keep:
            steps.append((cols, p, z, skip, cnt))
        p = tail + 1
        z = nz
        going = z < zs
        if not going.all():
            cols, p, z, lim = cols[going], p[going], z[going], lim[going]
    if not steps:
        return Runs(empty, empty, empty, empty)
    col, head, zbefore, skip, cnt = (np.concatenate(a) for a in zip(*steps))
    return Runs(col, head, zbefore + skip, cnt)


def decode(start: np.ndarray, end: np.ndarray, data: bytes | np.ndarray,
           size: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(colour, normal, mask)`` ``[x, y, z]`` arrays of a limb body (checked by
    :func:`scan`; raises :class:`SpanError`)."""
    xs, ys, zs = size
    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data
    runs = scan(start, end, buf, size)
    filled = runs.count > 0
    cnt = runs.count[filled].astype(np.int64)
    src = runs.head[filled].astype(np.int64) + 2
    dst = runs.col[filled].astype(np.int64) * zs + runs.z[filled]   # in the [y, x, z] grid
    n = xs * ys * zs
    if not len(cnt):
        return (np.zeros(size, np.uint8), np.zeros(size, np.uint8), np.zeros(size, bool))
    order = np.argsort(dst, kind="stable")
    src, dst, cnt = src[order], dst[order], cnt[order]
    if np.all(src[1:] >= src[:-1] + 2 * cnt[:-1]):
        # the data lists the runs in grid order and shares none (what every writer does)
        cells = _ranges_mask(n, dst, cnt)
        pairs = np.zeros(n, np.uint16)                      # (colour, normal) byte pairs
        pairs[cells] = buf[_ranges_mask(len(buf), src, 2 * cnt)].view(np.uint16)
        yxz = pairs.view(np.uint8).reshape(ys, xs, zs, 2)
        colour = np.empty(size, np.uint8)
        normal = np.empty(size, np.uint8)
        mask = np.empty(size, bool)
        # assigning a transposed view into a new array beats ascontiguousarray here
        colour[...] = yxz[..., 0].transpose(1, 0, 2)
        normal[...] = yxz[..., 1].transpose(1, 0, 2)
        mask[...] = cells.reshape(ys, xs, zs).transpose(1, 0, 2)
        return colour, normal, mask
    # general case (runs out of order or sharing bytes): one index per voxel
    colour = np.zeros(size, np.uint8)
    normal = np.zeros(size, np.uint8)
    mask = np.zeros(size, bool)
    total = int(cnt.sum())
    c, z = np.divmod(dst, zs)
    dst = ((c % xs) * ys + c // xs) * zs + z                # the [x, y, z] grid
    first = np.cumsum(cnt) - cnt
    j = np.arange(total) - np.repeat(first, cnt)
    flat = np.repeat(dst, cnt) + j
    at = np.repeat(src, cnt) + 2 * j
    colour.reshape(-1)[flat] = buf[at]
    normal.reshape(-1)[flat] = buf[at + 1]
    mask.reshape(-1)[flat] = True
    return colour, normal, mask


def _ranges_mask(n: int, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """A bool array of ``n`` marking ``[start, start + length)`` for sorted, disjoint ranges."""
    runs = np.empty(2 * len(start) + 1, np.int64)    # gap, range, gap, range, ..., gap
    runs[1:-1:2] = length
    runs[0] = start[0]
    runs[2:-1:2] = start[1:] - (start[:-1] + length[:-1])
    runs[-1] = n - (start[-1] + length[-1])
    value = np.zeros(len(runs), bool)
    value[1::2] = True
    return np.repeat(value, runs)


def encode(colour: np.ndarray, normal: np.ndarray,
           mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, bytes]:
    """``(span_start, span_end, span_data)`` of ``[x, y, z]`` arrays, in the canonical form."""
    xs, ys, zs = mask.shape
    n = xs * ys
    if zs > 255 or xs > 255 or ys > 255:
        raise ValueError(f"a VXL limb is at most 255 voxels on a side, got {mask.shape}")
    start = np.full(n, -1, np.int32)
    end = np.full(n, -1, np.int32)
    if n == 0 or zs == 0:
        return start, end, b""
    # columns in file order (i = x + y*xs): [y, x, z]
    m = np.ascontiguousarray(np.asarray(mask, bool).transpose(1, 0, 2)).reshape(n, zs)
    if not m.any():
        return start, end, b""
    padded = np.zeros((n, zs + 2), np.int8)
    padded[:, 1:-1] = m
    d = np.diff(padded, axis=1)
    w = zs + 1                            # flatnonzero + divmod: faster than a 2-D nonzero
    rc, rz0 = np.divmod(np.flatnonzero(d == 1), w)    # run starts (by column, then z)
    rz1 = np.flatnonzero(d == -1) % w                 # run ends (exclusive)
    cnt = rz1 - rz0
    first = np.ones(len(rc), bool)                    # a column's first run
    first[1:] = rc[1:] != rc[:-1]
    last = np.ones(len(rc), bool)                     # a column's last run
    last[:-1] = first[1:]
    prev = np.zeros_like(rz0)                         # previous run end in the column
    prev[1:] = rz1[:-1]
    prev[first] = 0
    skip = rz0 - prev
    # a trailing (skip, 0, 0) run after a column's last run when it stops below the top
    tail = last & (rz1 < zs)
    # slot of every run in the output: real runs in order, a trailing run after its column's
    # last run
    slot = np.arange(len(rc)) + np.cumsum(tail) - tail
    tslot = slot[tail] + 1
    nruns = len(rc) + int(tail.sum())
    all_skip = np.empty(nruns, np.int64)
    all_cnt = np.zeros(nruns, np.int64)
    all_skip[slot] = skip
    all_cnt[slot] = cnt
    all_skip[tslot] = zs - rz1[tail]
    sizes = 3 + 2 * all_cnt
    off = np.cumsum(sizes) - sizes
    total = int(off[-1] + sizes[-1])
    out = np.empty(total, np.uint8)
    out[off] = all_skip
    out[off + 1] = all_cnt
    out[off + 2 + 2 * all_cnt] = all_cnt
    # voxel pairs: the filled cells in [y, x, z] order are the runs' voxels in file order
    pairs = np.empty((ys, xs, zs, 2), np.uint8)
    pairs[..., 0] = np.asarray(colour, np.uint8).transpose(1, 0, 2)
    pairs[..., 1] = np.asarray(normal, np.uint8).transpose(1, 0, 2)
    voxels = pairs.view(np.uint16).reshape(-1)[m.reshape(-1)]
    out[_ranges_mask(total, off[slot] + 2, 2 * cnt)] = voxels.view(np.uint8)
    col_first = rc[first]
    start[col_first] = off[slot[first]]
    lastslot = np.where(tail, slot + 1, slot)[last]
    end[rc[last]] = off[lastslot] + sizes[lastslot] - 1
    return start, end, out.tobytes()
