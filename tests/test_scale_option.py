"""The generic ``scale`` load option (retromesh.units): a uniform scale of the whole scene."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import retromesh
from retromesh import DocumentError, UnsupportedError
from retromesh.formats.lugaru import samples as lugaru_samples
from retromesh.formats.overgrowth import samples as og_samples
from retromesh.formats.westwood import samples as vsamples
from retromesh.scene import Animation, Channel, Mesh, MorphTarget, Node, Primitive, Scene, Skin
from retromesh.units import check_scale, scale_scene


def _posed(scene: Scene, t: float = 0.0) -> np.ndarray:
    """World positions of every vertex (skinned by the first skin when there is one)."""
    for a in scene.animations:
        for c in a.channels:
            setattr(scene.nodes[c.node], c.path, c.sample(np.array([t]))[0])
    world = scene.world_matrices()
    out = []
    for ni, n in enumerate(scene.nodes):
        if n.mesh is None:
            continue
        for p in scene.meshes[n.mesh].primitives:
            pos = p.positions.astype(float)
            if p.targets:
                pos = pos + p.targets[0].positions * 0.5
            if n.skin is not None:
                sk = scene.skins[n.skin]
                mats = world[sk.joints] @ sk.inverse_bind_matrices
                h = np.c_[pos, np.ones(len(pos))]
                pos = np.einsum("vk,vkij,vj->vi", p.weights, mats[p.joints.astype(int)], h)[:, :3]
            else:
                pos = pos @ world[ni][:3, :3].T + world[ni][:3, 3]
            out.append(pos)
    return np.concatenate(out)


def _scene() -> Scene:
    s = Scene(name="t")
    root = s.add_node(Node(name="root", translation=[1.0, 2.0, 3.0], rotation=[0, 0.6, 0, 0.8],
                           scale=[2.0, 2.0, 2.0]))
    j0 = s.add_node(Node(name="j0", translation=[0.5, 0, 0]), parent=root)
    j1 = s.add_node(Node(name="j1", translation=[0, 1.0, 0], rotation=[0.6, 0, 0, 0.8]), parent=j0)
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 2, 1]], np.float32)
    prim = Primitive(positions=pos, indices=np.array([0, 1, 2, 1, 3, 2], np.uint32),
                     joints=np.array([[0, 1, 0, 0]] * 4, np.uint16),
                     weights=np.array([[0.5, 0.5, 0, 0]] * 4, np.float32),
                     targets=[MorphTarget(positions=np.full((4, 3), 0.25, np.float32))])
    m = s.add_mesh(Mesh(primitives=[prim]))
    world = s.world_matrices()
    sk = s.add_skin(Skin(joints=[j0, j1], inverse_bind_matrices=np.linalg.inv(world[[j0, j1]])))
    s.add_node(Node(name="mesh", mesh=m, skin=sk), parent=root)
    s.animations.append(Animation(name="a", channels=[
        Channel(j1, "translation", np.array([0.0, 1.0]), np.array([[0, 1.0, 0], [0, 3.0, 1]])),
        Channel(j0, "translation", np.array([0.0, 1.0]),
                np.array([[0, 0, 0], [0.5, 0, 0], [0, 0, 0], [0, 0, 0], [1.5, 0, 0], [0, 0, 0]]),
                "CUBICSPLINE")]))
    return s.validate()


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(0, 1))
def test_every_length_scales_and_nothing_else(factor, t):
    a, b = _scene(), scale_scene(_scene(), factor)
    assert np.allclose(_posed(b, t), factor * _posed(a, t), rtol=1e-4, atol=1e-4 * factor)
    assert np.allclose(b.nodes[0].scale, 2) and np.allclose(b.nodes[0].rotation, [0, 0.6, 0, 0.8])
    assert factor == 1.0 or b.extras["scale"] == factor


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "big", None])
def test_bad_scale_is_refused_clearly(bad):
    with pytest.raises(DocumentError, match="scale must be"):
        check_scale(bad)


def test_load_and_convert_take_scale(tmp_path):
    (tmp_path / "box.solid").write_bytes(retromesh.to_bytes(lugaru_samples.solid_box()))
    plain = retromesh.load(tmp_path / "box.solid")
    metres = retromesh.load(tmp_path / "box.solid", scale="0.012")     # CLI strings too
    assert np.allclose(_posed(metres), 0.012 * _posed(plain), atol=1e-6)
    retromesh.convert(tmp_path / "box.solid", tmp_path / "m.glb", scale=0.5)
    back = retromesh.load(tmp_path / "m.glb")
    assert np.allclose(_posed(back), 0.5 * _posed(plain), atol=1e-5)
    with pytest.raises(DocumentError, match="scale must be"):
        retromesh.load(tmp_path / "box.solid", scale=0)
    with pytest.raises(DocumentError, match="scale must be"):
        retromesh.convert(tmp_path / "box.solid", tmp_path / "x.glb", scale=float("nan"))
    assert not (tmp_path / "x.glb").exists()


def test_scale_on_skinned_animated_example(tmp_path):
    """Overgrowth: a skinned, animated scene keeps its pose at every time, scaled."""
    paths = og_samples.write_example(tmp_path)
    phx = next(p for p in paths if p.suffix == ".phxbn")
    obj = next(p for p in paths if p.suffix == ".obj")
    anm = next(p for p in paths if p.suffix == ".anm")
    a = retromesh.load(phx, mesh=obj, animations=[anm])
    b = retromesh.load(phx, mesh=obj, animations=[anm], scale=0.25)
    for t in (0.0, 0.1, 0.3):
        assert np.allclose(_posed(b, t), 0.25 * _posed(a, t), atol=1e-5)


def test_direct_voxel_conversion_refuses_scale(tmp_path):
    vxl = vsamples.write_example(tmp_path)[0]
    with pytest.raises(UnsupportedError, match="scale"):
        retromesh.convert(vxl, tmp_path / "t.vox", scale=2)
