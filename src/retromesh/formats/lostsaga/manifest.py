"""What the Lost Saga family is, declared once: each format's name, extensions, options, the
files read with it (roles and name patterns) and how its files group (``registry.Format``, no
code). The registry reads this module without importing the family; ``__init__.py``
registers each declaration with its code."""
from __future__ import annotations

from ...registry import Companion, Format

_ANIMATIONS = Companion("animations", "ani", ("{stem}.ani", "{stem}_*.ani"), many=True)

MSH = Format(
    name="msh", family="Lost Saga", description="Lost Saga mesh (io3DEngine .msh)",
    extensions=("msh", "cms"), magic_certain=True, endian="<",
    scene_options=("skeleton", "animations", "material"),
    companions=(Companion("skeleton", "skl", ("{stem}.skl",)), _ANIMATIONS,
                # <mesh>.txt beside it or in ../material/: the reader looks for it
                Companion("material", "lsmat", ("{stem}.txt",), by_reader=True)))

SKL = Format(
    name="skl", family="Lost Saga", description="Lost Saga skeleton (io3DEngine .skl)",
    extensions=("skl",), magic_certain=True, endian="<", scene_options=("animations", "mesh"),
    grouping="skeleton", blender=("import", "drop"),     # exported with its .msh
    companions=(Companion("mesh", "msh", ("{stem}.msh",), picked_only=True), _ANIMATIONS))

ANI = Format(
    name="ani", family="Lost Saga", description="Lost Saga animation (io3DEngine .ani)",
    extensions=("ani",), magic_certain=True, endian="<",
    scene_options=("skeleton", "mesh", "animations"), grouping="part",
    blender=("import", "drop"),                          # exported with its .msh
    companions=(Companion("skeleton", "skl"), Companion("mesh", "msh")))

CMS = Format(
    name="cms", family="Lost Saga", description="Lost Saga collision mesh (io3DEngine .cms)",
    extensions=("cms",), magic_certain=True, endian="<", blender=("import", "drop"))

LSMAT = Format(
    name="lsmat", family="Lost Saga",
    description="Lost Saga material script <mesh>.txt (no extension claimed: format='lsmat')",
    extensions=())

FORMATS = (MSH, SKL, ANI, CMS, LSMAT)
