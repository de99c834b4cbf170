"""Companions come back under the names they were read from (retromesh.filenames): per family,
through glTF, through the command line and a folder conversion; new animations get
``<stem>_<name>.<ext>``; whatever a file records, output stays in the output folder."""
from __future__ import annotations

import shutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import retromesh
from retromesh import batch, filenames
from retromesh.cli import app
from retromesh.errors import LossWarning
from retromesh.formats.lostsaga import samples as lostsaga_samples
from retromesh.formats.overgrowth import samples as og_samples
from retromesh.formats.westwood import samples as westwood_samples
from retromesh.scene import Animation, Channel

runner = CliRunner()


@contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture
def lostsaga(tmp_path) -> Path:
    folder = tmp_path / "lostsaga"
    lostsaga_samples.write_example(folder)          # column.msh .skl .txt, column_wave.ani
    return folder


@pytest.fixture
def overgrowth(tmp_path) -> Path:
    folder = tmp_path / "overgrowth"
    og_samples.write_example(folder)          # stick.phxbn .obj, walk.anm, wave.anm
    return folder


@pytest.fixture
def westwood(tmp_path) -> Path:
    folder = tmp_path / "westwood"
    westwood_samples.write_example(folder)         # tank.vxl, tank.hva
    return folder


def _names(paths) -> list[str]:
    return sorted(Path(p).name for p in paths)


def _through_glb(source: Path, glb: Path, target: Path, **options) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(source, glb, **options)
        return _names(retromesh.convert(glb, target))


# -- the cases of the issue, on the command line -----------------------------------------------

