"""Lugaru .solid: corpus round trips, scene conversion, glTF validity, from_scene, robustness."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import corpus_files, corpus_params
from helpers.gltfcheck import assert_valid_many
from helpers.malformed import assert_malformed_safe, read_or_format_error
from retromesh import DocumentError, FormatError
from retromesh.formats.lugaru import samples
from retromesh.formats.lugaru.scene_write import scene_to_solid as from_scene
from retromesh.formats.lugaru.solid import TRI_DTYPE, SolidFile, signed_volume
from retromesh.scene import Mesh, Node, Primitive, Scene

SOLIDS = corpus_files("solid", "*.solid")


def _same(a: SolidFile, b: SolidFile) -> bool:
    return (np.array_equal(a.vertices.view(np.uint32), b.vertices.view(np.uint32))
            and a.triangles.tobytes() == b.triangles.tobytes() and a.trailing == b.trailing)


@pytest.mark.parametrize("path", corpus_params("solid", "*.solid"))
def test_corpus_byte_round_trip(path):
    data = path.read_bytes()
    doc = retromesh.read(path)
    assert retromesh.to_bytes(doc) == data
    assert len(data) == 4 + 12 * len(doc.vertices) + 36 * len(doc.triangles)
    t = doc.triangles
    # the "unused" shorts of the shipped exporter
    assert np.array_equal(t["u0"], t["i1"]) and np.array_equal(t["u1"], t["i2"])
    assert not np.any(t["u2"])


@pytest.mark.parametrize("path", corpus_params("solid", "*.solid"))
def test_corpus_scene(path):
    doc = retromesh.read(path)
    scene = retromesh.load(path)
    prim = scene.meshes[0].primitives[0]
    assert prim.triangle_count == len(doc.triangles)
    # outward CCW after conversion
    tri = prim.indices.reshape(-1, 3)
    assert signed_volume(prim.positions, tri) > 0
    assert np.allclose(np.linalg.norm(prim.normals, axis=1), 1, atol=1e-5)
    # every corner's UV survives (split vertices)
    gx = doc.triangles["gx"]
    assert np.allclose(np.sort(prim.uvs[0][tri][:, :, 0].ravel()), np.sort(gx.ravel()))
    name = path.name.split("__")[-1]
    is_char = scene.nodes[0].extras["lugaru_character"]
    # Belt is the clothes drawn over the characters: turned and UV-flipped as they are
    assert is_char == (name.startswith(("Body", "Wolf", "Rabbit", "Belt")))


def test_corpus_gltf_valid(tmp_path):
    if not SOLIDS:
        pytest.skip("no corpus")
    outs = []
    for p in SOLIDS:
        out = tmp_path / (p.stem + ".glb")
        retromesh.convert(p, out)
        outs.append(out)
    infos = assert_valid_many(outs)
    for info, p in zip(infos, SOLIDS):
        doc = retromesh.read(p)
        assert info["totalTriangleCount"] == len(doc.triangles)
        assert info["maxUVs"] == 1
    import trimesh
    m = trimesh.load(outs[0], force="mesh")
    assert len(m.faces) == len(retromesh.read(SOLIDS[0]).triangles)


@pytest.mark.parametrize("path", SOLIDS[:4] + [p for p in SOLIDS if "Rabbit" in p.name], ids=lambda p: p.name)
def test_solid_gltf_solid_round_trip(path, tmp_path):
    doc = retromesh.read(path)
    retromesh.convert(path, tmp_path / "a.glb")
    back = retromesh.load(tmp_path / "a.glb")
    out = from_scene(back)          # winding and UV convention from the recorded extras
    assert len(out.triangles) == len(doc.triangles)
    # same positions (as a set) and same per-corner UVs per triangle
    assert np.allclose(np.unique(out.vertices.astype(float), axis=0),
                       np.unique(doc.vertices.astype(float), axis=0), atol=1e-6)
    p_in = doc.vertices.astype(float)[doc.indices()]
    p_out = out.vertices.astype(float)[out.indices()]
    order_in = np.lexsort(p_in.reshape(len(p_in), -1).T)
    order_out = np.lexsort(p_out.reshape(len(p_out), -1).T)
    assert np.allclose(p_in[order_in], p_out[order_out], atol=1e-6)
    assert np.allclose(doc.triangles["gx"][order_in], out.triangles["gx"][order_out], atol=1e-6)
    assert np.allclose(doc.triangles["gy"][order_in], out.triangles["gy"][order_out], atol=1e-6)
    assert (signed_volume(out.vertices, out.indices()) < 0) == \
        (signed_volume(doc.vertices, doc.indices()) < 0)
    # authoring writes (i1, i2, 0)
    assert np.array_equal(out.triangles["u0"], out.triangles["i1"]) and not np.any(out.triangles["u2"])


def test_from_scene_save_and_limit(tmp_path):
    box = samples.solid_box()
    scene = retromesh.registry.get("solid").to_scene(box)
    retromesh.save(scene, tmp_path / "b.solid")
    again = retromesh.read(tmp_path / "b.solid")
    assert len(again.triangles) == 12 and len(again.vertices) == 8
    n = 40000
    big = Scene(nodes=[Node(mesh=0)], roots=[0], meshes=[Mesh(primitives=[Primitive(
        positions=np.random.default_rng(0).random((n, 3)), indices=np.arange(n - n % 3))])])
    with pytest.raises(DocumentError, match="32767"):
        retromesh.save(big, tmp_path / "big.solid")


def test_bad_index_and_counts():
    doc = samples.solid_box()
    data = bytearray(retromesh.to_bytes(doc))
    data[4 + 12 * 8: 4 + 12 * 8 + 2] = (99).to_bytes(2, "big")
    with pytest.raises(FormatError, match="vertex index"):
        retromesh.read(bytes(data), format="solid")
    with pytest.raises(FormatError):
        retromesh.read(b"\xff\xff\x00\x01", format="solid")


@pytest.mark.parametrize("path", SOLIDS[:3], ids=lambda p: p.name)
def test_malformed_corpus(path):
    assert_malformed_safe(path.read_bytes(), "x.solid", scene=True, endian=">")


_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e4, max_value=1e4)


@st.composite
def solid_docs(draw):
    nv = draw(st.integers(1, 12))
    nt = draw(st.integers(0, 12))
    verts = np.array(draw(st.lists(st.tuples(_f32, _f32, _f32), min_size=nv, max_size=nv)), ">f4")
    t = np.zeros(nt, TRI_DTYPE)
    for name in ("i0", "i1", "i2"):
        t[name] = draw(st.lists(st.integers(0, nv - 1), min_size=nt, max_size=nt))
    for name in ("u0", "u1", "u2"):
        t[name] = draw(st.lists(st.integers(-32768, 32767), min_size=nt, max_size=nt))
    t["gx"] = np.array(draw(st.lists(_f32, min_size=3 * nt, max_size=3 * nt)), ">f4").reshape(nt, 3)
    t["gy"] = np.array(draw(st.lists(_f32, min_size=3 * nt, max_size=3 * nt)), ">f4").reshape(nt, 3)
    trailing = draw(st.binary(max_size=3))
    return SolidFile(verts.reshape(nv, 3), t, trailing)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(solid_docs())
def test_hypothesis_round_trip(doc):
    data = retromesh.to_bytes(doc)
    back = retromesh.read(data, format="solid")
    assert _same(doc, back)
    assert retromesh.to_bytes(back) == data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(data, "x.solid", scene=True)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_hypothesis_mutations(data):
    base = bytearray(retromesh.to_bytes(samples.solid_box()))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(base) - 1))
        base[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(base)))
    read_or_format_error(bytes(base[:cut]), "x.solid", scene=True)


@pytest.mark.parametrize("path", [p for p in SOLIDS if "Rabbit" in p.name], ids=lambda p: p.name)
def test_foreign_upright_character_written_as_lugaru_stores_it(path):
    """An upright glTF mesh saved with character=True is stored upside down and CW-outward,
    with v = gy, so that it comes back as the same upright character."""
    doc = retromesh.read(path)
    scene = retromesh.load(path)
    world = scene.world_matrices()[0]
    prim = scene.meshes[0].primitives[0]
    upright = (np.c_[prim.positions.astype(float), np.ones(len(prim.positions))] @ world.T)[:, :3]
    foreign = Scene(nodes=[Node(mesh=0)], roots=[0], meshes=[Mesh(primitives=[Primitive(
        positions=upright, indices=prim.indices, uvs=[prim.uvs[0]])])])
    out = from_scene(foreign, character=True)
    assert signed_volume(out.vertices, out.indices()) < 0          # CW-outward like the game's
    assert np.allclose(np.unique(out.vertices.astype(float), axis=0),
                       np.unique(doc.vertices.astype(float), axis=0), atol=1e-4)
    again = retromesh.registry.get("solid").to_scene(out)
    assert again.nodes[0].extras["lugaru_character"]
    p2 = again.meshes[0].primitives[0]
    w2 = (np.c_[p2.positions.astype(float), np.ones(len(p2.positions))] @ again.world_matrices()[0].T)
    a = np.unique(np.round(w2[:, :3], 3), axis=0)
    b = np.unique(np.round(upright, 3), axis=0)
    assert a.shape == b.shape and np.abs(a - b).max() < 2e-3
    assert np.allclose(np.sort(out.triangles["gy"].ravel()), np.sort(doc.triangles["gy"].ravel()),
                       atol=1e-6)


# -- the game's load-time rotations -----------------------------------------------------
def _world_positions(scene: Scene) -> np.ndarray:
    w = scene.world_matrices()[0]
    p = scene.meshes[0].primitives[0].positions.astype(float)
    return (np.c_[p, np.ones(len(p))] @ w.T)[:, :3]


#: per kind of model, the axis of its longest extent after conversion (the game's view)
UPRIGHT = {"TreeTrunk": 1, "Leaves": 1, "Chimney": 1, "Wall": 1, "Body": 1, "Rabbit": 1,
           "Wolf": 1, "Tunnel": 2, "Sword": 2, "Staff": 2, "ThrowingKnife": 2, "Hawk": 0}


@pytest.mark.parametrize("path", [p for p in SOLIDS if p.stem.split("__")[-1] in UPRIGHT],
                         ids=lambda p: p.name)
def test_corpus_models_stand_as_the_game_shows_them(path, tmp_path):
    name = path.stem.split("__")[-1]
    retromesh.convert(path, tmp_path / "m.glb")
    scene = retromesh.load(tmp_path / "m.glb")
    ext = np.ptp(_world_positions(scene), axis=0)
    assert int(np.argmax(ext)) == UPRIGHT[name], ext


@pytest.mark.parametrize("name", ["TreeTrunk", "Leaves", "Bush"])
def test_plants_grow_up_from_the_ground(name):
    path = [p for p in SOLIDS if p.stem.endswith(name)]
    if not path:
        pytest.skip("no corpus")
    p = _world_positions(retromesh.load(path[0]))
    assert p[:, 1].min() > -1 and p[:, 1].max() > 30           # base at y = 0, growing up


def test_kind_rotations_follow_the_game_code():
    from retromesh.formats.lugaru.solid_kinds import ROTATIONS, game_rotate, kind_of_name
    # DoRotation: Y, then Z, then X; Rotate(90, 0, 0) sends +Z to -Y
    assert np.allclose(game_rotate(90, 0, 0) @ [0, 0, 1], [0, -1, 0])
    assert np.allclose(game_rotate(0, 90, 0) @ [1, 0, 0], [0, 0, -1])
    assert np.allclose(game_rotate(0, 0, 90) @ [1, 0, 0], [0, 1, 0])
    assert np.allclose(ROTATIONS["object"], game_rotate(90, 1, 1))
    assert np.allclose(ROTATIONS["platform"], game_rotate(90, 1, 1) @ game_rotate(90, 0, 0))
    assert np.allclose(ROTATIONS["blade"],
                       game_rotate(0, 0, 90) @ game_rotate(0, 90, 0) @ game_rotate(90, 0, 0))
    for r in ROTATIONS.values():
        assert np.allclose(r @ r.T, np.eye(3)) and np.isclose(np.linalg.det(r), 1)
    assert kind_of_name("Models/TreeTrunk.solid") == "object"
    assert kind_of_name("lugaru__Sword") == "blade" and kind_of_name("mine.solid") is None


@pytest.mark.parametrize("path", corpus_params("solid", "*.solid"))
def test_corpus_glb_round_trip_is_byte_identical(path, tmp_path):
    retromesh.convert(path, tmp_path / "m.glb")
    retromesh.convert(tmp_path / "m.glb", tmp_path / "back.solid")
    assert (tmp_path / "back.solid").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", [p for p in SOLIDS if p.stem.split("__")[-1] in
                                  ("Rabbit", "TreeTrunk", "Sword", "Platform", "Belt")],
                         ids=lambda p: p.name)
def test_round_trip_without_extras_uses_the_node_name_and_rotation(path, tmp_path):
    """Blender exports no custom properties by default: the kind comes back from the node's
    name and its rotation, and the file is still byte-identical."""
    retromesh.convert(path, tmp_path / "m.glb")
    scene = retromesh.load(tmp_path / "m.glb")
    for n in scene.nodes:
        n.extras.clear()
    scene.nodes[0].name = path.stem.split("__")[-1]
    assert retromesh.to_bytes(from_scene(scene)) == path.read_bytes()


def test_foreign_upright_tree_is_stored_lying_down():
    """A foreign mesh saved with kind="object" is turned back as Lugaru stores objects."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 10, 0], [0, 0, 1]], np.float32)
    idx = np.array([0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3], np.uint32)
    scene = Scene(nodes=[Node(mesh=0)], roots=[0], meshes=[Mesh(primitives=[Primitive(
        positions=pos, indices=idx, uvs=[np.zeros((4, 2), np.float32)])])])
    out = from_scene(scene, kind="object")
    ext = np.ptp(out.vertices.astype(float), axis=0)
    assert np.argmax(ext) == 2                       # stored along Z, as TreeTrunk.solid
    again = retromesh.registry.get("solid").to_scene(out, kind="object")
    back = np.round(_world_positions(again), 4)
    assert np.allclose(back[np.lexsort(back.T)], pos[np.lexsort(pos.T)], atol=1e-5)


def _info(doc) -> dict:
    return retromesh.registry.format_of(doc).info(doc)


@pytest.mark.parametrize("path", corpus_params("solid", "*.solid"))
def test_solid_info_survives_glb(path, tmp_path):
    retromesh.convert(path, tmp_path / "m.glb")
    retromesh.convert(tmp_path / "m.glb", tmp_path / "m.solid")
    assert _info(retromesh.read(tmp_path / "m.solid")) == _info(retromesh.read(path))


def test_example_box_solid_comes_back_byte_identical(tmp_path):
    path, = samples.write_example(tmp_path / "ex")
    retromesh.convert(path, tmp_path / "b.glb")
    retromesh.convert(tmp_path / "b.glb", tmp_path / "b.solid")
    assert (tmp_path / "b.solid").read_bytes() == path.read_bytes()
