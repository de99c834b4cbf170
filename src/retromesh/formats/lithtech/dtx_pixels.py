"""DTX pixels to RGBA and back, every pixel format the engine defines, with numpy (DXT encoded
through Pillow's BCn codec).

Decoding (:func:`to_rgba`) follows the engine's converters (``pixelformat.cpp``):

* 32-bit (codes 0 and 3): B, G, R, A bytes (the little-endian ``0xAARRGGBB`` PValue);
* 24-bit: B, G, R (see :mod:`.dtx` for the disagreement), opaque;
* 16-bit: ARGB 4444 with ``DTX_PREFER4444``, ARGB 1555 with ``DTX_PREFER5551``, else RGB 565;
  n bits widen to 8 as the engine's ``m_ScaleTo8`` does (``v * 255 / max``, rounded down);
* 8-bit (code 1): grey; 32-bit palettised: indices into ``PALLETE32`` (a, r, g, b entries);
* DXT1/3/5: decoded here in numpy, pixel for pixel as Pillow's ``bcn`` decoder does (5:6:5
  colours widened by repeating their top bits, the thirds and halves rounded down, DXT5 alpha
  in 8 or 6 steps); levels below a 4x4 block are padded with zeros;
* v1/v1.5 8-bit palettised: the header palette's r, g, b (its a byte is not used by the
  engine's ``CC_8PtoBF``); alpha from the 4-bit masks (``n * 17``) when there are masks.

Encoding (:func:`from_rgba`) builds a whole texture the way LithTech's tools do (8 bits narrow
to n rounded to nearest, so that decoding and encoding again gives the same values): mip levels by
2x2 box averaging rounded down (``dtx_BuildMipmaps``); palettised levels take every other index
of the level above (no new colours); DXT through Pillow's ``bcn`` encoder (Pillow >= 11.3: the
encoder came in 11.2 and wrote past its buffer on large images until 11.3, CVE-2025-48379).
Sizes LithTech's tools refuse are refused (powers of two from 8 to 1024).
"""
from __future__ import annotations

import numpy as np

from ...errors import DocumentError, UnsupportedError
from . import dtx
from .dtx import (
    ALPHA_MASKS,
    BPP_8,
    BPP_8P,
    BPP_16,
    BPP_24,
    BPP_32,
    BPP_32P,
    BPP_DXT1,
    BPP_DXT3,
    BPP_DXT5,
    PREFER4444,
    PREFER5551,
    SECTIONSFIXED,
    DtxHeader,
    DtxHeaderV1,
    DtxHeaderV15,
    DtxSection,
    DtxTexture,
)

__all__ = ["to_rgba", "from_rgba", "build_mips", "BPP_OPTIONS", "check_size", "mip_count_for"]

#: ``-O bpp=`` values
BPP_OPTIONS = {"32": BPP_32, "24": BPP_24, "16": BPP_16, "8": BPP_8, "32p": BPP_32P,
               "dxt1": BPP_DXT1, "dxt3": BPP_DXT3, "dxt5": BPP_DXT5}
_BCN = {BPP_DXT1: 1, BPP_DXT3: 2, BPP_DXT5: 3}
_BLOCK = {BPP_DXT1: 8, BPP_DXT3: 16, BPP_DXT5: 16}


