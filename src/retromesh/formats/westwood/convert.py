"""The direct converters ``vxl -> vox`` and ``vox -> vxl`` (``retromesh.convert`` prefers them
over a Scene: the voxels stay as they are).

Bridge to ``.vxl`` (both are Z-up voxel grids, so axes map one to one):

* palette: vox index ``c`` (1..255) <-> vxl colour ``c``; the vxl colour 0 (a present voxel in
  VXL, impossible in VOX) is stored in the unused RGBA entry 255 and its voxels take the
  nearest other palette colour (LossWarning; ``vxl_colour0`` lists them so that an unedited
  model gets colour 0 back).
* limbs <-> models: one SIZE/XYZI per limb under its own nTRN (``_name`` = limb name, layer
  = a LAYR per limb named like it). The tailer fields that VOX cannot express (bounds,
  scale, matrix, normal table, raw name, header words) ride along as ``vxl_*`` keys of the
  nTRN dictionary, so ``vxl -> vox -> vxl`` restores them; editors ignore such keys.
* normals: VOX has none. ``vxl -> vox`` keeps them as ``vxl_normals`` (hex, XYZI order) with
  ``vxl_voxels`` (size, count, CRC-32 of the filled positions); ``vox -> vxl`` restores them
  when the positions are unchanged and the table is the same, else recomputes them from the
  shape (outward direction of the empty neighbourhood, nearest entry of the table: the
  limb's own, or ``normal_type=2|4`` / ``game=ts|ra2``, RA2 for foreign files). On the corpus,
  vxl -> vox -> vxl gives back 39 of 39 .vxl byte for byte.
* placement: frame 0 of the ``.hva`` beside the source (else the tailer) places each model
  (translation only: rotated limbs get a LossWarning); all HVA frames ride along as
  ``vxl_hva`` and come back in the ``.hva`` companion that ``vox -> vxl`` always writes (the
  games need one): 36 of 37 corpus .hva come back byte for byte (``tsjeep.hva`` has one
  section for two limbs and comes back with two).
"""
from __future__ import annotations

import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ...binio import Writer
from ...errors import DocumentError, LossWarning
from . import vox
from .hva import HvaFile
from .scene import find_hva, limb_matrices, match_sections
from .voxels import VoxelGrid, normal_indices
from .vxl import Limb, VxlFile

__all__ = ["vox_to_vxl", "vxl_to_vox"]


def _floats(a) -> str:
    return " ".join(repr(float(v)) for v in np.asarray(a, np.float32).reshape(-1))


def _scene_graph(doc: VxlFile, hdoc: HvaFile | None,
                 limb_ids: list[tuple[int, dict[str, str], np.ndarray]]) -> list[vox.VoxChunk]:
    """The scene-graph chunks of ``vxl_to_vox``: the file's header words (and the HVA's name and
    frame count) on the root nTRN, one nTRN + nSHP per limb with its ``vxl_*`` attributes."""
    graph: list[vox.VoxChunk] = []
    # scene graph: 0 nTRN -> 1 nGRP -> per limb nTRN (2+2i) -> nSHP (3+2i)
    n = len(limb_ids)
    w = Writer("<")
    w.i32(0)
    root_attrs = {"vxl_header": f"{doc.palette_count} {doc.remap_start} {doc.remap_end}",
                  "vxl_magic": doc.magic.hex()}
    if hdoc is not None:
        root_attrs["vxl_hva_name"] = bytes(hdoc.name).hex()
        root_attrs["vxl_hva_frames"] = str(hdoc.frames)
    vox.build_dict(w, root_attrs)
    w.pack("4i", 1, -1, -1, 1)
    vox.build_dict(w, {})
    graph.append(vox.VoxChunk(b"nTRN", w.getvalue()))
    w = Writer("<")
    w.i32(1)
    vox.build_dict(w, {})
    w.i32(n)
    w.pack(f"{n}i", *[2 + 2 * i for i in range(n)])
    graph.append(vox.VoxChunk(b"nGRP", w.getvalue()))
    for i, attrs, centre in limb_ids:
        w = Writer("<")
        w.i32(2 + 2 * i)
        vox.build_dict(w, attrs)
        w.pack("4i", 3 + 2 * i, -1, i, 1)
        t = np.rint(centre).astype(np.int64)
        vox.build_dict(w, {"_t": f"{t[0]} {t[1]} {t[2]}"})
        graph.append(vox.VoxChunk(b"nTRN", w.getvalue()))
        w = Writer("<")
        w.i32(3 + 2 * i)
        vox.build_dict(w, {})
        w.pack("2i", 1, i)
        vox.build_dict(w, {})
        graph.append(vox.VoxChunk(b"nSHP", w.getvalue()))
    return graph


