"""Lost Saga conversions: to_scene contents, glTF output (Khronos validator: 0 errors, 0
warnings; trimesh), from_scene round trips through glTF, the CLI, material scripts."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import trimesh
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

import retromesh
from conftest import corpus_files, corpus_params
from helpers.gltfcheck import assert_valid, assert_valid_many
from retromesh import LossWarning
from retromesh.cli import app
from retromesh.formats.lostsaga import CmsFile, ani, material, msh, samples
from retromesh.transforms import quat_normalize

runner = CliRunner()


@pytest.fixture
def column(tmp_path):
    samples.write_example(tmp_path)
    m, s = samples.skinned_column()
    retromesh.write(samples.wave_animation(s, 4001), tmp_path / "column_c4.ani")
    retromesh.write(samples.wave_animation(s, 4002, angle=-0.8), tmp_path / "column_c8.ani")
    return tmp_path


def load_quiet(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        return retromesh.load(*args, **kw)


# -- corpus -----------------------------------------------------------------------------------

@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params("lostsaga", "*.msh"))
def test_corpus_mesh_to_scene(path):
    doc = retromesh.read(path)
    if doc.weights is not None:
        with pytest.warns(LossWarning, match="no skeleton given"):
            scene = retromesh.load(path)
    else:
        scene = retromesh.load(path)
    prims = scene.meshes[0].primitives
    assert len(prims) == max(len(doc.submeshes), 1)
    assert sum(p.triangle_count for p in prims) == len(doc.faces)
    for p in prims:
        # mirrored positions + reversed winding: RH face normals agree with the stored normals
        tri = p.positions[p.indices.reshape(-1, 3)]
        fn = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        vn = p.normals[p.indices.reshape(-1, 3)].sum(axis=1)
        assert np.mean(np.einsum("ij,ij->i", fn, vn) > 0) > 0.95
        assert np.allclose(np.linalg.norm(p.normals, axis=1), 1.0, atol=1e-5)
        assert len(p.uvs) == 1
    assert scene.counts()["vertices"] >= doc.vertex_count - 1


@pytest.mark.corpus
def test_corpus_to_gltf_valid(tmp_path):
    files = corpus_files("lostsaga")
    if not files:
        pytest.skip("no corpus")
    outs = []
    for f in files:
        out = tmp_path / (f.stem + ".glb")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LossWarning)
            retromesh.convert(f, out)
        outs.append(out)
    infos = assert_valid_many(outs)
    for f, out, info in zip(files, outs, infos):
        if f.suffix == ".ani":
            assert info["animationCount"] == 1
        else:
            assert info["totalTriangleCount"] == len(retromesh.read(f).faces)
            assert not isinstance(trimesh.load(out), list)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params("lostsaga", "*.ani"))
def test_corpus_animation_alone(path):
    doc = retromesh.read(path)
    with pytest.warns(LossWarning, match="without a skeleton"):
        scene = retromesh.load(path)
    assert len(scene.animations) == 1
    anim = scene.animations[0]
    assert len(anim.channels) == 2 * len(doc.tracks)
    assert anim.duration == pytest.approx(max(t.keys["time"][-1] for t in doc.tracks) / 1000)
    names = {scene.nodes[c.node].name for c in anim.channels}
    assert "Bip01" in names
    # first key of the first track, mirrored into glTF
    q0 = ani.rotations(doc.tracks[0], doc.version)[0].astype(np.float64)
    ch = next(c for c in anim.channels if scene.nodes[c.node].name == "Bip01"
              and c.path == "rotation")
    want = quat_normalize(q0 * [-1, -1, 1, 1])
    assert abs(np.dot(ch.values[0], want)) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.corpus
def test_corpus_collision_mesh(tmp_path):
    files = corpus_files("lostsaga", "*.cms")
    if not files:
        pytest.skip("no corpus")
    scene = retromesh.load(files[0])
    assert scene.meshes[0].extras["collision"] and scene.nodes[0].extras["collision"]
    doc = retromesh.read(files[0])
    p = scene.meshes[0].primitives[0]
    assert np.allclose(p.positions, doc.positions * [1, 1, -1])
    assert np.array_equal(p.indices.reshape(-1, 3), doc.faces[:, [0, 2, 1]])
    back = retromesh.registry.get("cms").from_scene(scene)
    assert np.array_equal(back.faces, doc.faces) and np.allclose(back.positions, doc.positions)


# -- skinned, animated --------------------------------------------------------------------------

def test_skin_and_animations(column, tmp_path):
    scene = retromesh.load(column / "column.msh", skeleton=column / "column.skl",
                           animations=[column / "column_wave.ani", column / "column_c4.ani",
                                       column / "column_c8.ani"])
    assert [a.name for a in scene.animations] == ["column_wave", "column_c4", "column_c8"]
    skin = scene.skins[0]
    assert [scene.nodes[j].name for j in skin.joints] == [b.decode() for b in samples.bone_names(4)]
    world = scene.world_matrices()
    assert np.allclose(world[skin.joints] @ skin.inverse_bind_matrices, np.eye(4), atol=1e-5)
    p = scene.meshes[0].primitives[0]
    assert p.joints is not None and np.allclose(p.weights.sum(axis=1), 1.0, atol=1e-6)
    ev = scene.animations[0].extras["events"]
    assert ev[0] == {"type": "sound", "info": "swish.wav", "time": 0.5}
    assert scene.animations[0].extras["total_time_ms"] == 1000
    # key rotation of the spine at 250 ms: 0.5 rad about D3D Z -> about glTF Z (z, w kept)
    ch = next(c for c in scene.animations[0].channels
              if scene.nodes[c.node].name == "Bip01 Spine" and c.path == "rotation")
    k = int(np.argmin(np.abs(ch.times - 0.25)))
    assert ch.values[k] == pytest.approx([0, 0, np.sin(0.25), np.cos(0.25)], abs=1e-6)
    # the COMP4 version of the same swing agrees within its precision
    c4 = next(c for c in scene.animations[1].channels if c.node == ch.node and c.path == "rotation")
    assert np.all(np.abs(np.einsum("ij,ij->i", c4.values, ch.values)) > 1 - 1e-4)
    out = tmp_path / "column.glb"
    retromesh.save(scene, out)
    info = assert_valid(out)
    assert info["hasSkins"] and info["animationCount"] == 3 and info["maxInfluences"] == 4
    assert not isinstance(trimesh.load(out), list)


def test_weights_stop_at_first_non_positive_weight():
    m, s = samples.skinned_column(1)
    m.weights["weight"][0] = (0.6, 0.0, 0.4, 0.0)         # the engine ignores the 0.4
    m.weights["bone"][0] = (0, 1, 1, 0)
    m.weights["weight"][1] = (0.0, 1.0, 0.0, 0.0)         # nothing used at all
    scene = load_quiet(retromesh.to_bytes(m), format="msh", skeleton=s)
    p = scene.meshes[0].primitives[0]
    # vertex 0 and 1 are used by the first face; find them through the positions
    pos0 = m.positions[0] * [1, 1, -1]
    i = int(np.argmin(np.linalg.norm(p.positions - pos0, axis=1)))
    assert p.weights[i].tolist() == pytest.approx([0.6, 0, 0, 0])
    assert p.joints[i, 0] == 0


def test_skinned_mesh_without_skeleton_gets_placeholder_bones(column, tmp_path):
    with pytest.warns(LossWarning, match="placeholder bones.*no skeleton given.*Bip01"):
        scene = retromesh.load(column / "column.msh")
    skin = scene.skins[0]
    assert [scene.nodes[j].name for j in skin.joints] == [b.decode() for b in samples.bone_names(4)]
    assert np.allclose(skin.inverse_bind_matrices, np.eye(4))
    assert np.allclose(scene.world_matrices()[skin.joints], np.eye(4))    # looks as stored
    retromesh.save(scene, tmp_path / "placeholder.glb")
    assert assert_valid(tmp_path / "placeholder.glb")["hasSkins"] is True
    # the bones are ours: the .msh comes back skinned, with no .skl
    paths = retromesh.convert(tmp_path / "placeholder.glb", tmp_path / "back.msh")
    assert {p.suffix for p in paths} == {".msh", ".txt"}
    m0, m1 = retromesh.read(column / "column.msh"), retromesh.read(tmp_path / "back.msh")
    assert m1.mesh_type == 1 and m1.bone_names == m0.bone_names
    assert np.array_equal(m1.weights["bone"], m0.weights["bone"])


def test_missing_bones_warn(column):
    m, s = samples.skinned_column()
    m.bone_names[2] = b"Nobody"
    with pytest.warns(LossWarning, match="not in the mesh's bone list or the skeleton"):
        retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=column / "column.skl")
    a = samples.wave_animation(s)
    a.tracks[1].bone = b"Ghost"
    with pytest.warns(LossWarning, match="Ghost"):
        retromesh.load(retromesh.to_bytes(a), format="ani", skeleton=s)


def test_skeleton_and_animation_entry_points(column, tmp_path):
    sk = retromesh.load(column / "column.skl")
    assert sk.counts()["nodes"] == 4 and sk.roots == [0]
    full = retromesh.load(column / "column.skl", mesh=column / "column.msh",
                          animations=[column / "column_wave.ani"])
    assert full.counts()["skins"] == 1 and full.counts()["animations"] == 1
    an = retromesh.load(column / "column_wave.ani", skeleton=column / "column.skl")
    assert an.counts()["animations"] == 1 and an.counts()["nodes"] == 4
    retromesh.save(an, tmp_path / "a.glb")
    retromesh.save(sk, tmp_path / "s.glb")
    assert_valid_many([tmp_path / "a.glb", tmp_path / "s.glb"])


def test_cli_convert_with_skeleton_and_animations(column, tmp_path):
    out = tmp_path / "out.glb"
    res = runner.invoke(app, ["convert", str(column / "column.msh"), "--skeleton",
                              str(column / "column.skl"), "--animation",
                              str(column / "column_wave.ani"), "--animation",
                              str(column / "column_c4.ani"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    info = assert_valid(out)
    assert info["hasSkins"] and info["animationCount"] == 2 and info["hasTextures"]


# -- every attribute, sanitising ----------------------------------------------------------------

def test_full_mesh_attributes(tmp_path):
    doc = samples.full_mesh(2002, mesh_type=2)
    data = retromesh.to_bytes(doc)
    (tmp_path / "lm.msh").write_bytes(data)
    (tmp_path / "lm.txt").write_text(
        "material\n{\n technique\n {\n  pass\n  {\n   shader_group LightMap\n"
        "   texture_unit\n   {\n    texture lm_light.dds\n    tex_coord_set 0\n   }\n"
        "   texture_unit\n   {\n    texture lm_diffuse.dds\n    tex_coord_set 1\n   }\n  }\n }\n}\n"
        "material { technique { pass { texture_unit { texture second.dds } } } }\n")
    scene = load_quiet(tmp_path / "lm.msh")
    p0, p1 = scene.meshes[0].primitives
    assert p0.extras["diffuse_texcoord"] == 1 and p0.extras["lightmap_texcoord"] == 0
    mat = scene.materials[p0.material]
    assert scene.textures[mat.base_color_texture.texture].uri == "lm_diffuse.dds"
    assert mat.base_color_texture.texcoord == 1
    assert mat.extras["other_texture_units"] == [{"texture": "lm_light.dds", "tex_coord_set": 0}]
    assert scene.textures[scene.materials[p1.material].base_color_texture.texture].uri == "second.dds"
    # D3DCOLOR 0xAARRGGBB -> RGBA
    c = int(doc.colors[0])
    want = [(c >> 16 & 255) / 255, (c >> 8 & 255) / 255, (c & 255) / 255, (c >> 24) / 255]
    i = int(np.argmin(np.linalg.norm(p0.positions - doc.positions[0] * [1, 1, -1], axis=1)))
    assert p0.colors[i].tolist() == pytest.approx(want)
    # tangent w from the binormal: bitangent = cross(n, t) * w matches the stored binormal
    b = np.cross(p0.normals, p0.tangents[:, :3]) * p0.tangents[:, 3:]
    stored = doc.binormals * [1, 1, -1]
    j = np.argmin(np.linalg.norm(p0.positions[:, None] - (doc.positions * [1, 1, -1])[None],
                                 axis=2), axis=1)
    assert np.allclose(b, stored[j], atol=1e-5)
    assert len(p0.uvs) == 2
    assert scene.meshes[0].extras["control_points"][0]["extra"] == "grip"
    out = tmp_path / "lm.glb"
    retromesh.save(scene, out)
    info = assert_valid(out)
    assert info["maxUVs"] == 2 and info["materialCount"] == 2


def test_zero_normals_and_tangents_are_sanitised(tmp_path):
    doc = samples.full_mesh(2000, mesh_type=0)
    doc.normals = doc.normals.copy()
    doc.normals[:3] = 0
    doc.tangents = doc.tangents.copy()
    doc.tangents[5] = 0
    doc.colors = doc.colors.copy()
    scene = load_quiet(retromesh.to_bytes(doc), format="msh")
    p = scene.meshes[0].primitives[0]
    assert p.extras["normals_recomputed"] >= 1 and "tangents_dropped" in p.extras
    assert p.tangents is None
    assert np.allclose(np.linalg.norm(p.normals, axis=1), 1.0, atol=1e-5)
    retromesh.save(scene, tmp_path / "z.glb")
    assert_valid(tmp_path / "z.glb")


def test_material_script_parser_and_lookup(tmp_path):
    text = ("// comment\nmaterial Body\n{\n technique {\n  pass\n  {\n   diffuse 1 0.5 0.25\n"
            "   scene_blend alpha_blend\n   texture_unit\n   {\n    texture body.dds // x\n"
            "    tex_coord_set 0\n    scroll_anim 0.1 0\n   }\n  }\n }\n}\nmaterial\n{\n")
    mats = material.parse(text.encode())
    assert [m.name for m in mats] == ["Body", "Sub2"]
    assert mats[0].diffuse == (1.0, 0.5, 0.25, 1.0) and mats[0].scene_blend == "alpha_blend"
    assert mats[0].texture_units[0].texture == "body.dds"
    assert mats[0].texture_units[0].properties["scroll_anim"] == "0.1 0"
    assert material.parse(b"}}}{{ material") == [] or True      # never raises
    again = material.parse(material.write_script(mats).encode())
    assert again[0].texture_units[0].texture == "body.dds"
    (tmp_path / "mesh").mkdir()
    (tmp_path / "Material").mkdir()
    (tmp_path / "Material" / "x.txt").write_text("material { }")
    assert material.find_script(tmp_path / "mesh" / "x.msh") == tmp_path / "Material" / "x.txt"
    assert material.find_script(tmp_path / "mesh" / "y.msh") is None


@pytest.mark.filterwarnings("ignore:skinned mesh converted static")
def test_fewer_materials_than_submeshes_warns(tmp_path):
    doc = samples.full_mesh(2000, mesh_type=0)
    (tmp_path / "m.msh").write_bytes(retromesh.to_bytes(doc))
    (tmp_path / "m.txt").write_text("material { technique { pass { } } }")
    with pytest.warns(LossWarning, match="1 materials for 2 submeshes"):
        scene = retromesh.load(tmp_path / "m.msh")
    assert scene.meshes[0].primitives[1].material is None


# -- from_scene -------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["default", "comp4", "comp8"])
def test_round_trip_through_gltf(column, tmp_path, fmt):
    scene = retromesh.load(column / "column.msh", skeleton=column / "column.skl",
                           animations=[column / "column_wave.ani"])
    retromesh.save(scene, tmp_path / "c.glb")
    back = retromesh.load(tmp_path / "c.glb")
    # the companions read with column.msh follow the output's name (retromesh.filenames)
    paths = retromesh.save(back, tmp_path / "back.msh", animation_format=fmt)
    assert {p.name for p in paths} == {"back.msh", "back.skl", "back_wave.ani", "back.txt"}
    m0, m1 = retromesh.read(column / "column.msh"), retromesh.read(tmp_path / "back.msh")
    assert np.allclose(m0.positions, m1.positions, atol=1e-5)
    assert np.allclose(m0.uv0, m1.uv0) and np.array_equal(m0.faces, m1.faces)
    assert np.allclose(m0.weights["weight"], m1.weights["weight"], atol=1e-6)
    assert np.array_equal(m0.weights["bone"], m1.weights["bone"])
    assert m1.bone_names == m0.bone_names and m1.mesh_type == 1
    s0, s1 = retromesh.read(column / "column.skl"), retromesh.read(tmp_path / "back.skl")
    for f in s0.poses.dtype.names:
        assert np.allclose(s0.poses[f], s1.poses[f], atol=1e-5), f
    assert [b.parent for b in s0.bones] == [b.parent for b in s1.bones]
    a0, a1 = retromesh.read(column / "column_wave.ani"), retromesh.read(tmp_path / "back_wave.ani")
    assert a1.version == {"default": 4000, "comp4": 4001, "comp8": 4002}[fmt]
    tol = {"default": 1e-6, "comp4": 1e-4, "comp8": 1e-7}[fmt]
    for t0, t1 in zip(a0.tracks, a1.tracks):
        assert np.array_equal(t0.keys["time"], t1.keys["time"])
        q0, q1 = ani.rotations(t0, a0.version), ani.rotations(t1, a1.version)
        q1 = q1 / np.linalg.norm(q1, axis=1)[:, None]
        assert np.all(np.abs(np.einsum("ij,ij->i", q0, q1)) > 1 - tol)
        assert np.allclose(t0.keys["translation"], t1.keys["translation"], atol=1e-5)
    assert [e.type for e in a1.events] == [b"sound", b"end"] and a1.total_time == 1000


def test_several_animations_get_suffixes(column, tmp_path):
    scene = retromesh.load(column / "column.msh", skeleton=column / "column.skl",
                           animations=[column / "column_wave.ani", column / "column_c8.ani"])
    paths = retromesh.save(scene, tmp_path / "x.msh", animation_format="comp8",
                           rounding="nearest")
    names = {p.name for p in paths}
    # read with column.msh: the names follow the output's stem (retromesh.filenames)
    assert names == {"x.msh", "x.skl", "x.txt", "x_wave.ani", "x_c8.ani"}
    # COMP8 written with nearest rounding reproduces the packed keys of the source file
    src = retromesh.read(column / "column_c8.ani")
    out = retromesh.read(tmp_path / "x_c8.ani")
    for t0, t1 in zip(src.tracks, out.tracks):
        q0 = ani.rotations(t0, 4002)
        q1 = ani.rotations(t1, 4002)
        assert np.abs(q0 - q1).max() <= 2 * 2 / 65535 + 1e-7


def test_static_scene_from_gltf(tmp_path):
    doc = samples.full_mesh(2000, mesh_type=0)
    scene = load_quiet(retromesh.to_bytes(doc), format="msh")
    back = retromesh.registry.get("msh").from_scene(scene, material_script=False)
    assert isinstance(back, msh.MshFile) and back.mesh_type == 0
    assert back.vertex_mask & msh.COLOR0 and back.vertex_mask & msh.UV1
    assert back.version == 2000 and len(back.submeshes) == 2     # kept from the file
    assert np.array_equal(np.sort(back.colors), np.sort(doc.colors))
    assert back.bbox == pytest.approx(doc.bbox, abs=1e-4)
    assert retromesh.registry.get("msh").check(back) == retromesh.registry.get("msh").check(doc)


def test_cms_from_any_scene(column):
    scene = load_quiet(column / "column.msh")
    doc = retromesh.registry.get("cms").from_scene(scene)
    assert isinstance(doc, CmsFile) and len(doc.faces) == 48


def test_material_script_from_scene(column, tmp_path):
    from retromesh.formats.lostsaga.scene import script_from_scene
    scene = retromesh.load(column / "column.msh", skeleton=column / "column.skl")
    paths = retromesh.save(scene, tmp_path / "k.msh")
    assert {p.name for p in paths} == {"k.msh", "k.skl", "k.txt"}
    # the script as read (its comment line too): the materials are unedited
    assert (tmp_path / "k.txt").read_bytes() == (column / "column.txt").read_bytes()
    scene.materials[0].extras["shader_group"] = "Static"          # an edit: the script is made
    assert retromesh.save(scene, tmp_path / "k.msh")
    assert (tmp_path / "k.txt").read_text() == script_from_scene(scene)
    assert "Static" in script_from_scene(scene)
    scene.materials[0].extras["shader_group"] = "AnimateToonShade"
    retromesh.save(scene, tmp_path / "k.msh")
    doc = retromesh.read(tmp_path / "k.txt", format="lsmat")
    assert doc.materials[0].texture_units[0].texture == "column_diffuse.png"
    assert retromesh.to_bytes(doc) == (tmp_path / "k.txt").read_bytes()
    again = retromesh.load(tmp_path / "k.msh", skeleton=tmp_path / "k.skl")
    tex = again.textures[again.materials[0].base_color_texture.texture]
    assert tex.uri == "column_diffuse.png"
    assert again.materials[0].extras["shader_group"] == "AnimateToonShade"
    with pytest.raises(retromesh.UnknownFormatError):
        retromesh.read(tmp_path / "k.txt")             # .txt is never claimed by extension
    out = retromesh.registry.get("msh").from_scene(scene, material_script=False)
    assert ".txt" not in out


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@pytest.mark.parametrize("path", corpus_params("lostsaga", "*.ani"))
def test_corpus_animation_round_trip_through_gltf(path, tmp_path):
    retromesh.convert(path, tmp_path / "a.glb")
    scene = retromesh.load(path)
    assert scene.animations[0].extras["non_unit_rotation_keys"] > 0
    retromesh.convert(tmp_path / "a.glb", tmp_path / "b.ani")
    a0, a1 = retromesh.read(path), retromesh.read(tmp_path / "b.ani")
    by_bone = {t.bone: t for t in a1.tracks}
    assert by_bone.keys() == {t.bone for t in a0.tracks}
    for t in a0.tracks:
        u = by_bone[t.bone]
        assert np.array_equal(t.keys["time"], u.keys["time"])
        # unedited: the file's keys as they were, its non-unit quaternions too (issue 32)
        assert t.keys.tobytes() == u.keys.tobytes()
    assert (tmp_path / "b.ani").read_bytes() == path.read_bytes()
    written = retromesh.convert(tmp_path / "a.glb", tmp_path / "b.skl")   # + its animation
    assert sorted(p.suffix for p in written) == [".ani", ".skl"]
    skl = next(p for p in written if p.suffix == ".skl")
    assert len(retromesh.read(skl).bones) == len(a0.tracks) + 1     # + the flat root


def test_cli_gltf_to_lost_saga_with_write_options(column, tmp_path):
    glb = tmp_path / "c.glb"
    runner.invoke(app, ["convert", str(column / "column.msh"), "--skeleton",
                        str(column / "column.skl"), "-a", str(column / "column_wave.ani"),
                        "-o", str(glb)])
    res = runner.invoke(app, ["convert", str(glb), "-o", str(tmp_path / "out" / "body.msh"),
                              "-O", "animation_format=comp4", "-O", "rounding=nearest"])
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["body.msh", "body.skl", "body.txt",
                                                           "body_wave.ani"]
    assert retromesh.read(out / "body_wave.ani").version == 4001
    res = runner.invoke(app, ["check", str(out / "body.msh"), str(out / "body.skl"),
                              str(out / "body_wave.ani")])
    assert res.exit_code == 0, res.output


def test_mesh_used_as_collision_file(tmp_path):
    data = retromesh.to_bytes(samples.full_mesh(2000, mesh_type=0))
    (tmp_path / "stage_col.cms").write_bytes(data)
    doc = retromesh.read(tmp_path / "stage_col.cms")
    assert isinstance(doc, msh.MshFile) and retromesh.to_bytes(doc) == data
    scene = load_quiet(tmp_path / "stage_col.cms")
    assert scene.meshes[0].extras["collision"]
    assert retromesh.detect(retromesh.to_bytes(CmsFile()), format=None).name == "cms"


def test_lightmap_mesh_type_survives_gltf(tmp_path):
    doc = samples.full_mesh(2000, mesh_type=2)
    doc.vertex_mask &= ~(msh.WEIGHTS | msh.INDICES)
    doc.weights = doc.bone_names = None
    scene = load_quiet(retromesh.to_bytes(doc), format="msh")
    retromesh.save(scene, tmp_path / "lm.glb")
    back = load_quiet(tmp_path / "lm.glb")
    out = retromesh.registry.get("msh").from_scene(back, material_script=False)
    assert out.mesh_type == 2 and out.uv1 is not None
    assert np.allclose(np.sort(out.uv1, axis=0), np.sort(doc.uv1, axis=0))
    assert assert_valid(tmp_path / "lm.glb")["maxUVs"] == 2


# -- corpus mesh + corpus animation on a skeleton made from the animation -----------------------

def _biped_parent(name: str, names: set[str]) -> str:
    """3ds Max Biped parent rules (test heuristic; the real hierarchy lives in the .skl)."""
    import re
    side = re.match(r"Bip01 ([LR]) (.*)", name)
    chains = {"Pelvis": "Bip01", "Spine": "Bip01 Pelvis", "Spine1": "Bip01 Spine",
              "Spine2": "Bip01 Spine1", "Neck": "Bip01 Spine2", "Head": "Bip01 Neck",
              "Mantle01": "Bip01 Spine2"}
    if side:
        s, part = side.groups()
        limb = {"Thigh": "Bip01 Spine", "Calf": f"Bip01 {s} Thigh", "Foot": f"Bip01 {s} Calf",
                "Toe0": f"Bip01 {s} Foot", "Clavicle": "Bip01 Neck",
                "UpperArm": f"Bip01 {s} Clavicle", "Forearm": f"Bip01 {s} UpperArm",
                "Hand": f"Bip01 {s} Forearm"}
        if part in limb:
            return limb[part]
        finger = re.match(r"Finger(\d)(\d?)$", part)
        if finger:
            f, k = finger.groups()
            return f"Bip01 {s} Hand" if not k else f"Bip01 {s} Finger{f}{'' if k == '1' else '1'}"
    rest = name[len("Bip01 "):]
    if rest in chains:
        return chains[rest]
    mantle = re.match(r"Mantle0(\d)$", rest)
    if mantle:
        return f"Bip01 Mantle0{int(mantle.group(1)) - 1}"
    if "eye" in rest:
        return "Bip01 Head"
    return ""


def _skeleton_from_animation(doc) -> retromesh.formats.lostsaga.SklFile:
    from retromesh.formats.lostsaga import SklBone, SklFile
    from retromesh.formats.lostsaga.skl import POSE_DTYPE
    from retromesh.transforms import compose_trs, world_matrices
    names = [t.bone.decode() for t in doc.tracks]
    parents = [_biped_parent(n, set(names)) for n in names]
    assert all(p == "" or p in names for p in parents), parents
    poses = np.zeros(len(names), POSE_DTYPE)
    rot = np.stack([ani.rotations(t, doc.version)[0] for t in doc.tracks]).astype(np.float64)
    rot /= np.linalg.norm(rot, axis=1)[:, None]
    poses["local_position"] = [t.keys["translation"][0] for t in doc.tracks]
    poses["local_rotation"] = rot
    # D3D column-form matrices (the mirror cancels out for an inverse in the same space)
    local = compose_trs(poses["local_position"].astype(np.float64), rot, np.ones((len(names), 3)))
    world = world_matrices(local, [names.index(p) if p else -1 for p in parents])
    inv = np.linalg.inv(world)
    from retromesh.transforms import decompose_trs
    t, r, _ = decompose_trs(inv)
    poses["inverse_position"] = t
    poses["inverse_rotation"] = r
    poses["object_tm"] = np.swapaxes(world, 1, 2)
    bones = [SklBone(n.encode(), p.encode(), [c.encode() for c, pc in zip(names, parents) if pc == n])
             for n, p in zip(names, parents)]
    return SklFile(bones=bones, poses=poses, linked_skeleton=b"")


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
def test_corpus_meshes_on_a_biped_made_from_the_corpus_animation(tmp_path):
    anis = corpus_files("lostsaga", "*.ani")
    meshes = corpus_files("lostsaga", "io3d__shovel_knight_*.msh")
    if not anis or not meshes:
        pytest.skip("no corpus")
    skl = _skeleton_from_animation(retromesh.read(anis[0]))
    retromesh.write(skl, tmp_path / "biped.skl")
    outs = []
    for m in meshes:
        out = tmp_path / (m.stem + ".glb")
        scene = retromesh.load(m, skeleton=tmp_path / "biped.skl", animations=[anis[0]])
        skin = scene.skins[0]
        world = scene.world_matrices()
        assert np.allclose(world[skin.joints] @ skin.inverse_bind_matrices, np.eye(4), atol=1e-3)
        p = scene.meshes[0].primitives[0]
        assert p.joints is not None and np.all(p.weights.sum(axis=1) > 0)
        retromesh.save(scene, out)
        outs.append(out)
    for info in assert_valid_many(outs):
        assert info["hasSkins"] and info["animationCount"] == 1


# -- posed geometry survives Lost Saga round trips ----------------------------------------------

def _posed(scene, anim, t):
    """CPU-skinned world positions of every vertex at time ``t``, in primitive order (a Lost Saga
    round trip keeps the vertex order: primitives become submeshes in order)."""
    from retromesh.transforms import compose_trs, world_matrices
    trs = {"translation": [n.translation.copy() for n in scene.nodes],
           "rotation": [n.rotation.copy() for n in scene.nodes],
           "scale": [n.scale.copy() for n in scene.nodes]}
    t0 = min(float(c.times[0]) for c in anim.channels)
    for c in anim.channels:
        trs[c.path][c.node] = c.sample([t + t0])[0]
    local = np.stack([compose_trs(*(trs[k][i] for k in ("translation", "rotation", "scale")))
                      for i in range(len(scene.nodes))])
    world = world_matrices(local, scene.parents())
    pts = []
    for ni, n in enumerate(scene.nodes):
        if n.mesh is None:
            continue
        for p in scene.meshes[n.mesh].primitives:
            v = np.c_[p.positions, np.ones(len(p.positions))]
            if n.skin is not None and p.joints is not None:
                sk = scene.skins[n.skin]
                m = world[sk.joints] @ sk.inverse_bind_matrices
                w = p.weights / np.maximum(p.weights.sum(1, keepdims=True), 1e-12)
                pts.append(np.einsum("vk,vkij,vj->vi", w, m[p.joints.astype(int)], v)[:, :3])
            else:
                pts.append((v @ world[ni].T)[:, :3])
    return np.concatenate(pts)


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@pytest.mark.parametrize("fmt,tol", [("default", 5e-3), ("comp8", 5e-3), ("comp4", 5e-2)])
def test_posed_b3d_survives_lost_saga_round_trip(tmp_path, fmt, tol):
    from helpers.make_examples_import import wiggle_bytes
    (tmp_path / "w.b3d").write_bytes(wiggle_bytes())
    src = retromesh.load(tmp_path / "w.b3d")
    retromesh.save(src, tmp_path / "w.msh", animation_format=fmt)
    back = retromesh.load(tmp_path / "w.msh", skeleton=tmp_path / "w.skl",
                          animations=sorted(tmp_path.glob("w_*.ani")))
    a, b = src.animations[0], back.animations[0]
    # the model is ~4 units tall; key times are rounded to whole milliseconds (1/24 s -> 42 ms),
    # COMP4 keeps 10 bits per component
    for t in np.linspace(0.0, a.duration - min(float(c.times[0]) for c in a.channels), 25):
        assert np.abs(_posed(src, a, t) - _posed(back, b, t)).max() < tol


def _engine_pose(m, s, a, t_ms):
    """Skinned positions computed the engine's way, in D3D row-vector maths (ioBiped/ioNode):
    local = RotationQuaternion(q) with row 4 = p; world = local * parent world;
    skin = BipedSpaceTM * world; v' = sum w * ([v 1] * skin)."""
    from retromesh.transforms import quat_slerp, quat_to_matrix
    names = [b.name for b in s.bones]
    parents = s.parent_indices()
    tracks = {t.bone: t for t in a.tracks}

    def row(q, p):
        r = np.eye(4)
        r[:3, :3] = quat_to_matrix(q).T          # D3DX row form of the same rotation
        r[3, :3] = p
        return r
    world = [None] * len(names)
    for i in range(len(names)):              # parents come first in these fixtures
        tr = tracks[names[i]]
        times = tr.keys["time"].astype(float)
        k = int(np.clip(np.searchsorted(times, t_ms, side="right") - 1, 0, len(times) - 1))
        k2 = min(k + 1, len(times) - 1)
        f = 0.0 if k2 == k else (t_ms - times[k]) / (times[k2] - times[k])
        q = ani.rotations(tr, a.version).astype(float)
        q = quat_slerp(q[k], q[k2], f)
        p = tr.keys["translation"][k] + (tr.keys["translation"][k2] - tr.keys["translation"][k]) * f
        local = row(q, p)
        world[i] = local if parents[i] < 0 else local @ world[parents[i]]
    skin = [row(s.poses["inverse_rotation"][i], s.poses["inverse_position"][i]) @ world[i]
            for i in range(len(names))]
    v = np.c_[m.positions, np.ones(m.vertex_count)]
    used = msh.engine_weight_mask(m.weights["weight"])
    out = np.zeros((m.vertex_count, 4))
    for j in range(4):
        w = np.where(used[:, j], m.weights["weight"][:, j], 0.0)
        ids = m.weights["bone"][:, j].astype(int)
        mats = np.stack([skin[names.index(m.bone_names[i])] for i in ids])
        out += w[:, None] * np.einsum("vi,vij->vj", v, mats)
    return out[:, :3] * [1, 1, -1]               # into glTF space


