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
from ...registry import register
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
from .manifest import ANM, FZX, OBJ, OVERGROWTH_XML, PHXBN, SAV

__all__ = ["anm", "fzx", "fzx_scene_read", "fzx_scene_write", "obj", "ogxml",
           "ogxml_scene_read", "phxbn", "sav", "scene", "scene_write", "samples"]


def __getattr__(name: str):
    if name == "samples":
        import importlib
        return importlib.import_module(f"{__name__}.samples")
    raise AttributeError(name)


register(FZX, doc_types=(fzx.FzxFile,), sniff=fzx.sniff, read=fzx.read, write=fzx.write,
         to_scene=fzx_scene_read.fzx_to_scene, from_scene=fzx_scene_write.scene_to_fzx,
         info=fzx.info, check=fzx.check)
register(OBJ, doc_types=(obj.ObjFile,), read=obj.read, write=obj.write,
         to_scene=scene.obj_to_scene, from_scene=scene_write.scene_to_obj, info=obj.info)
register(OVERGROWTH_XML, doc_types=(ogxml.OgXmlFile,), sniff=ogxml.sniff, read=ogxml.read,
         write=ogxml.write, to_scene=ogxml_scene_read.ogxml_to_scene,
         info=ogxml_scene_read.info, check=ogxml_scene_read.check)
register(SAV, doc_types=(sav.SavFile,), sniff=sav.sniff, read=sav.read, write=sav.write,
         info=sav.info, check=sav.check)
register(ANM, doc_types=(anm.AnmFile,), sniff=anm.sniff, read=anm.read, write=anm.write,
         to_scene=scene.anm_to_scene, from_scene=scene_write.scene_to_anm, info=anm.info,
         check=anm.check)
register(PHXBN, doc_types=(phxbn.PhxbnFile,), sniff=phxbn.sniff, read=phxbn.read,
         write=phxbn.write, to_scene=scene.phxbn_to_scene, from_scene=scene_write.scene_to_phxbn,
         info=phxbn.info, check=phxbn.check)


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
