"""What the LithTech family is, declared once: its format's name, extensions, options and how
its files group (``registry.Format``, no code). The registry reads this module without
importing the family; ``__init__.py`` registers each declaration with its code."""
from __future__ import annotations

from ...registry import Format

ABC = Format(
    name="abc", family="LithTech", description="LithTech model (NOLF v9-v13, Shogo/Blood 2 v6)",
    extensions=("abc",), magic_certain=True, endian="<",
    scene_options=("source", "lods", "flip_mat", "fix_anim_keyframes", "morph"))

FORMATS = (ABC,)
