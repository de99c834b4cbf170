"""LithTech .abc through the command line: convert both ways, info, check, dump/build."""
from __future__ import annotations

from typer.testing import CliRunner

import retromesh
from helpers.gltfcheck import assert_valid
from retromesh.cli import app
from retromesh.formats.lithtech import samples

runner = CliRunner()


def test_cli_round_trip(tmp_path):
    src = tmp_path / "m.abc"
    retromesh.write(samples.build_sample(12), src)
    glb = tmp_path / "m.glb"
    res = runner.invoke(app, ["convert", str(src), "-o", str(glb)])
    assert res.exit_code == 0, res.output
    info = assert_valid(glb)
    assert info["animationCount"] == 2 and info["hasSkins"]
    back = tmp_path / "back.abc"
    res = runner.invoke(app, ["convert", str(glb), "-o", str(back), "-O", "version=13"])
    assert res.exit_code == 0, res.output
    assert retromesh.read(back).version == 13
    res = runner.invoke(app, ["check", str(src), str(back)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["info", str(src)])
    assert res.exit_code == 0 and "anim bindings" in res.output


def test_cli_v6_options_and_dump_build(tmp_path):
    src = tmp_path / "v6.abc"
    retromesh.write(samples.build_sample(6), src)
    out = tmp_path / "v6.glb"
    res = runner.invoke(app, ["convert", str(src), "-o", str(out), "--set", "morph=false",
                              "--set", "flip_mat=0"])
    assert res.exit_code == 0, res.output
    info = assert_valid(out)
    assert not info["hasMorphTargets"]
    js = tmp_path / "v6.json"
    res = runner.invoke(app, ["dump", str(src)])
    assert res.exit_code == 0
    js.write_text(res.stdout)
    rebuilt = tmp_path / "rebuilt.abc"
    res = runner.invoke(app, ["build", str(js), "-o", str(rebuilt)])
    assert res.exit_code == 0, res.output
    assert rebuilt.read_bytes() == src.read_bytes()


def test_cli_bad_file_fails_cleanly(tmp_path):
    bad = tmp_path / "bad.abc"
    bad.write_bytes(samples.sample_bytes(12)[:300])
    res = runner.invoke(app, ["convert", str(bad), "-o", str(tmp_path / "bad.glb")])
    assert res.exit_code != 0
    assert "bad.abc" in res.output
