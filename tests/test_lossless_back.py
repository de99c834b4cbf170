"""What a glTF made from a game file carries back into that format: each value comes back as it
was read when the user left it alone, or a LossWarning names it (docs/lossless.md)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from conftest import ROOT
from helpers.gltfcheck import assert_valid
from retromesh import LossWarning
from retromesh.errors import EngineWarning
from retromesh.formats import lithtech
from retromesh.formats.lithtech import abc


def _glb(src, tmp_path, name="mid.glb"):
    glb = tmp_path / name
    retromesh.convert(src, glb)
    assert_valid(glb)
    return glb


# -- LithTech ABC: InternalRadius and SubLOD vertex indices -----------------------------------
def test_abc_radius_and_sublod_come_back_unedited(tmp_path):
    src = ROOT / "examples" / "lithtech" / "model_v12.abc"
    glb = _glb(src, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(glb, tmp_path / "back.abc")
    doc, back = retromesh.read(src), retromesh.read(tmp_path / "back.abc")
    assert back.header.internal_radius == doc.header.internal_radius == 1.5
    was = [lod.vertices["sublod"].tolist() for p in doc.pieces for lod in p.lods]
    assert sum(v != 0 for lod in was for v in lod) == 20
    assert [lod.vertices["sublod"].tolist() for p in back.pieces for lod in p.lods] == was


def test_abc_edited_geometry_recomputes_the_radius_and_warns(tmp_path):
    sc = retromesh.load(_glb(ROOT / "examples" / "lithtech" / "model_v12.abc", tmp_path))
    for m in sc.meshes:
        for p in m.primitives:
            p.positions = p.positions * 3.0
    with pytest.warns(LossWarning, match="internal radius 1.5"):
        doc = lithtech.scene.from_scene(sc)
    far = max(np.linalg.norm(p.lods[0].vertices["location"], axis=1).max() for p in doc.pieces)
    assert doc.header.internal_radius == pytest.approx(far, rel=1e-6) and far > 4.5


def test_abc_sublod_of_a_mesh_with_other_vertices_is_warned(tmp_path):
    sc = retromesh.load(_glb(ROOT / "examples" / "lithtech" / "model_v12.abc", tmp_path))
    mesh = next(m for m in sc.meshes if m.extras.get("sublod"))
    mesh.extras["sublod"] = mesh.extras["sublod"][:-1]
    with pytest.warns(LossWarning, match="SubLOD"):
        doc = lithtech.scene.from_scene(sc)
    assert isinstance(doc, abc.AbcModel)


# -- B3D: UV sets beyond the second, components beyond the second -----------------------------
def _b3d_three_by_three(tris_brushes=(-1,)) -> bytes:
    from retromesh.formats import b3d
    v = np.zeros(4, b3d.vrts_dtype(1, 3, 3))
    v["position"] = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    v["normal"] = (0, 0, -1)
    v["uv"] = np.arange(4 * 9, dtype=np.float32).reshape(4, 3, 3) / 7.0
    mesh = b3d.MeshChunk(-1, [b3d.Vrts(1, 3, 3, v)])
    halves = np.array_split(np.array([[0, 1, 2], [0, 2, 3]], np.int32), len(tris_brushes))
    for b, t in zip(tris_brushes, halves):
        mesh.children.append(b3d.Tris(b, t))
    return b3d.write(b3d.B3dFile(children=[b3d.NodeChunk(b"quad", children=[mesh])]))


@pytest.mark.parametrize("tris", [(-1,), (-1, -1)], ids=["one TRIS", "two TRIS"])
def test_b3d_uv_sets_beyond_two_by_two_come_back(tris, tmp_path):
    src = tmp_path / "uv.b3d"
    src.write_bytes(_b3d_three_by_three(tris))
    glb = _glb(src, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        # what the source file already had: more UV sets than Irrlicht takes (check's warning)
        warnings.filterwarnings("ignore", category=EngineWarning, message=".*b3d.tex_coord_sets")
        retromesh.convert(glb, tmp_path / "back.b3d")
    doc, back = retromesh.read(src), retromesh.read(tmp_path / "back.b3d")
    (va,), (vb,) = ([c.vrts for c in d.root_nodes[0].children] for d in (doc, back))
    assert (vb.tex_coord_sets, vb.tex_coord_set_size) == (3, 3)
    if len(tris) == 1:
        assert np.array_equal(va.vertices["uv"], vb.vertices["uv"])
    else:   # each TRIS gets its own vertices back: compare through the triangles
        ta = np.concatenate([t.triangles for t in doc.root_nodes[0].children[0].tris])
        tb = np.concatenate([t.triangles for t in back.root_nodes[0].children[0].tris])
        assert np.array_equal(va.vertices["uv"][ta], vb.vertices["uv"][tb])


def test_b3d_uv_sets_of_an_edited_mesh_are_warned(tmp_path):
    src = tmp_path / "uv.b3d"
    src.write_bytes(_b3d_three_by_three())
    sc = retromesh.load(_glb(src, tmp_path))
    p = sc.meshes[0].primitives[0]
    p.positions, p.normals = p.positions[:3], p.normals[:3]
    p.uvs = [uv[:3] for uv in p.uvs]
    p.indices = p.indices[:3]
    from retromesh.formats import b3d
    with pytest.warns(LossWarning, match="UV sets beyond the second"):
        b3d.from_scene(sc)


# -- Overgrowth .fzx from a glTF made from one --------------------------------------------------
FZX = ROOT / "examples" / "overgrowth" / "stick.fzx"


def test_fzx_comes_back_byte_identical(tmp_path):
    glb = _glb(FZX, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(glb, tmp_path / "back.fzx")
    assert (tmp_path / "back.fzx").read_bytes() == FZX.read_bytes()
    from retromesh.formats.overgrowth.fzx_scene_write import scene_to_fzx
    sc = retromesh.load(glb)
    sc.nodes[0].children.sort(key=lambda i: sc.nodes[i].name)     # as Blender gives them back
    assert retromesh.to_bytes(scene_to_fzx(sc)) == FZX.read_bytes()


def _same_volume(a, b):
    from retromesh.formats.overgrowth.fzx_scene_read import volume_transform
    (ta, qa), (tb, qb) = volume_transform(a), volume_transform(b)
    assert a.label == b.label
    assert np.allclose(ta, tb, atol=1e-5) and min(abs(qa - qb).max(), abs(qa + qb).max()) < 1e-5
    shape = a.label.split()[-2] if a.label.endswith(b" M") else a.label.split()[-1]
    sa, sb = np.abs(a.scale), np.abs(b.scale)
    if shape == b"Capsule":
        sa, sb = sa[[0, 2]], sb[[0, 2]]
    elif shape == b"Sphere":
        sa, sb = sa.mean(), sb.mean()
    assert np.allclose(sa, sb, atol=1e-5)


def test_fzx_from_the_nodes_alone_and_after_an_edit(tmp_path):
    from retromesh.formats.overgrowth.fzx_scene_write import scene_to_fzx
    doc = retromesh.read(FZX)
    sc = retromesh.load(_glb(FZX, tmp_path))
    for n in sc.nodes:
        n.extras.pop("fzx_object", None)        # a tool that drops extras: made from the nodes
    back = scene_to_fzx(sc)
    for a, b in zip(doc.objects, back.objects, strict=True):
        _same_volume(a, b)
    sc = retromesh.load(tmp_path / "mid.glb")
    head = next(n for n in sc.nodes if n.name == "Head Sphere")
    head.translation = head.translation + [0.0, 0.5, 0.0]      # up (glTF +Y) = Blender +Z
    head.scale = np.array([2.0, 2.0, 2.0])
    sc.nodes[0].extras["center"] = [0.0, 0.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        back = scene_to_fzx(sc)
    assert back.objects[0].location == pytest.approx((0.0, 0.0, 1.25))
    assert back.objects[0].scale == pytest.approx((0.25, 0.25, 0.25), rel=1e-3)
    back = retromesh.read(retromesh.to_bytes(back), format="fzx")     # as float32
    assert back.objects[1:] == doc.objects[1:]


def test_fzx_mirrored_copy_moved_on_its_own_is_warned(tmp_path):
    from retromesh.formats.overgrowth.fzx_scene_write import scene_to_fzx
    sc = retromesh.load(_glb(FZX, tmp_path))
    mirror = next(n for n in sc.nodes if n.name.endswith("(mirror)"))
    mirror.translation = mirror.translation + 0.25
    with pytest.warns(LossWarning, match="mirrored copies"):
        back = scene_to_fzx(sc)
    assert retromesh.to_bytes(back) == FZX.read_bytes()


def test_fzx_from_a_foreign_scene(tmp_path):
    from retromesh.formats.overgrowth.fzx_scene_write import scene_to_fzx
    from retromesh.scene import Mesh, Node, Primitive, Scene
    sc = Scene()
    box = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
    m = sc.add_mesh(Mesh(primitives=[Primitive(positions=box * [0.1, 0.2, 0.3],
                                               indices=np.array([0, 1, 2], np.uint32))]))
    sc.add_node(Node(name="Chest Box", translation=[0.0, 1.0, 0.0], mesh=m))
    sc.add_node(Node(name="lamp", mesh=m))
    back = scene_to_fzx(sc)
    assert [(o.label, o.location) for o in back.objects] == [(b"Chest Box", (0.0, 0.0, 1.0))]
    assert back.objects[0].scale == pytest.approx((0.1, 0.3, 0.2))
    with pytest.raises(retromesh.DocumentError, match="no ragdoll volumes"):
        scene_to_fzx(Scene())


# -- Overgrowth .anm weapon matrices: animated nodes ---------------------------------------------
def _weapon_anm(tmp_path):
    from retromesh.formats.overgrowth import samples
    from retromesh.formats.overgrowth.bones import pack_mats
    from retromesh.transforms import compose_trs
    retromesh.write(samples.stick_skeleton(), tmp_path / "sk.phxbn")
    anm = samples.anm_fixture(11, centered=True)
    for k, kf in enumerate(anm.keyframes):
        a = 0.7 * k
        kf.weapon_mats["matrix"][0] = pack_mats(
            compose_trs([0.1 * k, 0.5, -0.2], [0, np.sin(a / 2), 0, np.cos(a / 2)], [1, 1, 1]))
    retromesh.write(anm, tmp_path / "a.anm")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(tmp_path / "a.anm", tmp_path / "a.glb", skeleton=tmp_path / "sk.phxbn")
    assert_valid(tmp_path / "a.glb")
    return anm, retromesh.load(tmp_path / "a.glb")


def _weapons(doc) -> np.ndarray:
    return np.stack([k.weapon_mats for k in doc.keyframes])


def test_anm_weapons_are_animated_nodes_and_come_back_unedited(tmp_path):
    from retromesh.formats.overgrowth.bones import unpack_mats
    from retromesh.transforms import compose_trs
    anm, sc = _weapon_anm(tmp_path)
    (w,) = [i for i, n in enumerate(sc.nodes) if n.extras.get("anm_weapon") == 0]
    node = sc.nodes[w]
    assert node.name == "weapon0" and node.extras["relative_id"] == 2
    assert sc.nodes[next(i for i, n in enumerate(sc.nodes) if w in n.children)].extras["phxbn_root"]
    chans = {c.path: c for c in sc.animations[0].channels if c.node == w}
    assert set(chans) == {"translation", "rotation"}
    key_s = np.array([k.time for k in anm.keyframes]) / 1000.0
    got = compose_trs(chans["translation"].sample(key_s), chans["rotation"].sample(key_s), np.ones(3))
    assert np.allclose(got, unpack_mats(_weapons(anm)["matrix"][:, 0]), atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(tmp_path / "a.glb", tmp_path / "b.anm")
    assert _weapons(retromesh.read(tmp_path / "b.anm")).tobytes() == _weapons(anm).tobytes()


def test_anm_weapon_node_moved_in_gltf_moves_the_weapon(tmp_path):
    from retromesh.formats.overgrowth import scene_write as wscene
    from retromesh.formats.overgrowth.bones import unpack_mats
    anm, sc = _weapon_anm(tmp_path)
    w = next(i for i, n in enumerate(sc.nodes) if n.extras.get("anm_weapon") == 0)
    ch = next(c for c in sc.animations[0].channels if c.node == w and c.path == "translation")
    ch.values = ch.values + np.array([0.25, 0.0, 0.0], np.float32)
    was = unpack_mats(_weapons(anm)["matrix"][:, 0])
    for native in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LossWarning)
            back = wscene.scene_to_anm(sc, native=native)
        got = _weapons(back)
        now = unpack_mats(got["matrix"][:, 0])
        assert np.allclose(now[:, :3, 3] - was[:, :3, 3], [0.25, 0.0, 0.0], atol=1e-5)
        assert np.allclose(now[:, :3, :3], was[:, :3, :3], atol=1e-5)
        assert (got["relative_id"] == 2).all() and np.allclose(got["relative_weight"], 0.5)


def test_anm_weapon_slot_the_file_has_no_place_for_is_warned(tmp_path):
    from retromesh.formats.overgrowth import samples, scene_write as wscene
    from retromesh.scene import Channel, Node
    retromesh.write(samples.stick_skeleton(), tmp_path / "sk.phxbn")
    retromesh.write(samples.anm_fixture(11, weapons=False), tmp_path / "a.anm")
    retromesh.convert(tmp_path / "a.anm", tmp_path / "a.glb", skeleton=tmp_path / "sk.phxbn")
    sc = retromesh.load(tmp_path / "a.glb")
    root = next(i for i, n in enumerate(sc.nodes) if n.extras.get("phxbn_root"))
    w = sc.add_node(Node(name="sword", extras={"anm_weapon": 0}), parent=root)
    sc.animations[0].channels.append(Channel(w, "translation", [0.0, 0.5], [[0, 0, 0], [0, 1, 0]]))
    with pytest.warns(LossWarning, match="weapon nodes"):
        wscene.scene_to_anm(sc)
    fresh = wscene.scene_to_anm(sc, native=False)             # made from the scene: one slot
    assert {len(k.weapon_mats) for k in fresh.keyframes} == {1}


def test_b3d_uv_sets_on_the_merged_path_are_warned(tmp_path):
    from retromesh.formats import b3d
    from retromesh.scene import Node
    src = tmp_path / "uv.b3d"
    src.write_bytes(_b3d_three_by_three())
    sc = retromesh.load(_glb(src, tmp_path))
    sc.add_node(Node(name="lamp"))                  # a node B3D did not have: one merged MESH
    with pytest.warns(LossWarning, match="UV sets beyond the second"):
        b3d.from_scene(sc)


def test_anm_weapon_slots_are_capped_as_bones_are(tmp_path, monkeypatch):
    from retromesh.formats.overgrowth import samples, scene_write as wscene
    from retromesh.formats.overgrowth.anm import WEAPON8_DTYPE
    retromesh.write(samples.stick_skeleton(), tmp_path / "sk.phxbn")
    anm = samples.anm_fixture(11)
    for kf in anm.keyframes:
        kf.weapon_mats = np.zeros(60, WEAPON8_DTYPE)             # 60 slots, 6 bones
        kf.weapon_mats["matrix"] = np.eye(4, dtype=np.float32).reshape(16)
    retromesh.write(anm, tmp_path / "a.anm")
    monkeypatch.setitem(wscene.LIMITS, "sample_bones", 35 * 6)  # the bones fit, the weapons not
    with pytest.raises(retromesh.errors.LimitError, match="weapon slots"):
        retromesh.load(tmp_path / "a.anm", skeleton=tmp_path / "sk.phxbn")
