"""Scene -> ``.vxl`` (+ ``.hva``), the writer: the kept file given back (:mod:`.scene_extras`), else the
scene voxelised anew (:func:`.voxelize.voxelize_scene`).

:func:`from_scene` gives the kept file back (:func:`restore`) when every mesh node of the scene
is a kept limb, unless ``native=False`` or a voxelisation option (``resolution``,
``voxel_size``, ``game``) is given:

* a limb whose mesh is unchanged is written back as it came. "Unchanged" is checked against
  the mesh ``to_scene`` makes of the kept limb, order-independently (triangles as sets of
  corners rounded to 1e-4 voxel, colours within 0.01 when the mesh still has colours), so a
  round trip through Blender, which renumbers vertices, still counts as unchanged;
* an edited limb is voxelised again *in its own grid* (same size, bounds, scale, normal table;
  colours matched to the kept palette; normals estimated for that table), so sizes and modes
  stay those of the game file;
* the ``.hva``: the kept one, each matrix (limb and frame) as it was while the node's
  transform and keys still give it (to 1e-4 of the matrix's size: what Blender's float32
  transforms keep), else made from the node (sampled at the kept fps, so the frame count
  stays): one moved limb changes its own matrices only. None kept: one made from the nodes,
  one section per limb; none read (a ``.vxl`` without ``.hva``, ``no_hva`` in the kept
  file): none written while the limbs stand where their tailers put them.

A scene loaded with the generic ``scale=`` option is measured back in voxels first (the factor
is in ``scene.extras["scale"]``). Anything else (a new mesh node, no kept data) is voxelised
anew.
"""
from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from ...errors import LossWarning
from ...filenames import companion
from ...scene import Node, Scene
from ...transforms import compose_trs
from ...units import scale_scene
from .colour import srgb_to_linear
from .hva import HvaFile
from .scene import limb_matrices, limb_mesh
from .scene_extras import FILE_KEY, HVA_KEY, LIMB_KEY, kept_file, kept_hva, kept_limb
from .voxelize import mesh_triangles, voxelise_in_grid, voxelize_scene
from .voxels import VoxelGrid, normal_indices
from .vxl import Limb, RawBody, VxlFile

__all__ = ["DROPPED_BY_VXL", "canonical_triangles", "from_scene", "restore", "warn_dropped"]

#: VXL (x, y, z) -> glTF (y, z, x)
_TO_GLTF = [1, 2, 0]


def from_scene(scene: Scene, *, resolution: float | None = None, voxel_size: float | None = None,
               game: str | None = None, fill: bool = True, native: bool = True,
               **options: Any) -> dict[str, Any]:
    """See the module docstring; a scene made from a ``.vxl`` gives that file back (untouched
    limbs as they came, edited ones voxelised in their own grids) unless ``native=False`` or a
    voxelisation option (``resolution``, ``voxel_size``, ``game``) is given."""
    if native and resolution is None and voxel_size is None and game is None:
        kept = restore(scene)
        if kept is not None:
            return kept
    return voxelize_scene(scene, resolution=resolution, voxel_size=voxel_size, game=game,
                          fill=fill)


def canonical_triangles(positions: list[np.ndarray], colours: list[np.ndarray | None]
                        ) -> tuple[np.ndarray, np.ndarray | None]:
    """Triangles (T, 3, 3) -> rows of 9 ints (corners rounded to 1e-4, rotated so that the
    smallest comes first, keeping the winding), sorted; with the per-triangle mean colours
    in the same order (None when any part has none)."""
    if not positions:
        return np.zeros((0, 9), np.int64), None
    tri = np.concatenate(positions)
    q = np.round(tri.astype(np.float64) * 1e4).astype(np.int64)          # (T, 3, 3)
    key = q[:, :, 0] * 1_000_003 ** 2 + q[:, :, 1] * 1_000_003 + q[:, :, 2]
    first = np.argmin(key, axis=1)
    order = (first[:, None] + np.arange(3)[None]) % 3
    q = np.take_along_axis(q, order[:, :, None], axis=1).reshape(-1, 9)
    idx = np.lexsort(q.T[::-1])
    col: np.ndarray | None = None
    if all(c is not None for c in colours):
        col = np.concatenate([c for c in colours if c is not None])[idx]
    return q[idx], col


