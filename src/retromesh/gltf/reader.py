"""glTF 2.0 / GLB -> Scene (the standard library's JSON, numpy for accessors).

Supports what ``from_scene`` of the game formats needs: meshes with every attribute, materials
(base colour, textures, KHR_texture_transform, unlit), skins, animations, node matrices
(decomposed to TRS), morph targets, sparse accessors, data URIs and external buffers.

A glTF file is untrusted input, so the reader validates before it builds anything:

- JSON parsed by ``json`` (bounded size, no NaN/Infinity); every field read through
  :class:`~retromesh.gltf.jsonread.Json` (type, range, length checked: TRS 3/4/3, matrix 16);
- bufferViews inside their buffer; accessors: known componentType/type, byteStride positive,
  >= the element size and <= 252, ``byteOffset + (count-1)*stride + size`` inside the view;
  sparse indices/values inside their views and below ``count``; an accessor without bufferView
  is zeros, counted against ``LIMITS["accessor_bytes"]`` before it is allocated;
- indices below the vertex count; every attribute of a primitive with the same count;
- the node graph: children in range, one parent each, no cycle; scene roots parentless;
- buffer URIs: ``data:`` (strict base64) or a regular file inside the glTF's folder
  (:mod:`retromesh.safenames`); never ``..``, an absolute path, a symlink out or a device.

Strided accessors are copied with plain slicing (never ``as_strided``): a negative or huge
byteStride once made numpy read outside the buffer (segfault / heap bytes in the mesh).
Writing a read document back keeps its JSON as it was read but for the buffer and image URIs
(:mod:`retromesh.gltf.jsontree`); ``read`` checks every part of the JSON that writing back and
``retromesh info`` use (the top-level arrays, buffers, images), so those raise FormatError too.
"""
from __future__ import annotations

import base64
import binascii
import re
import warnings
from pathlib import Path
from typing import overload
from urllib.parse import unquote_to_bytes

import numpy as np

from ..binio import Reader
from ..errors import FormatError, LimitError, LossWarning
from ..safenames import UnsafePath, contained_file, relative_reference
from ..scene import (
    Animation,
    Channel,
    Material,
    Mesh,
    MorphTarget,
    Node,
    Primitive,
    Scene,
    Skin,
    Texture,
    TextureRef,
)
from ..transforms import decompose_trs
from .container import JSON_AT, unpack
from .jsonread import LIMITS, Json, parse_json
from .jsontree import JsonTree, tree
from .placeholder import is_placeholder
from .writer import GltfDocument

__all__ = ["read_glb", "read_gltf_json", "gltf_to_scene", "LIMITS"]

_DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32,
           5126: np.float32}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_NORM = {np.int8: 127.0, np.uint8: 255.0, np.int16: 32767.0, np.uint16: 65535.0}
_IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
_DATA_URI = re.compile(r"^data:([^,]*?)(;base64)?,", re.S)


class ReadGltfDocument(GltfDocument):
    """A GltfDocument read from a file: the validated JSON (``json``) and every buffer's bytes
    (``buffer_data``); ``gltf``, the JSON as the writer's model, is made on first use."""

    def __init__(self, data: dict, blob: bytes, resources: dict[str, bytes], binary: bool,
                 buffer_data: list[bytes]) -> None:
        self.json = data
        self.blob = blob
        self.resources = resources
        self.binary = binary
        self.buffer_data = buffer_data
        self.image_files: dict = {}      # images a writer placed beside a .gltf (none when read)
        self._gltf: JsonTree | None = None

    @property  # type: ignore[override]
    def gltf(self) -> JsonTree:
        if self._gltf is None:
            self._gltf = tree(self.json)
        return self._gltf

    @gltf.setter
    def gltf(self, value: JsonTree) -> None:
        self._gltf = value


def read_glb(r: Reader) -> GltfDocument:
    json_text, blob = unpack(r.data, file=r.file)
    return _document(r, parse_json(json_text, r.file, JSON_AT), blob or b"", binary=True)


def read_gltf_json(r: Reader) -> GltfDocument:
    return _document(r, parse_json(r.rest(), r.file), b"", binary=False)


