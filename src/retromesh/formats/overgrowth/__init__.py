"""Wolfire family: Lugaru ``.solid`` models, skeletons and animations (files without an
extension in ``Data/Skeleton``/``Data/Animations``: :mod:`.lugaru_skeleton`,
:mod:`.lugaru_animation`; the character as the game builds it: :mod:`.lugaru_scene_read`,
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

Every format of the family is registered here, in one place (the modules it names know nothing
of the registry); :mod:`.scene` combines skeleton, animations and mesh into one Scene;
:mod:`.samples` builds small valid files with our own writers.

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
        # object XML (model, colour map), rig XML (.phxbn, mass), animations (:mod:`.ogxml_scene_read`)
    retromesh dump --json save.sav > save.json; retromesh build save.json -o save.sav

Options (``--set key=value``): ``fps`` (resampling rate, default 30), ``root_motion``
(false: leave the centred root motion out), ``center`` (the OBJ's old centre), ``kind``
(.solid: the model kind whose load-time turn is applied, see :mod:`.solid_kinds`), ``character``
(.solid: force the character conventions on or off), ``body_scale`` (.fzx body scale).
"""
from __future__ import annotations

from ...checking import companion_rule
from ...findings import Finding, error
from ...registry import Format, register
from . import (
    anm,
    fzx,
    fzx_scene_read,
    fzx_scene_write,
    lugaru_animation,
    lugaru_character,
    lugaru_scene_read,
    lugaru_scene_write,
    lugaru_skeleton,
    obj,
    ogxml,
    ogxml_scene_read,
    phxbn,
    sav,
    scene,
    solid,
)

__all__ = ["anm", "fzx", "fzx_scene_read", "fzx_scene_write", "lugaru_animation",
           "lugaru_character", "lugaru_scene_read", "lugaru_scene_write", "lugaru_skeleton", "obj",
           "ogxml", "ogxml_scene_read", "phxbn", "sav", "scene", "solid", "samples"]


def __getattr__(name: str):
    if name == "samples":
        import importlib
        return importlib.import_module(f"{__name__}.samples")
    raise AttributeError(name)


register(Format(
    name="fzx", family="Wolfire", description="Overgrowth ragdoll volumes (.fzx)",
    extensions=("fzx",), doc_types=(fzx.FzxFile,), sniff=fzx.sniff, magic_certain=True,
    read=fzx.read, write=fzx.write, to_scene=fzx_scene_read.fzx_to_scene,
    from_scene=fzx_scene_write.scene_to_fzx,
    endian="<", scene_options=("source", "center", "mesh", "body_scale"), info=fzx.info,
    check=fzx.check))

register(Format(
    name="solid", family="Wolfire", description="Lugaru model (.solid, big-endian)",
    extensions=("solid",), doc_types=(solid.SolidFile,), sniff=solid.sniff, magic_certain=False,
    read=solid.read, write=solid.write, to_scene=lugaru_scene_read.solid_to_scene,
    from_scene=lugaru_scene_write.scene_to_solid,
    endian=">", scene_options=("source", "character", "kind"), info=solid.info,
    check=solid.check))

# the options a Lugaru character is read with (skeleton, or an animation with its skeleton)
_LUGARU_OPTIONS = ("source", "animations", "mesh", "skin", "low", "clothes", "proportions",
                   "fps", "between")

register(Format(
    name="lugaru-skeleton", family="Wolfire",
    description="Lugaru skeleton (Data/Skeleton/*, no extension, big-endian)",
    extensions=(), folders=("skeleton",),
    doc_types=(lugaru_skeleton.SkeletonFile, lugaru_character.LugaruCharacter),
    sniff=lugaru_skeleton.sniff, magic_certain=False, read=lugaru_skeleton.read,
    write=lugaru_skeleton.write, outputs=lugaru_character.outputs,
    to_scene=lugaru_scene_read.skeleton_to_scene,
    from_scene=lugaru_scene_write.scene_to_character, endian=">",
    scene_options=_LUGARU_OPTIONS, companions=("solid",), info=lugaru_skeleton.info,
    check=lugaru_character.check))

