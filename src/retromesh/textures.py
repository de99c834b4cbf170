"""Finding the image files a model names, and making images glTF can carry (knows no format).

Models name their textures as the author's disk or the game saw them: ``Skin.BMP`` for a file
now called ``skin.png``, ``C:\\work\\dwarf\\axe.jpg`` from the artist's machine, ``mobs_bee.png``
kept in the mod's ``textures/`` folder beside ``models/``. :class:`TextureFinder` finds such
files and :meth:`TextureFinder.load` returns PNG or JPEG bytes for them.

Lookup rules (the first hit wins):

1. The stored name is cleaned: backslashes become slashes, surrounding spaces and NULs go.
   An absolute name (``/x/y.png``, ``C:\\art\\skin.bmp``, ``C:skin.bmp``, ``\\\\server\\x.png``,
   ``file://...``) or one with a ``..`` part is reduced to its last component; a relative
   name (``sub/skin.png``) is tried as that relative path first, then by its last component.
   A name is never used as a path on its own: it is only looked up inside the roots.
2. Roots, in this order: the source file's folder; the game layouts around it — a
   ``textures`` folder inside it, a ``textures`` folder beside it (Luanti/Minetest mods keep
   ``models/`` and ``textures/`` side by side; Lugaru keeps ``Data/Models`` and
   ``Data/Textures``), a ``texture`` folder beside it (Lost Saga keeps ``resource/mesh`` and
   ``resource/texture``); then every ``texture_path`` folder (``~`` expanded). Layout folder
   names are matched case-insensitively; a layout folder that is itself a symbolic link is not
   used (a ``texture_path`` folder may be one: the user named it).
3. Inside a folder, names match case-insensitively (an exact-case match is preferred) and
   with extension swaps: the name as given, then its stem with each extension of
   :mod:`retromesh.imageformats` in turn (``.png``, ``.jpg``, ``.jpeg``, ``.tga``, ``.bmp``,
   ``.dds``, ``.pcx``, and those registered later). Only files with one of these extensions are
   taken.
4. Every root's top level is searched first; then the subfolders of the layout folders and of
   the ``texture_path`` folders (Luanti allows subfolders in ``textures/``, Lost Saga has
   ``texture/decalbase``...), breadth first, at most :data:`MAX_DEPTH` levels and
   :data:`MAX_ENTRIES` directory entries per root, never through a symbolically linked folder.
5. Containment: a hit is resolved (symbolic links followed) and taken only when the real
   file lies inside one of the (resolved) roots; anything else is never opened.
6. Loading (:mod:`retromesh.imageformats` says how): PNG and JPEG files (recognised by their
   bytes, not their name) are kept as they are; a format with a decoder of its own is decoded
   by it; BMP, TGA, DDS, PCX (and the other plain raster formats Pillow reads: GIF, TIFF, WebP,
   PPM, SGI, ICO) are converted to PNG. Files over :data:`MAX_FILE_BYTES` and images over
   Pillow's decompression-bomb limit are refused.
   Results are cached per finder, so a file named by many materials is read once.
"""
from __future__ import annotations

import io
import os
import stat
import time
import warnings
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from .imageformats import carried_mime, image_extensions, own_decoder, pillow_formats
from .records import record

__all__ = ["TextureFinder", "FoundImage", "gltf_image", "image_mime", "split_name"]

#: layout folders, relative to the source folder ("" = inside it, ".." = beside it)
LAYOUT_FOLDERS = (("", "textures"), ("..", "textures"), ("..", "texture"))
MAX_DEPTH = 4
MAX_ENTRIES = 20000
MAX_FILE_BYTES = 256 << 20


def image_mime(data: bytes) -> str | None:
    """``image/png`` or ``image/jpeg`` when ``data`` is one of the two (glTF carries them as
    they are), else None."""
    return carried_mime(data)