def _data_uri(uri: str, path: str, file: str | None) -> bytes:
    m = _DATA_URI.match(uri)
    if m is None:
        raise FormatError("a data: URI 'data:[type][;base64],...'", file=file, path=path,
                          got=uri[:40])
    body = uri[m.end():]
    limit = LIMITS["buffer_bytes"]
    if len(body) * 3 // 4 > limit:
        raise LimitError(f"a data: URI of at most {limit} bytes (LIMITS['buffer_bytes'])",
                         file=file, path=path, got=len(body) * 3 // 4)
    try:
        if m.group(2):
            return base64.b64decode(body, validate=True)
        return unquote_to_bytes(body)
    except (binascii.Error, ValueError) as exc:
        raise FormatError("a data: URI with valid base64", file=file, path=path,
                          got=str(exc)) from exc


def _document(r: Reader, data: dict, blob: bytes, binary: bool) -> GltfDocument:
    j = Json(data, r.file)
    base: Path | None = getattr(r, "source_path", None)
    resources: dict[str, bytes] = {}
    buffer_data: list[bytes] = []
    for i, b in enumerate(j.array("buffers")):
        path = f"buffers[{i}]"
        length = j.int(b, "byteLength", path, lo=0)
        uri = j.str(b, "uri", path, None)
        if uri is None:
            if not binary or i != 0:
                raise j.fail(path + ".uri", "a URI (only the first buffer of a GLB has none)",
                             "nothing")
            content = blob
        elif uri.startswith("data:"):
            content = _data_uri(uri, path + ".uri", r.file)
        elif base is None:
            raise j.fail(path + ".uri", "a data: URI (a glTF with external buffers must be read "
                         "from a path)", uri[:80])
        else:
            try:
                content = contained_file(base.parent, uri, LIMITS["buffer_bytes"])
            except UnsafePath as exc:
                error = LimitError if "limit" in str(exc) else FormatError
                raise error("a regular file inside the glTF's folder", file=r.file,
                            path=path + ".uri", got=f"{uri[:80]!r}: {exc}") from None
            except OSError as exc:
                raise j.fail(path + ".uri", "a buffer file beside the glTF",
                             f"{uri[:80]!r}: {exc.strerror or exc}") from None
            resources[uri] = content
        if len(content) < length:
            raise j.fail(path + ".byteLength", f"at most the {len(content)} bytes the buffer has",
                         length)
        buffer_data.append(content)
    _check_write_back(j)
    return ReadGltfDocument(data, blob, resources, binary, buffer_data)


#: the top-level arrays of objects that ``retromesh info`` counts and a writer walks
TOP_LEVEL_ARRAYS = ("accessors", "animations", "bufferViews", "buffers", "cameras", "images",
                    "materials", "meshes", "nodes", "samplers", "scenes", "skins", "textures")


def _check_write_back(j: Json) -> None:
    """What writing the document back and ``info`` rely on: the top-level arrays are arrays of
    objects, and an image's ``uri`` / ``mimeType`` are strings and its ``bufferView`` an index
    (the writer renames URIs and moves images between files and the buffer)."""
    for key in TOP_LEVEL_ARRAYS:
        j.array(key)
    views = len(j.array("bufferViews"))
    for i, image in enumerate(j.array("images")):
        path = f"images[{i}]"
        j.str(image, "uri", path, None)
        j.str(image, "mimeType", path, None)
        j.index(image, "bufferView", path, views)


def _json_of(gdoc: GltfDocument) -> tuple[dict, list[bytes]]:
    """The JSON and buffers of any GltfDocument (read, or made by ``scene_to_gltf``)."""
    if isinstance(gdoc, ReadGltfDocument):
        return gdoc.json, gdoc.buffer_data
    import json
    data = json.loads(gdoc.gltf.to_json())
    buffers = []
    for b in data.get("buffers") or []:
        uri = b.get("uri")
        if uri is None:
            buffers.append(gdoc.blob)
        elif uri.startswith("data:"):
            buffers.append(_data_uri(uri, "buffers", None))
        else:
            buffers.append(gdoc.resources.get(uri, b""))
    return data, buffers


class _Accessors:
    def __init__(self, j: Json, buffers: list[bytes]) -> None:
        self.j = j
        self.buffers = buffers
        self.views = j.array("bufferViews")
        self.accessors = j.array("accessors")
        self.cache: dict[tuple[int, bool], np.ndarray] = {}
        self.budget = LIMITS["accessor_bytes"]
        self._checked: set[int] = set()

    def view(self, index: int, path: str) -> tuple[memoryview, int | None]:
        j = self.j
        vpath = f"bufferViews[{index}]"
        v = self.views[index]
        b = j.index(v, "buffer", vpath, len(self.buffers), required=True, what="buffers")
        data = self.buffers[b]
        start = j.int(v, "byteOffset", vpath, 0, lo=0)
        length = j.int(v, "byteLength", vpath, lo=0)
        if start + length > len(data):
            raise j.fail(vpath, f"a range inside the {len(data)} bytes of buffers[{b}]",
                         f"byteOffset {start} + byteLength {length}")
        stride = j.int(v, "byteStride", vpath, None, lo=4, hi=252)
        return memoryview(data)[start:start + length], stride

    def info(self, index: int) -> tuple[dict, np.dtype, int]:
        j = self.j
        path = f"accessors[{index}]"
        a = self.accessors[index]
        ctype = j.choice(a, "componentType", path, tuple(_DTYPES), None)
        if ctype is None:
            raise j.fail(path + ".componentType", "a componentType", "nothing")
        kind = j.choice(a, "type", path, tuple(_WIDTH), None)
        if kind is None:
            raise j.fail(path + ".type", "a type (SCALAR, VEC3...)", "nothing")
        return a, np.dtype(_DTYPES[ctype]).newbyteorder("<"), _WIDTH[kind]

    def _spend(self, nbytes: int, path: str) -> None:
        if nbytes > self.budget:
            raise LimitError(f"accessors decoding to at most {LIMITS['accessor_bytes']} bytes in "
                             "total (LIMITS['accessor_bytes'])", file=self.j.file, path=path,
                             got=f"{nbytes} more bytes")
        self.budget -= nbytes

    def _slice(self, data: memoryview, off: int, count: int, dt: np.dtype, width: int,
               stride: int | None, path: str) -> np.ndarray:
        """``count`` elements of ``width`` x ``dt`` at ``off`` every ``stride`` bytes."""
        elem = dt.itemsize * width
        stride = stride or elem
        if stride < elem:
            raise self.j.fail(path, f"a byteStride of at least the element size {elem}", stride)
        need = off + (count - 1) * stride + elem if count else off
        if need > len(data):
            raise self.j.fail(path, f"byteOffset + (count-1) x stride + {elem} = {need} bytes "
                              f"inside its bufferView of {len(data)}", f"count {count}")
        self._spend(count * elem, path)
        raw = np.frombuffer(data, dtype=np.uint8, count=need - off, offset=off)
        if stride != elem and count:
            padded = np.zeros(count * stride, np.uint8)
            padded[:len(raw)] = raw
            raw = padded.reshape(count, stride)[:, :elem]
        return np.ascontiguousarray(raw).view(dt).reshape(count, width)

    @overload
    def get(self, index: int, *, normalize: bool = True) -> np.ndarray: ...
    @overload
    def get(self, index: int | None, *, normalize: bool = True) -> np.ndarray | None: ...

    def get(self, index: int | None, *, normalize: bool = True) -> np.ndarray | None:
        if index is None:
            return None
        key = (index, normalize)
        if key in self.cache:
            return self.cache[key]
        j = self.j
        path = f"accessors[{index}]"
        a, dt, width = self.info(index)
        count = j.int(a, "count", path, lo=0)
        off = j.int(a, "byteOffset", path, 0, lo=0)
        bv = j.index(a, "bufferView", path, len(self.views), what="bufferViews")
        if bv is None:
            self._spend(count * width * dt.itemsize, path + ".count")
            arr = np.zeros((count, width), dtype=dt)
        else:
            data, stride = self.view(bv, path)
            arr = self._slice(data, off, count, dt, width, stride, path + ".count").copy()
        sp = j.obj(a, "sparse", path)
        if sp is not None:
            self._sparse(arr, sp, path + ".sparse", dt, width)
        if normalize and j.bool(a, "normalized", path) and arr.dtype.type in _NORM:
            arr = np.maximum(arr.astype(np.float32) / _NORM[arr.dtype.type], -1.0)
        self.cache[key] = arr
        return arr

    def _sparse(self, arr: np.ndarray, sp: dict, path: str, dt: np.dtype, width: int) -> None:
        j = self.j
        n = j.int(sp, "count", path, lo=1, hi=len(arr))
        ind = j.obj(sp, "indices", path, required=True)
        vals = j.obj(sp, "values", path, required=True)
        ipath, vpath = path + ".indices", path + ".values"
        ctype = j.choice(ind, "componentType", ipath, (5121, 5123, 5125), None)
        if ctype is None:
            raise j.fail(ipath + ".componentType", "5121, 5123 or 5125", "nothing")
        iview, _ = self.view(j.index(ind, "bufferView", ipath, len(self.views), required=True,
                                     what="bufferViews"), ipath)
        idx = self._slice(iview, j.int(ind, "byteOffset", ipath, 0, lo=0), n,
                          np.dtype(_DTYPES[ctype]).newbyteorder("<"), 1, None, ipath).reshape(-1)
        vview, _ = self.view(j.index(vals, "bufferView", vpath, len(self.views), required=True,
                                     what="bufferViews"), vpath)
        values = self._slice(vview, j.int(vals, "byteOffset", vpath, 0, lo=0), n, dt, width,
                             None, vpath)
        if len(idx) and int(idx.max()) >= len(arr):
            raise j.fail(ipath, f"indices below the accessor's count {len(arr)}", int(idx.max()))
        arr[idx.astype(np.int64)] = values

    @overload
    def typed(self, index: int, path: str, widths: tuple[int, ...], *, floats_only: bool = False,
              normalize: bool = True, finite: bool = False) -> np.ndarray: ...
    @overload
    def typed(self, index: int | None, path: str, widths: tuple[int, ...], *,
              floats_only: bool = False, normalize: bool = True,
              finite: bool = False) -> np.ndarray | None: ...

    def typed(self, index: int | None, path: str, widths: tuple[int, ...], *,
              floats_only: bool = False, normalize: bool = True,
              finite: bool = False) -> np.ndarray | None:
        """An accessor used as ``path``, checked to have one of ``widths`` components (and
        finite values when ``finite``: positions, bind matrices, animation keys; NaN normals,
        UVs or colours are repaired by the writers instead)."""
        if index is None:
            return None
        _, dt, width = self.info(index)
        if width not in widths or (floats_only and dt.kind != "f"):
            kinds = "float " if floats_only else ""
            raise self.j.fail(f"{path} (accessors[{index}])",
                              f"{kinds}accessors of {' or '.join(map(str, widths))} components",
                              f"{width} x {dt.name}")
        arr = self.get(index, normalize=normalize)
        if finite and arr.dtype.kind == "f" and not np.all(np.abs(arr) <= 3.4028234663852886e38):
            raise self.j.fail(f"{path} (accessors[{index}])", "finite numbers", "NaN or infinity")
        return arr


def _matrix(values) -> np.ndarray:
    return np.array(values, dtype=np.float64).reshape(4, 4).T


def gltf_to_scene(gdoc: GltfDocument, *, source: Path | None = None, file: str | None = None) -> Scene:
    data, buffers = _json_of(gdoc)
    j = Json(data, file)
    acc = _Accessors(j, buffers)
    scene = Scene()
    if source is not None:
        scene.extras["source_dir"] = str(Path(source).parent)
    _textures(j, acc, scene)
    _materials(j, scene)
    nodes = j.array("nodes")
    _node_graph(j, nodes)
    _meshes(j, acc, scene)
    for si, s in enumerate(j.array("skins")):
        path = f"skins[{si}]"
        joints = j.indices(s, "joints", path, len(nodes), "nodes")
        if not joints:
            raise j.fail(path + ".joints", "at least one joint", "none")
        ibm = acc.typed(j.index(s, "inverseBindMatrices", path, len(acc.accessors),
                                what="accessors"), path + ".inverseBindMatrices", (16,),
                        floats_only=True, finite=True)
        mats = None
        if ibm is not None:
            if len(ibm) < len(joints):
                raise j.fail(path + ".inverseBindMatrices", f"{len(joints)} matrices", len(ibm))
            mats = ibm[:len(joints)].reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)
        scene.skins.append(Skin(joints=list(joints), inverse_bind_matrices=mats,
                                skeleton=j.index(s, "skeleton", path, len(nodes), what="nodes"),
                                name=j.name(s), extras=j.extras(s)))
    for i, n in enumerate(nodes):
        path = f"nodes[{i}]"
        node = Node(name=j.name(n), children=list(n.get("children") or []),
                    mesh=j.index(n, "mesh", path, len(scene.meshes), what="meshes"),
                    skin=j.index(n, "skin", path, len(scene.skins), what="skins"),
                    extras=j.extras(n))
        matrix = j.nums(n, "matrix", path, 16)
        if matrix is not None and matrix != _IDENTITY:
            with np.errstate(all="ignore"):
                t, r, sc = decompose_trs(_matrix(matrix))
            if not all(np.all(np.abs(v) <= 3.4e38) for v in (t, r, sc)):
                raise j.fail(path + ".matrix", "an affine matrix whose translation, rotation and "
                             "scale fit float32", matrix[:4] + ["..."])
            node.translation, node.rotation, node.scale = t, r, sc
        else:
            for key, width in (("translation", 3), ("rotation", 4), ("scale", 3)):
                values = j.nums(n, key, path, width)
                if values is not None:
                    setattr(node, key, np.array(values, dtype=np.float64))
        if node.skin is not None and node.mesh is None:
            raise j.fail(path + ".skin", "a skin only on a node with a mesh", node.skin)
        scene.nodes.append(node)
    _scenes(j, scene)
    _animations(j, acc, scene)
    scene.variants = _variant_names(j)
    if isinstance(data.get("extras"), dict):   # never a source_dir from the file: it steers texture lookups
        scene.extras.update({k: v for k, v in data["extras"].items() if k != "source_dir"})
    return scene