@pytest.mark.parametrize("version", [4000, 4001, 4002])
def test_glTF_pose_matches_the_engine_maths(version):
    from retromesh.formats.lostsaga.ani import AniFile, AniTrack, key_dtype
    from retromesh.formats.lostsaga.quatcodec import encode_comp4, encode_comp8
    m, s = samples.skinned_column(3)
    rng = np.random.default_rng(7)
    tracks = []
    for i, b in enumerate(s.bones):
        keys = np.zeros(5, key_dtype(version))
        keys["time"] = [0, 250, 500, 750, 1000]
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        ang = rng.uniform(-0.8, 0.8, 5)
        q = np.c_[axis * np.sin(ang / 2)[:, None], np.cos(ang / 2)]
        keys["translation"] = s.poses["local_position"][i] + rng.normal(scale=0.5, size=(5, 3))
        if version == 4001:
            keys["packed"] = encode_comp4(q)
        elif version == 4002:
            keys["high"], keys["low"] = encode_comp8(q)
        else:
            keys["rotation"] = q
        tracks.append(AniTrack(b.name, 1.0, keys))
    a = AniFile(version=version, total_time=1000, tracks=tracks)
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s, animations=[a])
    # the scene's single primitive keeps the file's vertex order (one submesh, all vertices)
    for t_ms in (0, 125, 500, 900):
        got = _posed(scene, scene.animations[0], t_ms / 1000.0)
        want = _engine_pose(m, s, a, t_ms)
        assert np.abs(got - want).max() < 1e-3, t_ms


