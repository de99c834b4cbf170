"""A model as its Luanti mod shows it (retromesh.luanti.scene): textures per mesh buffer,
further looks as KHR_materials_variants, clips cut from the timeline, the way back.

The registrations are made here as records (the Lua side has its own tests); the cow's are
those of mobs_animal's cow.lua."""
from __future__ import annotations

import json
import struct
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS
from helpers.cli import run
from helpers.gltfcheck import assert_valid_many
from retromesh.formats import b3d
from retromesh.luanti.model import Clip, Look, ModWorld, Registration
from retromesh.luanti.scene import apply, buffer_slots, undress

MOBS = CORPUS / "luanti" / "mobs_animal"
COW = MOBS / "models" / "mobs_cow.b3d"
needs_corpus = pytest.mark.skipif(not COW.is_file(), reason="no luanti corpus")

COW_CLIPS = (Clip("replace", 0, 30, 20, False), Clip("stand", 35, 75, 20),
             Clip("walk", 85, 114, 20), Clip("run", 120, 140, 40), Clip("punch", 145, 160, 20),
             Clip("die", 165, 185, 25, False))
COW_SECONDS = {"replace": 1.5, "stand": 2.0, "walk": 1.45, "run": 0.5, "punch": 0.75, "die": 0.8}


def _cow_world(model: str = "mobs_cow.b3d") -> ModWorld:
    reg = Registration("mobs_animal:cow", "mobs_redo", "mobs_animal", model,
                       looks=(Look("mobs_animal:cow", ("mobs_cow.png",)),
                              Look("mobs_animal:cow#2", ("mobs_cow2.png",))),
                       clips=COW_CLIPS, source="cow.lua:21")
    media = {p.name: p for p in (MOBS / "textures").iterdir()}
    media[model] = COW
    return ModWorld([reg], [], media)


def _glb_json(path: Path) -> dict:
    data = path.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + n])


@needs_corpus
def test_cow_clips_variants_valid_and_back(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = apply(_cow_world(), "mobs_cow.b3d", retromesh.load(COW))
        retromesh.save(scene, tmp_path / "cow.glb")
    names = [a.name for a in scene.animations]
    assert names[0] == "Cow"                    # the whole timeline first
    got = {a.name: round(a.duration, 4) for a in scene.animations[1:]}
    assert got == COW_SECONDS
    assert scene.variants == ["mobs_animal:cow", "mobs_animal:cow#2"]
    gltf = _glb_json(tmp_path / "cow.glb")
    assert "KHR_materials_variants" in gltf["extensionsUsed"]
    assert "extensionsRequired" not in gltf
    [prim] = [p for m in gltf["meshes"] for p in m["primitives"]]
    mapped = {v: m["material"] for m in prim["extensions"]["KHR_materials_variants"]["mappings"]
              for v in m["variants"]}
    assert mapped[0] == prim["material"] != mapped[1]
    images = [gltf["images"][gltf["textures"][gltf["materials"][mapped[v]]
              ["pbrMetallicRoughness"]["baseColorTexture"]["index"]]["source"]] for v in (0, 1)]
    assert all("bufferView" in i for i in images)       # the mod's PNGs are inside
    # read back: the variants and their mappings survive
    back = retromesh.load(tmp_path / "cow.glb")
    assert back.variants == scene.variants
    assert [len(a.channels) for a in back.animations] == [len(a.channels)
                                                          for a in scene.animations]
    # the way back writes what the undressed model writes (clips and looks taken off)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.save(back, tmp_path / "cow.b3d")
        plain = retromesh.load(COW)
        retromesh.save(plain, tmp_path / "plain.glb")
        retromesh.save(retromesh.load(tmp_path / "plain.glb"), tmp_path / "plain.b3d")
    assert (tmp_path / "cow.b3d").read_bytes() == (tmp_path / "plain.b3d").read_bytes()
    assert_valid_many([tmp_path / "cow.glb"])


@needs_corpus
def test_clip_keys_are_the_timeline_at_lua_frames():
    scene = retromesh.load(COW)
    timeline = scene.animations[0]
    apply(_cow_world(), "mobs_cow.b3d", scene)
    walk = next(a for a in scene.animations if a.name == "walk")
    fps = timeline.extras["fps"]
    for c, w in zip(timeline.channels, walk.channels):
        # Lua frame 85 is B3D key frame 86, at (86 - 1) / fps on the timeline
        assert np.allclose(w.sample([0.0]), c.sample([85 / fps]), atol=1e-5)
        assert np.allclose(w.sample([1.45]), c.sample([114 / fps]), atol=1e-5)


def _two_tris_b3d() -> bytes:
    """One MESH, two TRIS of one brush (two mesh buffers for Luanti), a TEXS texture."""
    verts = np.zeros(6, b3d.vrts_dtype(0, 1, 2))
    verts["position"] = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (2, 0, 0), (3, 0, 0), (2, 1, 0)]
    tris = [b3d.Tris(0, np.array([[0, 1, 2]], np.int32).view(b3d.TRI_DTYPE).reshape(-1)),
            b3d.Tris(0, np.array([[3, 4, 5]], np.int32).view(b3d.TRI_DTYPE).reshape(-1))]
    mesh = b3d.MeshChunk(-1, [b3d.Vrts(0, 1, 2, verts), *tris])
    node = b3d.NodeChunk(b"m", (0, 0, 0), (1, 1, 1), (1, 0, 0, 0), [mesh])
    doc = b3d.B3dFile(1, [b3d.Texs([b3d.TextureEntry(b"own.png", 1, 2, (0, 0), (1, 1), 0)]),
                          b3d.Brus(1, [b3d.BrushEntry(b"b", (1, 1, 1, 1), 0, 1, 0, [0])]),
                          node])
    return retromesh.to_bytes(doc)


