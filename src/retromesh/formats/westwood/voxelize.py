"""The voxeliser: Scene -> ``.vxl`` (+ ``.hva``) by surface voxelisation of every mesh node, one
limb per node (:func:`voxelize_scene`; the writer :func:`.scene_write.from_scene` calls it when
the scene holds no kept file).

* Geometry: the rest pose in world space (skins and animations are not followed:
  LossWarning), converted from glTF axes back to the VXL frame (``(X, Y, Z) -> (Z, X, Y)``,
  the inverse of :data:`.scene.AXES`). One voxel size for the whole scene: the longest
  extent divided by ``resolution`` (default 64), or ``voxel_size``.
* Surface: every triangle is sampled on a barycentric grid finer than half a voxel (triangles
  grouped by sample count, so the work is a few numpy calls per group) and the cells hit are
  filled. Interior: a cell counts as inside when rays along all six axis directions hit the
  surface (vectorised running maxima; exact for shapes without hidden exterior pockets).
* Bounded work (hostile input): the voxels of all limb grids and the surface samples are
  counted before anything is voxelised and capped by :data:`LIMITS` (DocumentError).
* Colours: vertex colour x material base colour (textures are not sampled: LossWarning),
  as 8-bit sRGB. When a scene uses at most 239 distinct colours (e.g. one made from a .vxl)
  they become the palette exactly; otherwise a fixed 6x6x6 cube + grey palette is used.
  Primitives of a material named ``player_remap`` take the player-colour ramp 16..31 by
  brightness. Interior voxels take the colour of the surface voxel before them along x.
* Normals: estimated from the shape for the chosen table (``game="ra2"`` default, ``"ts"``).
* Edited limbs of a kept ``.vxl`` and edited models of a kept ``.vox``
  (:mod:`.scene_write`, :mod:`.vox_scene_write`) are voxelised again in their own grids
  (:func:`voxelise_in_grid`).
* Placement: each limb's bounds are its box in *voxel* units (``k = 1``, like every game
  file and vengi's writer; OpenRA ignores ``k`` for the grid), tailer and HVA matrices are
  identity. :func:`.scene.to_scene` therefore puts the voxels where the triangles were,
  scaled by ``1 / voxel size`` (load with ``scale=<voxel size>`` to get the scene's units
  back).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...arrays import distinct
from ...errors import DocumentError, LossWarning
from ...filenames import companion
from ...scene import Node, Primitive, Scene
from ...units import positive as positive_option
from .colour import linear_to_srgb
from .hva import HvaFile
from .voxels import VoxelGrid, normal_indices
from .vxl import Limb, VxlFile

__all__ = ["LIMITS", "fill_interior", "fill_solid", "mesh_triangles", "surface_samples",
           "voxelise_in_grid", "voxelize_scene", "voxelize_triangles"]

# glTF (X, Y, Z) -> VXL (x, y, z) = (Z, X, Y)
_TO_VXL = [2, 0, 1]
_REMAP = (16, 31)
_FREE = [i for i in range(1, 256) if not _REMAP[0] <= i <= _REMAP[1]]
#: samples generated per batch (bounds the memory of voxelising big triangles)
_SAMPLES = 1 << 20
#: caps of one voxelisation, checked before the work starts (the work grows with the voxel
#: grids and the triangles' size in voxels, not with the file's size: 20,000 nodes sharing one
#: mesh, or one big triangle indexed 20,000 times, would take minutes). ``cells``: voxels of all
#: limb grids (one 255^3 limb fits); ``samples``: surface samples of all triangles (about
#: 2 (edge / voxel)^2 per triangle; 657k for the biggest corpus model at the default
#: resolution 64, times (resolution / 64)^2 allowed for a finer grid). Raise them
#: (``retromesh.formats.westwood.voxelize.LIMITS["cells"] = ...``) for a bigger job.
LIMITS = {"cells": 1 << 24, "samples": 1 << 21}


def _check_finite(tri: np.ndarray) -> None:
    # finite float32 positions can still overflow once scaled by the node transforms
    if not np.isfinite(tri).all():
        raise DocumentError("triangles that stay finite in voxel units (a node transform "
                            "scales the positions beyond the float range)")


def surface_samples(tri: np.ndarray) -> int:
    """How many samples :func:`voxelize_triangles` takes of triangles ``(t, 3, 3)`` (voxel
    units): ``(n + 1)(n + 2) / 2`` for a triangle whose longest edge is ``n / 2`` voxels."""
    _check_finite(tri)
    edge = np.stack([tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0], tri[:, 2] - tri[:, 1]], 1)
    n = np.maximum(1, np.ceil(np.linalg.norm(edge, axis=2).max(1) * 2))
    return int(((n + 1) * (n + 2) / 2).sum())


def _lattice(n: int):
    """Barycentric weights ``(s, 3)`` of the samples of a triangle ``n`` steps a side (row
    ``i`` holds ``j = 0..n-i``), in chunks of whole rows of at most :data:`_SAMPLES` samples
    where a row allows (one huge triangle is not sampled in one array)."""
    counts = n + 1 - np.arange(n + 1)
    i0 = 0
    while i0 <= n:
        cum = np.cumsum(counts[i0:])
        i1 = i0 + max(1, int(np.searchsorted(cum, _SAMPLES, side="right")))
        c = counts[i0:i1]
        i = np.repeat(np.arange(i0, i1), c)
        j = np.arange(len(i)) - np.repeat(np.cumsum(c) - c, c)
        yield np.stack([1 - (i + j) / n, i / n, j / n], 1)
        i0 = i1


def voxelize_triangles(tri: np.ndarray, colours: np.ndarray, shape: tuple[int, int, int]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Cells ``(n, 3)`` hit by triangles ``(t, 3, 3)`` given in voxel units, with the
    interpolated ``(t, 3, k)`` corner values of each sample. Samples are moved a quarter voxel
    against the face normal (counter-clockwise = outward) and kept a hundredth of a voxel
    inside every edge, so that faces and edges lying on cell boundaries fill the cells
    behind them, not the empty ones in front."""
    _check_finite(tri)
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(nrm, axis=1, keepdims=True)
    area = length[:, 0] / 2
    nrm = np.where(length > 1e-12, nrm / np.where(length > 1e-12, length, 1), 0)
    tri = tri - 0.25 * nrm[:, None, :]
    edge = np.stack([tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0], tri[:, 2] - tri[:, 1]], 1)
    steps = np.maximum(1, np.ceil(np.linalg.norm(edge, axis=2).max(1) * 2)).astype(np.int64)
    cells, vals = [], []
    dims = np.array(shape)
    for n, w in ((m, w) for m in distinct(steps) for w in _lattice(int(m))):
        group = np.flatnonzero(steps == n)
        batch = max(1, _SAMPLES // len(w))                          # bounded memory
        for b in range(0, len(group), batch):
            sel = group[b:b + batch]
            t = tri[sel]
            # keep every sample a hundredth of a voxel inside each edge: barycentric w_k is
            # the distance to the edge opposite vertex k over that height h_k
            h = 2 * area[sel][:, None] / np.maximum(np.stack(
                [np.linalg.norm(t[:, 2] - t[:, 1], axis=1),
                 np.linalg.norm(t[:, 2] - t[:, 0], axis=1),
                 np.linalg.norm(t[:, 1] - t[:, 0], axis=1)], 1), 1e-12)
            ww = np.maximum(w[None], np.minimum(0.01 / np.maximum(h, 1e-12), 1 / 3)[:, None, :])
            ww /= ww.sum(2, keepdims=True)
            pts = np.einsum("tsc,tcd->tsd", ww, t).reshape(-1, 3)
            c = np.clip(np.floor(pts).astype(np.int64), 0, dims - 1)
            flat = (c[:, 0] * dims[1] + c[:, 1]) * dims[2] + c[:, 2]
            _, first = np.unique(flat, return_index=True)           # one sample per cell
            tri_of = first // len(w)
            col = np.einsum("ic,ick->ik", ww.reshape(-1, 3)[first], colours[sel][tri_of])
            cells.append(c[first])
            vals.append(col)
    if not cells:
        return np.zeros((0, 3), np.int64), np.zeros((0, colours.shape[2]))
    return np.concatenate(cells), np.concatenate(vals)


def fill_interior(mask: np.ndarray) -> np.ndarray:
    """Cells enclosed along all six axis directions (see the module docstring)."""
    inside = np.ones(mask.shape, bool)
    for a in range(mask.ndim):
        fwd = np.maximum.accumulate(mask, axis=a)
        back = np.flip(np.maximum.accumulate(np.flip(mask, a), axis=a), a)
        inside &= fwd & back
    return mask | inside


def fill_solid(mask: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """``mask`` with its enclosed interior filled (:func:`fill_interior`); interior voxels take,
    in ``colour`` (changed in place), the colour of the surface voxel before them along x."""
    full = fill_interior(mask)
    inner = full & ~mask
    if inner.any():
        size = mask.shape
        marker = np.where(mask, np.arange(size[0], dtype=np.int16)[:, None, None], np.int16(0))
        last = np.maximum.accumulate(marker, axis=0)
        _, yy, zz = np.ogrid[:size[0], :size[1], :size[2]]
        colour[inner] = colour[last, yy, zz][inner]
    return full


def mesh_triangles(prims: list[Primitive]) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """Triangle corners ``(t, 3, 3)`` and mean colours ``(t, 3)`` (None without colours) of
    each triangle primitive."""
    pos, col = [], []
    for p in prims:
        if p.mode != 4 or not len(p.positions):
            continue
        idx = (p.indices if p.indices is not None else np.arange(len(p.positions))).astype(np.int64)
        t = idx.reshape(-1, 3)
        pos.append(np.asarray(p.positions, np.float64)[t])
        col.append(None if p.colors is None else np.asarray(p.colors, np.float64)[t][:, :, :3].mean(1))
    return pos, col



def voxelise_in_grid(scene: Scene, node: Node, limb: Limb, palette: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(mask, colour) of the node's mesh voxelised in the grid of ``limb`` (size and bounds;
    colours the nearest ``palette`` entry other than 0): edited limbs and models
    (:mod:`.scene_write`, :mod:`.vox_scene_write`)."""
    size = np.maximum(np.array(limb.size, np.int64), 1)
    b0 = np.asarray(limb.bounds_min, np.float64)
    k = (np.asarray(limb.bounds_max, np.float64) - b0) / size
    k = np.where(np.isfinite(k) & (np.abs(k) > 1e-9), k, 1.0)
    prims = scene.meshes[node.mesh].primitives if node.mesh is not None else []
    pos, col = mesh_triangles(prims)
    mask = np.zeros(tuple(size), bool)
    colour = np.zeros(tuple(size), np.uint8)
    if pos:
        tri = np.concatenate(pos)[..., _TO_VXL]                 # glTF axes -> VXL frame
        local = (tri - b0) / k
        flip = np.prod(np.sign(k)) < 0
        if flip:
            local = local[:, ::-1]
        rgb = np.concatenate([c if c is not None else np.ones((len(p), 3))
                              for p, c in zip(pos, col)])
        corner_rgb = np.repeat(rgb[:, None, :], 3, axis=1)
        if np.any(local < -0.5) or np.any(local > size + 0.5):
            warnings.warn(f"limb {limb.label!r}: the edited mesh reaches outside the limb's "
                          f"{tuple(int(v) for v in size)} grid and is cut at its edge",
                          LossWarning, stacklevel=4)
        # an edited limb of a 255^3 ball needs under 1M samples; 2x the cap keeps the work
        # under a second (triangles far bigger than the grid they are cut to need more)
        samples, cap = surface_samples(local), 2 * LIMITS["samples"]
        if samples > cap:
            raise DocumentError(f"limb {limb.label!r}: the edited mesh needs {samples} surface "
                                f"samples, more than 2 x LIMITS['samples'] = {cap} "
                                "(retromesh.formats.westwood.voxelize.LIMITS)")
        cells, vals = voxelize_triangles(local, corner_rgb,
                                         (int(size[0]), int(size[1]), int(size[2])))
        mask[tuple(cells.T)] = True
        srgb = np.rint(linear_to_srgb(vals[:, :3]) * 255)
        pal = np.asarray(palette, np.float64)
        d = ((srgb[:, None, :] - pal[None, 1:]) ** 2).sum(-1)    # nearest palette entry (not 0)
        colour[tuple(cells.T)] = 1 + np.argmin(d, axis=1)
        mask = fill_solid(mask, colour)
    return mask, colour


def _palette(srgb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(palette (256, 3) uint8, index per colour) for (n, 3) uint8 sRGB colours."""
    packed = (srgb[:, 0].astype(np.uint32) << 16) | (srgb[:, 1].astype(np.uint32) << 8) \
        | srgb[:, 2].astype(np.uint32)
    upacked, inv = np.unique(packed, return_inverse=True)      # 1-D: much faster than axis=0
    uniq = np.stack([(upacked >> 16) & 255, (upacked >> 8) & 255, upacked & 255],
                    1).astype(np.uint8)
    pal = np.zeros((256, 3), np.uint8)
    ramp = np.linspace(255, 60, 16).astype(np.uint8)
    pal[_REMAP[0]:_REMAP[1] + 1] = np.stack([ramp, np.zeros(16), np.zeros(16)], 1)
    if len(uniq) <= len(_FREE):
        free = np.array(_FREE[:len(uniq)])
        pal[free] = uniq
        return pal, free[inv.reshape(-1)]
    steps = np.array([0, 51, 102, 153, 204, 255])
    cube = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), -1).reshape(-1, 3)
    greys = np.linspace(0, 255, len(_FREE) - len(cube) + 2)[1:-1]
    table = np.concatenate([cube, np.repeat(greys[:, None], 3, 1)]).astype(np.uint8)
    pal[_FREE] = table
    t = table.astype(np.float32)
    idx = np.empty(len(uniq), np.int64)
    for k in range(0, len(uniq), 65536):
        d = ((uniq[k:k + 65536, None, :].astype(np.float32) - t[None]) ** 2).sum(-1)
        idx[k:k + 65536] = np.argmin(d, 1)
    return pal, np.array(_FREE)[idx][inv.reshape(-1)]


