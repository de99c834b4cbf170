"""The skins of an ``.abc`` model, found as the games find them, and written back as ``.dtx``.

A LithTech model names no texture: the game code gives it its skins, one per texture index
(an ABC piece's ``material_index``). The rules, in the order tried for skin ``n`` of model
``X.abc`` (every name matched case-insensitively, as on the games' Windows file systems):

1. **Jupiter / NOLF2 attribute file**: an ``Attributes/modelbutes.txt`` in a folder above the
   model (at most :data:`MAX_UP` levels) whose ``[Model...]`` tag has a ``ModelFile`` naming
   this model (same path below that folder; ``.ltb`` or ``.abc``): its ``Skin0``, ``Skin1``...
   (``ModelButeMgr``'s ``CButeListReader``), relative to that folder.
2. **NOLF**: ``chars\\models\\X.abc`` wears ``chars\\skins\\X.dtx`` (skin 0) and
   ``chars\\skins\\X_head.dtx`` (skin 1): ``CModelButeMgr::GetBodySkinFilename`` /
   ``GetHeadSkinFilename`` build these names. Any ``skins`` folder beside the model's folder
   (``../skins``) or inside it is tried the same way.
3. **Shogo / Blood 2**: ``Skins\\`` mirrors ``Models\\``: ``Models\\Chars\\X.abc`` wears
   ``Skins\\Chars\\X.dtx``.
4. Beside the model: ``X.dtx``, ``X_head.dtx``; skin ``n >= 2``: ``X_n.dtx`` (what
   :func:`skin_outputs` writes).
5. The ``texture_path`` folders (``--texture-path``): the game's relative name under each
   (``chars/skins/X.dtx`` under a game's resource folder), then the file name anywhere below
   (see :mod:`retromesh.textures`).

A name from ``modelbutes.txt`` is only looked up inside its folder (no ``..``, no link out).
A skin found is embedded in the scene as PNG (:func:`dress`); one not found leaves the
material untextured, its game name in the material's ``lithtech_skin`` extra.
"""
from __future__ import annotations

import os
import re
import stat
import time
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ...binio import Reader
from ...errors import FormatError, LossWarning
from ...image import png
from ...scene import Scene, Texture, TextureRef
from . import dtx, dtx_pixels

__all__ = ["SkinFinder", "dress", "skin_outputs", "read_modelbutes"]

#: folders above a model searched for ``Attributes/modelbutes.txt``
MAX_UP = 4
MAX_BUTES_BYTES = 4 << 20
MAX_SKIN_BYTES = 64 << 20
#: the zlib level of the skins' PNGs in a GLB: a 256x256 skin decoded from DXT deflates in
#: 2.4 ms at 1 against 7.2 ms at zlib's default (6), into 5 to 8 % more bytes
PNG_LEVEL = 1
_MATERIAL = re.compile(r"material_(\d+)$")


#: folder -> ((mtime, inode), {lower-case name: name}, {lower-case name: "f" or "d"}): the
#: folders above the models of a batch are listed once while they do not change (a listing
#: was most of ``dress``'s cost in a folder of thousands of files); the last map holds the
#: entries that are plain files and folders (no links), as the listing saw them
_LISTINGS: dict[str, tuple[tuple[int, int], dict[str, str], dict[str, str]]] = {}
_LISTINGS_MAX = 256
#: a folder changed this recently (ns) may change again within its clock's granularity:
#: 2 s where the times look coarse (whole hundredths of a second: FAT's 2 s, HFS+'s 1 s,
#: exFAT's 10 ms), else 0.1 s (the kernel stamps files with a clock of 1 to 10 ms ticks); a
#: folder that changes every second or so (a system's temporary folder) is then listed once
#: a change, not once a model
_SETTLED_NS = 2_000_000_000
_SETTLED_FINE_NS = 100_000_000


def _settled(mtime_ns: int) -> bool:
    coarse = mtime_ns % 10_000_000 == 0
    return time.time_ns() - mtime_ns > (_SETTLED_NS if coarse else _SETTLED_FINE_NS)


_NOTHING: tuple[dict[str, str], dict[str, str]] = ({}, {})


