"""Westwood span codec (formats/westwood/spans.py) against a plain Python reference: the
vectorised walk, decoder and encoder give the same grids, bytes and errors (message, column,
offset) on random grids and on mutated span data."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from retromesh.formats.westwood import spans
from retromesh.formats.westwood.voxels import (
    SpanError,
    VoxelGrid,
    check_spans,
    decode_spans,
    encode_spans,
)


def reference_decode(start, end, data, size):
    """One run at a time, every column of a step before the next step, each check over all
    the step's columns before the next check (the order the vectorised walk reports)."""
    xs, ys, zs = size
    colour, normal = np.zeros(size, np.uint8), np.zeros(size, np.uint8)
    mask = np.zeros(size, bool)
    cols = [c for c in range(xs * ys) if start[c] != -1]
    for c in cols:
        if not 0 <= start[c] < len(data):
            raise SpanError("start", c, 0, int(start[c]))
    for c in cols:
        if not start[c] <= end[c] < len(data):
            raise SpanError("end", c, int(start[c]), int(end[c]))
    if zs == 0 and cols:
        raise SpanError("zsize 0", cols[0], int(start[cols[0]]))
    state = {c: (int(start[c]), 0) for c in cols}
    while state:
        for c, (p, _z) in state.items():
            if p + 1 > end[c]:
                raise SpanError("header", c, p)
        heads = {c: (data[p], data[p + 1]) for c, (p, z) in state.items()}
        for c, (p, z) in state.items():
            if z + sum(heads[c]) > zs:
                raise SpanError("zsize", c, p)
        for c, (p, _z) in state.items():
            if sum(heads[c]) == 0:
                raise SpanError("stuck", c, p)
        for c, (p, _z) in state.items():
            if p + 2 + 2 * heads[c][1] > end[c]:
                raise SpanError("voxels", c, p)
        nxt = {}
        for c, (p, z) in state.items():
            skip, cnt = heads[c]
            x, y = c % xs, c // xs
            for j in range(cnt):
                colour[x, y, z + skip + j] = data[p + 2 + 2 * j]
                normal[x, y, z + skip + j] = data[p + 3 + 2 * j]
                mask[x, y, z + skip + j] = True
            if z + skip + cnt < zs:
                nxt[c] = (p + 3 + 2 * cnt, z + skip + cnt)
        state = nxt
    return VoxelGrid(colour, normal, mask)


def reference_encode(grid):
    xs, ys, zs = grid.size
    start, end, out = np.full(xs * ys, -1, np.int32), np.full(xs * ys, -1, np.int32), bytearray()
    for c in range(xs * ys):
        x, y = c % xs, c // xs
        m = grid.mask[x, y]
        if not m.any():
            continue
        start[c] = len(out)
        z = 0
        while z < zs:
            skip = 0
            while z + skip < zs and not m[z + skip]:
                skip += 1
            cnt = 0
            while z + skip + cnt < zs and m[z + skip + cnt]:
                cnt += 1
            out += bytes([skip, cnt])
            for k in range(z + skip, z + skip + cnt):
                out += bytes([grid.colour[x, y, k], grid.normal[x, y, k]])
            out.append(cnt)
            z += skip + cnt
        end[c] = len(out) - 1
    return start, end, bytes(out)


KIND = {"a span start": "start", "a span end": "end", "no spans": "zsize 0",
        "a run header": "header", "runs that stay": "zsize", "a run that skips": "stuck",
        "the run's voxels": "voxels"}


def outcome(fn, *args):
    try:
        g = fn(*args)
    except SpanError as exc:
        kind = next((v for k, v in KIND.items() if exc.message.startswith(k)), exc.message)
        return ("error", kind, exc.column, exc.offset)
    return ("ok", g) if g is not None else ("ok",)


@st.composite
def grids(draw, most=9):
    size = tuple(draw(st.integers(0, most)) for _ in range(3))
    seed = draw(st.integers(0, 2**32 - 1))
    fill = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    rng = np.random.default_rng(seed)
    mask = rng.random(size) < fill
    return VoxelGrid(np.where(mask, rng.integers(0, 256, size), 0).astype(np.uint8),
                     np.where(mask, rng.integers(0, 256, size), 0).astype(np.uint8), mask)


