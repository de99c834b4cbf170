"""Extras as glTF JSON: values of any kind made plain JSON (:func:`jsonable`), and extras
dicts made the JSON the encoder writes as they are (:func:`extras_json`).

Used by the writer (nodes, meshes, materials, animations...) and by the images (texture
extras); it imports only the JSON model, so neither of those depends on the other for it.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from . import model as g

__all__ = ["jsonable", "extras_json"]

_PLAIN = frozenset((int, bool, str, type(None)))
_NUMBER = frozenset((int, bool, float))
_STR = frozenset((str,))
_LIST = frozenset((list,))
_FLOAT = frozenset((float,))


def jsonable(value: Any) -> Any:
    """Extras as plain JSON: numpy to lists/numbers, bytes to text (latin-1 if not UTF-8)."""
    if isinstance(value, dict):            # plain items are copied without a call each
        return {k if type(k) is str else str(k): v if type(v) in _PLAIN else jsonable(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _json_list(value, jsonable)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu" or (value.dtype.kind == "f" and np.isfinite(value).all()):
            return value.tolist()
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def extras_json(value: dict) -> g.Plain:
    """``jsonable(value)`` as the JSON encoder writes a model's dict (:func:`.model._shallow`):
    at each level of dicts (also of dicts directly inside lists) ``None`` and empty values left
    out, ``extensions`` kept whole, in one pass; its dicts are :class:`.model.Plain`, which the
    encoder writes as they are instead of walking them again."""
    if not set(map(type, value)) <= _STR:     # keys as jsonable makes them (two may merge)
        value = {k if type(k) is str else str(k): v for k, v in value.items()}
    out = g.Plain()
    for key, v in value.items():
        t = type(v)
        if t in _PLAIN:
            if v is None or v == "":
                continue
        elif isinstance(v, dict):
            if not v:
                continue
            v = jsonable(v) if key == "extensions" else extras_json(v)
        elif isinstance(v, (list, tuple)):
            if not v:
                continue
            v = _json_list(v, _extras_item)
        elif t is float:
            if not math.isfinite(v):
                v = str(v)
        else:
            v = jsonable(v)
            if v is None or not v and type(v) in g.EMPTIABLE:
                continue
            if type(v) is list and dict in map(type, v):
                v = [extras_json(x) if type(x) is dict else x for x in v]
        out[key] = v
    return out


def _json_list(items: list | tuple, convert: Callable[[Any], Any]) -> list:
    """``items`` as a JSON list, ``convert`` applied to the items that are not plain (lists of
    plain values or finite numbers: no call per item)."""
    types = set(map(type, items))
    if types <= _PLAIN:
        return list(items)
    if types <= _NUMBER:
        try:
            if _all_finite(items, types):
                return list(items)
        except OverflowError:           # an int beyond float range
            pass
    # lists of plain values or finite numbers inside (twin triangles, runs, per-key weights):
    # copied without a call each, all items' values tested at once when all are lists
    if types == _LIST and _plain_numbers(list(chain.from_iterable(items))):
        return list(map(list, items))
    return [v if type(v) in _PLAIN else list(v) if type(v) is list and _plain_numbers(v)
            else convert(v) for v in items]


def _plain_numbers(items: list) -> bool:
    """Whether a list is plain JSON as it is: plain values, or finite numbers."""
    types = set(map(type, items))
    if types <= _PLAIN:
        return True
    if types <= _NUMBER:
        try:
            return _all_finite(items, types)
        except OverflowError:           # an int beyond float range
            return False
    return False


def _all_finite(items: list | tuple, types: set[type]) -> bool:
    """``all(map(math.isfinite, items))`` of numbers of ``types`` (an OverflowError alike); of
    floats only, one ``sum`` first: an infinity or NaN among them makes the sum one too, so a
    finite sum needs no look at each item."""
    if types == _FLOAT and math.isfinite(sum(items)):
        return True
    return all(map(math.isfinite, items))


def _extras_item(value: Any) -> Any:
    return extras_json(value) if isinstance(value, dict) else jsonable(value)
