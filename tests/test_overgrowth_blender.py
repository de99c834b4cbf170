"""Overgrowth examples through Blender with the retromesh extension (import, export unedited):
every file comes back byte for byte (the OBJ alone and with its skeleton, ``.phxbn``, ``.anm``,
``.fzx``); one bone posed in Blender changes that bone's matrices in the posed key only
(issue 32, docs/lossless.md)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import retromesh
from retromesh.formats.overgrowth import samples
from test_blender import SCRIPTS, _roundtrip, extension, extension_zip  # noqa: F401  (fixtures)


@pytest.fixture
def example(tmp_path) -> dict[str, Path]:
    return {p.name: p for p in samples.write_example(tmp_path / "in")}


def _mats(path: Path) -> np.ndarray:
    return np.array([np.asarray(k.bone_mats, np.float64) for k in retromesh.read(path).keyframes])


JOBS = {"stick.obj": ["stick.obj"], "stick.fzx": ["stick.fzx"],
        "stick.phxbn": ["stick.phxbn", "stick.obj", "walk.anm", "wave.anm"],
        "walk.anm": ["walk.anm"], "wave.anm": ["wave.anm"]}


def test_every_example_through_blender(blender, extension, example, tmp_path):  # noqa: F811
    jobs = [{"files": [str(example[f]) for f in files], "out": str(tmp_path / name / name)}
            for name, files in JOBS.items()]
    results = _roundtrip(blender, extension, jobs)
    for (name, files), res in zip(JOBS.items(), results):
        assert "error" not in res, (name, res["error"])
        assert res["export"] == ["FINISHED"], (name, res)
        for f in files:
            back = tmp_path / name / f
            assert back.read_bytes() == example[f].read_bytes(), (name, f)


def test_a_bone_posed_in_blender_changes_that_bone_only(blender, extension, example,  # noqa: F811
                                                        tmp_path):
    out = tmp_path / "out" / "stick.phxbn"
    res = blender.run((SCRIPTS / "overgrowth_pose_edit.py").read_text(),
                      {"files": [str(example[f]) for f in JOBS["stick.phxbn"]], "out": str(out),
                       "action": "walk", "bone": "bone4", "degrees": 30, "frame": 0},
                      user_resources=extension["user"])
    assert res["export"] == ["FINISHED"], res
    for f in ("stick.phxbn", "stick.obj"):
        assert (out.parent / f).read_bytes() == example[f].read_bytes(), f
    assert (out.parent / "wave.anm").read_bytes() == example["wave.anm"].read_bytes()
    a, b = _mats(example["walk.anm"]), _mats(out.parent / "walk.anm")
    moved = (a != b).any(axis=2)                                          # (keys, bones)
    assert np.abs(a[0, 4] - b[0, 4]).max() > 0.1, "the posed bone did not move"
    assert np.argwhere(moved).tolist() == [[0, 4]]
    before, after = retromesh.read(example["walk.anm"]), retromesh.read(out.parent / "walk.anm")
    for ka, kb in zip(before.keyframes, after.keyframes):        # root motion, events...
        assert (ka.time, ka.rotation, ka.center_offset) == (kb.time, kb.rotation, kb.center_offset)