def _node_graph(j: Json, nodes: list[dict]) -> None:
    """Children in range, one parent each, no cycles (raises FormatError at the node)."""
    parent = [-1] * len(nodes)
    children: list[list[int]] = []
    for i, n in enumerate(nodes):
        kids = j.indices(n, "children", f"nodes[{i}]", len(nodes), "nodes")
        for c in kids:
            if c == i or parent[c] >= 0:
                raise j.fail(f"nodes[{i}].children", "children that have no other parent",
                             f"node {c}, already a child of node {i if c == i else parent[c]}")
            parent[c] = i
        children.append(kids)
    # with one parent per node, a node is in a cycle exactly when no walk down from the
    # parentless nodes reaches it
    reached = [False] * len(nodes)
    stack = [i for i, p in enumerate(parent) if p < 0]
    while stack:
        i = stack.pop()
        reached[i] = True
        stack.extend(children[i])
    if not all(reached):
        i = reached.index(False)
        raise j.fail(f"nodes[{i}].children", "an acyclic node hierarchy", f"a cycle through node {i}")


def _textures(j: Json, acc: _Accessors, scene: Scene) -> None:
    images = j.array("images")
    samplers = j.array("samplers")
    for i, t in enumerate(j.array("textures")):
        path = f"textures[{i}]"
        tex = Texture(name=j.name(t), extras=j.extras(t))
        src = j.index(t, "source", path, len(images), what="images")
        if src is not None:
            img = images[src]
            ipath = f"images[{src}]"
            tex.name = tex.name or j.name(img)
            uri = j.str(img, "uri", ipath, None)
            original = j.extras(img).get("original_uri")
            if uri is not None and uri.startswith("data:"):
                tex.image = _data_uri(uri, ipath + ".uri", j.file)
                tex.mime_type = j.str(img, "mimeType", ipath, None)
            elif uri is not None:
                tex.uri = _texture_reference(original if isinstance(original, str) else uri,
                                             isinstance(original, str), ipath, j)
            else:
                bv = j.index(img, "bufferView", ipath, len(acc.views), what="bufferViews")
                if bv is not None:
                    data, _ = acc.view(bv, ipath)
                    tex.image = bytes(data)
                    tex.mime_type = j.str(img, "mimeType", ipath, None)
            if tex.image is not None and is_placeholder(tex.image):
                # the placeholder of a texture that was not found (extras "placeholder": true;
                # known by its pixels, so an image painted over in an editor that keeps extras
                # stays): the reference it stands for, no bytes (nothing is written for it).
                # Blender drops image extras: the name is then the image's or the texture's
                tex.uri = (original if isinstance(original, str)
                           else j.name(img) or tex.name or "texture.png")
                tex.image = tex.mime_type = None
        sm = j.index(t, "sampler", path, len(samplers), what="samplers")
        if sm is not None:
            wraps = (33071, 33648, 10497)
            tex.wrap_s = j.choice(samplers[sm], "wrapS", f"samplers[{sm}]", wraps, 10497)
            tex.wrap_t = j.choice(samplers[sm], "wrapT", f"samplers[{sm}]", wraps, 10497)
        scene.textures.append(tex)


