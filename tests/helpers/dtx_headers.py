"""DTX headers as real games ship them, built by our own writer.

Two uses: :func:`csv_headers` reads tables of real DTX headers in the layout of
AkvenJan/DTX-Meta-Transfer's ``research/DTX properties - *.csv`` (one row a file of Blood 2,
KISS Psycho Circus or No One Lives Forever; ``;``-separated, first row the column names) for
the opt-in corpus test; :data:`VARIANTS` is every value those tables hold for each header field
(counted from their 11,000 rows: facts, no file of theirs), for the always-run test.
:func:`texture` makes a whole file around a header: zero pixels of every level, the palette and
alpha masks the version has, a ``LIGHTDEFS`` section where the row names a light string.

How a row maps to our fields (the tables' reader, ``main.py``, for the column meanings):
"Mipmaps Used" is ``mips_used`` shown as 4 when the file holds 0 (so 4 reads back as 0);
"DTX Flags" is the low 16 bits, two bytes each written most significant bit first, and
"Unknown"/"Unknown1" the high 16 bits; the v1.5 "Surface Flag" is the low 16 bits of
``user_flags`` as a signed number and "Unknown2" the high ones; "Detail Scale" is as stored.
The number of mip levels and of sections is not in the tables: 4 levels (the tools always
write 4, the tables' reader says), one section where a light string is named.
"""
from __future__ import annotations

import csv
import io
import struct
from pathlib import Path
from typing import Any

from retromesh.formats.lithtech import dtx

VERSION_BY_NAME = {"DTX_VERSION_LT1": dtx.VERSION_1, "DTX_VERSION_LT15": dtx.VERSION_15,
                   "DTX_VERSION_LT2": dtx.VERSION_2}
BPP_BY_NAME = {"BPP_8P": dtx.BPP_8P, "BPP_8": dtx.BPP_8, "BPP_16": dtx.BPP_16,
               "BPP_32": dtx.BPP_32, "BPP_S3TC_DXT1": dtx.BPP_DXT1,
               "BPP_S3TC_DXT3": dtx.BPP_DXT3, "BPP_S3TC_DXT5": dtx.BPP_DXT5,
               "BPP_32P": dtx.BPP_32P, "BPP_24": dtx.BPP_24}


def _flags(bits: str) -> int:
    s = bits.lstrip("'")
    return int(s[:8], 2) | int(s[8:16], 2) << 8


def _scale(text: str) -> float:
    return struct.unpack("<f", struct.pack("<f", float(text)))[0]


def _command(text: str) -> bytes:
    raw = text.encode("utf-8", "replace")[:dtx.COMMAND_LEN - 1]
    return raw + bytes(dtx.COMMAND_LEN - len(raw))


def header_of(row: dict[str, str]) -> tuple[dtx.AnyHeader, bool]:
    """The header a table row describes, and whether the file has a light string."""
    version = VERSION_BY_NAME[row["DTX_VERSION"]]
    used = int(row["Mipmaps Used"])
    common: dict[str, Any] = dict(
        width=int(row["Width"]), height=int(row["Height"]), mip_count=4,
        res_type=int(row["Filetype"]), group=int(row["Texture Group"]),
        mips_used=0 if used == 4 else used)
    light = bool(row.get("Light String"))
    common["section_count"] = int(light)
    low = _flags(row["DTX Flags"])
    if version == dtx.VERSION_2:
        return dtx.DtxHeader(
            **common, flags=low | int(row["Unknown"]) << 16, user_flags=int(row["Surface Flag"]),
            bpp=BPP_BY_NAME[row["BPP"]], non_s3tc_mip_offset=int(row["Non S3TC Offset"]),
            ui_mip_offset=int(row["UI Mipmap Offset"]), priority=int(row["Texture Priority"]),
            detail_scale=_scale(row["Detail Scale"]), detail_angle=int(row["Detail Angle"]),
            command=_command(row["Command String"])), light
    cutoff, average = int(row["Software Alpha Cutoff"]), int(row["Software Average Alpha"])
    if version == dtx.VERSION_1:
        reserved = struct.pack("<IIBBHBBH", *(int(row[f"Unknown{i}"]) for i in range(1, 9)))
        return dtx.DtxHeaderV1(**common, flags=low | int(row["Unknown"]) << 16,
                               user_flags=int(row["Surface Flag"]) & 0xFFFFFFFF,
                               alpha_cutoff=cutoff, alpha_average=average,
                               reserved=reserved), light
    surface = int(row["Surface Flag"].split(":")[0]) & 0xFFFF
    return dtx.DtxHeaderV15(
        **common, flags=low | int(row["Unknown1"]) << 16,
        user_flags=surface | int(row["Unknown2"]) << 16, alpha_cutoff=cutoff,
        alpha_average=average, detail_scale=_scale(row["Detail Scale"]),
        detail_angle=int(row["Detail Angle"]), reserved=struct.pack("<H", int(row["Unknown3"])),
        command=_command(row["Command String"])), light


