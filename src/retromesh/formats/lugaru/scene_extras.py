"""What glTF has no place for in a Lugaru character, carried in the root node's extras so that
skeleton + animations -> ``.glb`` -> skeleton + animations gives the same files back.

:func:`~.scene.skeleton_to_scene` puts on the character's root node:

* ``lugaru_skeleton``: the skeleton file (every field: joints, muscles, vertex lists, the
  forward triangles), as compact lossless JSON (:func:`retromesh.extras.compact_json`);
* ``lugaru_animations``: ``{animation name: JSON of the animation file}``.

:func:`~.scene.solid_to_scene` marks the upright turn it adds to a model's mesh node
(``lugaru_upright``), which :mod:`.scene_write` takes off again. :mod:`.scene_write` reads the
kept files back here; what no longer reads as the document it was is taken as not kept.
"""
from __future__ import annotations

import json
from typing import Any

from ...extras import load_kept
from .animation import AnimationFile
from .skeleton import SkeletonFile

__all__ = ["UPRIGHT_KEY", "SKELETON_KEY", "ANIMATIONS_KEY", "animations_text", "kept_skeleton",
           "kept_animations", "kept_animation"]

#: node extras key marking the upright rotation solid_to_scene adds (scene_to_solid leaves it out)
UPRIGHT_KEY = "lugaru_upright"
SKELETON_KEY = "lugaru_skeleton"
ANIMATIONS_KEY = "lugaru_animations"


def animations_text(kept: dict[str, str]) -> str:
    """The ``lugaru_animations`` value: each animation's compact JSON by name."""
    return json.dumps(kept, separators=(",", ":"))


def kept_skeleton(extras: dict) -> SkeletonFile | None:
    """The skeleton file kept in a root node's extras, else None."""
    return load_kept(extras.get(SKELETON_KEY), SkeletonFile)


def kept_animations(extras: dict) -> dict[str, Any]:
    """The ``lugaru_animations`` table of a root node's extras (empty when missing or damaged)."""
    table = extras.get(ANIMATIONS_KEY)
    try:
        table = json.loads(table) if isinstance(table, str) else {}
    except ValueError:
        table = {}
    return table if isinstance(table, dict) else {}


def kept_animation(table: dict[str, Any], name: str) -> AnimationFile | None:
    """The animation file kept under ``name``, else None."""
    return load_kept(table.get(name), AnimationFile)