def _texture_reference(ref: str, is_name: bool, path: str, j: Json) -> str:
    """A texture reference kept relative to the glTF's folder; one that leaves it (``../``,
    an absolute path) is reduced to its file name, with a LossWarning. The name a game file
    gave (``extras.original_uri``) is only a name: texture lookup uses its base name."""
    if is_name:         # extras.original_uri: the name the game file gave, kept verbatim
        return ref
    try:
        return relative_reference(ref)
    except UnsafePath as exc:
        name = unquote_to_bytes(re.split(r"[\\/]", ref)[-1]).decode("utf-8", "replace")
        name = name or "texture.png"
        warnings.warn(LossWarning(f"{j.file or '<data>'}: {path}.uri {ref[:80]!r} leaves the "
                                  f"glTF's folder ({exc}); kept as {name!r}"), stacklevel=4)
        return name


def _materials(j: Json, scene: Scene) -> None:
    for i, m in enumerate(j.array("materials")):
        path = f"materials[{i}]"
        ext = j.obj(m, "extensions", path) or {}
        mat = Material(name=j.name(m),
                       alpha_mode=j.choice(m, "alphaMode", path, ("OPAQUE", "MASK", "BLEND"),
                                           "OPAQUE"),
                       alpha_cutoff=j.num(m, "alphaCutoff", path, 0.5),
                       double_sided=j.bool(m, "doubleSided", path),
                       emissive=tuple(j.nums(m, "emissiveFactor", path, 3, (0.0, 0.0, 0.0))),
                       unlit="KHR_materials_unlit" in ext, extras=j.extras(m))
        pbr = j.obj(m, "pbrMetallicRoughness", path)
        if pbr is not None:
            ppath = path + ".pbrMetallicRoughness"
            mat.base_color = tuple(j.nums(pbr, "baseColorFactor", ppath, 4, (1.0, 1.0, 1.0, 1.0)))
            mat.metallic = j.num(pbr, "metallicFactor", ppath, 1.0)
            mat.roughness = j.num(pbr, "roughnessFactor", ppath, 1.0)
            info = j.obj(pbr, "baseColorTexture", ppath)
            if info is not None:
                tpath = ppath + ".baseColorTexture"
                index = j.index(info, "index", tpath, len(scene.textures), required=True,
                                what="textures")
                ref = TextureRef(texture=index, texcoord=j.int(info, "texCoord", tpath, 0, lo=0,
                                                               hi=31))
                tt = j.obj(j.obj(info, "extensions", tpath) or {}, "KHR_texture_transform",
                           tpath + ".extensions")
                if tt:
                    xpath = tpath + ".extensions.KHR_texture_transform"
                    ref.offset = tuple(j.nums(tt, "offset", xpath, 2, (0.0, 0.0)))
                    ref.scale = tuple(j.nums(tt, "scale", xpath, 2, (1.0, 1.0)))
                    ref.rotation = j.num(tt, "rotation", xpath, 0.0)
                    ref.texcoord = j.int(tt, "texCoord", xpath, ref.texcoord, lo=0, hi=31)
                mat.base_color_texture = ref
        scene.materials.append(mat)


