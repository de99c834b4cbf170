"""Westwood voxels -> Scene -> glTF: visible faces, greedy meshing, normals, placement, HVA
animation, the axis/handedness check on the corpus, validator and trimesh."""
from __future__ import annotations

import itertools
import shutil
import warnings

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import retromesh
from conftest import ROOT, corpus_files
from helpers.gltfcheck import assert_valid, assert_valid_many
from retromesh import FormatError, LossWarning
from retromesh.formats.westwood import hva, samples, vxl
from retromesh.formats.westwood.meshing import count_visible_faces, visible_quads
from retromesh.formats.westwood.scene import (
    AXES,
    load_palette,
    match_sections,
    to_scene,
)
from retromesh.formats.westwood.voxels import VoxelGrid, estimate_normals, normal_table
from retromesh.formats.westwood.vxl import Limb, VxlFile


def _quiet_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        return retromesh.load(path, **kw)


def _area(p) -> float:
    tri = p.positions[p.indices.reshape(-1, 3)].astype(np.float64)
    return float(np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]),
                                 axis=1).sum() / 2)


# -- meshing ---------------------------------------------------------------------------------

def test_only_visible_faces_and_greedy_merging():
    mask = np.zeros((5, 5, 5), bool)
    mask[1:4, 1:4, 1:4] = True
    key = np.zeros(mask.shape, np.int32)
    unit = visible_quads(mask, key, greedy=False)
    assert len(unit) == count_visible_faces(mask) == 54      # no faces between voxels
    merged = visible_quads(mask, key)
    assert len(merged) == 6
    # different keys are not merged
    key[2, :, :] = 1
    assert len(visible_quads(mask, key)) > 6


def test_quads_face_outwards():
    rng = np.random.default_rng(1)
    mask = rng.random((7, 6, 5)) < 0.5
    q = visible_quads(mask, rng.integers(0, 3, mask.shape).astype(np.int32))
    c = q.corners.astype(np.float64)
    cross = np.cross(c[:, 1] - c[:, 0], c[:, 3] - c[:, 0])
    assert np.all((cross * q.normals).sum(1) > 0)
    # the cell in front of every face is empty, the one behind is filled
    centre = c.mean(1)
    inside = np.floor(centre - 0.5 * q.normals).astype(int)
    assert mask[tuple(inside.T)].all()
    area = np.linalg.norm(cross, axis=1).sum()
    assert area == count_visible_faces(mask)


def test_sample_scene_contents():
    doc, h = samples.tank()
    scene = to_scene(doc, hva=h)
    c = scene.counts()
    assert c["nodes"] == 4 and c["meshes"] == 3 and c["animations"] == 1
    anim = scene.animations[0]
    assert all(ch.interpolation == "STEP" for ch in anim.channels)
    assert anim.duration == pytest.approx(7 / 6)
    assert to_scene(doc, hva=h, fps=10).animations[0].duration == pytest.approx(0.7)
    remap = [p for m in scene.meshes for p in m.primitives if "player_remap" in p.extras]
    assert remap and remap[0].extras["player_remap"] == [16, 31]
    assert scene.materials[remap[0].material].name == "player_remap"
    for m in scene.meshes:
        for p in m.primitives:
            assert np.allclose(np.linalg.norm(p.normals, axis=1), 1, atol=1e-4)
            assert p.colors.shape == (len(p.positions), 4)
    # greedy off: more triangles, same surface area
    unit = to_scene(doc, greedy=False)
    a = sum(_area(p) for m in scene.meshes for p in m.primitives)
    b = sum(_area(p) for m in unit.meshes for p in m.primitives)
    assert a == pytest.approx(b, rel=1e-5)
    assert unit.counts()["triangles"] > scene.counts()["triangles"]
    faces = to_scene(doc, normals="face")
    assert faces.counts()["triangles"] < scene.counts()["triangles"]