@pytest.mark.parametrize("fmt", ["default", "comp8"])
def test_keys_under_a_transformed_armature_node_keep_the_pose(tmp_path, fmt):
    """Exporters often put the joints under a rotated/translated non-joint node ("Armature"): the
    .skl root LocalTM holds that transform, so the .ani root keys must hold it too."""
    from retromesh.scene import Node
    m, s = samples.skinned_column(3)
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s,
                           animations=[samples.wave_animation(s)])
    arm = Node(name="Armature", translation=np.array([1.0, 2.0, 3.0]),
               rotation=np.array([np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)]),
               children=list(scene.roots))
    scene.nodes.append(arm)
    scene.roots = [len(scene.nodes) - 1]
    retromesh.save(scene, tmp_path / "a.msh", animation_format=fmt)
    back = retromesh.load(tmp_path / "a.msh", skeleton=tmp_path / "a.skl",
                          animations=sorted(tmp_path.glob("a_*.ani")))
    for t in (0.0, 0.25, 0.6):
        assert np.abs(_posed(scene, scene.animations[0], t)
                      - _posed(back, back.animations[0], t)).max() < 5e-3


def test_unskinned_meshes_of_a_skinned_scene_are_bound_rigidly(tmp_path):
    """A type-1 mesh has no unskinned vertices: a prop hanging under a joint follows that bone,
    a mesh under no joint is bound to the root bone (with a LossWarning), none is left weightless."""
    from retromesh.scene import Mesh, Node, Primitive
    m, s = samples.skinned_column(3)
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s,
                           animations=[samples.wave_animation(s)])
    tri = Primitive(positions=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
                    indices=np.array([0, 1, 2], np.uint32))
    top = scene.skins[0].joints[-1]
    scene.add_node(Node(name="sword", mesh=scene.add_mesh(Mesh(name="sword", primitives=[tri])),
                        translation=np.array([0.5, 1.0, 0.2]),
                        rotation=np.array([0.0, 0.0, np.sin(0.3), np.cos(0.3)])), parent=top)
    scene.add_node(Node(name="floor", mesh=scene.add_mesh(Mesh(name="floor", primitives=[tri])),
                        translation=np.array([3.0, 0.0, 0.0])))
    with pytest.warns(retromesh.LossWarning, match="'floor'.*root bone 'Bip01'"):
        retromesh.save(scene, tmp_path / "a.msh")
    doc = retromesh.read(tmp_path / "a.msh")
    assert np.all(doc.weights["weight"][:, 0] > 0)
    assert np.all(doc.weights["bone"][-6:-3, 0] == len(s.bones) - 1)
    back = load_quiet(tmp_path / "a.msh", skeleton=tmp_path / "a.skl",
                      animations=sorted(tmp_path.glob("a_*.ani")))
    for t in (0.0, 0.25, 0.6):
        assert np.abs(_posed(scene, scene.animations[0], t)
                      - _posed(back, back.animations[0], t)).max() < 1e-4