def _meshes(j: Json, acc: _Accessors, scene: Scene) -> None:
    n_acc = len(acc.accessors)
    for mi, m in enumerate(j.array("meshes")):
        mpath = f"meshes[{mi}]"
        mesh = Mesh(name=j.name(m), weights=j.nums(m, "weights", mpath, None, []),
                    extras=j.extras(m))
        prims = j.objects(m, "primitives", mpath)
        for pi, p in enumerate(prims):
            path = f"{mpath}.primitives[{pi}]"
            attrs = j.obj(p, "attributes", path, required=True)
            apath = path + ".attributes"

            def attr(name: str, widths: tuple[int, ...], floats_only: bool = False,
                     normalize: bool = True, attrs: dict = attrs,
                     apath: str = apath) -> np.ndarray | None:
                index = j.index(attrs, name, apath, n_acc, what="accessors")
                return acc.typed(index, f"{apath}.{name}", widths, floats_only=floats_only,
                                 normalize=normalize)

            pos = acc.typed(j.index(attrs, "POSITION", apath, n_acc, what="accessors"),
                            apath + ".POSITION", (3,), floats_only=True, finite=True)
            if pos is None:
                continue
            uvs: list = []                # (a null TEXCOORD_n index gives None, as before)
            while f"TEXCOORD_{len(uvs)}" in attrs:
                uvs.append(attr(f"TEXCOORD_{len(uvs)}", (2,)))
            colors = attr("COLOR_0", (3, 4))
            if colors is not None and colors.shape[1] == 3:
                colors = np.concatenate([colors, np.ones((len(colors), 1), colors.dtype)], axis=1)
            targets = []
            for ti, t in enumerate(j.objects(p, "targets", path)):
                tp = f"{path}.targets[{ti}]"
                targets.append(MorphTarget(
                    positions=acc.typed(j.index(t, "POSITION", tp, n_acc, what="accessors"),
                                        tp + ".POSITION", (3,), floats_only=True, finite=True),
                    normals=acc.typed(j.index(t, "NORMAL", tp, n_acc, what="accessors"),
                                      tp + ".NORMAL", (3,), floats_only=True)))
            indices = acc.typed(j.index(p, "indices", path, n_acc, what="accessors"),
                                path + ".indices", (1,), normalize=False)
            if indices is not None:
                if indices.dtype.kind != "u":
                    raise j.fail(path + ".indices", "an unsigned integer accessor",
                                 indices.dtype.name)
                if len(indices) and int(indices.max()) >= len(pos):
                    raise j.fail(path + ".indices", f"indices below the {len(pos)} vertices",
                                 int(indices.max()))
            mode = j.int(p, "mode", path, 4, lo=0, hi=6)
            if mode == 4 and indices is not None and len(indices) % 3:
                raise j.fail(path + ".indices", "a multiple of 3 indices for triangles",
                             len(indices))
            joints = attr("JOINTS_0", (4,), normalize=False)
            if joints is not None and joints.dtype.kind not in "u":
                raise j.fail(apath + ".JOINTS_0", "unsigned integer joints", joints.dtype.name)
            normals, tangents = attr("NORMAL", (3,), True), attr("TANGENT", (4,), True)
            weights = attr("WEIGHTS_0", (4,))
            material = j.index(p, "material", path, len(scene.materials), what="materials")
            # application-specific attributes ("_NAME"): a scalar one as one value a vertex
            custom = {k: a.astype(np.float32).reshape(len(a), -1).squeeze(1)
                      if a.reshape(len(a), -1).shape[1] == 1 else a.astype(np.float32)
                      for k in attrs if isinstance(k, str) and k.startswith("_")
                      and (a := attr(k, (1, 2, 3, 4))) is not None}
            if mode in (5, 6):      # strips and fans: as triangle lists (Scene holds those)
                indices, mode = _triangulated(indices, len(pos), mode), 4
            try:
                mesh.primitives.append(Primitive(
                    positions=pos, indices=indices, normals=normals, tangents=tangents, uvs=uvs,
                    colors=colors, joints=joints, weights=weights, material=material,
                    targets=targets, mode=mode, extras=j.extras(p),
                    variants=_variant_mappings(j, p, path, len(scene.materials)),
                    attributes=custom))
            except Exception as exc:      # DocumentError or numpy: counts that do not match
                raise FormatError("a consistent primitive (every attribute as many rows as "
                                  "POSITION)", file=j.file, path=path, got=str(exc)) from None
        scene.meshes.append(mesh)


