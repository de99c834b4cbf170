"""Image files as documents of their own, belonging to no game family: PNG (:mod:`.png`), the
file a game's texture converts to and from (``retromesh convert skin.dtx -o skin.png``; the
texture family registers those converters, as LithTech does for ``.dtx``).

Beside :mod:`retromesh.imageformats` (the table of formats a model's textures may be in, and
how each is decoded for glTF): this package is the ``png`` *format* of ``retromesh formats``,
``info``, ``dump`` and ``convert``; that table is what the texture finder reads.
"""
from __future__ import annotations

from ..registry import register
from . import png
from .manifest import PNG

__all__ = ["png"]

register(PNG, doc_types=(png.PngImage,), sniff=png.sniff, read=png.read, write=png.write,
         info=png.info)
