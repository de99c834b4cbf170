"""Luanti texture strings (``base.png^(wool.png^[multiply:#ff0000])``) as images, with Pillow.

Follows ``src/client/imagesource.cpp`` (``ImageSource::generateImage`` and
``generateImagePart``) of luanti-org/luanti:

- ``a^b``: ``b`` drawn over ``a``; when their sizes differ the one of the smaller area is first
  scaled (nearest, Irrlicht's ``copyToScaling`` stepping) to the other's size. The overlay is
  Luanti's own (not true alpha blending over a half-transparent pixel, kept for compatibility).
- ``a^(b^c)``: the group is built on its own, then drawn at (0, 0) *without* scaling.
- A character after ``\\`` is never a separator or a parenthesis; ``[combine``, ``[mask``
  and ``[lowpart`` file names are unescaped as the engine does.
- Modifiers: ``[combine:WxH:X,Y=file:...``, ``[fill:WxH[:X,Y]:color``, ``[brighten``,
  ``[noalpha``, ``[makealpha:R,G,B``, ``[transformN`` (0-7 or ``I``/``R90``/``R180``/``R270``/
  ``FX``/``FY``, concatenated), ``[mask:file``, ``[multiply:color``, ``[screen:color``,
  ``[colorize:color[:ratio|alpha]``, ``[resize:WxH``, ``[opacity:R``, ``[invert:rgba``,
  ``[sheet:WxH:X,Y``, ``[verticalframe:N:I``, ``[lowpart:percent:file``, ``[png:base64``.
  Any other (``[hsl``, ``[overlay``, ``[contrast``, ``[crack``, ``[inventorycube``...) is
  named in a warning and the image under it is used as it is.
- Colours: ``#RGB``, ``#RGBA``, ``#RRGGBB``, ``#RRGGBBAA`` and the CSS names (with an optional
  ``#AA`` alpha), as ``parseColorString``.
- A file name is looked up in the media map as written, then with its extension replaced by
  ``.png``, ``.jpg``, ``.tga`` (``getImagePath``).

One deviation: where Luanti draws a missing image as a 1x1 pixel of a random colour (which an
overlay then stretches over the whole texture), the missing part is left out with a warning
naming it: the result stays deterministic and shows what is there.
"""
from __future__ import annotations

import base64
import binascii
import io
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageColor

__all__ = ["TextureResolver", "resolve_texture", "plain_name", "file_names", "parse_color",
           "split_top_level"]

MAX_DIMENSION = 23000          # imagesource.h MAX_IMAGE_DIMENSION
MAX_PIXELS = 64 * 2**20        # ours: no texture string makes more than this (memory)
MAX_DEPTH = 32                 # nested groups / sub-textures
IMAGE_EXTENSIONS = (".png", ".jpg", ".tga")

Pixels = np.ndarray            # (height, width, 4) uint8, RGBA


class TextureError(Exception):
    """A part of a texture string that cannot be made (reported as a warning)."""


def plain_name(texture: str) -> str | None:
    """The media name when ``texture`` is one file with no modifier, else None."""
    if not texture or any(c in texture for c in "^[()\\:"):
        return None
    return texture


# --- parsing ------------------------------------------------------------------------------

def split_top_level(name: str) -> list[str] | None:
    """The ``^``-separated parts outside parentheses (escapes kept), or None when the
    parentheses do not balance."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(name):
        if i > 0 and name[i - 1] == "\\":
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif c == "^" and depth == 0:
            parts.append(name[start:i])
            start = i + 1
    if depth != 0:
        return None
    parts.append(name[start:])
    return parts


class Fields:
    """Luanti's Strfnd: successive fields up to a separator."""

    def __init__(self, s: str) -> None:
        self.s, self.pos = s, 0

    def at_end(self) -> bool:
        return self.pos >= len(self.s)

    def next(self, sep: str) -> str:
        if self.pos >= len(self.s):
            return ""
        n = self.s.find(sep, self.pos) if sep else -1
        n = len(self.s) if n < 0 else n
        out, self.pos = self.s[self.pos:n], n + len(sep)
        return out

    def next_esc(self, sep: str, esc: str = "\\") -> str:
        if self.pos >= len(self.s):
            return ""
        old = self.pos
        while True:
            n = self.s.find(sep, self.pos)
            if n < 0:
                self.pos = n = len(self.s)
                break
            self.pos = n + len(sep)
            if not (n > 0 and self.s[n - 1] == esc):
                break
        return self.s[old:n]


