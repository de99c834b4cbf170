"""What the glTF 2.0 formats are, declared once (``registry.Format``, no code): read by the
registry without importing the glTF modules; ``__init__.py`` registers them with their code."""
from __future__ import annotations

from ..registry import Format

# Blender reads and writes glTF itself: retromesh's importer offers neither
GLB = Format(name="glb", family="glTF 2.0", description="binary glTF 2.0 (GLB)",
             extensions=("glb",), magic_certain=True, scene_options=("source",), blender=())
GLTF = Format(name="gltf", family="glTF 2.0", description="glTF 2.0 JSON (+ .bin)",
              extensions=("gltf",), magic_certain=False, scene_options=("source",), blender=())

FORMATS = (GLB, GLTF)
