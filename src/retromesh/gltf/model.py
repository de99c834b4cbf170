"""A small glTF 2.0 JSON model for the writer: the classes and attribute names of pygltflib's
model (``GLTF2``, ``Accessor``, ``Node``...) as plain Python objects, serialised with ``json``.

Writing a GLB does not need pygltflib (which pulls dataclasses_json and marshmallow, ~0.15 s
of import time): ``from . import model as g`` gives the writer the same spelling. Each class
lists its fields in pygltflib's order with pygltflib's defaults, and :meth:`GLTF2.gltf_to_json`
drops ``None`` and empty values the way pygltflib does (``extensions`` payloads such as
``KHR_materials_unlit: {}`` are kept), so the JSON is the one pygltflib wrote.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

__all__ = ["GLTF2", "Asset", "Buffer", "BufferView", "Accessor", "Attributes", "Primitive",
           "Mesh", "Node", "Skin", "Scene", "Animation", "AnimationSampler", "AnimationChannel",
           "AnimationChannelTarget", "Material", "PbrMetallicRoughness", "TextureInfo", "Image",
           "Texture", "Sampler", "Plain", "to_dict", "EMPTIABLE"]

_LIST, _DICT = object(), object()   # default markers: a fresh [] / {} per object


class Plain(dict):
    """A JSON object already without ``None`` or empty values (an accessor, a buffer view...):
    written as it is, not walked again."""
    __slots__ = ()


class _Model:
    #: (field, default) in output order; extensions/extras come first as in pygltflib
    _fields: tuple[tuple[str, Any], ...] = ()
    _defaults: dict[str, Any] = {}          # the plain defaults, in output order
    _fresh: tuple[tuple[str, type], ...] = ()   # fields whose default is a new [] / {}

    def __init_subclass__(cls) -> None:
        fields = (("extensions", _DICT), ("extras", _DICT)) + cls._fields
        cls._defaults = {k: None if v is _LIST or v is _DICT else v for k, v in fields}
        cls._fresh = tuple((k, list if v is _LIST else dict) for k, v in fields
                           if v is _LIST or v is _DICT)

    def __init__(self, **kwargs: Any) -> None:
        d = self.__dict__
        d.update(self._defaults)
        for name, kind in self._fresh:
            d[name] = kind()
        if not kwargs.keys() <= d.keys():
            unknown = [k for k in kwargs if k not in d]
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(unknown)}")
        d.update(kwargs)

    def _dict(self) -> dict[str, Any]:
        return {k: _plain(v) for k, v in self.__dict__.items()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__dict__!r})"

    if TYPE_CHECKING:
        # the fields are instance attributes named by _fields: any name, any JSON value
        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...


#: the type of every model object (the classes below are made by ``_model``)
Model = _Model


def _model(name: str, *fields: tuple[str, Any]) -> type[_Model]:
    return type(name, (_Model,), {"_fields": fields, "__module__": __name__})


def _plain(value: Any) -> Any:
    if isinstance(value, (_Model, Attributes)):
        return value._dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _pruned(d: dict[str, Any]) -> dict[str, Any]:
    """The JSON of a model's or a dict's items without the ``None`` and empty values, nested
    models and dicts (also inside lists) likewise, except inside ``extensions`` — in one pass,
    with the result of pygltflib's ``asdict`` + ``delete_empty_keys``."""
    out: dict[str, Any] = {}
    for key, value in d.items():
        if value is None:
            continue
        if isinstance(value, (_Model, Attributes)):
            out[key] = _pruned(value.__dict__)
        elif isinstance(value, (str, bytes, list, tuple, dict)) and len(value) == 0:
            continue
        elif isinstance(value, dict):
            out[key] = _plain(value) if key == "extensions" else _pruned(value)
        elif isinstance(value, list):
            out[key] = [_pruned(v.__dict__) if isinstance(v, (_Model, Attributes))
                        else _pruned(v) if isinstance(v, dict) else _plain(v) for v in value]
        else:
            out[key] = _plain(value)
    return out


class Attributes:
    """A primitive's attributes: any ``NAME=accessor`` (POSITION, TEXCOORD_3, _CUSTOM...)."""

    def __init__(self, **kwargs: int | None) -> None:
        self.__dict__.update(kwargs)

    def _dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __getattr__(self, name: str) -> None:
        if name.startswith("__"):
            raise AttributeError(name)
        return None


Asset = _model("Asset", ("generator", "retromesh"), ("copyright", None), ("version", "2.0"),
               ("minVersion", None))
Buffer = _model("Buffer", ("uri", None), ("byteLength", None))
BufferView = _model("BufferView", ("buffer", None), ("byteOffset", 0), ("byteLength", None),
                    ("byteStride", None), ("target", None), ("name", None))
