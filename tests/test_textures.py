"""Textures: found, converted and embedded by default, and contained: a
model's texture name never reads a file outside the folders the user named."""
from __future__ import annotations

import io
import json
import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import retromesh
from helpers.gltfcheck import assert_valid, assert_valid_many, problems, validate
from helpers.make_examples_import import make_examples
from retromesh.gltf.placeholder import placeholder_png
from retromesh.textures import TextureFinder, split_name

ROOT = Path(__file__).resolve().parents[1]


# -- helpers -----------------------------------------------------------------------------------
def _pixels(seed: int = 0, size: int = 8) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8), "RGB")


def _image_file(path: Path, seed: int = 0, fmt: str | None = None) -> Image.Image:
    im = _pixels(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, format=fmt)
    return im


def _b3d(path: Path, *texture_names: str) -> Path:
    """A textured box (our own writer) whose TEXS names ``texture_names`` (one material each)."""
    s = make_examples.crate_scene()
    s.textures[0].uri = texture_names[0]
    for name in texture_names[1:]:
        from retromesh.scene import Material, Texture, TextureRef
        t = s.add_texture(Texture(name=Path(name.replace("\\", "/")).stem, uri=name))
        s.add_material(Material(name=f"m{t}", base_color_texture=TextureRef(t)))
    path.parent.mkdir(parents=True, exist_ok=True)
    retromesh.save(s, path)
    return path


def _json(glb: Path) -> dict:
    data = glb.read_bytes()
    n = struct.unpack_from("<I", data, 12)[0]
    return json.loads(data[20:20 + n])


def _images(glb: Path) -> list[bytes]:
    """The embedded images of a GLB, as bytes."""
    data = glb.read_bytes()
    doc = _json(glb)
    n = struct.unpack_from("<I", data, 12)[0]
    blob = data[20 + n + 8:]
    out = []
    for im in doc.get("images", []):
        if "bufferView" in im:
            v = doc["bufferViews"][im["bufferView"]]
            out.append(blob[v.get("byteOffset", 0):v.get("byteOffset", 0) + v["byteLength"]])
    return out


def _convert(src: Path, dst: Path, **save_options) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retromesh.convert(src, dst, save_options=save_options)
    return [w.message for w in caught if isinstance(w.message, retromesh.MissingTextureWarning)]


def _same_pixels(png: bytes, im: Image.Image) -> bool:
    back = Image.open(io.BytesIO(png))
    return back.format == "PNG" and np.array_equal(np.asarray(back.convert("RGB")),
                                                   np.asarray(im.convert("RGB")))


# -- found and embedded ----------------------------------------------------------------------
def test_wrong_case_bmp_beside_the_source_is_embedded_as_png(tmp_path):
    src = _b3d(tmp_path / "m" / "box.b3d", "Skin.BMP")
    im = _image_file(tmp_path / "m" / "skin.bmp", fmt="BMP")
    missing = _convert(src, tmp_path / "out" / "box.glb")
    assert missing == []
    (png,) = _images(tmp_path / "out" / "box.glb")
    assert _same_pixels(png, im)
    assert _json(tmp_path / "out" / "box.glb")["images"][0]["mimeType"] == "image/png"
    assert assert_valid(tmp_path / "out" / "box.glb")["hasTextures"]


@pytest.mark.parametrize("stored,on_disk,fmt", [
    ("skin.tga", "skin.tga", "TGA"),
    ("skin.bmp", "SKIN.TGA", "TGA"),          # extension swap + case
    ("skin.png", "skin.pcx", "PCX"),
    ("skin.dds", "skin.dds", "DDS"),
    ("C:\\art\\skin.jpg", "skin.bmp", "BMP"),  # the author's disk, another extension
])
def test_formats_gltf_cannot_carry_are_converted(tmp_path, stored, on_disk, fmt):
    src = _b3d(tmp_path / "box.b3d", stored)
    im = _image_file(tmp_path / on_disk, fmt=fmt)
    assert _convert(src, tmp_path / "box.glb") == []
    (png,) = _images(tmp_path / "box.glb")
    assert _same_pixels(png, im)


