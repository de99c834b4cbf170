"""The way back of edited clips (retromesh.luanti.clipsback): an edited clip goes back to its
frames, clips sharing frames are written once (a conflicting edit reported), a clip whose length
changed moves the later frames and the Lua fields of every moved clip are printed.

Fixture: the wiggle (formats/b3d/samples.py: 49 key frames, Lua frames 0..48 at 24 fps) with a
registration whose walk and run share frames 0–20, stand plays 24–40 and idle 40–48; and the cow
of mobs_animal."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from helpers.cli import run
from retromesh.errors import LossWarning
from retromesh.formats import b3d
from retromesh.formats.b3d import samples
from retromesh.luanti.clipsback import ClipNotice, fold_edited_clips, lua_fields
from retromesh.luanti.model import Clip, Look, ModWorld, Registration
from retromesh.luanti.scene import apply
from test_luanti_scene import COW, _cow_world, needs_corpus

CLIPS = (Clip("walk", 0, 20, 24), Clip("run", 0, 20, 48), Clip("stand", 24, 40, 24),
         Clip("idle", 40, 48, 12))


@pytest.fixture(scope="module")
def wiggle(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wiggle") / "wiggle.b3d"
    path.write_bytes(retromesh.to_bytes(retromesh.from_scene(samples.wiggle_scene(), "b3d")))
    return path


def _dressed(path: Path, clips=CLIPS, api: str = "mobs_redo") -> retromesh.Scene:
    reg = Registration("test:wiggle", api, "test", path.name, looks=(Look("test:wiggle", ()),),
                       clips=clips, source="init.lua:3")
    return apply(ModWorld([reg], [], {}), path.name, retromesh.load(path))


def _clip(scene: retromesh.Scene, name: str) -> retromesh.Animation:
    return next(a for a in scene.animations if a.name == name)


def _back(scene: retromesh.Scene) -> tuple[b3d.B3dFile, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = retromesh.to_bytes(retromesh.from_scene(scene, "b3d"))
    return retromesh.read(data, format="b3d"), caught


def _keys(doc: b3d.B3dFile) -> dict[str, np.ndarray]:
    """Each bone's KEYS records (frame, position/rotation...), by bone name."""
    out = {}
    for node in (c for c in doc.chunks() if isinstance(c, b3d.NodeChunk)):
        keys = [c for c in node.children if isinstance(c, b3d.Keys)]
        for k in keys:
            out[f"{node.name.decode()}:{k.flags}"] = k.keys
    return out


def _anim_frames(doc: b3d.B3dFile) -> int:
    return next(c for c in doc.chunks() if isinstance(c, b3d.AnimChunk)).frames


def _turn(anim: retromesh.Animation, node: int, degrees: float) -> None:
    """Turn ``node``'s rotation keys of ``anim`` about X (an edit as a user makes one)."""
    from retromesh.transforms import quat_multiply
    half = np.radians(degrees) / 2
    q = np.array([np.sin(half), 0.0, 0.0, np.cos(half)])
    for c in anim.channels:
        if c.node == node and c.path == "rotation":
            c.values = quat_multiply(np.broadcast_to(q, c.values.shape), c.values).astype(np.float32)


def test_unedited_clips_give_the_model_back(wiggle):
    """What the model without its mod gives (the file's own bytes once the B3D way back is
    byte-exact: test_luanti_scene checks that on the cow)."""
    scene = _dressed(wiggle)
    assert fold_edited_clips(scene) is scene
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no notice either
        got = retromesh.to_bytes(retromesh.from_scene(scene, "b3d"))
    assert got == retromesh.to_bytes(retromesh.from_scene(retromesh.load(wiggle), "b3d"))


def test_an_edited_clip_goes_back_to_its_frames_and_nothing_else_changes(wiggle):
    scene = _dressed(wiggle)
    _turn(_clip(scene, "stand"), 2, 30)
    doc, caught = _back(scene)
    # (idle begins on the frame stand ends on)
    assert [str(w.message) for w in caught if issubclass(w.category, LossWarning)] == [
        "clip 'idle' (unedited) plays Lua frames 40–48, which the edited 'stand' now fills: "
        "it plays the edit too"]
    before, after = _keys(retromesh.read(wiggle)), _keys(doc)
    assert before.keys() == after.keys() and _anim_frames(doc) == 49
    for name, k in after.items():
        old = before[name]
        assert np.array_equal(k["frame"], old["frame"]), name        # every frame keyed as before
        changed = np.flatnonzero([not np.array_equal(a, b) for a, b in zip(k, old)])
        if name == "bone1:4":        # node 2 of the scene is the second bone
            # the stand clip: Lua frames 24..40, B3D key frames 25..41
            assert set(k["frame"][changed]) == set(range(25, 42)), k["frame"][changed]
        else:
            assert not len(changed), name


