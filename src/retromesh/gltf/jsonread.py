"""Checked access to an untrusted glTF JSON document.

The glTF JSON is parsed with the standard library (bounded in size, NaN/Infinity refused) and
every value the reader uses is fetched through :class:`Json`, which checks its type, range and
length and raises :class:`~retromesh.FormatError` naming the field path
(``accessors[3].count``) with what was expected and what was found. A string where an object
belongs, an index past its array or a 5-component rotation therefore never reaches numpy or
the Scene as a raw Python error.
"""
from __future__ import annotations

import builtins
import json
import math
from typing import Any, Literal, overload

from ..errors import FormatError, LimitError

__all__ = ["Json", "parse_json", "LIMITS"]

#: safety caps; raise them (``retromesh.gltf.jsonread.LIMITS["json_bytes"] = ...``) for huge assets
LIMITS = {
    "json_bytes": 64 << 20,        # the JSON text
    "buffer_bytes": 1 << 30,       # one external buffer file or data: URI (decoded)
    "accessor_bytes": 256 << 20,   # all accessors decoded from one document, in total
    "items": 1 << 20,              # entries of one top-level array (nodes, accessors...)
    "json_depth": 64,              # nesting of objects and arrays (the glTF schema needs 6)
}

_NO = object()
_CONTAINERS = frozenset((dict, list))


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of the float range")
    return value