@pytest.mark.parametrize("names", [[], [b""]])
def test_weights_without_bone_names_convert_with_a_warning(names, tmp_path):
    m, s = samples.skinned_column(2)
    m.bone_names = names                      # the engine drops empty names: no ids are valid
    with pytest.warns(retromesh.LossWarning, match="not in the mesh's bone list"):
        scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s)
    assert len(scene.meshes[0].primitives[0].positions) == m.vertex_count


def test_static_nodes_with_scale_keep_unit_normals():
    from retromesh.formats.lostsaga.scene import msh_from_scene
    from retromesh.scene import Mesh, Node, Primitive, Scene
    scene = Scene()
    tri = Primitive(positions=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32),
                    normals=np.array([[0, 0, 1]] * 3, np.float32),
                    tangents=np.array([[1, 0, 0, 1]] * 3, np.float32),
                    indices=np.array([0, 1, 2], np.uint32))
    scene.add_node(Node(name="n", mesh=scene.add_mesh(Mesh(name="t", primitives=[tri])),
                        scale=np.array([0.01, 0.02, -0.01])))
    doc = msh_from_scene(scene)
    assert np.allclose(np.linalg.norm(doc.normals, axis=1), 1.0)
    assert np.allclose(np.linalg.norm(doc.tangents, axis=1), 1.0)
    assert np.allclose(doc.normals, [0, 0, 1])       # glTF -Z after the mirror, D3D +Z
    back = retromesh.load(retromesh.to_bytes(doc), format="msh").meshes[0].primitives[0]
    # binormal handedness follows the mirroring node: the glTF tangent w flips
    assert np.all(back.tangents[:, 3] == -1)