def _png(path: Path, colour) -> Path:
    from PIL import Image
    Image.new("RGB", (4, 4), colour).save(path)
    return path


def test_one_texture_per_tris_in_order_and_blank_leaves_alone(tmp_path):
    (tmp_path / "two.b3d").write_bytes(_two_tris_b3d())
    scene = retromesh.load(tmp_path / "two.b3d")
    assert [s for *_, s in buffer_slots(scene)] == [0, 1]
    media = {n: _png(tmp_path / n, c) for n, c in (("a.png", (255, 0, 0)), ("b.png", (0, 0, 255)))}

    def shown(looks):
        s = retromesh.load(tmp_path / "two.b3d")
        world = ModWorld([Registration("m:x", "entity", "m", "two.b3d", looks=looks)], [], media)
        apply(world, "two.b3d", s)
        out = []
        for p in s.meshes[0].primitives:
            t = s.textures[s.materials[p.material].base_color_texture.texture]
            out.append(t.uri or t.name)
        return s, out

    _, got = shown((Look("m:x", ("a.png", "b.png")),))
    assert got == ["a", "b"]                           # two TRIS of one brush: two slots
    _, got = shown((Look("m:x", ("", "b.png")),))
    assert got == ["own.png", "b"]                      # "" leaves the buffer alone
    _, got = shown((Look("m:x", ("a.png",)),))
    assert got == ["a", "own.png"]                      # a short list too
    s, _ = shown((Look("m:x", ("a.png",)), Look("m:x#2", ("b.png", "b.png"))))
    p0, p1 = s.meshes[0].primitives
    assert s.variants == ["m:x", "m:x#2"]
    assert len(p0.variants) == 2 and len(p1.variants) == 2   # the own texture, then b


def test_missing_texture_and_range_beyond_are_reported(tmp_path):
    scene = retromesh.load(_wiggle(tmp_path))
    world = ModWorld([Registration("m:w", "mobs_redo", "m", "w.b3d",
                                   looks=(Look("m:w", ("nowhere.png",)),),
                                   clips=(Clip("stand", 0, 10, 15), Clip("far", 0, 9999, 15)))],
                     [], {})
    problems: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        apply(world, "w.b3d", scene, problems)
    rules = [r for r, _ in problems]
    assert rules == ["luanti.missing_texture", "luanti.clip_range"], problems
    assert any("nowhere.png" in str(w.message) for w in caught)
    assert [a.name for a in scene.animations][1:] == ["stand", "far"]


def _wiggle(tmp_path: Path) -> Path:
    from helpers.make_examples_import import wiggle_bytes
    (tmp_path / "w.b3d").write_bytes(wiggle_bytes())
    return tmp_path / "w.b3d"


