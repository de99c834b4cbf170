"""How Lugaru's extensionless files group into characters, for a folder conversion
(``retromesh.batch``) and for files picked together in Blender (``retromesh.blender.bridge``):
registered on the ``lugaru-skeleton`` format (``group_folder``, ``group_picked``).

A figure in ``Skeleton/`` takes the animations of ``../Animations/`` the game plays on it
(``Wolf*`` on a wolf figure, the others on the rabbit's); the low-detail and clothes skeletons
stay on their own, without animations. Animations picked together are one character: its
skeleton found by the format, or the picked skeleton.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["group_folder", "group_picked"]

#: a group: (main file, reading options, the other files it takes)
Group = tuple[Path, dict[str, Any], list[Path]]


def _in(path: Path, folder: str) -> bool:
    return not path.suffix and path.parent.name.lower() == folder


def group_folder(files: list[Path]) -> list[Group]:
    """The characters among a folder conversion's files (see the module docstring)."""
    figures = [f for f in files if _in(f, "skeleton") and not f.name.lower().endswith("low")
               and f.name.lower() != "rabbitbelt"]
    groups: list[Group] = []
    for fig in sorted(figures):
        wolf = "wolf" in fig.name.lower()
        anims = sorted(f for f in files if _in(f, "animations")
                       and f.parent.parent == fig.parent.parent
                       and f.name.lower().startswith("wolf") == wolf)
        if anims:
            groups.append((fig, {"animations": anims}, anims))
    return groups


def group_picked(files: list[Path]) -> list[Group]:
    """One character of the picked skeleton and animations (none without an animation)."""
    anims = [p for p in files if _in(p, "animations")]
    if not anims:
        return []
    skels = [p for p in files if _in(p, "skeleton")]
    main, rest = (skels[0], anims) if skels else (anims[0], anims[1:])
    return [(main, {"animations": rest} if rest else {}, rest)]
