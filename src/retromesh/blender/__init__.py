"""retromesh as a Blender extension.

``build_extension(out_dir)`` writes ``retromesh-<version>.zip`` (``retromesh blender build``;
``build_extensions(out_dir, platforms=[...])`` one zip per platform);
install it in Blender 4.2+ with Edit > Preferences > Get Extensions > Install from Disk. The
add-on then adds File > Import/Export > "Classic game model (retromesh)" (operators
``import_scene.retromesh`` and ``export_scene.retromesh``, in :mod:`retromesh.blender.addon`,
which is the only module here that imports bpy and is imported only inside Blender).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["build_extension", "build_extensions"]


def build_extension(out_dir: str | Path, **options: Any) -> Path:
    """Write the extension zip into ``out_dir``; returns its path (see :mod:`.build`)."""
    from .build import build_extension as build
    return build(out_dir, **options)


def build_extensions(out_dir: str | Path, **options: Any) -> list[Path]:
    """Write the extension zips into ``out_dir`` (one per platform asked for); their paths."""
    from .build import build_extensions as build
    return build(out_dir, **options)
