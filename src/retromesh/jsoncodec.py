"""Lossless JSON for native documents (``retromesh dump --json`` / ``retromesh build``).

Documents are dataclasses holding plain values, bytes, numpy arrays and nested dataclasses.
The JSON keeps everything needed to rebuild the exact same bytes:

* a dataclass is an object with ``"$type"`` and one member per field. The type's name is its
  family's and its own, ``"<family>:<Class>"`` (``"overgrowth:PhxbnFile"``,
  ``"b3d:B3dFile"``: the family package under ``retromesh.formats``; a class's name is unique
  in its family), so that moving a class between the modules of its family changes no file.
  Names of the module-path form that 0.1 wrote (``"retromesh.formats.wolfire.phxbn:PhxbnFile"``)
  are still read, through :data:`OLD_MODULES` (a module path -> the family that holds its
  classes now); a ``retromesh`` class outside ``formats`` is named by its module path.
  Only ``retromesh`` classes are rebuilt;
* ``bytes`` are ``{"$b": "text"}`` when they are UTF-8, else ``{"$b64": "..."}`` (strings in
  these formats are bytes on disk and not always text);
* a numpy array is ``{"$array": {"dtype": ..., "shape": [...], "data": [...]}}`` with the
  values as numbers (a record array has ``"columns"``: one such array per field) (each float32
  printed so that it reads back to the same bits), or ``"b64"`` raw little-endian bytes when
  the array holds NaN/infinity;
* tuples are lists; the field's type says when to make a tuple again.
"""
from __future__ import annotations

import base64
import dataclasses
import importlib
import json
import sys
import typing
from typing import Any

import numpy as np

from .errors import FormatError

__all__ = ["encode", "encode_many", "decode", "dumps", "loads", "type_name", "class_of", "OLD_MODULES"]

_FORMATS = "retromesh.formats."

#: the module paths that ``$type`` names held before they were family names (0.1, and the
#: Wolfire package before Lugaru and Overgrowth became families) -> the family now holding
#: their classes; ``"<module>:<Class>"`` reads as ``"<family>:<Class>"``
OLD_MODULES: dict[str, str] = {
    "retromesh.formats.b3d.chunks": "b3d",
    "retromesh.formats.b3d.keys": "b3d",
    "retromesh.formats.lithtech.abc_model": "lithtech",
    "retromesh.formats.lithtech.abc_v6": "lithtech",
    "retromesh.formats.lithtech.common": "lithtech",
    "retromesh.formats.lostsaga.ani": "lostsaga",
    "retromesh.formats.lostsaga.cms": "lostsaga",
    "retromesh.formats.lostsaga.material": "lostsaga",
    "retromesh.formats.lostsaga.msh": "lostsaga",
    "retromesh.formats.lostsaga.skl": "lostsaga",
    "retromesh.formats.westwood.hva": "westwood",
    "retromesh.formats.westwood.vox": "westwood",
    "retromesh.formats.westwood.vxl": "westwood",
    "retromesh.formats.wolfire.lugaru_animation": "lugaru",
    "retromesh.formats.wolfire.lugaru_character": "lugaru",
    "retromesh.formats.wolfire.lugaru_skeleton": "lugaru",
    "retromesh.formats.wolfire.solid": "lugaru",
    "retromesh.formats.wolfire.anm": "overgrowth",
    "retromesh.formats.wolfire.fzx": "overgrowth",
    "retromesh.formats.wolfire.obj": "overgrowth",
    "retromesh.formats.wolfire.ogchain": "overgrowth",
    "retromesh.formats.wolfire.ogxml": "overgrowth",
    "retromesh.formats.wolfire.phxbn": "overgrowth",
    "retromesh.formats.wolfire.sav": "overgrowth",
}


def type_name(cls: type) -> str:
    """The ``$type`` of a class: ``"<family>:<Class>"`` for a format family's class."""
    mod = cls.__module__
    if mod.startswith(_FORMATS):
        return f"{mod[len(_FORMATS):].split('.')[0]}:{cls.__qualname__}"
    return f"{mod}:{cls.__qualname__}"