def _list(folder: str) -> tuple[dict[str, str], dict[str, str]]:
    names = os.listdir(folder)
    # (the kinds of the entries walked through are found when first needed: _kind)
    return dict(zip(map(str.lower, names), names)), {}


def _kind(folder: str, name: str, kinds: dict[str, str]) -> str:
    """"f" for a plain file, "d" for a plain folder, "" for anything else (a link...): the
    entry's own kind, no link followed, kept with the folder's listing while it holds."""
    low = name.lower()
    kind = kinds.get(low)
    if kind is None:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            mode = 0
        kind = "f" if stat.S_ISREG(mode) else "d" if stat.S_ISDIR(mode) else ""
        kinds[low] = kind
    return kind


def _listing(folder: str) -> tuple[dict[str, str], dict[str, str]]:
    """The folder's names by their lower-case form, and the kinds of its plain entries."""
    try:
        st = os.stat(folder)
        stamp = (st.st_mtime_ns, st.st_ino)
        hit = _LISTINGS.get(folder)
        if hit is not None and hit[0] == stamp:
            return hit[1], hit[2]
        got = _list(folder)
    except OSError:
        return _NOTHING
    if _settled(st.st_mtime_ns):
        if len(_LISTINGS) >= _LISTINGS_MAX:
            _LISTINGS.clear()
        _LISTINGS[folder] = (stamp, *got)
    return got


def _walk_plain(root: Path, parts: Iterable[str], seen: dict | None = None
                ) -> tuple[Path | None, bool]:
    """``root/parts...`` matched case-insensitively (None when a part is missing), and
    whether it is a plain file reached through plain folders: no link on the way, so inside
    ``root`` wherever ``root`` itself leads (:func:`_inside` need not resolve it). ``seen``:
    the listings already taken for this model (a folder is tried for several skins)."""
    here = os.fspath(root)
    kinds_seen = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == ".." or "/" in part or "\\" in part:
            return None, False
        got = seen.get(here) if seen is not None else None
        if got is None:
            got = _listing(here)
            if seen is not None:
                seen[here] = got
        names, kinds = got
        low = part.lower()
        hit = names.get(low)
        if hit is None:
            return None, False
        kinds_seen.append(_kind(here, hit, kinds))
        here = os.path.join(here, hit)
    plain = bool(kinds_seen) and kinds_seen[-1] == "f" and all(k == "d" for k in kinds_seen[:-1])
    return Path(here), plain


def _split(name: str) -> list[str]:
    return [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]


def read_modelbutes(text: str) -> dict[str, dict[str, str]]:
    """``[Tag]`` -> {key (lower case): value} of a ButeMgr text file (``//`` comments, quoted
    or bare values)."""
    tags: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        if line.startswith("[") and "]" in line:
            current = tags.setdefault(line[1:line.index("]")].strip(), {})
        elif "=" in line and current is not None:
            key, value = line.split("=", 1)
            current[key.strip().lower()] = value.strip().strip('"')
    return tags


def _inside(path: Path, root: Path, roots: dict[str, str] | None = None) -> bool:
    """Whether ``path`` is a file inside ``root`` once links are followed (``roots``: the
    real paths of roots already resolved, by their path)."""
    try:
        key = os.fspath(root)
        top = roots.get(key) if roots is not None else None
        if top is None:
            top = os.path.realpath(key, strict=True)
            if roots is not None:
                roots[key] = top
        # (string paths: Path.resolve costs several times os.path.realpath, and each lstats
        # every component of the path)
        real = os.path.realpath(os.fspath(path), strict=True)
    except (OSError, RuntimeError, ValueError):
        return False
    return os.path.isfile(real) and (real == top or real.startswith(top.rstrip(os.sep) + os.sep))


