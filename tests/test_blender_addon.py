"""The Blender extension's parts that run without Blender: file grouping, the manifest, the
dependency list, and that the add-on's import path stays free of bpy and the CLI's packages."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from retromesh.blender import bridge
from retromesh.blender.build import BLENDER_SHIPS, CLI_ONLY, manifest_text, runtime_dependencies
from retromesh.gltf.container import pack, unpack

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples"


def test_group_picks_main_file_and_companions():
    jobs = bridge.group_files([EX / "overgrowth/walk.anm", EX / "overgrowth/stick.phxbn",
                               EX / "overgrowth/wave.anm"])
    assert len(jobs) == 1 and jobs[0].main.name == "stick.phxbn"
    assert [p.name for p in jobs[0].options["animations"]] == ["walk.anm", "wave.anm"]
    assert jobs[0].options["mesh"].name == "stick.obj"          # found beside by name


def test_group_finds_lost_saga_companions_by_name(tmp_path):
    jobs = bridge.group_files([EX / "lostsaga/column.msh"])
    assert jobs[0].options["skeleton"].name == "column.skl"
    assert [p.name for p in jobs[0].options["animations"]] == ["column_wave.ani"]
    assert bridge.group_files([EX / "lostsaga/column.msh"], find_beside=False)[0].options == {}


def test_group_keeps_unrelated_models_apart_and_drops_material_files():
    picked = [EX / "wiggle.b3d", EX / "crate.b3d", EX / "westwood/tank.vxl",
              EX / "westwood/tank.hva", EX / "lostsaga/column.txt"]
    jobs = bridge.group_files(picked)
    assert sorted(j.main.name for j in jobs) == ["crate.b3d", "tank.vxl", "wiggle.b3d"]
    tank = next(j for j in jobs if j.main.name == "tank.vxl")
    assert tank.options["hva"].name == "tank.hva"


def test_load_to_glb_embeds_images_and_skips_options_a_format_lacks(tmp_path):
    glb = tmp_path / "w.glb"
    bridge.load_to_glb(bridge.Job(EX / "wiggle.b3d"), glb, fps=30)   # B3D takes no fps
    import retromesh
    scene = retromesh.load(glb)
    assert scene.textures and scene.textures[0].image is not None


def test_dependencies_leave_out_numpy_and_the_cli():
    names = {p.split("==")[0] for p in runtime_dependencies()}
    assert "pillow" in {n.lower() for n in names} and "pygltflib" not in names
    assert not names & (BLENDER_SHIPS | CLI_ONLY)


def test_manifest_is_a_blender_4_2_extension():
    m = tomllib.loads(manifest_text("0.1.0", ["retromesh-0.1.0-py3-none-any.whl"]))
    assert m["schema_version"] == "1.0.0" and m["id"] == "retromesh" and m["type"] == "add-on"
    assert m["blender_version_min"] == "4.2.0"
    assert m["wheels"] == ["./wheels/retromesh-0.1.0-py3-none-any.whl"]
    assert not m["tagline"].endswith(".") and len(m["tagline"]) <= 64


def test_addon_path_imports_neither_bpy_nor_the_cli(tmp_path):
    code = ("import sys, retromesh.blender, retromesh.blender.bridge as b\n"
            f"b.load_to_glb(b.Job(__import__('pathlib').Path({str(EX / 'wiggle.b3d')!r})), "
            f"{str(tmp_path / 'x.glb')!r})\n"
            "b.convert_glb({0!r}, {1!r})\n".format(str(tmp_path / "x.glb"), str(tmp_path / "y.b3d"))
            + "bad = [m for m in ('bpy', 'typer', 'rich', 'retromesh.cli') if m in sys.modules]\n"
              "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_extras_survive_blender_as_marked_json(tmp_path):
    """Values a Blender custom property cannot hold travel as JSON text and come back."""
    import retromesh
    glb = tmp_path / "c.glb"
    bridge.load_to_glb(bridge.group_files([EX / "lostsaga/column.msh"])[0], glb)
    original = retromesh.load(glb).animations[0].extras
    per_animation = bridge.encode_extras(glb)
    events = per_animation["column_wave"]["events"]
    assert isinstance(events, str) and events.startswith(bridge.JSON_MARK)
    assert per_animation["column_wave"]["total_time_ms"] == original["total_time_ms"]
    bridge.decode_extras(glb)
    assert retromesh.load(glb).animations[0].extras == original


def test_marked_json_edited_into_nonsense_stays_text():
    assert bridge.decode_extras_value({"a": bridge.JSON_MARK + "{oops"}) == {"a": bridge.JSON_MARK + "{oops"}
    assert bridge.encode_extras_value({"n": None, "b": True, "big": 2 ** 40, "s": "x", "f": 1.5}) == {
        "n": bridge.JSON_MARK + "null", "b": bridge.JSON_MARK + "true",
        "big": bridge.JSON_MARK + str(2 ** 40), "s": "x", "f": 1.5}


def _column_without_its_texture(tmp_path: Path) -> Path:
    """The Lost Saga column example without column_diffuse.png, loaded as the add-on does."""
    import shutil
    glb = tmp_path / "c.glb"
    src = tmp_path / "src"
    src.mkdir()
    for name in ("column.msh", "column.skl", "column.txt"):
        shutil.copy(EX / "lostsaga" / name, src / name)
    bridge.load_to_glb(bridge.group_files([src / "column.msh"])[0], glb)
    return glb


def test_texture_whose_image_is_missing_comes_back_after_blender_drops_it(tmp_path):
    """Blender's exporter leaves out textures it could not load; the material's extras bring
    them back, unless the slot holds a texture by then."""
    import retromesh
    glb = _column_without_its_texture(tmp_path)
    assert retromesh.load(glb).textures[0].image is None      # column_diffuse.png is not there
    bridge.encode_extras(glb)
    doc, rest = _read_glb(glb)
    for m in doc["materials"]:                                 # what Blender's exporter does
        m["pbrMetallicRoughness"].pop("baseColorTexture")
    for key in ("textures", "images", "samplers"):
        doc.pop(key, None)
    glb.write_bytes(pack(json.dumps(doc).encode(), rest))
    bridge.decode_extras(glb)
    scene = retromesh.load(glb)
    assert [t.uri for t in scene.textures] == ["column_diffuse.png"]
    assert scene.materials[0].base_color_texture is not None
    assert bridge.MISSING_IMAGES not in scene.materials[0].extras


def test_placeholder_blender_wrote_back_is_the_texture_the_model_named(tmp_path):
    """A texture not found is an embedded placeholder; Blender writes it back re-encoded,
    without its image's extras and under names of its own: the material's extras put the
    name back, and the model converts back as from the untouched GLB, with no image file."""
    import io
    import shutil

    from PIL import Image

    import retromesh
    from retromesh.gltf.placeholder import placeholder_png
    glb = _column_without_its_texture(tmp_path)
    doc, rest = _read_glb(glb)
    (image,) = doc["images"]
    assert "uri" not in image and image["extras"]["placeholder"] is True
    bridge.encode_extras(glb)
    untouched = tmp_path / "untouched.glb"
    shutil.copy(glb, untouched)
    doc, rest = _read_glb(glb)
    png = io.BytesIO()          # what Blender's exporter does: its own PNG, its own names
    Image.open(io.BytesIO(placeholder_png())).convert("RGBA").save(png, "PNG", compress_level=1)
    doc["images"] = [{"name": "column_diffuse.001", "mimeType": "image/png", "bufferView":
                      len(doc["bufferViews"])}]
    doc["bufferViews"].append({"buffer": 0, "byteOffset": len(rest), "byteLength":
                               len(png.getvalue())})
    rest = rest + png.getvalue() + b"\0" * (-len(png.getvalue()) % 4)
    doc["buffers"][0]["byteLength"] = len(rest)
    doc["textures"] = [{"source": 0}]
    doc.pop("samplers", None)
    glb.write_bytes(pack(json.dumps(doc).encode(), rest))
    out = tmp_path / "back"
    written, _ = bridge.convert_glb(glb, out / "column.msh")      # decodes the extras first
    scene = retromesh.load(glb)
    assert [(t.uri, t.image) for t in scene.textures] == [("column_diffuse.png", None)]
    assert bridge.MISSING_IMAGES not in scene.materials[0].extras
    assert not [p for p in written if p.suffix == ".png"]
    assert not list(out.glob("*.png"))
    # the same bytes as from the GLB Blender did not touch
    bridge.convert_glb(untouched, tmp_path / "plain" / "column.msh")
    assert (out / "column.msh").read_bytes() == (tmp_path / "plain" / "column.msh").read_bytes()


def _read_glb(glb):
    json_text, bin_data = unpack(glb.read_bytes())
    return json.loads(json_text), bin_data


def _glb_doc(nodes, skins, animations=()):
    return {"asset": {"version": "2.0"}, "scenes": [{"nodes": [0]}], "nodes": nodes,
            "skins": skins, "animations": list(animations)}


def test_blender_armature_split_folds_back_into_the_mesh_joint():
    """Blender makes armature object A -> (mesh object M, bone B) of a mesh-and-joint node."""
    nodes = [{"name": "A", "children": [1, 2], "rotation": [1e-8, 0, 0, 1]},
             {"name": "M", "mesh": 0, "skin": 0, "extras": {"m": 1}},
             {"name": "B", "children": [3], "extras": {bridge.MESH_JOINT: 1, "b": 2}},
             {"name": "bone0"}]
    doc = _glb_doc(nodes, [{"joints": [2, 3]}],
                   [{"channels": [{"target": {"node": 3, "path": "rotation"}}]}])
    bridge.snap_noise(doc)
    bridge.merge_mesh_joints(doc)
    assert [n["name"] for n in doc["nodes"]] == ["B", "bone0"]
    assert doc["nodes"][0] == {"name": "B", "children": [1], "mesh": 0, "skin": 0,
                               "extras": {"m": 1, "b": 2}}
    assert doc["scenes"][0]["nodes"] == [0] and doc["skins"][0]["joints"] == [0, 1]
    assert doc["animations"][0]["channels"][0]["target"]["node"] == 1


def test_armature_that_moves_on_its_own_is_kept():
    nodes = [{"name": "A", "children": [1, 2], "translation": [0, 1, 0]},
             {"name": "M", "mesh": 0, "skin": 0}, {"name": "B", "extras": {bridge.MESH_JOINT: 1}}]
    doc = _glb_doc(nodes, [{"joints": [2]}])
    bridge.merge_mesh_joints(doc)
    assert [n["name"] for n in doc["nodes"]] == ["A", "M", "B"] and "extras" not in doc["nodes"][2]


def test_file_names_ride_on_the_imported_objects_and_come_back_to_the_scene(tmp_path):
    """The record of file names is the scene's (a Blender scene property, replaced by the next
    model imported); the copy on the exported objects wins in the GLB Blender writes."""
    from retromesh.filenames import FILES
    glb = tmp_path / "c.glb"
    bridge.load_to_glb(bridge.group_files([EX / "lostsaga/column.msh"])[0], glb)
    bridge.encode_extras(glb)
    record = bridge.files_record(glb)
    assert isinstance(record, str) and record.startswith(bridge.JSON_MARK)
    # what Blender writes: the object's property on its node, another model's on the scene
    doc, rest = _read_glb(glb)
    doc["scenes"][0]["extras"][FILES] = bridge.encode_extras_value({FILES: {"source": "other.msh"}})[FILES]
    doc["nodes"][doc["scenes"][0]["nodes"][0]].setdefault("extras", {})[
        bridge.FILES_PROPERTY] = record
    glb.write_bytes(pack(json.dumps(doc).encode(), rest))
    bridge.decode_extras(glb)
    doc, _ = _read_glb(glb)
    assert doc["scenes"][0]["extras"][FILES]["source"] == "column.msh"
    assert doc["scenes"][0]["extras"][FILES]["animations"] == [["column_wave", "column_wave.ani"]]
    assert not any(bridge.FILES_PROPERTY in n.get("extras", {}) for n in doc["nodes"])


def test_animations_of_other_names_beside_the_only_model_are_found(tmp_path):
    """An exported ``stick.phxbn`` with ``walk.anm`` (retromesh.filenames) imports whole again
    from the main file alone; beside a second model they are not guessed."""
    for name in ("stick.phxbn", "stick.obj", "walk.anm", "wave.anm"):
        (tmp_path / name).write_bytes((EX / "overgrowth" / name).read_bytes())
    job, = bridge.group_files([tmp_path / "stick.phxbn"])
    assert [p.name for p in job.options["animations"]] == ["walk.anm", "wave.anm"]
    assert job.options["mesh"].name == "stick.obj"
    (tmp_path / "man.phxbn").write_bytes((EX / "overgrowth" / "stick.phxbn").read_bytes())
    job, = bridge.group_files([tmp_path / "stick.phxbn"])
    assert "animations" not in job.options


def test_animation_named_after_the_model_is_found(tmp_path):
    """``man.anm`` (an animation read from a file named after the skeleton keeps that name)."""
    for name in ("man.phxbn", "man.anm", "other.phxbn"):
        (tmp_path / name).write_bytes(b"")
    job, = bridge.group_files([tmp_path / "man.phxbn"])
    assert [p.name for p in job.options["animations"]] == ["man.anm"]
