"""A Luanti mob through Blender's glTF importer: the cow as its mod shows it (the records of
cow.lua put on it by retromesh.luanti.scene) comes in textured, with one action per clip and
its two texture sets as material variants."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import retromesh
from retromesh.luanti.scene import apply
from test_blender import SCRIPTS
from test_luanti_scene import COW, COW_SECONDS, _cow_world, needs_corpus


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
