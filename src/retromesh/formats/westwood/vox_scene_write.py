"""Scene -> MagicaVoxel ``.vox``, the writer: the kept file given back, else the scene voxelised
(:mod:`.scene_write`, same options) and converted (:func:`.convert.vxl_to_vox`).

A scene made from a ``.vox`` gives that file back (:func:`restore`, from the kept data of
:mod:`.vox_scene_extras`) when every mesh node of the scene is a kept shape instance and every instance
is still there:

* "unchanged" is checked against the meshes ``to_scene`` makes of the kept file,
  order-independently (:func:`.scene_write.canonical_triangles`: triangles rounded to 1e-4
  voxel, colours within 0.01), so a round trip through Blender, which renumbers and splits
  vertices, still counts;
* nothing changed: the kept file, byte for byte (voxel counts, sizes, palette, scene graph,
  materials and every other chunk as they were);
* an edited mesh: its model is voxelised again *in its own grid* (same SIZE; colours matched
  to the kept palette; inside filled) and only its XYZI chunk is replaced (LossWarning naming
  the models); a moved instance gets the translation in its nTRN's ``_t`` (whole voxels;
  a rotation or scale that differs is left out with a LossWarning);
* a new mesh node, a deleted instance or damaged extras: None, and the scene is voxelised
  from scratch (:func:`.scene_write.from_scene`, then :func:`.convert.vxl_to_vox`) as for any
  glTF.

A scene loaded with the generic ``scale=`` option is measured back in voxels first (the
factor is in ``scene.extras["scale"]``).
"""
from __future__ import annotations

import copy
import warnings
import zlib
from typing import Any

import numpy as np

from ...binio import Reader, Writer
from ...errors import LossWarning, RetromeshError
from ...scene import Scene
from ...units import scale_scene
from . import vox
from .convert import vxl_to_vox
from .scene import AXES
from .scene_write import DROPPED_BY_VXL, canonical_triangles, from_scene as vxl_from_scene, warn_dropped
from .vox_scene import to_scene
from .vox_scene_extras import FILE_KEY, INSTANCE_KEY, kept_vox
from .voxelize import mesh_triangles, voxelise_in_grid
from .vxl import Limb

__all__ = ["from_scene", "restore"]


def from_scene(scene: Scene, *, native: bool = True, **options: Any) -> vox.VoxFile:
    """Voxelise a scene (see :mod:`.voxelize`; same options) into a MagicaVoxel file; a scene
    made from a ``.vox`` gives that file back (edited models voxelised again in their own
    grids: :func:`restore`) unless ``native=False`` or a voxelisation option (``resolution``,
    ``voxel_size``, ``game``) is given."""
    if native and all(options.get(k) is None for k in ("resolution", "voxel_size", "game")):
        kept = restore(scene)
        if kept is not None:
            return kept
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vxl = vxl_from_scene(scene, native=native, **options)[""]
    for w in caught:                 # what a .vxl + .hva drops, said for the .vox below
        if not str(w.message).startswith(DROPPED_BY_VXL):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if any(str(w.message).startswith(DROPPED_BY_VXL) for w in caught) or scene.animations:
        warn_dropped(scene, 0, "a .vox")
    return vxl_to_vox(vxl)


def _same_mesh(scene: Scene, ni: int, ref: Scene, ri: int) -> bool:
    def canon(sc: Scene, i: int):
        m = sc.nodes[i].mesh
        return canonical_triangles(*mesh_triangles(sc.meshes[m].primitives if m is not None else []))
    a, ca = canon(ref, ri)
    b, cb = canon(scene, ni)
    if a.shape != b.shape or not np.array_equal(a, b):
        return False
    return ca is None or cb is None or bool(np.allclose(ca, cb, atol=0.01))


