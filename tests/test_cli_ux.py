"""A newcomer's first ten minutes — no traceback, no surprise, one error style."""
from __future__ import annotations

import json
import struct

import pytest

import retromesh
from helpers.cli import flat, run
from helpers.gltfcheck import assert_valid
from helpers.make_examples_import import crate_bytes, wiggle_bytes
from retromesh.clitools.messages import cli_hints


@pytest.fixture
def wiggle(tmp_path):
    p = tmp_path / "wiggle.b3d"
    p.write_bytes(wiggle_bytes())
    return p


def _glb_json(path) -> dict:
    data = path.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + n])


# -- crashes and wrong answers -----------------------------------------------------------------

def test_unknown_write_option_names_the_valid_ones(wiggle, tmp_path):
    res = run("convert", wiggle, "-o", tmp_path / "x.glb", "-O", "nosuchoption=1")
    assert res.exit_code == 2
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert "nosuchoption" in res.output and "embed_images" in res.output
    assert not (tmp_path / "x.glb").exists()


def test_malformed_option_values_are_usage_errors(wiggle, tmp_path):
    for args in (["-o", tmp_path / "x.b3d", "-O", "fps=abc"],
                 ["-o", tmp_path / "x.glb", "--set", "novalue"],
                 ["-o", tmp_path / "x.glb", "--set", "nosuch=1"]):
        res = run("convert", wiggle, *args)
        assert res.exit_code == 2, res.output
        assert "Traceback" not in res.output
        assert res.output.startswith("error: ")


def test_dump_of_gltf_says_it_is_not_native(wiggle, tmp_path):
    assert run("convert", wiggle, "-o", tmp_path / "w.glb").exit_code == 0
    res = run("dump", tmp_path / "w.glb")
    assert res.exit_code == 1
    assert "not a native" in res.output and "Traceback" not in res.output


def test_check_judges_our_glb_by_validity(wiggle, tmp_path):
    assert run("convert", wiggle, "-o", tmp_path / "w.glb").exit_code == 0
    res = run("check", tmp_path / "w.glb")
    assert res.exit_code == 0, res.output
    assert "round trip differs" not in res.output


@pytest.mark.parametrize("option", ["--json", "--no-json"])
def test_dump_has_no_json_option(wiggle, option):
    # JSON is dump's only output: the hidden --json of early versions is gone
    res = run("dump", wiggle, option)
    assert res.exit_code == 2
    assert "$type" not in res.output


def test_build_refuses_an_incomplete_document(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"$type": "b3d:B3dFile"}))
    res = run("build", tmp_path / "c.json", "-o", tmp_path / "c.b3d")
    assert res.exit_code == 1
    assert "missing" in res.output and "$.children" in res.output
    assert not (tmp_path / "c.b3d").exists()


def test_build_refuses_values_of_the_wrong_type(wiggle, tmp_path):
    doc = json.loads(run("dump", wiggle).output)
    doc["version"] = "one"
    (tmp_path / "c.json").write_text(json.dumps(doc))
    res = run("build", tmp_path / "c.json", "-o", tmp_path / "c.b3d")
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert not (tmp_path / "c.b3d").exists()


@pytest.mark.parametrize("fps", ["-5", "0", "nan", "inf"])
def test_fps_is_one_rule_for_every_format(wiggle, tank, tmp_path, fps):
    outputs = []
    for src in (wiggle, tank):
        res = run("convert", src, "-o", tmp_path / "x.glb", f"--fps={fps}")
        assert res.exit_code == 2, res.output
        outputs.append(res.output)
        assert "greater than 0" in res.output
        assert "Channel times" not in res.output
    assert outputs[0] == outputs[1]     # the same words whatever the format
    res = run("convert", wiggle, "-o", tmp_path / "x.b3d", "-O", f"fps={fps}")
    assert res.exit_code == 2 and "greater than 0" in res.output


def test_folder_into_a_file_name_is_refused(tmp_path, wiggle):
    res = run("convert", tmp_path, "-o", tmp_path / "out.glb")
    assert res.exit_code == 2
    assert "folder" in res.output
    assert not (tmp_path / "out.glb").exists()


