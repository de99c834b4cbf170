"""glTF 2.0 / GLB -> Scene (pygltflib for the JSON model, numpy for accessors).

Supports what ``from_scene`` of the game formats needs: meshes with every attribute, materials
(base colour, textures, KHR_texture_transform, unlit), skins, animations, node matrices
(decomposed to TRS), morph targets, sparse accessors, data URIs and external buffers.
"""
from __future__ import annotations

import base64
import json
import warnings
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pygltflib as g

from ..binio import Reader
from ..errors import FormatError, LimitError
from ..scene import (Animation, Channel, Material, Mesh, MorphTarget, Node, Primitive, Scene,
                     Skin, Texture, TextureRef)
from ..transforms import decompose_trs
from .writer import GltfDocument

__all__ = ["read_glb", "read_gltf_json", "gltf_to_scene"]

_DTYPES = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32,
           5126: np.float32}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_NORM = {np.int8: 127.0, np.uint8: 255.0, np.int16: 32767.0, np.uint16: 65535.0}


def read_glb(r: Reader) -> GltfDocument:
    magic, version, length = r.unpack("4sII", "GLB header")
    if magic != b"glTF":
        raise r.fail("the GLB magic 'glTF'", magic, offset=0)
    if version != 2:
        raise r.fail("GLB version 2", version, offset=4)
    if length > r.end:
        raise r.fail(f"a GLB length within the {r.end} bytes of the file", length, offset=8,
                     error=LimitError)
    json_doc = None
    blob = b""
    while r.pos + 8 <= length:
        with r.at(f"chunk@{r.pos}"):
            size, kind = r.unpack("II", "chunk header")
            body = r.raw(size, "chunk data")
        if kind == 0x4E4F534A and json_doc is None:
            json_doc = body
        elif kind == 0x004E4942 and not blob:
            blob = body
    if json_doc is None:
        raise r.fail("a JSON chunk", "none", offset=12)
    return _from_json(r, json_doc, blob, binary=True)


def read_gltf_json(r: Reader) -> GltfDocument:
    return _from_json(r, r.rest(), b"", binary=False)


