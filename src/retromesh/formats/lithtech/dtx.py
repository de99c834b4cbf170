"""LithTech ``.dtx`` textures, versions -5 (LithTech 2.x: NOLF, AvP2, NOLF2), -3 (LithTech
1.5: KISS Psycho Circus) and -2 (LithTech 1.0: Shogo, Blood 2).

Little-endian. Every version starts with the same 24 bytes, then a header tail of its own,
the pixels of every mip level (largest first), and the sections:

=================  ==========================================================================
part               layout
=================  ==========================================================================
common (24)        uint32 res_type (0 = DTX); int32 version; uint16 width, height;
                   uint16 mip_count; uint16 section_count; uint32 flags; uint32 user_flags
v2 tail (140)      uint8 group, mips_used, bpp, non_s3tc_mip_offset, ui_mip_offset, priority;
                   float32 detail_scale (stored as scale - 1); int16 detail_angle;
                   char command[128]                                       (header: 164 bytes)
v1.5 tail (148)    uint8 group, mips_used, alpha_cutoff, alpha_average; float32 detail_scale;
                   int16 detail_angle; 2 bytes (kept); char command[128]; 8 bytes (kept)
                                                                           (header: 172 bytes)
v1 tail (20)       uint8 group, mips_used, alpha_cutoff, alpha_average; 16 bytes (kept)
                                                                           (header: 44 bytes)
palette            v1 / v1.5 only: 256 x (uint8 a, r, g, b)
pixels             mip_count levels; level i is (width >> i) x (height >> i); bytes per level
                   (the engine's ``CalcImageSize``): DXT1 ``w*h/2``, DXT3/5 ``w*h``, else
                   ``w*h*bytes_per_pixel`` (1, 1, 2, 4, -, -, -, 1, 3 for codes 0..8)
alpha masks        v1 / v1.5 with flag ``1 << 1``: per level ``(h >> i) * ((w >> i) / 2)``
                   bytes, 4 bits a pixel, the first pixel in the low nibble
sections           section_count x (char type[15]; char name[10]; 3 bytes of padding;
                   uint32 length; length bytes): ``PALLETE32`` (the palette of code 7),
                   ``CUBEMAPDATA`` (the five other faces of a cube map), ``LIGHTDEFS`` (v1)
=================  ==========================================================================

Bits-per-pixel codes (``pixelformat.h`` ``BPPIdent``): 0 8-bit palettised, 1 8-bit, 2 16-bit,
3 32-bit, 4 DXT1, 5 DXT3, 6 DXT5, 7 32-bit palettised (8-bit indices into ``PALLETE32``),
8 24-bit. v1 and v1.5 textures are always 8-bit palettised with the palette in the header.

Sources: the LithTech engine source published as jsj2008/lithtech (``runtime/shared/src/
dtxmgr.h/.cpp``, ``libs/dtxmgr``, ``pixelformat.h/.cpp``, DEdit's ``TextureHelper.cpp``); for
-2 and -3, which that source no longer reads, the 010 templates and header tables of
AkvenJan/DTX-Meta-Transfer (``research/DTX-LithTech1.0.bt``, ``1.5.bt``, ``2.0.bt``, the CSVs
of Blood 2, KISS and NOLF textures).

Where the sources disagree, and what we do:

* Code 0 is named "8-bit palettised" by the enum, the 2.0 template and the NOLF table, but the
  engine's ``DtxHeader::GetBPPIdent`` reads 0 as 32-bit (``m_Extra[2] == 0 ? BPP_32``), and
  NOLF ships such files (``COVERALL_ATTACHMENTS.DTX``) with 4 bytes a pixel. We read code 0
  as the engine does and keep the 0 when writing back.
* The 2.0 template calls ``section_count`` "LightFlag" and the 1.0/1.5 templates read a
  ``LIGHTDEFS`` trailer when it is 1; the engine's loader (``libs/dtxmgr``) reads that many
  sections. The trailer is one section of the engine's layout (its 28 bytes before the length
  are type, name and padding), so we read sections the same way in every version.
* The engine's ``SectionHeader`` is 25 bytes of names and a uint32: the compiler pads it to 32,
  and files hold those 3 padding bytes (garbage, kept). DEdit's loader prepends each section
  to a list, so a file it saves has them in reverse order; we keep the file's order.
* A v2 file without ``DTX_SECTIONSFIXED`` (1 << 3) has an unreliable section count (the engine
  sets it to 0 and ignores what follows): everything after its pixels is kept as ``trailing``.
  v1/v1.5 files read their sections whatever the flag (the templates do).
* DXT levels smaller than a 4x4 block hold ``w*h/2`` or ``w*h`` bytes (2x2 DXT1: 2 bytes, 1x1:
  0), not a whole block: the engine's size rule. Decoding pads them with zeros.
* The 16-bit layout is not in the file: the renderer picks it from the flags (4444 with
  ``DTX_PREFER4444``, 1555 with ``DTX_PREFER5551``, else 565, ``FormatMgr``'s default); 8-bit
  (code 1) has no palette nor masks in the engine and is read as grey; 24-bit is B, G, R (the
  D3D ``R8G8B8`` the renderer names; ``CC_24toBF`` reads R, G, B: the engine never loads a
  24-bit DTX, so nothing settles it). See :mod:`.dtx_pixels`.
* The 1.0 template names the flag bits FULLBRITE (0), ALPHA_MASKS (1), SECTIONSFIXED (3),
  DONT_MAP_MASTER (5); 2.x reuses bit 1 for PREFER16BIT. The alpha-mask nibble order is the
  low nibble first (DTX-Meta-Transfer's README: "nibbles in reverted order").
* Blood 2's five master-palette textures (no resource type, no palette) are not read: their
  header is unknown beyond the sizes.
"""
from __future__ import annotations

