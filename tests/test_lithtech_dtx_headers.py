"""DTX headers with every value real Blood 2, KISS Psycho Circus and No One Lives Forever
textures hold in each field (tests/helpers/dtx_header_variants.py, counted from the header
tables of DTX-Meta-Transfer), built by our own writer: each reads back field for field, writes
back byte for byte, decodes, converts to PNG, and ``check`` finds no error in it (the games
load them all)."""
from __future__ import annotations

import pytest

import retromesh
from helpers.dtx_header_variants import VARIANTS
from helpers.dtx_headers import texture, variant_header
from retromesh.binio import Reader
from retromesh.formats.lithtech import dtx, dtx_image, dtx_pixels


@pytest.mark.parametrize("version, values, light", VARIANTS,
                         ids=[f"v{v}-{i}" for i, (v, _, _) in enumerate(VARIANTS)])
def test_real_header_values_read_and_write_back(version, values, light):
    header = variant_header(version, values, light)
    doc = texture(header, light)
    data = dtx.write(doc)
    back = dtx.read(Reader(data))
    assert back == doc
    assert dtx.write(back) == data
    assert not [f for f in dtx.check(back) if f.is_error], dtx.check(back)
    info = dtx.info(back)
    assert info["size"] == f"{header.width}x{header.height}"
    if light:
        assert "LIGHTDEFS" in info["sections"] or "trailing bytes" in info
    rgba = dtx_pixels.to_rgba(back)
    assert rgba.shape == (header.height, header.width, 4)
    png = dtx_image.dtx_to_png(back)
    assert retromesh.to_bytes(png)[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_variants_cover_every_version_pixel_format_and_flag_seen():
    seen = {(v, variant_header(v, vals).flags) for v, vals, _ in VARIANTS}
    assert {v for v, _ in seen} == {-5, -3, -2}
    bpps = {variant_header(v, vals).bpp for v, vals, _ in VARIANTS if v == -5}
    assert bpps == {dtx.BPP_8P, dtx.BPP_32, dtx.BPP_DXT1, dtx.BPP_DXT3, dtx.BPP_DXT5}
    # v1 textures without SECTIONSFIXED (Blood 2 ships 250) and with the alpha masks
    assert any(v == -2 and not f & dtx.SECTIONSFIXED for v, f in seen)
    assert any(v != -5 and f & dtx.ALPHA_MASKS for v, f in seen)
