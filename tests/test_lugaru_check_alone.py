"""``check`` of a Lugaru animation judges the file: it plays it on the skeleton the game would
pair it with (the PersonType table, then the joint count), and with none there it says what it
could not check and does not fail (issue 32, item 3)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from conftest import CORPUS
from helpers.cli import run
from retromesh.formats.lugaru import samples
from retromesh.formats.lugaru.animation import AnimationFile, write as write_animation
from retromesh.formats.lugaru.scene import paired_skeleton
from retromesh.formats.lugaru.skeleton import write as write_skeleton
from test_check_rules import check_json


def _data(tmp_path, skeletons: dict[str, bytes], animations: dict[str, bytes]):
    data = tmp_path / "Data"
    (data / "Skeleton").mkdir(parents=True)
    (data / "Animations").mkdir()
    for name, raw in skeletons.items():
        (data / "Skeleton" / name).write_bytes(raw)
    for name, raw in animations.items():
        (data / "Animations" / name).write_bytes(raw)
    return data


def _anim(joints: int = 20) -> bytes:
    a = samples.animation(3)
    if joints != a.joint_count:
        a = AnimationFile(np.zeros((3, joints, 3), ">f4"), np.zeros((3, joints), ">f4"),
                          np.zeros((3, joints), "u1"), np.ones(3, ">f4"),
                          np.zeros((3, joints), ">f4"), np.zeros(3, ">i4"))
    return write_animation(a)


def test_only_the_wolf_low_figure_pairs_with_every_animation(tmp_path):
    fig = write_skeleton(samples.figure())
    data = _data(tmp_path, {"BasicFigureWolfLow": fig}, {"Idle": _anim(), "WolfRun": _anim()})
    for name in ("Idle", "WolfRun"):
        assert paired_skeleton(data / "Animations" / name, 20) == data / "Skeleton" / \
            "BasicFigureWolfLow"
    res = run("check", data / "Animations")
    assert res.exit_code == 0, res.output
    assert "2 ok, 0 failed" in res.output


def test_the_creatures_own_figure_comes_first(tmp_path):
    fig = write_skeleton(samples.figure())
    data = _data(tmp_path, {n: fig for n in ("BasicFigure", "BasicFigureLow", "BasicFigureWolf",
                                             "BasicFigureWolfLow")}, {})
    anims = data / "Animations"
    assert paired_skeleton(anims / "WolfRun", 20).name == "BasicFigureWolf"
    assert paired_skeleton(anims / "Run", 20).name == "BasicFigure"
    (data / "Skeleton" / "BasicFigure").unlink()
    assert paired_skeleton(anims / "Run", 20).name == "BasicFigureLow"


def test_no_skeleton_judges_the_animation_alone(tmp_path):
    data = _data(tmp_path, {}, {"Idle": _anim()})
    res = run("check", data / "Animations" / "Idle")
    assert res.exit_code == 0, res.output
    assert "not checked: its joint count against its skeleton" in " ".join(res.output.split())
    rules = {f["rule"]: f["severity"] for e in check_json(data / "Animations")["files"]
             for f in e["findings"]}
    assert rules == {"lugaru-animation.unchecked": "warning"}
    # convert still needs the skeleton: an error naming it
    out = run("convert", data / "Animations" / "Idle", "-o", tmp_path / "x.glb")
    assert out.exit_code != 0 and "skeleton" in out.output


def test_the_animations_own_rules_still_fail_it_alone(tmp_path):
    data = _data(tmp_path, {}, {"Empty": write_animation(AnimationFile())})
    assert run("check", data / "Animations" / "Empty").exit_code == 1


def test_a_skeleton_of_another_joint_count_is_reported(tmp_path):
    data = _data(tmp_path, {"BasicFigure": write_skeleton(samples.figure())}, {"Run": _anim(19)})
    assert paired_skeleton(data / "Animations" / "Run", 19).name == "BasicFigure"
    res = run("check", data / "Animations" / "Run")
    assert res.exit_code == 1 and "19 joints" in res.output


@pytest.mark.skipif(not (CORPUS / "lugaru" / "Data").is_dir(), reason="no Lugaru corpus")
def test_corpus_folder_with_only_the_wolf_low_figure(tmp_path):
    src = CORPUS / "lugaru" / "Data"
    data = tmp_path / "Data"
    shutil.copytree(src / "Animations", data / "Animations")
    (data / "Skeleton").mkdir()
    shutil.copy(src / "Skeleton" / "BasicFigureWolf", data / "Skeleton" / "BasicFigureWolfLow")
    res = run("check", data / "Animations")
    assert res.exit_code == 0, res.output[-2000:]
    n = len(list(data.glob("Animations/*")))
    assert f"{n} ok, 0 failed" in res.output