def parse_json(text: bytes, file: str | None, offset: int = 0) -> dict:
    """The glTF JSON object, or FormatError/LimitError."""
    if len(text) > LIMITS["json_bytes"]:
        raise LimitError(f"a glTF JSON of at most {LIMITS['json_bytes']} bytes (LIMITS['json_bytes'])",
                         file=file, offset=offset, got=len(text))
    try:
        data = json.loads(text.decode("utf-8"), parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except RecursionError as exc:
        raise LimitError("glTF JSON nested less deeply", file=file, offset=offset) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise FormatError("valid glTF JSON (UTF-8)", file=file, offset=offset,
                          got=str(exc)[:200]) from exc
    if not isinstance(data, dict):
        raise FormatError("a glTF JSON object", file=file, offset=offset, got=type(data).__name__)
    _check_depth(data, file, offset)
    asset = data.get("asset")
    if not isinstance(asset, dict) or not isinstance(asset.get("version"), str):
        raise FormatError("a glTF JSON object with an 'asset' naming its 'version'", file=file,
                          offset=offset, path="asset", got=_show(asset))
    return data


def _check_depth(data: dict, file: str | None, offset: int) -> None:
    """Deep ``extras`` would make every later walk over them (copies, writers) recurse."""
    cap = LIMITS["json_depth"]
    level: list[dict | list] = [data]
    depth = 1
    while level:
        if depth > cap:
            raise LimitError(f"glTF JSON nested at most {cap} deep (LIMITS['json_depth'])",
                             file=file, offset=offset, got=f"deeper than {cap}")
        nxt: list[dict | list] = []
        for value in level:
            children = value.values() if isinstance(value, dict) else value
            # (json.loads makes exactly dicts and lists: most lists, such as long lists of
            # numbers in extras, hold neither, which one pass over their types tells)
            if not _CONTAINERS.isdisjoint(map(type, children)):
                nxt.extend(v for v in children if isinstance(v, (dict, list)))
        level, depth = nxt, depth + 1


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {value}"
    if isinstance(value, (int, float, str)):
        return f"{type(value).__name__} {_show(value)}"
    return type(value).__name__


class Json:
    """Typed getters over one glTF JSON object; every failure is a FormatError at a path."""

    def __init__(self, data: dict, file: str | None) -> None:
        self.data = data
        self.file = file

    def fail(self, path: str, expected: str, got: Any = _NO, error=FormatError) -> FormatError:
        return error(expected, file=self.file, path=path,
                     got=None if got is _NO else got)

    # -- containers -------------------------------------------------------------------
    def array(self, key: str) -> list[dict]:
        """A top-level array of objects (``nodes``, ``accessors``...); [] when absent."""
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(key, "an array", _kind(value))
        if len(value) > LIMITS["items"]:
            raise self.fail(key, f"at most {LIMITS['items']} entries (LIMITS['items'])", len(value),
                            error=LimitError)
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{i}]", "an object", _kind(item))
        return value

    @overload
    def obj(self, parent: dict, key: str, path: str, *, required: Literal[True]) -> dict: ...
    @overload
    def obj(self, parent: dict, key: str, path: str, *, required: bool = False) -> dict | None: ...

    def obj(self, parent: dict, key: str, path: str, *, required: bool = False) -> dict | None:
        value = parent.get(key)
        if value is None:
            if required:
                raise self.fail(f"{path}.{key}", "an object", "nothing")
            return None
        if not isinstance(value, dict):
            raise self.fail(f"{path}.{key}", "an object", _kind(value))
        return value

    def objects(self, parent: dict, key: str, path: str) -> list[dict]:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", "an array of objects", _kind(value))
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(f"{path}.{key}[{i}]", "an object", _kind(item))
        return value

    def extras(self, parent: dict) -> dict:
        value = parent.get("extras")
        return dict(value) if isinstance(value, dict) else {}

    # -- scalars ----------------------------------------------------------------------
    def int(self, parent: dict, key: str, path: str, default: Any = _NO, *, lo: int | None = None,
            hi: int | None = None) -> Any:
        value = parent.get(key)
        if value is None:
            if default is _NO:
                raise self.fail(f"{path}.{key}", "an integer", "nothing")
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{path}.{key}", "an integer", _kind(value))
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            lo_t = "" if lo is None else f"{lo} <= "
            hi_t = "" if hi is None else f" <= {hi}"
            raise self.fail(f"{path}.{key}", f"an integer {lo_t}n{hi_t}", value)
        return value

    # (builtins.int: in the class body below ``def int``, ``int`` names that method)
    @overload
    def index(self, parent: dict, key: str, path: str, count: builtins.int, *,
              required: Literal[True], what: str = "") -> builtins.int: ...
    @overload
    def index(self, parent: dict, key: str, path: str, count: builtins.int, *,
              required: bool = False, what: str = "") -> builtins.int | None: ...

    def index(self, parent: dict, key: str, path: str, count: builtins.int, *,
              required: bool = False, what: str = "") -> builtins.int | None:
        """An index into an array of ``count`` entries (``None`` when absent and optional)."""
        value = parent.get(key)
        if value is None and not required:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{path}.{key}", f"an index into the {count} {what or 'entries'}",
                            _kind(value) if value is not None else "nothing")
        if not 0 <= value < count:
            raise self.fail(f"{path}.{key}", f"an index below {count} ({what or 'entries'})", value)
        return value

    def indices(self, parent: dict, key: str, path: str, count: builtins.int,
                what: str = "") -> list[builtins.int]:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", "an array of indices", _kind(value))
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < count:
                raise self.fail(f"{path}.{key}[{i}]", f"an index below {count} ({what})", _kind(v))
        return value

    def num(self, parent: dict, key: str, path: str, default: float) -> float:
        value = parent.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(float(value)):
            raise self.fail(f"{path}.{key}", "a finite number", _kind(value))
        return float(value)

    def nums(self, parent: dict, key: str, path: str,
             n: builtins.int | tuple[builtins.int, ...] | None,
             default: Any = None) -> Any:
        """An array of finite numbers, of length ``n`` (or one of the lengths) when given."""
        value = parent.get(key)
        if value is None:
            return default
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", "an array of numbers", _kind(value))
        lengths = (n,) if isinstance(n, int) else n
        if lengths is not None and len(value) not in lengths:
            want = " or ".join(str(x) for x in lengths)
            raise self.fail(f"{path}.{key}", f"{want} numbers", f"{len(value)} numbers")
        out = []
        for i, v in enumerate(value):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
                raise self.fail(f"{path}.{key}[{i}]", "a finite number", _kind(v))
            out.append(float(v))
        return out

    def str(self, parent: dict, key: str, path: str, default: Any = "") -> Any:
        value = parent.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", "a string", _kind(value))
        return value

    def name(self, parent: dict) -> builtins.str:
        value = parent.get("name")
        return value if isinstance(value, str) else ""

    def bool(self, parent: dict, key: builtins.str, path: builtins.str,
             default: bool = False) -> bool:
        value = parent.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(f"{path}.{key}", "true or false", _kind(value))
        return value

    def choice(self, parent: dict, key: builtins.str, path: builtins.str, options: tuple,
               default: Any) -> Any:
        value = parent.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or value not in options:
            raise self.fail(f"{path}.{key}", "one of " + ", ".join(map(str, options)), _kind(value))
        return value
