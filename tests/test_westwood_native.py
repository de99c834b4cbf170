"""Westwood .vxl/.hva native layer: corpus byte round trips, the span codec, every layout
branch on fixtures made by our writer, hypothesis round trips, Ace of Spades detection and
malformed input."""
from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import corpus_files, corpus_params
from helpers.malformed import (
    assert_malformed_safe,
    huge_count_variants,
    read_or_format_error,
    truncations,
)
from helpers.roundtrip import docs_equal
from retromesh import FormatError, UnknownFormatError, UnsupportedError
from retromesh.formats.westwood import hva, samples, vxl
from retromesh.formats.westwood.hva import HvaFile
from retromesh.formats.westwood.voxels import (
    RA2_NORMALS,
    TS_NORMALS,
    VoxelGrid,
    decode_spans,
    encode_spans,
    normal_table,
)
from retromesh.formats.westwood.vxl import Limb, RawBody, VxlFile

# -- corpus -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", corpus_params("vxl", "*.vxl", "*.hva"))
def test_corpus_byte_round_trip(path):
    data = path.read_bytes()
    doc = retromesh.read(path)
    assert retromesh.to_bytes(doc) == data
    if path.suffix == ".vxl":
        assert doc.raw_body is None            # every corpus file has the canonical layout
        assert len(doc.limbs) >= 1


@pytest.mark.parametrize("path", corpus_params("vxl", "*.vxl"))
def test_corpus_span_encoder_reproduces_every_limb(path):
    doc = retromesh.read(path)
    for limb in doc.limbs:
        grid = limb.voxels()
        start, end, data = encode_spans(grid)
        assert np.array_equal(start, limb.span_start)
        assert np.array_equal(end, limb.span_end)
        assert data == limb.span_data


def test_normal_tables():
    assert TS_NORMALS.shape == (36, 3) and RA2_NORMALS.shape == (244, 3)
    for t in (TS_NORMALS, RA2_NORMALS):
        assert np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-5)
    assert np.all(RA2_NORMALS[240:] == RA2_NORMALS[240])     # the last four are equal
    assert normal_table(2) is TS_NORMALS and normal_table(4) is RA2_NORMALS


# -- fixtures for every branch ---------------------------------------------------------------

def test_tank_sample_round_trip_and_contents():
    doc, h = samples.tank()
    data = vxl.write(doc)
    back = retromesh.read(data, format="vxl")
    assert docs_equal(back, doc)
    assert vxl.write(back) == data
    assert [l.label for l in back.limbs] == ["HULL", "TURRET", "BARREL"]
    assert back.limbs[0].voxels() == doc.limbs[0].voxels()
    hb = hva.write(h)
    assert docs_equal(retromesh.read(hb, format="hva"), h)
    assert retromesh.read(hb, format="hva").frames == 8


def test_ts_table_and_trailing_bytes_and_garbage_names():
    doc, _ = samples.tank(normal_type=2)
    doc.limbs[0].name = b"HULL\0garbage!!!!"[:16]
    doc.trailing = b"tail"
    data = vxl.write(doc)
    back = retromesh.read(data, format="vxl")
    assert back.limbs[0].name == b"HULL\0garbage!!!!"[:16] and back.limbs[0].label == "HULL"
    assert back.trailing == b"tail" and back.limbs[0].normal_type == 2
    assert vxl.write(back) == data


def test_non_canonical_layout_is_kept_verbatim():
    doc, _ = samples.tank()
    data = bytearray(vxl.write(doc))
    # put 4 pad bytes between the barrel's span tables and its span data (the tailer's
    # span_data_off moves by 4): not representable canonically -> raw_body
    n = len(doc.limbs)
    body_size = struct.unpack_from("<I", data, 28)[0]
    tail = 802 + 28 * n + body_size
    t2 = tail + 92 * 2
    do = struct.unpack_from("<I", data, t2 + 8)[0]
    body_start = 802 + 28 * n
    block = bytes(data[body_start + do:body_start + body_size])
    new_body = bytes(data[body_start:body_start + do]) + b"\xAA\xBB\xCC\xDD" + block
    struct.pack_into("<I", data, t2 + 8, do + 4)
    struct.pack_into("<I", data, 28, len(new_body))
    out = bytes(data[:body_start]) + new_body + bytes(data[body_start + body_size:])
    back = retromesh.read(out, format="vxl")
    assert back.raw_body is not None and isinstance(back.raw_body, RawBody)
    assert vxl.write(back) == out
    assert back.limbs[2].voxels() == doc.limbs[2].voxels()


