"""Lost Saga: a model converted to GLB and back without an edit is the same bytes, companions
(.skl, .ani, material script) included; an edit changes what it edits and nothing else (issue 32,
docs/lossless.md). The GLB stays valid (Khronos validator 0/0)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from conftest import EXAMPLES, corpus_params
from helpers.exact import plain_trip
from retromesh import LossWarning, batch
from retromesh.scene import Animation, Channel, Mesh, MorphTarget, Node, Primitive, Scene, Skin

MODELS = [pytest.param(EXAMPLES / "lostsaga" / n, id=n)
          for n in ("column.msh", "column.skl", "column_wave.ani")]


@pytest.mark.parametrize("path", MODELS + corpus_params("lostsaga", "*.msh", "*.skl", "*.ani", "*.cms"))
def test_unedited_model_comes_back_byte_for_byte(path, tmp_path):
    assert plain_trip(path, tmp_path, validate=True) == {}


def _column_glb(tmp_path):
    src = EXAMPLES / "lostsaga" / "column.msh"
    glb = tmp_path / "column.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.MissingTextureWarning)
        retromesh.convert(src, glb, **batch.companions(src))
    return src, glb


def _back(scene, tmp_path):
    out = tmp_path / "back"
    retromesh.save(scene, out / "column.msh")
    return {p.name: p for p in out.iterdir()}


def test_moved_bone_changes_that_bone_only(tmp_path):
    src, glb = _column_glb(tmp_path)
    scene = retromesh.load(glb)
    node = next(i for i, n in enumerate(scene.nodes) if n.name == "Bip01 Spine2")
    scene.nodes[node].translation = scene.nodes[node].translation + (0.25, 0.0, 0.0)
    back = _back(scene, tmp_path)
    for name in ("column.msh", "column_wave.ani", "column.txt"):
        assert back[name].read_bytes() == (src.parent / name).read_bytes(), name
    was, now = retromesh.read(src.with_suffix(".skl")), retromesh.read(back["column.skl"])
    k = [b.name for b in was.bones].index(b"Bip01 Spine2")
    changed = {(i, f) for f in was.poses.dtype.names for i in range(len(was.poses))
               if was.poses[f][i].tobytes() != now.poses[f][i].tobytes()}
    assert changed == {(k, "local_position")}
    assert now.poses["local_position"][k][0] == pytest.approx(0.25)


def test_moved_key_changes_that_key_only(tmp_path):
    src, glb = _column_glb(tmp_path)
    scene = retromesh.load(glb)
    c = next(c for c in scene.animations[0].channels if c.path == "translation")
    c.values[3] = c.values[3] + np.float32(0.5)
    back = _back(scene, tmp_path)
    was, now = retromesh.read(src.parent / "column_wave.ani"), retromesh.read(back["column_wave.ani"])
    bone = scene.nodes[c.node].name.encode()
    for t, u in zip(was.tracks, now.tracks):
        rows = [i for i in range(len(t.keys)) if t.keys[i].tobytes() != u.keys[i].tobytes()]
        assert rows == ([3] if t.bone == bone else []), t.bone
    for name in ("column.msh", "column.skl", "column.txt"):
        assert back[name].read_bytes() == (src.parent / name).read_bytes(), name


def test_edited_material_writes_the_script_from_the_scene(tmp_path):
    _, glb = _column_glb(tmp_path)
    scene = retromesh.load(glb)
    scene.materials[0].extras["shader_group"] = "Static"
    text = _back(scene, tmp_path)["column.txt"].read_text()
    assert "Static" in text and "//" not in text


def _morph_scene(skinned: bool) -> Scene:
    sc = Scene()
    p = Primitive(positions=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
                  indices=np.array([0, 1, 2], np.uint32),
                  targets=[MorphTarget(positions=np.array([[0, 0, 1]] * 3, np.float32))])
    if skinned:
        p.joints = np.zeros((3, 4), np.uint16)
        p.weights = np.tile([1.0, 0, 0, 0], (3, 1)).astype(np.float32)
    m = sc.add_mesh(Mesh(name="blob", primitives=[p], weights=[0.0]))
    bone = sc.add_node(Node(name="bone"))
    node = Node(name="blob", mesh=m, skin=sc.add_skin(Skin(joints=[bone])) if skinned else None)
    ni = sc.add_node(node)
    sc.animations.append(Animation(name="swell", channels=[
        Channel(ni, "weights", np.array([0.0, 1.0]), np.array([[0.0], [1.0]])),
        Channel(bone, "translation", np.array([0.0, 1.0]), np.array([[0, 0, 0], [1, 0, 0.0]]))]))
    return sc


@pytest.mark.parametrize("ext", ["msh", "skl", "ani", "cms"])
@pytest.mark.parametrize("skinned", [False, True], ids=["static", "skinned"])
def test_morph_weight_animation_is_dropped_and_named(ext, skinned, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = retromesh.save(_morph_scene(skinned), tmp_path / f"blob.{ext}")
    assert written
    said = " ".join(str(w.message) for w in caught if issubclass(w.category, LossWarning))
    assert "morph target" in said


def _without_records(scene: Scene) -> Scene:
    """The scene as a GLB of the previous release holds it: no records of issue 32."""
    scene.extras.pop("lostsaga_script", None)
    scene.extras.get("lostsaga_skeleton", {}).pop("exact", None)
    for a in scene.extras.get("lostsaga_animations", []):
        a.pop("exact", None)
    for m in scene.meshes:
        m.extras.pop("lostsaga_exact", None)
    return scene


@pytest.mark.parametrize("path", corpus_params("lostsaga", "*.msh", "*.ani") + MODELS[:1])
def test_glb_without_records_converts_back_to_the_same_values(path, tmp_path):
    glb = tmp_path / "m.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(path, glb, **batch.companions(path))
        written = retromesh.save(_without_records(retromesh.load(glb)), tmp_path / "back" / path.name)
    for p in written:
        if p.suffix == ".txt":
            continue
        was, now = retromesh.read(path.parent / p.name), retromesh.read(p)
        for a, b in _float_arrays(was, now):
            assert np.allclose(a, b, atol=2e-6, rtol=0), p.name


def _float_arrays(was, now):
    if hasattr(was, "tracks"):
        for t, u in zip(was.tracks, now.tracks):
            q0 = t.keys["rotation"] / np.linalg.norm(t.keys["rotation"], axis=1)[:, None]
            yield np.abs(np.einsum("ij,ij->i", q0, u.keys["rotation"])), np.ones(len(q0))
            yield t.keys["translation"], u.keys["translation"]
    elif hasattr(was, "normals"):
        yield was.positions, now.positions
        yield was.normals, now.normals
    elif hasattr(was, "poses"):
        yield was.poses["local_position"], now.poses["local_position"]
