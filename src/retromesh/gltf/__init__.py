"""glTF 2.0: the Scene <-> glTF bridge, registered as the ``glb`` and ``gltf`` formats.

``retromesh.save(scene, "x.glb")`` writes a binary GLB; ``"x.gltf"`` writes JSON plus an
``x.bin`` and the image files beside it. Options of the writing side: ``embed_images=True``
(the default) looks every texture the scene names up — beside the source, in the game's usual
folders and in the ``texture_path=[...]`` folders (see :mod:`retromesh.textures`) — and puts
the ones found into the GLB (converted to PNG when glTF cannot carry them), or beside the
``.gltf``; one not found is an embedded placeholder image in a GLB (its name in the image's
extras), a relative reference beside a ``.gltf``; ``embed_images=False`` keeps relative
references only. ``image_dir=`` overrides the source folder; ``embed_buffer=True``
(``.gltf`` only) puts the buffer and the images into the JSON as data URIs.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..fileio import Parts
from ..registry import register
from ..scene import Scene
from .container import MAGIC
from .manifest import GLB, GLTF
from .writer import GltfDocument, compute_normals, glb_bytes, glb_parts, gltf_files, scene_to_gltf


def __getattr__(name: str) -> Any:   # the reader is imported only when a glTF is read
    if name == "gltf_to_scene":
        from .reader import gltf_to_scene
        return gltf_to_scene
    raise AttributeError(name)


def read_glb(r: Any) -> GltfDocument:
    from .reader import read_glb as read
    return read(r)


def read_gltf_json(r: Any) -> GltfDocument:
    from .reader import read_gltf_json as read
    return read(r)


__all__ = ["GltfDocument", "scene_to_gltf", "gltf_to_scene", "glb_bytes", "gltf_files",
           "compute_normals"]


def _outputs(doc: GltfDocument, path: Path) -> Mapping[Path, bytes | Parts]:
    if path.suffix.lower() == ".gltf":
        return gltf_files(doc, path, embed_buffer=getattr(doc, "embed_buffer", False))
    return {path: glb_parts(doc)}       # written part by part: no joined copy in memory


def _write(doc: GltfDocument) -> bytes:
    if doc.binary:
        return glb_bytes(doc)
    files = gltf_files(doc, Path("memory.gltf"), embed_buffer=True)
    return files[Path("memory.gltf")]


def _to_scene(doc: GltfDocument, *, source: Path | None = None) -> Scene:
    from .reader import gltf_to_scene
    return gltf_to_scene(doc, source=source, file=str(source) if source is not None else None)


def _from_scene(scene: Scene, *, embed_images: bool = True,
                texture_path: Iterable[str | os.PathLike] | str | os.PathLike = (),
                image_dir: Path | str | None = None, embed_buffer: bool = False,
                binary: bool = True) -> GltfDocument:
    doc = scene_to_gltf(scene, embed_images=embed_images, texture_path=texture_path,
                        image_dir=Path(image_dir) if image_dir else None,
                        external_images=not binary and not embed_buffer,
                        validate=False)     # the registry validated it before calling us
    doc.binary = binary
    doc.embed_buffer = embed_buffer  # type: ignore[attr-defined]
    return doc


def _from_scene_json(scene: Scene, *, embed_images: bool = True,
                     texture_path: Iterable[str | os.PathLike] | str | os.PathLike = (),
                     image_dir: Path | str | None = None,
                     embed_buffer: bool = False) -> GltfDocument:
    return _from_scene(scene, embed_images=embed_images, texture_path=texture_path,
                       image_dir=image_dir, embed_buffer=embed_buffer, binary=False)


def _info(doc: GltfDocument) -> dict[str, Any]:
    d = getattr(doc, "json", None)
    if isinstance(d, dict):
        return {k: len(d.get(k) or []) for k in
                ("nodes", "meshes", "materials", "textures", "images", "skins", "animations",
                 "accessors", "bufferViews")}
    d = doc.gltf
    return {k: len(getattr(d, k) or []) for k in
            ("nodes", "meshes", "materials", "textures", "images", "skins", "animations",
             "accessors", "bufferViews")}


register(GLB, doc_types=(GltfDocument,), sniff=lambda h: h[:4] == MAGIC, read=read_glb,
         write=_write, outputs=_outputs, to_scene=_to_scene, from_scene=_from_scene, info=_info)
register(GLTF, doc_types=(GltfDocument,), sniff=lambda h: h.lstrip()[:1] == b"{",
         read=read_gltf_json, write=_write, outputs=_outputs, to_scene=_to_scene,
         from_scene=_from_scene_json, info=_info)
