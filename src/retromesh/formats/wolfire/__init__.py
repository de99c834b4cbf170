"""Wolfire family: Lugaru ``.solid`` models; Overgrowth ``.anm`` animations, ``.phxbn``
skeletons, ``.fzx`` ragdoll volumes and ``.sav`` save files (plus a small OBJ reader for the
character meshes a ``.phxbn`` skins).

Each module registers its format on import; :mod:`.scene` combines skeleton, animations and
mesh into one Scene; :mod:`.samples` builds small valid files with our own writers.
"""
from __future__ import annotations

from . import anm, fzx, obj, phxbn, sav, scene, solid  # noqa: F401

__all__ = ["anm", "fzx", "obj", "phxbn", "sav", "scene", "solid", "samples"]


def __getattr__(name: str):
    if name == "samples":
        import importlib
        return importlib.import_module(f"{__name__}.samples")
    raise AttributeError(name)