import struct
from typing import Any

from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error, warning
from ...records import record

__all__ = ["DtxTexture", "DtxHeader", "DtxHeaderV1", "DtxHeaderV15", "DtxSection", "read",
           "write", "info", "check", "sniff", "bpp_of", "level_sizes", "image_size",
           "BPP_NAMES", "VERSIONS", "FLAG_NAMES"]

VERSION_2, VERSION_15, VERSION_1 = -5, -3, -2
VERSIONS = (VERSION_1, VERSION_15, VERSION_2)
VERSION_NAMES = {VERSION_1: "LithTech 1.0", VERSION_15: "LithTech 1.5", VERSION_2: "LithTech 2"}

BPP_8P, BPP_8, BPP_16, BPP_32, BPP_DXT1, BPP_DXT3, BPP_DXT5, BPP_32P, BPP_24 = range(9)
BPP_NAMES = {BPP_8P: "8-bit palettised", BPP_8: "8-bit", BPP_16: "16-bit", BPP_32: "32-bit",
             BPP_DXT1: "DXT1", BPP_DXT3: "DXT3", BPP_DXT5: "DXT5",
             BPP_32P: "32-bit palettised", BPP_24: "24-bit"}
#: bytes a pixel per code (``g_PixelBytes``); DXT sizes are per level (:func:`image_size`)
PIXEL_BYTES = (1, 1, 2, 4, 0, 0, 0, 1, 3)

FULLBRITE, PREFER16BIT, MIPSALLOCED, SECTIONSFIXED = 1, 2, 4, 8
NOSYSCACHE, PREFER4444, PREFER5551, SYSCOPY32 = 1 << 6, 1 << 7, 1 << 8, 1 << 9
CUBEMAP, BUMPMAP, LUMBUMPMAP = 1 << 10, 1 << 11, 1 << 12
#: v1 / v1.5 meanings (1.0 template)
ALPHA_MASKS, DONT_MAP_MASTER = 1 << 1, 1 << 5
FLAG_NAMES = {FULLBRITE: "FULLBRITE", PREFER16BIT: "PREFER16BIT", MIPSALLOCED: "MIPSALLOCED",
              SECTIONSFIXED: "SECTIONSFIXED", NOSYSCACHE: "NOSYSCACHE",
              PREFER4444: "PREFER4444", PREFER5551: "PREFER5551", SYSCOPY32: "32BITSYSCOPY",
              CUBEMAP: "CUBEMAP", BUMPMAP: "BUMPMAP", LUMBUMPMAP: "LUMBUMPMAP"}
FLAG_NAMES_V1 = {FULLBRITE: "FULLBRITE", ALPHA_MASKS: "ALPHA_MASKS",
                 SECTIONSFIXED: "SECTIONSFIXED", DONT_MAP_MASTER: "DONT_MAP_MASTER"}

