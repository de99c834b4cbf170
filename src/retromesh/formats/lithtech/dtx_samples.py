"""Small DTX textures of every layout, made by our own writers:
the ``dtx`` part of the family's :func:`.samples.documents`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import dtx, dtx_pixels
from .dtx import DtxSection, DtxTexture

__all__ = ["documents", "gradient", "VARIANTS", "write_skins", "skin_rgba",
           "write_game_layout"]

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
    h = code0.header
    assert isinstance(h, dtx.DtxHeader)     # version -5: from_rgba's default
    h.bpp = 0                               # read as 32-bit, as the engine does
    h.command = b"lighting 1".ljust(dtx.COMMAND_LEN, b"\0")
    h.detail_scale, h.detail_angle, h.group = 2.0, -45, 1
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
    return out


def skin_rgba(size: int = 64, hue: int = 0) -> np.ndarray:
    """A checked skin (two colours, a border): a texture whose mapping shows on a model."""
    y, x = np.mgrid[0:size, 0:size]
    check = ((x // 8 + y // 8) % 2).astype(bool)
    rgba = np.empty((size, size, 4), np.uint8)
    rgba[...] = (200, 60 + hue, 40, 255)
    rgba[check] = (240, 200, 120 + hue // 2, 255)
    edge = (x < 2) | (y < 2) | (x >= size - 2) | (y >= size - 2)
    rgba[edge] = (30, 30, 30, 255)
    return rgba


def write_skins(folder: str | Path) -> list[Path]:
    """The example models' skins, named as :mod:`.skins` finds them beside a model:
    ``model_v12.dtx`` (DXT5) and ``model_v12_head.dtx`` (32-bit) for the NOLF-style model,
    ``model_v6.dtx`` (LithTech 1.0, 8-bit palettised) for the Blood 2-style one."""
    folder = Path(folder)
    made = {"model_v12.dtx": dtx_pixels.from_rgba(skin_rgba(), bpp=dtx.BPP_DXT5),
            "model_v12_head.dtx": dtx_pixels.from_rgba(skin_rgba(32, 80)),
            "model_v6.dtx": dtx_pixels.from_rgba(skin_rgba(32, 40), version=dtx.VERSION_1)}
    out = []
    for name, doc in made.items():
        (folder / name).write_bytes(dtx.write(doc))
        out.append(folder / name)
    return out


MODELBUTES = """// the attribute file of a Jupiter (NOLF2) game: the skins each model wears
[Model0]
Name = "Hero"
ModelFile = "Chars\\Models\\Hero_Action.ltb"
Skin0 = "Chars\\Skins\\Hero_Action.dtx"
Skin1 = "Chars\\Skins\\Hero_Action_head.dtx"
Skin2 = "Chars\\Skins\\Old\\hero_v1.dtx"
"""


def write_game_layout(folder: str | Path, model: bytes) -> list[Path]:
    """A model in a game's resource folder: ``Chars/Models/Hero_Action.abc`` (``model``, the
    file's bytes), its skins under ``Chars/Skins`` and ``Attributes/modelbutes.txt`` naming
    them; returns the files written."""
    folder = Path(folder)
    files = {"Chars/Models/Hero_Action.abc": model,
             "Chars/Skins/Hero_Action.dtx": dtx.write(dtx_pixels.from_rgba(
                 skin_rgba(), bpp=dtx.BPP_DXT1)),
             "Chars/Skins/Hero_Action_head.dtx": dtx.write(dtx_pixels.from_rgba(
                 skin_rgba(32, 80), bpp=dtx.BPP_32P)),
             "Chars/Skins/Old/hero_v1.dtx": dtx.write(dtx_pixels.from_rgba(
                 skin_rgba(16, 40), version=dtx.VERSION_15)),
             "Attributes/modelbutes.txt": MODELBUTES.encode("latin-1")}
    out = []
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        out.append(path)
    return out
