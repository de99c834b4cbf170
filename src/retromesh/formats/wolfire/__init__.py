"""Wolfire family: Lugaru ``.solid`` models, skeletons and animations (files without an
extension in ``Data/Skeleton``/``Data/Animations``: :mod:`.lugaru_skeleton`,
:mod:`.lugaru_animation`; the character as the game builds it: :mod:`.lugaru_character`,
docs/lugaru.md); Overgrowth ``.anm`` animations, ``.phxbn``
skeletons, ``.fzx`` ragdoll volumes and ``.sav`` save files (plus a small OBJ reader for the
character meshes a ``.phxbn`` skins).

Orientation and units after conversion (glTF: right-handed, +Y up): Overgrowth is OpenGL
right-handed +Y up, so skeletons, animations and OBJ meshes keep their axes (the OBJ centred as
the engine centres it); ``.fzx`` volumes are stored Blender Z-up and turned ``(x, z, -y)``.
Lugaru ``.solid`` models get the turn the game gives them at load time, by model kind
(:mod:`.solid_kinds`: objects such as TreeTrunk, Leaves, Bush, Wall, Chimney ``Rotate(90, 1, 1)``,
characters ``Rotate(180, 0, 0)``, weapons their own), on the mesh node, so they stand +Y up as
in the game. Units stay the game's; ``scale=`` (any format) scales the scene: for metres about
0.008 for Lugaru characters (model scale 0.04 x person scale 0.2; the engine's gravity is 10
units/s^2) and 0.3 x the level scale for Lugaru objects; Overgrowth units are about metres.

Each module registers its format on import; :mod:`.scene` combines skeleton, animations and
mesh into one Scene; :mod:`.samples` builds small valid files with our own writers.

Typical use::

    retromesh convert Rabbit.solid -o rabbit.glb                  # Lugaru model
    retromesh convert Data/Skeleton/BasicFigure -a Data/Animations/Idle -o rabbit.glb
    retromesh convert rabbit.glb -o Data/Skeleton/BasicFigure     # + Data/Animations/Idle
    retromesh convert rabbit.phxbn -o skeleton.glb                # joints only
    retromesh convert run.anm --skeleton rabbit.phxbn -o run.glb  # animation on the joints
    retromesh convert rabbit.phxbn --mesh rabbit.obj \
        --animation run.anm --animation walk.anm -o rabbit.glb    # skinned, two animations
    retromesh convert rabbit.glb -o out/rabbit.phxbn              # + rabbit.obj, rabbit_*.anm
    retromesh convert ragdoll.fzx --mesh rabbit.obj -o volumes.glb
    retromesh convert Data/Characters/rabbit.xml -o rabbit.glb   # the descriptor chain:
        # object XML (model, colour map), rig XML (.phxbn, mass), animations (:mod:`.ogxml_scene`)
    retromesh dump --json save.sav > save.json; retromesh build save.json -o save.sav

Options (``--set key=value``): ``fps`` (resampling rate, default 30), ``root_motion``
(false: leave the centred root motion out), ``center`` (the OBJ's old centre), ``kind``
(.solid: the model kind whose load-time turn is applied, see :mod:`.solid_kinds`), ``character``
(.solid: force the character conventions on or off), ``body_scale`` (.fzx body scale).
"""
from __future__ import annotations

from . import (
    anm,
    fzx,
    lugaru_animation,
    lugaru_character,
    lugaru_skeleton,
    obj,
    ogxml_scene,
    phxbn,
    sav,
    scene,
    solid,
)

__all__ = ["anm", "fzx", "lugaru_animation", "lugaru_character", "lugaru_skeleton", "obj",
           "ogxml_scene", "phxbn", "sav", "scene", "solid", "samples"]


def __getattr__(name: str):
    if name == "samples":
        import importlib
        return importlib.import_module(f"{__name__}.samples")
    raise AttributeError(name)
