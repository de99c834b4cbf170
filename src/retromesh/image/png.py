"""PNG images as a file type of their own, so that a game's texture formats convert to and from
them (``retromesh convert skin.dtx -o skin.png`` and back: the converters are the texture
family's, LithTech's ``dtx_image``).

The native document keeps the file's bytes as they are (``write(read(f)) == f``); the pixels
are decoded by Pillow only when a conversion asks (:func:`rgba`). Nothing here reads a scene:
a PNG is a texture, not a model.

=========  ==================================================================================
part       layout
=========  ==================================================================================
signature  ``89 50 4E 47 0D 0A 1A 0A``
chunks     uint32 length (big-endian); char type[4]; data; uint32 CRC — ``IHDR`` first
           (uint32 width, height; uint8 bit depth, colour type, compression, filter,
           interlace)
=========  ==================================================================================
"""
from __future__ import annotations

import io
import struct
import warnings
import zlib
from typing import Any

import numpy as np

from ..binio import Reader
from ..errors import DocumentError
from ..records import record

__all__ = ["PngImage", "read", "write", "info", "sniff", "rgba", "from_rgba", "SIGNATURE"]

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOUR = {0: "grey", 2: "RGB", 3: "palettised", 4: "grey + alpha", 6: "RGBA"}


@record
class PngImage:
    """A PNG file's bytes; ``width``/``height`` from its ``IHDR``."""
    data: bytes

    @property
    def size(self) -> tuple[int, int]:
        return struct.unpack_from(">II", self.data, 16)


def sniff(head: bytes) -> bool:
    return head[:8] == SIGNATURE


def read(r: Reader) -> PngImage:
    if r.peek(8) != SIGNATURE:
        raise r.fail("the PNG signature", r.peek(8), field="signature")
    head = r.peek(33)
    if len(head) < 33 or head[12:16] != b"IHDR":
        raise r.fail("an IHDR chunk after the signature", head[8:16], offset=r.pos + 8,
                     field="IHDR")
    return PngImage(r.rest())


def write(doc: PngImage) -> bytes:
    if not sniff(doc.data):
        raise DocumentError("data: the bytes of a PNG file (its signature first)")
    return doc.data


def info(doc: PngImage) -> dict[str, Any]:
    w, h = doc.size
    depth, colour = doc.data[24], doc.data[25]
    return {"size": f"{w}x{h}", "colour": _COLOUR.get(colour, f"type {colour}"),
            "bit depth": depth}


def rgba(doc: PngImage) -> np.ndarray:
    """The pixels as an (height, width, 4) uint8 RGBA array (Pillow decodes; images over its
    decompression-bomb limit are refused)."""
    from PIL import Image
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(doc.data), formats=["PNG"]) as im:
                return np.asarray(im.convert("RGBA"), np.uint8).copy()
    except Exception as exc:            # Pillow raises many kinds on bad data
        raise DocumentError(f"the PNG could not be decoded ({type(exc).__name__}: {exc})"[:300]) \
            from exc


def from_rgba(pixels: np.ndarray, level: int = 6) -> PngImage:
    """A PNG of an (height, width, 4) uint8 RGBA array (RGB when every pixel is opaque), 8 bits
    a channel, written here (zlib, no Pillow: importing Pillow cost a model's conversion on the
    command line more than making its skins): each row filtered by the PNG filter that leaves
    the smallest sum of absolute byte values (the usual heuristic, libpng's), deflated at zlib
    ``level`` (its default, 6, unless told: on a 256x256 skin 1 deflates three times as fast
    into 5 to 8 % more bytes)."""
    pixels = np.ascontiguousarray(pixels, np.uint8)
    if pixels.ndim != 3 or pixels.shape[2] != 4:
        raise DocumentError(f"pixels: an (height, width, 4) array, got shape {pixels.shape}")
    h, w = pixels.shape[:2]
    opaque = bool(pixels[..., 3].min() == 255) if pixels.size else True
    bpp = 3 if opaque else 4
    n = w * bpp
    # the rows after a row and a pixel of zeros: the bytes to the left, above and above-left
    # are views of one array (no copies), the filters uint8 (PNG's arithmetic is modulo 256)
    pad = np.zeros((h + 1, n + bpp), np.uint8)
    if opaque and w:
        # each pixel's RGB as one 3-byte item: a copy of w items a row (of 3-byte runs, it
        # cost a fifth of the whole on a skin)
        pad[1:, bpp:].view("V3")[...] = np.ndarray((h, w), "V3", pixels, 0, (4 * w, 4))
    else:
        pad[1:, bpp:] = pixels.reshape(h, n)
    x, a, b, c = pad[1:, bpp:], pad[1:, :n], pad[:-1, bpp:], pad[:-1, :n]
    filtered = np.empty((5, h, n), np.uint8)
    filtered[0] = x
    np.subtract(x, a, out=filtered[1])
    np.subtract(x, b, out=filtered[2])
    f3 = filtered[3]                            # floor((a + b) / 2), in place
    np.bitwise_xor(a, b, out=f3)
    f3 >>= 1
    f3 += a & b
    np.subtract(x, f3, out=f3)
    # Paeth: p = a + b - c; the nearest of a, b, c to p (ties: a, then b)
    c16 = c.astype(np.int16)
    pa = b - c16                                # p - a
    pb = a - c16                                # p - b
    pc = pa + pb                                # p - c
    for d in (pa, pb, pc):
        np.abs(d, out=d)
    f4 = filtered[4]
    np.copyto(f4, c)
    np.copyto(f4, b, where=pb <= pc)
    np.minimum(pb, pc, out=pb)
    np.copyto(f4, a, where=pa <= pb)
    np.subtract(x, f4, out=f4)
    # each byte's |value as int8| (abs of -128 is -128 in int8: 128 as uint8)
    cost = np.abs(filtered.view(np.int8)).view(np.uint8).sum(
        axis=2, dtype=np.uint32 if n < 1 << 24 else np.int64)     # (5, h)
    best = np.argmin(cost, axis=0)
    rows = np.empty((h, 1 + n), np.uint8)
    rows[:, 0] = best
    rows[:, 1:] = filtered[best, np.arange(h)]
    head = struct.pack(">IIBBBBB", w, h, 8, 2 if opaque else 6, 0, 0, 0)
    return PngImage(SIGNATURE + _chunk(b"IHDR", head) + _chunk(b"IDAT", zlib.compress(
        rows.tobytes(), level)) + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + \
        struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
