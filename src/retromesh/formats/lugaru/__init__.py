"""Lugaru family (Wolfire Games, 2005; open-sourced as osslugaru): ``.solid`` models, and
skeletons and animations (files without an extension in ``Data/Skeleton``/``Data/Animations``:
:mod:`.skeleton`, :mod:`.animation`); the character as the game builds it from them
(:mod:`.scene`, :mod:`.character`, docs/lugaru.md).

Orientation and units after conversion (glTF: right-handed, +Y up): ``.solid`` models get the
turn the game gives them at load time, by model kind (:mod:`.solid_kinds`: objects such as
TreeTrunk, Leaves, Bush, Wall, Chimney ``Rotate(90, 1, 1)``, characters ``Rotate(180, 0, 0)``,
weapons their own), on the mesh node, so they stand +Y up as in the game. Units stay the
game's; ``scale=`` (any format) scales the scene: for metres about 0.008 for Lugaru characters
(model scale 0.04 x person scale 0.2; the engine's gravity is 10 units/s^2) and 0.3 x the level
scale for Lugaru objects.

Every format of the family is registered here, in one place (the modules it names know nothing
of the registry); :mod:`.scene` maps the files to one Scene and :mod:`.scene_write` takes it
back; :mod:`.samples` builds small valid files with our own writers.

Typical use::

    retromesh convert Rabbit.solid -o rabbit.glb                  # Lugaru model
    retromesh convert Data/Skeleton/BasicFigure -a Data/Animations/Idle -o rabbit.glb
    retromesh convert rabbit.glb -o Data/Skeleton/BasicFigure     # + Data/Animations/Idle

Options (``--set key=value``): ``kind`` (.solid: the model kind whose load-time turn is
applied, see :mod:`.solid_kinds`), ``character`` (.solid: force the character conventions on
or off), and for a character ``animations``, ``mesh``, ``skin``, ``low``, ``clothes``,
``proportions``, ``fps``, ``between`` (:mod:`.scene`).
"""
from __future__ import annotations

from ...registry import register
from . import animation, character, grouping, scene, scene_write, skeleton, solid
from .manifest import ANIMATION, SKELETON, SOLID

__all__ = ["animation", "character", "scene", "scene_write", "skeleton", "solid", "samples"]


def __getattr__(name: str):
    if name == "samples":
        import importlib
        return importlib.import_module(f"{__name__}.samples")
    raise AttributeError(name)


register(SOLID, doc_types=(solid.SolidFile,), sniff=solid.sniff, read=solid.read,
         write=solid.write, to_scene=scene.solid_to_scene, from_scene=scene_write.scene_to_solid,
         info=solid.info, check=solid.check)
register(SKELETON, doc_types=(skeleton.SkeletonFile, character.LugaruCharacter),
         sniff=skeleton.sniff, read=skeleton.read, write=skeleton.write,
         outputs=character.outputs, to_scene=scene.skeleton_to_scene,
         from_scene=scene_write.scene_to_character, info=skeleton.info, check=character.check,
         group_folder=grouping.group_folder, group_picked=grouping.group_picked)
register(ANIMATION, doc_types=(animation.AnimationFile,), sniff=animation.sniff,
         read=animation.read, write=animation.write, to_scene=scene.animation_to_scene,
         info=animation.info, check=animation.check)