def test_normals_come_from_the_table_in_gltf_axes():
    g = VoxelGrid.empty((1, 1, 1))
    g.mask[0, 0, 0] = True
    g.normal[0, 0, 0] = 5
    doc = VxlFile(palette=samples.palette(), limbs=[Limb.from_grid(g, "ONE", normal_type=4)])
    scene = to_scene(doc)
    n = scene.meshes[0].primitives[0].normals
    assert np.allclose(n, normal_table(4)[5] @ AXES.T, atol=1e-6)
    # out-of-range indices are clamped to the last entry
    g.normal[0, 0, 0] = 250
    doc.limbs[0].set_voxels(g)
    n = to_scene(doc).meshes[0].primitives[0].normals
    assert np.allclose(n, normal_table(4)[243] @ AXES.T, atol=1e-6)


def test_placement_follows_bounds_and_tailer():
    g = VoxelGrid.empty((2, 2, 2))
    g.mask[:] = True
    limb = Limb.from_grid(g, "BOX", bounds_min=np.array([1, 2, 3], np.float32),
                          bounds_max=np.array([5, 6, 7], np.float32))   # k = 2
    limb.transform[:, 3] = (10, 0, 0)
    scene = to_scene(VxlFile(palette=samples.palette(), limbs=[limb]))
    world = scene.world_matrices()
    node = next(i for i, n in enumerate(scene.nodes) if n.mesh is not None)
    p = scene.meshes[0].primitives[0].positions
    pw = p @ world[node][:3, :3].T + world[node][:3, 3]
    # VXL frame: x 1..5 (+10 * k = 20), y 2..6, z 3..7 -> glTF (y, z, x)
    assert np.allclose(pw.min(0), [2, 3, 21]) and np.allclose(pw.max(0), [6, 7, 25])


def test_hva_matching_rules():
    names = [b"A".ljust(16, b"\0"), b"B".ljust(16, b"\0")]
    assert match_sections(names, names[::-1]) == [1, 0]                # by name
    assert match_sections(names, [b"X", b"Y"]) == [0, 1]               # by order
    assert match_sections(names, [names[1]]) == [None, 0]              # partial by name
    assert match_sections(names, [names[0], names[0]]) == [0, 1]       # duplicates: order


# -- corpus ----------------------------------------------------------------------------------

def test_axis_check_on_corpus():
    """format-facts E risk: which mapping between the normal-table vectors and the voxel grid?
    For surface voxels, compare each table normal with the outward direction implied by the
    empty neighbours, under all 48 signed axis permutations: the identity must win clearly
    for both tables (TS and RA2), i.e. the normals live in the grid's own frame."""
    files = corpus_files("vxl", "*.vxl")
    if not files:
        pytest.skip("no corpus")
    perms = [(p, s) for p in itertools.permutations(range(3))
             for s in itertools.product([1, -1], repeat=3)]
    wins = {2: [0, 0], 4: [0, 0]}
    for path in files:
        for limb in retromesh.read(path).limbs:
            g = limb.voxels()
            idx = g.normal[g.mask]
            if g.count < 20 or idx.max() == idx.min():
                continue                       # placeholder normals (vengi rgb/simple)
            est = estimate_normals(g.mask, 1)[g.mask]
            table = normal_table(limb.normal_type)
            n = table[np.minimum(idx, len(table) - 1)]
            scores = [float(((n[:, list(p)] * s) * est).sum(1).mean()) for p, s in perms]
            best = int(np.argmax(scores))
            wins[2 if limb.normal_type == 2 else 4][0 if perms[best] == ((0, 1, 2), (1, 1, 1))
                                                    else 1] += 1
    for table, (identity, other) in wins.items():
        assert identity >= 4 * other, (table, identity, other)


def test_handedness_from_left_and_right_limbs():
    """hmec.vxl names its legs: R at -Y, L at +Y, front at +X -> X forward, Y left, Z up
    (right-handed); in glTF the left legs end at +X and the front at +Z."""
    files = corpus_files("vxl", "vengi__hmec.vxl")
    if not files:
        pytest.skip("no corpus")
    scene = _quiet_load(files[0])
    world = scene.world_matrices()
    pos = {n.name: world[i][:3, 3] for i, n in enumerate(scene.nodes)}
    assert pos["FOOT L FRONT"][0] > 0 > pos["FOOT R FRONT"][0]
    assert pos["FOOT L FRONT"][2] > 0 > pos["FOOT L REAR"][2]
    assert pos["BODY"][1] > pos["FOOT L FRONT"][1]


