"""``.vxl`` (+ ``.hva``) -> ``.glb`` -> ``.vxl`` (+ ``.hva``) without loss: what glTF has no
place for rides in node extras, and an untouched limb is written back as it came.

``to_scene`` puts on every limb node ``vxl_limb`` (the whole limb: raw name, header words,
scale, tailer matrix, bounds, size, normal table and its span tables and span data, zlib +
base64) and on the root node ``vxl_file`` (header words, palette, remap range, raw body and
trailing bytes, the palette and meshing options the scene was made with) and ``hva_file`` (the
``.hva`` as it was read, zlib + base64, the fps and the section each limb took its matrices
from). Node extras are where Blender keeps them (custom properties, exported again with
``export_extras``); values are JSON strings.

``from_scene`` (:func:`restore`) uses them when every mesh node of the scene is such a limb:

* a limb whose mesh is unchanged is written back as it came. "Unchanged" is checked against
  the mesh ``to_scene`` makes of the kept limb, order-independently (triangles as sets of
  corners rounded to 1e-4 voxel, colours within 0.01 when the mesh still has colours), so a
  round trip through Blender, which renumbers vertices, still counts as unchanged;
* an edited limb is voxelised again *in its own grid* (same size, bounds, scale, normal table;
  colours matched to the kept palette; normals estimated for that table), so sizes and modes
  stay those of the game file;
* the ``.hva``: the kept one when every limb's node transform and keys still give its matrices
  (to 1e-4), else the kept one with the matrices of the limbs' sections made from the nodes'
  transforms and keys (sampled at the kept fps, so its frame count stays), else (none kept)
  one made from the nodes, one section per limb.

A scene loaded with the generic ``scale=`` option is measured back in voxels first (the factor
is in ``scene.extras["scale"]``). Anything else (a new mesh node, no kept data) goes through
:func:`.voxelize.from_scene`.
"""
from __future__ import annotations

import base64
import json
import warnings
import zlib
from typing import Any

import numpy as np

from ... import extras as xt
from ...errors import DocumentError, LossWarning, RetromeshError
from ...scene import Node, Scene
from ...transforms import compose_trs
from .colour import linear_to_srgb, srgb_to_linear
from .hva import HvaFile, read as read_hva, write as write_hva
from .voxels import VoxelGrid, check_spans, normal_indices
from .vxl import Limb, RawBody, VxlFile

__all__ = ["LIMB_KEY", "FILE_KEY", "HVA_KEY", "limb_extras", "file_extras", "hva_extras",
           "restore"]

LIMB_KEY = "vxl_limb"
FILE_KEY = "vxl_file"
HVA_KEY = "hva_file"
#: VXL (x, y, z) -> glTF (y, z, x) and back
_TO_GLTF = [1, 2, 0]
_TO_VXL = [2, 0, 1]


def _pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(bytes(data), 9)).decode("ascii")


#: kept data decompresses to at most this (a 255^3 limb's spans are under 90 MB): extras come
#: from files, so a zlib bomb in them must not become gigabytes
MAX_UNPACKED = 96 << 20


def _unpack(text: str) -> bytes:
    """Bytes kept by :func:`_pack`; ValueError when not base64 + zlib or over MAX_UNPACKED."""
    z = zlib.decompressobj()
    out = z.decompress(base64.b64decode(text.encode("ascii"), validate=True), MAX_UNPACKED)
    if z.unconsumed_tail or not z.eof:
        raise ValueError(f"kept data is not one zlib stream of at most {MAX_UNPACKED} bytes")
    return out


