"""Westwood through the command line: convert with --hva/--fps/--set, folder batches, info,
check, dump/build; plus .vox scene-graph placement."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

import retromesh
from conftest import corpus_files
from helpers.gltfcheck import assert_valid, assert_valid_many
from retromesh.binio import Writer
from retromesh.cli import app
from retromesh.formats.westwood import hva, samples, vox
from retromesh.formats.westwood.vox import (
    XYZI_DTYPE,
    VoxChunk,
    VoxFile,
    VoxSize,
    VoxXyzi,
)

runner = CliRunner()


def _run(*args):
    r = runner.invoke(app, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r


def test_convert_finds_hva_and_takes_fps_and_set(tank, tmp_path):
    _run("convert", tank, "-o", tmp_path / "a.glb", "--fps", 4)
    info = assert_valid(tmp_path / "a.glb")
    assert info["animationCount"] == 1
    scene = retromesh.load(tmp_path / "a.glb")
    assert scene.animations[0].duration == pytest.approx(7 / 4)
    _run("convert", tank, "-o", tmp_path / "b.glb", "--set", "greedy=false")
    a = retromesh.load(tmp_path / "a.glb").counts()["triangles"]
    b = retromesh.load(tmp_path / "b.glb").counts()["triangles"]
    assert b > a
    # --hva overrides: a one-frame file gives no animation
    one = hva.read(retromesh.binio.Reader(hva.write(samples.tank(frames=1)[1])))
    (tmp_path / "one.hva").write_bytes(hva.write(one))
    _run("convert", tank, "-o", tmp_path / "c.glb", "--hva", tmp_path / "one.hva")
    assert assert_valid(tmp_path / "c.glb")["animationCount"] == 0


def test_folder_batch_skips_hva_files(tmp_path):
    files = corpus_files("vxl", "rvts__ts*")
    if not files:
        pytest.skip("no corpus")
    src = tmp_path / "in"
    src.mkdir()
    for f in files:
        shutil.copy(f, src / f.name)
    _run("convert", src, "-o", tmp_path / "out", "--to", "glb")
    outs = sorted((tmp_path / "out").glob("*.glb"))
    assert len(outs) == len([f for f in files if f.suffix == ".vxl"])
    assert_valid_many(outs)


def test_info_check_dump_build(tank, tmp_path):
    r = _run("info", tank)
    assert "limbs" in r.output and "RA2" in r.output
    _run("check", tank)
    _run("dump", tank, "-o", tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text())
    assert data["$type"] == "westwood:VxlFile"
    _run("build", tmp_path / "t.json", "-o", tmp_path / "t2.vxl")
    assert (tmp_path / "t2.vxl").read_bytes() == tank.read_bytes()


def test_vox_scene_graph_translation_and_rotation():
    """nTRN ``_t`` moves the model's pivot (floor(size / 2)); ``_r`` rotates."""
    def trn(nid, child, frame):
        w = Writer("<")
        w.i32(nid)
        vox.build_dict(w, {"_name": "M"})
        w.pack("4i", child, -1, 0, 1)
        vox.build_dict(w, frame)
        return VoxChunk(b"nTRN", w.getvalue())

    def shp(nid):
        w = Writer("<")
        w.i32(nid)
        vox.build_dict(w, {})
        w.pack("2i", 1, 0)
        vox.build_dict(w, {})
        return VoxChunk(b"nSHP", w.getvalue())

    # _r = 0b0000001 with no signs: row 0 takes column 1, row 1 column 0 -> swaps x and y
    v = VoxFile(chunks=[VoxSize(4, 2, 2), VoxXyzi(np.array([(0, 0, 0, 1)], XYZI_DTYPE)),
                        trn(0, 1, {"_t": "10 20 30", "_r": "1"}), shp(1)])
    scene = retromesh.load(vox.write(v), format="vox")
    world = scene.world_matrices()
    node = next(i for i, n in enumerate(scene.nodes) if n.mesh is not None)
    p = scene.meshes[0].primitives[0].positions
    pw = p @ world[node][:3, :3].T + world[node][:3, 3]
    # vox frame: voxel (0,0,0) spans [-2,-1]x[-1,0]x[-1,0] around the pivot; rotated
    # (x, y) -> (y, x) then moved by (10, 20, 30); glTF = (y, z, x)
    lo_vox = np.array([10 - 1, 20 - 2, 30 - 1])
    hi_vox = np.array([10 + 0, 20 - 1, 30 + 0])
    assert np.allclose(pw.min(0), lo_vox[[1, 2, 0]])
    assert np.allclose(pw.max(0), hi_vox[[1, 2, 0]])


@pytest.mark.parametrize("option", ["scale=nan", "scale=0", "scale=-2", "scale=big", "fps=inf"])
def test_bad_scene_options_fail_cleanly(tank, tmp_path, option):
    """--set scale=nan used to crash the glTF writer (internal error with a traceback)."""
    for src in (tank, tank.with_suffix(".vox")):        # the example has both
        if option.startswith("fps") and src.suffix == ".vox":
            continue
        out = tmp_path / "bad.glb"
        result = runner.invoke(app, ["convert", str(src), "-o", str(out), "--set", option])
        assert result.exit_code == 2   # checked up front: a usage error
        assert "must be" in result.output and "Traceback" not in result.output
        assert not out.exists()

