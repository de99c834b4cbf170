"""Unix habits of the command line: NO_COLOR, ``-`` for standard input and output, ``-h``, and a
missing external tool as a failure (exit 1) that says what to install."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import retromesh
from retromesh.cli import app
from retromesh.clitools import stdio

EX = Path(__file__).resolve().parents[1] / "examples"
ANSI = "\x1b["


def run(*args, input: bytes | None = None, env: dict[str, str] | None = None, color: bool = False):
    runner = CliRunner()
    return runner.invoke(app, [str(a) for a in args], input=input, env=env, color=color)


# -- colour ----------------------------------------------------------------------------------

def test_colour_on_a_terminal_by_default():
    res = run("info", "no-such.b3d", color=True, env={"NO_COLOR": ""})
    assert res.exit_code == 2 and ANSI in res.output          # an empty NO_COLOR is not set


@pytest.mark.parametrize("args", [("info", "no-such.b3d"), ("convert", "no-such.b3d")])
def test_no_color_means_no_colour(args):
    res = run(*args, color=True, env={"NO_COLOR": "1"})
    assert res.exit_code == 2 and "error:" in res.output and ANSI not in res.output


def test_no_colour_in_batch_summary(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "good.b3d").write_bytes((EX / "crate.b3d").read_bytes())
    (src / "bad.b3d").write_bytes(b"BB3D\xff\xff\xff\x7f")
    res = run("convert", src, "-o", tmp_path / "out", color=True, env={"NO_COLOR": "yes"})
    assert res.exit_code == 1 and "failed:" in res.output and "1 converted," in res.output
    assert ANSI not in res.output
    coloured = run("convert", src, "-o", tmp_path / "out2", color=True, env={"NO_COLOR": ""})
    assert ANSI in coloured.output


def test_no_colour_when_not_a_terminal():
    res = run("info", "no-such.b3d")                 # CliRunner's output is no terminal
    assert "error:" in res.output and ANSI not in res.output


# -- standard input --------------------------------------------------------------------------

def test_info_reads_stdin():
    res = run("info", "-", input=(EX / "wiggle.b3d").read_bytes())
    assert res.exit_code == 0, res.output
    assert res.output.startswith("<stdin> (b3d)") and "retromesh-stdin" not in res.output


def test_info_json_names_stdin():
    res = run("info", "--json", "-", input=(EX / "crate.b3d").read_bytes())
    assert res.exit_code == 0
    assert list(json.loads(res.stdout)) == ["<stdin>"]


def test_check_reads_stdin():
    res = run("check", "-", input=(EX / "crate.b3d").read_bytes())
    assert res.exit_code == 0 and "ok: <stdin> (b3d)" in res.output


def test_dump_reads_stdin_and_writes_stdout():
    data = (EX / "crate.b3d").read_bytes()
    res = run("dump", "-", "-o", "-", input=data)
    assert res.exit_code == 0
    assert retromesh.to_bytes(retromesh.jsoncodec.loads(res.stdout)) == data


def test_format_without_magic_needs_f():
    data = (EX / "lugaru" / "box.solid").read_bytes()
    res = run("info", "-", input=data)
    assert res.exit_code == 1
    text = " ".join(res.output.split())
    assert "error: <stdin>" in text and "-f NAME" in text and "solid" in text
    ok = run("info", "-f", "solid", "-", input=data)
    assert ok.exit_code == 0 and ok.output.startswith("<stdin> (solid)")


def test_stdin_is_read_once():
    res = run("convert", "-", "-", "-o", "out", input=(EX / "crate.b3d").read_bytes())
    assert res.exit_code == 2 and "once" in res.output


def test_stdin_input_needs_an_output():
    res = run("convert", "-", input=(EX / "crate.b3d").read_bytes())
    assert res.exit_code == 2 and "-o" in res.output


def test_stdin_respects_max_input_bytes(monkeypatch):
    monkeypatch.setattr(retromesh.fileio, "MAX_INPUT_BYTES", 64)
    res = run("info", "-", input=(EX / "crate.b3d").read_bytes())
    assert res.exit_code == 1 and "MAX_INPUT_BYTES" in res.output


def test_read_stdin_reads_no_more_than_the_cap(monkeypatch):
    import io
    monkeypatch.setattr(retromesh.fileio, "MAX_INPUT_BYTES", 10)
    stream = io.BytesIO(b"x" * 1000)
    with pytest.raises(retromesh.FormatError):
        stdio.read_stdin(stream)
    assert stream.tell() == 11


# -- standard output -------------------------------------------------------------------------

def test_convert_stdin_to_stdout(tmp_path):
    from helpers.gltfcheck import assert_valid
    res = run("convert", "-", "-o", "-", "--to", "glb", input=(EX / "crate.b3d").read_bytes())
    assert res.exit_code == 0
    glb = res.stdout_bytes
    assert glb[:4] == b"glTF"
    assert retromesh.load(glb, format="glb").counts()["meshes"] == 1
    assert "wrote <stdout>" in res.stderr
    (tmp_path / "piped.glb").write_bytes(glb)
    assert_valid(tmp_path / "piped.glb")


def test_convert_file_to_stdout_as_b3d():
    res = run("convert", EX / "crate.b3d", "-o", "-", "--to", "b3d")
    assert res.exit_code == 0 and res.stdout_bytes == (EX / "crate.b3d").read_bytes()


def test_stdout_takes_one_file():
    res = run("convert", EX / "crate.b3d", "-o", "-", "--to", "gltf")
    assert res.exit_code == 1 and "standard output takes one" in " ".join(res.stderr.split())
    assert res.stdout_bytes == b""


def test_stdout_takes_one_input(tmp_path):
    res = run("convert", EX, "-o", "-")
    assert res.exit_code == 2 and "one input file" in res.output


# -- -h ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(), ("convert",), ("info",), ("check",), ("dump",), ("build",),
                                  ("formats",), ("ksy",), ("gallery",), ("view",),
                                  ("blender",), ("blender", "build")])
def test_h_is_help(args):
    short, long = run(*args, "-h"), run(*args, "--help")
    assert short.exit_code == 0 and short.output == long.output and "Usage" in short.output


# -- external tools --------------------------------------------------------------------------

def test_missing_npm_is_exit_1_saying_what_to_install(tmp_path, monkeypatch):
    import shutil

    from retromesh.gallery import assets
    monkeypatch.setenv("RETROMESH_CACHE", str(tmp_path / "cache"))      # no viewer built yet
    real = shutil.which
    monkeypatch.setattr(assets.shutil, "which", lambda name, *a, **k: None if name == "npm"
                        else real(name, *a, **k))
    res = run("gallery", EX / "crate.b3d", "-o", tmp_path / "site", "--no-thumbnails")
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "error:" in text and "npm" in text and "install" in text
