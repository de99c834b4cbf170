"""`retromesh info` agrees with `convert` and says what a user asks next."""
from __future__ import annotations

import json

import numpy as np

import retromesh
from helpers.cli import run
from helpers.make_examples_import import wiggle_bytes


def _column(tmp_path):
    from retromesh.formats.lostsaga import samples
    samples.write_example(tmp_path)
    return tmp_path / "column.msh"


def test_info_agrees_with_convert_on_materials(tmp_path):
    msh = _column(tmp_path)
    report = json.loads(run("info", msh, "--json").output)[str(msh)]
    res = run("convert", msh, "-o", tmp_path / "c.glb")
    assert res.exit_code == 0, res.output
    scene = retromesh.load(tmp_path / "c.glb")
    assert report["scene"]["materials"] == len(scene.materials) >= 1
    assert report["scene"]["animations"] == len(scene.animations) >= 1
    assert report["companions"] == ["column.skl", "column_wave.ani"]


def test_info_takes_the_companion_options(tmp_path):
    msh = _column(tmp_path)
    alone = json.loads(run("info", msh, "--json", "--no-companions").output)[str(msh)]
    # a skinned .msh alone keeps its weights on placeholder bones, but has no animation
    assert alone["scene"]["animations"] == 0
    given = json.loads(run("info", msh, "--json", "--skeleton", tmp_path / "column.skl",
                           "--animation", tmp_path / "column_wave.ani").output)[str(msh)]
    assert given["scene"]["skins"] == 1 and given["scene"]["animations"] == 1
    res = run("info", msh, "--fps", "0")
    assert res.exit_code == 2


def test_info_reports_names_textures_bounds_and_animations(tmp_path):
    (tmp_path / "wiggle.b3d").write_bytes(wiggle_bytes())
    report = json.loads(run("info", tmp_path / "wiggle.b3d", "--json").output)
    scene = report[str(tmp_path / "wiggle.b3d")]["scene"]
    assert scene["mesh_names"] and scene["material_names"]
    assert scene["texture_files"] == [{"name": "wiggle.png", "status": "missing"}]
    (tmp_path / "wiggle.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    report = json.loads(run("info", tmp_path / "wiggle.b3d", "--json").output)
    scene = report[str(tmp_path / "wiggle.b3d")]["scene"]
    assert scene["texture_files"][0]["status"] in ("found", "embedded")
    lo, hi = scene["bounding_box"]["min"], scene["bounding_box"]["max"]
    assert all(a < b for a, b in zip(lo, hi))
    clip = scene["animation_clips"][0]
    assert clip["name"] and clip["seconds"] > 0 and clip["channels"] > 0
    text = run("info", tmp_path / "wiggle.b3d").output
    for word in ("textures", "wiggle.png (", "bounds", "animation"):
        assert word in text


def test_preview_tool_draws_the_model(tmp_path):
    import importlib.util

    from conftest import ROOT
    spec = importlib.util.spec_from_file_location("preview", ROOT / "tools" / "preview.py")
    preview = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(preview)
    (tmp_path / "w.b3d").write_bytes(wiggle_bytes())
    assert run("convert", tmp_path / "w.b3d", "-o", tmp_path / "w.glb").exit_code == 0
    image = preview.render(tmp_path / "w.glb", size=64, frames=2)
    assert image.size == (128, 64)
    assert len(np.unique(np.asarray(image).reshape(-1, 3), axis=0)) > 3   # drawn over the background
