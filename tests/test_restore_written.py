"""retromesh.restore's records of the values as written (keep_near, keep_written): what an editor
gives back a hair off comes back bit for bit, an edit stays an edit. Without Blender: its noise
is imitated (units in the last place, UVs flipped twice, quaternions of the other sign); the
Blender tier (tests/test_blender_exact.py) checks the real thing."""
from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import retromesh
from conftest import EXAMPLES
from helpers.exact import differing, inputs_of
from retromesh import batch, restore_editor
from retromesh.extras import BLENDER_MARK


def test_near_values_come_back_bit_for_bit_and_edits_stay():
    rng = np.random.default_rng(7)
    wrote = (rng.standard_normal((500, 3)) * 20).astype(np.float32)
    wrote[:3] = 0.0
    wrote[3] = -0.0
    rec = restore_editor.keep_near(wrote, "key")
    now = (wrote + rng.uniform(-2e-5, 2e-5, wrote.shape)).astype(np.float32)
    now[10, 2] += 0.5                                   # an edit
    now[11, 0] += rec["m"] * 2.0 ** rec["e"]            # an edit of a multiple of the modulus
    got = now.copy()
    rows = restore_editor.put_back_near(got, rec)
    assert np.flatnonzero(~rows).tolist() == [10, 11]
    assert got[rows].tobytes() == wrote[rows].tobytes()
    assert got[~rows].tobytes() == now[~rows].tobytes()
    q = -wrote[:, [0, 1, 2, 0]]
    rec = restore_editor.keep_near(wrote[:, [0, 1, 2, 0]], "key")
    assert restore_editor.put_back_near(q, rec, either_sign=True).all()
    assert q.tobytes() == wrote[:, [0, 1, 2, 0]].tobytes()


def test_near_record_that_does_not_fit_changes_nothing():
    wrote = np.ones((4, 3), np.float32)
    rec = restore_editor.keep_near(wrote, "position")
    for bad in (None, {}, {**rec, "n": 3}, {**rec, "g": "!"}, {**rec, "e": 10 ** 9}):
        now = wrote + np.float32(1e-7)
        assert not restore_editor.put_back_near(now, bad).any()


def _double_flip(uv):
    out = np.array(uv, np.float32)
    out[:, 1] = np.float32(1) - (np.float32(1) - out[:, 1])
    return out


def _blender_like(scene):
    """What Blender does to the values (imitated): a few units in the last place on transforms,
    inverse binds, keys, positions and normals, UVs flipped twice, rotations of either sign."""
    def ulps(a, n=2):
        a = np.asarray(a, np.float32)
        return np.nextafter(a, np.float32(np.inf)) if n == 1 else \
            np.nextafter(np.nextafter(a, np.float32(np.inf)), np.float32(np.inf))
    for node in scene.nodes:
        node.translation = ulps(node.translation).astype(np.float64)
        node.rotation = -ulps(node.rotation, 1).astype(np.float64)
    for skin in scene.skins:
        if skin.inverse_bind_matrices is not None:
            skin.inverse_bind_matrices = ulps(skin.inverse_bind_matrices).astype(np.float64)
    for a in scene.animations:
        for c in a.channels:
            c.values = ulps(c.values, 1) * (-1 if c.path == "rotation" else 1)
    for m in scene.meshes:
        for p in m.primitives:
            p.positions = ulps(p.positions, 1)
            if p.normals is not None:
                p.normals = (p.normals + np.float32(3e-5)).astype(np.float32)
            p.uvs = [_double_flip(u) for u in p.uvs]
    scene.extras[BLENDER_MARK] = "imitated"


@pytest.mark.parametrize("src", [EXAMPLES / "lostsaga" / "column.msh",
                                 EXAMPLES / "lithtech" / "model_v12.abc"], ids=lambda p: p.name)
def test_values_an_editor_moved_a_hair_come_back_as_read(src, tmp_path):
    work = tmp_path / "src"
    work.mkdir()
    for f in inputs_of(src):
        shutil.copy(f, work / f.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = retromesh.load(work / src.name, **batch.companions(work / src.name))
        restore_editor.keep_written(scene, ids=src.suffix == ".abc")
        retromesh.save(scene, tmp_path / "m.glb", embed_images=True)
        scene = retromesh.load(tmp_path / "m.glb")
        _blender_like(scene)
        retromesh.save(scene, tmp_path / "back" / src.name)
    assert differing(inputs_of(src), tmp_path / "back") == {}
    # without the mark the values are taken as they are (plain path: bit for bit only)
    del scene.extras[BLENDER_MARK]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.save(scene, tmp_path / "plain" / src.name)
    assert differing([src], tmp_path / "plain") != {}
