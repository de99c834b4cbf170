"""What the Blitz3D family is, declared once: its format's name, extensions, options and how
its files group (``registry.Format``, no code). The registry reads this module without
importing the family; ``__init__.py`` registers each declaration with its code."""
from __future__ import annotations

from ...registry import Format

B3D = Format(
    name="b3d", family="Blitz3D", description="Blitz3D model/scene (Minetest/Luanti, Irrlicht)",
    extensions=("b3d",), magic_certain=True, scene_options=("source", "fps", "weights"))

FORMATS = (B3D,)