def test_png_and_jpeg_bytes_are_kept_as_they_are(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "a.png", "b.jpg")
    _image_file(tmp_path / "a.png")
    _image_file(tmp_path / "b.jpg", seed=1)
    assert _convert(src, tmp_path / "box.glb") == []
    assert _images(tmp_path / "box.glb") == [(tmp_path / "a.png").read_bytes(),
                                             (tmp_path / "b.jpg").read_bytes()]
    assert [i["mimeType"] for i in _json(tmp_path / "box.glb")["images"]] == ["image/png",
                                                                             "image/jpeg"]


def test_luanti_mod_layout(tmp_path):
    src = _b3d(tmp_path / "mod" / "models" / "x.b3d", "x.png")
    _image_file(tmp_path / "mod" / "textures" / "x.png")
    assert _convert(src, tmp_path / "x.glb") == []
    assert _images(tmp_path / "x.glb") == [(tmp_path / "mod" / "textures" / "x.png").read_bytes()]


def test_layout_subfolders_lugaru_and_lost_saga(tmp_path):
    # Luanti allows subfolders in textures/; Lugaru: Data/Models + Data/Textures;
    # Lost Saga: resource/mesh + resource/texture/<sub>
    cases = [("mod/models/a.b3d", "mod/textures/mobs/a.png"),
             ("Data/Models/b.b3d", "Data/Textures/b.png"),
             ("resource/mesh/c.b3d", "resource/texture/decalbase/c.png")]
    for model, texture in cases:
        name = Path(texture).name
        src = _b3d(tmp_path / model, name)
        _image_file(tmp_path / texture)
        out = tmp_path / "out" / (Path(model).stem + ".glb")
        assert _convert(src, out) == [], model
        assert _images(out) == [(tmp_path / texture).read_bytes()], model


def test_texture_path_folders(tmp_path):
    src = _b3d(tmp_path / "models" / "box.b3d", "wood.png")
    _image_file(tmp_path / "elsewhere" / "deep" / "Wood.png")
    missing = _convert(src, tmp_path / "a.glb")
    assert [m.name for m in missing] == ["wood.png"]
    assert _convert(src, tmp_path / "b.glb", texture_path=[tmp_path / "elsewhere"]) == []
    assert len(_images(tmp_path / "b.glb")) == 1
    # a single folder, as a string, is accepted too
    assert _convert(src, tmp_path / "c.glb", texture_path=str(tmp_path / "elsewhere")) == []


def test_the_readme_command_gives_a_self_contained_glb(tmp_path):
    retromesh.convert(ROOT / "examples" / "wiggle.b3d", tmp_path / "out" / "wiggle.glb")
    (png,) = _images(tmp_path / "out" / "wiggle.glb")
    Image.open(io.BytesIO(png)).load()
    assert png == (ROOT / "examples" / "wiggle.png").read_bytes()
    assert "uri" not in _json(tmp_path / "out" / "wiggle.glb")["images"][0]
    assert_valid(tmp_path / "out" / "wiggle.glb")


# -- missing, references only, .gltf ---------------------------------------------------------
def test_missing_texture_warns_and_embeds_a_placeholder(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "C:\\art\\Missing Skin.dds")
    missing = _convert(src, tmp_path / "box.glb")
    assert len(missing) == 1
    assert missing[0].name == "C:/art/Missing Skin.dds"
    assert "Missing Skin.dds" in str(missing[0]) and "not found in" in str(missing[0])
    assert "placeholder" in str(missing[0])
    doc = _json(tmp_path / "box.glb")
    (image,) = doc["images"]
    assert "uri" not in image and image["mimeType"] == "image/png"      # self-contained
    assert image["extras"] == {"original_uri": "C:/art/Missing Skin.dds", "placeholder": True}
    assert _images(tmp_path / "box.glb") == [placeholder_png()]
    assert not any("uri" in b for b in doc["buffers"])
    # the plain validator: no IO_ERROR to ignore in a GLB any more
    (result,) = validate([tmp_path / "box.glb"])
    assert result["missingImages"] == [] and problems(result) == []
    assert result["report"]["issues"]["numErrors"] == 0
    assert result["report"]["issues"]["numWarnings"] == 0
    # the stored name comes back on reading, without the placeholder's bytes
    (tex,) = retromesh.load(tmp_path / "box.glb").textures
    assert tex.uri == "C:/art/Missing Skin.dds" and tex.image is None


