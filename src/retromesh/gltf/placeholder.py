"""The image a GLB carries for a texture that could not be found.

A GLB must hold its images (a relative reference is an external file: not self-contained, and
the Khronos validator reports it), so a texture whose file is missing gets this small
magenta/black checker instead, its image's extras keeping the name the model gave
(``original_uri``) and ``"placeholder": true``. Read back, such an image is the reference it
stands for, without bytes, so nothing is written for it. Blender drops image extras: an image
with the placeholder's pixels (whatever its PNG encoding) is recognised by them too.
"""
from __future__ import annotations

import struct

import numpy as np

from ..errors import RetromeshError

__all__ = ["PLACEHOLDER_KEY", "placeholder_png", "is_placeholder"]

#: image extras key marking a placeholder
PLACEHOLDER_KEY = "placeholder"
_SIZE = 8
_cache: list[bytes] = []
_pixels: list[np.ndarray] = []


def _checker() -> np.ndarray:
    if not _pixels:
        yx = np.indices((_SIZE, _SIZE)).sum(axis=0) % 2 == 0
        px = np.zeros((_SIZE, _SIZE, 4), np.uint8)
        px[yx] = (255, 0, 255, 255)         # magenta squares on black: "texture missing"
        px[~yx] = (0, 0, 0, 255)
        _pixels.append(px)
    return _pixels[0]


def placeholder_png() -> bytes:
    """The placeholder's PNG bytes (made once; the same bytes every time)."""
    if not _cache:
        # imported here: the image formats register themselves on import (start-up time)
        from ..image import png
        _cache.append(png.from_rgba(_checker(), level=9).data)
    return _cache[0]


def is_placeholder(data: bytes | memoryview) -> bool:
    """Whether ``data`` is a PNG with the placeholder's size and pixels."""
    head = bytes(data[:24])     # the size first: most images are not 8x8, nothing decoded
    if (len(data) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR"
            or struct.unpack_from(">II", head, 16) != (_SIZE, _SIZE)):
        return False
    data = bytes(data)
    if data == placeholder_png():
        return True
    from ..image import png
    try:
        pixels = png.rgba(png.PngImage(data))
    except (RetromeshError, ValueError, OSError):
        return False
    return pixels.shape == (_SIZE, _SIZE, 4) and bool(np.array_equal(pixels, _checker()))
