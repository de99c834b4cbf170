"""Blitz3D ``.b3d`` (Blitz3D, Irrlicht, Minetest/Luanti, assimp).

Layout (little-endian; every chunk is ``char tag[4]; int32 length`` followed by ``length``
bytes; a chunk's fixed data comes first, then child chunks until its end):

=======  ======================================================================  =============
chunk    fixed data                                                              children
=======  ======================================================================  =============
BB3D     int32 version                                                           TEXS BRUS NODE
TEXS     { cstring file; int32 flags, blend; float32 pos[2], scale[2], rotation }  —
BRUS     int32 n_texs; { cstring name; float32 rgba[4], shininess;                —
         int32 blend, fx; int32 texture_id[n_texs] }
NODE     cstring name; float32 position[3], scale[3], rotation[4] (w, x, y, z)   MESH|BONE KEYS* NODE* ANIM
MESH     int32 brush_id                                                          VRTS TRIS+
VRTS     int32 flags, tex_coord_sets, tex_coord_set_size;                         —
         { float32 xyz[3]; [normal[3] if flags&1]; [rgba[4] if flags&2];
         tex_coords[sets][size] }
TRIS     int32 brush_id; { int32 vertex_id[3] }                                   —
BONE     { int32 vertex_id; float32 weight }                                      —
KEYS     int32 flags; { int32 frame; [position[3] if flags&1]; [scale[3] if flags&2];
         [rotation[4] (w, x, y, z) if flags&4] }                                  —
ANIM     int32 flags, frames; float32 fps                                         —
=======  ======================================================================  =============

Native model: every chunk becomes a dataclass in file order (unknown chunks are kept as
:class:`RawChunk` where they stand; a few bytes too short to form a chunk at the end of a
parent are kept as ``tail``; bytes after the BB3D chunk as ``trailing``), so ``write(read(f))``
is byte-identical. Bulk data (vertices, triangles, weights, keys) are numpy record arrays.
Unknown chunks ride through glTF in extras and come back in place (:mod:`.rawchunks`).

Where we differ from the spec text, and why (the engines' loaders: Blitz3D's
``loader_b3d.cpp``, Irrlicht's ``CB3DMeshFileLoader.cpp``):

* The version is not checked (Blitz3D rejects > 1, Irrlicht ignores it); we write 1.
* ``tex_coord_set_size`` > 4 or ``tex_coord_sets`` > 8 are rejected as corrupt (Blitz's buffer is
  4 floats; the spec's maxima). A VRTS payload that is not a whole number of vertices is corrupt.
* Several TRIS per MESH and several KEYS per NODE are normal; keys of several KEYS chunks of one
  node are merged per channel on conversion. Several keys at one frame are a jump (h3dview
  ``ninja``): glTF gets them a millisecond apart (Blender's importer merges keys a ten-thousandth
  of a frame apart), and they come back as they were.
* BONE vertex ids refer to the most recent MESH before the BONE chunk in file order (Irrlicht's
  rule; in practice the mesh of the node that holds the ANIM).
* Orientation: the conversion to glTF is exactly the inverse of what Luanti's own
  glTF loader does (``irr/src/CGLTFMeshFileLoader.cpp``: positions and normals ``(x, y, -z)``,
  node matrices ``Z M Z`` with ``Z = diag(1, 1, -1)``, winding reversed), so a mob converted to
  glTF and loaded by Luanti stands, faces and moves as the ``.b3d`` did. Up stays +Y, +X stays
  +X, B3D's +Z (forward, into the screen, in Blitz3D/Irrlicht's left-handed axes) becomes glTF
  -Z; Blender's glTF importer then shows it facing +Y (its Y-up to Z-up turn). Quaternions are
  stored ``w, x, y, z`` and Irrlicht builds the NODE/KEYS matrix with ``getMatrix_transposed``
  (the conjugate rotation; Blitz3D does the same), so rotation ``(w, x, y, z) -> [x, y, -z, w]``.
  UVs are top-left based like glTF: no flip. See :mod:`.axes`.
* Key frames usually start at 1. glTF time = ``(frame - first frame of the ANIM) / fps``. When
  ANIM says 0 or less, or there is no ANIM, fps is 25: Irrlicht's default
  (``SkinnedMesh::FramesPerSecond(25.f)``, kept unless ANIM's fps > 0), so what Luanti plays;
  Blitz3D ignores the field (one frame per ``UpdateWorld``). From glTF the ANIM keeps fps 0.
  Keys beyond ``ANIM.frames`` are kept (the clip just gets longer; assimp fails validation
  there). Each ANIM chunk gives one animation covering the keys of its subtree (assimp drops
  them all when there are several).
* Skinning: the mesh node is joint 0 and every node with a BONE chunk is a joint (a BONE with no
  weights too); per vertex the 4 largest weights are kept and normalised; vertices without
  weight follow the mesh node. The bind pose is the NODE rest transform (not the first key).
  BONE weights of 0.0 follow Blitz3D by default (h3dview ``ninja``, ``hog``, ``human`` have only
  zeros: Blitz3D plays them, Irrlicht and Blender leave them frozen); ``weights="raw"``
  (``--set weights=raw``) gives Irrlicht's reading. See :mod:`.skinning`.
* Materials: one glTF texture per distinct file, one material per distinct brush; a second
  texture layer (a lightmap on UV set 2), unclamped brush colours (2.0), TEXS flags/blend and
  everything else glTF has no place for ride in ``extras`` (:mod:`.materials`).
* B3D -> glTF -> B3D gives back the same structure (nodes, names, hierarchy, every MESH on its
  node, bones, KEYS chunks, ANIM flags/frames/fps, TEXS, BRUS, VRTS flags and UV sets, the
  file's own weights) from those ``extras`` (:mod:`.scene_extras`); a glTF made elsewhere is merged
  into one MESH (:mod:`.scene_write`). These records sit where Blender's glTF importer keeps them
  (node, mesh, material and scene extras; it drops primitive and animation extras and exports
  only used materials), and what Blender's exporter changes is undone when it still fits:
  vertices it split (per-corner normals a hair apart) are welded back, a held pose it sampled
  per frame is one key again, TRIS of one material that Blender merged into one primitive are
  cut apart again and the twin triangles (one vertex set twice) it dropped are put back
  (:mod:`.regroup`). Vertices several TRIS share (each primitive has its own copy) are welded
  back into one VRTS entry with one BONE entry per bone (:mod:`.shared`).

Quirks of the engines that read these files, documented for users, not imitated:

* Irrlicht (Minetest/Luanti) ignores a BONE chunk of 8 bytes or less, i.e. a bone with exactly
  one weight entry has no effect there; ``check`` reports such bones.
* Irrlicht subtracts 1 from frame numbers (1-based frames) and rejects ``tex_coord_sets >= 3`` or
  ``tex_coord_set_size >= 4``; ``from_scene`` writes at most 2 sets of size 2 and frames from 1
  for a glTF made elsewhere (a glTF made from B3D gets the file's own VRTS layout back).
* Irrlicht colours vertices with the VRTS colours whenever they are present (fx bit 2 or not)
  and else with the brush colour; Blitz3D uses them only with fx bit 2, and so does to_scene.
"""
from __future__ import annotations

from ...registry import register
from .checks import check, info
from .chunks import (
                     BONE_DTYPE,
                     TRI_DTYPE,
                     AnimChunk,
                     B3dFile,
                     Bone,
                     Brus,
                     BrushEntry,
                     Keys,
                     MeshChunk,
                     NodeChunk,
                     RawChunk,
                     Texs,
                     TextureEntry,
                     Tris,
                     Vrts,
                     keys_dtype,
                     read,
                     vrts_dtype,
                     write,
)
from .manifest import B3D
from .scene import to_scene
from .scene_write import from_scene

__all__ = ["B3dFile", "TextureEntry", "Texs", "BrushEntry", "Brus", "NodeChunk", "MeshChunk",
           "Vrts", "Tris", "Bone", "Keys", "AnimChunk", "RawChunk", "read", "write",
           "to_scene", "from_scene", "vrts_dtype", "keys_dtype", "BONE_DTYPE", "TRI_DTYPE", "info", "check"]

register(B3D, doc_types=(B3dFile,), sniff=lambda h: h[:4] == b"BB3D", read=read, write=write,
         to_scene=to_scene, from_scene=from_scene, info=info, check=check)
