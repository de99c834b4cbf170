"""Nothing lost: .vxl (+ .hva) -> .glb -> .vxl (+ .hva) gives the files back
(westwood/scene_extras.py), also after what Blender does to a scene, and keeps grids and modes when
a limb is edited."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from conftest import corpus_params
from helpers.gltfcheck import assert_valid_many
from retromesh import LossWarning
from retromesh.scene import Channel


def _info(doc) -> dict:
    return retromesh.registry.format_of(doc).info(doc)


@pytest.mark.parametrize("path", corpus_params("vxl", "*.vxl"))
def test_corpus_vxl_and_hva_come_back_byte_identical(path, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)        # all-black palettes
        retromesh.convert(path, tmp_path / "m.glb")
        retromesh.convert(tmp_path / "m.glb", tmp_path / "o.vxl")
    assert (tmp_path / "o.vxl").read_bytes() == path.read_bytes()
    hva = path.with_suffix(".hva")
    if hva.exists():
        assert (tmp_path / "o.hva").read_bytes() == hva.read_bytes()


def _blenderish(scene) -> None:
    """What a Blender import + export does to the data: vertices renumbered, triangle corners
    rotated, vertex colours dropped, STEP keys baked to LINEAR at 24 fps."""
    rng = np.random.default_rng(0)
    for mesh in scene.meshes:
        for p in mesh.primitives:
            n = len(p.positions)
            perm = rng.permutation(n)
            inv = np.argsort(perm)
            p.positions, p.normals = p.positions[perm], p.normals[perm]
            tri = inv[p.indices.reshape(-1, 3)]
            p.indices = np.roll(tri, 1, axis=1).reshape(-1).astype(np.uint32)
            p.colors = None
    for a in scene.animations:
        for i, c in enumerate(a.channels):
            t = np.unique(np.r_[np.arange(0, c.times[-1], 1 / 24), c.times[-1]])
            a.channels[i] = Channel(c.node, c.path, t, c.sample(t), "LINEAR")


def test_tank_through_a_blender_like_edit_free_trip(tank, tmp_path):
    glb = tmp_path / "t.glb"
    retromesh.convert(tank, glb)
    assert_valid_many([glb])
    scene = retromesh.load(glb)
    _blenderish(scene)
    retromesh.save(scene, tmp_path / "o.vxl")
    assert (tmp_path / "o.vxl").read_bytes() == tank.read_bytes()
    assert (tmp_path / "o.hva").read_bytes() == tank.with_suffix(".hva").read_bytes()


def test_edited_limb_is_voxelised_in_its_own_grid(tank, tmp_path):
    orig = retromesh.read(tank)
    scene = retromesh.load(tank)
    node = next(n for n in scene.nodes if n.mesh is not None)
    prim = scene.meshes[node.mesh].primitives[0]
    prim.indices = prim.indices[:-6 * 4]               # cut four faces away
    with pytest.warns(LossWarning, match="own grids"):
        retromesh.save(scene, tmp_path / "o.vxl")
    back = retromesh.read(tmp_path / "o.vxl")
    assert len(back.limbs) == len(orig.limbs)
    for a, b in zip(orig.limbs, back.limbs):
        assert a.size == b.size and a.normal_type == b.normal_type and a.name == b.name
        assert np.array_equal(a.bounds_min, b.bounds_min) and a.scale == b.scale
    edited = [i for i, (a, b) in enumerate(zip(orig.limbs, back.limbs))
              if a.span_data != b.span_data]
    assert len(edited) == 1                            # the other limbs are as they came
    ga, gb = orig.limbs[edited[0]].voxels(), back.limbs[edited[0]].voxels()
    assert abs(ga.count - gb.count) <= 0.2 * ga.count  # the same shape, give or take the cut
    assert np.array_equal(back.palette, orig.palette)


def test_edited_animation_makes_a_new_hva_of_the_same_frames(tank, tmp_path):
    orig_hva = retromesh.read(tank.with_suffix(".hva"))
    scene = retromesh.load(tank)
    ch = next(c for c in scene.animations[0].channels
              if c.path == "rotation" and np.ptp(c.values, axis=0).max() > 0.1)
    ch.values = np.roll(ch.values, 1, axis=0)          # the turret turns the other way round
    retromesh.save(scene, tmp_path / "o.vxl")
    hva = retromesh.read(tmp_path / "o.hva")
    assert hva.frames == orig_hva.frames and len(hva.section_names) == len(orig_hva.section_names)
    assert not np.allclose(hva.matrices, orig_hva.matrices, atol=1e-4)
    # played back it is the edited animation
    again = retromesh.load(tmp_path / "o.vxl", hva=tmp_path / "o.hva")
    ch2 = next(c for c in again.animations[0].channels if c.node == ch.node and c.path == "rotation")
    assert np.allclose(np.abs(np.sum(ch2.values * ch.values, axis=1)), 1, atol=1e-4)


def test_native_false_voxelises_afresh(tank, tmp_path):
    scene = retromesh.load(tank)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        out = retromesh.from_scene(scene, "vxl", native=False)
    sizes = [limb.size for limb in out[""].limbs]
    assert sizes != [limb.size for limb in retromesh.read(tank).limbs]   # a new grid
    assert out[".hva"].frames == 1


def test_info_figures_survive(tank, tmp_path):
    retromesh.convert(tank, tmp_path / "t.glb")
    retromesh.convert(tmp_path / "t.glb", tmp_path / "o.vxl")
    assert _info(retromesh.read(tmp_path / "o.vxl")) == _info(retromesh.read(tank))
    assert _info(retromesh.read(tmp_path / "o.hva")) == _info(retromesh.read(tank.with_suffix(".hva")))


def test_scaled_load_still_gives_the_file_back(tank, tmp_path):
    """--scale 0.01 on the way to glTF is undone on the way back (voxels have one grid)."""
    retromesh.convert(tank, tmp_path / "t.glb", scale=0.01)
    retromesh.convert(tmp_path / "t.glb", tmp_path / "o.vxl")
    assert (tmp_path / "o.vxl").read_bytes() == tank.read_bytes()
    assert (tmp_path / "o.hva").read_bytes() == tank.with_suffix(".hva").read_bytes()


def _zlib_bomb() -> str:
    import base64
    import zlib
    return base64.b64encode(zlib.compress(bytes(200 << 20), 9)).decode("ascii")


@pytest.mark.parametrize("edit", [
    lambda d: d.update(scene_palette="!!not base64"),
    lambda d: d.update(palette=7),
    lambda d: d.update(remap=[1]),
    lambda d: d.update(greedy="yes"),
    lambda d: d.update(raw_body=[_zlib_bomb(), [0, 0, 0]]),
    lambda d: d.pop("magic"),
], ids=["bad-base64", "palette-int", "remap-short", "greedy-str", "zlib-bomb", "no-magic"])
def test_broken_kept_file_record_is_not_a_kept_file(tank, tmp_path, edit):
    """The kept record comes from the glTF (any glTF): broken, it is ignored (the mesh is
    voxelised afresh), never a writer crash, and a zlib bomb is not unpacked."""
    import json

    from retromesh.formats.westwood.scene_extras import FILE_KEY
    scene = retromesh.load(tank)
    root = next(n for n in scene.nodes if FILE_KEY in n.extras)
    record = json.loads(root.extras[FILE_KEY])
    edit(record)
    root.extras[FILE_KEY] = json.dumps(record)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(scene, tmp_path / "o.vxl")
    assert retromesh.read(tmp_path / "o.vxl").limbs


def test_zlib_bomb_in_a_kept_limb_is_refused(tank):
    import json

    from retromesh.formats.westwood.scene_extras import LIMB_KEY, kept_limb
    scene = retromesh.load(tank)
    node = next(n for n in scene.nodes if LIMB_KEY in n.extras)
    record = json.loads(node.extras[LIMB_KEY])
    record["spans"] = _zlib_bomb()
    assert kept_limb(json.dumps(record)) is None
