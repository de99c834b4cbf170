"""Scene -> glTF 2.0 (GLB, or .gltf + .bin).

The JSON model is ours (:mod:`.model`); the binary buffer is assembled here with numpy (one bufferView
per accessor, 4-byte aligned, targets set for vertex and index data). The GLB container (12-byte
header, JSON chunk padded with spaces, BIN chunk padded with zeros; :mod:`.container`) is written
part by part (:func:`glb_parts`): the accessors' arrays go to the file as they are, never joined
into one more copy of the output in memory.

What the writer does so that every output passes the Khronos validator:
- normals are computed (area-weighted) when a primitive has none, and re-normalised;
  tangents get unit xyz and w = +-1; colours are clamped to 0..1;
- weights are renormalised to sum 1 and unused joint slots are set to joint 0;
- a skinned mesh is put on a root node of its own without a transform (glTF ignores the
  transform of a skinned mesh's node; the validator warns about it);
- rotation keys are normalised; animation times are shifted so that every animation starts at 0;
- empty meshes and primitives are left out.
"""
from __future__ import annotations

import base64
import json
import math
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import field
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from ..bigbytes import join
from ..errors import LossWarning
from ..fileio import Parts
from ..geometry import (
    compute_normals,
    gltf_node_trs,
    gltf_weights,
    merge_duplicate_joints,
    unit_rows as _unit,
)
from ..records import record
from ..scene import Primitive, Scene, whole_triangles
from . import model as g
from .container import pack_parts
from .images import add_textures, data_uri_images, inline_image_files, place_image_files, source_dir_of
from .jsonvalues import extras_json

__all__ = ["GltfDocument", "scene_to_gltf", "glb_bytes", "glb_parts", "gltf_files",
           "compute_normals", "json_bytes", "sanitize_weights", "merge_duplicate_joints"]

ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
FLOAT, UBYTE, USHORT, UINT = 5126, 5121, 5123, 5125
_TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}
_F32 = np.dtype(np.float32)
_COMPONENT = {np.dtype(np.float32): FLOAT, np.dtype(np.uint8): UBYTE,
              np.dtype(np.uint16): USHORT, np.dtype(np.uint32): UINT}


@record
class GltfDocument:
    """A glTF asset: the JSON model and its binary buffer (buffer 0).

    ``blob`` is the buffer's bytes. A document made by :func:`scene_to_gltf` holds it as parts
    (its arrays, kept as they are: change the scene's arrays before writing and the output
    changes) until something asks for ``blob``: :func:`glb_parts` writes them one by one, so a
    big GLB is never held whole in memory."""
    gltf: g.GLTF2
    blob: bytes = field(default=b"", repr=False)
    #: external files the JSON refers to that were loaded alongside (uri -> bytes)
    resources: dict[str, bytes] = field(default_factory=dict)
    binary: bool = True
    #: image files to write beside a ``.gltf`` (plain file name -> PNG/JPEG bytes)
    image_files: dict[str, bytes] = field(default_factory=dict)


def _get_blob(self: GltfDocument) -> bytes:
    parts = self.__dict__.get("_parts")
    if parts is not None:
        self.__dict__["_blob"], self.__dict__["_parts"] = join(parts), None
    return self.__dict__.get("_blob", b"")


def _set_blob(self: GltfDocument, value: bytes) -> None:
    self.__dict__["_blob"], self.__dict__["_parts"] = value, None


GltfDocument.blob = property(_get_blob, _set_blob)  # type: ignore[assignment]


def _blob_parts(gdoc: GltfDocument) -> tuple[list[Any], int]:
    """The buffer's parts (bytes-like) and their total size, without joining them."""
    parts = gdoc.__dict__.get("_parts")
    if parts is None:
        blob = gdoc.blob
        return ([blob] if blob else []), len(blob)
    return parts, sum(memoryview(p).nbytes for p in parts)


def _set_blob_parts(gdoc: GltfDocument, parts: list[Any]) -> None:
    gdoc.__dict__["_blob"], gdoc.__dict__["_parts"] = b"", parts