def restore(scene: Scene) -> Any:
    """The kept :class:`~.vox.VoxFile` (edited models voxelised again in their own grids), or
    None when the scene is not one whose mesh nodes are the kept instances (module docstring)."""
    root = next((i for i, n in enumerate(scene.nodes) if FILE_KEY in n.extras), None)
    if root is None:
        return None
    loaded_scale = scene.extras.get("scale", 1.0)
    if isinstance(loaded_scale, (int, float)) and loaded_scale > 0 and loaded_scale != 1.0:
        scene = scale_scene(copy.deepcopy(scene), 1.0 / float(loaded_scale))   # back to voxels
    try:
        data, greedy, n_inst = kept_vox(scene.nodes[root].extras[FILE_KEY])
        doc = vox.read(Reader(data, file="kept.vox"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = to_scene(doc, greedy=greedy)
    except (TypeError, ValueError, KeyError, AttributeError, zlib.error, RetromeshError):
        return None
    nodes: dict[int, int] = {}
    for i, n in enumerate(scene.nodes):
        k = n.extras.get(INSTANCE_KEY)
        if isinstance(k, int) and not isinstance(k, bool) and 0 <= k < n_inst and k not in nodes:
            nodes[k] = i
        elif n.mesh is not None:
            return None                      # a mesh that is not a kept instance
    ref_nodes = [i for i, n in enumerate(ref.nodes) if INSTANCE_KEY in n.extras]
    if len(nodes) != n_inst or len(ref_nodes) != n_inst:
        return None
    world, ref_world = scene.world_matrices(), ref.world_matrices()
    # the scene relative to its root (Blender may put the root under nothing or elsewhere)
    inv_root = np.linalg.inv(world[root])
    trn: list[int] = []
    grids = vox.models(doc)
    insts = vox.placements(doc, len(grids), trn)
    edited: dict[int, int] = {}          # model -> scene node (the first edited instance)
    moves: dict[int, tuple] = {}         # nTRN id -> (translation change, instance matrix)
    turned: list[str] = []
    for k in range(n_inst):
        ni, ri = nodes[k], ref_nodes[k]
        mid = insts[k][0]
        if not _same_mesh(scene, ni, ref, ri):
            edited.setdefault(mid, ni)
        m = inv_root @ world[ni]
        r = ref_world[ri]
        if not np.allclose(m[:3, :3], r[:3, :3], atol=1e-4):
            turned.append(scene.nodes[ni].name)
        delta = AXES.T @ (m[:3, 3] - r[:3, 3])
        if np.abs(delta).max() > 1e-3 and trn[k] >= 0:
            moves[trn[k]] = (delta, insts[k][1])
    warn_dropped(scene, 0, "a .vox")
    if not edited and not moves:
        if turned:
            _warn_turned(turned)
        return doc
    out = vox.VoxFile(version=doc.version, main_content=doc.main_content,
                      chunks=list(doc.chunks), trailing=doc.trailing)
    if edited:
        _revoxelise(scene, out, grids, edited)
    if moves:
        _move(out, moves)
    if turned:
        _warn_turned(turned)
    return out


def _warn_turned(names: list[str]) -> None:
    warnings.warn(f"models {', '.join(names[:5])} were rotated or scaled: .vox keeps the "
                  "kept rotation (translation only is updated)", LossWarning, stacklevel=4)


def _revoxelise(scene: Scene, doc: Any, grids: list, edited: dict[int, int]) -> None:
    rgba = vox.palette_of(doc)
    palette = np.zeros((256, 3), np.uint8)
    palette[1:] = rgba[:255, :3]
    xyzi = [i for i, c in enumerate(doc.chunks) if isinstance(c, vox.VoxXyzi)]
    names = []
    for mid, ni in sorted(edited.items()):
        size = np.array(grids[mid].size)
        pivot = np.floor(size / 2)
        label = scene.nodes[ni].name or f"model{mid}"
        limb = Limb(name=label.encode("latin-1", "replace")[:15].ljust(16, b"\0"),
                    xsize=int(size[0]), ysize=int(size[1]), zsize=int(size[2]), normal_type=4,
                    bounds_min=(-pivot).astype(np.float32),
                    bounds_max=(size - pivot).astype(np.float32))
        mask, colour = voxelise_in_grid(scene, scene.nodes[ni], limb, palette)
        x, y, z = np.nonzero(mask)
        v = np.zeros(len(x), vox.XYZI_DTYPE)
        v["x"], v["y"], v["z"], v["i"] = x, y, z, colour[x, y, z]
        doc.chunks[xyzi[mid]] = vox.VoxXyzi(v)
        names.append(label)
    warnings.warn(f"edited models voxelised again in their own grids: {', '.join(names)}",
                  LossWarning, stacklevel=4)


def _move(doc: Any, moves: dict[int, tuple]) -> None:
    """Add the change ``moves[id]`` (vox world axes; with the instance's world matrix) to
    frame 0's ``_t`` of those nTRN chunks (rewritten), in the frame of the nTRN's parent."""
    for ci, c in enumerate(doc.chunks):
        if not isinstance(c, vox.VoxChunk) or c.id != b"nTRN":
            continue
        r = Reader(c.content)
        nid = r.i32("id")
        if nid not in moves:
            continue
        attrs = vox.parse_dict(r)
        child, reserved, layer = r.unpack("3i", "nTRN")
        frames = [vox.parse_dict(r) for _ in range(r.count("frames", 4))] or [{}]
        delta, m = moves[nid]
        try:
            t = np.array([int(float(v)) for v in frames[0].get("_t", "0 0 0").split()[:3]])
            own = vox.rotation_matrix(int(frames[0].get("_r", "4")))
        except ValueError:
            t, own = np.zeros(3, np.int64), np.eye(3)
        parent = m[:3, :3] @ own.T
        t = t + np.rint(np.linalg.solve(parent, delta)).astype(np.int64)
        frames[0]["_t"] = f"{t[0]} {t[1]} {t[2]}"
        w = Writer("<")
        w.i32(nid)
        vox.build_dict(w, attrs)
        w.pack("4i", child, reserved, layer, len(frames))
        for f in frames:
            vox.build_dict(w, f)
        doc.chunks[ci] = vox.VoxChunk(b"nTRN", w.getvalue() + r.rest(), list(c.children))
