"""Scene -> glTF writer and glTF -> Scene reader, checked by the Khronos validator and trimesh."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from helpers.gltfcheck import assert_valid, assert_valid_many
from helpers.make_examples_import import make_examples
from retromesh.scene import Animation, Channel, Mesh, MorphTarget, Node, Primitive, Scene, TextureRef


def _scene_with_everything() -> Scene:
    s = make_examples.wiggle_scene()
    # a second UV set, vertex colours, tangents, KHR_texture_transform, unlit, double sided
    p = s.meshes[0].primitives[0]
    n = len(p.positions)
    p.uvs.append(p.uvs[0] * 0.5)
    p.colors = np.tile([0.2, 0.4, 0.6, 1.0], (n, 1))
    p.tangents = np.tile([1.0, 0, 0, -1.0], (n, 1))
    s.materials[0].base_color_texture = TextureRef(0, texcoord=1, offset=(0.25, 0.5), scale=(2, 2),
                                                   rotation=0.5)
    s.materials[1].unlit = True
    s.materials[1].double_sided = True
    s.materials[1].alpha_mode = "BLEND"
    # a static node with a morph target and a STEP animation on it
    box = make_examples.crate_scene()
    prim = box.meshes[0].primitives[0]
    prim.targets = [MorphTarget(positions=np.full((len(prim.positions), 3), 0.1, np.float32))]
    prim.material = None
    m = s.add_mesh(Mesh(name="box", primitives=[prim], weights=[0.0]))
    b = s.add_node(Node(name="box", mesh=m, translation=[3, 0, 0]))
    s.animations.append(Animation(name="blink", channels=[
        Channel(b, "scale", [0, 0.5, 1], [[1, 1, 1], [2, 2, 2], [1, 1, 1]], "STEP"),
        Channel(b, "weights", [0, 1], [[0.0], [1.0]])]))
    return s


def test_glb_and_gltf_pass_the_validator(tmp_path):
    s = _scene_with_everything()
    retromesh.save(s, tmp_path / "a.glb")
    retromesh.save(s, tmp_path / "b.gltf")
    (tmp_path / "wiggle.png").write_bytes(make_examples.wiggle_png())
    infos = assert_valid_many([tmp_path / "a.glb", tmp_path / "b.gltf"])
    for info in infos:
        assert info["animationCount"] == 2
        assert info["hasSkins"] and info["hasMorphTargets"]
        assert info["maxUVs"] == 2
        assert info["maxInfluences"] == 4
        assert set(info["extensionsUsed"]) == {"KHR_texture_transform", "KHR_materials_unlit"}


def test_embedded_images(tmp_path):
    s = make_examples.crate_scene()
    (tmp_path / "crate.png").write_bytes(make_examples.crate_png())
    retromesh.save(s, tmp_path / "c.glb", embed_images=True, image_dir=tmp_path)
    info = assert_valid(tmp_path / "c.glb")
    assert info["hasTextures"]
    back = retromesh.load(tmp_path / "c.glb")
    assert back.textures[0].image == make_examples.crate_png()


def test_reader_round_trip_keeps_everything(tmp_path):
    s = _scene_with_everything()
    for name in ("a.glb", "b.gltf"):
        retromesh.save(s, tmp_path / name)
        back = retromesh.load(tmp_path / name)
        assert back.counts() == s.counts()
        p0, q0 = s.meshes[0].primitives[0], back.meshes[0].primitives[0]
        assert np.allclose(p0.positions, q0.positions)
        assert np.array_equal(p0.indices, q0.indices)
        assert len(q0.uvs) == 2 and np.allclose(p0.uvs[1], q0.uvs[1])
        assert np.allclose(q0.weights.sum(axis=1), 1, atol=1e-6)
        assert back.materials[0].base_color_texture.texcoord == 1
        assert back.materials[0].base_color_texture.rotation == pytest.approx(0.5)
        assert back.materials[1].unlit and back.materials[1].double_sided
        assert back.animations[1].channels[0].interpolation == "STEP"
        assert np.allclose(back.skins[0].inverse_bind_matrices, s.skins[0].inverse_bind_matrices,
                           atol=1e-6)


def test_trimesh_loads_our_glb(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    retromesh.save(_scene_with_everything(), tmp_path / "a.glb")
    loaded = trimesh.load(tmp_path / "a.glb")
    assert len(loaded.geometry) >= 2


def test_writer_fixes_what_the_validator_rejects(tmp_path):
    s = Scene()
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    m = s.add_mesh(Mesh(primitives=[Primitive(
        positions=pos, indices=[0, 1, 2], normals=np.zeros((3, 3)),          # zero normals
        colors=np.full((3, 4), 2.0),                                          # out of range
        joints=[[0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0]],                    # duplicates
        weights=[[0.3, 0.3, 0, 0], [0, 0, 0, 0], [2, 2, 0, 0]])])             # not normalised
    ) 
    root = s.add_node(Node(name="root", translation=[0, 1, 0]))
    j = s.add_node(Node(name="j"), root)
    s.add_node(Node(name="skinned", mesh=m, translation=[5, 0, 0]), root)   # moved to a root
    s.nodes[2].skin = s.add_skin(__import__("retromesh").scene.Skin(joints=[root, j]))
    s.animations.append(Animation(name="neg", channels=[
        Channel(j, "rotation", [-1, 0], [[0, 0, 0, 2], [0, 0, 1, 1]])]))     # negative time, unnormalised
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        retromesh.save(s, tmp_path / "fix.glb")
    assert_valid(tmp_path / "fix.glb")


def test_malformed_glb_raises_format_error():
    from helpers.malformed import assert_malformed_safe
    s = make_examples.crate_scene()
    from retromesh.gltf import glb_bytes, scene_to_gltf
    data = glb_bytes(scene_to_gltf(s))
    assert_malformed_safe(data, "x.glb", scene=True)


def test_embed_finds_minetest_textures_folder(tmp_path):
    """mods/x/models/model.b3d refers to a texture kept in mods/x/textures/."""
    from helpers.make_examples_import import crate_bytes
    models = tmp_path / "mod" / "models"
    textures = tmp_path / "mod" / "textures"
    models.mkdir(parents=True)
    textures.mkdir()
    (models / "crate.b3d").write_bytes(crate_bytes())
    (textures / "Crate.PNG").write_bytes(make_examples.crate_png())
    retromesh.convert(models / "crate.b3d", tmp_path / "out.glb", save_options={"embed_images": True})
    assert assert_valid(tmp_path / "out.glb")["hasTextures"]
    assert retromesh.load(tmp_path / "out.glb").textures[0].image == make_examples.crate_png()


def test_non_png_texture_names_refer_to_png_and_come_back(tmp_path):
    s = make_examples.crate_scene()
    s.textures[0].uri = "C:\\work\\skins\\Crate.dds"
    retromesh.save(s, tmp_path / "c.glb")
    assert_valid(tmp_path / "c.glb")
    import json
    import struct
    data = (tmp_path / "c.glb").read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    image = json.loads(data[20:20 + n])["images"][0]
    # not found: in a GLB, the embedded placeholder keeps the name
    assert "uri" not in image and image["extras"]["placeholder"] is True
    assert image["extras"]["original_uri"] == "C:/work/skins/Crate.dds"
    assert retromesh.load(tmp_path / "c.glb").textures[0].uri == "C:/work/skins/Crate.dds"
    # beside a .gltf, a reference to the .png users convert it to
    retromesh.save(s, tmp_path / "g" / "c.gltf")
    image = json.loads((tmp_path / "g" / "c.gltf").read_text())["images"][0]
    assert image["uri"] == "Crate.png"
    assert image["extras"]["original_uri"] == "C:/work/skins/Crate.dds"
    assert retromesh.load(tmp_path / "g" / "c.gltf").textures[0].uri == "C:/work/skins/Crate.dds"