register(Format(
    name="lugaru-animation", family="Wolfire",
    description="Lugaru animation (Data/Animations/*, no extension, big-endian)",
    extensions=(), folders=("animations",), doc_types=(lugaru_animation.AnimationFile,),
    sniff=lugaru_animation.sniff, magic_certain=False, read=lugaru_animation.read,
    write=lugaru_animation.write, to_scene=lugaru_scene_read.animation_to_scene, endian=">",
    scene_options=("skeleton", *_LUGARU_OPTIONS), companions=("solid",),
    info=lugaru_animation.info, check=lugaru_animation.check))

register(Format(
    name="obj", family="Wolfire", description="Wavefront OBJ (Overgrowth character meshes)",
    extensions=("obj",), doc_types=(obj.ObjFile,), sniff=None, magic_certain=False,
    read=obj.read, write=obj.write, to_scene=scene.obj_to_scene, from_scene=scene.scene_to_obj,
    endian="<", scene_options=("source",), info=obj.info))

register(Format(
    name="overgrowth-xml", family="Wolfire",
    description="Overgrowth character / rig / object XML descriptor (follows the files it names)",
    extensions=("xml",), doc_types=(ogxml.OgXmlFile,), sniff=ogxml.sniff, magic_certain=False,
    read=ogxml.read, write=ogxml.write, to_scene=ogxml_scene_read.ogxml_to_scene, endian="<",
    scene_options=("source", "animations", "roles", "data_path", "fps", "root_motion",
                   "strict"),
    companions=("phxbn", "obj", "anm"), info=ogxml_scene_read.info, check=ogxml_scene_read.check))

register(Format(
    name="sav", family="Wolfire", description="Overgrowth save data (.sav, version 3)",
    extensions=("sav",), doc_types=(sav.SavFile,), sniff=sav.sniff, magic_certain=True,
    read=sav.read, write=sav.write, endian="<", info=sav.info, check=sav.check))

register(Format(
    name="anm", family="Wolfire", description="Overgrowth animation (.anm, versions 0-11)",
    extensions=("anm",), doc_types=(anm.AnmFile,), sniff=anm.sniff, magic_certain=False,
    read=anm.read, write=anm.write, to_scene=scene.anm_to_scene, from_scene=scene.scene_to_anm,
    endian="<",
    scene_options=("source", "skeleton", "mesh", "animations", "fps", "root_motion", "center"),
    companions=("phxbn", "obj"), info=anm.info, check=anm.check))

register(Format(
    name="phxbn", family="Wolfire", description="Overgrowth skeleton (.phxbn, versions 5-11)",
    extensions=("phxbn",), doc_types=(phxbn.PhxbnFile,), sniff=phxbn.sniff, magic_certain=False,
    read=phxbn.read, write=phxbn.write, to_scene=scene.phxbn_to_scene,
    from_scene=scene.scene_to_phxbn, endian="<",
    scene_options=("source", "mesh", "animations", "fps", "root_motion", "center"),
    companions=("anm", "obj"), info=phxbn.info, check=phxbn.check))


@companion_rule("phxbn", "obj")
def _phxbn_with_obj(doc: phxbn.PhxbnFile, mesh: obj.ObjFile) -> list[Finding]:
    """The engine takes the skinned vertex count from the OBJ (3 per triangle corner): it
    refuses a version 11 skeleton that stores another count, and reads an older one's weights
    by the OBJ's count (whatever follows is misread)."""
    if doc.control is None:
        return []
    corners, weights = 3 * mesh.mesh().triangle_count, len(doc.control.weights)
    if corners == weights:
        return []
    said = phxbn.VERTEX_COUNTS if doc.version >= 11 else (
        "The engine reads as many vertex weights as the OBJ has triangle corners and misreads "
        "the rest of the skeleton.")
    return [error("phxbn.vertex_count", f"{said} The .phxbn weights {weights} vertices, the "
                  f"OBJ has {corners} triangle corners")]