def _mesh_items(scene: Scene) -> tuple[list[tuple[str, np.ndarray, np.ndarray, np.ndarray]],
                                         set[str]]:
    """Per mesh node: (name, triangles (t, 3, 3) in the VXL frame in world space, corner
    colours (t, 3, 3), player-remap flag per triangle); and what voxelising drops."""
    world = scene.world_matrices()
    items: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]] = []
    lost: set[str] = set()
    if scene.animations:
        lost.add("animations")
    for ni, node in enumerate(scene.nodes):
        if node.mesh is None:
            continue
        if node.skin is not None:
            lost.add("skins (the rest pose is used)")
        tris, cols, remap = [], [], []
        for p in scene.meshes[node.mesh].primitives:
            if p.targets:
                lost.add("morph targets")
            if p.mode != 4 and len(p.positions):
                lost.add("points and lines")
            if p.mode != 4 or len(p.positions) == 0:
                continue
            mat = scene.materials[p.material] if p.material is not None else None
            if mat is not None and mat.base_color_texture is not None:
                lost.add("textures (base colours only)")
            idx = p.indices.reshape(-1, 3) if p.indices is not None else \
                np.arange(len(p.positions)).reshape(-1, 3)
            if len(idx) == 0:
                continue
            if np.linalg.det(world[ni][:3, :3]) < 0:
                idx = idx[:, ::-1]        # a mirroring node turns the windings inside out
            pos = p.positions.astype(np.float64) @ world[ni][:3, :3].T + world[ni][:3, 3]
            rgba = p.colors if p.colors is not None else np.ones((len(pos), 4), np.float32)
            base = np.asarray(mat.base_color if mat is not None else (1, 1, 1, 1), np.float64)
            col = rgba[:, :3].astype(np.float64) * base[:3]
            tris.append(pos[:, _TO_VXL][idx])
            cols.append(col[idx])
            flag = mat is not None and mat.name == "player_remap"
            remap.append(np.full(len(idx), flag))
        if tris:
            items.append((node.name or f"node{ni}", np.concatenate(tris), np.concatenate(cols),
                          np.concatenate(remap)))
    return items, lost