Accessor = _model("Accessor", ("bufferView", None), ("byteOffset", 0), ("componentType", None),
                  ("normalized", False), ("count", None), ("type", None), ("sparse", None),
                  ("max", _LIST), ("min", _LIST), ("name", None))
Primitive = _model("Primitive", ("attributes", None), ("indices", None), ("mode", 4),
                   ("material", None), ("targets", _LIST))
Mesh = _model("Mesh", ("primitives", _LIST), ("weights", _LIST), ("name", None))
Node = _model("Node", ("mesh", None), ("skin", None), ("rotation", None), ("translation", None),
              ("scale", None), ("children", _LIST), ("matrix", None), ("camera", None),
              ("name", None))
Skin = _model("Skin", ("inverseBindMatrices", None), ("skeleton", None), ("joints", _LIST),
              ("name", None))
Scene = _model("Scene", ("name", None), ("nodes", _LIST))
Animation = _model("Animation", ("name", None), ("channels", _LIST), ("samplers", _LIST))
AnimationSampler = _model("AnimationSampler", ("input", None), ("interpolation", "LINEAR"),
                          ("output", None))
AnimationChannel = _model("AnimationChannel", ("sampler", None), ("target", None))
AnimationChannelTarget = _model("AnimationChannelTarget", ("node", None), ("path", None))
Material = _model("Material", ("pbrMetallicRoughness", None), ("normalTexture", None),
                  ("occlusionTexture", None), ("emissiveFactor", (0.0, 0.0, 0.0)),
                  ("emissiveTexture", None), ("alphaMode", "OPAQUE"), ("alphaCutoff", None),
                  ("doubleSided", False), ("name", None))
PbrMetallicRoughness = _model("PbrMetallicRoughness", ("baseColorFactor", (1.0, 1.0, 1.0, 1.0)),
                              ("metallicFactor", 1.0), ("roughnessFactor", 1.0),
                              ("baseColorTexture", None), ("metallicRoughnessTexture", None))
TextureInfo = _model("TextureInfo", ("index", None), ("texCoord", 0))
Image = _model("Image", ("uri", None), ("mimeType", None), ("bufferView", None), ("name", None))
Texture = _model("Texture", ("sampler", None), ("source", None), ("name", None))
Sampler = _model("Sampler", ("magFilter", None), ("minFilter", None), ("wrapS", 10497),
                 ("wrapT", 10497))


class GLTF2(_Model):
    _fields = (("accessors", _LIST), ("animations", _LIST), ("asset", None),
               ("bufferViews", _LIST), ("buffers", _LIST), ("cameras", _LIST),
               ("extensionsUsed", _LIST), ("extensionsRequired", _LIST), ("images", _LIST),
               ("materials", _LIST), ("meshes", _LIST), ("nodes", _LIST), ("samplers", _LIST),
               ("scene", None), ("scenes", _LIST), ("skins", _LIST), ("textures", _LIST))
    asset: Any

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.asset is None:
            self.asset = Asset()

    def to_dict(self) -> dict[str, Any]:
        return _pruned(self.__dict__)

    def gltf_to_json(self, separators: tuple[str, str] | None = None,
                     indent: int | str | None = "  ") -> str:
        # the JSON of to_dict(), made by json's encoder calling json_default per model object
        # (lists of numbers are not walked in Python); a document is a tree (the writer builds
        # it; extras are copied by jsonable), so the encoder's cycle check is skipped
        return json.dumps(self, indent=indent, separators=separators, allow_nan=False,
                          default=json_default, check_circular=False)


def json_default(obj: Any) -> dict[str, Any]:
    if isinstance(obj, (_Model, Attributes)):
        return _shallow(obj.__dict__)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _shallow(d: dict[str, Any]) -> dict[str, Any]:
    """``_pruned`` one level deep: models inside are left to the encoder (``json_default``)."""
    out = {}
    for k, v in d.items():          # (one pass: a model's JSON is made once per object)
        if v is None:
            continue
        t = type(v)
        if t is list:
            if not v:
                continue
            if dict in map(type, v):
                v = [_shallow(x) if type(x) is dict else x for x in v]
        elif t is dict:
            if not v:
                continue
            if k != "extensions":
                v = _shallow(v)
        elif not v and t in EMPTIABLE:
            continue
        out[k] = v
    return out


#: the types whose empty values are left out of the JSON (as pygltflib leaves them out)
EMPTIABLE = frozenset((str, bytes, list, tuple, dict))


def to_dict(doc: Any) -> dict[str, Any]:
    """The JSON of a document's model (ours, or a read glTF's :mod:`.jsontree`)."""
    if isinstance(doc, GLTF2):
        return doc.to_dict()
    return json.loads(doc.gltf_to_json(separators=(",", ":"), indent=None))