def test_an_unedited_clip_on_edited_frames_is_told_and_agreeing_edits_are_one(wiggle):
    scene = _dressed(wiggle)
    _turn(_clip(scene, "walk"), 3, 20)
    _, caught = _back(scene)
    notes = [str(w.message) for w in caught if w.category is ClipNotice]
    assert notes == ["clip 'run' (unedited) plays Lua frames 0–20, which the edited 'walk' now "
                     "fills: it plays the edit too"]
    # run edited alike (the same turn): one edit, written once, nothing reported
    scene = _dressed(wiggle)
    _turn(_clip(scene, "walk"), 3, 20)
    _turn(_clip(scene, "run"), 3, 20)
    once, caught = _back(scene)
    assert not [w for w in caught if issubclass(w.category, LossWarning)]
    only_walk = _dressed(wiggle)
    _turn(_clip(only_walk, "walk"), 3, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _keys(once)["bone2:4"].tobytes() == _keys(_back(only_walk)[0])["bone2:4"].tobytes()


def test_a_conflicting_edit_of_shared_frames_is_reported_and_the_first_written(wiggle):
    scene = _dressed(wiggle)
    _turn(_clip(scene, "walk"), 3, 20)
    _turn(_clip(scene, "run"), 3, -40)
    doc, caught = _back(scene)
    losses = [str(w.message) for w in caught if w.category is LossWarning]
    assert losses == ["clips 'walk' and 'run' share Lua frames 0–20 and were edited differently: "
                      "'walk''s edit is written, 'run''s is not"]
    only_walk = _dressed(wiggle)
    _turn(_clip(only_walk, "walk"), 3, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _keys(doc)["bone2:4"].tobytes() == _keys(_back(only_walk)[0])["bone2:4"].tobytes()


def _stretch(anim: retromesh.Animation, factor: float) -> None:
    for c in anim.channels:
        c.times = (c.times.astype(np.float64) * factor).astype(np.float32)


@pytest.mark.parametrize("api, fields", [
    ("mobs_redo", "walk_start = 0, walk_end = 30, run_start = 0, run_end = 30, stand_start = 34, "
                  "stand_end = 50, idle_start = 50, idle_end = 58"),
    ("player_api", "walk = {x = 0, y = 30}, run = {x = 0, y = 30}, stand = {x = 34, y = 50}, "
                   "idle = {x = 50, y = 58}"),
    ("creatura", "walk = {range = {x = 0, y = 30}}, run = {range = {x = 0, y = 30}}, "
                 "stand = {range = {x = 34, y = 50}}, idle = {range = {x = 50, y = 58}}")])
def test_a_longer_clip_moves_the_later_ones_and_prints_their_lua_fields(wiggle, api, fields):
    scene = _dressed(wiggle, api=api)
    stand_before = _clip(scene, "stand")
    _stretch(_clip(scene, "walk"), 1.5)          # 20 frames -> 30
    doc, caught = _back(scene)
    notes = [str(w.message) for w in caught if w.category is ClipNotice]
    assert notes[0] == ("the edited clip 'walk' changed length and the frames after moved: in "
                        f"the mod's Lua, test:wiggle (init.lua:3), set these fields of its animation table: "
                        f"{fields}")
    assert _anim_frames(doc) == 49 + 10
    # the moved clips play as before from their new frames
    path = wiggle.parent / "moved" / "wiggle.b3d"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(retromesh.to_bytes(doc))
    moved = (Clip("walk", 0, 30, 24), Clip("run", 0, 30, 48), Clip("stand", 34, 50, 24),
             Clip("idle", 50, 58, 12))
    again = _dressed(path, moved, api)
    for name in ("stand", "idle"):
        a, b = _clip(again, name), next(x for x in _dressed(wiggle).animations if x.name == name)
        for ca, cb in zip(a.channels, b.channels, strict=True):
            assert np.allclose(ca.sample(cb.times), cb.values, atol=1e-5), (name, ca.node, ca.path)
    walk = _clip(again, "walk")
    assert walk.duration == pytest.approx(30 / 24)
    assert stand_before.duration == pytest.approx(_clip(again, "stand").duration)


def test_lua_fields_per_api():
    assert lua_fields("mcl_mobs", "stand", 0, 79.5) == "stand_start = 0, stand_end = 79.5"
    assert lua_fields("player_api", "lay", 162, 166) == "lay = {x = 162, y = 166}"
    assert lua_fields("mobkit", "walk", 1, 2) == "walk = {range = {x = 1, y = 2}}"


@needs_corpus
def test_the_cow_with_a_longer_walk(tmp_path):
    """The cow's walk (85–114 at 20) made twice as long in a GLB: through ``retromesh convert``
    the B3D gets the walk on 58 frames, the later clips move by 29 and convert prints the
    fields to put into cow.lua."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = apply(_cow_world(), "mobs_cow.b3d", retromesh.load(COW))
    assert fold_edited_clips(scene) is scene                     # unedited: not rewritten
    _stretch(_clip(scene, "walk"), 2.0)
    glb = tmp_path / "cow.glb"
    retromesh.save(scene, glb)
    res = run("convert", str(glb), "-o", str(tmp_path / "mobs_cow.b3d"))
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert ("the edited clip 'walk' changed length and the frames after moved: in the mod's Lua, "
            "mobs_animal:cow (cow.lua:21), set these fields of its animation table: walk_start = 85, "
            "walk_end = 143, run_start = 149, run_end = 169, punch_start = 174, punch_end = 189, "
            "die_start = 194, die_end = 214") in text, res.output
    before, after = retromesh.read(COW), retromesh.read(tmp_path / "mobs_cow.b3d")
    assert _anim_frames(after) == _anim_frames(before) + 29