def gltf_image(data: bytes) -> tuple[bytes, str]:
    """``(bytes, mime)`` glTF can carry: PNG/JPEG unchanged, anything a registered image format
    decodes (:mod:`retromesh.imageformats`: a decoder of our own, else Pillow) as PNG.

    Raises ``ValueError`` when the bytes are no image they can decode.
    """
    mime = image_mime(data)
    if mime is not None:
        return data, mime
    try:
        from PIL import Image  # only needed for images glTF cannot carry
    except ImportError as exc:          # pragma: no cover - Pillow is a dependency
        raise ValueError("Pillow is needed to convert it to PNG") from exc
    decode = own_decoder(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with (decode(data) if decode is not None
                  else Image.open(io.BytesIO(data), formats=pillow_formats())) as opened:
                im: Image.Image = opened
                im.load()
                if im.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
                    im = im.convert("RGBA" if "A" in im.getbands() else "RGB")
                out = io.BytesIO()
                im.save(out, format="PNG")
    except Exception as exc:            # Pillow raises many kinds on bad data
        raise ValueError(f"not an image Pillow can read ({type(exc).__name__}: {exc})"[:300]) \
            from exc
    return out.getvalue(), "image/png"


@record(frozen=True)
class FoundImage:
    """A texture file found on disk, as bytes glTF can carry."""
    path: Path                  # the real (resolved) file
    data: bytes                 # PNG or JPEG
    mime_type: str
    converted: bool             # True when the file was not PNG/JPEG and was converted


def split_name(name: str) -> tuple[list[str] | None, str]:
    """(relative path parts, or None when only the last component may be used; last component,
    "" when there is none) of a stored texture name (rule 1 of the module docstring)."""
    text = name.replace("\\", "/").strip().strip("\0").strip()
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or "\0" in text:
        return None, ""
    base = parts[-1]
    if base == "..":
        return None, ""
    absolute = text.startswith("/") or ":" in parts[0]
    relative = None if absolute or ".." in parts or len(parts) == 1 else parts
    return relative, base


def _candidates(base: str) -> list[str]:
    stem, ext = os.path.splitext(base)
    exts = ["." + e for e in image_extensions()]
    if ext.lower() in exts and stem:
        return [base] + [stem + e for e in exts if e != ext.lower()]
    return [base + e for e in exts]


#: folder -> (modification time, its entries, the entries by lower-case name)
_SCANS: dict[str, tuple[int, list[tuple[str, bool]], dict[str, list[tuple[str, bool]]]]] = {}


def _entries(folder: Path) -> list[tuple[str, bool]]:
    """(name, is a folder) of ``folder``'s entries. Kept for the process while the folder's
    modification time stays the same (adding, removing or renaming an entry changes it): a
    batch looks for every model's textures in the same few folders. A folder changed in the
    last 2 seconds is read again each time (its time is only as fine as the file system's
    clock tick: a change right after the scan could keep the same time)."""
    return _scan(folder)[0]


def _by_lower(folder: Path) -> dict[str, list[tuple[str, bool]]]:
    """``folder``'s entries (:func:`_entries`, in their order) by their lower-case name: made
    once per scan, so that each model's lookups in the same folders cost a dict look-up."""
    return _scan(folder)[1]


def _scan(folder: Path) -> tuple[list[tuple[str, bool]], dict[str, list[tuple[str, bool]]]]:
    key = os.fspath(folder)
    stamp = os.stat(key).st_mtime_ns
    hit = _SCANS.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1], hit[2]
    with os.scandir(key) as it:
        entries = [(e.name, e.is_dir()) for e in it]
    lower: dict[str, list[tuple[str, bool]]] = {}
    for entry in entries:
        lower.setdefault(entry[0].lower(), []).append(entry)
    if time.time_ns() - stamp > 2_000_000_000:
        if len(_SCANS) >= 256:
            _SCANS.clear()
        _SCANS[key] = (stamp, entries, lower)
    return entries, lower