def unescape(s: str, esc: str = "\\") -> str:
    return re.sub(re.escape(esc) + "(.?)", r"\1", s, flags=re.S)


def atoi(s: str) -> int:
    """C's atoi: leading blanks, a sign, digits; 0 when there are none."""
    m = re.match(r"\s*([+-]?\d+)", s)
    return max(-2**31, min(2**31 - 1, int(m.group(1)))) if m else 0


def parse_color(s: str) -> tuple[int, int, int, int] | None:
    """RGBA of a Luanti colour string, or None."""
    if s.startswith("#"):
        digits = s[1:]
        if len(digits) in (3, 4):
            vals = [int(c * 2, 16) for c in digits] if _hex(digits) else None
        elif len(digits) in (6, 8):
            vals = [int(digits[i:i + 2], 16) for i in range(0, len(digits), 2)] if _hex(digits) else None
        else:
            vals = None
        if vals is None:
            return None
        return (vals[0], vals[1], vals[2], vals[3] if len(vals) == 4 else 255)
    name, _, alpha = s.partition("#")
    if name.lower() not in ImageColor.colormap:
        return None
    # getrgb, not colormap itself: Pillow caches a parsed name in colormap as a tuple
    r, g, b = ImageColor.getrgb(name.lower())[:3]
    if alpha and (len(alpha) > 2 or not _hex(alpha)):
        return None
    a = int(alpha * (2 if len(alpha) == 1 else 1), 16) if alpha else 255
    return (r, g, b, a)


def _hex(s: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in s)


# --- pixel operations (imagesource.cpp) ---------------------------------------------------

def scale_to(img: Pixels, width: int, height: int) -> Pixels:
    """Irrlicht's CImage::copyToScaling: nearest, keeping the border pixels."""
    h, w = img.shape[:2]
    if (w, h) == (width, height):
        return img.copy()

    def index(n: int, size: int) -> np.ndarray:
        if n % size == 0:
            step, start = np.float32(size / n), np.float32(0)
        else:
            step = np.float32((size - 1) / (n - 1)) if n > 1 else np.float32(0)
            start = np.float32(0.5)
        # accumulated in float32, as the C++ loop does (sx += step)
        seq = np.cumsum(np.concatenate([[start], np.full(n - 1, step, np.float32)]).astype(np.float32),
                        dtype=np.float32)
        return np.minimum(seq.astype(np.int64), size - 1)

    return img[index(height, h)][:, index(width, w)]


def match_largest(a: Pixels, b: Pixels) -> tuple[Pixels, Pixels]:
    """upscaleImagesToMatchLargest: the one of smaller area scaled to the other's size."""
    (ha, wa), (hb, wb) = a.shape[:2], b.shape[:2]
    if (ha, wa) == (hb, wb):
        return a, b
    if wa * ha < wb * hb:
        return scale_to(a, wb, hb), b
    return a, scale_to(b, wa, ha)


def blit(src: Pixels, dst: Pixels, x: int = 0, y: int = 0, src_x: int = 0, src_y: int = 0,
         width: int | None = None, height: int | None = None) -> None:
    """blit_with_alpha2: ``src`` drawn over ``dst`` in place, Luanti's blend, clipped."""
    width = src.shape[1] if width is None else width
    height = src.shape[0] if height is None else height
    if width <= 0 or height <= 0:
        return
    x, src_x = x - min(src_x, 0), max(src_x, 0)
    y, src_y = y - min(src_y, 0), max(src_y, 0)
    src_x, x = src_x - min(x, 0), max(x, 0)
    src_y, y = src_y - min(y, 0), max(y, 0)
    sh, sw = src.shape[:2]
    dh, dw = dst.shape[:2]
    if src_x >= sw or src_y >= sh or x >= dw or y >= dh:
        return
    width = min(width, sw - src_x, dw - x)
    height = min(height, sh - src_y, dh - y)
    s = src[src_y:src_y + height, src_x:src_x + width].astype(np.int32)
    d = dst[y:y + height, x:x + width]
    dst[y:y + height, x:x + width] = blend(s, d.astype(np.int32))