#: family -> its classes by name, as :func:`_family_classes` last found them
_KNOWN: dict[str, dict[str, type]] = {}


def _family_classes(family: str) -> dict[str, type]:
    """Qualified name -> data class of the family's modules (those its package imports: every
    native module, for it registers their formats)."""
    prefix = f"{_FORMATS}{family}."
    out: dict[str, type] = {}
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix) and module is not None:
            for value in vars(module).values():
                if isinstance(value, type) and dataclasses.is_dataclass(value) \
                        and value.__module__ == name:
                    out[value.__qualname__] = value
    return out


def class_of(name: str) -> type | None:
    """The data class a ``$type`` names (a family name, an old module path of
    :data:`OLD_MODULES` or a ``retromesh`` module path), else None."""
    mod, _, qual = str(name).partition(":")
    family = OLD_MODULES.get(mod)
    if family is None and "." not in mod and mod.isidentifier():
        family = mod
    try:
        if family is not None:
            known = _KNOWN.get(family)
            if known is None or qual not in known:    # first use, or a module imported since
                importlib.import_module(_FORMATS + family)
                known = _KNOWN[family] = _family_classes(family)
            cls = known.get(qual)
        elif mod.startswith("retromesh."):
            cls = getattr(importlib.import_module(mod), qual, None)
        else:
            return None
    except ImportError:
        return None
    return cls if isinstance(cls, type) and dataclasses.is_dataclass(cls) else None


def _dtype_to_json(dt: np.dtype) -> Any:
    if dt.names is None:
        if dt.subdtype is not None:
            base, shape = dt.subdtype
            return {"base": _dtype_to_json(base), "shape": list(shape)}
        return dt.str
    fields = []
    assert dt.fields is not None            # a structured dtype (it has names)
    for name in dt.names:
        sub, _ = dt.fields[name][:2]
        if sub.subdtype is not None:
            base, shape = sub.subdtype
            fields.append([name, _dtype_to_json(base), list(shape)])
        else:
            fields.append([name, _dtype_to_json(sub)])
    return {"fields": fields, "itemsize": dt.itemsize}


def _dtype_from_json(d: Any) -> np.dtype:
    if isinstance(d, str):
        return np.dtype(d)
    if "base" in d:
        return np.dtype((_dtype_from_json(d["base"]), tuple(d["shape"])))
    parts: list[tuple] = []
    for f in d["fields"]:
        if len(f) == 3:
            parts.append((f[0], _dtype_from_json(f[1]), tuple(f[2])))
        else:
            parts.append((f[0], _dtype_from_json(f[1])))
    return np.dtype(parts)


def _finite(arr: np.ndarray) -> bool:
    dt = arr.dtype
    if dt.names is None:
        # (kind "f": what np.issubdtype(dt.base, np.floating) tells, without its cost)
        return dt.base.kind != "f" or bool(np.isfinite(arr).all())
    return all(_finite(arr[name]) for name in dt.names)


#: data class -> (its ``$type``, its field names): found once per class, not per object (a
#: document holds many objects of a few classes)
_CLASS_FIELDS: dict[type, tuple[str, tuple[str, ...]]] = {}
_SCALARS = frozenset((bool, int, float, str))


def _class_fields(cls: type) -> tuple[str, tuple[str, ...]]:
    known = _CLASS_FIELDS.get(cls)
    if known is None:
        known = (type_name(cls), tuple(f.name for f in dataclasses.fields(cls)))
        _CLASS_FIELDS[cls] = known
    return known


#: plain dtype -> its JSON, a string (found once per dtype: a document holds many arrays of a
#: few dtypes)
_DTYPE_STR: dict[np.dtype, str] = {}


