"""Westwood family: Tiberian Sun / Red Alert 2 voxel models (``.vxl``) with their
hierarchical animations (``.hva``), and a MagicaVoxel ``.vox`` bridge so that voxel editors
(MagicaVoxel, Goxel, vengi) can edit them.

Orientation and units after conversion: the VXL grid is x forward, y left, z up (settled on
the corpus, see :mod:`.scene`); it becomes glTF +Y up with the front on +Z and the left on +X
(``(x, y, z) -> (y, z, x)``, a rotation, so windings stay). Units stay voxels (no metre
definition exists for TS/RA2 voxels); the generic ``scale=`` load option scales the scene.

Modules, by role (``formats/README.md`` states the shape): native layers :mod:`.vxl`,
:mod:`.hva`, :mod:`.vox` (lossless); the codec :mod:`.spans` + :mod:`.voxels` (span codec,
normal tables), :mod:`.meshing` (visible faces, greedy meshing), :mod:`.colour` (sRGB <->
linear); kept data :mod:`.scene_extras` (.vxl/.hva) and :mod:`.vox_scene_extras` (.vox), the records in node
extras that let ``.vxl -> .glb -> .vxl`` give the files back, byte for byte when unedited;
scene mappings :mod:`.scene` (.vxl + .hva) and :mod:`.vox_scene` (.vox); the voxeliser
:mod:`.voxelize`; writers :mod:`.scene_write` (.vxl + .hva) and :mod:`.vox_scene_write`
(.vox); the direct converters :mod:`.convert` (vxl <-> vox); :mod:`.samples` (small files
made by our writers). This module registers every format and converter of the family.
An ``aos-vxl`` entry recognises Ace of Spades / Voxlap ``.vxl`` maps and
says so instead of misreading them.
"""
from __future__ import annotations

from ...checking import companion_rule
from ...findings import Finding, warning
from ...registry import register, register_converter
from . import hva, vox, vox_scene, vox_scene_write, vxl
from .convert import vox_to_vxl, vxl_to_vox
from .manifest import AOS_VXL, HVA, VOX, VXL
from .scene import to_scene
from .scene_write import from_scene

register(VXL, doc_types=(vxl.VxlFile,), sniff=vxl.sniff, read=vxl.read, write=vxl.write,
         to_scene=to_scene, from_scene=from_scene, info=vxl.info, check=vxl.check)
register(HVA, doc_types=(hva.HvaFile,), read=hva.read, write=hva.write, info=hva.info,
         check=hva.check)
register(AOS_VXL, doc_types=(vxl.AosMap,), sniff=vxl.sniff_aos, read=vxl.read_aos)
register(VOX, doc_types=(vox.VoxFile,), sniff=vox.sniff, read=vox.read, write=vox.write,
         to_scene=vox_scene.to_scene, from_scene=vox_scene_write.from_scene, info=vox.info)

register_converter("vxl", "vox", vxl_to_vox)
register_converter("vox", "vxl", vox_to_vxl)

__all__ = ["hva", "vox", "vxl"]


@companion_rule("vxl", "hva")
def _vxl_with_hva(doc: vxl.VxlFile, anim: hva.HvaFile) -> list[Finding]:
    """OpenRA pairs limbs and HVA sections by order and refuses a pair that differ in count;
    vengi pairs them by name and leaves a limb without a section at its .vxl transform (a
    shipped Tiberian Sun jeep has a turret limb its .hva does not move): a warning."""
    limbs, sections = len(doc.limbs), len(anim.section_names)
    if limbs == sections:
        return []
    return [warning("vxl.hva_sections", f"the .vxl has {limbs} limbs, the .hva {sections} "
                    "sections: OpenRA refuses the pair (\"Voxel and hva limb counts don't "
                    "match\"), other loaders leave the limbs without a section still")]