def test_another_models_hva_warns(tank, tmp_path):
    from retromesh.formats.westwood import hva
    h = retromesh.read(tank.with_suffix(".hva"))
    h.section_names = [b"OTHER%d".ljust(16, b"\0") % i for i in range(len(h.section_names))]
    other = tmp_path / "other.hva"
    other.write_bytes(hva.write(h))
    res = run("convert", tank, "--hva", other, "-o", tmp_path / "t.glb")
    assert res.exit_code == 0, res.output
    assert "warning:" in res.output and "other.hva" in res.output
    # the tank's own HVA converts without that warning
    res = run("convert", tank, "-o", tmp_path / "t.glb")
    assert "another model" not in res.output


# -- messages ----------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["convert", "info", "check", "dump"])
def test_missing_input_is_one_style_everywhere(command, tmp_path):
    res = run(command, tmp_path / "missing.b3d")
    assert res.exit_code == 2
    assert flat(res) == f"error: {tmp_path / 'missing.b3d'}: no such file or folder"


@pytest.mark.parametrize("command", ["info", "check"])
def test_folders_given_to_info_and_check_are_walked(command, tmp_path, wiggle):
    res = run(command, tmp_path)
    assert res.exit_code == 0, res.output
    assert "Errno" not in res.output and "wiggle.b3d" in res.output


def test_path_is_printed_once(tmp_path):
    (tmp_path / "empty.b3d").write_bytes(b"")
    for command in (["convert", tmp_path / "empty.b3d", "-o", tmp_path / "e.glb"],
                    ["info", tmp_path / "empty.b3d"], ["dump", tmp_path / "empty.b3d"]):
        res = run(*command)
        assert res.exit_code == 1
        assert res.output.count("empty.b3d") == 1, res.output
        assert res.output.startswith("error: ")


def test_read_only_target_names_the_real_file(wiggle, tmp_path, monkeypatch):
    import retromesh.fileio as fileio

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", src)
    monkeypatch.setattr(fileio.os, "replace", refuse)
    res = run("convert", wiggle, "-o", tmp_path / "c.glb")
    assert res.exit_code == 1
    assert f"{tmp_path / 'c.glb'}: Permission denied" in flat(res)
    assert ".tmp" not in res.output
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_truncated_file_says_truncated_first(tmp_path):
    (tmp_path / "t.b3d").write_bytes(wiggle_bytes()[:200])
    res = run("convert", tmp_path / "t.b3d", "-o", tmp_path / "t.glb")
    assert res.exit_code == 1
    assert f"{tmp_path / 't.b3d'}: truncated: " in flat(res)
    assert "bytes left" in flat(res)       # the detail is kept after the plain word


def test_hints_name_cli_flags(tmp_path):
    from retromesh.formats.lostsaga import samples
    samples.write_example(tmp_path)
    (tmp_path / "column.skl").unlink()
    res = run("convert", tmp_path / "column.msh", "-o", tmp_path / "c.glb", "--no-companions")
    assert res.exit_code == 0, res.output
    assert "--skeleton FILE" in res.output and "skeleton=<" not in res.output
    assert cli_hints("pass palette=<file.pal>") == "pass --set palette=FILE"
    assert "--format glb" in cli_hints("pass format='glb' to read it as that")


def test_write_options_are_listed():
    res = run("formats")
    assert res.exit_code == 0
    assert "-O:" in res.output and "animation_format" in res.output and "game" in res.output
    assert "-O" in run("convert", "--help").output


def test_unknown_output_extension_lists_writable_extensions(wiggle, tmp_path):
    res = run("convert", wiggle, "-o", tmp_path / "x.foo")
    assert res.exit_code == 2
    assert ".glb" in res.output and ".b3d" in res.output and ".vox" in res.output
    assert "lsmat" not in res.output


# -- 80 columns --------------------------------------------------------------------------------

def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_formats_is_compact_and_has_json():
    res = run("formats", env={"COLUMNS": "80"})
    assert res.exit_code == 0
    assert max(map(len, _lines(res.output))) <= 80
    assert len(_lines(res.output)) < 100
    entries = json.loads(run("formats", "--json").output)
    b3d = next(e for e in entries if e["name"] == "b3d")
    assert "fps" in b3d["write_options"] and ".b3d" in b3d["extensions"]


def test_convert_help_is_short_with_panels():
    res = run("convert", "--help", env={"COLUMNS": "80"})
    assert res.exit_code == 0
    # (+2: the help says plainly that a Luanti mod's Lua is run, and --no-lua)
    assert len(_lines(res.output)) <= 47
    assert max(map(len, _lines(res.output))) <= 80
    for panel in ("Companion files", "Output", "Advanced"):
        assert panel in res.output


