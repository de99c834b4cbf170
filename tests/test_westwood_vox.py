"""MagicaVoxel .vox: native round trips, the vxl <-> vox converters, .vox -> glTF, CLI."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

import retromesh
from conftest import corpus_files, corpus_params
from helpers.gltfcheck import assert_valid
from helpers.malformed import read_or_format_error
from retromesh import LossWarning
from retromesh.cli import app
from retromesh.formats.westwood import convert, samples, vox, vox_scene, vxl
from retromesh.formats.westwood.scene import limb_matrices
from retromesh.formats.westwood.vox import (
    XYZI_DTYPE,
    VoxChunk,
    VoxFile,
    VoxRgba,
    VoxSize,
    VoxXyzi,
    scene_graph,
)


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        return fn(*a, **kw)


def _tank_vox() -> VoxFile:
    doc, _ = samples.tank()
    return _quiet(convert.vxl_to_vox, doc)


def test_vox_round_trip_and_structure():
    v = _tank_vox()
    data = vox.write(v)
    assert data[:4] == b"VOX " and data[8:12] == b"MAIN"
    back = retromesh.read(data, format="vox")
    assert vox.write(back) == data
    assert len(vox.models(back)) == 3
    g = scene_graph(back)
    names = [n["attrs"].get("_name") for n in g["nodes"].values() if n["type"] == "nTRN"]
    assert {"HULL", "TURRET", "BARREL"} <= set(names)
    assert [l["_name"] for l in g["layers"].values()] == ["HULL", "TURRET", "BARREL"]


def test_unknown_chunks_and_odd_sizes_are_kept():
    v = VoxFile(version=200, chunks=[
        VoxSize(2, 2, 2),
        VoxXyzi(np.array([(0, 0, 0, 5), (1, 1, 1, 9)], XYZI_DTYPE)),
        VoxChunk(b"ABCD", b"hello", [VoxChunk(b"KID1", b"x")]),
        VoxChunk(b"SIZE", b"\x01\x00\x00\x00"),          # a SIZE of the wrong length stays raw
        VoxRgba(np.arange(1024, dtype=np.uint32).astype(np.uint8).reshape(256, 4)),
    ], trailing=b"zz")
    data = vox.write(v)
    back = retromesh.read(data, format="vox")
    assert vox.write(back) == data
    assert isinstance(back.chunks[2], VoxChunk) and back.chunks[2].children[0].id == b"KID1"
    assert back.trailing == b"zz" and back.version == 200


def test_vxl_to_vox_to_vxl_keeps_voxels_palette_and_tailers():
    doc, _ = samples.tank()
    v = _quiet(convert.vxl_to_vox, doc)
    out = convert.vox_to_vxl(retromesh.read(vox.write(v), format="vox"))
    back, back_hva = out[""], out[".hva"]
    assert np.array_equal(back.palette, doc.palette)
    for a, b in zip(doc.limbs, back.limbs):
        ga, gb = a.voxels(), b.voxels()
        assert np.array_equal(ga.mask, gb.mask)
        assert np.array_equal(ga.colour[ga.mask], gb.colour[gb.mask])
        assert a.name == b.name and a.scale == b.scale
        assert np.array_equal(a.transform, b.transform)
        assert np.array_equal(a.bounds_min, b.bounds_min)
        # normals recomputed from the shape: same table, close directions
        na = a.normals_table()[ga.normal[ga.mask]]
        nb = b.normals_table()[gb.normal[gb.mask]]
        assert (na * nb).sum(1).mean() > 0.9
    assert back_hva.matrices.shape == (1, 3, 3, 4)
    # the .hva reproduces the tailer placement
    for limb, m in zip(back.limbs, back_hva.matrices[0]):
        assert np.allclose(limb_matrices(limb, m[None]), limb_matrices(limb, None), atol=1e-4)


def test_vox_to_vxl_ts_table_and_colour_zero_warning():
    doc, _ = samples.tank()
    g = doc.limbs[0].voxels()
    g.colour[g.mask] = 0
    doc.limbs[0].set_voxels(g)
    with pytest.warns(LossWarning, match="colour 0"):
        v = convert.vxl_to_vox(doc)
    out = convert.vox_to_vxl(v, game="ts")[""]
    assert all(l.normal_type == 2 for l in out.limbs)
    assert out.limbs[0].voxels().normal.max() < 36


def test_editor_made_vox_without_vxl_keys(tmp_path):
    """A plain MagicaVoxel file (no scene graph, no palette): default palette, centred limb."""
    v = VoxFile(chunks=[VoxSize(3, 4, 5),
                        VoxXyzi(np.array([(0, 0, 0, 1), (2, 3, 4, 200)], XYZI_DTYPE))])
    path = tmp_path / "plain.vox"
    path.write_bytes(vox.write(v))
    written = retromesh.convert(path, tmp_path / "plain.vxl")
    assert {p.name for p in written} == {"plain.vxl", "plain.hva"}
    out = retromesh.read(tmp_path / "plain.vxl")
    assert out.limbs[0].size == (3, 4, 5) and out.limbs[0].voxels().count == 2
    assert tuple(out.palette[1]) == (255, 255, 255)
    scene = retromesh.load(tmp_path / "plain.vxl")
    assert scene.counts()["triangles"] == 24


def test_vox_to_glb_valid(tmp_path):
    path = tmp_path / "tank.vox"
    path.write_bytes(vox.write(_tank_vox()))
    out = tmp_path / "tank.glb"
    retromesh.convert(path, out)
    info = assert_valid(out)
    assert info["materialCount"] == 2          # voxel + player_remap, as from the .vxl
    assert retromesh.load(out).counts()["meshes"] == 3


def test_cli_convert_both_ways(tmp_path):
    files = corpus_files("vxl", "rvts__ts1tnk.vxl")
    if not files:
        pytest.skip("no corpus")
    runner = CliRunner()
    r = runner.invoke(app, ["convert", str(files[0]), "-o", str(tmp_path / "t.vox")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["convert", str(tmp_path / "t.vox"), "-o", str(tmp_path / "t.vxl")])
    assert r.exit_code == 0, r.output
    a, b = retromesh.read(files[0]), retromesh.read(tmp_path / "t.vxl")
    assert a.limbs[0].voxels().count == b.limbs[0].voxels().count
    assert (tmp_path / "t.hva").exists()
    r = runner.invoke(app, ["convert", str(tmp_path / "t.vox"), "-o", str(tmp_path / "t.glb")])
    assert r.exit_code == 0, r.output
    assert_valid(tmp_path / "t.glb")


@st.composite
def vox_docs(draw):
    chunks = []
    for _ in range(draw(st.integers(0, 3))):
        size = [draw(st.integers(1, 8)) for _ in range(3)]
        n = draw(st.integers(0, 10))
        vox_ = np.zeros(n, XYZI_DTYPE)
        for f, hi in zip("xyz", size):
            vox_[f] = draw(st.lists(st.integers(0, hi - 1), min_size=n, max_size=n))
        vox_["i"] = draw(st.lists(st.integers(1, 255), min_size=n, max_size=n))
        chunks += [VoxSize(*size), VoxXyzi(vox_)]
    if draw(st.booleans()):
        chunks.append(VoxChunk(draw(st.binary(min_size=4, max_size=4)),
                               draw(st.binary(max_size=20))))
    if draw(st.booleans()):
        chunks.append(VoxRgba(np.frombuffer(draw(st.binary(min_size=1024, max_size=1024)),
                                            np.uint8).reshape(256, 4).copy()))
    return VoxFile(version=draw(st.sampled_from([150, 200])), chunks=chunks)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vox_docs())
def test_hypothesis_vox_round_trip(doc):
    data = vox.write(doc)
    back = retromesh.read(data, format="vox")
    assert vox.write(back) == data
    assert len(vox.models(back)) == len(vox.models(doc))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hypothesis_mutated_vox(data):
    raw = bytearray(vox.write(_tank_vox()))
    for _ in range(data.draw(st.integers(1, 6))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(bytes(raw), "m.vox", scene=True)


def test_scene_graph_cycles_are_refused():
    w = retromesh.binio.Writer("<")
    w.i32(0)
    vox.build_dict(w, {})
    w.i32(3)
    w.pack("3i", 0, 0, 0)                      # a group that contains itself, three times
    v = VoxFile(chunks=[VoxSize(1, 1, 1), VoxXyzi(np.array([(0, 0, 0, 1)], XYZI_DTYPE)),
                        VoxChunk(b"nGRP", w.getvalue())])
    with pytest.raises(retromesh.FormatError, match="tree"):
        retromesh.load(vox.write(v), format="vox")


@pytest.mark.parametrize("path", corpus_params("vxl", "*.vxl"))
def test_corpus_vxl_vox_vxl_is_byte_identical(path, tmp_path):
    """Unedited models come back byte for byte, with their .hva (tsjeep.hva has one section
    for two limbs and comes back with two)."""
    shutil.copy(path, tmp_path / path.name)
    if path.with_suffix(".hva").exists():
        shutil.copy(path.with_suffix(".hva"), tmp_path / path.with_suffix(".hva").name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.convert(tmp_path / path.name, tmp_path / "m.vox")
    retromesh.convert(tmp_path / "m.vox", tmp_path / "back.vxl")
    assert (tmp_path / "back.vxl").read_bytes() == path.read_bytes()
    hva_path = path.with_suffix(".hva")
    if hva_path.exists() and path.stem != "rvts__tsjeep":
        assert (tmp_path / "back.hva").read_bytes() == hva_path.read_bytes()


def test_edited_model_gets_recomputed_normals():
    doc, _ = samples.tank()
    v = _quiet(convert.vxl_to_vox, doc)
    xyzi = next(c for c in v.chunks if isinstance(c, VoxXyzi))
    xyzi.voxels = xyzi.voxels[1:]                     # "edit": remove one voxel
    out = convert.vox_to_vxl(v)[""]
    g = out.limbs[0].voxels()
    assert g.count == doc.limbs[0].voxels().count - 1
    assert out.limbs[0].normal_type == 4
    # recomputed from the shape: the top face of the hull points up (+Z in the VXL frame)
    top = out.limbs[0].normals_table()[g.normal[5, 5, 5]]
    assert top[2] > 0.7


def test_full_width_raw_limb_names_survive_the_bridge():
    doc, _ = samples.tank()
    doc.limbs[0].name = b"SIXTEEN_CHARS_XY"            # no NUL at all
    doc.limbs[1].name = b"TUR\0\x01\x02garbage\0\0\0"
    v = _quiet(convert.vxl_to_vox, doc)
    back = convert.vox_to_vxl(retromesh.read(vox.write(v), format="vox"))[""]
    assert [limb.name for limb in back.limbs[:2]] == [doc.limbs[0].name, doc.limbs[1].name]
    assert vxl.write(back) == vxl.write(doc)


@settings(max_examples=60, deadline=None)
@given(st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)),
       st.floats(0.0, 1.0), st.integers(1, 2), st.integers(0, 2**32 - 1))
def test_hypothesis_sparse_normals_match_the_dense_path(shape, density, radius, seed):
    """normal_indices takes a sparse path for few voxels in a big box: same surface voxels
    and the same outward sums as the dense box filters."""
    from retromesh.formats.westwood.voxels import outward_sums, sparse_near_sums
    mask = np.random.default_rng(seed).random(shape) < density
    if not mask.any():
        return
    cells, sums = sparse_near_sums(mask, radius)
    dense = outward_sums(mask, radius)
    pad = np.pad(mask, 1)
    inner = np.ones(shape, bool)
    for a in range(3):
        for d in (0, 2):
            sl = [slice(1, -1)] * 3
            sl[a] = slice(d, d + shape[a])
            inner &= pad[tuple(sl)]
    near = np.zeros(shape, bool)
    near[cells] = True
    assert np.array_equal(near, mask & ~inner)
    assert np.array_equal(dense[cells].astype(np.int64), sums)


def test_sparse_big_model_normals_are_quick():
    from retromesh.formats.westwood.voxels import normal_indices, normal_table
    mask = np.zeros((255, 255, 255), bool)
    mask[0, 0, 0] = mask[254, 254, 254] = mask[100, 100, 100] = True
    idx = normal_indices(mask, 4)          # the sparse path (a dense one takes seconds)
    n = normal_table(4)[idx[100, 100, 100]]
    assert np.linalg.norm(n) > 0.99 and np.count_nonzero(idx) <= 3
    # a lone voxel points along the +Z fallback of an all-empty neighbourhood sum
    assert idx[0, 0, 0] == idx[254, 254, 254]


def test_hostile_model_sizes_and_translations_raise_format_error():
    """24 bytes of SIZE make a 256^3 grid: the total is bounded (a file of 65 empty 256^3
    models is refused at once instead of meshing for seconds each); a NaN/inf ``_t`` is a
    FormatError, not NaN in the glTF."""
    import time

    from retromesh import FormatError
    doc = VoxFile(chunks=[c for _ in range(65)
                          for c in (VoxSize(256, 256, 256), VoxXyzi(np.zeros(0, XYZI_DTYPE)))])
    t0 = time.perf_counter()
    with pytest.raises(FormatError, match=r"models\[64\]\.SIZE"):
        retromesh.load(vox.write(doc), format="vox")
    assert time.perf_counter() - t0 < 60          # generous: only guards against a hang
    from retromesh.binio import Reader, Writer
    tank = _tank_vox()
    for c in tank.chunks:
        if isinstance(c, VoxChunk) and c.id == b"nTRN" and b"_t" in c.content:
            r = Reader(c.content)
            nid, attrs = r.i32("id"), vox.parse_dict(r)
            child, reserved, layer, _frames = r.unpack("4i", "nTRN")
            w = Writer("<")
            w.i32(nid)
            vox.build_dict(w, attrs)
            w.pack("4i", child, reserved, layer, 1)
            vox.build_dict(w, {"_t": "nan 0 0"})
            c.content = w.getvalue()
            break
    with pytest.raises(FormatError, match=r"_t"):
        retromesh.load(vox.write(tank), format="vox")


def test_many_instances_of_a_big_model_are_bounded():
    """One empty 256^3 model referenced by 65 nSHP nodes (60 bytes each) is refused instead
    of being meshed 65 times."""
    from retromesh import FormatError
    from retromesh.binio import Writer

    def node(cid, nid, body):
        w = Writer("<")
        w.i32(nid)
        vox.build_dict(w, {})
        body(w)
        return VoxChunk(cid, w.getvalue())

    def trn(w, child):
        w.pack("4i", child, -1, 0, 1)
        vox.build_dict(w, {})

    def shp(w):
        w.pack("2i", 1, 0)
        vox.build_dict(w, {})

    n = 65
    chunks = [VoxSize(256, 256, 256), VoxXyzi(np.zeros(0, XYZI_DTYPE)),
              node(b"nTRN", 0, lambda w: trn(w, 1)),
              node(b"nGRP", 1, lambda w: (w.i32(n), w.pack(f"{n}i", *range(2, 2 + 2 * n, 2))))]
    for i in range(n):
        chunks.append(node(b"nTRN", 2 + 2 * i, lambda w, i=i: trn(w, 3 + 2 * i)))
        chunks.append(node(b"nSHP", 3 + 2 * i, shp))
    data = vox.write(VoxFile(chunks=chunks))
    with pytest.raises(FormatError, match=r"instance 64"):
        retromesh.load(data, format="vox")
    with pytest.raises(FormatError, match=r"instance 64"):
        convert.vox_to_vxl(retromesh.read(data, format="vox"))


def test_vox_from_a_vxl_keeps_the_player_remap_flag():
    scene = vox_scene.to_scene(_tank_vox())
    remap = [p for m in scene.meshes for p in m.primitives if "player_remap" in p.extras]
    assert remap and remap[0].extras["player_remap"] == [16, 31]
    # an editor-made file has no remap range
    plain = VoxFile(chunks=[VoxSize(2, 2, 2), VoxXyzi(np.array([(0, 0, 0, 20)], XYZI_DTYPE))])
    assert not any("player_remap" in p.extras
                   for m in vox_scene.to_scene(plain).meshes for p in m.primitives)