def test_hva_found_beside_the_vxl_and_override(tmp_path):
    files = corpus_files("vxl", "vengi__hmec.vxl", "vengi__hmec.hva", "rv__lart.hva")
    if len(files) < 3:
        pytest.skip("no corpus")
    for f in files:
        shutil.copy(f, tmp_path / f.name)
    scene = _quiet_load(tmp_path / "vengi__hmec.vxl")
    assert scene.extras["hva"] == "vengi__hmec.hva"        # the name, not the local path
    assert scene.animations[0].extras["frames"] == 17
    assert scene.animations[0].duration == pytest.approx(16 / 6)
    (tmp_path / "vengi__hmec.hva").unlink()
    assert _quiet_load(tmp_path / "vengi__hmec.vxl").animations == []
    # override with another file (7 frames, 2 sections matched by order where names miss)
    scene = _quiet_load(tmp_path / "vengi__hmec.vxl", hva=tmp_path / "rv__lart.hva", fps=7)
    assert scene.animations[0].duration == pytest.approx(6 / 7)


def test_every_corpus_file_exports_valid_gltf(tmp_path):
    files = corpus_files("vxl", "*.vxl")
    if not files:
        pytest.skip("no corpus")
    outs = []
    expect = {}
    for f in files:
        scene = _quiet_load(f)
        out = tmp_path / (f.stem + ".glb")
        retromesh.save(scene, out)
        outs.append(out)
        expect[out.name] = len(scene.animations)
    infos = assert_valid_many(outs)
    for out, info in zip(outs, infos):
        assert info["animationCount"] == expect[out.name]
    assert sum(expect.values()) >= 10
    loaded = trimesh.load(outs[0])
    assert len(loaded.geometry) >= 1


def test_sample_glb_valid_and_loads(tmp_path):
    doc, h = samples.tank()
    (tmp_path / "tank.vxl").write_bytes(vxl.write(doc))
    (tmp_path / "tank.hva").write_bytes(hva.write(h))
    out = tmp_path / "tank.glb"
    retromesh.convert(tmp_path / "tank.vxl", out)
    info = assert_valid(out)
    assert info["animationCount"] == 1 and info["materialCount"] == 2
    scene = trimesh.load(out)
    assert len(scene.geometry) == 3 + 2      # hull and turret have remap primitives
    back = retromesh.load(out)
    assert back.counts()["animations"] == 1


def test_black_palette_warns_and_palette_option(tmp_path):
    doc, _ = samples.tank()
    doc.palette[:] = 0
    with pytest.warns(LossWarning, match="palette"):
        to_scene(doc)
    pal = tmp_path / "unit.pal"
    pal.write_bytes((np.arange(768) % 64).astype(np.uint8).tobytes())   # 6-bit raw palette
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        scene = to_scene(doc, palette=pal)
    assert scene.meshes[0].primitives[0].colors.max() <= 1.0


def test_write_examples(tmp_path):
    paths = samples.write_example(tmp_path)
    assert [p.name for p in paths] == ["tank.vxl", "tank.hva", "tank.vox"]
    scene = retromesh.load(tmp_path / "tank.vxl")
    assert scene.counts()["animations"] == 1
    assert retromesh.load(tmp_path / "tank.vox").counts()["meshes"] == 3