def test_empty_limb_and_empty_columns():
    grid = VoxelGrid.empty((3, 2, 4))
    grid.mask[1, 1, 3] = True
    grid.colour[1, 1, 3] = 7
    limb = Limb.from_grid(grid, "ONE")
    assert (limb.span_start == -1).sum() == 5
    empty = Limb.from_grid(VoxelGrid.empty((2, 2, 2)), "NONE")
    doc = VxlFile(limbs=[limb, empty])
    back = retromesh.read(vxl.write(doc), format="vxl")
    assert back.limbs[0].voxels() == grid
    assert back.limbs[1].voxels().count == 0
    with pytest.warns(retromesh.LossWarning, match="palette"):
        assert retromesh.load(vxl.write(doc), format="vxl").counts()["meshes"] == 1


def test_vengi_style_trailing_zero_count_runs():
    grid = VoxelGrid.empty((1, 1, 10))
    grid.mask[0, 0, [2, 3, 6]] = True
    start, end, data = encode_spans(grid)
    # skip 2, count 2, ..., 2 | skip 2, count 1, ..., 1 | skip 3, count 0, 0
    assert data == bytes([2, 2, 0, 0, 0, 0, 2, 2, 1, 0, 0, 1, 3, 0, 0])
    assert end[0] == len(data) - 1
    assert decode_spans(start, end, data, (1, 1, 10)) == grid


def test_hva_zero_sections_and_trailing():
    h = HvaFile(name=b"x".ljust(16, b"\0"), section_names=[],
                matrices=np.zeros((5, 0, 3, 4), np.float32), trailing=b"!!")
    data = hva.write(h)
    back = retromesh.read(data, format="hva")
    assert back.frames == 5 and back.trailing == b"!!"
    assert hva.write(back) == data


def test_info_and_check():
    doc, _ = samples.tank()
    fmt = retromesh.registry.get("vxl")
    info = fmt.info(doc)
    assert info["limbs"] == 3 and info["voxels"] > 0 and info["normal tables"] == "RA2"
    assert fmt.check(doc) == []
    doc.limbs[1].normal_type = 3
    assert any("normal table id 3" in p.message for p in fmt.check(doc))


# -- Ace of Spades ---------------------------------------------------------------------------

def _aos_map() -> bytes:
    # one Voxlap column: N=0 (last span), S=60, E=63, A=0, then 4 colours (BGRA)
    col = bytes([0, 60, 63, 0]) + b"\x40\x80\xc0\x7f" * 4
    return col * 64


def test_ace_of_spades_map_is_recognised_and_refused():
    data = _aos_map()
    assert retromesh.detect(_named(data)).name == "aos-vxl"
    with pytest.raises(UnsupportedError, match="Ace of Spades"):
        retromesh.read(_named(data))


def _named(data: bytes):
    import io
    f = io.BytesIO(data)
    f.name = "map.vxl"
    return f


def test_garbage_vxl_is_unknown():
    with pytest.raises(UnknownFormatError):
        retromesh.read(_named(b"\xff" * 64))


# -- hypothesis -------------------------------------------------------------------------------

@st.composite
def grids(draw, max_side=6):
    size = tuple(draw(st.integers(0, max_side)) for _ in range(3))
    n = int(np.prod(size))
    mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool).reshape(size)
    colour = np.array(draw(st.lists(st.integers(0, 255), min_size=n, max_size=n)),
                      np.uint8).reshape(size)
    normal = np.array(draw(st.lists(st.integers(0, 255), min_size=n, max_size=n)),
                      np.uint8).reshape(size)
    return VoxelGrid(np.where(mask, colour, 0).astype(np.uint8),
                     np.where(mask, normal, 0).astype(np.uint8), mask)


f32 = st.floats(-1e4, 1e4, allow_nan=False, width=32)


@st.composite
def vxl_docs(draw):
    limbs = []
    for i in range(draw(st.integers(0, 3))):
        g = draw(grids())
        limb = Limb.from_grid(g, draw(st.binary(min_size=16, max_size=16)), index=i,
                              unknown2=draw(st.sampled_from([0, 2])),
                              normal_type=draw(st.sampled_from([2, 4])))
        limb.name = draw(st.binary(min_size=16, max_size=16))
        limb.scale = float(np.float32(draw(f32)))
        limb.transform = np.array(draw(st.lists(f32, min_size=12, max_size=12)),
                                  np.float32).reshape(3, 4)
        limb.bounds_min = np.array(draw(st.lists(f32, min_size=3, max_size=3)), np.float32)
        limb.bounds_max = np.array(draw(st.lists(f32, min_size=3, max_size=3)), np.float32)
        limbs.append(limb)
    pal = np.frombuffer(draw(st.binary(min_size=768, max_size=768)), np.uint8).reshape(256, 3)
    return VxlFile(palette=pal.copy(), limbs=limbs, remap_start=draw(st.integers(0, 255)),
                   remap_end=draw(st.integers(0, 255)), trailing=draw(st.binary(max_size=8)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grids(max_side=9))
def test_hypothesis_span_codec(grid):
    start, end, data = encode_spans(grid)
    assert decode_spans(start, end, data, grid.size) == grid


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vxl_docs())
def test_hypothesis_vxl_round_trip(doc):
    data = vxl.write(doc)
    back = retromesh.read(data, format="vxl")
    assert docs_equal(back, doc)
    assert vxl.write(back) == data


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 4), st.lists(st.binary(min_size=16, max_size=16), max_size=4),
       st.binary(max_size=6), st.data())
