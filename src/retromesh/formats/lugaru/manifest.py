"""What the Lugaru family is, declared once: each format's name, extensions (the skeletons and
animations have none: the folders they are kept in name them), options, the files read with it
and how its files group (``registry.Format``, no code). The registry reads this module without
importing the family; ``__init__.py`` registers each declaration with its code."""
from __future__ import annotations

from ...registry import Companion, Format

# the options a Lugaru character is read with (skeleton, or an animation with its skeleton)
_CHARACTER_OPTIONS = ("source", "animations", "mesh", "skin", "low", "clothes", "proportions",
                      "fps", "between")
# a character's models (Data/Models/*.solid): the reader finds them by the game's names
_MODELS = Companion("", "solid", by_reader=True)

SOLID = Format(
    name="solid", family="Lugaru", description="Lugaru model (.solid, big-endian)",
    extensions=("solid",), magic_certain=False, endian=">",
    scene_options=("source", "character", "kind"))

SKELETON = Format(
    name="lugaru-skeleton", family="Lugaru",
    description="Lugaru skeleton (Data/Skeleton/*, no extension, big-endian)",
    extensions=(), folders=("skeleton",), magic_certain=False, endian=">",
    scene_options=_CHARACTER_OPTIONS, companions=(_MODELS,))

ANIMATION = Format(
    name="lugaru-animation", family="Lugaru",
    description="Lugaru animation (Data/Animations/*, no extension, big-endian)",
    extensions=(), folders=("animations",), magic_certain=False, endian=">",
    scene_options=("skeleton", *_CHARACTER_OPTIONS), companions=(_MODELS,))

FORMATS = (SOLID, SKELETON, ANIMATION)