class _Buffer:
    """The binary buffer: the parts (bytes, or C-contiguous arrays kept as they are) are copied
    once, when the GLB (or the ``.bin``) is written."""

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.size = 0
        # plain dicts holding an accessor's / bufferView's fields in the model's order
        # (these are most of a document's objects: no model object to build and encode)
        self.views: list[g.Plain] = []
        self.accessors: list[g.Plain] = []

    def view(self, data: Any, target: int | None = None) -> int:
        pad = (-self.size) % 4
        if pad:
            self.parts.append(b"\0" * pad)
            self.size += pad
        size = data.nbytes if type(data) is np.ndarray else memoryview(data).nbytes
        view = g.Plain(buffer=0, byteOffset=self.size, byteLength=size)
        if target is not None:
            view["target"] = target
        self.views.append(view)
        self.parts.append(data)
        self.size += size
        return len(self.views) - 1

    def accessor(self, arr: np.ndarray, *, target: int | None = None, minmax: bool = False,
                 normalized: bool = False, type_: str | None = None,
                 increasing: bool = False) -> int:
        """``increasing``: ``arr`` is one column in increasing order (key times): its ends are
        its min and max."""
        if not (type(arr) is np.ndarray and arr.flags.c_contiguous):
            arr = np.ascontiguousarray(arr)
        shape = arr.shape
        width = shape[1] if len(shape) == 2 else math.prod(shape[1:])
        acc = g.Plain(bufferView=self.view(arr, target), componentType=_COMPONENT[arr.dtype])
        if normalized:
            acc["normalized"] = True
        acc["count"] = len(arr)
        acc["type"] = type_ or _TYPES[width]
        if increasing and len(arr):
            acc["max"], acc["min"] = [arr[-1].item()], [arr[0].item()]
        elif minmax and len(arr):
            flat = arr.reshape(len(arr), width)
            acc["max"], acc["min"] = _column_bounds(flat)
        self.accessors.append(acc)
        return len(self.accessors) - 1

    def float_rows(self, arr: np.ndarray) -> int:
        """``accessor(arr)`` of a C-contiguous 2-D float32 array (a channel's keys: a model
        has hundreds), without the general case's tests."""
        self.accessors.append(g.Plain(bufferView=self.view(arr), componentType=FLOAT,
                                      count=len(arr), type=_TYPES[arr.shape[1]]))
        return len(self.accessors) - 1

    def finish(self) -> tuple[list[Any], int]:
        """The parts, padded to a multiple of 4 bytes, and their size."""
        pad = (-self.size) % 4
        if pad:
            self.parts.append(b"\0" * pad)
            self.size += pad
        parts, self.parts = self.parts, []
        return parts, self.size


def _column_bounds(flat: np.ndarray) -> tuple[list, list]:
    """Each column's max and min (Python floats, float32 exactly, or ints). From 256 rows on
    (below, the copy and the tests cost more) the columns are copied side by side first:
    numpy's reduction over the rows of a (n, 3) array costs about 45 ns a row (a 60,000-vertex
    mesh: 2.7 ms, 0.1 ms so). Which of -0.0 and 0.0 a zero bound is depends on the order of
    comparison when a column holds both: then, and for a NaN, the bounds come from the
    reduction over the rows as before."""
    if len(flat) >= 256:
        columns = np.ascontiguousarray(flat.T)
        hi, lo = columns.max(axis=1), columns.min(axis=1)
        if not (np.isnan(hi).any() or np.isnan(lo).any()):
            if flat.dtype.kind != "f" or all(_zeros_alike(columns[c]) for c in
                                              np.flatnonzero((hi == 0) | (lo == 0)).tolist()):
                return hi.tolist(), lo.tolist()
    return flat.max(axis=0).tolist(), flat.min(axis=0).tolist()


def _zeros_alike(column: np.ndarray) -> bool:
    """Whether the zeros of ``column`` are all 0.0 or all -0.0."""
    signs = np.signbit(column[column == 0])
    return bool(signs.all()) or not signs.any()