def test_missing_texture_back_to_the_format_writes_no_image(tmp_path):
    src = _b3d(tmp_path / "m" / "box.b3d", "skins/cow.png", "C:\\art\\Missing Skin.dds")
    assert len(_convert(src, tmp_path / "box.glb")) == 2
    assert len(_json(tmp_path / "box.glb")["images"]) == 2
    images = _json(tmp_path / "box.glb")["images"]
    assert len(images) == 2 and len({i["bufferView"] for i in images}) == 1   # bytes once
    out = tmp_path / "back"
    written = retromesh.convert(tmp_path / "box.glb", out / "box.b3d")
    assert [p.name for p in written] == ["box.b3d"]
    assert sorted(p.name for p in out.iterdir()) == ["box.b3d"]
    assert (out / "box.b3d").read_bytes() == src.read_bytes()


def test_placeholder_known_by_its_pixels_when_extras_are_gone(tmp_path):
    """Blender's exporter drops image extras and encodes PNGs its own way: an image with the
    placeholder's pixels is still the reference it stands for."""
    from retromesh.gltf.placeholder import is_placeholder
    src = _b3d(tmp_path / "m" / "box.b3d", "cow.png")
    _convert(src, tmp_path / "box.glb")
    doc = _json(tmp_path / "box.glb")
    del doc["images"][0]["extras"]
    reencoded = io.BytesIO()
    Image.open(io.BytesIO(placeholder_png())).convert("RGBA").save(reencoded, "PNG",
                                                                    compress_level=1)
    assert reencoded.getvalue() != placeholder_png() and is_placeholder(reencoded.getvalue())
    scene = retromesh.load(tmp_path / "box.glb")
    scene.textures[0].image = reencoded.getvalue()      # what Blender gives back, no extras
    blender_like = tmp_path / "blender.glb"
    retromesh.save(scene, blender_like, embed_images=False)
    assert "extras" not in _json(blender_like)["images"][0]
    assert _images(blender_like) == [reencoded.getvalue()]
    (tex,) = retromesh.load(blender_like).textures
    # without the extras the name is the image's (the Blender add-on puts the rest back from
    # the material's extras: tests/test_blender_addon.py)
    assert tex.image is None and tex.uri == "cow"
    out = tmp_path / "back"
    assert [p.name for p in retromesh.convert(blender_like, out / "box.b3d")] == ["box.b3d"]
    assert sorted(p.name for p in out.iterdir()) == ["box.b3d"]     # no placeholder file
    # an image that is not the placeholder (painted over) stays an image
    other = io.BytesIO()
    _pixels(5).save(other, "PNG")
    assert not is_placeholder(other.getvalue())


def test_gltf_output_keeps_a_relative_reference_for_a_missing_texture(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "C:\\art\\Missing Skin.dds")
    assert len(_convert(src, tmp_path / "out" / "box.gltf")) == 1
    image = json.loads((tmp_path / "out" / "box.gltf").read_text())["images"][0]
    assert image["uri"] == "Missing%20Skin.png"
    assert image["extras"]["original_uri"] == "C:/art/Missing Skin.dds"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["box.bin", "box.gltf"]
    assert_valid(tmp_path / "out" / "box.gltf")       # the wrapper lists it, a .gltf only
    assert retromesh.load(tmp_path / "out" / "box.gltf").textures[0].uri == \
        "C:/art/Missing Skin.dds"


def test_no_embed_images_keeps_references_only(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "skin.bmp")
    _image_file(tmp_path / "skin.bmp", fmt="BMP")
    assert _convert(src, tmp_path / "box.glb", embed_images=False) == []
    assert _images(tmp_path / "box.glb") == []
    assert _json(tmp_path / "box.glb")["images"][0]["uri"] == "skin.png"


