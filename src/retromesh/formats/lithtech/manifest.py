"""What the LithTech family is, declared once: its formats' names, extensions, options and how
its files group (``registry.Format``, no code). The registry reads this module without
importing the family; ``__init__.py`` registers each declaration with its code."""
from __future__ import annotations

from ...registry import Format

ABC = Format(
    name="abc", family="LithTech", description="LithTech model (NOLF v9-v13, Shogo/Blood 2 v6)",
    extensions=("abc",), magic_certain=True, endian="<",
    scene_options=("source", "lods", "flip_mat", "fix_anim_keyframes", "morph", "texture_path"))

#: textures: no scene of their own; they convert to and from PNG (``retromesh.image``) and
#: dress the models
DTX = Format(
    name="dtx", family="LithTech",
    description="LithTech texture (-5 NOLF/AvP2/NOLF2, -3 KISS, -2 Shogo/Blood 2)",
    extensions=("dtx",), endian="<")

LTA = Format(
    name="lta", family="LithTech",
    description="LithTech text model (ModelEdit LTA: LithTech 2.2, Talon, Jupiter)",
    extensions=("lta",), scene_options=("source", "lods"))

LTC = Format(
    name="ltc", family="LithTech", description="LithTech compressed text model (LTC: LZSS of LTA)",
    extensions=("ltc",), scene_options=("source", "lods"))


FORMATS = (ABC, DTX, LTA, LTC)