@settings(max_examples=200, deadline=None)
@given(grids())
def test_encoder_matches_reference_and_decodes_back(grid):
    start, end, data = encode_spans(grid)
    rs, re_, rd = reference_encode(grid)
    assert np.array_equal(start, rs) and np.array_equal(end, re_) and data == rd
    assert decode_spans(start, end, data, grid.size) == grid
    check_spans(start, end, data, grid.size)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grids(6), st.data())
def test_mutated_spans_decode_and_fail_like_the_reference(grid, data):
    start, end, raw = encode_spans(grid)
    raw = bytearray(raw)
    start, end = start.copy(), end.copy()
    for _ in range(data.draw(st.integers(1, 4))):
        what = data.draw(st.sampled_from(["byte", "byte", "start", "end", "cut"]))
        if what == "byte" and raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        elif what in ("start", "end") and len(start):
            arr = start if what == "start" else end
            arr[data.draw(st.integers(0, len(arr) - 1))] = data.draw(
                st.integers(-3, len(raw) + 3))
        elif what == "cut" and raw:
            del raw[data.draw(st.integers(0, len(raw) - 1)):]
    raw = bytes(raw)
    want = outcome(reference_decode, start, end, raw, grid.size)
    got = outcome(decode_spans, start, end, raw, grid.size)
    assert got == want
    checked = outcome(check_spans, start, end, raw, grid.size)
    assert checked == (want if want[0] == "error" else ("ok",))


def test_header_on_the_last_byte_is_refused_without_reading_past_the_data():
    # one column whose only run header starts on the last byte of the data: the count byte
    # would be one past the end (the walk reads with take(mode="clip") and must refuse it)
    start, end = np.array([0], np.int32), np.array([0], np.int32)
    with pytest.raises(SpanError) as exc:
        check_spans(start, end, b"\x00", (1, 1, 4))
    assert exc.value.message.startswith("a run header") and exc.value.offset == 0


def test_counts_over_127_do_not_wrap():
    # 2 * count must not wrap in uint8: a full 255-voxel column
    grid = VoxelGrid(np.arange(255, dtype=np.uint8).reshape(1, 1, 255),
                     np.full((1, 1, 255), 7, np.uint8), np.ones((1, 1, 255), bool))
    start, end, data = encode_spans(grid)
    assert len(data) == 3 + 2 * 255
    assert decode_spans(start, end, data, grid.size) == grid
    # the same column claiming one byte less than it needs
    with pytest.raises(SpanError):
        check_spans(start, end - 1, data, grid.size)


def test_runs_list_every_run_with_its_column_and_z():
    mask = np.zeros((2, 1, 6), bool)
    mask[0, 0, [1, 2, 4]] = True
    mask[1, 0, 5] = True
    grid = VoxelGrid(mask.astype(np.uint8), mask.astype(np.uint8), mask)
    start, end, data = encode_spans(grid)
    runs = spans.scan(start, end, data, grid.size)
    got = sorted(zip(runs.col.tolist(), runs.z.tolist(), runs.count.tolist()))
    # column 0: run at z 1 (2 voxels), run at z 4 (1), trailing skip to 6; column 1: z 5 (1)
    assert got == [(0, 1, 2), (0, 4, 1), (0, 6, 0), (1, 5, 1)]


def test_reading_checks_spans_without_decoding_the_grid(monkeypatch):
    """The reader walks the spans (every check) but builds no grid: decoding the worst-case
    255^3 limb costs several times the walk; ``Limb.voxels()`` decodes when asked."""
    import retromesh
    from retromesh.formats.westwood import samples, vxl
    from retromesh.formats.westwood.vxl import Limb, VxlFile
    grid = VoxelGrid.empty((6, 5, 7))
    grid.mask[1:5, 1:4, 2:6] = True
    grid.colour[grid.mask] = 9
    raw = vxl.write(VxlFile(palette=samples.palette(), limbs=[Limb.from_grid(grid, "A")]))

    def no_decode(*args, **kw):
        raise AssertionError("the reader decoded a grid")
    monkeypatch.setattr(spans, "decode", no_decode)
    doc = retromesh.read(raw, format="vxl")
    assert vxl.info(doc)["voxels"] == grid.count
    monkeypatch.undo()
    assert doc.limbs[0].voxels() == grid
    bad = bytearray(raw)
    bad[802 + 28 + 8 * 30 + 1] = 200        # the first column's first run count: past zsize
    with pytest.raises(retromesh.FormatError, match="zsize"):
        retromesh.read(bytes(bad), format="vxl")