def _encode_array(obj: np.ndarray) -> dict[str, Any]:
    dj: Any = _DTYPE_STR.get(obj.dtype)
    if dj is None:
        dj = _dtype_to_json(obj.dtype)
        if isinstance(dj, str):
            _DTYPE_STR[obj.dtype] = dj
    spec: dict[str, Any] = {"dtype": dj, "shape": list(obj.shape)}
    if not _finite(obj):
        spec["b64"] = base64.b64encode(np.ascontiguousarray(obj).tobytes()).decode("ascii")
    elif obj.dtype.names is not None:
        spec["columns"] = {name: _encode_array(np.ascontiguousarray(obj[name]))["$array"]
                           for name in obj.dtype.names}
    else:
        spec["data"] = obj.tolist()
    return {"$array": spec}


def encode(obj: Any) -> Any:
    if obj is None or type(obj) in _SCALARS:        # exactly: numpy scalars subclass float
        return obj
    if isinstance(obj, np.ndarray):
        return _encode_array(obj)
    if isinstance(obj, dict):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if isinstance(obj, (bytes, bytearray)):
        try:
            return {"$b": bytes(obj).decode("utf-8")}
        except UnicodeDecodeError:
            return {"$b64": base64.b64encode(bytes(obj)).decode("ascii")}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        name, fields = _class_fields(type(obj))
        out: dict[str, Any] = {"$type": name}
        for f in fields:
            out[f] = encode(getattr(obj, f))
        return out
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot encode {type(obj).__name__} in a native document")


def _encode_stack(stack: np.ndarray, raw: bool = False) -> list[dict[str, Any]]:
    """:func:`_encode_array` of each ``stack[i]`` (one dtype and shape), in a few numpy passes
    for them all; ``raw``: each as its ``"b64"`` bytes, finite or not."""
    n = len(stack)
    dt = stack.dtype
    dj: Any = _DTYPE_STR.get(dt)
    if dj is None:
        dj = _dtype_to_json(dt)
        if isinstance(dj, str):
            _DTYPE_STR[dt] = dj
    shape = list(stack.shape[1:])
    if raw and not dt.hasobject and _dtype_from_json(dj) == dt:     # (bytes read back alike)
        whole = np.ascontiguousarray(stack).tobytes()
        step = len(whole) // n if n else 0
        b64 = base64.b64encode
        return [{"$array": {"dtype": dj, "shape": list(shape),
                            "b64": b64(whole[i * step:(i + 1) * step]).decode("ascii")}}
                for i in range(n)]
    if dt.names is not None:
        fine = np.ones(n, bool)
        for name in dt.names:
            col = stack[name]
            if col.dtype.kind == "f":
                fine &= np.isfinite(col).reshape(n, -1).all(1)
        cols = {name: _encode_stack(np.ascontiguousarray(stack[name])) for name in dt.names}
        body = [{"dtype": dj, "shape": list(shape),
                 "columns": {name: cols[name][i]["$array"] for name in dt.names}}
                for i in range(n)]
    else:
        fine = np.isfinite(stack).reshape(n, -1).all(1) if dt.kind == "f" else np.ones(n, bool)
        body = [{"dtype": dj, "shape": list(shape), "data": d} for d in stack.tolist()]
    for i in np.flatnonzero(~fine).tolist():
        body[i] = {"dtype": dj, "shape": list(shape), "b64": base64.b64encode(
            np.ascontiguousarray(stack[i]).tobytes()).decode("ascii")}
    return [{"$array": b} for b in body]


