"""The images, samplers and textures of a glTF asset written from a Scene.

A texture's image is, in this order: the bytes the scene carries (a GLB read back), converted
to PNG when they are neither PNG nor JPEG; the file its name refers to, found by
:class:`retromesh.textures.TextureFinder` (when ``embed_images``); else a relative reference.
Found and carried images go into the buffer (GLB) or, for ``.gltf`` output, into files beside
it (``external``). A name that cannot be found warns :class:`MissingTextureWarning` once; in a
GLB (or a ``.gltf`` whose images are inside it) its image is the embedded placeholder of
:mod:`.placeholder` (a GLB must be self-contained), the name kept in the image's
``extras.original_uri``; beside a ``.gltf`` it stays a relative URI, where a name that is not
PNG/JPEG refers to the ``.png`` users convert it to, the stored name kept in
``extras.original_uri`` too (read back as the texture's uri).

One image per distinct source (same bytes, or same reference), one sampler per distinct
filter/wrap set, one texture per distinct (image, sampler, name, extras).
"""
from __future__ import annotations

import json
import os
import re
import warnings
from base64 import b64encode
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from ..errors import LossWarning, MissingTextureWarning
from ..scene import Scene
from ..textures import TextureFinder, gltf_image, image_mime, split_name
from . import model as g
from .jsonvalues import extras_json, jsonable
from .placeholder import PLACEHOLDER_KEY, placeholder_png

__all__ = ["add_textures", "source_dir_of", "safe_file_name", "inline_image_files",
           "data_uri_images", "place_image_files"]


def source_dir_of(scene: Scene, image_dir: str | os.PathLike | None = None) -> Path | None:
    """Where the scene's source file was: ``image_dir`` when given, else the
    ``extras["source_dir"]`` a format reader set, when it names an existing folder."""
    if image_dir is not None:
        return Path(image_dir)
    sd = scene.extras.get("source_dir")
    if isinstance(sd, str) and sd and os.path.isdir(sd):
        return Path(sd)
    return None


def safe_file_name(stem: str, ext: str) -> str:
    """A plain file name (letters, digits, ``-_.``; no leading dot) ending in ``ext``."""
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip("._")[:100] or "texture"
    return clean + ext


def _reference_uri(original: str) -> str:
    """The relative URI a texture that is not embedded keeps: a path on the author's disk or
    with ``..`` is cut to its file name; a name that is not PNG/JPEG refers to the ``.png``
    users convert it to (``skin.dds`` -> ``skin.png``)."""
    relative, base = split_name(original)
    if not base:
        return "texture.png"
    head, slash, last = ("/".join(relative) if relative else base).rpartition("/")
    stem, dot, ext = last.rpartition(".")
    if not dot or not stem or ext.lower() not in ("png", "jpg", "jpeg"):
        last = (stem if dot and stem else last) + ".png"
    return head + slash + last


class _Images:
    def __init__(self, doc: g.GLTF2, view, external: bool) -> None:
        self.doc = doc
        self.view = view                    # bytes -> bufferView index
        self.external = external
        self.index: dict[tuple, int] = {}
        self.files: dict[str, bytes] = {}   # external image files: name -> bytes
        self._lower: set[str] = set()
        self._placeholder_view: int | None = None

    def _add(self, key: tuple, image: g.Model) -> int:
        self.doc.images.append(image)
        self.index[key] = len(self.doc.images) - 1
        return self.index[key]

    def data(self, data: bytes, mime: str, name: str, stem: str) -> int:
        key = ("data", bytes(data))     # the same bytes: one image (no hashlib: start-up time)
        if key in self.index:
            return self.index[key]
        image = g.Image(name=name or None)
        if self.external:
            ext = ".jpg" if mime == "image/jpeg" else ".png"
            fname = safe_file_name(stem, ext)
            k = 1
            while fname.lower() in self._lower:
                fname = safe_file_name(f"{stem}_{k}", ext)
                k += 1
            self._lower.add(fname.lower())
            self.files[fname] = data
            image.uri = fname
        else:
            image.bufferView = self.view(data)
            image.mimeType = mime
        return self._add(key, image)

    def placeholder(self, original: str, name: str) -> int:
        """The placeholder image standing for the missing texture ``original`` (its bytes
        stored once per GLB)."""
        key = ("placeholder", original)
        if key in self.index:
            return self.index[key]
        if self._placeholder_view is None:
            self._placeholder_view = self.view(placeholder_png())
        # named as a reference is (the texture's name): read back, the same texture
        image = g.Image(name=name or None, bufferView=self._placeholder_view,
                        mimeType="image/png")
        image.extras = {"original_uri": original, PLACEHOLDER_KEY: True}
        return self._add(key, image)

    def reference(self, original: str, name: str) -> int:
        uri = _reference_uri(original)
        key = ("uri", uri, original)
        if key in self.index:
            return self.index[key]
        image = g.Image(name=name or None, uri=quote(uri, safe="/"))
        if uri != original:
            image.extras = {"original_uri": original}
        return self._add(key, image)


