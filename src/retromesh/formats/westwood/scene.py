"""Westwood voxels -> Scene (glTF conventions).

* Each limb becomes a node with a mesh of its visible faces (no faces between filled voxels),
  greedy-merged per (colour, normal index) by default (``greedy=False`` keeps unit faces;
  ``normals="face"`` uses the axis normals and merges per colour only).
* Vertex colours come from the palette (sRGB bytes converted to linear). Voxels whose colour is
  in the player-remap range (``remap_start..remap_end``) go to a second primitive whose
  material is named ``player_remap`` and whose extras carry ``player_remap: [start, end]``.
  Files with an all-black palette (the game's palette is meant) get a grey ramp and a
  LossWarning unless ``palette=`` names a ``.pal`` (raw 768 bytes, 6- or 8-bit, or JASC-PAL).
* Normals come from the limb's normal table (TS 36 / RA2 244; out-of-range indices are
  clamped to the last entry) and are mapped to glTF axes like the positions.

Axes (settled on the corpus, see tests/test_westwood_scene.py): the normal-table vectors are
in the grid's own frame (the identity mapping agrees best with the outward directions of
surface voxels among all 48 signed axis permutations, for both tables), and the frame is
right-handed: in ``hmec.vxl`` the limbs named "... R ..." sit at -Y and "... L ..." at +Y
with the front legs at +X, i.e. X forward, Y left, Z up (as vengi reads it; OpenRA's y flip
belongs to its own world convention). We map ``(x, y, z) -> (y, z, x)`` — a proper rotation,
so windings stay counter-clockwise — which puts the model's front on glTF's +Z and its left on
+X, as the glTF spec asks of assets. (vengi's ``(x, z, -y)`` is the same up axis with the front
on +X instead.)

Placement (OpenRA ``Voxel.cs``, vengi ``VXLShared.cpp``): for limb ``l`` with scale ``s``, bounds
``b0..b1``, size ``n`` and ``k = (b1 - b0) / n``, a voxel corner ``v`` is at
``R (b0 + v * k) + t'`` where ``[R | t]`` is the HVA matrix of the frame with
``t' = t * s * k``; without an HVA the tailer matrix is used with ``t' = t * k`` (in the corpus
the tailer's translation equals the HVA's times ``s``: it is stored already scaled). Units stay
voxels (the generic ``scale=`` load option scales the scene; a direct ``to_scene(scale=)``
call scales the root node).

HVA sections are matched to limbs by name when all names are unique and found, else by order
when the counts agree, else by name where possible; unmatched limbs keep the tailer matrix.
HVA frames with more than one frame become one animation (STEP keys at ``fps``, default 6).
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...errors import DocumentError, FormatError, LossWarning
from ...scene import Animation, Channel, Material, Mesh, Node, Primitive, Scene
from ...transforms import compose_trs, decompose_trs, quat_continuous
from ...units import positive as positive_option
from . import scene_extras
from .colour import srgb_to_linear
from .hva import HvaFile
from .meshing import quads_to_triangles, visible_quads
from .voxels import SpanError, VoxelGrid, normal_table
from .vxl import Limb, VxlFile

__all__ = [
    "AXES",
    "grid_scene",
    "limb_matrices",
    "limb_mesh",
    "load_palette",
    "match_sections",
    "to_scene",
]

#: VXL (x forward, y left, z up) -> glTF (x left, y up, z forward)
AXES = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])

DEFAULT_FPS = 6.0


def load_palette(path: str | Path) -> np.ndarray:
    """A (256, 3) uint8 palette from a raw 768-byte ``.pal`` (6-bit values are scaled) or a
    JASC-PAL text file."""
    data = Path(path).read_bytes()
    if data.startswith(b"JASC-PAL"):
        words = data.decode("latin-1").split()
        try:
            n = int(words[2])
            if not 0 <= n <= 256 or len(words) < 3 + 3 * n:
                raise ValueError
            vals = np.array(words[3:3 + 3 * n], dtype=np.int64).reshape(n, 3)
        except (IndexError, ValueError):
            raise FormatError("JASC-PAL: 'JASC-PAL', a version, a count of 0..256 and that "
                              "many 'r g b' lines", file=str(path), offset=None,
                              got=" ".join(words[1:6])) from None
        out = np.zeros((256, 3), np.uint8)
        out[:n] = np.clip(vals, 0, 255)
        return out
    if len(data) < 768:
        raise FormatError("a palette of 768 bytes (256 RGB triples) or a JASC-PAL file",
                          file=str(path), offset=0, got=f"{len(data)} bytes")
    pal = np.frombuffer(data[:768], np.uint8).reshape(256, 3).astype(np.int64)
    if pal.max() < 64:
        pal = (pal * 255 + 31) // 63
    return pal.astype(np.uint8)


def _palette(doc_palette: np.ndarray, palette: Any) -> tuple[np.ndarray, bool]:
    if palette is not None:
        if isinstance(palette, (str, Path)):
            return load_palette(palette), True
        pal = as_dtype(palette, np.uint8, "palette")      # a 300 is refused, not wrapped
        if pal.shape != (256, 3):
            raise DocumentError(f"palette must be (256, 3), got {pal.shape}")
        return pal, True
    pal = np.asarray(doc_palette, np.uint8).reshape(256, 3)
    if not pal.any():
        ramp = np.linspace(24, 255, 256).astype(np.uint8)
        return np.repeat(ramp[:, None], 3, axis=1), False
    return pal, True




def _axes4() -> np.ndarray:
    c = np.eye(4)
    c[:3, :3] = AXES
    return c


def match_sections(limb_names: list[bytes], section_names: list[bytes]) -> list[int | None]:
    """For each limb, the HVA section it takes its matrices from (None = tailer)."""
    def label(n: bytes) -> bytes:
        return n.split(b"\0", 1)[0]
    ln = [label(n) for n in limb_names]
    sn = [label(n) for n in section_names]
    if len(set(sn)) == len(sn) and all(n in sn for n in ln) and len(set(ln)) == len(ln):
        return [sn.index(n) for n in ln]
    if len(sn) == len(ln):
        return list(range(len(ln)))
    out: list[int | None] = []
    for n in ln:
        out.append(sn.index(n) if n in sn else None)
    return out


def limb_matrices(limb: Limb, hva: np.ndarray | None, where: str | None = None) -> np.ndarray:
    """(frames, 4, 4) limb matrices in the VXL frame (voxel units): ``[R | t']``; ``where``
    names the limb in errors (``limbs[3]``)."""
    size = np.maximum(np.array(limb.size, np.float64), 1)
    k = (np.asarray(limb.bounds_max, np.float64) - np.asarray(limb.bounds_min, np.float64)) / size
    k = np.where(np.isfinite(k) & (np.abs(k) > 1e-9), k, 1.0)
    if hva is None:
        m = np.asarray(limb.transform, np.float64).reshape(1, 3, 4).copy()
        m[:, :, 3] *= k
    else:
        m = np.asarray(hva, np.float64).reshape(-1, 3, 4).copy()
        m[:, :, 3] *= float(limb.scale) * k
    out = np.zeros((len(m), 4, 4))
    out[:, :3, :] = m
    out[:, 3, 3] = 1.0
    if not np.all(np.isfinite(out)):
        raise FormatError("finite limb transforms (tailer or HVA matrix times scale and "
                          "bounds)", path=f"{where or f'limbs[{limb.index}]'}.transform",
                          got="NaN or infinity")
    return out


def limb_mesh(grid: VoxelGrid, limb: Limb, palette_lin: np.ndarray, remap: tuple[int, int],
               greedy: bool, normals: str, materials: tuple[int, int]) -> Mesh:
    table = normal_table(limb.normal_type)
    size = np.maximum(np.array(grid.size, np.float64), 1)
    b0 = np.asarray(limb.bounds_min, np.float64)
    k = (np.asarray(limb.bounds_max, np.float64) - b0) / size
    k = np.where(np.isfinite(k) & (np.abs(k) > 1e-9), k, 1.0)
    if not np.all(np.isfinite(b0)):
        b0 = np.zeros(3)
    colour = grid.colour.astype(np.int32)
    if normals == "face":
        key = colour
    else:
        key = colour * 256 + grid.normal.astype(np.int32)
    quads = visible_quads(grid.mask, key, greedy=greedy)
    mesh = Mesh(name=limb.label)
    if len(quads) == 0:
        return mesh
    ci = quads.key // 256 if normals != "face" else quads.key
    # AXES is the permutation (x, y, z) -> (y, z, x): index instead of a matrix product
    perm = [1, 2, 0]
    pos = quads.corners * k.astype(np.float32) + b0.astype(np.float32)   # VXL frame
    pos = pos[..., perm]
    if normals == "face":
        nrm = quads.normals[:, perm]
    else:
        ni = np.minimum(quads.key % 256, len(table) - 1)
        nrm = table.astype(np.float32)[:, perm][ni]
    # bounds_max < bounds_min on an axis mirrors the grid: the normals follow
    nrm = nrm * np.sign(k)[perm].astype(np.float32)
    rgb = palette_lin[ci]
    flip = bool(np.prod(np.sign(k)) < 0)
    in_remap = (ci >= remap[0]) & (ci <= remap[1])
    parts = [(None, materials[0])] if not in_remap.any() else \
        [(~in_remap, materials[0]), (in_remap, materials[1])]
    if in_remap.all():
        parts = [(None, materials[1])]
    for sel, mat in parts:
        p, n_, c_ = (pos, nrm, rgb) if sel is None else (pos[sel], nrm[sel], rgb[sel])
        nq = len(p)
        if nq == 0:
            continue
        col = np.empty((nq, 4, 4), np.float32)
        col[:, :, :3] = c_[:, None, :]
        col[:, :, 3] = 1.0
        vn = np.empty((nq, 4, 3), np.float32)
        vn[:] = n_[:, None, :]
        prim = Primitive(positions=p.reshape(-1, 3), normals=vn.reshape(-1, 3),
                         colors=col.reshape(-1, 4), indices=quads_to_triangles(nq, flip),
                         material=mat)
        if mat == materials[1]:
            prim.extras["player_remap"] = [int(remap[0]), int(remap[1])]
        mesh.primitives.append(prim)
    return mesh


def grid_scene(scene: Scene, grids: list[tuple[VoxelGrid, Limb]], palette: np.ndarray,
               remap: tuple[int, int], matrices: list[np.ndarray], parent: int,
               greedy: bool, normals: str) -> list[int]:
    """Add one node per limb under ``parent``; returns the node indices."""
    lin = srgb_to_linear(palette / 255.0).astype(np.float32)
    used = np.zeros(256, bool)
    for grid, _ in grids:
        used |= np.bincount(grid.colour[grid.mask], minlength=256)[:256] > 0
    in_remap = np.zeros(256, bool)
    in_remap[max(remap[0], 0):min(remap[1], 255) + 1] = True
    plain = scene.add_material(Material(name="voxel", roughness=1.0)) \
        if (used & ~in_remap).any() else -1
    player = scene.add_material(Material(name="player_remap", roughness=1.0, extras={
        "player_remap": [int(remap[0]), int(remap[1])]})) if (used & in_remap).any() else -1
    mats = (plain, player)
    c4 = _axes4()
    nodes = []
    for (grid, limb), mats_l in zip(grids, matrices):
        mesh = limb_mesh(grid, limb, lin, remap, greedy, normals, mats)
        m = c4 @ mats_l[0] @ c4.T
        t, r, s = decompose_trs(m)
        node = Node(name=limb.label, translation=t, rotation=r, scale=s,
                    extras={"normal_table": "TS" if limb.normal_type == 2 else "RA2"
                            if limb.normal_type == 4 else int(limb.normal_type),
                            "vxl_scale": float(limb.scale), "size": list(limb.size)})
        if mesh.primitives:
            node.mesh = scene.add_mesh(mesh)
        nodes.append(scene.add_node(node, parent))
    return nodes


def find_hva(source: Path | None, hva: Any) -> tuple[HvaFile | None, str | None]:
    from ... import read as _read
    if isinstance(hva, HvaFile):
        return hva, None
    path = Path(hva) if hva is not None else None
    if path is None and source is not None:
        for cand in (source.with_suffix(".hva"), source.with_suffix(".HVA")):
            if cand.is_file():
                path = cand
                break
    if path is None:
        return None, None
    doc = _read(path, format="hva")
    return doc, str(path)


def to_scene(doc: VxlFile, *, source: Path | None = None, hva: Any = None,
             fps: float | None = None, greedy: bool = True, normals: str = "table",
             scale: float = 1.0, palette: Any = None) -> Scene:
    if normals not in ("table", "face"):
        raise DocumentError(f"normals must be 'table' or 'face', got {normals!r}")
    fps = DEFAULT_FPS if fps is None else positive_option("fps", fps)
    scale = positive_option("scale", scale)
    source = Path(source) if source is not None else None
    hdoc, hpath = find_hva(source, hva)
    if hdoc is not None:
        bad = np.argwhere(~np.isfinite(np.asarray(hdoc.matrices, np.float64)))
        if len(bad):
            f, sec = (int(v) for v in bad[0][:2])
            n = max(len(hdoc.section_names), 1)
            raise FormatError("finite matrix values", file=hpath,
                              offset=24 + 16 * n + 48 * (f * n + sec),
                              path=f"matrices[{f}][{sec}]", got="NaN or infinity")
    pal, real = _palette(doc.palette, palette)
    if not real:
        warnings.warn("the .vxl has an all-black palette (the game's palette is meant): "
                      "colours are a grey ramp of the indices; pass palette=<file.pal>",
                      LossWarning, stacklevel=2)
    name = source.stem if source is not None else "vxl"
    scene = Scene(name=name, extras={"format": "vxl"})
    root = scene.add_node(Node(name=name, scale=np.full(3, float(scale))))
    grids = []
    for i, limb in enumerate(doc.limbs):
        try:
            grids.append((limb.voxels(), limb))
        except SpanError as exc:
            raise FormatError(exc.message, path=f"limbs[{i}].span_data.column[{exc.column}]",
                              offset=None, got=exc.got) from None
    sections: list[int | None] = [None] * len(doc.limbs)
    frames = 1
    if hdoc is not None and hdoc.matrices.shape[1]:
        sections = match_sections([l.name for l in doc.limbs], hdoc.section_names)
        # real pairs often differ in names only (the game goes by position): warn on a count
        # that differs, or on names that differ in an HVA the user named (another model's?)
        doc_names = [l.name for l in doc.limbs]
        limbs = {n.split(b"\0", 1)[0] for n in doc_names}
        if len(hdoc.section_names) != len(doc.limbs) or (hva is not None and not limbs <= {
                n.split(b"\0", 1)[0] for n in hdoc.section_names}):
            def _names(ns: list[bytes]) -> str:
                return ", ".join(n.split(b"\0", 1)[0].decode("latin-1") for n in ns[:4])
            warnings.warn(f"{Path(hpath).name if hpath else 'the HVA'} has sections "
                          f"({_names(hdoc.section_names)}) for limbs ({_names(doc_names)}): "
                          "another model's HVA? "
                          + ("Matrices taken by position" if len(hdoc.section_names) == len(doc.limbs)
                             else "Unmatched limbs keep their rest pose"),
                          LossWarning, stacklevel=2)
        frames = max(hdoc.frames, 1)
        scene.extras["hva"] = Path(hpath).name if hpath else "given"   # no local folders
    mats = []
    for i, (limb, hsec) in enumerate(zip(doc.limbs, sections)):
        if hsec is None or hdoc is None or hdoc.frames == 0:
            m = limb_matrices(limb, None, f"limbs[{i}]")
            mats.append(np.repeat(m, frames, axis=0))
        else:
            mats.append(limb_matrices(limb, hdoc.matrices[:, hsec], f"limbs[{i}]"))
    remap = (doc.remap_start, doc.remap_end)
    nodes = grid_scene(scene, grids, pal, remap, mats, root, greedy, normals)
    # what glTF has no place for, so that from_scene can give the file back (see .keep)
    for node, limb in zip(nodes, doc.limbs):
        scene.nodes[node].extras[scene_extras.LIMB_KEY] = scene_extras.limb_extras(limb)
    scene.nodes[root].extras[scene_extras.FILE_KEY] = scene_extras.file_extras(
        doc, pal, greedy, normals, with_hva=hdoc is not None)
    if hdoc is not None:
        scene.nodes[root].extras[scene_extras.HVA_KEY] = scene_extras.hva_extras(hdoc, sections, fps)
    if frames > 1:
        c4 = _axes4()
        times = np.arange(frames, dtype=np.float64) / fps
        anim = Animation(name="hva", extras={"fps": fps, "frames": frames})
        for node, m in zip(nodes, mats):
            if len(m) < 2:
                continue
            g = c4 @ m @ c4.T
            t, r, s = decompose_trs(g)
            back = compose_trs(t, r, s)
            if np.abs(back[:, :3, :3] - g[:, :3, :3]).max() > 1e-3:
                warnings.warn(f"limb {scene.nodes[node].name!r}: an HVA matrix has shear that a "
                              f"node transform cannot express (approximated)", LossWarning,
                              stacklevel=2)
            r = quat_continuous(r)
            anim.channels.append(Channel(node, "translation", times, t, "STEP"))
            anim.channels.append(Channel(node, "rotation", times, r, "STEP"))
            if np.abs(s - 1).max() > 1e-6:
                anim.channels.append(Channel(node, "scale", times, s, "STEP"))
        if anim.channels:
            scene.animations.append(anim)
    return scene