def vxl_to_vox(doc: VxlFile, *, source: Path | None = None, hva: Any = None,
               **options: Any) -> vox.VoxFile:
    """A MagicaVoxel file with one model per limb (see the module docstring). The limbs are
    placed by frame 0 of the ``.hva`` found beside the source (or given), else by the
    tailers; the HVA's frames ride along so that ``vox -> vxl`` writes them back."""
    hdoc, _ = find_hva(Path(source) if source is not None else None, hva)
    sections: list[int | None] = [None] * len(doc.limbs)
    if hdoc is not None and hdoc.frames and hdoc.matrices.shape[1]:
        sections = match_sections([limb.name for limb in doc.limbs], hdoc.section_names)
    else:
        hdoc = None
    out = vox.VoxFile(version=150)
    pal = np.asarray(doc.palette, np.uint8)
    rgba = np.full((256, 4), 255, np.uint8)
    rgba[:255, :3] = pal[1:]
    rgba[255, :3] = pal[0]
    # nearest non-zero palette entry for colour 0
    d = ((pal[1:].astype(np.int64) - pal[0].astype(np.int64)) ** 2).sum(1)
    zero_to = int(np.argmin(d)) + 1
    n_zero = 0
    limb_ids = []
    rotated: list[str] = []
    for i, limb in enumerate(doc.limbs):
        g = limb.voxels()
        if max(g.size) > 256:
            raise DocumentError(f"limb {i} is larger than a MagicaVoxel model (256)")
        x, y, z = np.nonzero(g.mask)
        c = g.colour[x, y, z].copy()
        zeros = np.flatnonzero(c == 0).astype("<u4")
        n_zero += len(zeros)
        c[zeros] = zero_to
        voxels = np.zeros(len(x), vox.XYZI_DTYPE)
        voxels["x"], voxels["y"], voxels["z"], voxels["i"] = x, y, z, c
        out.chunks.append(vox.VoxSize(*g.size))
        out.chunks.append(vox.VoxXyzi(voxels))
        sec = sections[i]
        hm = None if sec is None or hdoc is None else hdoc.matrices[:, sec]
        m = limb_matrices(limb, None if hm is None else hm[:1], f"limbs[{i}]")[0]
        if np.abs(m[:3, :3] - np.eye(3)).max() > 1e-3:
            rotated.append(limb.label)
        pivot = np.floor(np.array(g.size) / 2)
        size = np.maximum(np.array(limb.size, np.float64), 1)
        k = (limb.bounds_max.astype(np.float64) - limb.bounds_min) / size
        centre = m[:3, :3] @ (limb.bounds_min + pivot * k) + m[:3, 3]
        attrs = {"_name": limb.label, "vxl_name": limb.name.hex(),
                 "vxl_header": f"{limb.index} {limb.unknown1} {limb.unknown2}",
                 "vxl_scale": repr(float(limb.scale)),
                 "vxl_transform": _floats(limb.transform),
                 "vxl_bounds": _floats(np.concatenate([limb.bounds_min, limb.bounds_max])),
                 "vxl_normal_type": str(limb.normal_type)}
        attrs["vxl_normals"] = g.normal[x, y, z].tobytes().hex()
        attrs["vxl_voxels"] = _shape_key(g.mask)
        if len(zeros):
            attrs["vxl_colour0"] = f"{zero_to}:{zeros.tobytes().hex()}"
        if hm is not None and hdoc is not None and sec is not None:     # (hm: both given)
            attrs["vxl_hva"] = _floats(hm)
            attrs["vxl_hva_section"] = bytes(hdoc.section_names[sec]).hex()
        limb_ids.append((i, attrs, centre))
    if rotated:
        warnings.warn(f"limbs {rotated} are rotated: .vox places them by translation only",
                      LossWarning, stacklevel=2)
    if n_zero:
        warnings.warn(f"{n_zero} voxels of colour 0 (not representable in .vox) use the nearest "
                      f"colour {zero_to}", LossWarning, stacklevel=2)
    graph = _scene_graph(doc, hdoc, limb_ids)
    out.chunks.extend(graph)
    for i, attrs, _ in limb_ids:
        w = Writer("<")
        w.i32(i)
        vox.build_dict(w, {"_name": attrs["_name"]})
        w.i32(-1)
        out.chunks.append(vox.VoxChunk(b"LAYR", w.getvalue()))
    out.chunks.append(vox.VoxRgba(rgba))
    return out