def test_cli_lost_saga_animation_comes_back_as_column_wave(lostsaga, tmp_path):
    glb = tmp_path / "c.glb"
    res = runner.invoke(app, ["convert", str(lostsaga / "column.msh"), "--skeleton",
                              str(lostsaga / "column.skl"), "--animation",
                              str(lostsaga / "column_wave.ani"), "-o", str(glb)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["convert", str(glb), "-o", str(tmp_path / "back" / "column.msh")])
    assert res.exit_code == 0, res.output
    assert _names((tmp_path / "back").iterdir()) == ["column.msh", "column.skl", "column.txt",
                                                      "column_wave.ani"]
    a0 = retromesh.read(lostsaga / "column_wave.ani")
    a1 = retromesh.read(tmp_path / "back" / "column_wave.ani")
    assert len(a1.tracks) == len(a0.tracks) and a1.total_time == a0.total_time


def test_cli_overgrowth_walk_comes_back_as_walk(overgrowth, tmp_path):
    glb = tmp_path / "s.glb"
    res = runner.invoke(app, ["convert", str(overgrowth / "stick.phxbn"), "--mesh",
                              str(overgrowth / "stick.obj"), "--animation", str(overgrowth / "walk.anm"),
                              "-o", str(glb)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["convert", str(glb), "-o", str(tmp_path / "back" / "stick.phxbn")])
    assert res.exit_code == 0, res.output
    assert _names((tmp_path / "back").iterdir()) == ["stick.obj", "stick.phxbn", "walk.anm"]
    a0 = retromesh.read(overgrowth / "walk.anm")
    a1 = retromesh.read(tmp_path / "back" / "walk.anm")
    assert [k.time for k in a1.keyframes] == [k.time for k in a0.keyframes]
    # and the loop goes round again: the only skeleton of its folder reads walk.anm with it
    res = runner.invoke(app, ["convert", str(tmp_path / "back" / "stick.phxbn"), "-o",
                              str(tmp_path / "again.glb")])
    assert res.exit_code == 0 and "walk.anm" in res.output, res.output
    assert [a.name for a in retromesh.load(tmp_path / "again.glb").animations] == ["walk"]
    (tmp_path / "back" / "man.phxbn").write_bytes((tmp_path / "back" / "stick.phxbn").read_bytes())
    assert "animations" not in batch.companions(tmp_path / "back" / "stick.phxbn")


# -- per family, through glTF ------------------------------------------------------------------

def test_lost_saga_companions_follow_a_renamed_model(lostsaga, tmp_path):
    got = _through_glb(lostsaga / "column.msh", tmp_path / "c.glb", tmp_path / "out" / "pillar.msh",
                       skeleton=lostsaga / "column.skl",
                       animations=[lostsaga / "column_wave.ani"])
    assert got == ["pillar.msh", "pillar.skl", "pillar.txt", "pillar_wave.ani"]


def test_lost_saga_skeleton_of_another_name_keeps_it(lostsaga, tmp_path):
    shutil.copy(lostsaga / "column.skl", lostsaga / "bones.skl")
    shutil.copy(lostsaga / "column_wave.ani", lostsaga / "dance.ani")
    got = _through_glb(lostsaga / "column.msh", tmp_path / "c.glb", tmp_path / "out" / "column.msh",
                       skeleton=lostsaga / "bones.skl",
                       animations=[lostsaga / "column_wave.ani", lostsaga / "dance.ani"])
    assert got == ["bones.skl", "column.msh", "column.txt", "column_wave.ani", "dance.ani"]


def test_lost_saga_animation_read_as_the_main_file(lostsaga, tmp_path):
    got = _through_glb(lostsaga / "column_wave.ani", tmp_path / "a.glb",
                       tmp_path / "out" / "column.msh", skeleton=lostsaga / "column.skl",
                       mesh=lostsaga / "column.msh")
    assert got == ["column.msh", "column.skl", "column.txt", "column_wave.ani"]


def test_overgrowth_animations_keep_their_names_beside_a_renamed_skeleton(overgrowth, tmp_path):
    got = _through_glb(overgrowth / "stick.phxbn", tmp_path / "s.glb", tmp_path / "out" / "man.phxbn",
                       mesh=overgrowth / "stick.obj",
                       animations=[overgrowth / "walk.anm", overgrowth / "wave.anm"])
    assert got == ["man.obj", "man.phxbn", "walk.anm", "wave.anm"]


def test_overgrowth_animation_read_as_the_main_file(overgrowth, tmp_path):
    """``walk.anm`` read with its skeleton: the model is ``stick.phxbn``, the animation stays
    ``walk.anm`` (it is not renamed after the skeleton)."""
    got = _through_glb(overgrowth / "walk.anm", tmp_path / "w.glb", tmp_path / "out" / "stick.phxbn",
                       skeleton=overgrowth / "stick.phxbn", mesh=overgrowth / "stick.obj")
    assert got == ["stick.obj", "stick.phxbn", "walk.anm"]


def test_overgrowth_animation_named_after_the_skeleton(overgrowth, tmp_path):
    shutil.copy(overgrowth / "walk.anm", overgrowth / "stick.anm")
    got = _through_glb(overgrowth / "stick.phxbn", tmp_path / "s.glb", tmp_path / "out" / "man.phxbn",
                       mesh=overgrowth / "stick.obj", animations=[overgrowth / "stick.anm"])
    assert got == ["man.anm", "man.obj", "man.phxbn"]


def test_westwood_hva_keeps_its_name(westwood, tmp_path):
    assert _through_glb(westwood / "tank.vxl", tmp_path / "t.glb",
                        tmp_path / "out" / "tank.vxl") == ["tank.hva", "tank.vxl"]
    shutil.copy(westwood / "tank.hva", westwood / "tank_moves.hva")
    got = _through_glb(westwood / "tank.vxl", tmp_path / "t2.glb", tmp_path / "out2" / "tank.vxl",
                       hva=westwood / "tank_moves.hva")
    assert got == ["tank.vxl", "tank_moves.hva"]
    # voxelised again (a voxelisation option): the same name
    with _quiet():
        got = _names(retromesh.convert(tmp_path / "t2.glb", tmp_path / "out3" / "tank.vxl",
                                       save_options={"resolution": 8}))
    assert got == ["tank.vxl", "tank_moves.hva"]


def test_records_ride_in_scene_and_animation_extras(overgrowth, tmp_path):
    with _quiet():
        retromesh.convert(overgrowth / "stick.phxbn", tmp_path / "s.glb", mesh=overgrowth / "stick.obj",
                          animations=[overgrowth / "walk.anm"])
        scene = retromesh.load(tmp_path / "s.glb")
    assert scene.extras[filenames.FILES] == {
        "source": "stick.phxbn", ".phxbn": "stick.phxbn", ".obj": "stick.obj",
        "animations": [["walk", "walk.anm"]]}
    assert scene.animations[0].extras[filenames.FILE] == "walk.anm"


def test_scene_record_stands_in_for_lost_animation_extras(overgrowth, tmp_path):
    with _quiet():
        scene = retromesh.load(overgrowth / "stick.phxbn", mesh=overgrowth / "stick.obj",
                               animations=[overgrowth / "walk.anm", overgrowth / "wave.anm"])
        for a in scene.animations:
            del a.extras[filenames.FILE]          # an editor that drops animation extras
        assert _names(retromesh.save(scene, tmp_path / "a" / "stick.phxbn")) == \
            ["stick.obj", "stick.phxbn", "walk.anm", "wave.anm"]
        scene.extras.pop(filenames.FILES)         # both gone: the rule for new animations
        assert _names(retromesh.save(scene, tmp_path / "b" / "stick.phxbn")) == \
            ["stick.obj", "stick.phxbn", "stick_walk.anm", "stick_wave.anm"]


# -- new animations: one rule for every family -------------------------------------------------

def _with_new_animations(scene, names: list[str]):
    base = scene.animations[0]
    for name in names:
        scene.animations.append(Animation(name=name, channels=[
            Channel(c.node, c.path, np.array(c.times), np.array(c.values), c.interpolation)
            for c in base.channels]))
    return scene


@pytest.mark.parametrize("family", ["lostsaga", "overgrowth"])
def test_new_animations_are_stem_underscore_name(family, lostsaga, overgrowth, tmp_path):
    with _quiet():
        if family == "lostsaga":
            scene = retromesh.load(lostsaga / "column.msh", skeleton=lostsaga / "column.skl",
                                   animations=[lostsaga / "column_wave.ani"])
            ext, old, target = ".ani", "column_wave.ani", "column.msh"
        else:
            scene = retromesh.load(overgrowth / "stick.phxbn", mesh=overgrowth / "stick.obj",
                                   animations=[overgrowth / "walk.anm"])
            ext, old, target = ".anm", "walk.anm", "stick.phxbn"
        stem = Path(target).stem
        _with_new_animations(scene, ["Run Fast!", "jump", "jump", ""])
        got = _names(p for p in retromesh.save(scene, tmp_path / target) if p.suffix == ext)
    assert got == sorted([old, f"{stem}_Run_Fast_{ext}", f"{stem}_jump{ext}",
                          f"{stem}_jump_2{ext}", f"{stem}_animation4{ext}"])


def test_an_animation_from_another_family_gets_the_rule(lostsaga, tmp_path):
    """``column_wave.ani`` written as an Overgrowth animation: not an ``.ani`` name."""
    with _quiet():
        scene = retromesh.load(lostsaga / "column.msh", skeleton=lostsaga / "column.skl",
                               animations=[lostsaga / "column_wave.ani"])
        got = _names(retromesh.save(scene, tmp_path / "col.phxbn"))
    assert "col_column_wave.anm" in got


def test_a_b3d_animation_gets_the_rule(tmp_path):
    from helpers.make_examples_import import wiggle_bytes
    (tmp_path / "wiggle.b3d").write_bytes(wiggle_bytes())
    with _quiet():
        scene = retromesh.load(tmp_path / "wiggle.b3d")
        got = _names(retromesh.save(scene, tmp_path / "out" / "w.phxbn"))
    assert filenames.FILES not in scene.extras        # one file, no companion to remember
    name = filenames.animation_label(scene.animations[0].name, 0)
    assert got == ["w.obj", "w.phxbn", f"w_{name}.anm"]


# -- whatever the records say, the output stays in its folder ----------------------------------

def test_hostile_records_stay_in_the_output_folder(overgrowth, tmp_path):
    with _quiet():
        scene = retromesh.load(overgrowth / "stick.phxbn", mesh=overgrowth / "stick.obj",
                               animations=[overgrowth / "walk.anm", overgrowth / "wave.anm"])
    scene.extras[filenames.FILES][".obj"] = "../../evil.obj"
    scene.animations[0].extras[filenames.FILE] = "/etc/passwd.anm"
    scene.animations[1].extras[filenames.FILE] = "C:\\Windows\\con.anm"
    out = tmp_path / "deep" / "out"
    with pytest.warns(LossWarning, match="not a plain file name"):
        written = retromesh.save(scene, out / "stick.phxbn")
    assert all(p.parent == out for p in written)
    assert _names(written) == ["_con.anm", "evil.obj", "passwd.anm", "stick.phxbn"]
    assert _names(tmp_path.rglob("*.obj")) == ["evil.obj", "stick.obj"]


def test_two_animations_recorded_under_one_name(overgrowth, tmp_path):
    with _quiet():
        scene = retromesh.load(overgrowth / "stick.phxbn", mesh=overgrowth / "stick.obj",
                               animations=[overgrowth / "walk.anm", overgrowth / "wave.anm"])
        scene.animations[1].extras[filenames.FILE] = "walk.anm"   # a duplicated action
        got = _names(retromesh.save(scene, tmp_path / "stick.phxbn"))
    assert got == ["stick.obj", "stick.phxbn", "stick_wave.anm", "walk.anm"]


def test_a_recorded_name_that_meets_a_rule_name_gets_a_number(tmp_path, overgrowth):
    """A plain name equal to what another animation gets by the rule (``stick_walk.anm``
    recorded beside ``man.phxbn``, written as ``stick.phxbn``): two files, never one."""
    with _quiet():
        scene = retromesh.load(overgrowth / "stick.phxbn", mesh=overgrowth / "stick.obj",
                               animations=[overgrowth / "walk.anm", overgrowth / "wave.anm"])
        scene.extras[filenames.FILES]["source"] = "man.phxbn"
        scene.extras[filenames.FILES][".phxbn"] = "man.phxbn"
        scene.animations[0].extras[filenames.FILE] = "stick_walk.anm"
        del scene.animations[1].extras[filenames.FILE]
        scene.extras[filenames.FILES].pop("animations")
        scene.animations[1].name = "walk"
        got = _names(retromesh.save(scene, tmp_path / "stick.phxbn"))
    assert got == ["stick.obj", "stick.phxbn", "stick_walk.anm", "stick_walk_2.anm"]


# -- a folder conversion -----------------------------------------------------------------------

def test_folder_conversion_keeps_the_names(lostsaga, overgrowth, tmp_path):
    with _quiet():
        a = batch.convert_many([lostsaga], tmp_path / "ls", to="msh")
        b = batch.convert_many([overgrowth], tmp_path / "og", to="phxbn")
    b = [r for r in b if r.source.name == "stick.phxbn"]     # (a .solid has no skeleton)
    assert len(b) == 1 and all(r.ok for r in a + b), [r.message for r in a + b if not r.ok]
    assert _names((tmp_path / "ls").iterdir()) == ["column.msh", "column.skl", "column.txt",
                                                    "column_wave.ani"]
    og = _names(p for p in (tmp_path / "og").iterdir() if p.suffix in (".phxbn", ".obj", ".anm"))
    assert {"stick.phxbn", "stick.obj", "walk.anm", "wave.anm"} <= set(og)
    assert not [n for n in og if n.startswith("stick_")]
