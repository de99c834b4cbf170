"""A read glTF's JSON as the writer's model: the parsed dicts, with attribute access.

Writing a read glTF back (``retromesh.write(retromesh.read("x.glb"), ...)``) changes only the
buffer and image URIs; everything else is written as it was read. :class:`JsonObject` is a
``dict`` whose keys are also attributes (``doc.buffers[0].uri``), so the writer's code serves
both its own model (:mod:`retromesh.gltf.model`) and a read document, and the JSON encoder
writes it as the dict it is: no per-field model is built, and the cost is linear in the
document's size. Setting an attribute to ``None`` removes the key (an absent field, as glTF
wants, never ``null``); reading an absent one gives ``None``.
"""
from __future__ import annotations

import json
from typing import Any

__all__ = ["JsonObject", "JsonTree", "wrap"]


class JsonObject(dict[str, Any]):
    """A JSON object whose members are also attributes."""
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if value is None:
            self.pop(name, None)
        else:
            self[name] = wrap(value)

    def __delattr__(self, name: str) -> None:
        self.pop(name, None)


class JsonTree(JsonObject):
    """The whole document: :class:`JsonObject` plus the writer model's serialisers."""
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return self

    def gltf_to_json(self, separators: tuple[str, str] | None = None,
                     indent: int | str | None = "  ") -> str:
        return json.dumps(self, indent=indent, separators=separators, allow_nan=False)

    def to_json(self) -> str:
        return self.gltf_to_json(separators=(",", ":"), indent=None)


def wrap(value: Any) -> Any:
    """A copy of ``value`` with every dict inside it a :class:`JsonObject` (a list without
    objects or lists inside is shared, not copied: the writer never changes one); nesting is
    bounded by the JSON reader's depth cap."""
    if type(value) is dict:
        return JsonObject((k, wrap(v)) for k, v in value.items())
    if type(value) is list and any(type(item) in _CONTAINERS for item in value):
        return [wrap(item) for item in value]
    return value


_CONTAINERS = (dict, list)


def tree(data: dict[str, Any]) -> JsonTree:
    """The document ``data`` (parsed JSON, left as it is) as a :class:`JsonTree`."""
    return JsonTree((k, wrap(v)) for k, v in data.items())