def test_gltf_output_writes_the_images_beside_it(tmp_path):
    src = _b3d(tmp_path / "m" / "box.b3d", "Skin.BMP", "C:\\x\\other.tga")
    im = _image_file(tmp_path / "m" / "skin.bmp", fmt="BMP")
    _image_file(tmp_path / "m" / "other.tga", seed=3, fmt="TGA")
    out = tmp_path / "out" / "box.gltf"
    with warnings.catch_warnings():
        warnings.simplefilter("error", retromesh.MissingTextureWarning)
        written = retromesh.convert(src, out)
    assert sorted(p.name for p in written) == ["box.bin", "box.gltf", "other.png", "skin.png"]
    doc = json.loads(out.read_text())
    assert sorted(i["uri"] for i in doc["images"]) == ["other.png", "skin.png"]
    assert _same_pixels((tmp_path / "out" / "skin.png").read_bytes(), im)
    info = assert_valid(out)
    assert info["hasTextures"]
    # an existing file of that name with other bytes is left alone
    (tmp_path / "out2").mkdir()
    keep = b"not ours"
    (tmp_path / "out2" / "skin.png").write_bytes(keep)
    retromesh.convert(src, tmp_path / "out2" / "box.gltf")
    assert (tmp_path / "out2" / "skin.png").read_bytes() == keep
    doc = json.loads((tmp_path / "out2" / "box.gltf").read_text())
    assert sorted(i["uri"] for i in doc["images"]) == ["other.png", "skin_1.png"]
    assert_valid(tmp_path / "out2" / "box.gltf")


def test_gltf_with_embedded_buffer_is_one_file(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "skin.png")
    _image_file(tmp_path / "skin.png")
    written = retromesh.save(retromesh.load(src), tmp_path / "o" / "box.gltf", embed_buffer=True)
    assert [p.name for p in written] == ["box.gltf"]
    assert "bufferView" in json.loads(written[0].read_text())["images"][0]   # in the data URI
    assert_valid(written[0])


# -- one image per distinct source (item 6) ----------------------------------------------------
def test_duplicate_images_collapse(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "skin.png", "SKIN.PNG", "skin.bmp", "C:\\a\\skin.png",
               "skin.png", "null", "null", "null")
    _image_file(tmp_path / "skin.png")
    missing = _convert(src, tmp_path / "box.glb")
    assert [m.name for m in missing] == ["null"]          # one warning per name
    doc = _json(tmp_path / "box.glb")
    assert len(doc["images"]) == 2                      # skin.png once + "null"'s placeholder
    assert _images(tmp_path / "box.glb")[1:] == [placeholder_png()]
    assert doc["images"][1]["extras"] == {"original_uri": "null", "placeholder": True}
    assert len(doc["samplers"]) == 1
    assert len(doc["textures"]) < 8
    assert_valid(tmp_path / "box.glb")


def test_identical_bytes_of_different_files_are_one_image(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "a.png", "b.png")
    _image_file(tmp_path / "a.png")
    (tmp_path / "b.png").write_bytes((tmp_path / "a.png").read_bytes())
    _convert(src, tmp_path / "box.glb")
    assert len(_json(tmp_path / "box.glb")["images"]) == 1


# -- containment -------------------------------------------------------------------------------
SECRET = b"\x89PNG\r\n\x1a\nSECRET-BYTES-THAT-MUST-NOT-LEAK"


@pytest.mark.parametrize("name", ["../secret.png", "../../etc/passwd", "/etc/passwd",
                                  "C:\\..\\secret.png", "..\\secret.png", "sub/../../secret.png",
                                  "link.png", "..", "/", ""])