class TextureFinder:
    """Looks texture names up in a source folder, the game layouts around it and extra folders.

    ``source_dir`` is the folder of the model file (None when unknown); ``texture_path`` the
    extra folders the user named. See the module docstring for the rules.
    """

    def __init__(self, source_dir: str | os.PathLike | None = None,
                 texture_path: Iterable[str | os.PathLike] = ()) -> None:
        self.roots: list[Path] = []          # resolved, existing folders, in search order
        self._deep: dict[Path, dict[str, list[Path]] | None] = {}   # roots searched below too
        if source_dir is not None:
            src = Path(os.path.abspath(source_dir))     # '..' of the folder as the user sees it
            self._add(src, deep=False)
            for rel, folder in LAYOUT_FOLDERS:
                layout = self._child_dir(src if rel == "" else src.parent, folder)
                if layout is not None and not layout.is_symlink():
                    self._add(layout, deep=True)
        for extra in texture_path:
            self._add(Path(extra).expanduser(), deep=True)
        self._listings: dict[Path, dict[str, list[tuple[str, bool]]]] = {}
        self._found: dict[str, Path | None] = {}
        self._loaded: dict[Path, FoundImage | str] = {}

    # -- roots ---------------------------------------------------------------------------
    def _add(self, folder: Path, *, deep: bool) -> None:
        try:
            real = folder.resolve()
            if not real.is_dir():
                return
        except (OSError, RuntimeError, ValueError):
            return
        if real not in self.roots:
            self.roots.append(real)
        if deep and real not in self._deep:
            self._deep[real] = None

    @staticmethod
    def _child_dir(parent: Path, name: str) -> Path | None:
        """``parent/name`` matched case-insensitively (the exact case first)."""
        try:
            same = _by_lower(parent).get(name.lower())
            # (no entry of that name in any case: no folder either, and no system call)
            if same and (parent / name).is_dir():
                return parent / name
            for entry, is_dir in same or ():
                if entry.lower() == name and is_dir:
                    return parent / entry
        except (OSError, ValueError):
            pass
        return None

    def describe(self) -> str:
        """The roots, for messages."""
        if not self.roots:
            return "no folder"
        shown = [str(r) for r in self.roots[:4]]
        more = len(self.roots) - len(shown)
        return ", ".join(shown) + (f" and {more} more folders" if more > 0 else "")

    # -- lookup --------------------------------------------------------------------------
    def _listing(self, folder: Path) -> dict[str, list[tuple[str, bool]]]:
        cached = self._listings.get(folder)
        if cached is None:
            try:
                cached = _by_lower(folder)
            except (OSError, ValueError):
                cached = {}
            self._listings[folder] = cached
        return cached

    def _match(self, folder: Path, wanted: str) -> str | None:
        same = self._listing(folder).get(wanted.lower())
        if not same:
            return None
        return wanted if any(entry == wanted for entry, _ in same) else same[0][0]

    def _inside(self, path: Path, in_root: bool = False) -> Path | None:
        """The real file ``path`` names when it is a regular file inside one of the roots.
        ``in_root``: ``path`` is an entry of a root, a real folder (resolved): unless it is a
        link, it is its own real path (one ``lstat``, not a ``resolve`` of every part)."""
        if in_root:
            try:
                mode = os.lstat(path).st_mode
            except (OSError, ValueError):
                return None
            if not stat.S_ISLNK(mode):
                return path if stat.S_ISREG(mode) else None
        try:
            real = path.resolve()
            if not real.is_file():
                return None
        except (OSError, RuntimeError, ValueError):
            return None
        if any(real.is_relative_to(root) for root in self.roots):
            return real
        return None

    def _in_folder(self, folder: Path, base: str, root: bool = False) -> Path | None:
        """The image file ``base`` names in ``folder`` (``root``: one of the roots)."""
        for cand in _candidates(base):
            hit = self._match(folder, cand)
            if hit is not None and os.path.splitext(hit)[1].lower().lstrip(".") in \
                    image_extensions():
                real = self._inside(folder / hit, in_root=root)
                if real is not None:
                    return real
        return None

    def _walk_relative(self, root: Path, parts: list[str]) -> Path | None:
        folder = root
        for part in parts[:-1]:
            hit = self._match(folder, part)
            if hit is None or not (folder / hit).is_dir():
                return None
            folder = folder / hit
        return self._in_folder(folder, parts[-1])

    def _deep_index(self, root: Path) -> dict[str, list[Path]]:
        """File name (lower case) -> the folders below ``root`` holding it, breadth first,
        within the depth and entry budgets (built once per root, so that a model naming many
        textures costs one walk)."""
        cached = self._deep.get(root)
        if cached is not None:
            return cached
        index: dict[str, list[Path]] = {}
        budget = MAX_ENTRIES
        queue = deque([(root, 0)])
        while queue and budget > 0:
            folder, depth = queue.popleft()
            try:
                with os.scandir(folder) as it:
                    for entry in it:
                        budget -= 1
                        if budget <= 0:
                            break
                        if entry.is_dir(follow_symlinks=False):
                            if depth + 1 < MAX_DEPTH:
                                queue.append((folder / entry.name, depth + 1))
                        elif folder != root:
                            index.setdefault(entry.name.lower(), []).append(folder)
            except (OSError, ValueError):
                continue
        self._deep[root] = index
        return index

    def find(self, name: str) -> Path | None:
        """The real path of the file ``name`` refers to, or None."""
        if name in self._found:
            return self._found[name]
        relative, base = split_name(name)
        hit = None
        if base:
            for root in self.roots:
                if relative is not None:
                    hit = self._walk_relative(root, relative)
                if hit is None:
                    hit = self._in_folder(root, base, root=True)
                if hit is not None:
                    break
            for root in self._deep if hit is None else ():
                index = self._deep_index(root)
                folders = {f: None for c in _candidates(base) for f in index.get(c.lower(), ())}
                for folder in folders:
                    hit = self._in_folder(folder, base)
                    if hit is not None:
                        break
                if hit is not None:
                    break
        self._found[name] = hit
        return hit

    def load(self, name: str) -> FoundImage | str:
        """The image ``name`` refers to, or a sentence saying why there is none."""
        path = self.find(name)
        if path is None:
            if not self.roots:
                return "not found (the source's folder is unknown and no texture path was given)"
            return f"not found in {self.describe()}"
        cached = self._loaded.get(path)
        if cached is not None:
            return cached
        result: FoundImage | str
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                result = f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB"
            else:
                raw = path.read_bytes()
                data, mime = gltf_image(raw)
                result = FoundImage(path, data, mime, converted=data is not raw)
        except OSError as exc:
            result = f"{path} could not be read ({exc.strerror or exc})"
        except ValueError as exc:
            result = f"{path} is {exc}"
        self._loaded[path] = result
        return result