@pytest.mark.parametrize("where", ["root joint", "armature"])
def test_uniform_joint_scale_is_baked(tmp_path, where):
    """.skl/.ani hold no scale: a constant uniform scale on a joint (B3D roots) or on an Armature
    node above the joints (exporters' 0.01) is baked into offsets and inverse binds."""
    from retromesh.scene import Node
    from retromesh.transforms import inverse
    m, s = samples.skinned_column(3)
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s,
                           animations=[samples.wave_animation(s)])
    skin = scene.skins[0]
    if where == "armature":
        scene.nodes.append(Node(name="Armature", scale=np.array([0.01, 0.01, 0.01]),
                                rotation=np.array([np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)]),
                                children=list(scene.roots)))
        scene.roots = [len(scene.nodes) - 1]
    else:
        scene.nodes[skin.joints[0]].scale = np.array([3.0, 3.0, 3.0])
    skin.inverse_bind_matrices = inverse(scene.world_matrices()[skin.joints])
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.save(scene, tmp_path / "a.msh")
    back = load_quiet(tmp_path / "a.msh", skeleton=tmp_path / "a.skl",
                      animations=sorted(tmp_path.glob("a_*.ani")))
    size = np.ptp(_posed(scene, scene.animations[0], 0.0), axis=0).max()
    for t in (0.0, 0.25, 0.6):
        err = np.abs(_posed(scene, scene.animations[0], t) - _posed(back, back.animations[0], t))
        assert err.max() < 1e-5 * size