def test_names_never_reach_outside_the_roots(tmp_path, name):
    (tmp_path / "secret.png").write_bytes(SECRET)
    models = tmp_path / "game" / "models"
    models.mkdir(parents=True)
    (models / "sub").mkdir()
    os.symlink(tmp_path / "secret.png", models / "link.png")
    src = _b3d(models / "box.b3d", name or "x")
    finder = TextureFinder(models)
    assert finder.find(name) is None
    _convert(src, tmp_path / "out" / "box.glb")
    assert SECRET not in (tmp_path / "out" / "box.glb").read_bytes()
    image = _json(tmp_path / "out" / "box.glb")["images"][0]
    assert "uri" not in image and image["extras"]["placeholder"] is True
    # beside a .gltf the name stays a reference: never one outside its folder
    _convert(src, tmp_path / "out" / "box.gltf")
    assert not any(SECRET in p.read_bytes() for p in (tmp_path / "out").iterdir())
    uri = json.loads((tmp_path / "out" / "box.gltf").read_text())["images"][0]["uri"]
    assert ".." not in uri and not uri.startswith("/") and ":" not in uri


def test_symlinked_layout_folder_is_not_followed(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.png").write_bytes(SECRET)
    (tmp_path / "mod" / "models").mkdir(parents=True)
    os.symlink(tmp_path / "outside", tmp_path / "mod" / "textures")
    src = _b3d(tmp_path / "mod" / "models" / "x.b3d", "x.png")
    assert [m.name for m in _convert(src, tmp_path / "x.glb")] == ["x.png"]
    assert SECRET not in (tmp_path / "x.glb").read_bytes()


def test_a_link_inside_the_roots_is_fine(tmp_path):
    _image_file(tmp_path / "mod" / "textures" / "real.png")
    (tmp_path / "mod" / "models").mkdir(parents=True)
    os.symlink(tmp_path / "mod" / "textures" / "real.png", tmp_path / "mod" / "models" / "x.png")
    assert TextureFinder(tmp_path / "mod" / "models").find("x.png") == \
        (tmp_path / "mod" / "textures" / "real.png").resolve()


def test_split_name():
    assert split_name("C:\\art\\skin.bmp") == (None, "skin.bmp")
    assert split_name("sub\\skin.bmp") == (["sub", "skin.bmp"], "skin.bmp")
    assert split_name("./a/../b.png") == (None, "b.png")
    assert split_name("file:///etc/x.png") == (None, "x.png")
    assert split_name("..") == (None, "")
    assert split_name("a\0b") == (None, "")


def test_relative_texture_names_are_followed_inside_the_root(tmp_path):
    _image_file(tmp_path / "Skins" / "Body.png")
    found = TextureFinder(tmp_path).find("skins\\body.bmp")
    assert found == (tmp_path / "Skins" / "Body.png").resolve()


def test_unreadable_image_is_reported_missing(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "skin.bmp")
    (tmp_path / "skin.bmp").write_bytes(b"BM not really a bitmap")
    missing = _convert(src, tmp_path / "box.glb")
    assert len(missing) == 1 and "Pillow" in str(missing[0])
    assert_valid(tmp_path / "box.glb")


# -- where the source is -----------------------------------------------------------------------
def test_source_dir_from_a_gltf_file_is_not_trusted(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "x.png").write_bytes(SECRET)
    s = make_examples.crate_scene()
    s.textures[0].uri = "x.png"
    s.extras["note"] = "kept"
    retromesh.save(s, tmp_path / "a" / "in.glb", embed_images=False)
    # a hostile GLB: its JSON claims a source_dir
    data = (tmp_path / "a" / "in.glb").read_bytes()
    doc = _json(tmp_path / "a" / "in.glb")
    assert "source_dir" not in (doc.get("extras") or {})
    doc["extras"] = {"source_dir": str(tmp_path / "secret"), "note": "kept"}
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    n = struct.unpack_from("<I", data, 12)[0]
    rest = data[20 + n:]
    hostile = struct.pack("<4sII", b"glTF", 2, 20 + len(js) + len(rest)) + \
        struct.pack("<II", len(js), 0x4E4F534A) + js + rest
    (tmp_path / "a" / "in.glb").write_bytes(hostile)
    scene = retromesh.load(tmp_path / "a" / "in.glb")
    assert scene.extras["source_dir"] == str(tmp_path / "a") and scene.extras["note"] == "kept"
    missing = _convert(tmp_path / "a" / "in.glb", tmp_path / "out.glb")
    assert [m.name for m in missing] == ["x.png"]
    assert SECRET not in (tmp_path / "out.glb").read_bytes()


@pytest.mark.parametrize("value", [42, ["x"], None, "", "/no/such/folder", "a\0b"])
def test_bad_source_dir_is_ignored(tmp_path, value):
    s = make_examples.crate_scene()
    s.extras["source_dir"] = value
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        retromesh.save(s, tmp_path / "x.glb")
    assert "source_dir" not in (_json(tmp_path / "x.glb").get("extras") or {})


def test_image_options_are_dropped_for_targets_without_images(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "skin.png")
    opts = {"embed_images": False, "texture_path": [tmp_path]}
    retromesh.convert(src, tmp_path / "o" / "box.b3d", save_options=opts)
    retromesh.save(retromesh.load(src), tmp_path / "o" / "box.solid", **opts)
    retromesh.convert(ROOT / "examples" / "westwood" / "tank.vxl", tmp_path / "o" / "tank.vox",
                      save_options=opts)
    assert (tmp_path / "o" / "tank.vox").is_file()


def test_all_outputs_pass_the_validator(tmp_path):
    """The converted and embedded outputs of several layouts, validated in one run."""
    outs = []
    for i, (stored, disk, fmt) in enumerate([("a.bmp", "a.bmp", "BMP"), ("b.tga", "B.TGA", "TGA"),
                                             ("c.png", "c.pcx", "PCX")]):
        src = _b3d(tmp_path / f"s{i}" / "box.b3d", stored)
        _image_file(tmp_path / f"s{i}" / disk, seed=i, fmt=fmt)
        _convert(src, tmp_path / f"o{i}.glb")
        outs.append(tmp_path / f"o{i}.glb")
    for info in assert_valid_many(outs):
        assert info["hasTextures"]


def test_a_gltf_document_written_as_glb_or_bytes_carries_its_images(tmp_path):
    src = _b3d(tmp_path / "box.b3d", "skin.bmp")
    im = _image_file(tmp_path / "skin.bmp", fmt="BMP")
    doc = retromesh.from_scene(retromesh.load(src), "gltf")       # images as files beside
    assert list(doc.image_files) == ["skin.png"]
    text = json.loads(retromesh.to_bytes(doc))                      # one self-contained JSON
    assert text["images"][0]["uri"].startswith("data:image/png;base64,")
    retromesh.write(retromesh.from_scene(retromesh.load(src), "gltf"), tmp_path / "o.glb")
    (png,) = _images(tmp_path / "o.glb")
    assert _same_pixels(png, im)
    assert_valid(tmp_path / "o.glb")


def test_pillow_decodes_only_plain_raster_formats():
    from retromesh.textures import gltf_image
    with pytest.raises(ValueError):
        gltf_image(b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 1 1\n")   # never Ghostscript
    png = (ROOT / "examples" / "wiggle.png").read_bytes()
    assert gltf_image(png) == (png, "image/png")


@pytest.mark.corpus
def test_corpus_one_image_per_distinct_texture_name(tmp_path):
    """b3dng__cubewater_test named 24 textures, 18 of them "null"; its GLB
    had 24 images. Now one image per distinct source, and missing names warn once each."""
    from conftest import corpus_files
    files = corpus_files("b3d", "*.b3d")
    if not files:
        pytest.skip("no B3D corpus")
    outs = []
    for path in files:
        names = {t.file for t in retromesh.read(path).textures}
        out = tmp_path / (path.stem + ".glb")
        missing = _convert(path, out)
        doc = _json(out)
        assert len(doc.get("images", [])) == len(names), path.name
        found = [b for b in _images(out) if b != placeholder_png()]
        assert len(missing) == len(names) - len(found), path.name
        assert not any("uri" in i for i in doc.get("images", [])), path.name   # self-contained
        outs.append(out)
    cube = next((o for o in outs if o.stem == "b3dng__cubewater_test"), None)
    if cube is not None:
        assert len(_json(cube)["images"]) == 7
    assert_valid_many(outs)
