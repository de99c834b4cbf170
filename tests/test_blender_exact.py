"""Blender tier of issue 32 for Lost Saga and LithTech: every example of the two families
(``.lta`` included: the extension imports it) imported and exported by the retromesh extension,
unedited, compared byte for byte with the files read (companions included); one edit per
family (a bone moved in edit mode) changes that bone's data and nothing else. The Lost Saga
corpus models too, when the corpus is there. Skipped without the bpy venv
(tests/helpers/blender_run.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import EXAMPLES, corpus_files
from helpers.exact import differing
from helpers.roundtrip import docs_equal
from retromesh.textures import TextureFinder
from test_blender import SCRIPTS, extension, extension_zip  # noqa: F401  (fixtures)

LS, LT = EXAMPLES / "lostsaga", EXAMPLES / "lithtech"
GROUPS = {
    "column.msh": [LS / n for n in ("column.msh", "column.skl", "column_wave.ani")],
    "model_v12.abc": [LT / "model_v12.abc"],
    "model_v6.abc": [LT / "model_v6.abc"],
    "model.lta": [LT / "model.lta"],
}
#: the Lost Saga corpus models (each alone, as a user picks it), when the corpus is there
CORPUS_GROUPS = {f"corpus/{f.name}": [f] for f in
                 corpus_files("lostsaga", "*.msh", "*.cms", "*.ani", "*.skl")}
#: Luanti mobs the mod's Lua dresses (the extension ships lupa): the chicken's texture, which
#: Blender saves again its own way; the cow's model names a texture the mod does not have
#: (Blender leaves it out, and the textures after it shift into its place)
DRESSED = {f"luanti/{f.name}": [f] for f in corpus_files(
    "luanti", "mobs_animal/models/mobs_chicken.b3d", "mobs_animal/models/mobs_cow.b3d")}
#: the edit jobs: (name, files, bone moved)
EDITS = {"moved/column.msh": (GROUPS["column.msh"], "Bip01 Spine3"),
         "moved/model_v12.abc": (GROUPS["model_v12.abc"], "hand_l")}


@pytest.fixture(scope="module")
def trips(blender, extension, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("exact")
    jobs = [{"name": k, "files": [str(f) for f in v], "out": str(out / k.replace(".", "_") / k)}
            for k, v in {**GROUPS, **CORPUS_GROUPS, **DRESSED}.items()]
    jobs += [{"name": k, "files": [str(f) for f in v], "edit": "move_bone", "bone": bone,
              "out": str(out / k.replace(".", "_") / Path(k).name)}
             for k, (v, bone) in EDITS.items()]
    res = blender.run((SCRIPTS / "roundtrip.py").read_text(), {"jobs": jobs},
                      user_resources=extension["user"])
    return {job["name"]: r for job, r in zip(jobs, res)}


@pytest.mark.parametrize("name", GROUPS)
def test_unedited_example_through_blender_is_identical(trips, name):
    res = trips[name]
    assert "error" not in res, res["error"]
    files = list(GROUPS[name])
    if name.endswith(".msh"):
        files.append(LS / "column.txt")
    assert differing(files, Path(res["out"]).parent) == {}


@pytest.mark.parametrize("name", DRESSED or [pytest.param(
    None, marks=pytest.mark.skip(reason="no Luanti corpus (RETROMESH_CORPUS)"))])
def test_unedited_dressed_mob_writes_only_the_files_read(trips, name):
    """The model comes back identical, and every file written beside it is the file of its
    name the model was read with, byte for byte (its textures): no other."""
    res = trips[name]
    assert "error" not in res, res["error"]
    src, back = DRESSED[name][0], Path(res["out"]).parent
    assert differing([src], back) == {}
    finder = TextureFinder(src.parent)
    for written in back.iterdir():
        if written.name != src.name:
            found = finder.find(written.name)
            assert found is not None, f"{written.name}: the model was read with no such file"
            assert written.read_bytes() == found.read_bytes(), written.name


@pytest.mark.parametrize("name", CORPUS_GROUPS or [pytest.param(
    None, marks=pytest.mark.skip(reason="no Lost Saga corpus (RETROMESH_CORPUS)"))])
def test_unedited_corpus_model_through_blender_is_identical(trips, name):
    res = trips[name]
    assert "error" not in res, res["error"]
    assert differing(CORPUS_GROUPS[name], Path(res["out"]).parent) == {}


def _changed_rows(a: np.ndarray, b: np.ndarray) -> set[int]:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return {i for i in range(len(a)) if a[i].tobytes() != b[i].tobytes()}


def test_moved_bone_changes_that_bone_only_lostsaga(trips):
    res = trips["moved/column.msh"]
    assert "error" not in res, res["error"]
    back = Path(res["out"]).parent
    assert differing([LS / "column.msh", LS / "column.txt"], back) == {}
    was, now = retromesh.read(LS / "column.skl"), retromesh.read(back / "column.skl")
    k = [b.name for b in was.bones].index(b"Bip01 Spine3")
    assert [b.name for b in now.bones] == [b.name for b in was.bones]
    for f in was.poses.dtype.names:
        assert _changed_rows(was.poses[f], now.poses[f]) <= {k}, f
    assert now.poses["local_position"][k] - was.poses["local_position"][k] == \
        pytest.approx([0.25, 0, 0], abs=1e-5)      # (Blender X is Lost Saga X)
    was, now = retromesh.read(LS / "column_wave.ani"), retromesh.read(back / "column_wave.ani")
    for t, u in zip(was.tracks, now.tracks, strict=True):
        if t.bone != b"Bip01 Spine3":
            assert t.keys.tobytes() == u.keys.tobytes(), t.bone


def test_moved_bone_changes_that_bone_only_lithtech(trips):
    res = trips["moved/model_v12.abc"]
    assert "error" not in res, res["error"]
    was, now = retromesh.read(LT / "model_v12.abc"), retromesh.read(res["out"])
    names = [n.name for n in was.nodes]
    k = names.index(b"hand_l")
    assert [n.name for n in now.nodes] == names
    assert {i for i, (x, y) in enumerate(zip(was.nodes, now.nodes)) if not docs_equal(x, y)} == {k}
    for x, y in zip(was.animations, now.animations, strict=True):
        assert {j for j in range(len(names))
                if x.transforms[j].tobytes() != y.transforms[j].tobytes()} == {k}
    for p, q in zip(was.pieces, now.pieces, strict=True):
        for lod, mod in zip(p.lods, q.lods, strict=True):
            assert lod.vertices.tobytes() == mod.vertices.tobytes()
            assert lod.faces.tobytes() == mod.faces.tobytes()
            rows = _changed_rows(lod.weights, mod.weights)      # the weights on the bone moved
            assert all(lod.weights["node"][i] == k for i in rows)
    assert [s for s in was.sockets if s.node != k] == [s for s in now.sockets if s.node != k]