def test_everything_fits_80_columns(tmp_path, monkeypatch):
    """No line over 80 characters at COLUMNS=80: help, formats, info, check, a batch."""
    d = tmp_path / "mods" / "mobs" / "models"
    d.mkdir(parents=True)
    long_name = "a_rather_long_model_file_name_that_takes_half_the_line.b3d"
    (d / long_name).write_bytes(wiggle_bytes())
    (d / "crate.b3d").write_bytes(crate_bytes())
    (d / "broken.b3d").write_bytes(wiggle_bytes()[:200])
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    d = d.relative_to(tmp_path)
    env = {"COLUMNS": "80"}
    outputs = [run(*a, env=env).output for a in (
        ["--help"], ["convert", "--help"], ["info", "--help"], ["formats"],
        ["info", d / long_name, d / "crate.b3d"], ["check", "mods"],
        ["convert", "mods", "-o", "out"], ["convert", d / "broken.b3d", "-o", "b.glb"])]
    for out in outputs:
        for line in _lines(out):
            assert len(line) <= 80, line
    # info never breaks a file name
    info = outputs[4]
    assert any(long_name in line for line in _lines(info))


def test_batch_summary_is_relative_and_short(tmp_path):
    d = tmp_path / "mods" / "mobs" / "models"
    d.mkdir(parents=True)
    for i in range(5):
        (d / f"w{i}.b3d").write_bytes(wiggle_bytes())
    (d / "broken.b3d").write_bytes(wiggle_bytes()[:200])
    res = run("convert", tmp_path / "mods", "-o", tmp_path / "out")
    assert res.exit_code == 1
    lines = _lines(res.output)
    assert any(line.startswith("failed: mobs/models/broken.b3d: truncated") for line in lines)
    assert str(tmp_path / "mods") not in res.output          # names relative to the folder
    assert not any("w3.b3d" in line for line in lines)        # files that went well: no line
    assert lines[-1].startswith("5 converted, 1 failed")       # one line of totals


def test_batch_counts_missing_textures(tmp_path, monkeypatch):
    import warnings

    from retromesh import MissingTextureWarning
    d = tmp_path / "in"
    d.mkdir()
    for i in range(3):
        (d / f"w{i}.b3d").write_bytes(wiggle_bytes())

    def fake_convert(source, target, **kw):
        warnings.warn(MissingTextureWarning("texture 'skin.png' not found", "skin.png"), stacklevel=2)
        return [target]
    monkeypatch.setattr(retromesh, "convert", fake_convert)
    res = run("convert", d, "-o", tmp_path / "out")
    assert res.exit_code == 0
    assert "3 missing textures" in _lines(res.output)[-1]


# -- flow --------------------------------------------------------------------------------------

def test_folder_groups_companions_into_one_glb(tmp_path):
    from retromesh.formats.lostsaga import samples as ls
    from retromesh.formats.westwood import samples as ww
    src = tmp_path / "game"
    (src / "chars").mkdir(parents=True)
    (src / "units").mkdir()
    ls.write_example(src / "chars")
    ww.write_example(src / "units")
    (src / "units" / "tank.vox").unlink()
    res = run("convert", src, "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    written = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.glb"))
    assert written == ["chars/column.glb", "units/tank.glb"]
    info = assert_valid(tmp_path / "out" / "chars" / "column.glb")
    assert info["hasSkins"] and info["animationCount"] >= 1
    assert assert_valid(tmp_path / "out" / "units" / "tank.glb")["animationCount"] == 1


def test_version_and_no_arguments():
    res = run("--version")
    assert res.exit_code == 0 and res.output.strip() == f"retromesh {retromesh.__version__}"
    res = run()
    assert res.exit_code == 0 and "convert" in res.output and "Usage" in res.output


def test_output_is_optional_for_one_file(wiggle, tmp_path, monkeypatch):
    work = tmp_path / "here"
    work.mkdir()
    monkeypatch.chdir(work)
    res = run("convert", wiggle)
    assert res.exit_code == 0, res.output
    assert (work / "wiggle.glb").is_file()
    assert "current folder" in run("convert", "--help").output


