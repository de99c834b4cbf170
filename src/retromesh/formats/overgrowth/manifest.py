"""What the Overgrowth family is, declared once: each format's name, extensions, options, the
files read with it (roles and name patterns) and how its files group (``registry.Format``, no
code). The registry reads this module without importing the family; ``__init__.py`` registers
each declaration with its code."""
from __future__ import annotations

from ...registry import Companion, Format

_ANIMATIONS = Companion("animations", "anm", ("{stem}.anm", "{stem}_*.anm"), many=True)

FZX = Format(
    name="fzx", family="Overgrowth", description="Overgrowth ragdoll volumes (.fzx)",
    extensions=("fzx",), magic_certain=True, endian="<",
    scene_options=("source", "center", "mesh", "body_scale"),
    grouping="side", yields_name=True,            # beside its character, named after it
    companions=(Companion("mesh", "obj"),))

OBJ = Format(
    name="obj", family="Overgrowth", description="Wavefront OBJ (Overgrowth character meshes)",
    extensions=("obj",), magic_certain=False, endian="<", scene_options=("source",),
    grouping="part", yields_name=True,
    blender=("import",))          # dropped and exported .obj files stay Blender's own

OVERGROWTH_XML = Format(
    name="overgrowth-xml", family="Overgrowth",
    description="Overgrowth character / rig / object XML descriptor (follows the files it names)",
    extensions=("xml",), magic_certain=False, endian="<",
    scene_options=("source", "animations", "roles", "data_path", "fps", "root_motion",
                   "strict"),
    grouping="descriptor", shared_extension=True,  # most .xml files are something else
    companions=(Companion("", "phxbn", by_reader=True), Companion("", "obj", by_reader=True),
                Companion("animations", "anm", many=True)))

SAV = Format(
    name="sav", family="Overgrowth", description="Overgrowth save data (.sav, version 3)",
    extensions=("sav",), magic_certain=True, endian="<")

ANM = Format(
    name="anm", family="Overgrowth", description="Overgrowth animation (.anm, versions 0-11)",
    extensions=("anm",), magic_certain=False, endian="<",
    scene_options=("source", "skeleton", "mesh", "animations", "fps", "root_motion", "center"),
    grouping="part", forwards=("animation",),
    companions=(Companion("skeleton", "phxbn"), Companion("mesh", "obj")))

PHXBN = Format(
    name="phxbn", family="Overgrowth", description="Overgrowth skeleton (.phxbn, versions 5-11)",
    extensions=("phxbn",), magic_certain=False, endian="<",
    scene_options=("source", "mesh", "animations", "fps", "root_motion", "center"),
    forwards=("write_mesh",),
    companions=(_ANIMATIONS, Companion("mesh", "obj", ("{stem}.obj",))))

FORMATS = (FZX, OBJ, OVERGROWTH_XML, SAV, ANM, PHXBN)