def add_textures(scene: Scene, doc: g.GLTF2, view, *, embed_images: bool = True,
                 texture_path: Iterable[str | os.PathLike] = (), source_dir: Path | None = None,
                 external: bool = False) -> tuple[list[int], dict[str, bytes]]:
    """Fill ``doc.images/samplers/textures``; returns (glTF texture index per scene texture,
    image files to write beside a ``.gltf``). ``view(bytes) -> bufferView index``."""
    images = _Images(doc, view, external)
    finder: TextureFinder | None = None
    if embed_images and any(t.image is None and t.uri for t in scene.textures):
        finder = TextureFinder(source_dir, texture_path)
    samplers: dict[tuple, int] = {}
    textures: dict[tuple, int] = {}
    warned: set[str] = set()
    out: list[int] = []
    for i, t in enumerate(scene.textures):
        original = (t.uri or t.name or "texture.png").replace("\\", "/")
        image_index = None
        if t.image is not None:
            try:
                data, mime = gltf_image(t.image)
                image_index = images.data(data, mime, t.name, t.name or f"texture{i}")
            except ValueError as exc:
                warnings.warn(f"texture {t.name or i!r}: its image is {exc}; kept as a reference",
                              LossWarning, stacklevel=3)
        elif finder is not None and t.uri:
            found = finder.load(t.uri)
            if isinstance(found, str):
                if not external:
                    image_index = images.placeholder(original, t.name)
                if t.uri not in warned:
                    warned.add(t.uri)
                    label = scene.name or "the model"
                    kept = ("a placeholder image embedded in its place" if not external else
                            f"kept as the relative reference {_reference_uri(original)!r}")
                    warnings.warn(MissingTextureWarning(
                        f"{label} names texture {t.uri!r}: {found}; {kept} (--texture-path DIR "
                        "adds a folder to search)", t.uri), stacklevel=3)
            else:
                image_index = images.data(found.data, found.mime_type, t.name, found.path.stem)
        if image_index is None:
            image_index = images.reference(original, t.name)
        skey = (9729, 9987 if t.mipmaps else 9729, int(t.wrap_s), int(t.wrap_t))
        if skey not in samplers:
            doc.samplers.append(g.Sampler(magFilter=skey[0], minFilter=skey[1],
                                          wrapS=skey[2], wrapT=skey[3]))
            samplers[skey] = len(doc.samplers) - 1
        extras = extras_json(t.extras) if t.extras else None
        tkey = (image_index, samplers[skey], t.name or "",
                json.dumps(jsonable(t.extras) if t.extras else None, sort_keys=True))
        if tkey not in textures:
            doc.textures.append(g.Texture(source=image_index, sampler=samplers[skey],
                                          name=t.name or None, extras=extras))
            textures[tkey] = len(doc.textures) - 1
        out.append(textures[tkey])
    return out, images.files


def inline_image_files(doc: g.GLTF2, files: dict[str, bytes], view) -> None:
    """Images written as files (for a ``.gltf``) moved into buffer views (for a GLB)."""
    for image in doc.images or []:
        if image.uri in files:
            data = files[image.uri]
            image.uri = None
            image.bufferView = view(data)
            image.mimeType = image_mime(data) or "image/png"


def data_uri_images(doc: g.GLTF2, files: dict[str, bytes]) -> None:
    """Images written as files turned into data URIs (a self-contained ``.gltf``)."""
    for image in doc.images or []:
        if image.uri in files:
            data = files[image.uri]
            image.uri = (f"data:{image_mime(data) or 'image/png'};base64,"
                         + b64encode(data).decode("ascii"))


def place_image_files(doc: g.GLTF2, files: dict[str, bytes], folder: Path) -> dict[Path, bytes]:
    """Where the image files go beside a ``.gltf`` in ``folder``. An existing file of that name
    holding other bytes (or a link) is not replaced: the image gets another name; one holding
    the same bytes is left as it is."""
    out: dict[Path, bytes] = {}
    taken = {name.lower() for name in files}
    for name, data in files.items():
        stem, ext = os.path.splitext(name)
        final, k = name, 0
        while True:
            target = folder / final
            try:
                if target.is_symlink():
                    exists, same = True, False
                else:
                    exists = target.exists()
                    same = (exists and target.is_file() and target.stat().st_size == len(data)
                            and target.read_bytes() == data)
            except OSError:
                exists, same = True, False
            if same or not exists:
                break
            k += 1
            final = f"{stem}_{k}{ext}"
            while final.lower() in taken:
                k += 1
                final = f"{stem}_{k}{ext}"
        if final != name:
            taken.add(final.lower())
            for image in doc.images or []:
                if image.uri == name:
                    image.uri = final
        if not same:
            out[target] = data
    return out
