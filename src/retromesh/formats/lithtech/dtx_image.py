"""DTX textures as images: the ``dtx`` <-> ``png`` conversions, the decoder retromesh's texture
finder uses (a model's ``.dtx`` skins embedded in glTF as PNG), and a Pillow plugin.

Conversions (``retromesh convert``, ``-O`` options):

* ``.dtx -> .png``: mip level 0, or ``mip=N``; a cube map's face ``face=N`` (0..5);
* ``.png -> .dtx``: ``bpp=`` 32 (the default, as LithTech's dtxutil), 24, 16, 8, 32p, dxt1,
  dxt3, dxt5; ``version=`` -5 (default), -3 or -2 (8-bit palettised with 4-bit alpha masks);
  ``mips=`` 1..8 levels (default 4); ``flags=`` the header flags (default ``SECTIONSFIXED``;
  add 128 for ``PREFER4444`` or 256 for ``PREFER5551`` to pick the 16-bit layout). A size the
  games cannot take is refused, saying why.

Pillow: :func:`register_pillow` registers ``DTX`` with Pillow (``Image.open("skin.dtx")``
gives mip level 0 as RGBA; ``im.save("x.dtx", bpp="dxt5")`` takes the options above).
"""
from __future__ import annotations

import io
from typing import IO, Any

from ...binio import Reader
from ...errors import DocumentError
from ...image import png
from . import dtx, dtx_pixels
from .dtx import DtxTexture

__all__ = ["dtx_to_png", "png_to_dtx", "open_image", "register_pillow", "encode_options"]


def dtx_to_png(doc: DtxTexture, *, mip: int = 0, face: int = 0, **_: Any) -> png.PngImage:
    return png.from_rgba(dtx_pixels.to_rgba(doc, int(mip), int(face)))


def encode_options(bpp: Any = "32", version: Any = -5, mips: Any = None,
                   flags: Any = dtx.SECTIONSFIXED) -> dict[str, int | None]:
    """``-O`` values (text or numbers) as :func:`.dtx_pixels.from_rgba` arguments."""
    key = str(bpp).lower().removeprefix("bpp_")
    if key not in dtx_pixels.BPP_OPTIONS:
        raise DocumentError(f"bpp: one of {', '.join(dtx_pixels.BPP_OPTIONS)}, got {bpp!r}")
    try:
        v = int(version)
        n = None if mips is None else int(mips)
        f = int(flags, 0) if isinstance(flags, str) else int(flags)
    except (TypeError, ValueError) as exc:
        raise DocumentError(f"version, mips and flags are numbers ({exc})") from exc
    return {"bpp": dtx_pixels.BPP_OPTIONS[key], "version": v, "mips": n, "flags": f}


def png_to_dtx(doc: png.PngImage, *, bpp: Any = "32", version: Any = -5, mips: Any = None,
               flags: Any = dtx.SECTIONSFIXED, **_: Any) -> DtxTexture:
    opts = encode_options(bpp, version, mips, flags)
    return dtx_pixels.from_rgba(png.rgba(doc), **opts)   # type: ignore[arg-type]  # (ints)


def open_image(data: bytes) -> Any:
    """Mip level 0 of the DTX ``data`` as a Pillow RGBA image (retromesh's image-format
    decoder: what :mod:`retromesh.textures` embeds as PNG)."""
    from PIL import Image
    doc = dtx.read(Reader(data))
    return Image.fromarray(dtx_pixels.to_rgba(doc), "RGBA")


# -- Pillow plugin ---------------------------------------------------------------------------

def _accept(prefix: bytes) -> bool:
    return dtx.sniff(prefix)


def _plugin() -> Any:
    from PIL import ImageFile

    class DtxImageFile(ImageFile.ImageFile):
        """Mip level 0 of a LithTech texture, decoded by retromesh, as RGBA."""
        format = "DTX"
        format_description = "LithTech texture"

        def _open(self) -> None:
            assert self.fp is not None
            doc = dtx.read(Reader(self.fp.read()))
            pixels = dtx_pixels.to_rgba(doc)
            self._mode = "RGBA"
            self._size = (pixels.shape[1], pixels.shape[0])
            self.info["dtx_version"] = doc.version
            self.info["dtx_pixel_format"] = dtx.BPP_NAMES[dtx.bpp_of(doc.header)]
            # the decoded pixels stand in for the file: Pillow's raw decoder reads them
            self.fp = io.BytesIO(pixels.tobytes())
            self.tile = [ImageFile._Tile("raw", (0, 0) + self._size, 0, ("RGBA", 0, 1))]

    return DtxImageFile


def _save(im: Any, fp: IO[bytes], filename: str | bytes) -> None:
    import numpy as np
    opts = encode_options(**{k: v for k, v in im.encoderinfo.items()
                             if k in ("bpp", "version", "mips", "flags")})
    doc = dtx_pixels.from_rgba(np.asarray(im.convert("RGBA"), np.uint8), **opts)  # type: ignore[arg-type]
    fp.write(dtx.write(doc))


_registered: list[bool] = []


def register_pillow() -> None:
    """Teach Pillow to open and save ``.dtx`` (idempotent)."""
    if _registered:
        return
    from PIL import Image
    plugin = _plugin()
    Image.register_open("DTX", plugin, _accept)
    Image.register_save("DTX", _save)
    Image.register_extension("DTX", ".dtx")
    _registered.append(True)
