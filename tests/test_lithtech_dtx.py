"""LithTech ``.dtx`` textures: byte round trips of every layout, PNG both ways, mip levels, the
sizes the games refuse, damaged files, the skins an ``.abc`` wears (every game layout) and the
way back from glTF to ``.abc`` + ``.dtx``. Fixtures are made by our own writers."""
from __future__ import annotations

import io
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import CORPUS
from helpers.cli import run
from helpers.gltfcheck import assert_valid_many
from helpers.malformed import assert_malformed_safe
from retromesh import DocumentError, FormatError
from retromesh.binio import Reader
from retromesh.formats.lithtech import dtx, dtx_image, dtx_pixels, dtx_samples, samples, skins
from retromesh.image import png

GRADIENT = dtx_samples.gradient(16, 8)


def _bytes(doc: dtx.DtxTexture) -> bytes:
    return dtx.write(doc)


def _read(data: bytes) -> dtx.DtxTexture:
    return dtx.read(Reader(data))


# -- native layer ------------------------------------------------------------------------------

@pytest.mark.parametrize("key", [k for k in dtx_samples.documents() if k.startswith("dtx")])
def test_every_layout_round_trips_byte_for_byte(key):
    data = _bytes(dtx_samples.documents()[key])
    doc = _read(data)
    assert _bytes(doc) == data
    assert retromesh.read(data, format="dtx") == doc


