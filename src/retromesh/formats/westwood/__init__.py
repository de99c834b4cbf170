"""Westwood family: Tiberian Sun / Red Alert 2 voxel models (``.vxl``) with their
hierarchical animations (``.hva``), and a MagicaVoxel ``.vox`` bridge so that voxel editors
(MagicaVoxel, Goxel, vengi) can edit them.

Orientation and units after conversion: the VXL grid is x forward, y left, z up (settled on
the corpus, see :mod:`.scene`); it becomes glTF +Y up with the front on +Z and the left on +X
(``(x, y, z) -> (y, z, x)``, a rotation, so windings stay). Units stay voxels (no metre
definition exists for TS/RA2 voxels); the generic ``scale=`` load option scales the scene.

Modules: :mod:`.vxl` and :mod:`.hva` (lossless native layers), :mod:`.voxels` (span codec,
normal tables), :mod:`.meshing` (visible faces, greedy meshing), :mod:`.scene` (to_scene),
:mod:`.vox` (MagicaVoxel files and the vxl <-> vox converters), :mod:`.voxelize`
(Scene -> .vxl by surface voxelisation), :mod:`.keep` (the .vxl/.hva kept in node extras so
that .vxl -> .glb -> .vxl gives the files back, byte for byte when unedited), :mod:`.vox_keep`
(the same for .vox), :mod:`.samples` (small files
made by our writers). An ``aos-vxl`` entry recognises Ace of Spades / Voxlap ``.vxl`` maps and
says so instead of misreading them.
"""
from __future__ import annotations

from ...registry import Format, register, register_converter
from . import hva, vox, vox_scene, vox_scene_write, vxl
from .convert import vox_to_vxl, vxl_to_vox
from .scene import to_scene
from .scene_write import from_scene

register(Format(
    name="vxl", family="Westwood",
    description="Westwood Tiberian Sun / Red Alert 2 voxel model",
    extensions=("vxl",), doc_types=(vxl.VxlFile,), sniff=vxl.sniff, magic_certain=True,
    read=vxl.read, write=vxl.write, to_scene=to_scene, from_scene=from_scene, endian="<",
    scene_options=("source", "hva", "fps", "greedy", "normals", "palette"),
    companions=("hva",), info=vxl.info, check=vxl.check))

register(Format(
    name="hva", family="Westwood",
    description="Westwood hierarchical voxel animation (limb matrices per frame)",
    extensions=("hva",), doc_types=(hva.HvaFile,), read=hva.read, write=hva.write,
    endian="<", info=hva.info, check=hva.check))

register(Format(
    name="aos-vxl", family="Westwood",
    description="Ace of Spades / Voxlap map (recognised, not read)",
    extensions=("vxl",), doc_types=(vxl.AosMap,), sniff=vxl.sniff_aos, read=vxl.read_aos,
    endian="<"))

register(Format(
    name="vox", family="Westwood",
    description="MagicaVoxel voxel models (bridge for .vxl editing)",
    extensions=("vox",), doc_types=(vox.VoxFile,), sniff=vox.sniff, magic_certain=True,
    read=vox.read, write=vox.write, to_scene=vox_scene.to_scene,
    from_scene=vox_scene_write.from_scene, endian="<", scene_options=("source", "greedy"),
    info=vox.info))

register_converter("vxl", "vox", vxl_to_vox)
register_converter("vox", "vxl", vox_to_vxl)

__all__ = ["hva", "vox", "vxl"]
