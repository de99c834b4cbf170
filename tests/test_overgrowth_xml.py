"""Overgrowth character / rig / object XML: the descriptor chain, path resolution, the
engine's loading errors, safe XML. Fixtures: the stick figure in the game's layout."""
from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

import retromesh
from helpers.gltfcheck import assert_valid
from retromesh import registry
from retromesh.batch import scannable
from retromesh.cli import app
from retromesh.errors import FormatError, LossWarning, UnknownFormatError
from retromesh.formats.overgrowth.ogchain import Chain
from retromesh.formats.overgrowth.ogxml import DataRoots, parse_xml
from retromesh.formats.overgrowth.ogxml_samples import write_character
from retromesh.formats.overgrowth.ogxml_scene_read import check
from retromesh.formats.overgrowth.phxbn import write as write_phxbn
from retromesh.formats.overgrowth.samples import stick_skeleton
from retromesh.safenames import UnsafePath

runner = CliRunner()


@pytest.fixture
def game(tmp_path: Path) -> Path:
    write_character(tmp_path / "game")
    return tmp_path / "game"


def _char(game: Path) -> Path:
    return game / "Data/Characters/stick.xml"


def _rules(path: Path) -> dict[str, str]:
    return {f.rule: f.message for f in check(retromesh.read(path))}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# -- the chain converts ------------------------------------------------------------------------

def test_character_converts_skinned_textured_animated(game, tmp_path):
    out = tmp_path / "stick.glb"
    res = runner.invoke(app, ["convert", str(_char(game)), "-o", str(out)])
    assert res.exit_code == 0, res.output
    info = assert_valid(out)
    assert info["hasSkins"] and info["hasTextures"] and info["animationCount"] == 2
    assert info["totalTriangleCount"] == 72
    scene = retromesh.load(out)
    anims = {a.name: a.extras for a in scene.animations}
    assert anims["idle"]["roles"] == ["idle", "movement"]       # one file, two roles: once
    assert anims["movement/r_walk"]["overgrowth_path"] == "Data/Animations/r_walk.anm"
    og = scene.extras["overgrowth"]
    assert og["bone_path"] == "Data/Skeletons/r_stick.phxbn"
    assert og["shader"] == "cubemapobjchar" and og["default_scale"] == "1.05"
    mat = scene.materials[0]
    assert mat.base_color_texture is not None
    assert mat.extras["normal_map"] == "Data/Textures/Characters/stick_n.tga"
    assert not _rules(_char(game))


def test_mass_path_replaces_bone_masses(game):
    parts = Chain(retromesh.read(_char(game))).resolve()
    assert np.all(np.asarray(parts.skeleton.bone_masses) == 3.0)


def test_rig_and_object_descriptors_convert(game, tmp_path):
    rig = retromesh.convert(game / "Data/Skeletons/r_stick.xml", tmp_path / "rig.glb")
    obj = retromesh.convert(game / "Data/Objects/Characters/stick.xml", tmp_path / "obj.glb")
    infos = [assert_valid(p) for p in (tmp_path / "rig.glb", tmp_path / "obj.glb")]
    assert infos[0]["hasSkins"] and not infos[0]["hasTextures"]
    assert infos[1]["hasTextures"] and not infos[1]["hasSkins"]
    assert rig and obj


def test_roles_and_extra_animations(game):
    scene = retromesh.load(_char(game), roles="movement")
    assert sorted(a.name for a in scene.animations) == ["movement/r_walk", "movement/r_wave"]
    scene = retromesh.load(_char(game), roles=["idle"],
                           animations=[str(game / "Data/Animations/r_walk.anm")])
    assert [a.name for a in scene.animations] == ["idle", "r_walk"]


def test_read_write_identical_and_detected(game):
    for rel in ("Characters/stick.xml", "Skeletons/r_stick.xml", "Objects/Characters/stick.xml"):
        path = game / "Data" / rel
        doc = retromesh.read(path)
        assert registry.format_of(doc).name == "overgrowth-xml"
        assert retromesh.to_bytes(doc) == path.read_bytes()
    with pytest.raises(UnknownFormatError):
        retromesh.read(_write(game / "Data/Levels/level.xml", "<Level><Objects/></Level>"))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_folder_scan_takes_descriptors_only(game):
    level = _write(game / "Data/Levels/level.xml", '<?xml version="1.0" ?><Level/>')
    assert not scannable(level)
    assert scannable(_char(game)) and scannable(game / "Data/Skeletons/r_stick.xml")


# -- paths -----------------------------------------------------------------------------------------