def test_key_and_event_times_survive_gltf(tmp_path):
    m, s = samples.skinned_column(2)
    a = samples.wave_animation(s)
    for t in a.tracks:
        t.keys["time"] += 100                 # first key at 100 ms
    a.events[0].time = 50.0
    a.total_time += 100
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s, animations=[a])
    retromesh.save(scene, tmp_path / "a.glb")
    retromesh.save(load_quiet(tmp_path / "a.glb"), tmp_path / "b.msh")
    b = retromesh.read(next(tmp_path.glob("b_*.ani")))
    assert b.total_time == a.total_time
    assert [e.time for e in b.events] == [e.time for e in a.events]
    assert all(np.array_equal(x.keys["time"], y.keys["time"]) for x, y in zip(a.tracks, b.tracks))
    # a glTF animation that starts late (one clip of a longer timeline) starts at 0 ms,
    # its events moved with it
    scene.animations[0].extras.pop("lostsaga_version")
    scene.extras.pop("lostsaga_animations")            # (the scene's copy of the extras)
    c = retromesh.formats.lostsaga.scene.ani_from_scene(scene)
    assert c.tracks[0].keys["time"][0] == 0 and c.events[0].time == pytest.approx(-50.0)


def test_a_second_skin_on_the_same_joints_stays_skinned(tmp_path):
    """Exporters write one skin per mesh: a skin using the main skin's joints (any order) whose
    bind differs by one matrix is merged onto the main skin exactly."""
    from retromesh.scene import Mesh, Node, Primitive, Skin
    from retromesh.transforms import compose_trs
    m, s = samples.skinned_column(3)
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s,
                           animations=[samples.wave_animation(s)])
    main = scene.skins[0]
    prim = scene.meshes[0].primitives[0]
    c = compose_trs([2.0, 0.5, -1.0], [0.0, np.sin(0.4), 0.0, np.cos(0.4)], [1.0, 1.0, 1.0])
    order = list(range(len(main.joints)))[::-1]
    other = Skin(joints=[main.joints[k] for k in order],
                 inverse_bind_matrices=main.inverse_bind_matrices[order] @ c)
    copy = Primitive(positions=((prim.positions.astype(float) - c[:3, 3]) @ c[:3, :3]).astype(
                         np.float32),
                     indices=prim.indices, joints=np.argsort(order)[prim.joints.astype(int)],
                     weights=prim.weights)
    si = scene.add_skin(other)
    scene.add_node(Node(name="copy", mesh=scene.add_mesh(Mesh(name="copy", primitives=[copy])),
                        skin=si))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.save(scene, tmp_path / "a.msh")
    back = load_quiet(tmp_path / "a.msh", skeleton=tmp_path / "a.skl",
                      animations=sorted(tmp_path.glob("a_*.ani")))
    for t in (0.0, 0.3):
        got = _posed(back, back.animations[0], t)
        want = _posed(scene, scene.animations[0], t)
        assert np.abs(got - want).max() < 1e-4
        n = len(prim.positions)
        assert np.abs(got[:n] - got[n:]).max() < 1e-4          # the copy poses like the original