def _widen(v: np.ndarray, bits: int) -> np.ndarray:
    top = (1 << bits) - 1
    return ((v.astype(np.uint32) * 255) // top).astype(np.uint8)


def _narrow(v: np.ndarray, bits: int) -> np.ndarray:
    # rounded, not down as the engine's m_ScaleFrom8: so that a 16-bit texture read and
    # written again keeps its values (rounding down turns a widened 1 of 5 bits into 0)
    top = (1 << bits) - 1
    return (v.astype(np.uint32) * top + 127) // 255


def _layout16(flags: int) -> tuple[tuple[int, int], ...]:
    """(shift, bits) of A, R, G, B."""
    if flags & PREFER4444:
        return (12, 4), (8, 4), (4, 4), (0, 4)
    if flags & PREFER5551:
        return (15, 1), (10, 5), (5, 5), (0, 5)
    return (0, 0), (11, 5), (5, 6), (0, 5)


def _decode_bcn(data: bytes, bpp: int, w: int, h: int) -> np.ndarray:
    """DXT1/3/5 (BC1/2/3) blocks as RGBA, in numpy (the same pixels as Pillow's ``bcn``
    decoder, which is not imported for it: Pillow's import cost more than the decoding)."""
    bw, bh = max(4, (w + 3) & ~3), max(4, (h + 3) & ~3)
    size = _BLOCK[bpp]
    n = (bw // 4) * (bh // 4)
    blocks = np.frombuffer(data[:n * size].ljust(n * size, b"\0"), np.uint8).reshape(n, size)
    # (whole fields as little-endian words: a view of copied bytes, not a shift and OR per byte)
    colour = np.ascontiguousarray(blocks[:, size - 8:])
    c = colour[:, :4].copy().view("<u2").astype(np.int32)            # (n, 2): c0, c1
    # 5:6:5 widened to 8 bits (top bits repeated), both end points at once: (n, 2, 3)
    r, g, b = (c & 0xF800) >> 8, (c & 0x7E0) >> 3, (c & 0x1F) << 3
    pal = np.empty((n, 4, 4), np.int32)
    pal[:, :2, 0] = r | r >> 5
    pal[:, :2, 1] = g | g >> 6
    pal[:, :2, 2] = b | b >> 5
    pal[..., 3] = 255
    e0, e1 = pal[:, 0, :3], pal[:, 1, :3]
    if bpp == BPP_DXT1:
        four = c[:, 0] > c[:, 1]
        pal[:, 2, :3] = np.where(four[:, None], (2 * e0 + e1) // 3, (e0 + e1) // 2)
        pal[:, 3, :3] = np.where(four[:, None], (e0 + 2 * e1) // 3, 0)
        pal[:, 3, 3] = np.where(four, 255, 0)
    else:                               # DXT3/5 colours always have four
        pal[:, 2, :3] = (2 * e0 + e1) // 3
        pal[:, 3, :3] = (e0 + 2 * e1) // 3
    lut = colour[:, 4:8].copy().view("<u4")                               # (n, 1)
    idx = (lut >> (2 * np.arange(16, dtype=np.uint32))) & 3               # (n, 16)
    # each pixel's palette entry as one uint32 gathered from a flat table (a gather of
    # 4-byte rows along an axis cost numpy several times more)
    table = pal.astype(np.uint8).reshape(-1, 4).view(np.uint32).reshape(-1)
    at = (idx + 4 * np.arange(n, dtype=np.uint32)[:, None]).astype(np.intp)
    px = table[at].view(np.uint8).reshape(n, 16, 4)
    if bpp == BPP_DXT3:
        nib = np.stack([blocks[:, :8] & 15, blocks[:, :8] >> 4], 2).reshape(n, 16)
        px[..., 3] = nib * 17
    elif bpp == BPP_DXT5:
        a0, a1 = blocks[:, 0].astype(np.int32), blocks[:, 1].astype(np.int32)
        k = np.arange(1, 7)
        alpha = np.empty((n, 8), np.int32)
        alpha[:, 0], alpha[:, 1] = a0, a1
        # eight alphas where a0 > a1; the others have six, then 0 and 255 (rewritten only
        # there: a where over every block cost most of the alpha's time)
        alpha[:, 2:] = (np.multiply.outer(a0, 7 - k) + np.multiply.outer(a1, k)) // 7
        six = np.flatnonzero(a0 <= a1)
        if len(six):
            b0, b1 = a0[six], a1[six]
            alpha[six, 2:6] = (np.multiply.outer(b0, 5 - k[:4]) + np.multiply.outer(b1, k[:4])) // 5
            alpha[six, 6] = 0
            alpha[six, 7] = 255
        # the 16 3-bit indices of the 6 bytes as one little-endian 64-bit word
        bits = np.zeros((n, 8), np.uint8)
        bits[:, :6] = blocks[:, 2:8]
        aidx = (bits.view("<u8") >> (3 * np.arange(16, dtype=np.uint64))) & np.uint64(7)
        px[..., 3] = alpha.reshape(-1)[(aidx + (8 * np.arange(n, dtype=np.uint64))[:, None])
                                       .astype(np.intp)]
    img = px.reshape(bh // 4, bw // 4, 4, 4, 4).transpose(0, 2, 1, 3, 4).reshape(bh, bw, 4)
    return np.ascontiguousarray(img[:h, :w])


def _palette_rgba(entries: bytes) -> np.ndarray:
    """256 (a, r, g, b) entries as an RGBA lookup table."""
    pal = np.frombuffer(entries[:1024].ljust(1024, b"\0"), np.uint8).reshape(256, 4)
    return pal[:, [1, 2, 3, 0]]


def _level_data(doc: DtxTexture, level: int, face: int) -> bytes:
    h = doc.header
    if face == 0:
        return doc.levels[level]
    cube = doc.section(b"CUBEMAPDATA")
    if not isinstance(h, DtxHeader) or not h.flags & dtx.CUBEMAP or cube is None:
        raise UnsupportedError("face: only a cube map (flag CUBEMAP, a CUBEMAPDATA section) "
                               "has faces 1..5")
    if not 0 <= face < 6:
        raise UnsupportedError(f"face: 0..5, got {face}")
    bpp = dtx.bpp_of(h)
    sizes = [dtx.image_size(bpp, w, hh) for w, hh in dtx.level_sizes(h)]
    start = (face - 1) * sum(sizes) + sum(sizes[:level])
    data = cube.data[start:start + sizes[level]]
    if len(data) != sizes[level]:
        raise UnsupportedError(f"the CUBEMAPDATA section is too short for face {face}")
    return data


def to_rgba(doc: DtxTexture, level: int = 0, face: int = 0) -> np.ndarray:
    """Mip ``level`` (of cube face ``face``) as an (height, width, 4) uint8 RGBA array."""
    h = doc.header
    if not 0 <= level < len(doc.levels):
        raise UnsupportedError(f"mip: 0..{len(doc.levels) - 1}, got {level}")
    w, hh = dtx.level_sizes(h)[level]
    if not w or not hh:
        raise UnsupportedError(f"mip level {level} is {w}x{hh}: it has no pixels")
    data = _level_data(doc, level, face)
    bpp = dtx.bpp_of(h)
    out = np.empty((hh, w, 4), np.uint8)
    if bpp in _BCN:
        return _decode_bcn(data, bpp, w, hh)
    raw = np.frombuffer(data, np.uint8)
    if bpp == BPP_32:
        out[...] = raw.reshape(hh, w, 4)[..., [2, 1, 0, 3]]
    elif bpp == BPP_24:
        out[..., :3] = raw.reshape(hh, w, 3)[..., ::-1]
        out[..., 3] = 255
    elif bpp == BPP_16:
        v = raw.view("<u2").reshape(hh, w)
        for c, (shift, bits) in zip((3, 0, 1, 2), _layout16(h.flags)):
            out[..., c] = _widen((v >> shift) & ((1 << bits) - 1), bits) if bits else 255
    elif bpp == BPP_8:
        out[..., :3] = raw.reshape(hh, w, 1)
        out[..., 3] = 255
    elif bpp == BPP_32P:
        pal = doc.section(b"PALLETE32")
        if pal is None:
            raise UnsupportedError("a 32-bit palettised texture without its PALLETE32 section")
        out[...] = _palette_rgba(pal.data)[raw.reshape(hh, w)]
    else:                   # v1/v1.5 8-bit palettised
        out[...] = _palette_rgba(doc.palette)[raw.reshape(hh, w)]
        out[..., 3] = 255
        if doc.alpha_masks is not None:
            packed = np.frombuffer(doc.alpha_masks[level], np.uint8)
            nib = np.stack([packed & 15, packed >> 4], axis=-1).reshape(hh, -1) * 17
            out[:, :nib.shape[1], 3] = nib
    return out


# -- encoding --------------------------------------------------------------------------------

def check_size(width: int, height: int) -> None:
    """Refuse a size LithTech's tools refuse to save (``dtx_IsTextureSizeValid``)."""
    for what, v in (("width", width), ("height", height)):
        if not (v & (v - 1) == 0 and dtx.MIN_SIZE <= v <= dtx.MAX_SIZE):
            raise DocumentError(
                f"a {width}x{height} image cannot be a DTX texture: its {what} must be a power "
                f"of two from {dtx.MIN_SIZE} to {dtx.MAX_SIZE} (LithTech's DEdit and dtxutil "
                "save no other size, and the game's renderer needs powers of two); resize it "
                "first")


def mip_count_for(width: int, height: int, wanted: int | None = None) -> int:
    """``wanted`` levels (default 4, what LithTech's tools write), at most down to 1 pixel."""
    most = min(width, height).bit_length()
    n = 4 if wanted is None else wanted
    if not 1 <= n <= 8:
        raise DocumentError(f"mips: 1..8 levels (the engine reads no more), got {n}")
    return min(n, most)


def build_mips(rgba: np.ndarray, count: int) -> list[np.ndarray]:
    """``count`` levels: each the 2x2 average of the one above, rounded down."""
    out = [np.ascontiguousarray(rgba, np.uint8)]
    for _ in range(1, count):
        a = out[-1].astype(np.uint16)
        hh, w = a.shape[0] // 2, a.shape[1] // 2
        a = a[:hh * 2, :w * 2]
        s = a[0::2, 0::2] + a[0::2, 1::2] + a[1::2, 0::2] + a[1::2, 1::2]
        out.append((s >> 2).astype(np.uint8))
    return out


def _encode_bcn(level: np.ndarray, bpp: int) -> bytes:
    from PIL import Image
    hh, w = level.shape[:2]
    bw, bh = max(4, (w + 3) & ~3), max(4, (hh + 3) & ~3)
    if (bw, bh) != (w, hh):      # edge pixels repeated into a whole block
        level = np.pad(level, ((0, bh - hh), (0, bw - w), (0, 0)), mode="edge")
    data = Image.fromarray(np.ascontiguousarray(level), "RGBA").tobytes("bcn", _BCN[bpp])
    return data[:dtx.image_size(bpp, w, hh)]


def _encode_plain(level: np.ndarray, bpp: int, flags: int) -> bytes:
    if bpp == BPP_32:
        return np.ascontiguousarray(level[..., [2, 1, 0, 3]]).tobytes()
    if bpp == BPP_24:
        return np.ascontiguousarray(level[..., 2::-1]).tobytes()
    if bpp == BPP_8:
        rgb = level[..., :3].astype(np.uint32)
        return ((rgb[..., 0] * 299 + rgb[..., 1] * 587 + rgb[..., 2] * 114) // 1000) \
            .astype(np.uint8).tobytes()
    v = np.zeros(level.shape[:2], np.uint32)
    for c, (shift, bits) in zip((3, 0, 1, 2), _layout16(flags)):
        if bits:
            v |= _narrow(level[..., c], bits) << shift
    return v.astype("<u2").tobytes()


def _quantize(rgba: np.ndarray, alpha: bool) -> tuple[np.ndarray, np.ndarray]:
    """(indices, 256 x RGBA palette) of the base level."""
    from PIL import Image
    mode = "RGBA" if alpha else "RGB"
    im = Image.fromarray(np.ascontiguousarray(rgba if alpha else rgba[..., :3]), mode)
    q = im.quantize(256, method=Image.Quantize.FASTOCTREE if alpha else Image.Quantize.MEDIANCUT)
    pal = np.zeros((256, 4), np.uint8)
    raw = np.frombuffer(bytes(q.getpalette(mode) or b""), np.uint8)
    n = min(256, raw.size // len(mode))
    pal[:n, :len(mode)] = raw[:n * len(mode)].reshape(n, len(mode))
    if not alpha:
        pal[:, 3] = 255
    return np.asarray(q, np.uint8), pal


def _index_levels(indices: np.ndarray, count: int) -> list[bytes]:
    out = [indices]
    for _ in range(1, count):
        out.append(out[-1][0::2, 0::2])
    return [np.ascontiguousarray(a).tobytes() for a in out]


def _argb(pal: np.ndarray, a: np.ndarray | None = None) -> bytes:
    out = np.empty((256, 4), np.uint8)
    out[:, 0] = pal[:, 3] if a is None else a
    out[:, 1:] = pal[:, :3]
    return out.tobytes()


def _v2(rgba: np.ndarray, bpp: int, count: int, flags: int) -> DtxTexture:
    hh, w = rgba.shape[:2]
    header = DtxHeader(w, hh, mip_count=count, flags=flags, bpp=bpp)
    sections: list[DtxSection] = []
    if bpp == BPP_32P:
        indices, pal = _quantize(rgba, alpha=True)
        levels = _index_levels(indices, count)
        sections.append(DtxSection(b"PALLETE32".ljust(15, b"\0"), data=_argb(pal)))
        header.mips_used = count        # DEdit's Write8BitDTX sets it
    else:
        mips = build_mips(rgba, count)
        levels = [_encode_bcn(m, bpp) if bpp in _BCN else _encode_plain(m, bpp, flags)
                  for m in mips]
    header.section_count = len(sections)
    return DtxTexture(header, levels, sections=sections)


def _v1(rgba: np.ndarray, version: int, count: int, flags: int) -> DtxTexture:
    hh, w = rgba.shape[:2]
    translucent = bool((rgba[..., 3] != 255).any())
    indices, pal = _quantize(rgba, alpha=False)
    levels = _index_levels(indices, count)
    masks = None
    if translucent:
        flags |= ALPHA_MASKS
        masks = []
        for m in build_mips(rgba, count):
            nib = (m[..., 3] >> 4).astype(np.uint8)
            nib = nib[:, :(nib.shape[1] // 2) * 2]
            masks.append(np.ascontiguousarray(nib[:, 0::2] | (nib[:, 1::2] << 4)).tobytes())
    header: DtxHeaderV1 | DtxHeaderV15
    if version == dtx.VERSION_1:
        header = DtxHeaderV1(w, hh, mip_count=count, flags=flags)
    else:
        header = DtxHeaderV15(w, hh, mip_count=count, flags=flags)
    return DtxTexture(header, levels, palette=_argb(pal, np.zeros(256, np.uint8)),
                      alpha_masks=masks, sections=[])


def from_rgba(rgba: np.ndarray, *, bpp: int = BPP_32, version: int = dtx.VERSION_2,
              mips: int | None = None, flags: int = SECTIONSFIXED) -> DtxTexture:
    """A new texture from an (height, width, 4) uint8 RGBA image: ``version`` -5 in pixel
    format ``bpp`` (a code), or -2/-3 (8-bit palettised, 4-bit alpha masks when any pixel is
    not opaque); ``mips`` levels (default 4, as LithTech's tools)."""
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise DocumentError("an (height, width, 4) uint8 RGBA image is needed")
    hh, w = rgba.shape[:2]
    check_size(w, hh)
    count = mip_count_for(w, hh, mips)
    if version in (dtx.VERSION_1, dtx.VERSION_15):
        if mips is None:
            count = mip_count_for(w, hh, 4)   # "always 4" in the 1.0/1.5 templates
        return _v1(rgba, version, count, flags)
    if version != dtx.VERSION_2:
        raise DocumentError(f"version: -5, -3 or -2, got {version}")
    if bpp == BPP_8P or not 0 <= bpp < len(dtx.PIXEL_BYTES):
        raise DocumentError("bpp: one of 32, 24, 16, 8, 32p, dxt1, dxt3, dxt5 (an 8-bit "
                            "palettised texture is version -2 or -3)")
    return _v2(rgba, bpp, count, flags)