def _file_record(text: Any) -> dict[str, Any] | None:
    """The ``vxl_file`` record, decoded and type-checked; None when it is not one we wrote
    (extras come from any glTF: a broken record means "not a kept file", never a crash)."""
    try:
        d = json.loads(text)
        b64 = lambda k: base64.b64decode(d[k].encode("ascii"), validate=True)   # noqa: E731
        rec = {"magic": b64("magic"), "trailing": b64("trailing"),
               "palette": np.frombuffer(b64("palette"), np.uint8).reshape(256, 3).copy(),
               "scene_palette": np.frombuffer(b64("scene_palette"), np.uint8).reshape(256, 3),
               "palette_count": int(d["palette_count"]),
               "remap": tuple(int(v) for v in d["remap"]),
               "limbs": int(d["limbs"]), "greedy": d["greedy"], "normals": d["normals"],
               "raw_body": None}
        if len(rec["remap"]) != 2 or not isinstance(rec["greedy"], bool) or \
                not isinstance(rec["normals"], str):
            return None
        if d.get("raw_body") is not None:
            data, offs = d["raw_body"]
            rec["raw_body"] = (_unpack(data), np.array(offs, np.uint32).reshape(-1, 3))
        return rec
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, zlib.error):
        return None


def _floats(a: Any) -> list[float]:
    return [float(v) for v in np.asarray(a, np.float32).reshape(-1)]


def limb_extras(limb: Limb) -> str:
    start = np.asarray(limb.span_start, "<i4").tobytes()
    end = np.asarray(limb.span_end, "<i4").tobytes()
    return json.dumps({
        "name": base64.b64encode(bytes(limb.name)).decode("ascii"), "index": int(limb.index),
        "unknown1": int(limb.unknown1), "unknown2": int(limb.unknown2),
        "scale": float(np.float32(limb.scale)), "transform": _floats(limb.transform),
        "bounds_min": _floats(limb.bounds_min), "bounds_max": _floats(limb.bounds_max),
        "size": [int(v) for v in limb.size], "normal_type": int(limb.normal_type),
        "spans": _pack(start + end + bytes(limb.span_data)), "columns": len(limb.span_start),
    }, separators=(",", ":"))


def _limb(text: Any) -> Limb | None:
    try:
        d = json.loads(text)
        n = int(d["columns"])
        raw = _unpack(d["spans"])
        limb = Limb(name=base64.b64decode(d["name"]), index=int(d["index"]),
                    unknown1=int(d["unknown1"]), unknown2=int(d["unknown2"]),
                    span_start=np.frombuffer(raw[:4 * n], "<i4").astype(np.int32),
                    span_end=np.frombuffer(raw[4 * n:8 * n], "<i4").astype(np.int32),
                    span_data=raw[8 * n:], scale=float(np.float32(d["scale"])),
                    transform=np.array(d["transform"], np.float32).reshape(3, 4),
                    bounds_min=np.array(d["bounds_min"], np.float32).reshape(3),
                    bounds_max=np.array(d["bounds_max"], np.float32).reshape(3),
                    normal_type=int(d["normal_type"]))
        limb.xsize, limb.ysize, limb.zsize = size = xt.integers(d["size"], 3, 0, 255)
        if n != limb.xsize * limb.ysize or not 0 <= limb.normal_type <= 255 or \
                not all(0 <= v < 2**32 for v in (limb.index, limb.unknown1, limb.unknown2)):
            return None
        check_spans(limb.span_start, limb.span_end, limb.span_data, tuple(size))
        return limb
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, zlib.error):
        return None     # SpanError is a ValueError


def file_extras(doc: VxlFile, palette: np.ndarray, greedy: bool, normals: str) -> str:
    raw = doc.raw_body
    return json.dumps({
        "magic": base64.b64encode(doc.magic).decode("ascii"),
        "palette_count": int(doc.palette_count), "remap": [int(doc.remap_start), int(doc.remap_end)],
        "palette": base64.b64encode(np.asarray(doc.palette, np.uint8).tobytes()).decode("ascii"),
        "scene_palette": base64.b64encode(np.asarray(palette, np.uint8).tobytes()).decode("ascii"),
        "trailing": base64.b64encode(bytes(doc.trailing)).decode("ascii"),
        "raw_body": None if raw is None else [_pack(raw.data),
                                              np.asarray(raw.offsets).reshape(-1).tolist()],
        "limbs": len(doc.limbs), "greedy": bool(greedy), "normals": normals,
    }, separators=(",", ":"))


