"""A Luanti mob through Blender's glTF importer: the cow as its mod shows it (the records of
cow.lua put on it by retromesh.luanti.scene) comes in textured, with one action per clip and
its two texture sets as material variants."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from retromesh.luanti.scene import apply
from test_blender import SCRIPTS, extension, extension_zip  # noqa: F401  (fixtures)
from test_luanti_scene import COW, COW_SECONDS, MOBS, _cow_world, needs_corpus


@needs_corpus
def test_cow_imports_textured_with_an_action_per_clip(blender, tmp_path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = apply(_cow_world(), "mobs_cow.b3d", retromesh.load(COW))
        retromesh.save(scene, tmp_path / "cow.glb")
    got = blender.run((SCRIPTS / "gltf_stats.py").read_text(),
                      {"files": [str(tmp_path / "cow.glb")]})[str(tmp_path / "cow.glb")]
    assert "error" not in got, got["error"]
    names = " ".join(got["action_names"])
    for clip in COW_SECONDS:
        assert clip in names, (clip, got["action_names"])
    assert any(im["pixels"] for im in got["images"]), got["images"]     # textured
    if got["variants"]:         # (Blender keeps them where its glTF add-on has the property)
        assert got["variants"] == ["mobs_animal:cow", "mobs_animal:cow#2"]
    if not got["action_names"]:
        pytest.fail("no actions")


# -- through the extension: the mod's Lua run inside Blender (lupa from the zip's wheels) --------

@pytest.fixture(scope="module")
def cow_in_blender(blender, extension, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("cow") / "mobs_cow.b3d"
    res = blender.run((SCRIPTS / "luanti_import.py").read_text(),
                      {"file": str(COW), "out": str(out), "probe": True},
                      user_resources=extension["user"])
    return res


@needs_corpus
def test_cow_through_the_extension_runs_the_mods_lua(cow_in_blender):
    res = cow_in_blender
    assert res["import"] == ["FINISHED"], res
    assert Path(res["child_python"]).name.startswith("python"), res
    assert not any("Lua" in w for w in res["import_warnings"]), res["import_warnings"]
    names = " ".join(res["actions"])
    for clip in COW_SECONDS:
        assert clip in names, (clip, res["actions"])
    assert len(res["actions"]) == 1 + len(COW_SECONDS)        # the whole timeline + the clips
    if res["variants"]:
        assert res["variants"] == ["mobs_animal:cow", "mobs_animal:cow#2"]


@needs_corpus
def test_cow_through_the_extension_is_textured(cow_in_blender):
    """The mod's two cow textures came in with their pixels (the mean colour of each is the
    PNG's in the mod, the hide is not flat), and the mesh shows mobs_cow.png (the first look)."""
    from PIL import Image
    images = {im["name"]: im for im in cow_in_blender["images"]}
    assert any("mobs_cow" in n and "cow2" not in n for n in cow_in_blender["shown_images"]), \
        cow_in_blender["shown_images"]
    for want in ("mobs_cow", "mobs_cow2"):
        (im,) = [im for n, im in images.items() if n.split(".")[0] == want]
        with Image.open(MOBS / "textures" / f"{want}.png") as png:
            px = np.asarray(png.convert("RGB"), dtype=np.float64) / 255
        assert im["spread"] > 0.05, im                                # not one flat colour
        assert np.allclose(im["mean"], px.reshape(-1, 3).mean(axis=0), atol=0.005), im


@needs_corpus
def test_cow_back_from_blender_unedited(cow_in_blender):
    """Exported unedited: the clips' actions are taken off again and the timeline written back;
    the file comes back byte for byte, though its bones have a rest scale Blender drops
    (:mod:`retromesh.formats.b3d.restscale`)."""
    from helpers import native_counts
    res = cow_in_blender
    assert res["export"] == ["FINISHED"], res
    # no clip counts as edited (Blender's float noise is within clipsback's tolerances)
    assert len(res["clips_back"]) == len(COW_SECONDS) and not res["folded"], res
    assert not any("edit" in w for w in res["export_warnings"]), res["export_warnings"]
    out = Path(res["out"])
    diffs = native_counts.differences(native_counts.counts([COW], COW.stem),
                                      native_counts.counts([out], COW.stem))
    assert not diffs, "; ".join(diffs)
    assert out.read_bytes() == COW.read_bytes()


@needs_corpus
def test_cow_with_a_longer_walk_from_blender(blender, extension, tmp_path):  # noqa: F811
    """The walk's action stretched to twice its length in Blender: the export writes the walk
    on twice its frames, the later clips moved, and its report gives cow.lua's new fields."""
    out = tmp_path / "mobs_cow.b3d"
    res = blender.run((SCRIPTS / "luanti_import.py").read_text(),
                      {"file": str(COW), "out": str(out), "stretch": ["walk", 2.0]},
                      user_resources=extension["user"])
    assert res["export"] == ["FINISHED"], res
    notes = " ".join(res["export_warnings"])
    assert ("walk_start = 85, walk_end = 143, run_start = 149, run_end = 169, punch_start = 174, "
            "punch_end = 189, die_start = 194, die_end = 214") in notes, res["export_warnings"]
    frames = [c.frames for c in retromesh.read(out).chunks() if type(c).__name__ == "AnimChunk"]
    before = [c.frames for c in retromesh.read(COW).chunks() if type(c).__name__ == "AnimChunk"]
    assert frames == [before[0] + 29], (frames, before)