def test_mod_files_first_then_the_game(game, tmp_path):
    mod = game / "Data/Mods/mymod"
    write_character(mod)
    for rel in ("Animations", "Textures"):          # only the game has them now
        shutil.rmtree(mod / "Data" / rel)
    heavy = stick_skeleton()
    heavy.bone_masses = np.full(len(heavy.bone_ends), 7.0, "<f4")
    (mod / "Data/Skeletons/r_stick_mass.phxbn").write_bytes(write_phxbn(heavy))
    char = mod / "Data/Characters/stick.xml"
    assert DataRoots(char).roots == [mod.resolve(), game.resolve()]
    parts = Chain(retromesh.read(char)).resolve()
    assert np.all(np.asarray(parts.skeleton.bone_masses) == 7.0)    # the mod's file wins
    assert len(parts.animations) == 2 and parts.color_map is not None
    assert not _rules(char)


def test_names_match_case_insensitively_and_data_path(game, tmp_path):
    _edit(_char(game), "Data/Skeletons/r_stick.xml", "data/SKELETONS/R_Stick.XML")
    assert not _rules(_char(game))
    elsewhere = _write(tmp_path / "loose/stick.xml", _char(game).read_text())
    assert "overgrowth-xml.missing_file" in _rules(elsewhere)
    scene = retromesh.load(elsewhere, data_path=[str(game / "Data")])
    assert len(scene.animations) == 2


@pytest.mark.parametrize("bad", ["../../../../etc/passwd", "/etc/passwd", "C:/Windows/win.ini",
                                 "Data/../../secret.xml", "Data\\..\\..\\secret.xml",
                                 "etc/passwd", "file:///etc/passwd"])
def test_paths_out_of_the_root_are_refused(game, bad):
    _edit(_char(game), "Data/Skeletons/r_stick.xml", bad)
    assert "overgrowth-xml.unsafe_path" in _rules(_char(game))
    with pytest.raises(FormatError, match="unsafe_path"):
        retromesh.load(_char(game))