def test_lightmap_material_script_survives_gltf(tmp_path):
    doc = samples.full_mesh(2000, mesh_type=2)
    doc.vertex_mask &= ~(msh.WEIGHTS | msh.INDICES)
    doc.weights = doc.bone_names = None
    script = ("material\n{\n technique\n {\n  pass\n  {\n   shader_group LightMapShade\n"
              "   texture_unit\n   {\n    texture lm_stage.dds\n    tex_coord_set 0\n   }\n"
              "   texture_unit\n   {\n    texture stage.dds\n    tex_coord_set 1\n   }\n  }\n }\n}\n")
    (tmp_path / "stage.msh").write_bytes(retromesh.to_bytes(doc))
    (tmp_path / "stage.txt").write_text(script + script)
    retromesh.save(load_quiet(tmp_path / "stage.msh"), tmp_path / "stage.glb")
    out = retromesh.registry.get("msh").from_scene(load_quiet(tmp_path / "stage.glb"))
    mats = out[".txt"].materials
    assert [m.shader_group for m in mats] == ["LightMapShade"] * 2
    assert [(u.texture, u.tex_coord_set) for u in mats[0].texture_units] == [
        ("lm_stage.dds", 0), ("stage.dds", 1)]


def test_non_finite_positions_warn():
    m, _ = samples.skinned_column(1)
    m.positions = m.positions.copy()
    m.positions[0, 0] = np.nan
    m.weights = m.bone_names = None
    m.vertex_mask &= ~(msh.WEIGHTS | msh.INDICES)
    with pytest.warns(LossWarning, match="1 vertex positions hold NaN"):
        scene = retromesh.load(retromesh.to_bytes(m), format="msh")
    assert np.all(np.isfinite(scene.meshes[0].primitives[0].positions))


