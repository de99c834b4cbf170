"""Luanti texture strings resolved with Pillow (retromesh.luanti.texmod), on small generated
PNGs; expected values worked out from imagesource.cpp's arithmetic."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from retromesh.luanti.texmod import (
    parse_color,
    parse_transform,
    plain_name,
    resolve_texture,
    scale_to,
    split_top_level,
)


def png(folder: Path, name: str, pixels) -> Path:
    arr = np.asarray(pixels, np.uint8)
    path = folder / name
    Image.fromarray(arr, "RGBA").save(path)
    return path


@pytest.fixture
def media(tmp_path: Path) -> dict[str, Path]:
    quad = [[[255, 0, 0, 255], [0, 255, 0, 255]], [[0, 0, 255, 255], [255, 255, 255, 255]]]
    out = {
        "quad.png": png(tmp_path, "quad.png", quad),                          # 2x2 R G / B W
        "px.png": png(tmp_path, "px.png", [[[200, 100, 50, 255]]]),
        "half.png": png(tmp_path, "half.png", [[[0, 0, 255, 255], [10, 20, 30, 100]]]),
        "clear4.png": png(tmp_path, "clear4.png", np.zeros((4, 4, 4))),
        "dot4.png": png(tmp_path, "dot4.png", np.pad(np.full((1, 1, 4), 255), ((1, 2), (1, 2), (0, 0)))),
        "semi.png": png(tmp_path, "semi.png", [[[255, 255, 255, 128]]]),
    }
    return out


def pixels(texture: str, media: dict[str, Path]) -> np.ndarray:
    image, warnings = resolve_texture(texture, media)
    assert image is not None, warnings
    assert not warnings, warnings
    return np.asarray(image).astype(int)


def test_plain_file_and_plain_name(media) -> None:
    assert pixels("quad.png", media)[0, 1].tolist() == [0, 255, 0, 255]
    assert plain_name("quad.png") == "quad.png" and plain_name("a.png^b.png") is None


def test_overlay_scales_the_smaller_to_the_larger(media) -> None:
    out = pixels("quad.png^dot4.png", media)
    assert out.shape == (4, 4, 4)
    assert out[0, 0].tolist() == [255, 0, 0, 255]            # quad scaled x2, nearest
    assert out[1, 1].tolist() == [255, 255, 255, 255]        # the dot drawn over it
    assert out[3, 3].tolist() == [255, 255, 255, 255]        # quad's white quarter


def test_semi_transparent_overlay_is_luantis_blend(media) -> None:
    out = pixels("px.png^semi.png", media)
    assert out[0, 0].tolist() == [(200 * 127 + 255 * 128) // 255, (100 * 127 + 255 * 128) // 255,
                                  (50 * 127 + 255 * 128) // 255, 255]


def test_a_group_is_drawn_without_scaling(media) -> None:
    out = pixels("clear4.png^(quad.png^[invert:rgb)", media)
    assert out.shape == (4, 4, 4)
    assert out[0, 0].tolist() == [0, 255, 255, 255] and out[3, 3].tolist() == [0, 0, 0, 0]


def test_multiply_colorize_opacity_brighten_invert(media) -> None:
    assert pixels("px.png^[multiply:#808080", media)[0, 0].tolist() == [100, 50, 25, 255]
    assert pixels("px.png^[screen:#000", media)[0, 0].tolist() == [200, 100, 50, 255]
    blue = "half.png"
    assert pixels(f"{blue}^[colorize:red:128", media)[0, 0].tolist() == [128, 0, 127, 255]
    assert pixels(f"{blue}^[colorize:#00ff0080", media)[0, 0].tolist() == [0, 128, 127, 191]
    keep = pixels(f"{blue}^[colorize:#ff0000:alpha", media)
    assert keep[0, 1].tolist() == [255, 0, 0, 100]
    assert pixels(f"{blue}^[opacity:128", media)[0].tolist() == [[0, 0, 255, 128], [10, 20, 30, 50]]
    assert pixels("quad.png^[brighten", media)[1, 0].tolist() == [127, 127, 255, 255]
    assert pixels(f"{blue}^[invert:rgba", media)[0, 1].tolist() == [245, 235, 225, 155]
    assert pixels(f"{blue}^[noalpha", media)[0, 1, 3] == 255
    assert pixels(f"{blue}^[makealpha:0,0,255", media)[0, 0, 3] == 0


def test_transforms(media) -> None:
    q = pixels("quad.png", media)
    assert (pixels("quad.png^[transformR90", media) == np.rot90(q)).all()
    assert (pixels("quad.png^[transform1", media) == np.rot90(q)).all()
    assert (pixels("quad.png^[transformFX", media) == q[:, ::-1]).all()
    assert (pixels("quad.png^[transformFY", media) == q[::-1]).all()
    assert (pixels("quad.png^[transform5", media) == q.transpose(1, 0, 2)).all()
    assert parse_transform("FXR90") == 5 and parse_transform("R90R270") == 0
    assert parse_transform("fyr90") == 7 and parse_transform("R180") == 2


def test_resize_mask_combine_sheet_fill(media) -> None:
    assert pixels("quad.png^[resize:4x4", media).shape == (4, 4, 4)
    masked = pixels("quad.png^[mask:dot4.png", media)
    assert masked[1, 1].tolist() == [255, 0, 0, 255] and masked[0, 0].tolist() == [0, 0, 0, 0]
    combined = pixels("[combine:4x3:0,0=px.png:2,1=quad.png\\^[invert\\:rgb", media)
    assert combined.shape == (3, 4, 4)
    assert combined[0, 0].tolist() == [200, 100, 50, 255]
    assert combined[1, 2].tolist() == [0, 255, 255, 255] and combined[0, 3, 3] == 0
    assert pixels("quad.png^[sheet:2x2:1,1", media)[0, 0].tolist() == [255, 255, 255, 255]
    assert pixels("quad.png^[verticalframe:2:1", media).shape == (1, 2, 4)
    assert pixels("[fill:2x1:#102030", media)[0, 1].tolist() == [16, 32, 48, 255]


def test_unknown_modifier_and_missing_media_warn(media) -> None:
    image, warnings = resolve_texture("quad.png^[hsl:10:0:0", media)
    assert image is not None and np.asarray(image)[0, 0].tolist() == [255, 0, 0, 255]
    assert len(warnings) == 1 and "[hsl" in warnings[0] and "not supported" in warnings[0]
    image, warnings = resolve_texture("quad.png^missing.png", media)
    assert image is not None and "missing media 'missing.png'" in warnings[0]
    image, warnings = resolve_texture("gone.png^(also_gone.png^[multiply:red)", media)
    assert image is None and len(warnings) == 2
    image, warnings = resolve_texture("quad.png^(px.png", media)
    assert image is None and "unbalanced" in warnings[0]
    image, warnings = resolve_texture("quad.png^[multiply:notacolour", media)
    assert "invalid colour" in warnings[0]
    image, warnings = resolve_texture("[combine:99999x99999", media)
    assert image is None and "invalid size" in warnings[0]


def test_other_extension_is_found(media) -> None:
    assert pixels("quad.jpg", media)[0, 0].tolist() == [255, 0, 0, 255]


def test_colours_and_splitting() -> None:
    assert parse_color("#f80") == (255, 136, 0, 255)
    assert parse_color("#f808") == (255, 136, 0, 136)
    assert parse_color("#11223344") == (17, 34, 51, 68)
    assert parse_color("Red") == (255, 0, 0, 255) and parse_color("red#80") == (255, 0, 0, 128)
    assert parse_color("red#8") == (255, 0, 0, 136) and parse_color("nocolour") is None
    assert parse_color("#12345") is None
    assert split_top_level("a^(b^c)^d\\^e") == ["a", "(b^c)", "d\\^e"]
    assert split_top_level("a^(b") is None and split_top_level("a)^(b") is None


def test_scaling_keeps_the_border_pixels() -> None:
    row = np.arange(3, dtype=np.uint8).reshape(1, 3, 1).repeat(4, axis=2)
    assert scale_to(row, 5, 1)[0, :, 0].tolist() == [0, 1, 1, 2, 2]   # from 0.5 by 0.5
    assert scale_to(row, 6, 1)[0, :, 0].tolist() == [0, 0, 1, 1, 2, 2]


def test_the_files_a_texture_string_names() -> None:
    from retromesh.luanti.texmod import file_names

    assert file_names("a.png^(b.png^[multiply:red)^[mask:m.png^[combine:4x4:0,0=c.png\\^d.png"
                      "^[lowpart:50:e.png^a.png^[hsl:1") == ["a.png", "b.png", "m.png", "c.png",
                                                             "d.png", "e.png"]
    assert file_names("a.png^(b.png") == []


def test_css_colour_names_after_pillow_cached_them() -> None:
    """Pillow's getrgb caches a parsed name in ImageColor.colormap as a tuple; a name must
    still parse afterwards (the result must not depend on what ran before)."""
    from PIL import ImageColor

    from retromesh.luanti import texmod
    ImageColor.getrgb("orange")
    assert texmod.parse_color("orange") == (255, 165, 0, 255)
    assert texmod.parse_color("orange#80") == (255, 165, 0, 128)
