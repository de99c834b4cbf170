"""Deep equality of native documents: numpy arrays compared by dtype, shape and bytes (so a
NaN or a -0.0 kept is equal, a dtype changed is not)."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def docs_equal(a: Any, b: Any) -> bool:
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(
            docs_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            docs_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            docs_equal(a[k], b[k]) for k in a)
    return a == b


def first_difference(a: Any, b: Any, path: str = "doc") -> str | None:
    """Where ``a`` and ``b`` first differ (a field path), or None when they are equal."""
    if dataclasses.is_dataclass(a):
        if type(a) is not type(b):
            return f"{path}: {type(a).__name__} != {type(b).__name__}"
        for f in dataclasses.fields(a):
            d = first_difference(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    return None if docs_equal(a, b) else f"{path}: {a!r:.80} != {b!r:.80}"