def sanitize_weights(joints: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights >= 0 summing to 1 in float32, joints of zero weights set to 0
    (:func:`retromesh.geometry.gltf_weights`, which the families also use to know what a GLB
    holds)."""
    j, w, empty = gltf_weights(joints, weights, merge=False)
    if empty:
        warnings.warn(f"{empty} vertices had no weight; bound to joint 0",
                      LossWarning, stacklevel=3)
    return j, w


def _unit_rotations(tracks: list[np.ndarray]) -> Iterator[np.ndarray]:
    """Each track's quaternions made unit (``_unit``), all tracks in one pass."""
    if not tracks:
        return iter(())
    joined = _unit(np.concatenate(tracks), fallback=(0.0, 0.0, 0.0, 1.0))
    ends = list(accumulate(len(t) for t in tracks))
    # (slices: np.split's own loop costs more than a model's few dozen tracks)
    return (joined[a:b] for a, b in zip([0, *ends[:-1]], ends))


def _tangents(t: np.ndarray) -> np.ndarray:
    xyz = _unit(t[:, :3], fallback=(1.0, 0.0, 0.0))
    wsign = np.where(t[:, 3] < 0, -1.0, 1.0).astype(np.float32)
    return np.concatenate([xyz, wsign[:, None]], axis=1)


def _finite(a: np.ndarray) -> np.ndarray:
    """``np.nan_to_num(a)``, but ``a`` itself when all is finite (the usual case: one test,
    where ``nan_to_num`` costs a dozen numpy calls)."""
    a = np.asarray(a)
    return a if np.isfinite(a).all() else np.nan_to_num(a)


def _primitive(buf: _Buffer, p: Primitive, material_map: dict[int, int]) -> g.Model | None:
    if len(p.positions) == 0 or (p.indices is not None and len(p.indices) == 0):
        return None
    if p.mode == 4 and p.indices is None and len(p.positions) % 3:
        warnings.warn(f"a non-indexed triangle list of {len(p.positions)} vertices: the "
                      "incomplete last triangle is dropped", LossWarning, stacklevel=3)
        p = whole_triangles(p)
        if len(p.positions) == 0:
            return None
    attrs: dict[str, int] = {}
    pos = p.positions
    if not np.isfinite(pos).all():
        warnings.warn("non-finite vertex positions replaced by 0", LossWarning, stacklevel=3)
        pos = np.nan_to_num(pos, nan=0.0, posinf=0.0, neginf=0.0).astype(np.float32)
    attrs["POSITION"] = buf.accessor(pos, target=ARRAY_BUFFER, minmax=True)
    if p.mode == 4:
        if p.normals is not None:
            normals = _unit(p.normals)
            bad = np.einsum("ij,ij->i", p.normals, p.normals) < 1e-24
            if np.any(bad):
                normals[bad] = compute_normals(pos, p.indices)[bad]
        else:
            normals = compute_normals(pos, p.indices)
        attrs["NORMAL"] = buf.accessor(normals, target=ARRAY_BUFFER)
        if p.tangents is not None:
            attrs["TANGENT"] = buf.accessor(_tangents(p.tangents), target=ARRAY_BUFFER)
    elif p.normals is not None:
        attrs["NORMAL"] = buf.accessor(_unit(p.normals), target=ARRAY_BUFFER)
    for i, uv in enumerate(p.uvs):
        uv = uv if np.isfinite(uv).all() else np.nan_to_num(uv)
        attrs[f"TEXCOORD_{i}"] = buf.accessor(uv.astype(np.float32, copy=False),
                                              target=ARRAY_BUFFER)
    if p.colors is not None:
        colors = _finite(p.colors)
        attrs["COLOR_0"] = buf.accessor(np.clip(colors, 0, 1).astype(np.float32, copy=False),
                                        target=ARRAY_BUFFER)
    if p.joints is not None:
        assert p.weights is not None            # Scene.validate: joints come with weights
        j, w = sanitize_weights(p.joints, p.weights)
        j, w = merge_duplicate_joints(j, w)
        jt = j.astype(np.uint8) if int(j.max(initial=0)) < 256 else j
        attrs["JOINTS_0"] = buf.accessor(jt, target=ARRAY_BUFFER)
        attrs["WEIGHTS_0"] = buf.accessor(w, target=ARRAY_BUFFER)
    for name, values in p.attributes.items():         # application-specific: "_NAME"
        if name.startswith("_") and name not in attrs:
            attrs[name] = buf.accessor(_finite(values).astype(np.float32, copy=False),
                                       target=ARRAY_BUFFER)
    prim = g.Primitive(attributes=g.Attributes(**attrs), mode=p.mode if p.mode != 4 else None)
    if p.indices is not None:
        idx = p.indices
        idx = idx.astype(np.uint16 if len(pos) <= 65535 else np.uint32, copy=False)
        prim.indices = buf.accessor(idx, target=ELEMENT_ARRAY_BUFFER)
    if p.material is not None:
        prim.material = material_map.get(p.material)
    if p.variants:
        prim.extensions = {"KHR_materials_variants": {"mappings": [
            {"material": material_map[m], "variants": [int(v) for v in vs]}
            for m, vs in p.variants if vs]}}
    targets = []
    for t in p.targets:
        td = {}
        if t.positions is not None:
            td["POSITION"] = buf.accessor(t.positions, target=ARRAY_BUFFER, minmax=True)
        if t.normals is not None:
            td["NORMAL"] = buf.accessor(t.normals, target=ARRAY_BUFFER)
        targets.append(td)
    if targets:
        prim.targets = targets
    if p.extras:
        prim.extras = extras_json(p.extras)
    return prim


def _folders(texture_path: Any) -> list[Path]:
    if texture_path is None:
        return []
    if isinstance(texture_path, (str, os.PathLike)):
        return [Path(texture_path)]
    return [Path(p) for p in texture_path]


def _unit_interval(c: Any) -> float:
    """``float(np.clip(c, 0, 1))`` for one number, without a numpy call."""
    return min(max(float(c), 0.0), 1.0)


def _column(nodes: list, attr: str, width: int) -> np.ndarray:
    """(n, width) float64 of every node's ``attr``."""
    return np.array([getattr(n, attr) for n in nodes], np.float64).reshape(len(nodes), width)


def _add_materials(doc: g.GLTF2, scene: Scene, texture_map: list[int], used_ext: set[str]
                   ) -> None:
    """The scene's materials into ``doc`` (the extensions they use added to ``used_ext``)."""
    for m in scene.materials:
        pbr = g.PbrMetallicRoughness(baseColorFactor=[_unit_interval(c) for c in m.base_color],
                                     metallicFactor=float(m.metallic),
                                     roughnessFactor=float(m.roughness))
        if m.base_color_texture is not None:
            ref = m.base_color_texture
            info = g.TextureInfo(index=texture_map[ref.texture], texCoord=ref.texcoord or None)
            if ref.has_transform:
                info.extensions = {"KHR_texture_transform": {
                    "offset": [float(x) for x in ref.offset], "scale": [float(x) for x in ref.scale],
                    "rotation": float(ref.rotation)}}
                used_ext.add("KHR_texture_transform")
            pbr.baseColorTexture = info
        mat = g.Material(name=m.name or None, pbrMetallicRoughness=pbr,
                         emissiveFactor=[_unit_interval(c) for c in m.emissive],
                         alphaMode=m.alpha_mode,
                         alphaCutoff=float(m.alpha_cutoff) if m.alpha_mode == "MASK" else None,
                         doubleSided=bool(m.double_sided),
                         extras=extras_json(m.extras) if m.extras else None)
        if m.unlit:
            mat.extensions = {"KHR_materials_unlit": {}}
            used_ext.add("KHR_materials_unlit")
        doc.materials.append(mat)


def _add_nodes(doc: g.GLTF2, scene: Scene, mesh_map: dict[int, int], skin_map: dict[int, int]
               ) -> list[int]:
    """The scene's nodes into ``doc``; returns the root nodes added for skinned meshes."""
    parents = scene.parents()
    skinned_roots: list[int] = []
    moved: list[tuple[int, int, str]] = []
    trs, (still_t, still_r, still_s) = gltf_node_trs(
        *(_column(scene.nodes, a, w) for a, w in (("translation", 3), ("rotation", 4), ("scale", 3))))
    t_all, r_all, s_all = (a.tolist() for a in trs)
    for i, n in enumerate(scene.nodes):
        node = g.Node(name=n.name or None, children=list(n.children) or None,
                      extras=extras_json(n.extras) if n.extras else None)
        if not still_t[i]:
            node.translation = t_all[i]
        if not still_r[i]:
            node.rotation = r_all[i]
        if not still_s[i]:
            node.scale = s_all[i]
        gmesh = mesh_map.get(n.mesh) if n.mesh is not None else None
        gskin = skin_map.get(n.skin) if n.skin is not None else None
        if gmesh is not None and gskin is not None and (
                parents[i] >= 0 or node.translation or node.rotation or node.scale):
            moved.append((gmesh, gskin, n.name))
            gmesh = gskin = None
        node.mesh, node.skin = gmesh, gskin
        doc.nodes.append(node)
    for gmesh, gskin, name in moved:
        doc.nodes.append(g.Node(name=f"{name}_skinned" if name else None, mesh=gmesh, skin=gskin))
        skinned_roots.append(len(doc.nodes) - 1)
    return skinned_roots


def _add_animations(doc: g.GLTF2, scene: Scene, buf: _Buffer) -> None:
    """The scene's animations into ``doc`` (times shifted to start at 0, rotations unit)."""
    for a in scene.animations:
        if not a.channels:
            continue
        start = min(float(c.times[0]) for c in a.channels)
        shift = -start if start < 0 else 0.0
        ga = g.Animation(name=a.name or None, extras=extras_json(a.extras) if a.extras else None)
        seen: set[tuple[int, str]] = set()
        input_cache: dict[bytes, int] = {}
        rotations = _unit_rotations([c.values for c in a.channels if c.path == "rotation"])
        samplers, channels = ga.samplers, ga.channels
        for c in a.channels:
            node, path = c.node, c.path
            values = next(rotations) if path == "rotation" else c.values
            key = (node, path)
            if key in seen:
                warnings.warn(f"animation {a.name!r}: second {path} channel on node {node} "
                              "dropped", LossWarning, stacklevel=3)
                continue
            seen.add(key)
            times = c.times if not shift else (c.times.astype(np.float64) + shift).astype(np.float32)
            tkey = times.tobytes()
            source = input_cache.get(tkey)
            if source is None:
                source = input_cache[tkey] = buf.accessor(times, increasing=True)  # Channel checks it
            if path == "weights":
                out = buf.accessor(values.reshape(-1).astype(np.float32))
            else:
                if not (type(values) is np.ndarray and values.dtype is _F32 and values.ndim == 2
                        and values.flags.c_contiguous):     # (Channel makes them so)
                    values = np.ascontiguousarray(values, dtype=np.float32).reshape(
                        len(values), -1)
                out = buf.float_rows(values)
            samplers.append(g.Plain(input=source, interpolation=c.interpolation, output=out))
            channels.append(g.Plain(sampler=len(samplers) - 1, target={"node": node, "path": path}))
        doc.animations.append(ga)


def scene_to_gltf(scene: Scene, *, embed_images: bool = True,
                  texture_path: Iterable[str | os.PathLike] | str | os.PathLike = (),
                  image_dir: str | os.PathLike | None = None, external_images: bool = False,
                  generator: str = "retromesh", validate: bool = True) -> GltfDocument:
    """The glTF asset of ``scene``.

    ``embed_images``: look the textures the scene names up (beside the source file, in the
    game's usual folders and in ``texture_path``; see :mod:`retromesh.textures`) and put the
    ones found into the asset; the others warn :class:`~retromesh.MissingTextureWarning` and
    get the embedded placeholder image (:mod:`.placeholder`), or, with ``external_images``,
    stay relative references. Images the scene carries are always put in.
    ``image_dir`` overrides the source folder the scene names; ``external_images`` keeps the
    images as files to write beside a ``.gltf`` (``GltfDocument.image_files``).
    ``validate=False`` skips :meth:`Scene.validate` for a scene checked just before.
    """
    if validate:
        scene.validate()
    buf = _Buffer()
    doc = g.GLTF2(asset=g.Asset(version="2.0", generator=generator))
    used_ext: set[str] = set()

    texture_map, image_files = add_textures(
        scene, doc, buf.view, embed_images=embed_images, texture_path=_folders(texture_path),
        source_dir=source_dir_of(scene, image_dir), external=external_images)

    _add_materials(doc, scene, texture_map, used_ext)

    material_map = {i: i for i in range(len(scene.materials))}
    mesh_map: dict[int, int] = {}
    for mi, mesh in enumerate(scene.meshes):
        prims = [p for p in (_primitive(buf, p, material_map) for p in mesh.primitives) if p]
        if not prims:
            continue
        gm = g.Mesh(name=mesh.name or None, primitives=prims,
                    extras=extras_json(mesh.extras) if mesh.extras else None)
        n_targets = {len(p.targets) for p in mesh.primitives}
        if mesh.weights and n_targets == {len(mesh.weights)}:
            gm.weights = [float(w) for w in mesh.weights]
        mesh_map[mi] = len(doc.meshes)
        doc.meshes.append(gm)

    skin_map: dict[int, int] = {}
    for si, skin in enumerate(scene.skins):
        gs = g.Skin(name=skin.name or None, joints=list(skin.joints), skeleton=skin.skeleton,
                    extras=extras_json(skin.extras) if skin.extras else None)
        if skin.inverse_bind_matrices is not None:
            ibm = np.array(skin.inverse_bind_matrices, dtype=np.float64)
            ibm[:, 3, :] = (0.0, 0.0, 0.0, 1.0)
            col_major = np.ascontiguousarray(ibm.transpose(0, 2, 1), dtype=np.float32).reshape(-1, 16)
            gs.inverseBindMatrices = buf.accessor(col_major, type_="MAT4")
        skin_map[si] = len(doc.skins)
        doc.skins.append(gs)

    skinned_roots = _add_nodes(doc, scene, mesh_map, skin_map)

    doc.scenes.append(g.Scene(name=scene.name or None, nodes=list(scene.roots) + skinned_roots))
    for name, roots in scene.extra_scenes:
        doc.scenes.append(g.Scene(name=name or None, nodes=list(roots)))
    doc.scene = 0

    _add_animations(doc, scene, buf)

    extras = {k: v for k, v in scene.extras.items() if k != "source_dir"}   # a local folder
    if extras:
        doc.extras = extras_json(extras)
    if scene.variants:      # (never in extensionsRequired: viewers without it show the default)
        doc.extensions = {"KHR_materials_variants": {
            "variants": [{"name": n} for n in scene.variants]}}
        used_ext.add("KHR_materials_variants")
    doc.extensionsUsed = sorted(used_ext) or []
    doc.accessors = buf.accessors
    doc.bufferViews = buf.views
    if doc.extras and doc.scenes:       # on the default scene: where Blender's importer keeps them
        doc.scenes[0].extras, doc.extras = doc.extras, None
    parts, size = buf.finish()
    if size:
        doc.buffers = [g.Buffer(byteLength=size)]
    gdoc = GltfDocument(doc, image_files=image_files, binary=not external_images)
    _set_blob_parts(gdoc, parts)
    return gdoc


def json_bytes(doc: g.GLTF2) -> bytes:
    text = doc.gltf_to_json(separators=(",", ":"), indent=None)
    return text.encode("utf-8")


def _inline_images(gdoc: GltfDocument) -> None:
    """Move the image files of a document made for ``.gltf`` into its buffer (for a GLB)."""
    if not gdoc.image_files:
        return
    doc = gdoc.gltf
    parts, size = _blob_parts(gdoc)
    parts = list(parts)

    def view(data: bytes) -> int:
        nonlocal size
        pad = (-size) % 4
        parts.append(b"\0" * pad)
        doc.bufferViews.append(g.Plain(buffer=0, byteOffset=size + pad, byteLength=len(data)))
        parts.append(data)
        size += pad + len(data)
        return len(doc.bufferViews) - 1

    inline_image_files(doc, gdoc.image_files, view)
    _set_blob_parts(gdoc, parts)
    if not doc.buffers:
        doc.buffers = [g.Buffer(byteLength=size)]
    gdoc.image_files = {}
    gdoc.binary = True


def glb_parts(gdoc: GltfDocument) -> Parts:
    """The GLB as parts to write one after another (header, JSON chunk, BIN chunk header, the
    buffer's arrays): no copy of the buffer is made."""
    _inline_images(gdoc)
    doc = gdoc.gltf
    blob, size = _blob_parts(gdoc)
    if doc.buffers:
        doc.buffers[0].uri = None
        doc.buffers[0].byteLength = size
    return pack_parts(json_bytes(doc), blob if doc.buffers else None)


def glb_bytes(gdoc: GltfDocument) -> bytes:
    """The GLB file's bytes (:func:`glb_parts` joined)."""
    return bytes(glb_parts(gdoc))


def gltf_files(gdoc: GltfDocument, path: Path, *, embed_buffer: bool = False) -> dict[Path, bytes]:
    """``.gltf`` JSON plus its ``.bin`` and image files beside it (or data URIs when
    ``embed_buffer``). Nothing is written outside ``path``'s folder.

    The external files of a read document (``resources``) are written beside ``path`` under a
    safe base name (:func:`retromesh.safenames.safe_name`): a URI such as ``../../x`` or
    ``/etc/passwd`` in the input becomes ``x``/``passwd`` in the output folder (the JSON is
    updated and a LossWarning says so); a ``data:`` URI is never a file name.
    """
    from urllib.parse import quote

    from ..safenames import safe_name
    doc = gdoc.gltf
    files: dict[Path, bytes] = {}
    bin_path = path.with_suffix(".bin")
    # buffer 0 holds ``blob`` (GLB or scene_to_gltf); a read .gltf keeps its own buffer files
    own_blob = bool(doc.buffers) and (bool(gdoc.blob) or doc.buffers[0].uri is None)
    if own_blob:
        if embed_buffer:
            doc.buffers[0].uri = ("data:application/octet-stream;base64,"
                                  + base64.b64encode(gdoc.blob).decode("ascii"))
        else:
            doc.buffers[0].uri = bin_path.name.replace(" ", "%20")
        doc.buffers[0].byteLength = len(gdoc.blob)
    if embed_buffer:
        data_uri_images(doc, gdoc.image_files)
        images: dict[Path, bytes] = {}
    else:
        images = place_image_files(doc, gdoc.image_files, path.parent)
    taken = {path.name.lower()} | ({bin_path.name.lower()} if own_blob and not embed_buffer else set())
    taken |= {p.name.lower() for p in images}
    renamed: dict[str, str] = {}
    for uri, data in gdoc.resources.items():
        if uri.startswith("data:"):
            continue
        name = safe_name(_unquote(uri), default="buffer.bin")
        stem, dot, ext = name.rpartition(".")
        k = 1
        while name.lower() in taken:
            name = f"{stem or ext}_{k}{dot}{ext if stem else ''}"
            k += 1
        taken.add(name.lower())
        renamed[uri] = quote(name)
        if renamed[uri] != uri:
            warnings.warn(LossWarning(f"resource {uri[:80]!r} written as {name!r} in the output's "
                                      "folder"), stacklevel=3)
        files[path.parent / name] = data
    for item in list(doc.buffers or []) + list(doc.images or []):
        if getattr(item, "uri", None) in renamed:
            item.uri = renamed[item.uri]
    files = {path: json.dumps(json.loads(json_bytes(doc)), indent=1).encode("utf-8"), **files}
    if own_blob and not embed_buffer:
        files[bin_path] = gdoc.blob
    files.update(images)
    return files


def _unquote(uri: str) -> str:
    from urllib.parse import unquote
    return unquote(uri)