def csv_headers(path: Path) -> tuple[list[tuple[str, dtx.AnyHeader, bool]], int]:
    """Every readable row of a table as (file name, header, light string), and how many rows
    were not readable (a command string of raw bytes breaks some lines of the KISS table)."""
    text = path.read_bytes().decode("utf-8", "replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=";")
    names = next(reader)
    out, broken = [], 0
    for fields in reader:
        if not fields:
            continue
        row = dict(zip(names, fields))
        try:
            out.append((row["Filename"], *header_of(row)))
        except (KeyError, ValueError, IndexError, struct.error):
            broken += 1
    return out, broken


def texture(header: dtx.AnyHeader, light: bool = False) -> dtx.DtxTexture:
    """A whole file around ``header``: zero pixels, the version's palette and alpha masks, a
    LIGHTDEFS section when ``light`` (the section a v2 file reads only with SECTIONSFIXED,
    else its bytes ride in ``trailing``)."""
    bpp = dtx.bpp_of(header)
    dims = dtx.level_sizes(header)
    levels = [bytes(dtx.image_size(bpp, w, h)) for w, h in dims]
    v2 = isinstance(header, dtx.DtxHeader)
    palette = b"" if v2 else bytes(dtx.PALETTE_BYTES)
    masks = None
    if not v2 and header.flags & dtx.ALPHA_MASKS:
        masks = [bytes(h * (w // 2)) for w, h in dims]
    sections = [dtx.DtxSection(b"LIGHTDEFS".ljust(15, b"\0"), data=b" \0")] if light else []
    if v2 and not header.flags & dtx.SECTIONSFIXED:
        trailing = b"".join(_section_bytes(s) for s in sections)
        return dtx.DtxTexture(header, levels, palette, masks, None, trailing)
    return dtx.DtxTexture(header, levels, palette, masks, sections)


def _section_bytes(s: dtx.DtxSection) -> bytes:
    return s.type + s.name + s.padding + struct.pack("<I", len(s.data)) + s.data


def variant_header(version: int, values: tuple, light: bool = False) -> dtx.AnyHeader:
    """The header of one :data:`.dtx_header_variants.VARIANTS` entry (mip count 4; one section
    with ``light``, which :func:`texture` adds)."""
    from helpers.dtx_header_variants import FIELDS
    kwargs: dict[str, Any] = dict(zip(FIELDS[version], values), section_count=int(light))
    for key in ("reserved", "reserved2"):
        if key in kwargs:
            kwargs[key] = bytes.fromhex(kwargs[key])
    if "command" in kwargs:
        cmd = kwargs["command"]
        kwargs["command"] = _command(cmd) if cmd is not None else UNINITIALISED
    kind = {dtx.VERSION_2: dtx.DtxHeader, dtx.VERSION_15: dtx.DtxHeaderV15,
            dtx.VERSION_1: dtx.DtxHeaderV1}[version]
    return kind(**kwargs)


#: what stands for the uninitialised bytes of some KISS command fields: non-zero first byte,
#: no text, no NUL until late
UNINITIALISED = bytes(range(0x80, 0x100)).ljust(dtx.COMMAND_LEN, b"\xcd")