def _shape_key(mask: np.ndarray) -> str:
    """Size, count and CRC-32 of the filled positions: tells whether an editor changed them."""
    flat = np.flatnonzero(mask).astype("<u4")
    return f"{'x'.join(map(str, mask.shape))}:{len(flat)}:{zlib.crc32(flat.tobytes()):08x}"


def _parse_floats(text: str | None, n: int) -> np.ndarray | None:
    if not text:
        return None
    try:
        v = np.array([float(t) for t in text.split()], np.float32)
    except ValueError:
        return None
    return v if len(v) == n else None


def _limb_grid(g: VoxelGrid, attrs: dict[str, str], normal_type: int) -> VoxelGrid:
    """The limb's voxels from a model: the normals kept by ``vxl -> vox`` when the voxels and
    the table are the same, else recomputed; kept colour-0 voxels get colour 0 back."""
    grid = VoxelGrid(g.colour.copy(), np.zeros(g.size, np.uint8), g.mask.copy())
    stored = attrs.get("vxl_normals")
    same_table = attrs.get("vxl_normal_type") == str(normal_type)
    if (stored is not None and same_table and attrs.get("vxl_voxels") == _shape_key(g.mask)
            and len(stored) == 2 * g.count):
        try:
            grid.normal[g.mask] = np.frombuffer(bytes.fromhex(stored), np.uint8)
        except ValueError:
            stored = None
    else:
        stored = None
    zero = attrs.get("vxl_colour0", "")
    if zero and attrs.get("vxl_voxels") == _shape_key(g.mask):
        # voxels of vxl colour 0 (stored under the nearest colour): put 0 back where the
        # colour was not edited
        try:
            to, hexed = zero.split(":", 1)
            order = np.frombuffer(bytes.fromhex(hexed), "<u4")
            xs_, ys_, zs_ = np.nonzero(g.mask)
            order = order[order < len(xs_)]
            at = (xs_[order], ys_[order], zs_[order])
            keep = grid.colour[at] == int(to)
            grid.colour[tuple(a[keep] for a in at)] = 0
        except ValueError:
            pass
    if stored is None:                   # edited (or foreign) model: recompute
        normals = normal_indices(g.mask, normal_type)
        grid.normal[g.mask] = normals[g.mask]
    return grid


def _kept16(attrs: dict[str, str], key: str) -> bytes | None:
    """A kept 16-byte field (hex in the .vox attributes), or None when absent or damaged."""
    try:
        raw = bytes.fromhex(attrs.get(key, ""))
    except ValueError:
        return None
    return raw if len(raw) == 16 else None


def _limb_name(attrs: dict[str, str], mid: int) -> bytes:
    """The 16-byte limb name: the model's name, or the kept raw field when it still matches."""
    full = (attrs.get("_name") or f"model{mid}").encode("latin-1", "replace")
    name = full[:15].ljust(16, b"\0")
    # the raw field (garbage after the NUL) unless the name was edited
    raw = _kept16(attrs, "vxl_name")
    if raw is not None and raw.split(b"\0", 1)[0] == full:
        name = raw
    return name