def _triangulated(indices: np.ndarray | None, n: int, mode: int) -> np.ndarray:
    """A triangle strip (5) or fan (6) as a triangle list, as the glTF specification draws
    them (a strip's odd triangles swap their first two corners to keep the winding);
    degenerate triangles (a strip's restarts) are left out."""
    seq = np.arange(n, dtype=np.uint32) if indices is None else indices.astype(np.uint32).reshape(-1)
    k = max(len(seq) - 2, 0)
    i = np.arange(k)
    if mode == 5:
        odd = i % 2 == 1
        tri = np.stack([np.where(odd, seq[i + 1], seq[i]), np.where(odd, seq[i], seq[i + 1]),
                        seq[i + 2]], axis=1) if k else np.zeros((0, 3), np.uint32)
    else:
        tri = np.stack([seq[i + 1], seq[i + 2], np.full(k, seq[0] if len(seq) else 0)],
                       axis=1) if k else np.zeros((0, 3), np.uint32)
    keep = (tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])
    return np.ascontiguousarray(tri[keep], dtype=np.uint32).reshape(-1)


def _variant_mappings(j: Json, p: dict, path: str, n_materials: int
                      ) -> list[tuple[int, list[int]]]:
    """A primitive's KHR_materials_variants mappings (material, variant indices)."""
    ext = j.obj(j.obj(p, "extensions", path) or {}, "KHR_materials_variants",
                path + ".extensions")
    if not ext:
        return []
    n_variants = len(_variant_names(j))
    out = []
    for k, m in enumerate(j.objects(ext, "mappings", path + ".extensions.KHR_materials_variants")):
        mpath = f"{path}.extensions.KHR_materials_variants.mappings[{k}]"
        material = j.index(m, "material", mpath, n_materials, required=True, what="materials")
        out.append((material, j.indices(m, "variants", mpath, n_variants, "variants")))
    return out