class SkinFinder:
    """Finds the skins of the model at ``source`` (see the module docstring)."""

    def __init__(self, source: str | os.PathLike | None,
                 texture_path: Iterable[str | os.PathLike] = ()) -> None:
        self.source = Path(os.path.abspath(source)) if source is not None else None
        self.texture_path = [Path(p).expanduser() for p in texture_path]
        self._butes: list[tuple[Path, str]] | None = None
        self._roots: dict[str, str] = {}        # a folder's real path, resolved once
        self._seen: dict[str, tuple[dict[str, str], dict[str, str]]] = {}   # listings taken

    def _butes_skins(self) -> list[tuple[Path, str]]:
        """(resource folder, name) of each ``SkinN`` a modelbutes.txt gives this model."""
        if self._butes is not None:
            return self._butes
        self._butes = []
        src = self.source
        if src is None:
            return self._butes
        for up in range(1, MAX_UP + 2):
            if up >= len(src.parents):
                break
            root = src.parents[up - 1]
            butes, plain = _walk_plain(root, ("attributes", "modelbutes.txt"), self._seen)
            if butes is None or not (plain or _inside(butes, root, self._roots)):
                continue
            try:
                if butes.stat().st_size > MAX_BUTES_BYTES:
                    continue
                text = butes.read_bytes().decode("latin-1")
            except OSError:
                continue
            below = [p.lower() for p in src.relative_to(root).with_suffix("").parts]
            for values in read_modelbutes(text).values():
                model = _split(values.get("modelfile", ""))
                if not model or [p.lower() for p in model[:-1]] + \
                        [os.path.splitext(model[-1])[0].lower()] != below:
                    continue
                n = 0
                while f"skin{n}" in values:
                    self._butes.append((root, values[f"skin{n}"]))
                    n += 1
                return self._butes
        return self._butes

    def names(self, index: int) -> list[tuple[Path | None, list[str]]]:
        """(folder, relative name parts) tried for skin ``index``, in order; a None folder
        means "the texture_path folders"."""
        out: list[tuple[Path | None, list[str]]] = []
        butes = self._butes_skins()
        if index < len(butes):
            root, name = butes[index]
            out.append((root, _split(name)))
        if self.source is None:
            return out
        stem = self.source.stem
        file = f"{stem}.dtx" if index == 0 else f"{stem}_head.dtx" if index == 1 else \
            f"{stem}_{index}.dtx"
        folder, parent = self.source.parent, self.source.parent.parent
        out += [(parent, ["skins", file]), (folder, ["skins", file])]
        parts = [p.lower() for p in folder.parts]
        if "models" in parts:
            at = len(parts) - 1 - parts[::-1].index("models")
            base = Path(*folder.parts[:at])
            out.append((base, ["skins", *folder.parts[at + 1:], file]))
        out.append((folder, [file]))
        game = _split(butes[index][1]) if index < len(butes) else ["chars", "skins", file]
        out.append((None, game))
        return out

    def find(self, index: int) -> tuple[Path | None, str]:
        """(the skin file, the game's name for it) of skin ``index``; the file is None when
        nothing was found."""
        tried = self.names(index)
        for root, parts in tried:
            for top in ([root] if root is not None else self.texture_path):
                hit, plain = _walk_plain(top, parts, self._seen)
                if hit is not None and (plain or _inside(hit, top, self._roots)):
                    return hit, "/".join(parts)
        game = "/".join(tried[-1][1]) if tried else f"skin{index}.dtx"
        for top in self.texture_path:          # the file name anywhere below
            hit = _below(top, tried[-1][1][-1] if tried else game)
            if hit is not None:
                return hit, game
        return None, game


def _below(top: Path, name: str, depth: int = 4, budget: int = 20000) -> Path | None:
    queue = [(top, 0)]
    while queue and budget > 0:
        folder, d = queue.pop(0)
        try:
            with os.scandir(folder) as it:
                for e in it:
                    budget -= 1
                    if e.name.lower() == name.lower() and e.is_file() and \
                            _inside(Path(e.path), top):
                        return Path(e.path)
                    if e.is_dir(follow_symlinks=False) and d + 1 < depth:
                        queue.append((Path(e.path), d + 1))
        except OSError:
            continue
    return None


def _png_of(path: Path) -> bytes | str:
    """The skin as PNG bytes, or why not."""
    try:
        if path.stat().st_size > MAX_SKIN_BYTES:
            return f"{path} is larger than {MAX_SKIN_BYTES >> 20} MiB"
        data = path.read_bytes()
    except OSError as exc:
        return f"{path} could not be read ({exc.strerror or exc})"
    if not dtx.sniff(data[:8]):
        return f"{path} is no DTX texture"
    try:
        doc = dtx.read(Reader(data, file=str(path)))
        return png.from_rgba(dtx_pixels.to_rgba(doc), PNG_LEVEL).data
    except (FormatError, ValueError) as exc:
        return f"{path}: {exc}"


