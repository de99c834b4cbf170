"""Small valid files made by our own writers (for examples, tests and benchmarks).

``tank()`` returns ``(VxlFile, HvaFile)``: a three-limb tank (hull, turret, barrel) with a
player-remap stripe, normals from the RA2 (or TS) table and an 8-frame HVA turning the turret.
``write_example(folder)`` writes tank.vxl/.hva/.vox; ``documents()`` gives the tank as
each format's document (the samples API of every family). ``sphere(n)`` is a one-limb ball of
diameter ``n``; ``palette()`` a made-up 256-colour palette of 16-shade ramps with the remap ramp
at 16..31.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .hva import HvaFile
from .voxels import VoxelGrid, normal_indices
from .vxl import Limb, VxlFile

__all__ = ["box_grid", "palette", "sphere", "tank", "write_example", "write_examples", "documents",
           "WITHOUT_SAMPLE"]

#: formats of the family without a sample document, and why
WITHOUT_SAMPLE: dict[str, str] = {
    "aos-vxl": "read only (no writer to build a sample with); tests/test_westwood_native.py "
               "builds a map by hand",
}


def palette() -> np.ndarray:
    """A made-up 256-colour palette laid out in ramps of 16 shades as the games' unit palettes
    are: 0 unused (black), 1-15 greys, 16-31 the player-remap ramp (bright red to dark, which
    the game replaces by the house colour), then ramps of olive, khaki, brown, steel, ... from
    light to dark. The sample models use the olive (32-47), khaki (48-63) and steel (80-95)
    ramps, so a conversion shows a coloured tank rather than noise."""
    hues = np.array([
        [128, 128, 128], [255, 0, 0], [118, 140, 62], [196, 176, 110], [140, 92, 52],
        [120, 136, 156], [60, 110, 170], [210, 160, 40], [70, 150, 120], [170, 70, 60],
        [150, 110, 160], [200, 200, 190], [90, 90, 70], [230, 120, 40], [60, 60, 90],
        [180, 200, 220]], float)
    shade = np.linspace(1.3, 0.35, 16)[:, None]
    pal = np.clip(hues[:, None, :] * shade[None], 0, 255).reshape(256, 3)
    pal[16:32] = np.stack([255 - np.arange(16) * 12, np.zeros(16), np.zeros(16)], 1)
    pal[0] = 0
    return np.round(pal).astype(np.uint8)


def _finish(mask: np.ndarray, colour: np.ndarray, normal_type: int) -> VoxelGrid:
    normals = normal_indices(mask, normal_type)
    return VoxelGrid(np.where(mask, colour, 0).astype(np.uint8),
                     np.where(mask, normals, 0).astype(np.uint8), mask)


def box_grid(size: tuple[int, int, int], colour: int = 100, normal_type: int = 4) -> VoxelGrid:
    mask = np.ones(size, bool)
    return _finish(mask, np.full(size, colour, np.uint8), normal_type)


def _limb(grid: VoxelGrid, name: str, index: int, centre_xy: bool, normal_type: int,
          translation=(0.0, 0.0, 0.0)) -> Limb:
    size = np.array(grid.size, np.float32)
    b0 = np.array([-size[0] / 2, -size[1] / 2, 0] if centre_xy else [0, -size[1] / 2, 0],
                  np.float32)
    t = np.eye(3, 4, dtype=np.float32)
    t[:, 3] = translation
    return Limb.from_grid(grid, name=name, index=index, unknown2=2, normal_type=normal_type,
                          transform=t, bounds_min=b0, bounds_max=b0 + size)


def tank(normal_type: int = 4, frames: int = 8) -> tuple[VxlFile, HvaFile]:
    # hull: 24 x 14 x 6 with sloped front and a remap stripe
    x, y, z = np.indices((24, 14, 6))
    hull = (z < 6 - np.maximum(0, x - 19)) & ((y > 0) & (y < 13) | (z < 3))
    hc = np.where(z == 3, 20, 36 + 2 * ((x // 4) % 3) + (z < 2) * 3).astype(np.uint8)
    # turret: 10 x 10 x 4 rounded
    x, y, z = np.indices((10, 10, 4))
    tur = ((x - 4.5) ** 2 + (y - 4.5) ** 2) < (5.2 - z * 0.5) ** 2
    tc = np.where(z == 3, 24, 38 + z).astype(np.uint8)
    # barrel: 12 x 2 x 2
    bar = np.ones((12, 2, 2), bool)
    bc = np.full((12, 2, 2), 86, np.uint8)
    limbs = [
        _limb(_finish(hull, hc, normal_type), "HULL", 0, True, normal_type),
        _limb(_finish(tur, tc, normal_type), "TURRET", 1, True, normal_type, (0, 0, 6)),
        _limb(_finish(bar, bc, normal_type), "BARREL", 2, False, normal_type, (3, 0, 7.5)),
    ]
    doc = VxlFile(palette=palette(), limbs=limbs)
    s = limbs[0].scale
    mats = np.zeros((frames, 3, 3, 4), np.float32)
    for f in range(frames):
        a = 2 * np.pi * f / frames
        rot = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
        for li, limb in enumerate(limbs):
            r = np.eye(3) if li == 0 else rot
            t = limb.transform[:, 3].astype(np.float64)
            if li == 2:
                t = rot @ t
            mats[f, li, :, :3] = r
            mats[f, li, :, 3] = t / s
    hva = HvaFile(name=b"retromesh".ljust(16, b"\0"),
                  section_names=[l.name for l in limbs], matrices=mats)
    return doc, hva


def sphere(n: int = 64, normal_type: int = 4) -> VxlFile:
    g = np.indices((n, n, n)) - (n - 1) / 2
    r = np.sqrt((g ** 2).sum(0))
    mask = r <= n / 2 - 0.5
    colour = (64 + (np.indices((n, n, n))[2] * 8 // max(n, 1))).astype(np.uint8)
    grid = _finish(mask, colour, normal_type)
    return VxlFile(palette=palette(), limbs=[_limb(grid, "BALL", 0, True, normal_type)])


def _vox(doc: VxlFile):
    from .convert import vxl_to_vox
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return vxl_to_vox(doc)


def documents() -> dict[str, Any]:
    """Format name -> a small complete native document: the tank as VXL, HVA and VOX."""
    doc, h = tank(frames=4)
    return {"vxl": doc, "hva": h, "vox": _vox(doc)}


def write_example(folder: str | Path) -> list[Path]:
    """Write ``tank.vxl`` + ``tank.hva`` (RA2 normals, 8-frame turret turn) and ``tank.vox``
    (the same model for MagicaVoxel) into ``folder``; returns the paths."""
    from ...fileio import atomic_write
    from . import hva as hva_mod, vox as vox_mod, vxl as vxl_mod
    folder = Path(folder)
    doc, h = tank()
    v = _vox(doc)
    return [atomic_write(folder / "tank.vxl", vxl_mod.write(doc)),
            atomic_write(folder / "tank.hva", hva_mod.write(h)),
            atomic_write(folder / "tank.vox", vox_mod.write(v))]


#: the name before this release (CHANGELOG: the old name still works); nothing here calls it
write_examples = write_example