def _limb_tailer(limb: Limb, attrs: dict[str, str], g: VoxelGrid, m: np.ndarray) -> None:
    """The tailer fields: the kept header words, transform, bounds and scale, else bounds
    around the model's pivot and the instance's matrix ``m``."""
    hdr = attrs.get("vxl_header", "").split()
    if len(hdr) == 3 and all(h.isdigit() for h in hdr):
        limb.unknown1, limb.unknown2 = int(hdr[1]), int(hdr[2])
    tr = _parse_floats(attrs.get("vxl_transform"), 12)
    bounds = _parse_floats(attrs.get("vxl_bounds"), 6)
    scale = _parse_floats(attrs.get("vxl_scale"), 1)
    if tr is not None and bounds is not None and scale is not None:
        limb.transform = tr.reshape(3, 4)
        limb.bounds_min, limb.bounds_max = bounds[:3].copy(), bounds[3:].copy()
        limb.scale = float(scale[0])
    else:
        pivot = np.floor(np.array(g.size) / 2)
        limb.bounds_min = (-pivot).astype(np.float32)
        limb.bounds_max = (limb.bounds_min + np.array(g.size)).astype(np.float32)
        t = np.eye(3, 4, dtype=np.float32)
        t[:, :3] = m[:3, :3]
        t[:, 3] = m[:3, 3]
        limb.transform = t


def vox_to_vxl(doc: vox.VoxFile, *, source: Path | None = None, normal_type: int | None = None,
               game: str | None = None, **options: Any) -> dict[str, Any]:
    """A ``.vxl`` + ``.hva`` from a MagicaVoxel file: one limb per shape.

    The normal table is ``normal_type`` (2 TS, 4 RA2) or ``game`` ("ts"/"ra2") when given,
    else the table a limb came from (``vxl_normal_type``), else RA2. Normals kept from a
    ``vxl -> vox`` conversion are restored when the limb's voxels were not edited and the table
    is the same; otherwise they are recomputed from the shape."""
    if game is not None:
        if str(game).lower() not in ("ts", "ra2"):
            raise DocumentError(f"game must be 'ts' or 'ra2', got {game!r}")
        normal_type = {"ts": 2, "ra2": 4}[str(game).lower()]
    if normal_type is not None and normal_type not in (2, 4):
        raise DocumentError(f"normal_type must be 2 (TS) or 4 (RA2), got {normal_type}")
    chosen = normal_type
    grids = vox.models(doc)
    rgba = vox.palette_of(doc)
    out = VxlFile()
    pal = np.zeros((256, 3), np.uint8)
    pal[1:] = rgba[:255, :3]
    pal[0] = rgba[255, :3]
    out.palette = pal
    root = vox.scene_graph(doc)["nodes"].get(0, {}).get("attrs", {})
    head = root.get("vxl_header", "").split()
    if len(head) == 3 and all(h.isdigit() for h in head):
        out.palette_count, out.remap_start, out.remap_end = (int(h) for h in head)
    magic = _kept16(root, "vxl_magic")
    if magic is not None:
        out.magic = magic
    matrices = []
    hva_names = []
    try:
        frames = int(root.get("vxl_hva_frames", "0"))
    except ValueError:
        frames = 0
    for k, (mid, m, attrs) in enumerate(vox.instances(doc, grids)):
        g = grids[mid]
        if max(g.size) > 255:
            raise DocumentError(f"model {mid} is {g.size}: VXL limbs are at most 255 a side")
        source_table = attrs.get("vxl_normal_type")
        normal_type = chosen
        if normal_type is None:
            normal_type = int(source_table) if source_table in ("2", "4") else 4
        grid = _limb_grid(g, attrs, normal_type)
        name = _limb_name(attrs, mid)
        limb = Limb.from_grid(grid, name=name, index=k, normal_type=normal_type)
        _limb_tailer(limb, attrs, g, m)
        out.limbs.append(limb)
        kept = _parse_floats(attrs.get("vxl_hva"), frames * 12) if frames else None
        if kept is not None:
            matrices.append(kept.reshape(frames, 3, 4))
        else:
            hm = np.asarray(limb.transform, np.float32).copy()
            hm[:, 3] = hm[:, 3] / np.float32(limb.scale if limb.scale else 1.0)
            matrices.append(hm[None])
        hva_names.append(_kept16(attrs, "vxl_hva_section")
                         or name.split(b"\0", 1)[0].ljust(16, b"\0"))
    n_frames = max((len(mm) for mm in matrices), default=1)
    stacked = np.stack([mm if len(mm) == n_frames else np.repeat(mm[:1], n_frames, 0)
                        for mm in matrices], axis=1) if matrices else np.zeros((1, 0, 3, 4))
    hva_name = _kept16(root, "vxl_hva_name") or b"retromesh".ljust(16, b"\0")
    h = HvaFile(name=hva_name, section_names=hva_names,
                matrices=np.asarray(stacked, np.float32))
    return {"": out, ".hva": h}
