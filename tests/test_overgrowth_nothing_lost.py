"""Nothing lost: Overgrowth .phxbn/.anm -> .glb -> native keep
every native count and field (the game data glTF has no place for ride in node extras)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from helpers.gltfcheck import assert_valid_many
from retromesh.formats.overgrowth import samples
from retromesh.formats.overgrowth.scene_extras import ANM_KEY, PHXBN_KEY


def _info(doc) -> dict:
    return retromesh.registry.format_of(doc).info(doc)


def _keys(a) -> list:
    """Every per-key field of an .anm except the bone matrices (compared separately)."""
    return [(k.time, None if k.weights is None else k.weights.tobytes(),
             None if k.weapon_mats is None else k.weapon_mats.tobytes(), k.use_mobility,
             None if k.mobility is None else np.asarray(k.mobility).tobytes(),
             k.events, [(ik.filler, ik.path.tolist(), ik.label) for ik in k.ik_bones or []]
             if k.ik_bones is not None else None, k.shape_keys, k.status_keys, k.rotation,
             k.center_offset) for k in a.keyframes]


def _same_anm(a, b) -> None:
    assert _info(a) == _info(b)
    assert (a.version, a.start, a.length, a.looping, a.centered) == \
        (b.version, b.start, b.length, b.looping, b.centered)
    assert _keys(a) == _keys(b)
    for x, y in zip(a.keyframes, b.keyframes):
        assert np.allclose(x.bone_mats, y.bone_mats, atol=1e-5)


def _no_warnings():
    warnings.simplefilter("ignore")


@pytest.mark.parametrize("version", range(5, 12))
@pytest.mark.parametrize("stage", [0, 1])
def test_phxbn_every_version_keeps_its_fields(version, stage, tmp_path):
    _no_warnings()
    doc = samples.phxbn_fixture(version, stage)
    retromesh.write(doc, tmp_path / "s.phxbn")
    opts = {}
    if stage:
        (tmp_path / "m.obj").write_bytes(samples.stick_obj())
        opts["mesh"] = tmp_path / "m.obj"
    retromesh.convert(tmp_path / "s.phxbn", tmp_path / "s.glb", **opts)
    retromesh.convert(tmp_path / "s.glb", tmp_path / "out" / "s.phxbn")
    back = retromesh.read(tmp_path / "out" / "s.phxbn")
    assert _info(back) == _info(doc)
    assert back.version == doc.version and back.rigging_stage == doc.rigging_stage
    assert np.array_equal(back.points, doc.points) and np.array_equal(back.bone_ends, doc.bone_ends)
    for f in ("point_parents", "bone_parents", "bone_masses", "bone_com", "bone_mats"):
        a, b = getattr(doc, f), getattr(back, f)
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b)), f
    assert back.simple_ik == doc.simple_ik
    if stage:
        assert back.control.joints == doc.control.joints
        assert np.array_equal(back.control.hier_parents, doc.control.hier_parents)
    else:                        # no mesh: the file is given back whole
        assert retromesh.to_bytes(back) == retromesh.to_bytes(doc)


@pytest.mark.parametrize("version,centered", [(v, False) for v in range(12)] + [(10, True), (11, True)])
def test_anm_every_version_keeps_its_fields(version, centered, tmp_path):
    _no_warnings()
    retromesh.write(samples.stick_skeleton(), tmp_path / "sk.phxbn")
    anm = samples.anm_fixture(version, centered=centered)
    retromesh.write(anm, tmp_path / "a.anm")
    retromesh.convert(tmp_path / "a.anm", tmp_path / "a.glb", skeleton=tmp_path / "sk.phxbn")
    retromesh.convert(tmp_path / "a.glb", tmp_path / "b.anm")
    _same_anm(anm, retromesh.read(tmp_path / "b.anm"))


def test_examples_round_trip_and_extras_in_nodes_only(tmp_path):
    """The kept data live on the root node (Blender imports node extras as custom properties
    but not animation extras): dropping every animation extra loses nothing."""
    _no_warnings()
    ex = tmp_path / "ex"
    paths = {p.name: p for p in samples.write_example(ex)}
    glb = tmp_path / "s.glb"
    retromesh.convert(paths["stick.phxbn"], glb, mesh=paths["stick.obj"],
                      animations=[paths["wave.anm"], paths["walk.anm"]])
    assert_valid_many([glb])
    scene = retromesh.load(glb)
    root = next(n for n in scene.nodes if n.extras.get("phxbn_root"))
    assert isinstance(root.extras[PHXBN_KEY], str)
    assert set(root.extras[ANM_KEY]) == {"wave", "walk"}
    for a in scene.animations:
        a.extras.clear()
    out = tmp_path / "out" / "stick.phxbn"
    retromesh.save(scene, out)
    back = retromesh.read(out)
    orig = retromesh.read(paths["stick.phxbn"])
    assert _info(back) == _info(orig)           # 7 points, 5 ragdoll joints, 5 IK bones
    assert back.control.joints == orig.control.joints and back.simple_ik == orig.simple_ik
    # the animations' own extras are gone: the scene's record still names their files
    _same_anm(retromesh.read(paths["wave.anm"]), retromesh.read(out.with_name("wave.anm")))
    _same_anm(retromesh.read(paths["walk.anm"]), retromesh.read(out.with_name("walk.anm")))


def test_edited_skeleton_takes_the_edit_and_keeps_the_rest(tmp_path):
    _no_warnings()
    ex = tmp_path / "ex"
    paths = {p.name: p for p in samples.write_example(ex)}
    scene = retromesh.load(paths["stick.phxbn"])
    skin = scene.skins[0]
    k = next(i for i, j in enumerate(skin.joints) if scene.nodes[j].extras.get("phxbn_bone") == 3)
    bind = np.linalg.inv(skin.inverse_bind_matrices)
    bind[k, :3, 3] += [0.0, 0.1, 0.0]                   # move bone 3 in the bind pose
    skin.inverse_bind_matrices = np.linalg.inv(bind)
    # one bone moved alone breaks the X-mirror symmetry the engine demands
    with pytest.raises(retromesh.RefusedError, match="not symmetrical"):
        retromesh.save(scene, tmp_path / "e.phxbn")
    assert not (tmp_path / "e.phxbn").exists()
    retromesh.save(scene, tmp_path / "e.phxbn", force=True)
    back, orig = retromesh.read(tmp_path / "e.phxbn"), retromesh.read(paths["stick.phxbn"])
    assert _info(back) == _info(orig)
    moved = np.abs(back.points - orig.points).max(axis=1) > 1e-4
    assert moved.any() and not moved.all()
    assert back.simple_ik == orig.simple_ik