def test_recomputed_normals_agree_with_the_games():
    """vox -> vxl recomputes normals from the shape; on the corpus's surface voxels they are
    close to the stored ones (mean cosine about 0.75 over the limbs with real normals)."""
    from retromesh.formats.westwood.voxels import normal_indices
    files = corpus_files("vxl", "rvts__*.vxl", "vengi__hmec.vxl")
    if not files:
        pytest.skip("no corpus")
    cos = []
    for f in files:
        for limb in retromesh.read(f).limbs:
            g = limb.voxels()
            if g.count < 20:
                continue
            table = normal_table(limb.normal_type)
            ours = normal_indices(g.mask, limb.normal_type)
            q = visible_quads(g.mask, np.zeros(g.mask.shape, np.int32), greedy=False)
            cell = np.floor(q.corners.mean(1) - 0.5 * q.normals).astype(int)
            stored = table[np.minimum(g.normal[tuple(cell.T)], len(table) - 1)]
            cos.append(float((stored * table[ours[tuple(cell.T)]]).sum(1).mean()))
    assert np.mean(cos) > 0.6, cos


# -- properties ------------------------------------------------------------------------------


def _unit_faces(q) -> set:
    """Every unit face a set of quads covers, as (axis, sign, plane, u, v) tuples."""
    out = set()
    for c, a, s in zip(q.corners.astype(int), q.axis, q.sign):
        lo, hi = c.min(0), c.max(0)
        others = [i for i in range(3) if i != a]
        for u in range(lo[others[0]], hi[others[0]]):
            for v in range(lo[others[1]], hi[others[1]]):
                face = (int(a), int(s), int(lo[a]), u, v)
                assert face not in out, "greedy quads overlap"
                out.add(face)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays(bool, st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6))),
       st.integers(1, 3))
def test_hypothesis_greedy_covers_exactly_the_visible_faces(mask, keys):
    key = (np.arange(mask.size).reshape(mask.shape) % keys).astype(np.int32)
    unit = visible_quads(mask, key, greedy=False)
    merged = visible_quads(mask, key)
    assert len(merged) <= len(unit) == count_visible_faces(mask)
    assert _unit_faces(merged) == _unit_faces(unit)
    # a merged quad never mixes keys: the voxel behind each of its unit faces has its key
    for c, a, s, k in zip(merged.corners.astype(int), merged.axis, merged.sign, merged.key):
        lo, hi = c.min(0), c.max(0)
        sl = [slice(lo[i], hi[i]) for i in range(3)]
        sl[a] = lo[a] - 1 if s > 0 else lo[a]
        assert np.all(key[tuple(sl)] == k) and np.all(mask[tuple(sl)])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays(bool, st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5))),
       st.integers(0, 255), st.booleans())
def test_hypothesis_scene_of_random_limbs(mask, colour, greedy):
    g = VoxelGrid(np.where(mask, colour, 0).astype(np.uint8),
                  np.where(mask, colour % 36, 0).astype(np.uint8), mask)
    doc = VxlFile(palette=samples.palette(), limbs=[Limb.from_grid(g, "R", normal_type=2)])
    scene = to_scene(doc, greedy=greedy).validate()
    prims = [p for m in scene.meshes for p in m.primitives]
    assert sum(_area(p) for p in prims) == pytest.approx(count_visible_faces(mask))
    for p in prims:
        assert np.allclose(np.linalg.norm(p.normals, axis=1), 1, atol=1e-4)
        assert ("player_remap" in p.extras) == (16 <= colour <= 31)


@pytest.mark.parametrize("normals", ["table", "face"])
def test_mirrored_bounds_mirror_the_normals_too(normals):
    """bounds_max < bounds_min on x mirrors the grid: windings flip and the normals must
    still point out of the (mirrored) solid."""
    g = VoxelGrid.empty((3, 2, 2))
    g.mask[:] = True
    g.normal[:] = 0
    limb = Limb.from_grid(g, "M", bounds_min=np.array([3, 0, 0], np.float32),
                          bounds_max=np.array([0, 2, 2], np.float32))         # k = (-1, 1, 1)
    scene = to_scene(VxlFile(palette=samples.palette(), limbs=[limb]), normals=normals)
    prim = scene.meshes[0].primitives[0]
    p = prim.positions[prim.indices.reshape(-1, 3)]
    geo = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])      # counter-clockwise normal
    centre = prim.positions.mean(0)
    out = p.mean(1) - centre
    assert np.all((geo * out).sum(1) > 0)                     # windings face outwards
    if normals == "face":
        n = prim.normals[prim.indices.reshape(-1, 3)[:, 0]]
        assert np.all((n * out).sum(1) > 0)                   # and so do the normals
    else:
        # the table vector of index 0 mirrored on VXL x (glTF z)
        expect = normal_table(4)[0] * [-1, 1, 1]
        assert np.allclose(prim.normals[0], expect @ AXES.T, atol=1e-6)