def blend(s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """blit_pixel over whole arrays (int32 in, uint8 out)."""
    sa, da = s[..., 3:4], d[..., 3:4]
    rgb = (d[..., :3] * (255 - sa) + s[..., :3] * sa) // 255
    a_mixed = np.where(da == 255, 255, da + (255 - da) * sa * sa // (255 * 255))
    mixed = np.concatenate([rgb, a_mixed], axis=-1)
    out = np.where((sa == 255) | (da == 0), s, mixed)
    out = np.where(sa == 0, d, out)
    return out.astype(np.uint8)


def colorize(img: Pixels, color: tuple[int, int, int, int], ratio: int, keep_alpha: bool) -> Pixels:
    """apply_colorize: ratio -1 takes the colour's alpha as the weight."""
    c = np.array(color, np.int32)
    lit = img[..., 3:4] > 0
    src = img.astype(np.int32)
    if (ratio == -1 and color[3] == 255) or ratio == 255:
        if keep_alpha:
            new = np.concatenate([np.broadcast_to(c[:3], src[..., :3].shape),
                                  src[..., 3:4] * color[3] // 255], axis=-1)
        else:
            new = np.broadcast_to(c, src.shape)
    else:
        d = (color[3] if ratio == -1 else ratio) / 255.0
        new = np.floor(src * (1.0 - d) + c * d + 0.5).astype(np.int32)
    return np.where(lit, new, src).astype(np.uint8)


TRANSFORM_NAMES = ("i", "r90", "r180", "r270", "fx", "", "fy", "")


def parse_transform(s: str) -> int:
    """parseImageTransform: names or digits, multiplied in the dihedral group."""
    total, pos = 0, 0
    while pos < len(s):
        t = -1
        for i, name in enumerate(TRANSFORM_NAMES):
            if s[pos] == str(i):
                t, pos = i, pos + 1
                break
            if name and s[pos:pos + len(name)].lower() == name:
                t, pos = i, pos + len(name)
                break
        if t < 0:
            break
        new = (t + total) % 4 if t < 4 else (t - total + 8) % 4
        if (t >= 4) ^ (total >= 4):
            new += 4
        total = new
    return total


def transform(img: Pixels, t: int) -> Pixels:
    """imageTransform: rotations counter-clockwise, flips."""
    ops = {0: lambda a: a, 1: lambda a: np.rot90(a, 1), 2: lambda a: np.rot90(a, 2),
           3: lambda a: np.rot90(a, 3), 4: lambda a: a[:, ::-1], 5: lambda a: a.transpose(1, 0, 2),
           6: lambda a: a[::-1], 7: lambda a: a[::-1, ::-1].transpose(1, 0, 2)}
    return np.ascontiguousarray(ops[t](img))


# --- building a texture string ------------------------------------------------------------

class TextureResolver:
    """Texture strings as images over one media map (decoded files are kept for reuse).

    ``resolve(texture)`` gives ``(image or None, warnings)``: None when nothing could be made
    (every file missing); each warning names the texture string and what was left out."""

    def __init__(self, media: Mapping[str, Path]) -> None:
        self.media = media
        self.files: dict[str, Pixels | None] = {}
        self.warnings: list[str] = []

    def resolve(self, texture: str) -> tuple[Image.Image | None, list[str]]:
        self.warnings = []
        self.texture = texture
        try:
            pixels = self.generate(texture, 0)
        except TextureError as e:
            self.warn(str(e))
            pixels = None
        image = Image.fromarray(pixels, "RGBA") if pixels is not None else None
        return image, self.warnings

    def warn(self, what: str) -> None:
        self.warnings.append(f"texture '{self.texture}': {what}")

    def file(self, name: str) -> Pixels | None:
        if name in self.files:
            return self.files[name]
        path = self.media.get(name)
        if path is None:
            stem = name
            for ext in IMAGE_EXTENSIONS:
                if name.lower().endswith(ext):
                    stem = name[:-len(ext)]
            path = next((self.media[stem + ext] for ext in IMAGE_EXTENSIONS
                         if stem + ext in self.media), None)
        pixels = None
        if path is not None:
            try:
                with Image.open(path) as im:
                    if im.width * im.height > MAX_PIXELS:
                        raise TextureError(f"'{name}' is too large ({im.width}x{im.height})")
                    pixels = np.asarray(im.convert("RGBA")).copy()
            except (OSError, ValueError, Image.DecompressionBombError) as e:
                self.warn(f"'{name}' cannot be read ({e})")
        self.files[name] = pixels
        return pixels

    def generate(self, name: str, depth: int) -> Pixels | None:
        """generateImage: the parts left to right, each over what came before."""
        if depth > MAX_DEPTH:
            raise TextureError("sub-textures nested too deep")
        parts = split_top_level(name)
        if parts is None:
            self.warn(f"unbalanced parentheses in '{name}'")
            return None
        base: Pixels | None = None
        for part in parts:
            if not part:
                continue
            if part[0] == "(" and part[-1] == ")":
                group = self.generate(part[1:-1], depth + 1)
                if group is None:
                    base = None
                elif base is None:
                    base = group
                else:
                    blit(group, base)
            else:
                base = self.part(part, base, depth)
            if base is not None and 0 in base.shape[:2]:
                base = None
        return base

    def part(self, part: str, base: Pixels | None, depth: int) -> Pixels | None:
        """generateImagePart: a file drawn over ``base``, or a modifier applied to it."""
        if part[0] != "[":
            img = self.file(part)
            if img is None:
                self.warn(f"missing media '{part}' (left out)")
                return base
            if base is None:
                return img.copy()
            base, img = match_largest(base, img)
            base = base.copy()
            blit(img, base)
            return base
        kind = re.match(r"\[([a-z]*)", part)
        op = MODIFIERS.get(kind.group(1) if kind else "")
        if op is None:
            self.warn(f"modifier '{part.split(':')[0]}' is not supported: the image under it is "
                      "used as it is")
            return base
        needs_base = op not in (modify_combine, modify_fill, modify_lowpart, modify_png)
        if needs_base and base is None:
            if not any("missing media" in w for w in self.warnings):   # said once
                self.warn(f"'{part.split(':')[0]}' has no image to work on")
            return None
        return op(self, part, base, depth)


def _dims(w: int, h: int, what: str) -> None:
    if not (0 < w <= MAX_DIMENSION and 0 < h <= MAX_DIMENSION) or w * h > MAX_PIXELS:
        raise TextureError(f"invalid size {w}x{h} in {what}")


def _color(s: str, what: str) -> tuple[int, int, int, int]:
    c = parse_color(s)
    if c is None:
        raise TextureError(f"invalid colour '{s}' in {what}")
    return c


def modify_combine(r: TextureResolver, part: str, base: Pixels | None, depth: int) -> Pixels | None:
    f = Fields(part)
    f.next(":")
    w, h = atoi(f.next("x")), atoi(f.next(":"))
    if base is None:
        _dims(w, h, "[combine")
        base = np.zeros((h, w, 4), np.uint8)
    else:
        base = base.copy()
    while not f.at_end():
        x, y = atoi(f.next(",")), atoi(f.next("="))
        filename = unescape(f.next_esc(":"))
        bh, bw = base.shape[:2]
        if x > bw or y > bh:
            continue
        img = r.generate(filename, depth + 1)
        if img is None:
            r.warn(f"'{filename}' of [combine could not be made (left out)")
            continue
        blit(img, base, x, y)
    return base


def modify_fill(r: TextureResolver, part: str, base: Pixels | None, depth: int) -> Pixels | None:
    f = Fields(part)
    f.next(":")
    w, h = atoi(f.next("x")), atoi(f.next(":"))
    color_or_x = f.next(",")
    x = y = 0
    color = parse_color(color_or_x)
    if color is None:
        x, y = atoi(color_or_x), atoi(f.next(":"))
        color = _color(f.next(":"), "[fill")
    _dims(w, h, "[fill")
    img = np.empty((h, w, 4), np.uint8)
    img[...] = color
    if base is None:
        return img
    if x >= base.shape[1] or y >= base.shape[0]:
        raise TextureError("invalid X or Y offset in [fill")
    base = base.copy()
    blit(img, base, x, y)
    return base


Modifier = Callable[["TextureResolver", str, Pixels, int], Pixels]


def _per_pixel(fn: Callable[[str, np.ndarray], np.ndarray]) -> Modifier:
    """A modifier working on the base's pixels as int32 (clipped back to bytes by the op)."""
    def op(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
        return fn(part, base.astype(np.int32)).astype(np.uint8)
    return op


@_per_pixel
def modify_brighten(part: str, a: np.ndarray) -> np.ndarray:
    a[..., :3] = (127.5 + 0.5 * a[..., :3]).astype(np.int32)
    return a


@_per_pixel
def modify_noalpha(part: str, a: np.ndarray) -> np.ndarray:
    a[..., 3] = 255
    return a


@_per_pixel
def modify_makealpha(part: str, a: np.ndarray) -> np.ndarray:
    f = Fields(part[len("[makealpha:"):])
    rgb = (atoi(f.next(",")), atoi(f.next(",")), atoi(f.next("")))
    a[..., 3] = np.where(np.all(a[..., :3] == rgb, axis=-1), 0, a[..., 3])
    return a


@_per_pixel
def modify_multiply(part: str, a: np.ndarray) -> np.ndarray:
    c = _color(Fields(part[part.find(":") + 1:]).next(":"), "[multiply")
    a[..., :3] = a[..., :3] * np.array(c[:3]) // 255
    return a


@_per_pixel
def modify_screen(part: str, a: np.ndarray) -> np.ndarray:
    c = _color(Fields(part[part.find(":") + 1:]).next(":"), "[screen")
    a[..., :3] = 255 - (255 - a[..., :3]) * (255 - np.array(c[:3])) // 255
    return a


@_per_pixel
def modify_opacity(part: str, a: np.ndarray) -> np.ndarray:
    ratio = max(0, min(255, atoi(part[len("[opacity:"):])))
    a[..., 3] = a[..., 3] * ratio // 255
    return a


@_per_pixel
def modify_invert(part: str, a: np.ndarray) -> np.ndarray:
    mode = part[len("[invert:"):]
    for i, ch in enumerate("rgba"):
        if ch in mode:
            a[..., i] ^= 255
    return a


def modify_colorize(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    f = Fields(part)
    f.next(":")
    color = _color(f.next(":"), "[colorize")
    ratio_s = f.next(":")
    ratio, keep_alpha = -1, False
    if ratio_s.isdigit():
        ratio = max(0, min(255, atoi(ratio_s)))
    elif ratio_s == "alpha":
        keep_alpha = True
    return colorize(base, color, ratio, keep_alpha)


def modify_transform(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    return transform(base, parse_transform(part[len("[transform"):]))


def modify_resize(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    f = Fields(part)
    f.next(":")
    w, h = atoi(f.next("x")), atoi(f.next(""))
    _dims(w, h, "[resize")
    return scale_to(base, w, h)


def modify_mask(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    f = Fields(part)
    f.next(":")
    filename = unescape(f.next_esc(":"))
    mask = r.generate(filename, depth + 1)
    if mask is None:
        r.warn(f"mask '{filename}' could not be made (left out)")
        return base
    base, mask = match_largest(base, mask)
    return base & mask


def modify_sheet(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    f = Fields(part)
    f.next(":")
    w0, h0 = atoi(f.next("x")), atoi(f.next(":"))
    x0, y0 = atoi(f.next(",")), atoi(f.next(":"))
    _dims(w0, h0, "[sheet")
    if not (0 <= x0 < w0 and 0 <= y0 < h0):
        raise TextureError("invalid tile position in [sheet")
    th, tw = max(1, base.shape[0] // h0), max(1, base.shape[1] // w0)
    tile = np.zeros((th, tw, 4), np.uint8)
    got = base[y0 * th:(y0 + 1) * th, x0 * tw:(x0 + 1) * tw]
    tile[:got.shape[0], :got.shape[1]] = got
    return tile


def modify_verticalframe(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    f = Fields(part)
    f.next(":")
    count, index = max(1, atoi(f.next(":"))), atoi(f.next(":"))
    index = max(0, min(index, count - 1))
    fh = max(1, base.shape[0] // count)
    frame = np.zeros((fh, base.shape[1], 4), np.uint8)
    got = base[index * fh:(index + 1) * fh]
    frame[:got.shape[0]] = got
    return frame


def modify_lowpart(r: TextureResolver, part: str, base: Pixels | None, depth: int) -> Pixels | None:
    f = Fields(part)
    f.next(":")
    percent = max(0, min(100, atoi(f.next(":"))))
    filename = unescape(f.next_esc(":"))
    img = r.generate(filename, depth + 1)
    if img is None:
        r.warn(f"'{filename}' of [lowpart could not be made (left out)")
        return base
    h, w = img.shape[:2]
    base = np.zeros((h, w, 4), np.uint8) if base is None else base.copy()
    y = h * (100 - percent) // 100
    blit(img, base, 0, y, 0, y, w, h * percent // 100 + 1)
    return base


def modify_png(r: TextureResolver, part: str, base: Pixels | None, depth: int) -> Pixels | None:
    try:
        data = base64.b64decode(part[len("[png:"):], validate=True)
        with Image.open(io.BytesIO(data)) as im:
            _dims(im.width, im.height, "[png")
            img = np.asarray(im.convert("RGBA")).copy()
    except (binascii.Error, OSError, ValueError, Image.DecompressionBombError) as e:
        raise TextureError(f"invalid [png data ({e})") from e
    if base is None:
        return img
    base, img = match_largest(base, img)
    base = base.copy()
    blit(img, base)
    return base


def modify_nothing(r: TextureResolver, part: str, base: Pixels, depth: int) -> Pixels:
    return base       # [applyfiltersformesh: the engine's own, for its texture filters


# Any: the base is None only for the modifiers that make an image of their own (checked above)
MODIFIERS: dict[str, Callable[[TextureResolver, str, Any, int], Pixels | None]] = {
    "combine": modify_combine, "fill": modify_fill, "brighten": modify_brighten,
    "noalpha": modify_noalpha, "makealpha": modify_makealpha, "transform": modify_transform,
    "mask": modify_mask, "multiply": modify_multiply, "screen": modify_screen,
    "colorize": modify_colorize, "resize": modify_resize, "opacity": modify_opacity,
    "invert": modify_invert, "sheet": modify_sheet, "verticalframe": modify_verticalframe,
    "lowpart": modify_lowpart, "png": modify_png, "applyfiltersformesh": modify_nothing,
}


def file_names(texture: str, depth: int = 0) -> list[str]:
    """The media files a texture string names (overlays, groups, and the files of ``[combine``,
    ``[mask``, ``[lowpart``), in order, without repeats: what ``check`` looks for."""
    out: list[str] = []
    parts = split_top_level(texture) if depth <= MAX_DEPTH else None
    for part in parts or []:
        if not part:
            continue
        if part[0] == "(" and part[-1] == ")":
            out += file_names(part[1:-1], depth + 1)
        elif part[0] != "[":
            out.append(part)
        elif part.startswith(("[mask:", "[lowpart:")):
            f = Fields(part)
            f.next(":")
            if part.startswith("[lowpart:"):
                f.next(":")
            out += file_names(unescape(f.next_esc(":")), depth + 1)
        elif part.startswith("[combine:"):
            f = Fields(part)
            f.next(":"), f.next("x"), f.next(":")
            while not f.at_end():
                f.next(","), f.next("=")
                out += file_names(unescape(f.next_esc(":")), depth + 1)
    return list(dict.fromkeys(out))


def resolve_texture(texture: str, media: Mapping[str, Path]) -> tuple[Image.Image | None, list[str]]:
    """One texture string as an RGBA image (None when nothing could be made) and the
    warnings (missing media, unsupported modifiers, bad arguments)."""
    return TextureResolver(media).resolve(texture)
