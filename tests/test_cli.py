"""The retromesh command, driven through typer's test runner."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from helpers.gltfcheck import assert_valid
from helpers.make_examples_import import crate_bytes, wiggle_bytes
from retromesh.cli import app

runner = CliRunner()


@pytest.fixture
def models(tmp_path):
    d = tmp_path / "mods" / "mobs" / "models"
    d.mkdir(parents=True)
    (d / "wiggle.b3d").write_bytes(wiggle_bytes())
    (d / "crate.b3d").write_bytes(crate_bytes())
    (d / "broken.b3d").write_bytes(wiggle_bytes()[:200])
    (d / "notes.txt").write_text("not a model")
    return tmp_path / "mods"


def test_convert_one_file(models, tmp_path):
    src = models / "mobs" / "models" / "wiggle.b3d"
    res = runner.invoke(app, ["convert", str(src), "-o", str(tmp_path / "w.glb")])
    assert res.exit_code == 0, res.output
    info = assert_valid(tmp_path / "w.glb")
    assert info["hasSkins"] and info["animationCount"] == 1


def test_convert_folder_goes_past_bad_files_and_fails_at_the_end(models, tmp_path):
    out = tmp_path / "converted"
    res = runner.invoke(app, ["convert", str(models), "-o", str(out), "-j", "2"])
    assert res.exit_code == 1
    assert "2 converted, 1 failed" in res.output
    assert "broken.b3d" in res.output
    assert (out / "mobs" / "models" / "wiggle.glb").is_file()
    assert (out / "mobs" / "models" / "crate.glb").is_file()
    assert not (out / "mobs" / "models" / "broken.glb").exists()


def test_convert_refuses_to_overwrite_an_input(models):
    src = models / "mobs" / "models" / "crate.b3d"
    res = runner.invoke(app, ["convert", str(src), "-o", str(src)])
    assert res.exit_code == 2
    assert src.read_bytes() == crate_bytes()


def test_info_counts(models):
    res = runner.invoke(app, ["info", str(models / "mobs" / "models" / "wiggle.b3d"), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    entry = next(iter(report.values()))
    for key in ("nodes", "meshes", "vertices", "triangles", "bones", "keys", "animations",
                "textures"):
        assert key in entry
    assert entry["bones"] == 4 and entry["animations"] == 1
    assert entry["scene"]["skins"] == 1


def test_dump_build_is_byte_identical(models, tmp_path):
    src = models / "mobs" / "models" / "wiggle.b3d"
    res = runner.invoke(app, ["dump", str(src)])
    assert res.exit_code == 0
    (tmp_path / "w.json").write_text(res.output)
    res = runner.invoke(app, ["build", str(tmp_path / "w.json"), "-o", str(tmp_path / "w2.b3d")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "w2.b3d").read_bytes() == src.read_bytes()


def test_edited_json_builds_an_edited_file(models, tmp_path):
    src = models / "mobs" / "models" / "crate.b3d"
    doc = json.loads(runner.invoke(app, ["dump", str(src)]).output)
    doc["children"][0]["textures"][0]["file"] = {"$b": "planks.png"}
    (tmp_path / "c.json").write_text(json.dumps(doc))
    res = runner.invoke(app, ["build", str(tmp_path / "c.json"), "-o", str(tmp_path / "c.b3d")])
    assert res.exit_code == 0, res.output
    assert b"planks.png" in (tmp_path / "c.b3d").read_bytes()


def test_check(models):
    d = models / "mobs" / "models"
    assert runner.invoke(app, ["check", str(d / "wiggle.b3d"), str(d / "crate.b3d")]).exit_code == 0
    res = runner.invoke(app, ["check", str(d / "wiggle.b3d"), str(d / "broken.b3d")])
    assert res.exit_code == 1


def test_glb_back_to_b3d(models, tmp_path):
    src = models / "mobs" / "models" / "wiggle.b3d"
    assert runner.invoke(app, ["convert", str(src), "-o", str(tmp_path / "w.glb")]).exit_code == 0
    res = runner.invoke(app, ["convert", str(tmp_path / "w.glb"), "-o", str(tmp_path / "w.b3d")])
    assert res.exit_code == 0, res.output
    assert runner.invoke(app, ["check", str(tmp_path / "w.b3d")]).exit_code == 0


def test_formats_table():
    res = runner.invoke(app, ["formats"])
    assert res.exit_code == 0
    assert "b3d" in res.output and "glb" in res.output


def test_bad_options_are_reported(models, tmp_path):
    src = models / "mobs" / "models" / "crate.b3d"
    res = runner.invoke(app, ["convert", str(src), "-o", str(tmp_path / "c.glb"),
                              "--skeleton", str(src)])
    assert res.exit_code == 2   # an option the format does not take is a usage error
    assert "skeleton" in res.output


def test_folder_outputs_do_not_collide(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "box.b3d").write_bytes(crate_bytes())
    from retromesh.formats.lugaru.samples import write_example  # box.solid
    solid = next(p for p in write_example(tmp_path / "w") if p.suffix == ".solid")
    (d / "box.solid").write_bytes(solid.read_bytes())
    res = runner.invoke(app, ["convert", str(d), "-o", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["box.b3d.glb", "box.solid.glb"]
