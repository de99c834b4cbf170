"""Textures Blender would lose on the way through it, kept in the materials' extras and put
back into the GLB it writes (see :mod:`.bridge`, which calls :func:`keep_missing_images` before
Blender imports and :func:`restore_missing_images` after it exports). No bpy here."""
from __future__ import annotations

from typing import Any

__all__ = ["MISSING_IMAGES", "keep_missing_images", "restore_missing_images"]

# Blender's exporter leaves out every texture whose image it could not load, so a texture that
# was not found beside the model would vanish from the file written back. Each material keeps
# the references to such images in its extras (key MISSING_IMAGES) and they are put back into
# the GLB Blender writes, unless the slot holds a texture by then (one assigned in Blender).
# A texture not found is, in a GLB, the embedded placeholder (retromesh.gltf.placeholder):
# Blender shows it and writes it back, without its image's extras (the name the model gave)
# and under names of its own; it is kept the same way and put back over the slot's texture
# while that one still has the placeholder's pixels (painted over in Blender, it stays).
MISSING_IMAGES = "retromesh_missing_images"
_SLOTS = (("pbrMetallicRoughness", "baseColorTexture"), ("pbrMetallicRoughness",
          "metallicRoughnessTexture"), (None, "normalTexture"), (None, "occlusionTexture"),
          (None, "emissiveTexture"))


def _slot(material: dict, group: str | None, name: str, create: bool = False) -> dict:
    holder = material
    if group:
        if group not in material and create:
            material[group] = {}
        holder = material.get(group, {})
    return holder


def keep_missing_images(doc: dict) -> None:
    textures, images = doc.get("textures", []), doc.get("images", [])
    samplers = doc.get("samplers", [])
    for mat in doc.get("materials", []):
        kept = {}
        for group, name in _SLOTS:
            info = _slot(mat, group, name).get(name)
            if not isinstance(info, dict) or not 0 <= info.get("index", -1) < len(textures):
                continue
            tex = textures[info["index"]]
            src = tex.get("source")
            if not isinstance(src, int) or not 0 <= src < len(images) or not (
                    "uri" in images[src] or _placeholder(images[src])):
                continue                 # an image inside the GLB: Blender keeps it
            sampler = tex.get("sampler")
            kept[f"{group or ''}/{name}"] = {
                "info": {k: v for k, v in info.items() if k != "index"},
                "texture": {k: v for k, v in tex.items() if k not in ("source", "sampler")},
                "image": {k: v for k, v in images[src].items()
                          if k not in ("bufferView", "mimeType")},
                "sampler": samplers[sampler] if isinstance(sampler, int)
                and 0 <= sampler < len(samplers) else None}
        if kept:
            mat.setdefault("extras", {})[MISSING_IMAGES] = kept


def _placeholder(image: dict) -> bool:
    from ..gltf.placeholder import PLACEHOLDER_KEY
    extras = image.get("extras")
    return isinstance(extras, dict) and extras.get(PLACEHOLDER_KEY) is True \
        and isinstance(extras.get("original_uri"), str)


def _holds_placeholder(doc: dict, info: Any, bin_data: bytes | None) -> bool:
    """Whether the texture ``info`` points at has an image inside the GLB with the
    placeholder's pixels."""
    from ..gltf.placeholder import is_placeholder
    textures, images, views = (doc.get(k) or [] for k in ("textures", "images", "bufferViews"))
    try:
        view = views[images[textures[info["index"]]["source"]]["bufferView"]]
        if view.get("buffer", 0) != 0 or bin_data is None:
            return False
        start = view.get("byteOffset", 0)
        return is_placeholder(bin_data[start:start + view["byteLength"]])
    except (KeyError, IndexError, TypeError, AttributeError):
        return False


def _put_back_placeholder(doc: dict, holder: dict, name: str, entry: dict) -> None:
    """The slot's texture (the placeholder Blender wrote back) as retromesh wrote it: its
    image's name and extras, the texture's name and extras, its sampler."""
    tex = doc["textures"][holder[name]["index"]]
    image = doc["images"][tex["source"]]
    for key in [k for k in image if k not in ("bufferView", "mimeType")]:
        del image[key]
    image.update(entry["image"])
    image.pop("uri", None)
    for key in [k for k in tex if k not in ("source", "sampler")]:
        del tex[key]
    tex.update(entry.get("texture") or {})
    if entry.get("sampler") is not None:
        doc.setdefault("samplers", []).append(entry["sampler"])
        tex["sampler"] = len(doc["samplers"]) - 1
    holder[name] = dict(entry.get("info") or {}, index=holder[name]["index"])


def restore_missing_images(doc: dict, bin_data: bytes | None = None) -> None:
    from urllib.parse import quote
    for mat in doc.get("materials", []):
        extras = mat.get("extras")
        if not isinstance(extras, dict) or not isinstance(extras.get(MISSING_IMAGES), dict):
            continue
        kept = extras.pop(MISSING_IMAGES)
        if not extras:
            del mat["extras"]
        for key, entry in kept.items():
            group, _, name = key.partition("/")
            holder = _slot(mat, group or None, name, create=True)
            if not isinstance(entry, dict) or not isinstance(entry.get("image"), dict):
                continue
            placeholder = _placeholder(entry["image"])
            if name in holder:
                if placeholder and _holds_placeholder(doc, holder[name], bin_data):
                    _put_back_placeholder(doc, holder, name, entry)
                continue
            image = dict(entry["image"])
            if placeholder:     # dropped: a reference (read back as extras.original_uri says)
                image["uri"] = quote(image["extras"]["original_uri"].rpartition("/")[2]
                                     or "texture.png")
            doc.setdefault("images", []).append(image)
            tex = dict(entry.get("texture") or {}, source=len(doc["images"]) - 1)
            if entry.get("sampler") is not None:
                doc.setdefault("samplers", []).append(entry["sampler"])
                tex["sampler"] = len(doc["samplers"]) - 1
            doc.setdefault("textures", []).append(tex)
            holder[name] = dict(entry.get("info") or {}, index=len(doc["textures"]) - 1)
