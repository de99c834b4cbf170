"""A Lugaru character through Blender with the retromesh extension: the animations picked in
``Data/Animations`` come in with their character (skeleton, textured skinned body), are
exported to ``Data/Skeleton/BasicFigure`` and give back the same skeleton and animation files.
Also a Workbench render of the rabbit at two moments of an animation (LOOKed at when made:
``RETROMESH_SCREENSHOT=docs/lugaru-rabbit.png`` keeps a new one)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORPUS
from test_blender import SCRIPTS, _roundtrip, extension, extension_zip  # noqa: F401  (fixtures)
from test_lugaru_character import _layout

TOOLS = Path(__file__).parent / "blender_scripts"
DATA = CORPUS / "lugaru" / "Data"


def test_extension_round_trip_gives_the_same_files(blender, extension, tmp_path):  # noqa: F811
    data = _layout(tmp_path / "in")
    out = tmp_path / "out" / "Data" / "Skeleton" / "BasicFigure"
    jobs = [{"files": [str(data / "Animations" / "Walk"), str(data / "Animations" / "Sway")],
             "out": str(out)}]
    res = _roundtrip(blender, extension, jobs)[0]
    assert "error" not in res, res["error"]
    assert res["import"] == ["FINISHED"] and res["export"] == ["FINISHED"], res
    assert "ARMATURE" in res["objects"] and "MESH" in res["objects"]
    assert out.read_bytes() == (data / "Skeleton" / "BasicFigure").read_bytes()
    for name in ("Walk", "Sway"):
        got = out.parent.parent / "Animations" / name
        assert got.read_bytes() == (data / "Animations" / name).read_bytes(), (name, res)


@pytest.mark.skipif(not (DATA / "Skeleton").is_dir(), reason="no Lugaru corpus")
def test_extension_round_trip_of_the_corpus_rabbit(blender, extension, tmp_path):  # noqa: F811
    names = ["Idle", "SpinKick", "HangOn"]
    out = tmp_path / "Data" / "Skeleton" / "BasicFigure"
    jobs = [{"files": [str(DATA / "Animations" / n) for n in names], "out": str(out)}]
    res = _roundtrip(blender, extension, jobs)[0]
    assert "error" not in res, res["error"]
    assert res["export"] == ["FINISHED"], res
    assert not res["export_warnings"], res["export_warnings"]
    assert out.read_bytes() == (DATA / "Skeleton" / "BasicFigure").read_bytes()
    for n in names:
        got = (out.parent.parent / "Animations" / n).read_bytes()
        assert got == (DATA / "Animations" / n).read_bytes(), n


def test_workbench_render_of_two_moments(blender, tmp_path):
    import os

    import retromesh
    data = _layout(tmp_path)
    glb = tmp_path / "rabbit.glb"
    retromesh.convert(data / "Animations" / "Walk", glb)
    res = blender.run((TOOLS / "render_lugaru.py").read_text(),
                      {"glb": str(glb), "frames": [0, 3], "out": str(tmp_path / "r%d.png")})
    assert res["used"].startswith("Walk"), res
    a, b = (tmp_path / "r0.png").read_bytes(), (tmp_path / "r1.png").read_bytes()
    assert a[:8] == b"\x89PNG\r\n\x1a\n" and a != b          # the two moments differ
    first, second = res["renders"]
    assert (first["lo"], first["hi"]) != (second["lo"], second["hi"])    # the pose moved
    keep = os.environ.get("RETROMESH_SCREENSHOT")
    if keep:
        Path(keep).write_bytes(b)


def test_a_bone_posed_in_blender_moves_its_joints_in_the_file(blender, extension, tmp_path):  # noqa: F811
    import numpy as np

    import retromesh
    from retromesh.formats.lugaru import samples as samples
    data = _layout(tmp_path / "in")
    out = tmp_path / "out" / "Data" / "Skeleton" / "BasicFigure"
    res = blender.run((TOOLS / "lugaru_pose_edit.py").read_text(),
                      {"files": [str(data / "Animations" / "Walk")], "out": str(out),
                       "bone": "muscle3_leftshoulder_leftelbow", "degrees": 40, "frame": 3},
                      user_resources=extension["user"])
    assert res["export"] == ["FINISHED"], res
    assert any("joint positions they carry" in w for w in res["export_warnings"]), res
    before = retromesh.read(data / "Animations" / "Walk")
    after = retromesh.read(out.parent.parent / "Animations" / "Walk")
    moved = np.linalg.norm(after.positions - before.positions, axis=2)     # (frames, joints)
    shoulder, elbow = samples.BONES[3]
    assert moved[1, elbow] > 0.3                  # Blender frame 3 = 0.125 s = Lugaru frame 1
    assert moved[:, [j for j in range(20) if j not in (shoulder, elbow)]].max() < 1e-4
    assert out.read_bytes() == (data / "Skeleton" / "BasicFigure").read_bytes()
