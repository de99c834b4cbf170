"""retromesh.restore_editor's records of the values as written (keep_near, keep_written): what an editor
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


def _loaded_copy(src, tmp_path):
    """``src`` and its companions copied to a folder of their own and read from there."""
    work = tmp_path / "src"
    work.mkdir()
    for f in inputs_of(src):
        shutil.copy(f, work / f.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return retromesh.load(work / src.name, **batch.companions(work / src.name))


@pytest.mark.parametrize("src", [EXAMPLES / "lostsaga" / "column.msh",
                                 EXAMPLES / "lithtech" / "model_v12.abc"], ids=lambda p: p.name)
def test_values_an_editor_moved_a_hair_come_back_as_read(src, tmp_path):
    scene = _loaded_copy(src, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        restore_editor.keep_written(scene, ids=True)
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


def _split_and_shuffle(p, copies, rng):
    """What Blender's exporter does to a primitive (imitated): the vertices ``copies`` written
    twice (the second copy used by the odd triangles that used it), all in another order."""
    from retromesh.scene import Primitive
    n = len(p.positions)
    src = np.concatenate([np.arange(n), copies])
    idx = p.indices.astype(np.int64).copy()
    for k, v in enumerate(copies):
        uses = np.flatnonzero(idx == v)
        idx[uses[1::2]] = n + k
    perm = rng.permutation(len(src))
    inv = np.argsort(perm)
    def cols(a):
        return None if a is None else a[src][perm]
    return Primitive(positions=cols(p.positions), indices=inv[idx].astype(np.uint32),
                     normals=cols(p.normals), tangents=cols(p.tangents),
                     uvs=[cols(u) for u in p.uvs], colors=cols(p.colors), joints=cols(p.joints),
                     weights=cols(p.weights), material=p.material, targets=p.targets,
                     attributes={k: cols(a) for k, a in p.attributes.items()})


def _saved_and_loaded(scene, tmp_path, name="m.glb"):
    restore_editor.keep_written(scene, ids=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.save(scene, tmp_path / name, embed_images=True)
        return retromesh.load(tmp_path / name)


def test_vertices_an_editor_split_and_reordered_come_back_in_their_place(tmp_path):
    """Lost Saga vertices carry no index: the vertex attribute of keep_written finds each
    copy's vertex, the copies that are the same again merge, and the file comes back."""
    src = EXAMPLES / "lostsaga" / "column.msh"
    scene = _saved_and_loaded(_loaded_copy(src, tmp_path), tmp_path)
    _blender_like(scene)
    rng = np.random.default_rng(3)
    for m in scene.meshes:
        m.primitives = [_split_and_shuffle(p, rng.choice(len(p.positions), 9, replace=False), rng)
                        for p in m.primitives]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.save(scene, tmp_path / "back" / src.name)
    assert differing(inputs_of(src), tmp_path / "back") == {}


def _tie_scene():
    from retromesh.scene import Mesh, Node, Primitive, Scene, Skin
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], np.float32)
    joints = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [2, 1, 0, 0], [0, 0, 0, 0]], np.uint16)
    weights = np.array([[1, 0, 0, 0], [0.4, 0.4, 0.2, 0], [0.5, 0.5, 0, 0], [1, 0, 0, 0]],
                       np.float32)
    joints[1, 2] = 2
    prim = Primitive(positions=pos, indices=np.array([0, 1, 2, 2, 1, 3], np.uint32),
                     joints=joints, weights=weights)
    nodes = [Node(name="mesh", mesh=0, skin=0), Node(name="a", children=[2, 3]),
             Node(name="b", translation=[1, 0, 0]), Node(name="c", translation=[0, 1, 0])]
    return Scene(nodes=nodes, meshes=[Mesh(name="m", primitives=[prim])],
                 skins=[Skin(joints=[1, 2, 3])], roots=[0, 1])


def test_equal_weights_an_editor_swapped_come_back_in_their_order(tmp_path):
    scene = _saved_and_loaded(_tie_scene(), tmp_path)
    wrote = scene.meshes[0].primitives[0]
    jw, ww = wrote.joints.copy(), wrote.weights.copy()
    p = scene.meshes[0].primitives[0]
    p.joints = jw[:, [1, 0, 2, 3]]                # the ties swapped, renormalised a hair off
    p.weights = ww[:, [1, 0, 2, 3]] * np.float32(1 - 3e-8)
    p.weights[3] = [0.9, 0.1, 0, 0]               # an edit of a vertex that did not tie
    scene.extras[BLENDER_MARK] = "imitated"
    back = restore_editor.put_back_written(scene).meshes[0].primitives[0]
    assert back.joints[1:3].tobytes() == jw[1:3].tobytes()
    assert back.weights[1:3].tobytes() == ww[1:3].tobytes()
    assert back.weights[3].tolist() == pytest.approx([0.9, 0.1, 0, 0])
    p.weights[1] = [0.3, 0.5, 0.2, 0]             # an edited tie stays the edit
    back = restore_editor.put_back_written(scene).meshes[0].primitives[0]
    assert back.weights[1].tolist() == pytest.approx([0.3, 0.5, 0.2, 0])


def test_split_copies_that_differ_stay_apart(tmp_path):
    scene = _saved_and_loaded(_tie_scene(), tmp_path)
    p = scene.meshes[0].primitives[0]
    rng = np.random.default_rng(5)
    q = _split_and_shuffle(p, np.array([1, 2]), rng)
    ids = q.attributes[restore_editor.VERTEX_ID].astype(int)
    q.positions[np.flatnonzero(ids == 2)[0]] += np.float32(0.25)     # one copy moved: an edit
    scene.meshes[0].primitives = [q]
    scene.extras[BLENDER_MARK] = "imitated"
    back = restore_editor.put_back_written(scene).meshes[0].primitives[0]
    assert len(back.positions) == 5                     # vertex 1 merged, vertex 2 not
    assert back.attributes[restore_editor.VERTEX_ID].tolist() == [0, 1, 2, 2, 3]
    # the same triangles, corner for corner
    assert back.positions[back.indices.astype(int)].tobytes() == \
        q.positions[q.indices.astype(int)].tobytes()