def test_jasc_palette_and_bad_palette_files(tmp_path):
    doc, _ = samples.tank()
    good = tmp_path / "good.pal"
    good.write_text("JASC-PAL\n0100\n2\n255 0 0\n0 300 0\n")
    pal = load_palette(good)
    assert pal[0].tolist() == [255, 0, 0] and pal[1].tolist() == [0, 255, 0] and not pal[2:].any()
    for i, text in enumerate(["JASC-PAL\n0100\n", "JASC-PAL\n0100\n256\n1 2 3\n",
                              "JASC-PAL\n0100\nxx\n", "JASC-PAL\n0100\n-3\n"]):
        bad = tmp_path / f"bad{i}.pal"
        bad.write_text(text)
        with pytest.raises(FormatError) as exc:
            to_scene(doc, palette=bad)
        assert exc.value.file == str(bad)             # the palette is named, not the .vxl


def test_non_finite_hva_is_blamed_on_the_hva(tmp_path):
    doc, h = samples.tank(frames=3)
    h.matrices = h.matrices.copy()
    h.matrices[2, 1, 0, 3] = np.nan
    (tmp_path / "t.vxl").write_bytes(vxl.write(doc))
    (tmp_path / "t.hva").write_bytes(hva.write(h))
    with pytest.raises(FormatError) as exc:
        retromesh.load(tmp_path / "t.vxl")
    n = len(h.section_names)
    assert exc.value.file.endswith("t.hva") and exc.value.path == "matrices[2][1]"
    assert exc.value.offset == 24 + 16 * n + 48 * (2 * n + 1)
    raw = (tmp_path / "t.hva").read_bytes()
    assert np.isnan(np.frombuffer(raw, "<f4", 12, exc.value.offset)).any()


def test_vertex_colours_are_the_palette_entry_in_linear_rgb():
    """Colour index c -> palette[c] as sRGB bytes -> linear COLOR_0 (glTF), per voxel."""
    g = VoxelGrid.empty((2, 1, 1))
    g.mask[:] = True
    g.colour[0, 0, 0], g.colour[1, 0, 0] = 200, 40
    pal = np.zeros((256, 3), np.uint8)
    pal[200] = (255, 128, 0)
    pal[40] = (10, 188, 255)
    scene = to_scene(VxlFile(palette=pal, limbs=[Limb.from_grid(g, "C")]), greedy=False)
    prim = scene.meshes[0].primitives[0]

    def lin(v):
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    # glTF z is VXL x: vertices at the far ends belong to one voxel's faces only
    z = prim.positions[:, 2] - prim.positions[:, 2].min()
    assert np.allclose(prim.colors[z < 0.5, :3], [lin(255), lin(128), lin(0)], atol=1e-6)
    assert np.allclose(prim.colors[z > 1.5, :3], [lin(10), lin(188), lin(255)], atol=1e-6)
    assert np.all(prim.colors[:, 3] == 1)


def test_non_finite_tailer_names_the_limb_by_position():
    doc, _ = samples.tank()
    doc.limbs[1].transform[0, 3] = np.inf
    doc.limbs[1].index = 77                   # the header's index is not the position
    with pytest.raises(FormatError, match=r"limbs\[1\]\.transform"):
        retromesh.load(vxl.write(doc), format="vxl")


def test_palette_option_out_of_range_is_refused_not_wrapped():
    import retromesh
    with pytest.raises(retromesh.FormatError, match=r"palette\[0\]\[0\]: 300 does not fit uint8"):
        retromesh.load(ROOT / "examples" / "westwood" / "tank.vxl", palette=np.full((256, 3), 300))