def hva_extras(hdoc: HvaFile, sections: list[int | None], fps: float) -> str:
    return json.dumps({"hva": _pack(write_hva(hdoc)), "sections": sections, "fps": float(fps)},
                      separators=(",", ":"))


# -- restoring ----------------------------------------------------------------------------------
def _canon(positions: list[np.ndarray], colours: list[np.ndarray | None]
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
    col = None
    if all(c is not None for c in colours):
        col = np.concatenate(colours)[idx]
    return q[idx], col


def _triangles(prims) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    pos, col = [], []
    for p in prims:
        if p.mode != 4 or not len(p.positions):
            continue
        idx = (p.indices if p.indices is not None else np.arange(len(p.positions))).astype(np.int64)
        t = idx.reshape(-1, 3)
        pos.append(np.asarray(p.positions, np.float64)[t])
        col.append(None if p.colors is None else np.asarray(p.colors, np.float64)[t][:, :, :3].mean(1))
    return pos, col


def _unchanged(scene: Scene, node: Node, limb: Limb, kept: dict) -> bool:
    from .scene import _limb_mesh
    pal = kept["scene_palette"]
    lin = srgb_to_linear(pal / 255.0).astype(np.float32)
    try:
        grid = limb.voxels()
    except ValueError:
        return False
    mesh = _limb_mesh(grid, limb, lin, kept["remap"], kept["greedy"], kept["normals"],
                      (0, 1))
    a, ca = _canon(*_triangles(mesh.primitives))
    prims = scene.meshes[node.mesh].primitives if node.mesh is not None else []
    b, cb = _canon(*_triangles(prims))
    if a.shape != b.shape or not np.array_equal(a, b):
        return False
    return ca is None or cb is None or bool(np.allclose(ca, cb, atol=0.01))


def _revoxelise(scene: Scene, node: Node, limb: Limb, palette: np.ndarray) -> None:
    """Voxelise the node's mesh again in the limb's own grid (size, bounds, normal table)."""
    mask, colour = voxelise_in_grid(scene, node, limb, palette)
    limb.set_voxels(VoxelGrid(colour, normal_indices(mask, limb.normal_type), mask))


def voxelise_in_grid(scene: Scene, node: Node, limb: Limb, palette: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(mask, colour) of the node's mesh voxelised in the grid of ``limb`` (size and bounds;
    colours the nearest ``palette`` entry other than 0). Also used by :mod:`.vox_keep`."""
    from .voxelize import LIMITS, fill_solid, surface_samples, voxelize_triangles
    size = np.maximum(np.array(limb.size, np.int64), 1)
    b0 = np.asarray(limb.bounds_min, np.float64)
    k = (np.asarray(limb.bounds_max, np.float64) - b0) / size
    k = np.where(np.isfinite(k) & (np.abs(k) > 1e-9), k, 1.0)
    prims = scene.meshes[node.mesh].primitives if node.mesh is not None else []
    pos, col = _triangles(prims)
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
        cells, vals = voxelize_triangles(local, corner_rgb, tuple(int(v) for v in size))
        mask[tuple(cells.T)] = True
        srgb = np.rint(linear_to_srgb(vals[:, :3]) * 255)
        pal = np.asarray(palette, np.float64)
        d = ((srgb[:, None, :] - pal[None, 1:]) ** 2).sum(-1)    # nearest palette entry (not 0)
        colour[tuple(cells.T)] = 1 + np.argmin(d, axis=1)
        mask = fill_solid(mask, colour)
    return mask, colour


def _node_matrices(scene: Scene, ni: int, times: np.ndarray) -> np.ndarray:
    """(frames, 4, 4) local matrices of node ``ni`` at ``times`` (rest where no channel)."""
    n = scene.nodes[ni]
    f = len(times)
    T = np.repeat(np.asarray(n.translation, np.float64)[None], f, 0)
    R = np.repeat(np.asarray(n.rotation, np.float64)[None], f, 0)
    S = np.repeat(np.asarray(n.scale, np.float64)[None], f, 0)
    for a in scene.animations[:1]:
        for c in a.channels:
            if c.node == ni:
                v = c.sample(times)
                {"translation": T, "rotation": R, "scale": S}[c.path][:] = v
    return compose_trs(T, R, S)


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
        import copy

        from ...units import scale_scene
        scene = scale_scene(copy.deepcopy(scene), 1.0 / float(loaded_scale))   # back to voxels
        root = next(n for n in scene.nodes if FILE_KEY in n.extras)
    kept = _file_record(root.extras[FILE_KEY])
    if kept is None:
        return None
    limb_nodes = [i for i, n in enumerate(scene.nodes) if LIMB_KEY in n.extras]
    if any(n.mesh is not None and LIMB_KEY not in n.extras for n in scene.nodes):
        return None
    limbs = [_limb(scene.nodes[i].extras[LIMB_KEY]) for i in limb_nodes]
    if not limbs or any(limb is None for limb in limbs) or len(limbs) != kept.get("limbs"):
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
    doc = VxlFile(magic=kept["magic"], palette_count=kept["palette_count"],
                  remap_start=kept["remap"][0], remap_end=kept["remap"][1],
                  palette=palette, limbs=limbs, trailing=kept["trailing"])
    if kept["raw_body"] is not None and not edited:
        doc.raw_body = RawBody(*kept["raw_body"])
    return {"": doc, ".hva": _restore_hva(scene, root, limb_nodes, limbs)}


def _restore_hva(scene: Scene, root: Node, nodes: list[int], limbs: list[Limb]) -> HvaFile:
    """The kept ``.hva`` when the nodes still give its matrices, else one made from them."""
    from ...binio import Reader
    from .scene import limb_matrices
    hdoc, sections, fps = None, [None] * len(limbs), 6.0
    text = root.extras.get(HVA_KEY)
    if isinstance(text, str):
        try:
            d = json.loads(text)
            hdoc = read_hva(Reader(_unpack(d["hva"]), file="kept.hva"))
            n_sec = hdoc.matrices.shape[1] if hdoc.frames else 0
            sections = [None if v is None else xt.integer({0: v}, 0, -1, 0, n_sec - 1)
                        for v in d["sections"]]
            fps = xt.number(d, "fps", -1.0, 1e-3, 1e6)
            if not isinstance(d["sections"], list) or -1 in sections or fps < 0:
                raise ValueError("kept HVA record out of range")
        except (ValueError, KeyError, TypeError, AttributeError, zlib.error, RetromeshError):
            # damaged extras: a new HVA from the scene
            hdoc, sections, fps = None, [None] * len(limbs), 6.0
    frames = max(hdoc.frames, 1) if hdoc is not None else 1
    times = np.arange(frames, dtype=np.float64) / fps
    got = [_vxl_frames(scene, ni, times) for ni in nodes]
    if hdoc is not None and len(sections) == len(limbs):
        ok = True
        for g, limb, sec in zip(got, limbs, sections):
            want = limb_matrices(limb, None if sec is None or hdoc.frames == 0
                                 else hdoc.matrices[:, sec])
            if len(want) == 1:
                want = np.repeat(want, frames, 0)
            if not np.allclose(g, want, atol=1e-4 * max(1.0, float(np.abs(want).max()))):
                ok = False
                break
        if ok:
            return hdoc
        if hdoc.frames:                 # the kept file's sections, with the scene's matrices
            new = _hva_matrices(got, limbs)
            mats = np.array(hdoc.matrices, np.float32, copy=True)
            for li, sec in enumerate(sections):
                if sec is not None:
                    mats[:, sec] = new[:, li]
            return HvaFile(name=hdoc.name, section_names=list(hdoc.section_names),
                           matrices=mats, trailing=hdoc.trailing)
    names = [limb.name.split(b"\0", 1)[0].ljust(16, b"\0")[:16] for limb in limbs]
    return HvaFile(name=hdoc.name if hdoc is not None else b"retromesh".ljust(16, b"\0"),
                   section_names=names, matrices=_hva_matrices(got, limbs))