def test_header_layout_follows_the_engine_and_the_templates():
    v2 = _bytes(dtx_pixels.from_rgba(GRADIENT, mips=1))
    res, version, w, h, mips, nsec, flags, user = struct.unpack_from("<IiHHHHII", v2)
    assert (res, version, w, h, mips, nsec, flags) == (0, -5, 16, 8, 1, 0, dtx.SECTIONSFIXED)
    assert v2[26] == dtx.BPP_32 and len(v2) == 164 + 16 * 8 * 4
    assert v2[164:168] == bytes(GRADIENT[0, 0, [2, 1, 0, 3]])     # B, G, R, A
    v1 = _bytes(dtx_pixels.from_rgba(GRADIENT, version=-2))
    assert len(v1) == 44 + 1024 + sum((16 >> i) * (8 >> i) for i in range(4)) \
        + sum((8 >> i) * ((16 >> i) // 2) for i in range(4))    # pixels at 1068 (the README)
    v15 = _bytes(dtx_pixels.from_rgba(GRADIENT, version=-3))
    assert len(v15) - len(v1) == 172 - 44                          # pixels at 1196


def test_code_zero_is_read_as_32_bit():
    doc = dtx_samples.documents()["dtx:code0"]
    assert doc.header.bpp == 0 and dtx.bpp_of(doc.header) == dtx.BPP_32
    assert np.array_equal(dtx_pixels.to_rgba(_read(_bytes(doc))), dtx_samples.gradient(8, 8))


def test_small_dxt_levels_hold_what_the_engine_stores():
    doc = dtx_pixels.from_rgba(dtx_samples.gradient(8, 8), bpp=dtx.BPP_DXT1)
    assert [len(x) for x in doc.levels] == [32, 8, 2, 0]           # w*h/2, no whole block
    doc5 = dtx_pixels.from_rgba(dtx_samples.gradient(8, 8), bpp=dtx.BPP_DXT5)
    assert [len(x) for x in doc5.levels] == [64, 16, 4, 1]
    for level in range(4):
        assert dtx_pixels.to_rgba(doc5, level).shape == (8 >> level, 8 >> level, 4)


def test_nan_detail_scale_keeps_its_bits():
    data = bytearray(_bytes(dtx_pixels.from_rgba(GRADIENT, mips=1)))
    data[30:34] = b"\x01\x00\x80\x7f"            # a signalling NaN
    doc = _read(bytes(data))
    assert doc.header.detail_scale == b"\x01\x00\x80\x7f"
    assert _bytes(doc) == bytes(data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["32", "24", "16", "8", "32p", "dxt1", "dxt3", "dxt5", "v1", "v15"]),
       st.sampled_from([8, 16, 32]), st.sampled_from([8, 16, 64]), st.integers(1, 4),
       st.integers(0, 2**32 - 1), st.binary(min_size=0, max_size=20), st.integers(0, 3))
def test_any_small_texture_round_trips(kind, w, h, mips, user, command, seed):
    rgba = np.random.default_rng(seed).integers(0, 256, (h, w, 4), dtype=np.uint8)
    if kind in ("v1", "v15"):
        doc = dtx_pixels.from_rgba(rgba, version=-2 if kind == "v1" else -3, mips=mips)
    else:
        doc = dtx_pixels.from_rgba(rgba, bpp=dtx_pixels.BPP_OPTIONS[kind], mips=mips)
        doc.header.command = command.ljust(128, b"\0")
    doc.header.user_flags = user
    data = _bytes(doc)
    back = _read(data)
    assert back == doc and _bytes(back) == data
    for level in range(len(back.levels)):
        assert dtx_pixels.to_rgba(back, level).shape == (h >> level, w >> level, 4)


@pytest.mark.parametrize("key", ["dtx", "dtx:32p", "dtx:4444", "dtx:5551", "dtx:24", "dtx:v1"])
def test_lossless_pixel_formats_give_back_their_pixels(key):
    doc = dtx_samples.documents()[key]
    rgba = dtx_pixels.to_rgba(doc)
    again = dtx_pixels.from_rgba(rgba, bpp=dtx.bpp_of(doc.header), version=doc.version,
                                 flags=doc.header.flags & ~dtx.ALPHA_MASKS)
    if doc.version == -5 and dtx.bpp_of(doc.header) != dtx.BPP_32P:
        assert again.levels[0] == doc.levels[0]           # pixels -> RGBA -> pixels, exact
    assert np.array_equal(dtx_pixels.to_rgba(again), rgba)


@pytest.mark.parametrize("key", ["dtx:dxt1", "dtx:dxt3", "dtx:dxt5"])
def test_dxt_blocks_decode_as_pillow_decodes_them(key):
    # our numpy decoder against Pillow's "bcn" one: a sample's levels filled with random
    # blocks (both colour orders, equal endpoints, both alpha modes), down to levels smaller
    # than a block
    from PIL import Image
    doc = dtx_samples.documents()[key]
    bpp = dtx.bpp_of(doc.header)
    block = 8 if bpp == dtx.BPP_DXT1 else 16
    rng = np.random.default_rng(bpp)
    for level, (w, h) in enumerate(dtx.level_sizes(doc.header)):
        data = bytearray(rng.integers(0, 256, len(doc.levels[level]), dtype=np.uint8).tobytes())
        for i in range(block - 8, len(data), 3 * block):
            data[i:i + 2] = data[i + 2:i + 4]           # c0 == c1
        doc.levels[level] = bytes(data)
        bw, bh = max(4, (w + 3) & ~3), max(4, (h + 3) & ~3)
        raw = bytes(data).ljust((bw // 4) * (bh // 4) * block, b"\0")
        want = Image.frombytes("RGBA", (bw, bh), raw, "bcn",
                               {dtx.BPP_DXT1: 1, dtx.BPP_DXT3: 2, dtx.BPP_DXT5: 3}[bpp])
        assert np.array_equal(dtx_pixels.to_rgba(doc, level), np.asarray(want)[:h, :w])


def test_png_written_without_pillow_decodes_to_its_pixels():
    rng = np.random.default_rng(7)
    for shape in [(1, 1), (3, 5), (16, 9), (64, 64)]:
        rgba = rng.integers(0, 256, (*shape, 4), dtype=np.uint8)
        for opaque in (False, True):
            if opaque:
                rgba[..., 3] = 255
            data = png.from_rgba(rgba).data
            assert data[25] == (2 if opaque else 6)            # RGB when every pixel is opaque
            assert np.array_equal(png.rgba(png.PngImage(data)), rgba)


def test_mip_levels_are_box_averages_rounded_down():
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[0, 0] = (4, 8, 255, 255)
    rgba[0, 1] = (3, 0, 0, 255)
    levels = dtx_pixels.build_mips(rgba, 4)
    assert [m.shape[:2] for m in levels] == [(8, 8), (4, 4), (2, 2), (1, 1)]
    assert tuple(levels[1][0, 0]) == (1, 2, 63, 127)       # (4+3)//4, 8//4, 255//4, 510//4
    doc = dtx_pixels.from_rgba(rgba, mips=4)
    assert np.array_equal(dtx_pixels.to_rgba(doc, 1), levels[1])
    assert dtx_pixels.from_rgba(rgba, mips=8).header.mip_count == 4       # down to 1x1


@pytest.mark.parametrize("size", [(12, 16), (16, 2048), (4, 4), (100, 64)])
def test_sizes_the_games_cannot_take_are_refused(size):
    w, h = size
    with pytest.raises(DocumentError, match="power of two from 8 to 1024"):
        dtx_pixels.from_rgba(np.zeros((h, w, 4), np.uint8))


def test_check_finds_what_the_engine_refuses():
    doc = dtx_pixels.from_rgba(GRADIENT, bpp=dtx.BPP_32P)
    doc.sections, doc.header.section_count = [], 0
    assert [f.rule for f in dtx.check(doc)] == ["dtx.palette"]
    cube = dtx_samples.documents()["dtx:cubemap"]
    cube.sections, cube.header.section_count = [], 0
    assert [f.rule for f in dtx.check(cube)] == ["dtx.cubemap"]


def test_cube_faces_decode():
    cube = dtx_samples.documents()["dtx:cubemap"]
    for face in range(6):
        expect = np.roll(dtx_samples.gradient(8, 8), face, axis=1)
        assert np.array_equal(dtx_pixels.to_rgba(cube, 0, face), expect)


def test_writer_refuses_inconsistent_documents():
    doc = dtx_pixels.from_rgba(GRADIENT)
    doc.header.section_count = 2
    with pytest.raises(DocumentError, match="section_count"):
        _bytes(doc)
    doc = dtx_pixels.from_rgba(GRADIENT)
    doc.levels[1] = b"short"
    with pytest.raises(DocumentError, match=r"levels\[1\]"):
        _bytes(doc)


@pytest.mark.parametrize("key", ["dtx", "dtx:dxt5", "dtx:v1", "dtx:v15", "dtx:32p",
                                 "dtx:cubemap", "dtx:unfixed", "dtx:v1-lightdefs"])
def test_damaged_files_give_format_errors_with_offsets(key):
    assert_malformed_safe(_bytes(dtx_samples.documents()[key]), "t.dtx", "dtx")


def test_lying_sizes_are_refused_before_allocating():
    data = bytearray(_bytes(dtx_pixels.from_rgba(GRADIENT)))
    struct.pack_into("<HH", data, 8, 0xFFFF, 0xFFFF)
    with pytest.raises(FormatError) as err:
        _read(bytes(data))
    assert err.value.offset == 164 and "mip levels" in str(err.value)
    struct.pack_into("<H", data, 12, 16)
    with pytest.raises(FormatError, match="at most 15 mip levels"):
        _read(bytes(data))
    struct.pack_into("<i", data, 4, -4)
    with pytest.raises(FormatError, match="version"):
        _read(bytes(data))


# -- PNG both ways, the CLI, Pillow ---------------------------------------------------------

def test_png_to_dtx_to_png(tmp_path):
    src = tmp_path / "g.png"
    src.write_bytes(png.from_rgba(GRADIENT).data)
    for bpp in ("32", "dxt5", "16", "32p"):
        out = tmp_path / f"g_{bpp}.dtx"
        retromesh.convert(src, out, save_options={"bpp": bpp, "mips": 3})
        doc = retromesh.read(out)
        assert isinstance(doc, dtx.DtxTexture) and doc.header.mip_count == 3
        back = tmp_path / f"g_{bpp}.png"
        retromesh.convert(out, back, save_options={"mip": 1})
        assert png.PngImage(back.read_bytes()).size == (8, 4)
    retromesh.convert(src, tmp_path / "exact.dtx")
    retromesh.convert(tmp_path / "exact.dtx", tmp_path / "exact.png")
    assert np.array_equal(png.rgba(png.PngImage((tmp_path / "exact.png").read_bytes())), GRADIENT)


def test_cli_convert_info_check_dump_build(tmp_path):
    src = tmp_path / "g.png"
    src.write_bytes(png.from_rgba(GRADIENT).data)
    res = run("convert", src, "-o", tmp_path / "g.dtx", "-O", "bpp=dxt1", "-O", "version=-5")
    assert res.exit_code == 0, res.output
    res = run("info", tmp_path / "g.dtx")
    assert res.exit_code == 0 and "DXT1" in res.output and "16x8" in res.output
    assert run("check", tmp_path / "g.dtx").exit_code == 0
    res = run("dump", tmp_path / "g.dtx", "-o", tmp_path / "g.json")
    assert res.exit_code == 0, res.output
    res = run("build", tmp_path / "g.json", "-o", tmp_path / "g2.dtx")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "g2.dtx").read_bytes() == (tmp_path / "g.dtx").read_bytes()
    bad = tmp_path / "bad.png"
    bad.write_bytes(png.from_rgba(np.zeros((10, 16, 4), np.uint8)).data)
    res = run("convert", bad, "-o", tmp_path / "bad.dtx")
    assert res.exit_code != 0 and "power of two" in res.output
    assert not (tmp_path / "bad.dtx").exists()


def test_pillow_plugin_opens_and_saves(tmp_path):
    from PIL import Image
    dtx_image.register_pillow()
    path = tmp_path / "p.dtx"
    path.write_bytes(_bytes(dtx_samples.documents()["dtx:dxt5"]))
    with Image.open(path) as im:
        assert im.format == "DTX" and im.size == (16, 8) and im.mode == "RGBA"
        im.load()
    Image.fromarray(GRADIENT, "RGBA").save(tmp_path / "s.dtx", bpp="dxt1", mips=2)
    doc = _read((tmp_path / "s.dtx").read_bytes())
    assert dtx.bpp_of(doc.header) == dtx.BPP_DXT1 and doc.header.mip_count == 2
    assert dtx_image.open_image(path.read_bytes()).size == (16, 8)


# -- skins ----------------------------------------------------------------------------------

def _model(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(samples.sample_bytes(12))
    return path


def _skin(path: Path, colour: tuple[int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rgba = np.zeros((8, 8, 4), np.uint8)
    rgba[...] = (*colour, 255)
    path.write_bytes(_bytes(dtx_pixels.from_rgba(rgba, bpp=dtx.BPP_DXT1)))


def _skin_colours(scene) -> dict[int, tuple[int, ...]]:
    from PIL import Image
    out = {}
    for mat in scene.materials:
        ref = mat.base_color_texture
        if ref is not None:
            with Image.open(io.BytesIO(scene.textures[ref.texture].image)) as im:
                out[int(mat.name.split("_")[1])] = im.convert("RGB").getpixel((0, 0))
    return out


def test_nolf_models_wear_body_and_head_skins(tmp_path):
    model = _model(tmp_path / "Chars" / "Models" / "Hero_Action.abc")
    _skin(tmp_path / "Chars" / "Skins" / "HERO_ACTION.DTX", (255, 0, 0))
    _skin(tmp_path / "Chars" / "Skins" / "hero_action_head.dtx", (0, 0, 255))
    scene = retromesh.load(model)
    assert _skin_colours(scene) == {0: (255, 0, 0), 1: (0, 0, 255)}


def test_skins_mirror_models(tmp_path):
    model = _model(tmp_path / "MODELS" / "Characters" / "caleb.abc")
    _skin(tmp_path / "Skins" / "characters" / "Caleb.dtx", (0, 255, 0))
    assert _skin_colours(retromesh.load(model)) == {0: (0, 255, 0)}


def test_sibling_skins_folder_and_beside(tmp_path):
    model = _model(tmp_path / "mod" / "models" / "gun.abc")
    _skin(tmp_path / "mod" / "SKINS" / "GUN.dtx", (255, 255, 0))
    _skin(tmp_path / "mod" / "models" / "gun_head.dtx", (0, 255, 255))
    assert _skin_colours(retromesh.load(model)) == {0: (255, 255, 0), 1: (0, 255, 255)}


def test_modelbutes_skins(tmp_path):
    model = _model(tmp_path / "Chars" / "Models" / "Hero_Action.abc")
    (tmp_path / "ATTRIBUTES").mkdir()
    (tmp_path / "ATTRIBUTES" / "ModelButes.txt").write_text(
        '// models\n[Model0]\nName = "Other"\nModelFile = "Chars\\Models\\other.ltb"\n'
        'Skin0 = "Chars\\Skins\\wrong.dtx"\n\n[Model1]\nName = "Hero"\n'
        'ModelFile = "Chars\\Models\\Hero_Action.ltb"\nSkin0 = "Chars\\Skins\\Hero_Body.dtx"\n'
        'Skin1 = "Chars\\Skins\\Heads\\Hero_Face.dtx" // the head\n'
        'Skin2 = "..\\..\\outside.dtx"\n')
    _skin(tmp_path / "Chars" / "Skins" / "hero_body.dtx", (10, 20, 30))
    _skin(tmp_path / "Chars" / "Skins" / "Heads" / "HERO_FACE.dtx", (40, 50, 60))
    _skin(tmp_path.parent / "outside.dtx", (1, 1, 1))
    colours = _skin_colours(retromesh.load(model))
    assert colours[0] != (255, 0, 0) and 1 in colours
    assert 2 not in colours                 # a name leaving the game's folder is not followed


@pytest.mark.skipif(not hasattr(__import__("os"), "symlink"), reason="no symbolic links")
def test_linked_skins_are_worn_only_when_they_lead_inside(tmp_path):
    """A skin or skins folder that is a link counts where it leads: inside the folder it was
    found from, as a file there; out of it, not at all (plain files and folders need no
    resolving: the fast path must not let a link through)."""
    model = _model(tmp_path / "game" / "models" / "hero.abc")
    _skin(tmp_path / "outside" / "hero.dtx", (1, 2, 3))
    _skin(tmp_path / "outside" / "skins" / "hero_head.dtx", (4, 5, 6))
    (tmp_path / "game" / "models" / "hero.dtx").symlink_to(tmp_path / "outside" / "hero.dtx")
    (tmp_path / "game" / "skins").symlink_to(tmp_path / "outside" / "skins",
                                             target_is_directory=True)
    assert _skin_colours(retromesh.load(model)) == {}
    _skin(tmp_path / "game" / "models" / "real.dtx", (255, 0, 255))
    (tmp_path / "game" / "models" / "hero.dtx").unlink()
    (tmp_path / "game" / "models" / "hero.dtx").symlink_to("real.dtx")
    assert _skin_colours(retromesh.load(model)) == {0: (255, 0, 255)}


def test_texture_path_finds_skins_by_the_games_name(tmp_path):
    model = _model(tmp_path / "work" / "hero.abc")
    _skin(tmp_path / "rez" / "Chars" / "Skins" / "Hero.dtx", (255, 0, 0))
    assert _skin_colours(retromesh.load(model)) == {}
    scene = retromesh.load(model, texture_path=[tmp_path / "rez"])
    assert _skin_colours(scene) == {0: (255, 0, 0)}
    res = run("convert", model, "-o", tmp_path / "hero.glb", "--texture-path", tmp_path / "rez")
    assert res.exit_code == 0, res.output
    assert retromesh.load(tmp_path / "hero.glb").textures


def test_missing_skin_leaves_the_game_name(tmp_path):
    model = _model(tmp_path / "chars" / "models" / "x.abc")
    scene = retromesh.load(model)
    assert not scene.textures
    assert scene.materials[0].extras["lithtech_skin"] == "chars/skins/x.dtx"


def test_textured_glb_is_valid_and_comes_back_as_abc_and_dtx(tmp_path):
    model = _model(tmp_path / "chars" / "models" / "hero.abc")
    _skin(tmp_path / "chars" / "skins" / "hero.dtx", (255, 0, 0))
    _skin(tmp_path / "chars" / "skins" / "hero_head.dtx", (0, 0, 255))
    glb = tmp_path / "hero.glb"
    retromesh.convert(model, glb)
    v6 = _model(tmp_path / "b2" / "Models" / "caleb.abc")
    v6.write_bytes(samples.sample_bytes(6))
    _skin(tmp_path / "b2" / "Skins" / "caleb.dtx", (0, 255, 0))
    retromesh.convert(v6, tmp_path / "caleb.glb")
    assert_valid_many([glb, tmp_path / "caleb.glb"])
    out = tmp_path / "back" / "hero.abc"
    out.parent.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = retromesh.convert(glb, out, save_options={"skins": "dxt1"})
    assert {p.name for p in written} == {"hero.abc", "hero.dtx", "hero_head.dtx"}
    assert dtx.bpp_of(_read((out.parent / "hero.dtx").read_bytes()).header) == dtx.BPP_DXT1
    assert _skin_colours(retromesh.load(out)) == {0: (255, 0, 0), 1: (0, 0, 255)}


def test_skin_outputs_resize_odd_images():
    from retromesh.scene import Material, Scene, Texture, TextureRef
    scene = Scene()
    scene.textures.append(Texture(image=png.from_rgba(np.zeros((30, 50, 4), np.uint8)).data))
    scene.materials.append(Material(name="material_0", base_color_texture=TextureRef(0)))
    with pytest.warns(retromesh.LossWarning, match="resized to 64x32"):
        out = skins.skin_outputs(scene)
    assert _read(out[".dtx"]).header.width == 64


def test_modelbutes_parser():
    tags = skins.read_modelbutes('[A]\nKey = "v" // c\nBare=3\n[B]\n')
    assert tags == {"A": {"key": "v", "bare": "3"}, "B": {}}


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.dtx")) if CORPUS.is_dir() else [],
                         ids=lambda p: p.name)
def test_corpus_textures_round_trip(path):
    data = path.read_bytes()
    doc = _read(data)
    assert _bytes(doc) == data
    dtx_pixels.to_rgba(doc)


def test_levels_without_pixels_are_refused_not_crashed(tmp_path):
    doc = dtx_pixels.from_rgba(dtx_samples.gradient(8, 8), mips=4)
    doc.header.mip_count = 5
    doc.levels.append(b"")                      # a 0x0 level, as a 15-level file has
    back = _read(_bytes(doc))
    with pytest.raises(retromesh.UnsupportedError, match="no pixels"):
        dtx_pixels.to_rgba(back, 4)
    path = tmp_path / "flat.dtx"
    doc.header.height = 0
    doc.levels = [b""] * 5
    path.write_bytes(_bytes(doc))
    with pytest.raises(retromesh.RetromeshError):
        retromesh.convert(path, tmp_path / "flat.png")


def test_any_model_naming_a_texture_finds_its_dtx(tmp_path):
    """.dtx is an image format of retromesh.imageformats: a material naming ``skin.bmp`` gets
    the ``skin.dtx`` beside it, embedded as PNG."""
    from retromesh.textures import TextureFinder
    _skin(tmp_path / "Skin.DTX", (0, 128, 255))
    found = TextureFinder(tmp_path).load("skin.bmp")
    assert not isinstance(found, str), found
    assert found.mime_type == "image/png" and found.converted and found.path.name == "Skin.DTX"
