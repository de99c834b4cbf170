"""The GLB container (retromesh.gltf.container): one framing for the reader, the writer, the
Blender bridge and the Luanti preset; every malformed container is a FormatError naming the
offset and the header field."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import retromesh
from retromesh import FormatError, LimitError
from retromesh.gltf.container import BIN_CHUNK, JSON_AT, JSON_CHUNK, pack, pack_parts, unpack

JSON = b'{"asset":{"version":"2.0"}}'       # 27 bytes: padded with one space
PADDED = JSON + b" "
AFTER = JSON_AT + len(PADDED)                    # where the second chunk starts


def _glb(*chunks: tuple[int, bytes], version: int = 2, length: int | None = None) -> bytes:
    body = b"".join(struct.pack("<II", len(data), kind) + data for kind, data in chunks)
    return struct.pack("<4sII", b"glTF", version, 12 + len(body) if length is None else length) \
        + body


def test_pack_pads_and_unpack_gives_the_chunks_back():
    data = pack(JSON, b"\1\2\3")
    assert len(data) % 4 == 0
    assert data == _glb((JSON_CHUNK, PADDED), (BIN_CHUNK, b"\1\2\3\0"))
    assert unpack(data) == (PADDED, b"\1\2\3\0")
    assert data[JSON_AT:JSON_AT + len(JSON)] == JSON
    assert unpack(pack(JSON)) == (PADDED, None)           # no BIN chunk
    assert unpack(pack(JSON, b"")) == (PADDED, b"")        # an empty one
    assert unpack(memoryview(bytearray(data))) == unpack(data)


def test_pack_parts_joins_nothing_and_matches_pack():
    array = np.arange(3, dtype=np.float32)
    parts = pack_parts(JSON, [array, b"\7"])
    assert parts.nbytes == len(bytes(parts))
    assert bytes(parts) == pack(JSON, array.tobytes() + b"\7")
    assert any(np.shares_memory(np.frombuffer(b, np.uint8), array) for b in parts.buffers
               if b.nbytes)


def test_unknown_chunks_are_skipped_and_bytes_after_length_ignored():
    data = _glb((JSON_CHUNK, PADDED), (BIN_CHUNK, b"abcd"), (0x12345678, b"xxxx"))
    assert unpack(data + b"trailing") == (PADDED, b"abcd")


def test_a_written_glb_reads_back_through_the_container(tmp_path):
    from helpers.make_examples_import import wiggle_bytes
    (tmp_path / "w.b3d").write_bytes(wiggle_bytes())
    retromesh.save(retromesh.load(tmp_path / "w.b3d"), tmp_path / "w.glb", embed_images=False)
    glb = (tmp_path / "w.glb").read_bytes()
    json_text, bin_data = unpack(glb)
    assert json_text.startswith(b"{") and bin_data
    assert pack(json_text, bin_data) == glb
    assert retromesh.to_bytes(retromesh.read(glb)) == glb


@pytest.mark.parametrize("data, error, offset, path", [
    (b"glTF\2\0\0", LimitError, 0, "header"),                                      # truncated
    (b"glTB" + _glb((JSON_CHUNK, PADDED))[4:], FormatError, 0, "magic"),
    (_glb((JSON_CHUNK, PADDED), version=1), FormatError, 4, "version"),
    (_glb((JSON_CHUNK, PADDED), length=200), LimitError, 8, "length"),
    (_glb((JSON_CHUNK, PADDED))[:-4], LimitError, 8, "length"),                     # cut short
    (_glb(), FormatError, 12, "chunks[0]"),                                          # no chunk
    (_glb((JSON_CHUNK, JSON)), FormatError, 12, "chunks[0].length"),                 # no padding
    (_glb((JSON_CHUNK, PADDED), (BIN_CHUNK, b"abc")), FormatError, AFTER,
     "chunks[1].length"),
    (_glb((JSON_CHUNK, PADDED), (BIN_CHUNK, b"abc"))[:-3], LimitError, 8, "length"),
    (_glb((BIN_CHUNK, b"abcd"), (JSON_CHUNK, PADDED)), FormatError, 16, "chunks[0].type"),
    (_glb((JSON_CHUNK, PADDED), (JSON_CHUNK, PADDED)), FormatError, AFTER + 4,
     "chunks[1].type"),
    (_glb((JSON_CHUNK, PADDED), (0x1, b""), (BIN_CHUNK, b"")), FormatError, AFTER + 12,
     "chunks[2].type"),
    (_glb((JSON_CHUNK, PADDED), length=JSON_AT + len(PADDED) + 4) + b"\0\0\0\0", LimitError,
     AFTER, "chunks[1]"),                                  # 4 bytes: no room for a chunk header
])
def test_malformed_containers_are_format_errors_naming_offset_and_field(data, error, offset,
                                                                         path):
    with pytest.raises(error) as exc:
        unpack(data, file="x.glb")
    assert type(exc.value) is error
    assert (exc.value.offset, exc.value.path, exc.value.file) == (offset, path, "x.glb")
    with pytest.raises(error) as exc:                      # the reader raises the same
        retromesh.read(data, format="glb")
    assert (exc.value.offset, exc.value.path) == (offset, path)


def test_a_chunk_past_the_declared_length_is_refused():
    whole = _glb((JSON_CHUNK, PADDED), (BIN_CHUNK, b"abcd"))
    short = struct.pack("<4sII", b"glTF", 2, len(whole) - 4) + whole[12:]
    with pytest.raises(LimitError) as exc:
        unpack(short)
    assert (exc.value.offset, exc.value.path) == (AFTER, "chunks[1].length")
    assert f"within the GLB's {len(whole) - 4} bytes" in str(exc.value)
