"""Overgrowth family (Wolfire Games' Phoenix engine): ``.anm`` animations, ``.phxbn``
skeletons, ``.fzx`` ragdoll volumes and ``.sav`` save files, a small OBJ reader for the
character meshes a ``.phxbn`` skins, and the character / rig / object XML descriptors that name
them (:mod:`.ogxml`, :mod:`.ogchain`, :mod:`.ogxml_scene_read`, docs/overgrowth-characters.md).

Orientation and units after conversion (glTF: right-handed, +Y up): Overgrowth is OpenGL
right-handed +Y up, so skeletons, animations and OBJ meshes keep their axes (the OBJ centred as
the engine centres it); ``.fzx`` volumes are stored Blender Z-up and turned ``(x, z, -y)``.
Overgrowth units are about metres; ``scale=`` (any format) scales the scene.

Every format of the family is registered here, in one place (the modules it names know nothing
of the registry); :mod:`.scene` combines skeleton, animations and mesh into one Scene and
:mod:`.scene_write` takes it back; :mod:`.samples` builds small valid files with our own writers.

Typical use::

    retromesh convert rabbit.phxbn -o skeleton.glb                # joints only
    retromesh convert run.anm --skeleton rabbit.phxbn -o run.glb  # animation on the joints
    retromesh convert rabbit.phxbn --mesh rabbit.obj \
        --animation run.anm --animation walk.anm -o rabbit.glb    # skinned, two animations
    retromesh convert rabbit.glb -o out/rabbit.phxbn              # + rabbit.obj, rabbit_*.anm
    retromesh convert ragdoll.fzx --mesh rabbit.obj -o volumes.glb
    retromesh convert Data/Characters/rabbit.xml -o rabbit.glb   # the descriptor chain:
        # object XML (model, colour map), rig XML (.phxbn, mass), animations (:mod:`.ogxml_scene_read`)
    retromesh dump save.sav > save.json; retromesh build save.json -o save.sav

Options (``--set key=value``): ``fps`` (resampling rate, default 30), ``root_motion``
(false: leave the centred root motion out), ``center`` (the OBJ's old centre), ``body_scale``
(.fzx body scale).
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
    obj,
    ogxml,
    ogxml_scene_read,
    phxbn,
    sav,
    scene,
    scene_write,
)

__all__ = ["anm", "fzx", "fzx_scene_read", "fzx_scene_write", "obj", "ogxml",
           "ogxml_scene_read", "phxbn", "sav", "scene", "scene_write", "samples"]


def __getattr__(name: str):
    if name == "samples":
        import importlib
        return importlib.import_module(f"{__name__}.samples")
    raise AttributeError(name)


register(Format(
    name="fzx", family="Overgrowth", description="Overgrowth ragdoll volumes (.fzx)",
    extensions=("fzx",), doc_types=(fzx.FzxFile,), sniff=fzx.sniff, magic_certain=True,
    read=fzx.read, write=fzx.write, to_scene=fzx_scene_read.fzx_to_scene,
    from_scene=fzx_scene_write.scene_to_fzx,
    endian="<", scene_options=("source", "center", "mesh", "body_scale"), info=fzx.info,
    check=fzx.check))

register(Format(
    name="obj", family="Overgrowth", description="Wavefront OBJ (Overgrowth character meshes)",
    extensions=("obj",), doc_types=(obj.ObjFile,), sniff=None, magic_certain=False,
    read=obj.read, write=obj.write, to_scene=scene.obj_to_scene, from_scene=scene_write.scene_to_obj,
    endian="<", scene_options=("source",), info=obj.info))

register(Format(
    name="overgrowth-xml", family="Overgrowth",
    description="Overgrowth character / rig / object XML descriptor (follows the files it names)",
    extensions=("xml",), doc_types=(ogxml.OgXmlFile,), sniff=ogxml.sniff, magic_certain=False,
    read=ogxml.read, write=ogxml.write, to_scene=ogxml_scene_read.ogxml_to_scene, endian="<",
    scene_options=("source", "animations", "roles", "data_path", "fps", "root_motion",
                   "strict"),
    companions=("phxbn", "obj", "anm"), info=ogxml_scene_read.info, check=ogxml_scene_read.check))

register(Format(
    name="sav", family="Overgrowth", description="Overgrowth save data (.sav, version 3)",
    extensions=("sav",), doc_types=(sav.SavFile,), sniff=sav.sniff, magic_certain=True,
    read=sav.read, write=sav.write, endian="<", info=sav.info, check=sav.check))

register(Format(
    name="anm", family="Overgrowth", description="Overgrowth animation (.anm, versions 0-11)",
    extensions=("anm",), doc_types=(anm.AnmFile,), sniff=anm.sniff, magic_certain=False,
    read=anm.read, write=anm.write, to_scene=scene.anm_to_scene, from_scene=scene_write.scene_to_anm,
    endian="<",
    scene_options=("source", "skeleton", "mesh", "animations", "fps", "root_motion", "center"),
    companions=("phxbn", "obj"), info=anm.info, check=anm.check))

register(Format(
    name="phxbn", family="Overgrowth", description="Overgrowth skeleton (.phxbn, versions 5-11)",
    extensions=("phxbn",), doc_types=(phxbn.PhxbnFile,), sniff=phxbn.sniff, magic_certain=False,
    read=phxbn.read, write=phxbn.write, to_scene=scene.phxbn_to_scene,
    from_scene=scene_write.scene_to_phxbn, endian="<",
    scene_options=("source", "mesh", "animations", "fps", "root_motion", "center"),
    companions=("anm", "obj"), info=phxbn.info, check=phxbn.check))


@companion_rule("phxbn", "obj")
def _phxbn_with_obj(doc: phxbn.PhxbnFile, mesh: obj.ObjFile) -> list[Finding]:
    """The skeleton's vertex weights against the OBJ beside it
    (:func:`.phxbn.vertex_count_problem`)."""
    if doc.control is None:
        return []
    corners = 3 * mesh.mesh().triangle_count
    said = phxbn.vertex_count_problem(doc, corners)
    if said is None:
        return []
    return [error("phxbn.vertex_count", f"{said} The .phxbn weights {len(doc.control.weights)} "
                  f"vertices, the OBJ has {corners} triangle corners")]