def _from_json(r: Reader, text: bytes, blob: bytes, binary: bool) -> GltfDocument:
    try:
        data = json.loads(text.decode("utf-8"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            doc = g.GLTF2.from_json(text.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, TypeError, KeyError, AttributeError) as exc:
        raise FormatError("valid glTF JSON", file=r.file, offset=0, got=str(exc)[:200]) from exc
    if not isinstance(data, dict) or "asset" not in data:
        raise FormatError("a glTF JSON object with an 'asset'", file=r.file, offset=0)
    base: Path | None = getattr(r, "source_path", None)
    resources: dict[str, bytes] = {}
    for i, b in enumerate(doc.buffers or []):
        if b.uri is None:
            continue
        if b.uri.startswith("data:"):
            resources[b.uri] = base64.b64decode(b.uri.split(",", 1)[1])
        elif base is not None:
            path = base.parent / unquote(b.uri)
            try:
                resources[b.uri] = path.read_bytes()
            except OSError as exc:
                raise FormatError(f"the buffer file {b.uri!r} beside the glTF", file=r.file,
                                  path=f"buffers[{i}].uri", got=str(exc)) from exc
        else:
            raise FormatError(f"buffer {b.uri!r} (a .gltf with external buffers must be read "
                              "from a path)", file=r.file, path=f"buffers[{i}].uri")
    return GltfDocument(doc, blob, resources, binary=binary)


class _Accessors:
    def __init__(self, gdoc: GltfDocument, file: str | None) -> None:
        self.doc = gdoc.gltf
        self.file = file
        self.buffers: list[bytes] = []
        for b in self.doc.buffers or []:
            self.buffers.append(gdoc.resources[b.uri] if b.uri else gdoc.blob)
        self.cache: dict[int, np.ndarray] = {}

    def fail(self, path: str, expected: str, got=None) -> FormatError:
        return FormatError(expected, file=self.file, path=path, got=got)

    def _view(self, index: int, path: str) -> tuple[memoryview, int | None]:
        views = self.doc.bufferViews or []
        if not 0 <= index < len(views):
            raise self.fail(path, f"a bufferView index below {len(views)}", index)
        v = views[index]
        if not 0 <= v.buffer < len(self.buffers):
            raise self.fail(f"bufferViews[{index}].buffer", "an existing buffer", v.buffer)
        data = self.buffers[v.buffer]
        start = v.byteOffset or 0
        if start < 0 or start + v.byteLength > len(data):
            raise self.fail(f"bufferViews[{index}]", f"a range inside the buffer's {len(data)} "
                            "bytes", f"{start}+{v.byteLength}")
        return memoryview(data)[start:start + v.byteLength], v.byteStride

    def get(self, index: int | None, *, normalize: bool = True) -> np.ndarray | None:
        if index is None:
            return None
        key = index
        if key in self.cache:
            return self.cache[key]
        accs = self.doc.accessors or []
        path = f"accessors[{index}]"
        if not 0 <= index < len(accs):
            raise self.fail(path, f"an accessor index below {len(accs)}", index)
        a = accs[index]
        if a.componentType not in _DTYPES or a.type not in _WIDTH:
            raise self.fail(path, "a known componentType and type", (a.componentType, a.type))
        dt = np.dtype(_DTYPES[a.componentType]).newbyteorder("<")
        width = _WIDTH[a.type]
        count = a.count
        if count < 0 or count > 1 << 31:
            raise self.fail(path, "a sane count", count)
        if a.bufferView is None:
            arr = np.zeros((count, width), dtype=dt)
        else:
            data, stride = self._view(a.bufferView, path)
            off = a.byteOffset or 0
            elem = dt.itemsize * width
            stride = stride or elem
            need = off + (count - 1) * stride + elem if count else 0
            if need > len(data):
                raise self.fail(path, f"{need} bytes inside its bufferView", len(data))
            if stride == elem:
                arr = np.frombuffer(data, dtype=dt, count=count * width, offset=off).reshape(count, width)
            else:
                arr = np.lib.stride_tricks.as_strided(
                    np.frombuffer(data, dtype=np.uint8, offset=off),
                    shape=(count, elem), strides=(stride, 1)).copy().view(dt).reshape(count, width)
        arr = np.array(arr)
        if a.sparse is not None and a.sparse.count:
            sp = a.sparse
            idata, _ = self._view(sp.indices.bufferView, path + ".sparse.indices")
            idx = np.frombuffer(idata, dtype=_DTYPES[sp.indices.componentType],
                                count=sp.count, offset=sp.indices.byteOffset or 0)
            vdata, _ = self._view(sp.values.bufferView, path + ".sparse.values")
            vals = np.frombuffer(vdata, dtype=dt, count=sp.count * width,
                                 offset=sp.values.byteOffset or 0).reshape(-1, width)
            if len(idx) and int(idx.max()) >= count:
                raise self.fail(path + ".sparse", "indices inside the accessor", int(idx.max()))
            arr[idx] = vals
        if normalize and a.normalized and arr.dtype.type in _NORM:
            arr = np.maximum(arr.astype(np.float32) / _NORM[arr.dtype.type], -1.0)
        self.cache[key] = arr
        return arr


def _matrix(values) -> np.ndarray:
    return np.array(values, dtype=np.float64).reshape(4, 4).T


def gltf_to_scene(gdoc: GltfDocument, *, source: Path | None = None, file: str | None = None) -> Scene:
    doc = gdoc.gltf
    acc = _Accessors(gdoc, file)
    scene = Scene()
    if source is not None:
        scene.extras["source_dir"] = str(Path(source).parent)
    for i, t in enumerate(doc.textures or []):
        tex = Texture(name=t.name or "")
        if t.source is not None and 0 <= t.source < len(doc.images or []):
            img = doc.images[t.source]
            tex.name = tex.name or img.name or ""
            original = (img.extras or {}).get("original_uri") if isinstance(img.extras, dict) else None
            if img.uri and not img.uri.startswith("data:"):
                tex.uri = original if isinstance(original, str) else unquote(img.uri)
            elif img.uri:
                tex.image = base64.b64decode(img.uri.split(",", 1)[1])
                tex.mime_type = img.mimeType
            elif img.bufferView is not None:
                data, _ = acc._view(img.bufferView, f"images[{t.source}]")
                tex.image = bytes(data)
                tex.mime_type = img.mimeType
        if t.sampler is not None and 0 <= t.sampler < len(doc.samplers or []):
            s = doc.samplers[t.sampler]
            tex.wrap_s = s.wrapS or 10497
            tex.wrap_t = s.wrapT or 10497
        scene.textures.append(tex)
    for m in doc.materials or []:
        pbr = m.pbrMetallicRoughness
        mat = Material(name=m.name or "", alpha_mode=m.alphaMode or "OPAQUE",
                       alpha_cutoff=m.alphaCutoff if m.alphaCutoff is not None else 0.5,
                       double_sided=bool(m.doubleSided),
                       emissive=tuple(m.emissiveFactor or (0, 0, 0)),
                       unlit="KHR_materials_unlit" in (m.extensions or {}),
                       extras=dict(m.extras or {}))
        if pbr is not None:
            mat.base_color = tuple(pbr.baseColorFactor or (1, 1, 1, 1))
            mat.metallic = 1.0 if pbr.metallicFactor is None else pbr.metallicFactor
            mat.roughness = 1.0 if pbr.roughnessFactor is None else pbr.roughnessFactor
            info = pbr.baseColorTexture
            if info is not None and 0 <= info.index < len(scene.textures):
                ref = TextureRef(texture=info.index, texcoord=info.texCoord or 0)
                tt = (info.extensions or {}).get("KHR_texture_transform")
                if tt:
                    ref.offset = tuple(tt.get("offset", (0.0, 0.0)))
                    ref.scale = tuple(tt.get("scale", (1.0, 1.0)))
                    ref.rotation = float(tt.get("rotation", 0.0))
                    if "texCoord" in tt:
                        ref.texcoord = tt["texCoord"]
                mat.base_color_texture = ref
        scene.materials.append(mat)
    for mi, m in enumerate(doc.meshes or []):
        mesh = Mesh(name=m.name or "", weights=list(m.weights or []), extras=dict(m.extras or {}))
        for pi, p in enumerate(m.primitives):
            a = p.attributes
            pos = acc.get(a.POSITION)
            if pos is None:
                continue
            uvs = []
            k = 0
            while getattr(a, f"TEXCOORD_{k}", None) is not None:
                uvs.append(acc.get(getattr(a, f"TEXCOORD_{k}")))
                k += 1
            colors = acc.get(a.COLOR_0)
            if colors is not None and colors.shape[1] == 3:
                colors = np.concatenate([colors, np.ones((len(colors), 1), np.float32)], axis=1)
            targets = []
            for t in p.targets or []:
                targets.append(MorphTarget(positions=acc.get(t.get("POSITION")),
                                           normals=acc.get(t.get("NORMAL"))))
            try:
                mesh.primitives.append(Primitive(
                    positions=pos, indices=acc.get(p.indices), normals=acc.get(a.NORMAL),
                    tangents=acc.get(a.TANGENT), uvs=uvs, colors=colors,
                    joints=acc.get(a.JOINTS_0, normalize=False), weights=acc.get(a.WEIGHTS_0),
                    material=p.material, targets=targets,
                    mode=4 if p.mode is None else p.mode, extras=dict(p.extras or {})))
            except Exception as exc:
                raise FormatError("a consistent primitive", file=file,
                                  path=f"meshes[{mi}].primitives[{pi}]", got=str(exc)) from exc
        scene.meshes.append(mesh)
    for s in doc.skins or []:
        ibm = acc.get(s.inverseBindMatrices)
        mats = None if ibm is None else ibm.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)
        scene.skins.append(Skin(joints=list(s.joints), inverse_bind_matrices=mats,
                                skeleton=s.skeleton, name=s.name or "", extras=dict(s.extras or {})))
    for n in doc.nodes or []:
        node = Node(name=n.name or "", children=list(n.children or []), mesh=n.mesh, skin=n.skin,
                    extras=dict(n.extras or {}) if isinstance(n.extras, dict) else {})
        if n.matrix is not None and list(n.matrix) != [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]:
            t, r, sc = decompose_trs(_matrix(n.matrix))
            node.translation, node.rotation, node.scale = t, r, sc
        else:
            if n.translation is not None:
                node.translation = np.array(n.translation, dtype=np.float64)
            if n.rotation is not None:
                node.rotation = np.array(n.rotation, dtype=np.float64)
            if n.scale is not None:
                node.scale = np.array(n.scale, dtype=np.float64)
        scene.nodes.append(node)
    scenes = doc.scenes or []
    main = doc.scene if doc.scene is not None else 0
    if scenes:
        scene.roots = list(scenes[main].nodes or [])
        scene.name = scenes[main].name or ""
        if isinstance(scenes[main].extras, dict):      # (Blender's exporter writes them there)
            scene.extras.update({k: v for k, v in scenes[main].extras.items() if k != "source_dir"})
        for i, sc in enumerate(scenes):
            if i != main:
                scene.extra_scenes.append((sc.name or "", list(sc.nodes or [])))
    else:
        parents = scene.parents()
        scene.roots = [i for i, p in enumerate(parents) if p < 0]
    for ai, a in enumerate(doc.animations or []):
        anim = Animation(name=a.name or f"animation{ai}", extras=dict(a.extras or {}))
        for ci, c in enumerate(a.channels):
            if c.target.node is None:
                continue
            s = a.samplers[c.sampler]
            times = acc.get(s.input)
            values = acc.get(s.output)
            if c.target.path == "weights":
                values = values.reshape(len(times) * (3 if s.interpolation == "CUBICSPLINE" else 1), -1)
            try:
                anim.channels.append(Channel(node=c.target.node, path=c.target.path,
                                             times=times.reshape(-1), values=values,
                                             interpolation=s.interpolation or "LINEAR"))
            except Exception as exc:
                raise FormatError("a consistent animation channel", file=file,
                                  path=f"animations[{ai}].channels[{ci}]", got=str(exc)) from exc
        scene.animations.append(anim)
    if isinstance(doc.extras, dict):   # never a source_dir from the file: it steers texture lookups
        scene.extras.update({k: v for k, v in doc.extras.items() if k != "source_dir"})
    return scene