def dress(scene: Scene, source: str | os.PathLike | None,
          texture_path: Iterable[str | os.PathLike] = ()) -> Scene:
    """Give each material ``material_<n>`` of an ABC scene skin ``n`` as its base colour
    texture, embedded as PNG; the game's name for the skin goes into the material's
    ``lithtech_skin`` extra (found or not: a texture that is not there would make the glTF
    refer to a file that does not exist)."""
    finder = SkinFinder(source, texture_path)
    if source is None and not finder.texture_path:
        return scene                # read from bytes: nowhere to look
    for mat in scene.materials:
        m = _MATERIAL.match(mat.name)
        if m is None or mat.base_color_texture is not None:
            continue
        index = int(m.group(1))
        path, game = finder.find(index)
        mat.extras["lithtech_skin"] = game
        if path is None:
            continue
        image = _png_of(path)
        if isinstance(image, str):
            warnings.warn(LossWarning(f"skin {index}: {image}; the material stays untextured"),
                          stacklevel=3)
            continue
        tex = Texture(name=Path(game).stem, uri=game, image=image, mime_type="image/png",
                      extras={"lithtech_skin": index})
        scene.textures.append(tex)
        mat.base_color_texture = TextureRef(len(scene.textures) - 1)
    return scene


def _nearest_size(n: int) -> int:
    p = 1 << max(0, int(n) - 1).bit_length()
    if p > n and p // 2 >= dtx.MIN_SIZE and n - p // 2 < p - n:
        p //= 2
    return min(dtx.MAX_SIZE, max(dtx.MIN_SIZE, p))


def _rgba(image: bytes) -> np.ndarray:
    import io

    from PIL import Image
    with Image.open(io.BytesIO(image)) as im:
        rgba = im.convert("RGBA")
        w, h = _nearest_size(rgba.width), _nearest_size(rgba.height)
        if (w, h) != rgba.size:
            warnings.warn(LossWarning(f"a {rgba.width}x{rgba.height} skin is resized to {w}x{h}:"
                                      " DTX textures are powers of two from 8 to 1024"),
                          stacklevel=4)
            rgba = rgba.resize((w, h), Image.Resampling.LANCZOS)
        return np.asarray(rgba, np.uint8)


def skin_outputs(scene: Scene, bpp: str = "32") -> dict[str, bytes]:
    """The skins of the scene's ``material_<n>`` materials as ``.dtx`` files to write beside
    the model: ``{".dtx": ..., "_head.dtx": ..., "_2.dtx": ...}`` (suffixes to the model's
    stem, the names rule 4 of the module docstring finds). A material's texture must carry its
    image (a GLB does); one without is skipped with a LossWarning."""
    code = dtx_pixels.BPP_OPTIONS.get(str(bpp).lower())
    if code is None:
        raise ValueError(f"skin_bpp: one of {', '.join(dtx_pixels.BPP_OPTIONS)}, got {bpp!r}")
    out: dict[str, bytes] = {}
    for k, mat in enumerate(scene.materials):
        ref = mat.base_color_texture
        m = _MATERIAL.match(mat.name)
        index = int(m.group(1)) if m else k
        if ref is None or ref.texture >= len(scene.textures):
            continue
        tex = scene.textures[ref.texture]
        if tex.image is None:
            warnings.warn(LossWarning(f"material {mat.name!r}: its texture carries no image; "
                                      "no .dtx written for it"), stacklevel=3)
            continue
        suffix = ".dtx" if index == 0 else "_head.dtx" if index == 1 else f"_{index}.dtx"
        if suffix in out:
            continue
        try:
            rgba = _rgba(tex.image)
        except Exception as exc:       # Pillow raises many kinds on bad data
            warnings.warn(LossWarning(f"material {mat.name!r}: its image could not be decoded "
                                      f"({type(exc).__name__}); no .dtx written"), stacklevel=3)
            continue
        out[suffix] = dtx.write(dtx_pixels.from_rgba(rgba, bpp=code))
    return out