def encode_many(objs: list, override: dict[str, Any] | None = None, raw: bool = False) -> list:
    """``[encode(o) for o in objs]``, the same JSON, made field by field for a list of objects
    of one data class (a document's keyframes): the arrays of a field of one dtype and shape
    are encoded together (a few numpy calls instead of a few per object). ``override``: field
    -> the value each object is encoded with instead of its own (a stub's emptied field; its
    JSON is one object shared by all: for dumping, not for editing). ``raw``: those arrays as
    their ``"b64"`` bytes (which :func:`decode` reads as it reads arrays of NaN): a third of
    the text, and no float printed or parsed."""
    if not objs:
        return []
    first = objs[0]
    kind = type(first)
    if all(type(o) is kind for o in objs):
        if first is None or kind in _SCALARS:
            return list(objs)
        if kind is np.ndarray:
            if all(o.dtype == first.dtype and o.shape == first.shape for o in objs):
                stack = np.stack(objs)
                if stack.dtype == first.dtype:      # (a padded record dtype is packed there)
                    return _encode_stack(stack, raw)
        elif kind is list or kind is tuple:
            flat = [v for o in objs for v in o]
            done = encode_many(flat, None, raw)
            out, at = [], 0
            for o in objs:
                out.append(done[at:at + len(o)])
                at += len(o)
            return out
        elif dataclasses.is_dataclass(first) and not isinstance(first, type):
            name, fields = _class_fields(kind)
            outs: list[dict[str, Any]] = [{"$type": name} for _ in objs]
            for f in fields:
                if override is not None and f in override:
                    vals = [encode(override[f])] * len(objs)     # (one JSON value, shared)
                else:
                    vals = encode_many([getattr(o, f) for o in objs], None, raw)
                for d, v in zip(outs, vals):
                    d[f] = v
            return outs
    if override:
        raise TypeError("override is for a list of objects of one data class")
    return [encode(o) for o in objs]


def _wants_tuple(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is tuple or hint is tuple:
        return True
    if origin is typing.Union:
        return any(_wants_tuple(a) for a in typing.get_args(hint))
    return False


def _item_hint(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (list, list):
        args = typing.get_args(hint)
        return args[0] if args else None
    return None


def decode(obj: Any, hint: Any = None, path: str = "$") -> Any:
    if isinstance(obj, dict):
        if "$type" in obj:
            qual = str(obj["$type"]).partition(":")[2]
            cls = class_of(str(obj["$type"]))
            if cls is None:
                raise FormatError("a known retromesh document type", path=path, got=obj["$type"])
            hints = typing.get_type_hints(cls)
            kwargs = {}
            for f in dataclasses.fields(cls):
                if f.name in obj:
                    kwargs[f.name] = decode(obj[f.name], hints.get(f.name), f"{path}.{f.name}")
            try:
                return cls(**kwargs)
            except (TypeError, ValueError) as exc:
                raise FormatError(f"the fields of {qual}", path=path, got=str(exc)) from exc
        if "$array" in obj:
            spec = obj["$array"]
            try:
                dt = _dtype_from_json(spec["dtype"])
                shape = tuple(spec["shape"])
                if "b64" in spec:
                    raw = base64.b64decode(spec["b64"])
                    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
                if "columns" in spec:
                    arr = np.zeros(shape, dtype=dt)
                    for name, col in spec["columns"].items():
                        arr[name] = decode({"$array": col}, None, f"{path}.{name}")
                    return arr
                return np.array(spec["data"], dtype=dt).reshape(shape)
            except (KeyError, TypeError, ValueError) as exc:
                raise FormatError("an array (dtype, shape, data)", path=path, got=str(exc)) from exc
        if "$b" in obj:
            return str(obj["$b"]).encode("utf-8")
        if "$b64" in obj:
            try:
                return base64.b64decode(obj["$b64"], validate=True)
            except ValueError as exc:
                raise FormatError("base64 bytes", path=path, got=str(exc)) from exc
        return {k: decode(v, None, f"{path}.{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        item = _item_hint(hint)
        out = [decode(v, item, f"{path}[{i}]") for i, v in enumerate(obj)]
        return tuple(out) if _wants_tuple(hint) else out
    return obj


def dumps(doc: Any, indent: int | None = 1) -> str:
    return json.dumps(encode(doc), indent=indent)


def loads(text: str | bytes) -> Any:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FormatError("JSON", got=str(exc)) from exc
    return decode(data)
