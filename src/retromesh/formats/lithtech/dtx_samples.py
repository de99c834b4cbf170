"""Small DTX textures (and the PNG they convert to) of every layout, made by our own writers:
the ``dtx`` and ``png`` part of the family's :func:`.samples.documents`."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtx, dtx_pixels, png
from .dtx import DtxSection, DtxTexture

__all__ = ["documents", "gradient", "VARIANTS"]

#: sample name -> (bpp code, version, flags)
VARIANTS = {
    "dtx": (dtx.BPP_32, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:24": (dtx.BPP_24, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:565": (dtx.BPP_16, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:4444": (dtx.BPP_16, dtx.VERSION_2, dtx.SECTIONSFIXED | dtx.PREFER4444),
    "dtx:5551": (dtx.BPP_16, dtx.VERSION_2, dtx.SECTIONSFIXED | dtx.PREFER5551),
    "dtx:8": (dtx.BPP_8, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:32p": (dtx.BPP_32P, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:dxt1": (dtx.BPP_DXT1, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:dxt3": (dtx.BPP_DXT3, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:dxt5": (dtx.BPP_DXT5, dtx.VERSION_2, dtx.SECTIONSFIXED),
    "dtx:v1": (dtx.BPP_8P, dtx.VERSION_1, dtx.SECTIONSFIXED),
    "dtx:v15": (dtx.BPP_8P, dtx.VERSION_15, dtx.SECTIONSFIXED),
}


def gradient(width: int = 16, height: int = 8, alpha: bool = True) -> np.ndarray:
    """An RGBA test image: colour ramps, and a ramp of alpha when ``alpha``."""
    y, x = np.mgrid[0:height, 0:width]
    a = (x * 255 // max(1, width - 1)) if alpha else np.full_like(x, 255)
    return np.stack([x * 255 // max(1, width - 1), y * 255 // max(1, height - 1),
                     (x + y) * 255 // max(1, width + height - 2), a], -1).astype(np.uint8)


def _cubemap() -> DtxTexture:
    faces = [dtx_pixels.from_rgba(np.roll(gradient(8, 8), k, axis=1), mips=2) for k in range(6)]
    doc = faces[0]
    doc.header.flags |= dtx.CUBEMAP
    rest = b"".join(b"".join(f.levels) for f in faces[1:])
    doc.sections = [DtxSection(b"CUBEMAPDATA".ljust(15, b"\0"), data=rest)]
    doc.header.section_count = 1
    return doc


def _extras() -> dict[str, DtxTexture]:
    """The header fields and the layouts our encoder does not make by itself."""
    code0 = dtx_pixels.from_rgba(gradient(8, 8), mips=4)
    code0.header.bpp = 0                    # read as 32-bit, as the engine does
    code0.header.command = b"lighting 1".ljust(dtx.COMMAND_LEN, b"\0")
    code0.header.detail_scale, code0.header.detail_angle, code0.header.group = 2.0, -45, 1
    lights = dtx_pixels.from_rgba(gradient(8, 8), version=dtx.VERSION_1)
    lights.sections = [DtxSection(b"LIGHTDEFS".ljust(15, b"\0"), data=b"light 1 0 0\0")]
    lights.header.section_count = 1
    unfixed = dtx_pixels.from_rgba(gradient(8, 8, alpha=False), mips=1, flags=0)
    unfixed.sections, unfixed.header.section_count = None, 3   # a count the engine ignores
    unfixed.trailing = b"old section data"
    return {"dtx:code0": code0, "dtx:cubemap": _cubemap(), "dtx:v1-lightdefs": lights,
            "dtx:unfixed": unfixed}


def documents() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (bpp, version, flags) in VARIANTS.items():
        out[name] = dtx_pixels.from_rgba(gradient(), bpp=bpp, version=version, flags=flags)
    out.update(_extras())
    out["png"] = png.from_rgba(gradient())
    return out