def test_hypothesis_hva_round_trip(frames, names, trailing, data):
    vals = data.draw(st.lists(f32, min_size=frames * len(names) * 12,
                              max_size=frames * len(names) * 12))
    h = HvaFile(name=b"n".ljust(16, b"\0"), section_names=names,
                matrices=np.array(vals, np.float32).reshape(frames, len(names), 3, 4),
                trailing=trailing)
    raw = hva.write(h)
    back = retromesh.read(raw, format="hva")
    assert docs_equal(back, h) and hva.write(back) == raw


# -- malformed input --------------------------------------------------------------------------

def _small_fixture() -> bytes:
    g = VoxelGrid.empty((3, 3, 4))
    g.mask[:, :, :2] = True
    g.mask[1, 1, 3] = True
    g.colour[g.mask] = 20
    doc = VxlFile(palette=samples.palette(), limbs=[Limb.from_grid(g, "A"),
                                                    Limb.from_grid(g, "B", index=1)])
    return vxl.write(doc)


def test_malformed_fixture_vxl():
    assert_malformed_safe(_small_fixture(), "fixture.vxl", scene=True)


@pytest.mark.parametrize("name", ["rvts__ts1tnkbarl.vxl", "vengi__simple.vxl",
                                  "rvts__tsaxle.vxl", "rv__buoy.hva"])
def test_malformed_small_corpus_files(name):
    files = [p for p in corpus_files("vxl", name)]
    if not files:
        pytest.skip("no corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_malformed_safe(files[0].read_bytes(), name, scene=True)


@pytest.mark.slow
@pytest.mark.parametrize("path", corpus_params("vxl", "*.vxl", "*.hva"))
def test_malformed_every_corpus_file_native(path):
    """assert_malformed_safe's cuts and huge counts on every corpus file; files over 20 kB get
    a smaller sample of huge-count variants (each one decodes every limb)."""
    data = path.read_bytes()
    if len(data) <= 20000:
        assert_malformed_safe(data, path.name, scene=False)
        return
    for cut in truncations(data, limit=200):
        read_or_format_error(data[:cut], path.name)
    for _, variant in huge_count_variants(data, limit=40):
        read_or_format_error(variant, path.name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hypothesis_mutated_bytes_raise_only_format_error(data):
    raw = bytearray(_small_fixture())
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(bytes(raw), "m.vxl", scene=True)


def test_span_errors_name_the_column():
    raw = bytearray(_small_fixture())
    n = 2
    body = 802 + 28 * n
    # first column's first run: make the count overflow zsize
    struct.pack_into("B", raw, body + 8 * 9 + 1, 200)
    with pytest.raises(FormatError) as exc:
        retromesh.read(bytes(raw), format="vxl")
    assert "column[0]" in str(exc.value) and exc.value.offset is not None


def test_limbs_sharing_span_tables_are_refused():
    """A non-canonical layout may point every tailer at one pair of span tables: 120 bytes
    per extra limb would then decode into another 255^3 grid (seconds and tens of MB each).
    Each limb's tables must fit in the body on their own."""
    g = VoxelGrid.empty((40, 30, 20))
    g.mask[:, :, :5] = True
    one = vxl.write(VxlFile(palette=samples.palette(), limbs=[Limb.from_grid(g, "A")]))
    body_size = struct.unpack_from("<I", one, 28)[0]
    body = one[802 + 28:802 + 28 + body_size]
    tailer = one[802 + 28 + body_size:]
    n = 50
    heads = b"".join(b"A".ljust(16, b"\0") + struct.pack("<3I", i, 1, 0) for i in range(n))
    data = (one[:20] + struct.pack("<3I", n, n, body_size) + one[32:802] + heads + body
            + tailer * n)
    with pytest.raises(FormatError) as exc:
        retromesh.read(data, format="vxl")
    first = body_size // (8 * 40 * 30)          # the first limb whose tables no longer fit
    assert f"tailers[{first}].xsize" in str(exc.value) and "span tables" in str(exc.value)
    assert exc.value.offset == 802 + 28 * n + body_size + 92 * first + 88
