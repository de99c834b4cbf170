"""LithTech ``.ltc`` files: LTA text compressed with the LZSS of the engine's ``libs/ltamgr``
(``CLTACompressedFile``, ``CLZSSWindow``, ``CLTABitFile``).

Layout (a bit stream; bits fill each byte from its lowest bit up, and every value is written
highest bit first):

==========  =====  =======================================================================
field       bits   meaning
==========  =====  =======================================================================
version     32     0 (the engine refuses any other)
token       1      1: a literal follows, 0: a span follows
literal     8      one byte of text
span        12+4   window position of the copy's start (0: end of stream) and its length
                   minus 2 (spans are 2..17 bytes)
==========  =====  =======================================================================

The window holds 4096 bytes; the first byte of text goes to position 1 (position 0 is never
the start of a match: it is the encoder's null node). The end of the stream is a span at
position 0; the engine's bit file never writes its last partial byte, so files made by
LithTech's tools end inside that marker (the reader takes the end of the file there as the
end, as the engine does).

:func:`compress` makes the engine's choice of every token (the binary search tree of window
strings, longest match first, an equal 17-byte string replacing the older node, no match
searched at window position 0, the last 17 bytes written as literals), so new text compresses
as ModelEdit compresses it. A file read keeps its stream (``packed``) and writes it back while
the text is unchanged, so a stream of another encoder comes back byte for byte too.

Limits: the text is at most :data:`MAX_TEXT` bytes (a bomb is refused before it grows);
a span reaching before the first byte, a version other than 0 and a stream ending inside a
literal are :class:`~retromesh.FormatError` with the byte offset.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...binio import Reader
from ...errors import FormatError, LimitError
from ...findings import Finding
from ...records import record
from . import lta
from .lta import LtaFile

__all__ = ["LtcFile", "read", "write", "compress", "decompress", "MAX_TEXT", "info", "check",
           "sniff"]

WINDOW = 4096
LOOK = 17                #: look-ahead: the longest span
MAX_TEXT = lta.MAX_TEXT  #: largest text a stream may decompress to


@record
class LtcFile:
    """A compressed LTA: the text (as :class:`~.lta.LtaFile`) and the stream it was read from
    (``packed``, with the SHA-1 of the text it holds) to write back while the text is the same."""
    lta: LtaFile = field(default_factory=LtaFile)
    version: int = 0
    packed: bytes = b""
    packed_sha1: str = ""


def decompress(data: bytes, file: str | None = None) -> bytes:
    """The text of an LTC stream (FormatError with the byte offset when it is broken)."""
    if len(data) < 4:
        raise FormatError("a 32-bit version", file=file, offset=0, got=f"{len(data)} bytes")
    if data[:4] != b"\0\0\0\0":
        raise FormatError("LTC version 0", file=file, offset=0, got=data[:4].hex())
    bits = np.unpackbits(np.frombuffer(data, np.uint8)[4:], bitorder="little")
    s = bits.tobytes().translate(_BIT_CHARS).decode("ascii")
    n = len(s)
    out = bytearray()
    i = 0
    limit = MAX_TEXT
    while i < n:
        if s[i] == "1":
            if i + 9 > n:
                raise FormatError("8 bits of a literal", file=file, offset=4 + i // 8,
                                  got="the end of the file")
            out.append(int(s[i + 1:i + 9], 2))
            i += 9
            if len(out) > limit:
                raise LimitError(f"an LTC text of at most {limit} bytes", file=file,
                                 offset=4 + i // 8)
            continue
        tok = s[i + 1:i + 17]
        if len(tok) < 16 or int(tok[:12], 2) == 0:
            if "1" in tok:          # a cut span that is not the end marker
                raise FormatError("a 16-bit span", file=file, offset=4 + i // 8,
                                  got="the end of the file")
            break                   # the end marker (cut short as the engine writes it)
        pos, length = int(tok[:12], 2), int(tok[12:], 2) + 2
        w = (len(out) + 1) % WINDOW
        dist = (w - pos) % WINDOW or WINDOW
        j = len(out) - dist
        if j < 0:
            raise FormatError("a span within the text already decoded", file=file,
                              offset=4 + i // 8, got=f"window position {pos}")
        if dist >= length:
            out += out[j:j + length]
        else:
            for k in range(length):
                out.append(out[j + k])
        i += 17
        if len(out) > limit:
            raise LimitError(f"an LTC text of at most {limit} bytes", file=file, offset=4 + i // 8)
    return bytes(out)


_BIT_CHARS = bytes.maketrans(b"\0\1", b"01")


class _Bits:
    """Bits into bytes, lowest bit first (values are given bit-reversed, see :func:`_rev`)."""
    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, value: int, nbits: int) -> None:
        self.acc |= value << self.n
        self.n += nbits
        if self.n >= 64:
            self.out += (self.acc & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
            self.acc >>= 64
            self.n -= 64

    def whole_bytes(self) -> bytes:
        """The stream without its last partial byte (the engine never writes it)."""
        full = self.n // 8
        return bytes(self.out) + (self.acc & ((1 << (8 * full)) - 1)).to_bytes(full, "little")


def _rev(v: int, n: int) -> int:
    return int(format(v, f"0{n}b")[::-1], 2)


_LIT = [1 | (_rev(b, 8) << 1) for b in range(256)]
_OFF = [_rev(p, 12) << 1 for p in range(WINDOW)]
_LEN = [_rev(k, 4) << 13 for k in range(16)]


def compress(text: bytes) -> bytes:
    """``text`` as the engine's ``CLTACompressedFile`` writes it (version, tokens, the end
    marker without its last partial byte)."""
    enc = _Encoder()
    for c in text:
        enc.add(c)
    return b"\0\0\0\0" + enc.finish()


class _Encoder:
    """The engine's LZSS window: a binary search tree of the 17-byte strings at each window
    position (node 0 is null, node WINDOW the root holding the tree under ``larger``)."""

    def __init__(self) -> None:
        self.win = bytearray(WINDOW + LOOK)
        self.key = [0] * (WINDOW + 1)           # each node's 17 bytes as a big-endian int
        self.parent = [0] * (WINDOW + 1)
        self.smaller = [0] * (WINDOW + 1)
        self.larger = [0] * (WINDOW + 1)
        self.parent[WINDOW] = WINDOW
        self.larger[WINDOW] = 1
        self.parent[1] = WINDOW
        self.pos, self.len = 1, 0
        self.match_pos = self.match_len = 0
        self.primed = False
        self.bits = _Bits()

    def add(self, c: int) -> None:
        if not self.primed:
            self.win[self.pos + self.len] = c
            self.len += 1
            if self.len >= LOOK:
                self.primed = True
                self.key[1] = int.from_bytes(self.win[1:1 + LOOK], "big")
            return
        if self.len >= LOOK:
            self._token()
        pos = self.pos
        self._delete((pos + LOOK) % WINDOW)
        if pos >= WINDOW - LOOK:
            self.win[(pos + LOOK) % WINDOW] = c
            self.win[pos + LOOK] = c            # the ghost copy past the end
            pos = (pos + 1) % WINDOW
        else:
            self.win[pos + LOOK] = c
            pos += 1
        self.pos = pos
        self._insert(pos)
        self.len += 1

    def finish(self) -> bytes:
        if self.primed:
            self.pos = (self.pos + (LOOK - self.len)) % WINDOW
        while self.len > 0:
            self.match_len = 0
            self._token()
            self.pos = (self.pos + 1) % WINDOW
        self.bits.put(0, 17)                    # the end marker: a span at position 0
        return self.bits.whole_bytes()

    def _token(self) -> None:
        n = min(self.match_len, self.len)
        if n <= 1:
            self.bits.put(_LIT[self.win[self.pos]], 9)
            n = 1
        else:
            self.bits.put(_OFF[self.match_pos] | _LEN[n - 2], 17)
        self.len -= n

    def _collapse(self, node: int, child: int) -> None:
        par = self.parent[node]
        if self.smaller[par] == node:
            self.smaller[par] = child
        else:
            self.larger[par] = child
        self.parent[child] = par
        self.parent[node] = 0

    def _replace(self, node: int, new: int) -> None:
        par = self.parent[node]
        if self.larger[par] == node:
            self.larger[par] = new
        else:
            self.smaller[par] = new
        self.parent[new] = par
        self.larger[new] = self.larger[node]
        self.smaller[new] = self.smaller[node]
        self.parent[self.smaller[new]] = new
        self.parent[self.larger[new]] = new
        self.parent[node] = 0

    def _delete(self, node: int) -> None:
        if node == 0 or self.parent[node] == 0:
            return
        if self.larger[node] == 0:
            self._collapse(node, self.smaller[node])
        elif self.smaller[node] == 0:
            self._collapse(node, self.larger[node])
        else:
            rep = self.smaller[node]
            while self.larger[rep]:
                rep = self.larger[rep]
            self._collapse(rep, self.smaller[rep])
            self._replace(node, rep)

    def _insert(self, new: int) -> None:
        self.match_len = self.match_pos = 0
        if new == 0:
            return
        key = int.from_bytes(self.win[new:new + LOOK], "big")
        self.key[new] = key
        keys, smaller, larger = self.key, self.smaller, self.larger
        cur = larger[WINDOW]
        best = 0
        while True:
            other = keys[cur]
            diff = key ^ other
            common = LOOK - (diff.bit_length() + 7) // 8
            if common > best:
                if common >= LOOK:
                    self.match_len, self.match_pos = LOOK, cur
                    self._replace(cur, new)
                    return
                best = common
                self.match_len, self.match_pos = common, cur
            if key > other:
                nxt = larger[cur]
                if nxt == 0:
                    larger[cur] = new
                    break
            else:
                nxt = smaller[cur]
                if nxt == 0:
                    smaller[cur] = new
                    break
            cur = nxt
        self.parent[new] = cur
        larger[new] = smaller[new] = 0


def read(r: Reader) -> LtcFile:
    import hashlib  # (not at the top: the family loads without it)
    data = r.rest()
    text = decompress(data, r.file)
    return LtcFile(lta=lta.parse(text, r.file), version=0, packed=data,
                   packed_sha1=hashlib.sha1(text).hexdigest())


def write(doc: LtcFile) -> bytes:
    import hashlib
    text = lta.write(doc.lta)
    if doc.packed and doc.packed_sha1 == hashlib.sha1(text).hexdigest():
        return bytes(doc.packed)
    return compress(text)


def sniff(head: bytes) -> bool:
    """Version 0 and a first token that is a literal ``(`` or whitespace (LTA text starts so)."""
    if len(head) < 6 or head[:4] != b"\0\0\0\0":
        return False
    bits = np.unpackbits(np.frombuffer(head[4:6], np.uint8), bitorder="little")
    if bits[0] != 1:
        return False
    c = int("".join(map(str, bits[1:9])), 2)
    return c in b"(\n\r\t "


def info(doc: LtcFile) -> dict[str, Any]:
    return {"text bytes": len(lta.write(doc.lta)), **lta.info(doc.lta)}


def check(doc: LtcFile) -> list[Finding]:
    return lta.check(doc.lta)