def test_undress_takes_off_what_b3d_has_no_place_for(tmp_path):
    path = _wiggle(tmp_path)
    scene = retromesh.load(path)
    world = ModWorld([Registration("m:w", "mobs_redo", "m", "w.b3d",
                                   clips=(Clip("a", 0, 5, 10), Clip("b", 5, 10, 10)))], [], {})
    apply(world, "w.b3d", scene)
    assert len(scene.animations) == 3
    bare = undress(scene)
    assert len(bare.animations) == 1 and len(scene.animations) == 3   # the caller's is kept
    assert retromesh.to_bytes(retromesh.from_scene(scene, "b3d")) == \
        retromesh.to_bytes(retromesh.from_scene(bare, "b3d"))


def test_strips_and_fans_are_triangulated(tmp_path):
    from helpers.make_examples_import import make_examples
    scene = make_examples.crate_scene()
    retromesh.save(scene, tmp_path / "c.gltf")
    gltf = json.loads((tmp_path / "c.gltf").read_text())
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 2, 0)]
    for mode, want in ((5, [[0, 1, 2], [2, 1, 3], [2, 3, 4]]), (6, [[1, 2, 0], [2, 3, 0],
                                                                     [3, 4, 0]])):
        s = retromesh.Scene()
        s.add_node(retromesh.scene.Node(mesh=s.add_mesh(retromesh.scene.Mesh(primitives=[
            retromesh.scene.Primitive(positions=np.array(pos, np.float32), mode=mode)]))))
        retromesh.save(s, tmp_path / f"m{mode}.glb")
        back = retromesh.load(tmp_path / f"m{mode}.glb")
        p = back.meshes[0].primitives[0]
        assert p.mode == 4 and p.indices.reshape(-1, 3).tolist() == want
    assert gltf  # (the crate wrote)


# -- the CLI, with the mod reader stood in for ----------------------------------------------

@pytest.fixture
def cow_mod(monkeypatch, tmp_path):
    """``retromesh.luanti.mods`` answering with the cow's registrations (its own tests run
    the Lua)."""
    fake = types.ModuleType("retromesh.luanti.mods")
    calls = []

    def world_for_model(path, texture_path=(), within=None):
        calls.append(Path(path))
        return _cow_world(Path(path).name) if "cow" in Path(path).name else None

    fake.world_for_model = world_for_model          # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "retromesh.luanti.mods", fake)
    import retromesh.luanti
    monkeypatch.setattr(retromesh.luanti, "mods", fake, raising=False)
    return calls


@needs_corpus
def test_convert_info_check_use_the_mod(cow_mod, tmp_path):
    res = run("convert", COW, "-o", tmp_path / "cow.glb")
    assert res.exit_code == 0, res.output
    gltf = _glb_json(tmp_path / "cow.glb")
    assert [a["name"] for a in gltf["animations"]] == ["Cow", "replace", "stand", "walk", "run",
                                                        "punch", "die"]
    res = run("info", COW)
    text = " ".join(res.output.split())
    assert "mobs_animal:cow (mobs_redo)" in text and "walk 1.45 s" in text, text
    assert "mobs_cow.png; mobs_cow2.png" in text
    res = run("convert", COW, "-o", tmp_path / "bare.glb", "--no-lua")
    assert len(_glb_json(tmp_path / "bare.glb")["animations"]) == 1
    res = run("check", "--luanti", COW)
    assert res.exit_code == 0, res.output
    assert_valid_many([tmp_path / "cow.glb", tmp_path / "bare.glb"])


@needs_corpus
def test_preset_luanti_named_tracks_and_slots(cow_mod, tmp_path):
    res = run("convert", COW, "--preset", "luanti", "-o", tmp_path / "cow.gltf")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cow.gltf"]   # nothing beside it
    gltf = json.loads((tmp_path / "cow.gltf").read_text())
    assert gltf["buffers"][0]["uri"].startswith("data:application/octet-stream;base64,")
    assert [a["name"] for a in gltf["animations"]][:2] == ["Cow", "replace"]
    assert "KHR_materials_variants" not in json.dumps(gltf)       # textures come from the mod
    # the whole timeline keyed at Lua frames: set_animation({x = 35, y = 75}, 20) still works
    back = retromesh.load(tmp_path / "cow.gltf")
    assert back.animations[0].duration == pytest.approx(185.0)   # B3D frames 1..186
    [prim] = [p for m in gltf["meshes"] for p in m["primitives"]]
    assert gltf["materials"][prim["material"]]["pbrMetallicRoughness"]["baseColorTexture"][
        "index"] == 0                                            # buffer 0: texture 0
    res = run("check", "--luanti", tmp_path / "cow.gltf")
    assert res.exit_code == 0 and "warning" not in res.output, res.output
    assert_valid_many([tmp_path / "cow.gltf"])


