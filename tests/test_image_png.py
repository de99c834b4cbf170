"""PNG as a format of its own (``retromesh.image``, no game's family): read and written back
byte for byte, found by its signature, ``info``, listed by ``retromesh formats`` under Image,
and the way ``.dtx`` textures convert to and from (LithTech's converters)."""
from __future__ import annotations

import numpy as np
import pytest

import retromesh
from helpers.cli import run
from helpers.malformed import assert_malformed_safe
from retromesh import registry
from retromesh.binio import Reader
from retromesh.formats.lithtech import dtx, dtx_samples, manifest as lithtech_manifest
from retromesh.image import png

PIXELS = dtx_samples.gradient(16, 8)


def test_png_reads_and_writes_back_byte_for_byte():
    data = png.from_rgba(PIXELS).data
    doc = retromesh.read(data, format="png")
    assert isinstance(doc, png.PngImage) and retromesh.to_bytes(doc) == data
    assert retromesh.detect(data).name == "png"
    assert png.info(doc) == {"size": "16x8", "colour": "RGBA", "bit depth": 8}
    assert np.array_equal(png.rgba(doc), PIXELS)


@pytest.mark.parametrize("level", [0, 1, 9])
def test_any_zlib_level_holds_the_same_pixels(level):
    """The skins embedded in a GLB are deflated at level 1 (speed); the pixels are those of
    the default level, opaque or not."""
    for pixels in (PIXELS, dtx_samples.gradient(16, 8, alpha=False)):
        fast = png.from_rgba(pixels, level).data
        assert np.array_equal(png.rgba(png.PngImage(fast)), png.rgba(png.from_rgba(pixels)))


def test_png_is_no_game_s():
    fmt = registry.get("png")
    assert fmt.family == "Image" and fmt.to_scene is None and fmt.from_scene is None
    assert "png" not in {f.name for f in lithtech_manifest.FORMATS}
    out = run("formats")
    assert out.exit_code == 0 and "png" in out.output


def test_dtx_converts_to_png_and_back(tmp_path):
    src = tmp_path / "g.dtx"
    src.write_bytes(dtx.write(dtx_samples.documents()["dtx"]))
    assert run("convert", src, "-o", tmp_path / "g.png").exit_code == 0
    res = run("convert", tmp_path / "g.png", "-o", tmp_path / "back.dtx", "-O", "bpp=32")
    assert res.exit_code == 0, res.output
    back = dtx.read(Reader((tmp_path / "back.dtx").read_bytes()))
    assert back.header.width == 16 and back.header.height == 8


@pytest.mark.parametrize("cut", [0, 7, 12, 20, 32])
def test_a_broken_png_gives_a_format_error(cut):
    data = png.from_rgba(PIXELS).data
    with pytest.raises(retromesh.FormatError):
        retromesh.read(data[:cut], format="png")


def test_bad_input_gives_only_format_error():
    assert_malformed_safe(png.from_rgba(PIXELS).data, "g.png", format="png", endian=">")
