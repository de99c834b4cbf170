"""The GLB container: a 12-byte header, a JSON chunk, an optional BIN chunk (glTF 2.0, "GLB
File Format Specification"). Every module that reads or writes a GLB frames it here.

| offset | size | field |
|---|---|---|
| 0 | 4 | magic ``glTF`` |
| 4 | 4 | version, 2 |
| 8 | 4 | length of the whole GLB (header and chunks) |
| 12 | 4 + 4 | chunk 0: length of its data, type ``JSON`` (0x4E4F534A) |
| 20 | length | the JSON text, padded with spaces to a multiple of 4 |
| ... | 4 + 4 | chunk 1 (optional): length, type ``BIN\\0`` (0x004E4942) |
| ... | length | the binary buffer, padded with zeros to a multiple of 4 |

Chunks of other types may follow; readers skip them (the specification says so), but their
framing is checked like the others'. Bytes after ``length`` are ignored. What :func:`unpack`
refuses (each a :class:`~retromesh.FormatError` naming the offset and the header field):
a wrong magic or version, a ``length`` past the end of the data, a chunk whose data runs past
``length`` or whose length is not a multiple of 4 (chunks are padded), a first chunk that is not
JSON, and a second JSON or BIN chunk (the specification allows one of each).
"""
from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from ..errors import FormatError, LimitError
from ..fileio import Parts

__all__ = ["MAGIC", "JSON_CHUNK", "BIN_CHUNK", "JSON_AT", "pack", "pack_parts", "unpack"]

MAGIC = b"glTF"
JSON_CHUNK = 0x4E4F534A     # b"JSON" read as a little-endian uint32
BIN_CHUNK = 0x004E4942      # b"BIN\0"
HEADER_SIZE = 12
CHUNK_HEADER_SIZE = 8
#: where the JSON text starts (the JSON chunk is the first one)
JSON_AT = HEADER_SIZE + CHUNK_HEADER_SIZE


def pack_parts(json_text: bytes, bin_parts: Iterable[Any] | None = None) -> Parts:
    """The GLB of ``json_text`` and, unless ``bin_parts`` is None, a BIN chunk holding those
    buffers (bytes, C-contiguous arrays) one after another, as :class:`~retromesh.fileio.Parts`:
    the buffer is never joined into a copy. The JSON is padded with spaces, the buffer with
    zeros; an empty ``bin_parts`` still makes an (empty) BIN chunk."""
    js = bytes(json_text)
    js += b" " * (-len(js) % 4)
    buffers: list[Any] = [b"", struct.pack("<II", len(js), JSON_CHUNK), js]
    if bin_parts is not None:
        body = [memoryview(b).cast("B") for b in bin_parts]
        size = sum(b.nbytes for b in body)
        pad = b"\0" * (-size % 4)
        buffers += [struct.pack("<II", size + len(pad), BIN_CHUNK), *body, pad]
    out = Parts(buffers)
    out.buffers[0] = memoryview(struct.pack("<4sII", MAGIC, 2, HEADER_SIZE + out.nbytes))
    out.nbytes += HEADER_SIZE
    return out


def pack(json_text: bytes, bin_data: bytes | None = None) -> bytes:
    """The GLB file's bytes (:func:`pack_parts` joined); no BIN chunk when ``bin_data`` is
    None."""
    return bytes(pack_parts(json_text, None if bin_data is None else [bin_data]))


def unpack(data: bytes | bytearray | memoryview, *,
           file: str | None = None) -> tuple[bytes, bytes | None]:
    """The JSON chunk's data (with its padding; :data:`JSON_AT` is its offset) and the BIN
    chunk's (None when there is none) of the GLB ``data``; FormatError (LimitError when
    something runs past the end) if the container is not a GLB's."""
    view = memoryview(data).cast("B")
    end = len(view)

    def fail(expected: str, got: object, offset: int, path: str,
             error: type[FormatError] = FormatError) -> FormatError:
        return error(expected, file=file, offset=offset, path=path, got=got)

    if end < HEADER_SIZE:
        raise fail(f"a {HEADER_SIZE}-byte GLB header", f"{end} bytes", 0, "header",
                   LimitError)
    magic, version, length = struct.unpack_from("<4sII", view)
    if magic != MAGIC:
        raise fail("the GLB magic 'glTF'", magic, 0, "magic")
    if version != 2:
        raise fail("GLB version 2", version, 4, "version")
    if length > end:
        raise fail(f"a GLB length within the {end} bytes of the data", length, 8, "length",
                   LimitError)
    json_text: bytes | None = None
    bin_data: bytes | None = None
    pos, index = HEADER_SIZE, 0
    while pos < length:
        path = f"chunks[{index}]"
        if length - pos < CHUNK_HEADER_SIZE:
            raise fail(f"a {CHUNK_HEADER_SIZE}-byte chunk header before the GLB's end "
                       f"({length})", f"{length - pos} bytes", pos, path, LimitError)
        size, kind = struct.unpack_from("<II", view, pos)
        if size % 4:
            raise fail("a chunk length that is a multiple of 4 (chunks are padded)", size, pos,
                       path + ".length")
        start = pos + CHUNK_HEADER_SIZE
        if size > length - start:
            raise fail(f"chunk data within the GLB's {length} bytes ({length - start} left)",
                       size, pos, path + ".length", LimitError)
        if index == 0 and kind != JSON_CHUNK:
            raise fail("a JSON chunk first (type 0x4E4F534A)", f"type 0x{kind:08X}", pos + 4,
                       path + ".type")
        if kind == JSON_CHUNK and index:
            raise fail("one JSON chunk", "a second one", pos + 4, path + ".type")
        if kind == BIN_CHUNK and index != 1:
            raise fail("the BIN chunk second, and only one", f"a BIN chunk as chunk {index}",
                       pos + 4, path + ".type")
        if kind == JSON_CHUNK:
            json_text = bytes(view[start:start + size])
        elif kind == BIN_CHUNK:
            bin_data = bytes(view[start:start + size])
        pos, index = start + size, index + 1
    if json_text is None:
        raise fail("a JSON chunk", "none", HEADER_SIZE, "chunks[0]")
    return json_text, bin_data