def test_agreed_flags_reach_the_library(wiggle, tmp_path, monkeypatch):
    seen = {}

    def fake_convert(source, target, format=None, save_options=None, **options):
        seen.update(save=save_options, load=options)
        return [target]
    monkeypatch.setattr(retromesh, "convert", fake_convert)
    extra = tmp_path / "tex"
    extra.mkdir()
    res = run("convert", wiggle, "-o", tmp_path / "w.glb", "--no-embed-images",
              "--texture-path", extra, "--texture-path", tmp_path, "--scale", "0.1")
    assert res.exit_code == 0, res.output
    assert seen["save"] == {"embed_images": False, "texture_path": [extra, tmp_path]}
    assert seen["load"]["scale"] == 0.1
    res = run("convert", wiggle, "-o", tmp_path / "w.glb", "--embed-images")
    assert seen["save"] == {"embed_images": True}
    res = run("convert", wiggle, "-o", tmp_path / "w.glb")
    assert "embed_images" not in seen["save"]           # the library's default: embed
    for bad in ("0", "-1", "nan"):
        assert run("convert", wiggle, "-o", tmp_path / "w.glb", f"--scale={bad}").exit_code == 2


def test_gitignore_keeps_out_folder_out():
    from conftest import ROOT
    assert "/out/" in (ROOT / ".gitignore").read_text().split()


def test_one_warning_of_many_files_is_said_once(tmp_path):
    from retromesh.formats.lostsaga import samples
    samples.write_example(tmp_path / "src")
    msh = (tmp_path / "src" / "column.msh").read_bytes()
    d = tmp_path / "many"
    d.mkdir()
    for i in range(30):
        (d / f"c{i:02}.msh").write_bytes(msh)      # skinned, no skeleton beside: a warning each
    res = run("convert", d, "-o", tmp_path / "out", env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = _lines(res.output)
    assert len(lines) <= 6, res.output
    assert "30 files" in flat(res) and lines[-1].startswith("30 converted, 0 failed (30 with")


def test_output_names_prefer_the_game_model(tmp_path):
    from retromesh.formats.lugaru import samples as lugaru_samples
    from retromesh.formats.westwood import samples as ww
    d = tmp_path / "in"
    d.mkdir()
    ww.write_example(d)                       # tank.vxl + tank.hva + tank.vox
    (d / "box.b3d").write_bytes(crate_bytes())
    solid = next(p for p in lugaru_samples.write_example(tmp_path / "w") if p.suffix == ".solid")
    (d / "box.solid").write_bytes(solid.read_bytes())
    res = run("convert", d, "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "box.b3d.glb", "box.solid.glb", "tank.glb", "tank.vox.glb"]


def test_gltf_only_flags_are_refused_for_other_outputs(wiggle, tmp_path):
    res = run("convert", wiggle, "-o", tmp_path / "x.b3d", "--no-embed-images")
    assert res.exit_code == 2 and "only for glTF output" in flat(res)
    assert not (tmp_path / "x.b3d").exists()


def test_progress_shows_the_current_file_and_an_eta(tmp_path, monkeypatch, capsys):
    from retromesh.clitools.batch import Job, run_all
    d = tmp_path / "in" / "deep"
    d.mkdir(parents=True)
    for i in range(3):
        (d / f"w{i}.b3d").write_bytes(wiggle_bytes())
    monkeypatch.setenv("FORCE_COLOR", "1")          # rich draws as on a terminal
    monkeypatch.setenv("COLUMNS", "80")
    jobs = [Job(d / f"w{i}.b3d", tmp_path / "out" / f"w{i}.glb", base=tmp_path / "in")
            for i in range(3)]
    results = run_all(jobs, 1)
    assert all(r.ok for r in results)
    err = capsys.readouterr().err
    assert "eta" in err and "deep/w2.b3d" in err and "3/3" in err


def test_warnings_name_paths_relative_to_the_input_folder(tmp_path, monkeypatch):
    import warnings

    from retromesh import MissingTextureWarning
    d = tmp_path / "in" / "mobs"
    d.mkdir(parents=True)
    (d / "a.b3d").write_bytes(wiggle_bytes())
    (d / "b.b3d").write_bytes(wiggle_bytes())

    def fake_convert(source, target, **kw):
        warnings.warn(MissingTextureWarning(f"'skin.png': not found in {source.parent.resolve()};"
                                            " kept", "skin.png"), stacklevel=2)
        return [target]
    monkeypatch.setattr(retromesh, "convert", fake_convert)
    res = run("convert", tmp_path / "in", "-o", tmp_path / "out", env={"COLUMNS": "80"})
    assert res.exit_code == 0
    assert str(tmp_path) not in res.output
    assert "not found in mobs; kept (2 files: mobs/a.b3d, mobs/b.b3d)" in flat(res)