COMMAND_LEN = 128
PALETTE_BYTES = 256 * 4
SECTION_HEADER = 32
#: more levels than any LithTech tool reads (``libs/dtxmgr`` refuses > 15; the game > 8)
MAX_LEVELS = 15
#: largest texture the tools save and the game reads (``MAX_DTX_SIZE``); smallest the tools save
MAX_SIZE, MIN_SIZE = 1024, 8
_COMMON = struct.Struct("<IiHHHHII")


@record
class DtxHeader:
    """Version -5 (LithTech 2.x) header: the engine's ``DtxHeader`` (164 bytes)."""
    width: int
    height: int
    mip_count: int = 4
    section_count: int = 0
    flags: int = SECTIONSFIXED
    user_flags: int = 0
    group: int = 0
    mips_used: int = 0
    bpp: int = BPP_32
    non_s3tc_mip_offset: int = 0
    ui_mip_offset: int = 0
    priority: int = 0
    #: as stored: the engine adds 1 (``GetDetailTextureScale``). A NaN a Python float would
    #: change (a signalling one) stays the 4 bytes read.
    detail_scale: float | bytes = 0.0
    detail_angle: int = 0
    command: bytes = bytes(COMMAND_LEN)
    res_type: int = 0
    version: int = VERSION_2


@record
class DtxHeaderV15:
    """Version -3 (LithTech 1.5) header, after the 1.5 template (172 bytes)."""
    width: int
    height: int
    mip_count: int = 4
    section_count: int = 0
    flags: int = SECTIONSFIXED
    user_flags: int = 0
    group: int = 0
    mips_used: int = 0
    alpha_cutoff: int = 0
    alpha_average: int = 0
    detail_scale: float | bytes = 0.0
    detail_angle: int = 0
    reserved: bytes = bytes(2)
    command: bytes = bytes(COMMAND_LEN)
    reserved2: bytes = bytes(8)
    res_type: int = 0
    version: int = VERSION_15


@record
class DtxHeaderV1:
    """Version -2 (LithTech 1.0) header, after the 1.0 template (44 bytes)."""
    width: int
    height: int
    mip_count: int = 4
    section_count: int = 0
    flags: int = SECTIONSFIXED
    user_flags: int = 0
    group: int = 0
    mips_used: int = 0
    alpha_cutoff: int = 0
    alpha_average: int = 0
    reserved: bytes = bytes(16)
    res_type: int = 0
    version: int = VERSION_1


AnyHeader = DtxHeader | DtxHeaderV15 | DtxHeaderV1


@record
class DtxSection:
    """A section: ``type`` (``PALLETE32``, ``CUBEMAPDATA``, ``LIGHTDEFS``...), ``name`` and
    ``padding`` as the fixed fields hold them (NUL and garbage bytes included)."""
    type: bytes
    name: bytes = bytes(10)
    padding: bytes = bytes(3)
    data: bytes = b""

    @property
    def type_name(self) -> bytes:
        return self.type.split(b"\0", 1)[0]


@record
class DtxTexture:
    """A whole ``.dtx`` file. ``levels[i]`` holds mip level ``i`` as stored (for a cube map,
    face 0; the other faces are the ``CUBEMAPDATA`` section's); ``palette`` the v1/v1.5
    header palette (1024 bytes, else empty); ``alpha_masks`` the v1/v1.5 4-bit masks;
    ``trailing`` whatever follows the last section (or the pixels, when the sections are not
    read: see the module docstring)."""
    header: AnyHeader
    levels: list[bytes]
    palette: bytes = b""
    alpha_masks: list[bytes] | None = None
    sections: list[DtxSection] | None = None
    trailing: bytes = b""

    @property
    def version(self) -> int:
        return self.header.version

    def section(self, type_name: bytes) -> DtxSection | None:
        """The first section of that type (the engine compares the type as a C string)."""
        for s in self.sections or ():
            if s.type_name == type_name:
                return s
        return None


def sniff(head: bytes) -> bool:
    """Resource type 0 and a version we read."""
    if len(head) < 8:
        return False
    res, version = struct.unpack_from("<Ii", head)
    return res == 0 and version in VERSIONS


def bpp_of(header: AnyHeader) -> int:
    """The pixel format the engine reads: the header code (0 read as 32-bit) for v2, 8-bit
    palettised for v1/v1.5."""
    if isinstance(header, DtxHeader):
        return BPP_32 if header.bpp == 0 else header.bpp
    return BPP_8P