def _variant_names(j: Json) -> list[str]:
    ext = j.obj(j.obj(j.data, "extensions", "") or {}, "KHR_materials_variants", "extensions")
    return [j.name(v) for v in j.objects(ext or {}, "variants", "extensions.KHR_materials_variants")]


def _scenes(j: Json, scene: Scene) -> None:
    scenes = j.array("scenes")
    n = len(scene.nodes)
    parents = scene.parents()
    if scenes:
        main = j.index(j.data, "scene", "", len(scenes), what="scenes") or 0
        for i, sc in enumerate(scenes):
            roots = j.indices(sc, "nodes", f"scenes[{i}]", n, "nodes")
            for r in roots:
                if parents[r] >= 0:
                    raise j.fail(f"scenes[{i}].nodes", "root nodes without a parent", r)
            if i == main:
                scene.roots, scene.name = list(roots), j.name(sc)
                # Blender's exporter writes scene-level data there; never a source_dir from a
                # file: it steers texture lookups
                scene.extras.update({k: v for k, v in j.extras(sc).items() if k != "source_dir"})
            else:
                scene.extra_scenes.append((j.name(sc), list(roots)))
    else:
        scene.roots = [i for i, p in enumerate(parents) if p < 0]


def _animations(j: Json, acc: _Accessors, scene: Scene) -> None:
    n_acc = len(acc.accessors)
    for ai, a in enumerate(j.array("animations")):
        apath = f"animations[{ai}]"
        anim = Animation(name=j.name(a) or f"animation{ai}", extras=j.extras(a))
        samplers = j.objects(a, "samplers", apath)
        for ci, c in enumerate(j.objects(a, "channels", apath)):
            path = f"{apath}.channels[{ci}]"
            si = j.index(c, "sampler", path, len(samplers), required=True, what="samplers")
            target = j.obj(c, "target", path, required=True)
            node = j.index(target, "node", path + ".target", len(scene.nodes), what="nodes")
            kind = j.str(target, "path", path + ".target")
            if node is None or kind not in ("translation", "rotation", "scale", "weights"):
                continue          # a channel of an extension (KHR_animation_pointer)
            s = samplers[si]
            spath = f"{apath}.samplers[{si}]"
            interp = j.choice(s, "interpolation", spath, ("LINEAR", "STEP", "CUBICSPLINE"),
                              "LINEAR")
            times = acc.typed(j.index(s, "input", spath, n_acc, required=True, what="accessors"),
                              spath + ".input", (1,), floats_only=True, finite=True)
            values = acc.typed(j.index(s, "output", spath, n_acc, required=True, what="accessors"),
                               spath + ".output", (1, 2, 3, 4), finite=True)
            per_key = 3 if interp == "CUBICSPLINE" else 1
            rows = len(times) * per_key
            if kind == "weights":
                if rows == 0 or values.size % rows:
                    raise j.fail(spath + ".output", f"a multiple of {rows} weights", values.size)
                values = values.reshape(rows, -1)
            try:
                anim.channels.append(Channel(node=node, path=kind, times=times.reshape(-1),
                                             values=values, interpolation=interp))
            except Exception as exc:     # DocumentError: counts, widths, time order
                raise FormatError("a consistent animation channel", file=j.file, path=path,
                                  got=str(exc)) from None
        scene.animations.append(anim)