def test_step_keys_hold_until_the_next_key():
    from retromesh.formats.lostsaga.scene import ani_from_scene
    m, s = samples.skinned_column(2)
    scene = retromesh.load(retromesh.to_bytes(m), format="msh", skeleton=s,
                           animations=[samples.wave_animation(s, keys=5)])
    for c in scene.animations[0].channels:
        c.interpolation = "STEP"
    a = ani_from_scene(scene)
    track = a.tracks[1]
    assert track.keys["time"].tolist() == [0, 249, 250, 499, 500, 749, 750, 999, 1000]
    r = track.keys["rotation"]
    assert np.array_equal(r[1], r[0]) and np.array_equal(r[3], r[2])


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_hierarchies_pose_the_same_after_msh_skl_ani(seed):
    """Random joint trees under a rotated, translated, uniformly scaled Armature, with non-joint
    nodes in between and scaled joints: the engine files pose every vertex where glTF does."""
    import tempfile
    from pathlib import Path

    from retromesh.scene import Animation, Channel, Mesh, Node, Primitive, Scene, Skin
    from retromesh.transforms import inverse
    rng = np.random.default_rng(seed)

    def rq():
        q = rng.normal(size=4)
        return q / np.linalg.norm(q)
    scene = Scene()
    arm = scene.add_node(Node(name="Armature", translation=rng.normal(size=3), rotation=rq(),
                              scale=np.full(3, rng.choice([1.0, 0.01, 2.5]))))
    joints: list[int] = []
    for k in range(int(rng.integers(2, 7))):
        parent = arm if k == 0 else joints[int(rng.integers(len(joints)))]
        if rng.random() < 0.3:
            parent = scene.add_node(Node(name=f"mid{k}", translation=rng.normal(size=3),
                                         rotation=rq(), scale=np.full(3, rng.choice([1.0, 1.5]))),
                                    parent=parent)
        joints.append(scene.add_node(Node(name=f"j{k}", translation=rng.normal(size=3),
                                          rotation=rq(), scale=np.full(3, rng.choice([1.0, 0.5]))),
                                     parent=parent))
    nv = 30
    w = rng.uniform(0.1, 1, (nv, 4))
    prim = Primitive(positions=(rng.normal(size=(nv, 3)) * 3).astype(np.float32),
                     indices=np.arange(nv, dtype=np.uint32),
                     joints=rng.integers(0, len(joints), (nv, 4)).astype(np.uint16),
                     weights=(w / w.sum(1, keepdims=True)).astype(np.float32))
    skin = scene.add_skin(Skin(joints=joints,
                               inverse_bind_matrices=inverse(scene.world_matrices()[joints])))
    scene.add_node(Node(name="m", mesh=scene.add_mesh(Mesh(name="m", primitives=[prim])),
                        skin=skin))
    times = np.array([0.0, 0.5, 1.0])
    channels = []
    for j in joints:
        q = np.stack([rq() for _ in times])
        channels.append(Channel(j, "rotation", times, q * np.sign(q[:, 3:4])))
        channels.append(Channel(j, "translation", times,
                                scene.nodes[j].translation + rng.normal(size=(3, 3)) * 0.3))
    scene.animations.append(Animation(name="a", channels=channels))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "a.msh"
        retromesh.save(scene, out)
        back = retromesh.load(out, skeleton=out.with_suffix(".skl"),
                              animations=[Path(tmp) / "a_a.ani"])
    size = np.ptp(_posed(scene, scene.animations[0], 0.0), axis=0).max()
    for t in (0.0, 0.25, 0.9):
        err = np.abs(_posed(scene, scene.animations[0], t) - _posed(back, back.animations[0], t))
        assert err.max() < 1e-5 * size