def _unchanged(scene: Scene, node: Node, limb: Limb, kept: dict) -> bool:
    pal = kept["scene_palette"]
    lin = srgb_to_linear(pal / 255.0).astype(np.float32)
    try:
        grid = limb.voxels()
    except ValueError:
        return False
    mesh = limb_mesh(grid, limb, lin, kept["remap"], kept["greedy"], kept["normals"], (0, 1))
    a, ca = canonical_triangles(*mesh_triangles(mesh.primitives))
    prims = scene.meshes[node.mesh].primitives if node.mesh is not None else []
    b, cb = canonical_triangles(*mesh_triangles(prims))
    if a.shape != b.shape or not np.array_equal(a, b):
        return False
    return ca is None or cb is None or bool(np.allclose(ca, cb, atol=0.01))


def _revoxelise(scene: Scene, node: Node, limb: Limb, palette: np.ndarray) -> None:
    """Voxelise the node's mesh again in the limb's own grid (size, bounds, normal table)."""
    mask, colour = voxelise_in_grid(scene, node, limb, palette)
    limb.set_voxels(VoxelGrid(colour, normal_indices(mask, limb.normal_type), mask))


def _node_matrices(scene: Scene, ni: int, times: np.ndarray) -> np.ndarray:
    """(frames, 4, 4) local matrices of node ``ni`` at ``times`` (rest where no channel)."""
    n = scene.nodes[ni]
    f = len(times)
    T = np.repeat(np.asarray(n.translation, np.float64)[None], f, 0)
    R = np.repeat(np.asarray(n.rotation, np.float64)[None], f, 0)
    S = np.repeat(np.asarray(n.scale, np.float64)[None], f, 0)
    for a in scene.animations[:1]:
        for c in a.channels:
            trs = {"translation": T, "rotation": R, "scale": S}.get(c.path)
            if c.node == ni and trs is not None:      # morph weights: dropped (warn_dropped)
                trs[:] = c.sample(times)
    return compose_trs(T, R, S)


#: how the kept-.vxl writer's warning of what it drops begins (the .vox writer says its own)
DROPPED_BY_VXL = "a .vxl + .hva"


def warn_dropped(scene: Scene, animations: int, what: str) -> None:
    """One LossWarning naming what a kept file written back cannot hold: morph targets,
    points and lines, animations after the first ``animations`` ones and, in those, morph
    weight keys (``.hva`` moves limbs; a ``.vox`` holds no animation)."""
    lost: list[str] = []
    prims = [(n.name, p) for n in scene.nodes if n.mesh is not None
             for p in scene.meshes[n.mesh].primitives]
    morphs = sorted({name for name, p in prims if p.targets})
    if morphs:
        lost.append("morph targets (" + ", ".join(morphs[:4]) + ")")
    if any(p.mode != 4 and len(p.positions) for _, p in prims):
        lost.append("points and lines")
    if any(c.path == "weights" for a in scene.animations[:animations] for c in a.channels):
        lost.append("morph weight keys")
    extra = [a.name or f"animation {i}" for i, a in enumerate(scene.animations)][animations:]
    if extra:
        lost.append("animations " + ", ".join(extra[:4]))
    if lost:
        warnings.warn(f"{what} has no place for {'; '.join(lost)}: left out", LossWarning,
                      stacklevel=4)


def _k(limb: Limb) -> np.ndarray:
    size = np.maximum(np.array(limb.size, np.float64), 1)
    k = (np.asarray(limb.bounds_max, np.float64) - np.asarray(limb.bounds_min, np.float64)) / size
    return np.where(np.isfinite(k) & (np.abs(k) > 1e-9), k, 1.0)


def _vxl_frames(scene: Scene, ni: int, times: np.ndarray) -> np.ndarray:
    """(frames, 4, 4) limb matrices ``[R | t']`` in the VXL frame, from the node (what
    :func:`.scene.limb_matrices` gave to_scene)."""
    c4 = np.eye(4)
    c4[:3, :3] = np.eye(3)[_TO_GLTF]
    return c4.T @ _node_matrices(scene, ni, times) @ c4


def _hva_matrices(frames_vxl: list[np.ndarray], limbs: list[Limb]) -> np.ndarray:
    """(frames, limbs, 3, 4) HVA matrices: ``t = t' / (scale k)`` (the inverse of
    :func:`.scene.limb_matrices`)."""
    out = np.zeros((len(frames_vxl[0]), len(limbs), 3, 4), np.float32)
    for li, (m, limb) in enumerate(zip(frames_vxl, limbs)):
        m = m.copy()
        m[:, :3, 3] /= (float(limb.scale) or 1.0) * _k(limb)
        out[:, li] = m[:, :3, :]
    return out


