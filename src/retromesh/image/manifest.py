"""What the image formats retromesh reads as documents of their own are, declared once
(``registry.Format``, no code): read by the registry without importing them;
``__init__.py`` registers them with their code. They belong to no game: a game's texture format
(LithTech's ``.dtx``) registers its conversions to and from them in its own family."""
from __future__ import annotations

from ..registry import Format

#: a texture, not a model: no scene; Blender opens PNGs itself (the importer offers none)
PNG = Format(name="png", family="Image",
             description="PNG image (game textures convert to and from it: .dtx)",
             extensions=("png",), magic_certain=True, endian=">", blender=())

FORMATS = (PNG,)