def image_size(bpp: int, width: int, height: int) -> int:
    """Bytes of one level (the engine's ``CalcImageSize``)."""
    if bpp == BPP_DXT1:
        return (width * height) >> 1
    if bpp in (BPP_DXT3, BPP_DXT5):
        return width * height
    return width * height * PIXEL_BYTES[bpp]


def level_sizes(header: AnyHeader) -> list[tuple[int, int]]:
    """(width, height) of every stored level."""
    return [(header.width >> i, header.height >> i) for i in range(header.mip_count)]


def _mask_size(width: int, height: int) -> int:
    return height * (width // 2)


# -- reading ---------------------------------------------------------------------------------

def _scale(raw: bytes) -> float | bytes:
    value = struct.unpack("<f", raw)[0]
    return value if struct.pack("<f", value) == raw else raw


def _read_header(r: Reader) -> AnyHeader:
    start = r.pos
    res, version = struct.unpack("<Ii", r.raw(8, "res_type and version"))
    if res != 0:
        raise r.fail("resource type 0 (a DTX texture)", res, offset=start, field="res_type")
    if version not in VERSIONS:
        raise r.fail("DTX version -5 (LithTech 2), -3 (1.5) or -2 (1.0)", version,
                     offset=start + 4, field="version")
    width, height, mips, nsec, flags, user = struct.unpack("<HHHHII", r.raw(16, "header"))
    if mips > MAX_LEVELS:
        raise r.fail(f"at most {MAX_LEVELS} mip levels (LithTech's tools read no more)", mips,
                     offset=start + 12, field="mip_count")
    common = dict(width=width, height=height, mip_count=mips, section_count=nsec, flags=flags,
                  user_flags=user, res_type=res, version=version)
    if version == VERSION_2:
        g, used, bpp, nons3tc, ui, prio = r.raw(6, "extra")
        scale = _scale(r.raw(4, "detail_scale"))
        angle = r.i16("detail_angle")
        if bpp >= len(PIXEL_BYTES):
            raise r.fail("a bits-per-pixel code 0..8", bpp, offset=start + 26, field="bpp")
        return DtxHeader(**common, group=g, mips_used=used, bpp=bpp, non_s3tc_mip_offset=nons3tc,
                         ui_mip_offset=ui, priority=prio, detail_scale=scale,
                         detail_angle=angle, command=r.fixed(COMMAND_LEN, "command"))
    g, used, cutoff, average = r.raw(4, "extra")
    if version == VERSION_1:
        return DtxHeaderV1(**common, group=g, mips_used=used, alpha_cutoff=cutoff,
                           alpha_average=average, reserved=r.fixed(16, "reserved"))
    scale = _scale(r.raw(4, "detail_scale"))
    angle = r.i16("detail_angle")
    return DtxHeaderV15(**common, group=g, mips_used=used, alpha_cutoff=cutoff,
                        alpha_average=average, detail_scale=scale, detail_angle=angle,
                        reserved=r.fixed(2, "reserved"), command=r.fixed(COMMAND_LEN, "command"),
                        reserved2=r.fixed(8, "reserved2"))


def _read_levels(r: Reader, sizes: list[int], what: str) -> list[bytes]:
    r.need(sum(sizes), f"{what} of {len(sizes)} mip levels")    # before allocating any
    out = []
    for i, n in enumerate(sizes):
        with r.at(f"{what}[{i}]"):
            out.append(r.raw(n, what))
    return out


def _read_sections(r: Reader, count: int) -> list[DtxSection]:
    r.check_count(count, SECTION_HEADER, "section_count")
    out = []
    for i in range(count):
        with r.at(f"sections[{i}]"):
            kind = r.fixed(15, "type")
            name = r.fixed(10, "name")
            pad = r.fixed(3, "padding")
            out.append(DtxSection(kind, name, pad, r.pstring("I", "data")))
    return out


def read(r: Reader) -> DtxTexture:
    with r.at("header"):
        header = _read_header(r)
    bpp = bpp_of(header)
    palette = r.fixed(PALETTE_BYTES, "palette") if bpp == BPP_8P else b""
    dims = level_sizes(header)
    levels = _read_levels(r, [image_size(bpp, w, h) for w, h in dims], "levels")
    masks = None
    if not isinstance(header, DtxHeader) and header.flags & ALPHA_MASKS:
        masks = _read_levels(r, [_mask_size(w, h) for w, h in dims], "alpha_masks")
    sections = None
    if not isinstance(header, DtxHeader) or header.flags & SECTIONSFIXED:
        sections = _read_sections(r, header.section_count)
    return DtxTexture(header, levels, palette, masks, sections, r.rest())


# -- writing ---------------------------------------------------------------------------------

def _put_scale(w: Writer, value: float | bytes, where: str) -> None:
    if isinstance(value, bytes):
        if len(value) != 4:
            raise DocumentError(f"{where}: 4 bytes of a float32, got {len(value)}")
        w.raw(value)
    else:
        w.f32(value)


def _fixed(w: Writer, value: bytes, n: int, where: str) -> None:
    if len(value) != n:
        raise DocumentError(f"{where} is {n} bytes long in the file, got {len(value)}")
    w.raw(value)


def _write_header(w: Writer, h: AnyHeader) -> None:
    try:
        w.raw(_COMMON.pack(h.res_type, h.version, h.width, h.height, h.mip_count,
                           h.section_count, h.flags, h.user_flags))
        if isinstance(h, DtxHeader):
            w.raw(bytes([h.group, h.mips_used, h.bpp, h.non_s3tc_mip_offset, h.ui_mip_offset,
                         h.priority]))
            _put_scale(w, h.detail_scale, "header.detail_scale")
            w.i16(h.detail_angle)
            _fixed(w, h.command, COMMAND_LEN, "header.command")
            return
        w.raw(bytes([h.group, h.mips_used, h.alpha_cutoff, h.alpha_average]))
        if isinstance(h, DtxHeaderV1):
            _fixed(w, h.reserved, 16, "header.reserved")
            return
        _put_scale(w, h.detail_scale, "header.detail_scale")
        w.i16(h.detail_angle)
        _fixed(w, h.reserved, 2, "header.reserved")
        _fixed(w, h.command, COMMAND_LEN, "header.command")
        _fixed(w, h.reserved2, 8, "header.reserved2")
    except (struct.error, ValueError) as exc:
        raise DocumentError(f"a header field does not fit its type: {exc}") from exc


def _expect(version: int, header: AnyHeader) -> None:
    kind = {VERSION_2: DtxHeader, VERSION_15: DtxHeaderV15, VERSION_1: DtxHeaderV1}.get(version)
    if kind is None or not isinstance(header, kind):
        raise DocumentError(f"header.version {version} does not go with a "
                            f"{type(header).__name__}")


def write(doc: DtxTexture) -> bytes:
    h = doc.header
    _expect(h.version, h)
    bpp = bpp_of(h)
    if bpp >= len(PIXEL_BYTES):
        raise DocumentError(f"header.bpp: a code 0..8, got {bpp}")
    dims = level_sizes(h)
    if len(doc.levels) != len(dims):
        raise DocumentError(f"header.mip_count is {len(dims)} but there are "
                            f"{len(doc.levels)} levels")
    w = Writer("<")
    _write_header(w, h)
    if bpp == BPP_8P:
        _fixed(w, doc.palette, PALETTE_BYTES, "palette")
    elif doc.palette:
        raise DocumentError("palette: only v1/v1.5 textures have a header palette")
    for i, ((lw, lh), data) in enumerate(zip(dims, doc.levels)):
        _fixed(w, data, image_size(bpp, lw, lh), f"levels[{i}] ({lw}x{lh} {BPP_NAMES[bpp]})")
    has_masks = not isinstance(h, DtxHeader) and bool(h.flags & ALPHA_MASKS)
    if has_masks != (doc.alpha_masks is not None):
        raise DocumentError("alpha_masks go with flag ALPHA_MASKS (1 << 1) of a v1/v1.5 "
                            "texture, and only with it")
    for i, ((lw, lh), data) in enumerate(zip(dims, doc.alpha_masks or ())):
        _fixed(w, data, _mask_size(lw, lh), f"alpha_masks[{i}]")
    if len(doc.alpha_masks or ()) not in (0, len(dims)):
        raise DocumentError("one alpha mask per mip level")
    read_sections = not isinstance(h, DtxHeader) or bool(h.flags & SECTIONSFIXED)
    if read_sections != (doc.sections is not None):
        raise DocumentError("sections are read (a list) unless a v2 header lacks "
                            "SECTIONSFIXED (then None, and they are in trailing)")
    if doc.sections is not None and len(doc.sections) != h.section_count:
        raise DocumentError(f"header.section_count is {h.section_count} but there are "
                            f"{len(doc.sections)} sections")
    for i, s in enumerate(doc.sections or ()):
        _fixed(w, s.type, 15, f"sections[{i}].type")
        _fixed(w, s.name, 10, f"sections[{i}].name")
        _fixed(w, s.padding, 3, f"sections[{i}].padding")
        w.u32(len(s.data))
        w.raw(s.data)
    w.raw(doc.trailing)
    return w.getvalue()


# -- info and check ---------------------------------------------------------------------------

def flag_names(header: AnyHeader) -> list[str]:
    names = FLAG_NAMES if isinstance(header, DtxHeader) else FLAG_NAMES_V1
    out = [n for bit, n in names.items() if header.flags & bit]
    rest = header.flags & ~sum(names)
    return out + ([f"0x{rest:x}"] if rest else [])


def _text(b: bytes) -> str:
    return b.split(b"\0", 1)[0].decode("latin-1")


def info(doc: DtxTexture) -> dict[str, Any]:
    h = doc.header
    out: dict[str, Any] = {
        "version": f"{h.version} ({VERSION_NAMES[h.version]})",
        "size": f"{h.width}x{h.height}",
        "pixel format": BPP_NAMES[bpp_of(h)] + (" (code 0)" if isinstance(h, DtxHeader)
                                                and h.bpp == 0 else ""),
        "mip levels": h.mip_count,
        "flags": " ".join(flag_names(h)) or "none",
        "user flags": h.user_flags,
        "texture group": h.group,
    }
    if h.mips_used:
        out["mip levels used"] = h.mips_used
    if isinstance(h, DtxHeader):
        scale = h.detail_scale if isinstance(h.detail_scale, float) else float("nan")
        out["detail scale"] = round(scale + 1.0, 6)
        out["detail angle"] = h.detail_angle
        if h.priority:
            out["priority"] = h.priority
    if doc.alpha_masks is not None:
        out["alpha masks"] = len(doc.alpha_masks)
    if not isinstance(h, DtxHeaderV1) and _text(h.command):
        out["command"] = _text(h.command)
    out["sections"] = ", ".join(_text(s.type) or "(unnamed)" for s in doc.sections or ()) \
        or "none"
    if doc.trailing:
        out["trailing bytes"] = len(doc.trailing)
    return out


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def check(doc: DtxTexture) -> list[Finding]:
    """What LithTech does with the texture (see ``docs/check-rules.md``)."""
    h = doc.header
    out: list[Finding] = []
    bpp = bpp_of(h)
    if isinstance(h, DtxHeader) and not 1 <= h.mip_count <= 8:
        out.append(error("dtx.mip_count", f"{h.mip_count} mip levels: the engine's dtx_Create "
                                          "refuses 0 and more than 8 (LT_INVALIDDATA)"))
    if bpp in (BPP_DXT1, BPP_DXT3, BPP_DXT5) and (h.width % 4 or h.height % 4):
        out.append(error("dtx.block_size", f"a {BPP_NAMES[bpp]} texture of {h.width}x{h.height}: "
                                           "compressed textures are 4x4 blocks"))
    if not all(_power_of_two(v) and MIN_SIZE <= v <= MAX_SIZE for v in (h.width, h.height)):
        out.append(warning("dtx.size", f"{h.width}x{h.height}: LithTech's tools save only "
                                       f"powers of two from {MIN_SIZE} to {MAX_SIZE} "
                                       "(g_ValidTextureSizes); cards of the time need them"))
    if bpp == BPP_32P:
        pal = doc.section(b"PALLETE32")
        if pal is None or len(pal.data) < PALETTE_BYTES:
            out.append(error("dtx.palette", "a 32-bit palettised texture without a 1024-byte "
                                            "PALLETE32 section: the engine has no colours "
                                            "for it"))
    if isinstance(h, DtxHeader) and h.flags & CUBEMAP and doc.section(b"CUBEMAPDATA") is None:
        out.append(error("dtx.cubemap", "a cube map without its CUBEMAPDATA section (the other "
                                        "five faces)"))
    return out
