"""What the Westwood family is, declared once: each format's name, extensions, options, the
files read with it (roles and name patterns) and how its files group (``registry.Format``, no
code). The registry reads this module without importing the family; ``__init__.py``
registers each declaration with its code."""
from __future__ import annotations

from ...registry import Companion, Format

VXL = Format(
    name="vxl", family="Westwood", description="Westwood Tiberian Sun / Red Alert 2 voxel model",
    extensions=("vxl",), magic_certain=True, endian="<",
    scene_options=("source", "hva", "fps", "greedy", "normals", "palette"),
    companions=(Companion("hva", "hva", ("{stem}.hva",), by_reader=True),))

HVA = Format(
    name="hva", family="Westwood",
    description="Westwood hierarchical voxel animation (limb matrices per frame)",
    extensions=("hva",), endian="<", grouping="part")

AOS_VXL = Format(
    name="aos-vxl", family="Westwood", description="Ace of Spades / Voxlap map (recognised, not read)",
    extensions=("vxl",), endian="<")

VOX = Format(
    name="vox", family="Westwood", description="MagicaVoxel voxel models (bridge for .vxl editing)",
    extensions=("vox",), magic_certain=True, endian="<", scene_options=("source", "greedy"),
    yields_name=True)                  # tank.vox beside tank.vxl: an exchange copy

FORMATS = (VXL, HVA, AOS_VXL, VOX)