def test_a_link_out_of_the_root_is_refused(game, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(game / "Data/Skeletons/r_stick.xml", outside / "r_stick.xml")
    link = game / "Data/Skeletons/r_link.xml"
    try:
        os.symlink(outside / "r_stick.xml", link)
    except OSError:
        pytest.skip("no symbolic links here")
    _edit(_char(game), "Data/Skeletons/r_stick.xml", "Data/Skeletons/r_link.xml")
    assert "overgrowth-xml.unsafe_path" in _rules(_char(game))
    with pytest.raises(UnsafePath):
        DataRoots(_char(game)).find("Data/Skeletons/r_link.xml")


# -- the engine's loading errors (the PHXBN table) --------------------------------------------------

def _bone_path_missing(game: Path) -> None:
    (game / "Data/Skeletons/r_stick.phxbn").unlink()


def _rig_root(game: Path) -> None:
    _edit(_char(game), 'skeleton = "Data/Skeletons/r_stick.xml"',
          'skeleton = "Data/Objects/Characters/stick.xml"')


def _asymmetric(game: Path) -> None:
    skel = stick_skeleton()
    pts = np.array(skel.points)
    pts[3] += [0.05, 0.0, 0.0]           # the left hand no longer mirrors the right
    skel.points = pts.astype("<f4")
    (game / "Data/Skeletons/r_stick.phxbn").write_bytes(write_phxbn(skel))


def _vertex_count(game: Path) -> None:
    obj = game / "Data/Models/Characters/stick.obj"
    obj.write_text(obj.read_text() + "f 1 2 3\n")


TABLE = [
    (_bone_path_missing, "bone_path", "Could not find bone_path file from attribute."),
    (_rig_root, "rig_root", "Missing root Rig node in xml file."),
    (_asymmetric, "symmetry", "PHXBN skeleton is not symmetrical."),
    (_vertex_count, "vertex_count", "Skeleton file and model file have different vertex counts."),
]


@pytest.mark.parametrize(("spoil", "rule", "words"), TABLE, ids=[t[1] for t in TABLE])
def test_phxbn_loading_errors_in_the_engines_words(game, tmp_path, spoil, rule, words):
    spoil(game)
    rules = _rules(_char(game))
    assert rules[f"overgrowth-xml.{rule}"].startswith(words)
    res = runner.invoke(app, ["check", str(_char(game))])
    assert res.exit_code == 1 and words in " ".join(res.output.split())
    found = json.loads(runner.invoke(app, ["check", "--json", str(_char(game))]).output)
    said = [(f["rule"], f["message"]) for f in found["files"][0]["findings"]]
    # each problem said once: the scene stage, which would fail on the same error, is skipped
    assert len(said) == len(set(said)) and "overgrowth-xml.scene" not in dict(said)
    with pytest.raises(FormatError) as info:
        retromesh.load(_char(game))
    assert words in str(info.value) and f"overgrowth-xml.{rule}" in str(info.value)
    res = runner.invoke(app, ["convert", str(_char(game)), "-o", str(tmp_path / "x.glb")])
    assert res.exit_code == 1 and words in " ".join(res.output.split())
    assert not (tmp_path / "x.glb").exists()


def test_bone_path_attribute_missing(game):
    _edit(game / "Data/Skeletons/r_stick.xml", 'bone_path = "Data/Skeletons/r_stick.phxbn"', "")
    assert "no bone_path attribute" in _rules(_char(game))["overgrowth-xml.bone_path"]


def test_strict_false_converts_an_asymmetric_skeleton_with_a_warning(game, tmp_path):
    _asymmetric(game)
    with pytest.warns(LossWarning, match="not symmetrical"):
        scene = retromesh.load(_char(game), strict=False)
    assert len(scene.animations) == 2


def test_object_errors(game):
    obj = game / "Data/Objects/Characters/stick.xml"
    _edit(obj, "<ColorMap>Data/Textures/Characters/stick_c.tga</ColorMap>", "")
    assert _rules(_char(game))["overgrowth-xml.object_color_map"].startswith(
        "Color map not found. Aborting object load.")
    _edit(obj, "<ShaderName>cubemapobjchar</ShaderName>",
          "<ColorMap>Data/Textures/Characters/gone.tga</ColorMap><ShaderName>x</ShaderName>")
    msg = _rules(_char(game))["overgrowth-xml.missing_file"]
    assert msg.startswith('Unable to find "Data/Textures/Characters/gone.tga" in any of the '
                          "requested locations.")


def test_converted_dds_is_used_when_the_source_image_is_gone(game):
    tex = game / "Data/Textures/Characters"
    from PIL import Image
    Image.open(tex / "stick_c.tga").save(tex / "stick_c.tga_converted.dds")
    (tex / "stick_c.tga").unlink()
    assert not _rules(_char(game))
    scene = retromesh.load(_char(game))
    assert scene.textures and scene.textures[0].image[:4] == b"\x89PNG"


def test_synced_group_in_a_circle(game):
    _edit(game / "Data/Animations/r_movement.xml", "Data/Animations/r_wave.anm",
          "Data/Animations/r_movement.xml")
    assert "in a circle" in _rules(_char(game))["overgrowth-xml.animation"]


def test_appearance_without_skeleton(game):
    _edit(_char(game), 'skeleton = "Data/Skeletons/r_stick.xml"', "")
    assert "no skeleton attribute" in _rules(_char(game))["overgrowth-xml.appearance"]


# -- XML safety ----------------------------------------------------------------------------------

def test_malformed_xml_is_a_format_error_with_its_line(tmp_path):
    bad = _write(tmp_path / "Data/Characters/bad.xml",
                 '<?xml version="1.0" ?>\n<character>\n  <appearance obj_path="a"\n</character>')
    with pytest.raises(FormatError, match=r"line 4, column \d+.*expected well-formed XML"):
        retromesh.read(bad)


def test_malformed_referenced_xml_is_reported_with_its_line(game):
    _write(game / "Data/Skeletons/r_stick.xml", "<rig bone_path='x'\n\n<oops>")
    msg = _rules(_char(game))["overgrowth-xml.malformed"]
    assert "line 3" in msg and "well-formed XML" in msg


BOMB = """<?xml version="1.0"?>
<!DOCTYPE character [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<character><team>&d;</team></character>"""

EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE character SYSTEM "file:///etc/passwd">
<character><team>&x;</team></character>"""


@pytest.mark.parametrize("text", [BOMB, EXTERNAL, '<!DOCTYPE character><character/>'],
                         ids=["entity-bomb", "external", "doctype"])
def test_dtds_and_entities_are_refused(tmp_path, text):
    with pytest.raises(FormatError, match="without DTDs or entities"):
        parse_xml(text.encode(), "x.xml")
    path = _write(tmp_path / "Data/Characters/x.xml", text)
    with pytest.raises(FormatError):
        retromesh.read(path, format="overgrowth-xml")


def test_deep_nesting_is_refused():
    with pytest.raises(FormatError, match="reasonable depth"):
        parse_xml(b"<character>" + b"<a>" * 200 + b"</a>" * 200 + b"</character>")


def test_no_stray_exception_on_damaged_descriptors(game):
    """Every byte prefix of the character XML is a FormatError or a document."""
    data = _char(game).read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(0, len(data), 7):
            try:
                retromesh.read(data[:n], format="overgrowth-xml")
            except FormatError:
                pass


# -- Blender ---------------------------------------------------------------------------------------

def test_blender_bridge_imports_the_character(game, tmp_path):
    """The extension's generic path: the picked .xml is the main file; Blender's glTF importer
    shows a textured, skinned mesh that moves."""
    from helpers import blender_run
    from retromesh.blender import bridge
    jobs = bridge.group_files([_char(game), game / "Data/Animations/r_walk.anm"])
    assert len(jobs) == 1 and jobs[0].main == _char(game)
    glb = tmp_path / "b.glb"
    bridge.load_to_glb(jobs[0], glb)
    why = blender_run.unavailable()
    if why:
        pytest.skip(why)
    script = Path(__file__).parent / "blender_scripts/gltf_stats.py"
    info = blender_run.run(script.read_text(), {"files": [str(glb)]})[str(glb)]
    assert "error" not in info, info
    assert info["objects"].get("ARMATURE") == 1 and info["bones"] >= 6
    assert info["actions"] >= 2 and info["vertex_motion"] > 0.01
    assert info["images"] and all(i["pixels"] for i in info["images"])


def test_gallery_card_and_info(game, tmp_path):
    from retromesh.gallery.build import find_models, model_card
    _write(game / "Data/Levels/level.xml", "<Level/>")
    models = find_models([game / "Data"])
    sources = sorted(m.source.name for m in models)
    assert "stick.xml" in sources and "level.xml" not in sources
    char = next(m for m in models if m.source == _char(game))
    card = model_card(char, tmp_path / "site", thumbnail=False)
    assert "error" not in card, card
    res = runner.invoke(app, ["info", "--json", str(_char(game))])
    assert res.exit_code == 0, res.output
    assert '"animation_files": 2' in res.output and '"problems": 0' in res.output


_XMLISH = st.lists(st.sampled_from(list('<>/="? !-[]&;abcxml\n') + [
    "<rig ", "<character>", "</character>", "<!DOCTYPE", "&#x41;", "<!ENTITY a 'b'>", "&a;",
    "<?xml version='1.0'?>", "<![CDATA[", "]]>"]), max_size=40).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_XMLISH, st.binary(max_size=64).map(lambda b: b.decode("latin-1"))))
def test_parse_xml_fuzz_only_format_errors(text):
    try:
        node = parse_xml(text.encode("utf-8", "surrogatepass"), "fuzz.xml")
    except FormatError:
        return
    assert node is None or node.tag


def test_morphs_become_morph_targets(game, tmp_path):
    scene = retromesh.load(_char(game))
    mesh = scene.meshes[0]
    assert mesh.extras["targetNames"] == ["wink", "fist0", "fist1"]      # look_u is default=true
    assert mesh.weights == [0.0, 0.0, 0.0]
    assert [float(np.abs(t.positions).max()) for t in mesh.primitives[0].targets] == \
        pytest.approx([0.05, 0.02, 0.04])
    models = game / "Data/Models/Characters"
    shutil.copy(models / "stick_wink.obj", models / "stick_female.obj")
    _edit(_char(game), 'channel_0 = "cloth"',
          'channel_0 = "cloth" morph = "Data/Models/Characters/stick_female.obj"')
    (models / "stick_fist1.obj").write_text((models / "stick_fist1.obj").read_text() + "f 1 2 3\n")
    (models / "stick_wink.obj").unlink()
    rules = _rules(_char(game))
    assert "triangle corners" in rules["overgrowth-xml.morph"]
    assert not any(f.is_error for f in check(retromesh.read(_char(game))))
    scene = retromesh.load(_char(game))
    mesh = scene.meshes[0]
    assert mesh.extras["targetNames"] == ["fist0", "permanent"] and mesh.weights == [0.0, 1.0]
    retromesh.save(scene, tmp_path / "m.glb")
    assert assert_valid(tmp_path / "m.glb")["hasMorphTargets"]


def test_object_xml_without_an_element(game):
    _write(game / "Data/Objects/Characters/stick.xml", '<?xml version="1.0" ?>\n<!-- empty -->\n')
    assert _rules(_char(game))["overgrowth-xml.object_model"].startswith("Model name not found.")


def test_rig_xml_without_an_element_is_missing_root_rig(game):
    _write(game / "Data/Skeletons/r_stick.xml", '<?xml version="1.0" ?>\n')
    assert _rules(_char(game))["overgrowth-xml.rig_root"].startswith(
        "Missing root Rig node in xml file.")
    assert parse_xml(b"<?xml version='1.0'?><!-- x -->") is None
    for text in (b"", b"  \n", b"<character>"):
        with pytest.raises(FormatError):
            parse_xml(text)