def _check_work(items: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]], gmin: np.ndarray,
                vs: float, extent: float) -> None:
    """DocumentError when a limb needs more than 255 voxels a side, or the voxels and surface
    samples of all limbs exceed :data:`LIMITS` (counted before any work is done)."""
    cells_total = samples_total = 0
    for name, tri, _, _ in items:
        lo = np.floor((tri.reshape(-1, 3).min(0) - gmin) / vs + 1e-6)
        hi = np.floor((tri.reshape(-1, 3).max(0) - gmin) / vs - 1e-6) + 1
        size = np.maximum(hi - lo, 1).astype(np.int64)
        if size.max() > 255:
            raise DocumentError(f"node {name!r} needs {tuple(int(v) for v in size)} voxels: a VXL limb holds "
                                f"255 a side (lower resolution or raise voxel_size)")
        cells_total += int(np.prod(size))
        samples_total += surface_samples(tri / vs)
    # a finer grid asked for (resolution above 64, up to a limb's 255) scales the sample cap
    finer = float(np.clip(extent / vs / 64, 1.0, 255 / 64))
    if cells_total > LIMITS["cells"] or samples_total > LIMITS["samples"] * finer ** 2:
        raise DocumentError(
            f"voxelising {len(items)} mesh nodes needs {cells_total} voxels and {samples_total} "
            f"surface samples: more than LIMITS['cells'] = {LIMITS['cells']} or "
            f"LIMITS['samples'] = {LIMITS['samples']} x {finer ** 2:g} (retromesh.formats.westwood.voxelize."
            "LIMITS; lower resolution, raise voxel_size or raise the caps)")


