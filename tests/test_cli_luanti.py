"""`retromesh check --luanti` and `convert --preset luanti` (Luanti users)."""
from __future__ import annotations

import json
import struct

import numpy as np

import retromesh
from helpers.cli import run
from helpers.gltfcheck import assert_valid
from helpers.make_examples_import import make_examples, wiggle_bytes
from retromesh.formats import b3d


def _glb_json(path) -> dict:
    data = path.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + n])


def test_plain_b3d_passes(tmp_path):
    (tmp_path / "w.b3d").write_bytes(wiggle_bytes())
    res = run("check", "--luanti", tmp_path / "w.b3d")
    assert res.exit_code == 0, res.output


def test_three_uv_sets_fail_for_luanti_only(tmp_path):
    doc = retromesh.read(wiggle_bytes(), format="b3d")
    for node, _ in doc.walk():
        mesh = node.mesh
        if mesh is not None and mesh.vrts is not None:
            v = mesh.vrts
            new = np.zeros(len(v.vertices), b3d.vrts_dtype(v.flags, 3, v.tex_coord_set_size))
            for name in v.vertices.dtype.names:
                if name in new.dtype.names and new[name].shape == v.vertices[name].shape:
                    new[name] = v.vertices[name]
            i = mesh.children.index(v)
            mesh.children[i] = b3d.Vrts(v.flags, 3, v.tex_coord_set_size, new)
    (tmp_path / "uv3.b3d").write_bytes(retromesh.to_bytes(doc))
    assert run("check", tmp_path / "uv3.b3d").exit_code == 0
    res = run("check", "--luanti", tmp_path / "uv3.b3d")
    assert res.exit_code == 1
    assert "tex_coord_sets 3" in " ".join(res.output.split())


def test_all_zero_bone_weights_are_flagged(tmp_path):
    doc = retromesh.read(wiggle_bytes(), format="b3d")
    for node, _ in doc.walk():
        for c in node.children:
            if isinstance(c, b3d.Bone):
                c.weights["weight"] = 0
    (tmp_path / "z.b3d").write_bytes(retromesh.to_bytes(doc))
    res = run("check", "--luanti", tmp_path / "z.b3d")
    assert "weights all 0" in " ".join(res.output.split())


def _two_clip_glb(tmp_path):
    scene = make_examples.wiggle_scene()
    second = retromesh.scene.Animation(name="again", channels=list(scene.animations[0].channels))
    scene.animations.append(second)
    retromesh.save(scene, tmp_path / "two.glb")
    return tmp_path / "two.glb"


def test_gltf_rules(tmp_path):
    glb = _two_clip_glb(tmp_path)
    res = run("check", "--luanti", glb)
    text = " ".join(res.output.split())
    assert "2 animations" in text and "5.17" in text


def test_preset_luanti_writes_within_the_rules(tmp_path):
    glb = _two_clip_glb(tmp_path)
    res = run("convert", glb, "-o", tmp_path / "lu.glb", "--preset", "luanti")
    assert res.exit_code == 0, res.output
    gltf = _glb_json(tmp_path / "lu.glb")
    assert [a["name"] for a in gltf["animations"]] == ["wiggle", "again"]   # named tracks (5.17)
    assert "images" not in gltf
    assert all("source" not in t for t in gltf.get("textures", []))
    interps = {s["interpolation"] for a in gltf["animations"] for s in a["samplers"]}
    assert interps <= {"LINEAR", "STEP"}
    assert_valid(tmp_path / "lu.glb")
    res = run("check", "--luanti", tmp_path / "lu.glb")
    # the first track is the whole timeline (keyed at Lua frames): older clients play it
    assert res.exit_code == 0 and "warning" not in res.output, res.output
    assert gltf["animations"][0]["extras"]["luanti_times"] == "Lua frames"
    assert run("convert", glb, "-o", tmp_path / "x.glb", "--preset", "nope").exit_code == 2


def test_truncated_b3d_is_flagged_for_luanti(tmp_path):
    (tmp_path / "t.b3d").write_bytes(wiggle_bytes()[:300])
    res = run("check", "--luanti", tmp_path / "t.b3d")
    assert res.exit_code == 1
    text = " ".join(res.output.split())
    assert "truncated" in text and "Luanti" in text
