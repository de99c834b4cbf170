"""The table of image formats a model's textures may be in, and how each becomes an image glTF
can carry: what :mod:`retromesh.textures` asks (which extensions a texture name may be swapped
to, how a file's bytes are recognised and decoded).

An image format is registered once, like a model format (:func:`register`): its extensions
(in the order a texture name is tried with them), a ``sniff`` of the first bytes, and how it is
decoded: ``mime`` when glTF carries the bytes as they are (PNG, JPEG), ``pillow`` (the names of
Pillow's plugins that decode it: TGA, BMP, DDS, PCX...), or ``open(data) -> PIL.Image.Image``,
a decoder of our own (a game's texture format, LithTech's ``.dtx``), turned into PNG.
A family that brings an image format registers it from a module listed in
:data:`IMAGE_MODULES` with its extensions, imported the first time an image that is not PNG
or JPEG is decoded.

Pillow is only ever asked for plain raster formats (never EPS/PDF, which call external
programs).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .records import record

__all__ = ["ImageFormat", "register", "unregister", "image_formats", "image_extensions",
           "carried_mime", "own_decoder", "pillow_formats", "IMAGE_MODULES"]

#: modules that register image formats of their own -> the extensions those formats have:
#: listing the extensions a texture name is tried with imports nothing; a module is imported
#: the first time a file that is not PNG/JPEG is decoded (so that a model whose textures are
#: PNG does not import LithTech's family for its ``.dtx``)
IMAGE_MODULES: dict[str, tuple[str, ...]] = {"retromesh.formats.lithtech": ("dtx",)}


@record(frozen=True)
class ImageFormat:
    """One image file type (see the module docstring)."""
    name: str
    extensions: tuple[str, ...] = ()
    sniff: Callable[[bytes], bool] | None = None
    #: glTF carries the bytes as they are, with this MIME type
    mime: str | None = None
    #: Pillow plugins that decode it (tried in the order of registration)
    pillow: tuple[str, ...] = ()
    #: ``open(data) -> PIL.Image.Image``: a decoder of our own, chosen by ``sniff``
    open: Callable[[bytes], Any] | None = None


_IMAGES: dict[str, ImageFormat] = {}
_loaded: list[bool] = []


def register(fmt: ImageFormat) -> ImageFormat:
    if fmt.name in _IMAGES and _IMAGES[fmt.name] != fmt:
        raise RuntimeError(f"image format {fmt.name!r} registered twice")
    _IMAGES[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Forget image format ``name`` (tests that register a throwaway one)."""
    _IMAGES.pop(name, None)


def image_formats() -> list[ImageFormat]:
    """Every registered image format, in registration order."""
    if not _loaded:
        _loaded.append(True)
        for mod in IMAGE_MODULES:
            importlib.import_module(mod)
    return list(_IMAGES.values())


def image_extensions() -> tuple[str, ...]:
    """Every image extension (without the dot) in the order a texture name is tried with:
    the registered formats', then those :data:`IMAGE_MODULES` declare (nothing imported)."""
    return tuple(dict.fromkeys([e for f in _IMAGES.values() for e in f.extensions]
                               + [e for exts in IMAGE_MODULES.values() for e in exts]))


def _sniffs(f: ImageFormat, data: bytes) -> bool:
    try:
        return f.sniff is not None and bool(f.sniff(data))
    except Exception:          # a sniff never turns bad bytes into a crash
        return False


def carried_mime(data: bytes) -> str | None:
    """The MIME type of ``data`` when glTF carries it as it is (PNG, JPEG), else None (the
    formats glTF carries are registered here, not by :data:`IMAGE_MODULES`: none imported)."""
    for f in list(_IMAGES.values()):
        if f.mime is not None and _sniffs(f, data):
            return f.mime
    return None


def own_decoder(data: bytes) -> Callable[[bytes], Any] | None:
    """The decoder of our own of the format whose ``sniff`` recognises ``data``, if any."""
    for f in image_formats():
        if f.open is not None and _sniffs(f, data):
            return f.open
    return None


def pillow_formats() -> tuple[str, ...]:
    """The Pillow plugins that may decode a texture, in the order they are tried."""
    return tuple(dict.fromkeys(p for f in image_formats() for p in f.pillow))


_PNG = b"\x89PNG\r\n\x1a\n"

register(ImageFormat("png", ("png",), sniff=lambda h: h[:8] == _PNG, mime="image/png",
                     pillow=("PNG",)))
register(ImageFormat("jpeg", ("jpg", "jpeg"), sniff=lambda h: h[:3] == b"\xff\xd8\xff",
                     mime="image/jpeg", pillow=("JPEG",)))
# TGA has no signature: Pillow tries it before BMP, whose header it refuses ("BM")
register(ImageFormat("tga", ("tga",), pillow=("TGA",)))
register(ImageFormat("bmp", ("bmp",), pillow=("BMP", "DIB")))
register(ImageFormat("dds", ("dds",), pillow=("DDS",)))
register(ImageFormat("pcx", ("pcx",), pillow=("PCX",)))
# plain raster formats Pillow reads, taken when a file of one of the extensions above holds one
register(ImageFormat("raster", (), pillow=("GIF", "TIFF", "WEBP", "PPM", "SGI", "ICO")))