def voxelize_scene(scene: Scene, *, resolution: float | None = None,
                   voxel_size: float | None = None, game: str | None = None, fill: bool = True
                   ) -> dict[str, Any]:
    """The ``.vxl`` (key ``""``) and ``.hva`` (key ``".hva"``) of ``scene`` voxelised anew, one
    limb per mesh node (see the module docstring)."""
    resolution = 64 if resolution is None else resolution
    game = "ra2" if game is None else game
    resolution = positive_option("resolution", resolution)
    if voxel_size is not None:
        voxel_size = positive_option("voxel_size", voxel_size)
    table = {"ra2": 4, "ts": 2}.get(str(game).lower())
    if table is None:
        raise DocumentError(f"game must be 'ra2' or 'ts', got {game!r}")
    items, lost = _mesh_items(scene)
    if lost:
        warnings.warn(f"voxelising drops {', '.join(sorted(lost))}", LossWarning, stacklevel=3)
    if not items:
        raise DocumentError("the scene has no triangles to voxelise")
    allpts = np.concatenate([t.reshape(-1, 3) for _, t, _, _ in items])
    if not np.all(np.isfinite(allpts)):
        raise DocumentError("non-finite vertex positions")
    gmin = allpts.min(0)
    extent = float((allpts.max(0) - gmin).max())
    vs = voxel_size if voxel_size else (extent / resolution or 1.0)
    if not (np.isfinite(vs) and vs > 0):
        raise DocumentError(f"a positive finite voxel size, got {vs} (extent {extent})")
    _check_work(items, gmin, vs, extent)
    limbs, grids_cols = [], []
    for name, tri, col, rem in items:
        lo = np.floor((tri.reshape(-1, 3).min(0) - gmin) / vs + 1e-6)
        hi = np.floor((tri.reshape(-1, 3).max(0) - gmin) / vs - 1e-6) + 1
        size = np.maximum(hi - lo, 1).astype(np.int64)
        local = (tri - gmin) / vs - lo
        rgb = np.concatenate([col, rem[:, None, None].repeat(3, 1).astype(np.float64)], 2)
        cells, vals = voxelize_triangles(local, rgb, tuple(size))
        mask = np.zeros(tuple(size), bool)
        mask[tuple(cells.T)] = True
        grids_cols.append((name, lo, size, mask, cells, vals))
    srgb = np.concatenate([np.rint(linear_to_srgb(v[:, :3]) * 255) for *_, v in grids_cols])
    pal, idx = _palette(srgb.astype(np.uint8))
    start = 0
    for li, (name, lo, size, mask, cells, vals) in enumerate(grids_cols):
        ci = idx[start:start + len(cells)]
        start += len(cells)
        is_remap = vals[:, 3] > 0.5
        if is_remap.any():
            bright = srgb[start - len(cells):start][is_remap].max(1)
            ci = ci.copy()
            ci[is_remap] = _REMAP[0] + np.clip((255 - bright) * 16 // 256, 0, 15)
        colour = np.zeros(tuple(size), np.uint8)
        colour[tuple(cells.T)] = ci
        if fill:
            mask = fill_solid(mask, colour)
        grid = VoxelGrid(colour, normal_indices(mask, table), mask)
        # bounds in voxel units (k = 1), as the game tools write them: OpenRA places the grid
        # at b0 + index without k, and the .vox bridge places models in voxels
        b0 = (gmin / vs + lo).astype(np.float32)
        limbs.append(Limb.from_grid(grid, name.encode("latin-1", "replace")[:15], index=li,
                                    normal_type=table, bounds_min=b0,
                                    bounds_max=(b0 + size).astype(np.float32)))
    doc = VxlFile(palette=pal, limbs=limbs)
    eye = np.eye(3, 4, dtype=np.float32)
    hva = HvaFile(name=b"retromesh".ljust(16, b"\0"),
                  section_names=[limb.name.split(b"\0", 1)[0].ljust(16, b"\0") for limb in limbs],
                  matrices=np.broadcast_to(eye, (1, len(limbs), 3, 4)).copy())
    return {"": doc, companion(scene, ".hva", ".vxl"): hva}
