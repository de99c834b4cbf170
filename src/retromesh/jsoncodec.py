"""Lossless JSON for native documents (``retromesh dump --json`` / ``retromesh build``).

Documents are dataclasses holding plain values, bytes, numpy arrays and nested dataclasses.
The JSON keeps everything needed to rebuild the exact same bytes:

* a dataclass is an object with ``"$type": "module:Class"`` (only ``retromesh`` classes are
  rebuilt) and one member per field;
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
import typing
from typing import Any

import numpy as np

from .errors import FormatError

__all__ = ["encode", "decode", "dumps", "loads"]


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
        return not np.issubdtype(dt.base, np.floating) or bool(np.all(np.isfinite(arr)))
    return all(_finite(arr[name]) for name in dt.names)


def encode(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"$type": f"{type(obj).__module__}:{type(obj).__qualname__}"}
        for f in dataclasses.fields(obj):
            out[f.name] = encode(getattr(obj, f.name))
        return out
    if isinstance(obj, np.ndarray):
        spec: dict[str, Any] = {"dtype": _dtype_to_json(obj.dtype), "shape": list(obj.shape)}
        if not _finite(obj):
            spec["b64"] = base64.b64encode(np.ascontiguousarray(obj).tobytes()).decode("ascii")
        elif obj.dtype.names is not None:
            spec["columns"] = {name: encode(np.ascontiguousarray(obj[name]))["$array"]
                               for name in obj.dtype.names}
        elif _finite(obj):
            spec["data"] = obj.tolist()
        else:
            spec["b64"] = base64.b64encode(np.ascontiguousarray(obj).tobytes()).decode("ascii")
        return {"$array": spec}
    if isinstance(obj, (bytes, bytearray)):
        try:
            return {"$b": bytes(obj).decode("utf-8")}
        except UnicodeDecodeError:
            return {"$b64": base64.b64encode(bytes(obj)).decode("ascii")}
    if isinstance(obj, dict):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"cannot encode {type(obj).__name__} in a native document")


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
            mod, _, qual = str(obj["$type"]).partition(":")
            if not mod.startswith("retromesh."):
                raise FormatError("a retromesh document type", path=path, got=obj["$type"])
            try:
                cls = getattr(importlib.import_module(mod), qual)
            except (ImportError, AttributeError) as exc:
                raise FormatError("a known document type", path=path, got=obj["$type"]) from exc
            if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
                raise FormatError("a document class", path=path, got=obj["$type"])
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