def test_check_luanti_gltf_rules(tmp_path):
    from helpers.make_examples_import import make_examples
    retromesh.save(make_examples.crate_scene(), tmp_path / "c.gltf")
    gltf = json.loads((tmp_path / "c.gltf").read_text())
    res = run("check", "--luanti", tmp_path / "c.gltf")
    text = " ".join(res.output.split())
    assert res.exit_code == 1 and "data URI" in text             # a .bin beside: refused
    gltf["buffers"][0]["uri"] = "data:application/octet-stream;base64," + __import__(
        "base64").b64encode((tmp_path / "c.bin").read_bytes()).decode()
    gltf["meshes"][0]["primitives"][0]["mode"] = 1
    (tmp_path / "d.gltf").write_text(json.dumps(gltf))
    text = " ".join(run("check", "--luanti", "--no-scene", tmp_path / "d.gltf").output.split())
    assert "5.10-5.16 draw it as triangles, 5.17 skips it" in text
    (tmp_path / "e.gltf").write_bytes(b"")
    res = run("check", "--luanti", tmp_path / "e.gltf")
    text = " ".join(res.output.split())
    assert res.exit_code == 1 and "Luanti refuses it" in text and "crash" not in text


def test_empty_b3d_texture_name_invents_no_image(tmp_path):
    doc = retromesh.read(_two_tris_b3d(), format="b3d")
    doc.textures[0].file, doc.textures[0].flags = b"", 9
    (tmp_path / "e.b3d").write_bytes(retromesh.to_bytes(doc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retromesh.save(retromesh.load(tmp_path / "e.b3d"), tmp_path / "e.glb")
        retromesh.save(retromesh.load(tmp_path / "e.glb"), tmp_path / "back.b3d")
    assert not caught, [str(w.message) for w in caught]
    assert "images" not in _glb_json(tmp_path / "e.glb")
    back = retromesh.read(tmp_path / "back.b3d")
    assert back.textures == doc.textures and back.brushes == doc.brushes   # same flags, no name


@needs_corpus
def test_gallery_shows_the_mob_with_clips_and_looks(cow_mod, tmp_path):
    from retromesh.gallery import assets, thumbs
    from retromesh.gallery.build import build_gallery
    try:
        assets.viewer_bundle()
    except Exception as exc:   # no npm, or the registry out of reach
        pytest.skip(f"the gallery viewer cannot be built here: {exc}")
    (tmp_path / "mod" / "models").mkdir(parents=True)
    (tmp_path / "mod" / "models" / "mobs_cow.b3d").write_bytes(COW.read_bytes())
    [card] = build_gallery([tmp_path / "mod"], tmp_path / "site", thumbnails=False)
    assert card["ok"], card
    assert card["variants"] == ["mobs_animal:cow", "mobs_animal:cow#2"]
    assert [a["name"] for a in card["animations"]][1:] == list(COW_SECONDS)
    page = (tmp_path / "site" / card["page"]).read_text()
    assert 'id="variant"' in page and "mobs_animal:cow#2" in page
    if thumbs.browser() is not None:
        png = tmp_path / "cow.png"
        assert thumbs.screenshot(tmp_path / "site" / card["page"], png, size=400)


@needs_corpus
def test_mobs_animal_folder_end_to_end(tmp_path):
    """The real thing: the mod's Lua run (fenced), ten GLBs, the cow's clips and looks."""
    pytest.importorskip("lupa")
    res = run("convert", MOBS, "-o", tmp_path / "out")
    assert res.exit_code == 0, res.output
    glbs = sorted((tmp_path / "out").rglob("*.glb"))
    assert len(glbs) == 10
    cow = _glb_json(next(g for g in glbs if g.name == "mobs_cow.glb"))
    assert [a["name"] for a in cow["animations"]] == ["Cow", *COW_SECONDS]
    assert [v["name"] for v in cow["extensions"]["KHR_materials_variants"]["variants"]] == \
        ["mobs_animal:cow", "mobs_animal:cow#2"]
    back = retromesh.load(next(g for g in glbs if g.name == "mobs_cow.glb"))
    got = {a.name: round(a.duration, 4) for a in back.animations[1:]}
    assert got == COW_SECONDS
    assert_valid_many(glbs)
