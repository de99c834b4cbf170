"""A small Overgrowth character in the game's own folder layout, built with our own writers
(the stick figure of :mod:`.samples`; no game data)::

    <root>/Data/Characters/stick.xml              character: appearance + animations
    <root>/Data/Objects/Characters/stick.xml      object: Model, ColorMap, NormalMap, ShaderName
    <root>/Data/Skeletons/r_stick.xml             rig: bone_path, model_path, mass_path
    <root>/Data/Skeletons/r_stick.phxbn           skeleton (+ r_stick_mass.xml / .phxbn)
    <root>/Data/Models/Characters/stick.obj       (+ stick_wink.obj, stick_fist0/1.obj morphs)
    <root>/Data/Textures/Characters/stick_c.tga   colour map (TGA, as the game ships them)
    <root>/Data/Textures/Characters/stick_n.tga   normal map
    <root>/Data/Animations/r_wave.anm, r_walk.anm, r_movement.xml (a synced group of both)
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from ...arrays import distinct
from .anm import write as write_anm
from .obj import write_obj
from .ogxml_texts import CHARACTER_XML, MASS_XML, OBJECT_XML, RIG_XML
from .phxbn import write as write_phxbn
from .samples import (
    OBJ_OFFSET,
    box_mesh,
    centred_points,
    stick_obj,
    stick_skeleton,
    walk_animation,
    wave_animation,
)

__all__ = ["write_character", "CHARACTER_XML", "OBJECT_XML", "RIG_XML"]


GROUP_XML = """<?xml version="1.0" ?>
<SyncedAnimationGroup>
    <CoordLabel>speed</CoordLabel>
    <Animations>
        <Animation path="Data/Animations/r_walk.anm" coord="0.0"/>
        <Animation path="Data/Animations/r_wave.anm" coord="1.0"/>
    </Animations>
</SyncedAnimationGroup>
"""


def _tga(color: tuple[int, int, int]) -> bytes:
    from PIL import Image
    im = Image.new("RGB", (8, 8), color)
    im.putpixel((0, 0), (255, 255, 255))
    out = io.BytesIO()
    im.save(out, format="TGA")
    return out.getvalue()


def _morph_obj(bone: int, shift: float) -> bytes:
    """The stick mesh with the box of ``bone`` moved along +Y (same corners, same order)."""
    pos, tris, owner = box_mesh(centred_points())
    moved = pos.copy()
    moved[distinct(tris[owner == bone])] += [0.0, shift, 0.0]
    uv = np.c_[(pos[:, 0] - pos[:, 0].min()) / max(np.ptp(pos[:, 0]), 1e-9),
               (pos[:, 1] - pos[:, 1].min()) / max(np.ptp(pos[:, 1]), 1e-9)]
    return write_obj(moved + OBJ_OFFSET, tris, uv, tris, name="stick")


def write_character(root: str | Path) -> Path:
    """Write the stick character below ``root``; returns the character XML's path."""
    d = Path(root) / "Data"
    heavy = stick_skeleton()
    heavy.bone_masses = np.full(len(heavy.bone_ends), 3.0, "<f4")
    files = {
        "Characters/stick.xml": CHARACTER_XML.encode(),
        "Objects/Characters/stick.xml": OBJECT_XML.encode(),
        "Skeletons/r_stick.xml": RIG_XML.encode(),
        "Skeletons/r_stick_mass.xml": MASS_XML.encode(),
        "Skeletons/r_stick.phxbn": write_phxbn(stick_skeleton()),
        "Skeletons/r_stick_mass.phxbn": write_phxbn(heavy),
        "Models/Characters/stick.obj": stick_obj(),
        "Models/Characters/stick_wink.obj": _morph_obj(1, 0.05),
        "Models/Characters/stick_fist0.obj": _morph_obj(2, 0.02),
        "Models/Characters/stick_fist1.obj": _morph_obj(2, 0.04),
        "Textures/Characters/stick_c.tga": _tga((200, 120, 40)),
        "Textures/Characters/stick_n.tga": _tga((128, 128, 255)),
        "Animations/r_wave.anm": write_anm(wave_animation()),
        "Animations/r_walk.anm": write_anm(walk_animation()),
        "Animations/r_movement.xml": GROUP_XML.encode(),
    }
    for rel, data in files.items():
        path = d / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return d / "Characters/stick.xml"
