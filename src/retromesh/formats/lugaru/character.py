"""A Lugaru character as a GLB gives it back (:mod:`.scene_write`): the skeleton file
and its animations, written as the game keeps them, and the engine's rules for them together.
The scene mapping is :mod:`.scene` (files -> Scene) and :mod:`.scene_write`
(Scene -> files); the files themselves are :mod:`.skeleton` and :mod:`.animation`.
"""
from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from ...findings import Finding
from ...records import record
from ...safenames import safe_name
from . import animation as la, skeleton as ls

__all__ = ["LugaruCharacter", "outputs", "check"]


@record
class LugaruCharacter:
    """What a GLB gives back: the skeleton file and its animations (file name -> animation).
    Written as the game keeps them: the skeleton at the target path, the animations in
    ``../Animations/`` when the target is in a ``Skeleton`` folder, else beside it."""
    skeleton: ls.SkeletonFile = field(default_factory=ls.SkeletonFile)
    animations: dict[str, la.AnimationFile] = field(default_factory=dict)


def outputs(doc: Any, path: Path) -> dict[Path, bytes]:
    if path.suffix.lower() == ".lugaru-skeleton":        # --to lugaru-skeleton
        path = path.with_suffix("")
    if isinstance(doc, ls.SkeletonFile):
        return {path: ls.write(doc)}
    out = {path: ls.write(doc.skeleton)}
    folder = path.parent.parent / "Animations" if path.parent.name.lower() == "skeleton" else path.parent
    for name, anim in doc.animations.items():
        fname = safe_name(name.split("#")[0] if name.split("#")[0] else "animation")
        target = folder / fname
        if target in out:
            target = folder / safe_name(name)
        out[target] = la.write(anim)
    return out


def check(doc: ls.SkeletonFile | LugaruCharacter) -> list[Finding]:
    """The engine's rules for a skeleton, or for a skeleton written with its animations (each
    animation's findings name its file, and its joint count is held to the skeleton's)."""
    if isinstance(doc, ls.SkeletonFile):
        return ls.check(doc)
    out = ls.check(doc.skeleton)
    joints = len(doc.skeleton.joints)
    for name, anim in doc.animations.items():
        out += [Finding(f.rule, f"{name}: {f.message}", f.severity)
                for f in la.check(anim, skeleton_joints=joints)]
    return out