def restore(scene: Scene) -> dict[str, Any] | None:
    """The ``.vxl`` (+ ``.hva``) from the kept data, or None when the scene is not one whose
    mesh nodes are all kept limbs (see the module docstring)."""
    root = next((n for n in scene.nodes if FILE_KEY in n.extras), None)
    if root is None:
        return None
    loaded_scale = scene.extras.get("scale", 1.0)
    if isinstance(loaded_scale, (int, float)) and loaded_scale > 0 and loaded_scale != 1.0:
        scene = scale_scene(copy.deepcopy(scene), 1.0 / float(loaded_scale))   # back to voxels
        root = next(n for n in scene.nodes if FILE_KEY in n.extras)
    kept = kept_file(root.extras[FILE_KEY])
    if kept is None:
        return None
    limb_nodes = [i for i, n in enumerate(scene.nodes) if LIMB_KEY in n.extras]
    if any(n.mesh is not None and LIMB_KEY not in n.extras for n in scene.nodes):
        return None
    maybe = [kept_limb(scene.nodes[i].extras[LIMB_KEY]) for i in limb_nodes]
    limbs = [limb for limb in maybe if limb is not None]
    if not limbs or len(limbs) != len(maybe) or len(limbs) != kept.get("limbs"):
        return None
    palette = kept["palette"]
    edited = []
    for ni, limb in zip(limb_nodes, limbs):
        if not _unchanged(scene, scene.nodes[ni], limb, kept):
            _revoxelise(scene, scene.nodes[ni], limb, palette)
            edited.append(limb.label)
    if edited:
        warnings.warn(f"edited limbs voxelised again in their own grids: {', '.join(edited)}",
                      LossWarning, stacklevel=3)
    warn_dropped(scene, 1, DROPPED_BY_VXL)
    doc = VxlFile(magic=kept["magic"], palette_count=kept["palette_count"],
                  remap_start=kept["remap"][0], remap_end=kept["remap"][1],
                  palette=palette, limbs=limbs, trailing=kept["trailing"])
    if kept["raw_body"] is not None and not edited:
        doc.raw_body = RawBody(*kept["raw_body"])
    hva = _restore_hva(scene, root, limb_nodes, limbs, kept["no_hva"])
    return {"": doc} if hva is None else {"": doc, companion(scene, ".hva", ".vxl"): hva}


def _restore_hva(scene: Scene, root: Node, nodes: list[int], limbs: list[Limb],
                 no_hva: bool = False) -> HvaFile | None:
    """The kept ``.hva`` when the nodes still give its matrices, else one made from them;
    None for a file read without one whose limbs still stand where their tailers put them."""
    hdoc, sections, fps = kept_hva(root.extras.get(HVA_KEY), len(limbs))
    frames = max(hdoc.frames, 1) if hdoc is not None else 1
    times = np.arange(frames, dtype=np.float64) / fps
    got = [_vxl_frames(scene, ni, times) for ni in nodes]
    if hdoc is None and no_hva and not any(len(a.channels) for a in scene.animations[:1]) and all(
            np.allclose(g, want := limb_matrices(limb, None), atol=1e-4 * max(1.0, float(np.abs(want).max())))
            for g, limb in zip(got, limbs)):
        return None
    if hdoc is not None and len(sections) == len(limbs):
        # per limb and frame: the kept matrix while the node still gives it (within 1e-4 of
        # its size: Blender stores transforms as float32 TRS), so one moved limb changes its
        # own section's matrices only
        same = np.ones((frames, len(limbs)), bool)
        for li, (g, limb, sec) in enumerate(zip(got, limbs, sections)):
            want = limb_matrices(limb, None if sec is None or hdoc.frames == 0
                                 else hdoc.matrices[:, sec])
            if len(want) == 1:
                want = np.repeat(want, frames, 0)
            tol = 1e-4 * max(1.0, float(np.abs(want).max())) + 1e-5 * np.abs(want)
            same[:, li] = np.all(np.abs(g - want) <= tol, axis=(1, 2))
        if same.all():
            return hdoc
        if hdoc.frames:                 # the kept file's sections, the moved ones from the scene
            new = _hva_matrices(got, limbs)
            mats = np.array(hdoc.matrices, np.float32, copy=True)
            for li, sec in enumerate(sections):
                if sec is not None:
                    mats[~same[:, li], sec] = new[~same[:, li], li]
            return HvaFile(name=hdoc.name, section_names=list(hdoc.section_names),
                           matrices=mats, trailing=hdoc.trailing)
    names = [limb.name.split(b"\0", 1)[0].ljust(16, b"\0")[:16] for limb in limbs]
    return HvaFile(name=hdoc.name if hdoc is not None else b"retromesh".ljust(16, b"\0"),
                   section_names=names, matrices=_hva_matrices(got, limbs))
