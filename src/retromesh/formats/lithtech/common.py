"""Pieces shared by the LithTech ``.abc`` layouts (v6 and v9-v13): strings, sections, dtypes.

Every ABC file is a chain of sections: ``uint16 len; char name[len]; int32 next_offset``
(absolute offset of the next section header, ``-1`` for the last one), then the section's body.
Bodies are read inside the span up to ``next_offset`` (or the end of the file); whatever the
parser of a section does not consume is kept as that section's ``gap`` so that the bytes come
back unchanged.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from ...binio import Reader, Writer
from ...errors import DocumentError, LimitError
from ...records import record

__all__ = ["RawSection", "read_string", "write_string", "read_vec", "iter_sections",
           "write_sections", "TRANSFORM"]

#: a keyframe / child-model transform: vec3 location, quaternion x, y, z, w
TRANSFORM = np.dtype([("location", "<f4", (3,)), ("rotation", "<f4", (4,))])

#: most sections a file may have before we call it corrupt (a chain that never ends)
MAX_SECTIONS = 4096


@record
class RawSection:
    """A section this library does not parse (``TriStrips``, anything unknown), kept whole."""
    name: bytes
    data: bytes = b""


def read_string(r: Reader, what: str = "string") -> bytes:
    return r.pstring("H", what)


def write_string(w: Writer, s: bytes) -> None:
    if len(s) > 0xFFFF:
        raise DocumentError(f"an ABC string holds at most 65535 bytes, got {len(s)}")
    w.pstring(bytes(s), "H")


def read_vec(r: Reader, n: int, what: str) -> tuple[float, ...]:
    return tuple(float(v) for v in r.floats(n, what))


def iter_sections(r: Reader) -> Iterator[tuple[bytes, int, int]]:
    """Follow the section chain from offset 0; yield ``(name, body_start, body_end)`` with the
    reader at ``body_start``. Offsets must move forward (no loops, no overlaps)."""
    pos = 0
    count = 0
    while True:
        count += 1
        if count > MAX_SECTIONS:
            raise r.fail(f"at most {MAX_SECTIONS} sections", count, error=LimitError)
        r.seek(pos, "section offset")
        with r.at(f"sections[{count - 1}]"):
            name = read_string(r, "section name")
            at = r.pos
            nxt = r.i32("next section offset")
            body = r.pos
            if nxt == -1:
                end = r.end
            elif nxt < body or nxt > r.end:
                raise r.fail(f"a next-section offset of -1 or within {body}..{r.end}", nxt,
                             offset=at)
            else:
                end = nxt
        yield name, body, end
        if nxt == -1:
            return
        pos = nxt


def write_sections(w: Writer, sections: list, body: Callable[[Writer, object], None],
                   name_of: Callable[[object], bytes], last_next: int = -1) -> None:
    """Write each section: its name, a back-patched next offset, ``body(w, section)``."""
    for i, sec in enumerate(sections):
        write_string(w, name_of(sec))
        at = w.pos
        w.i32(0)
        body(w, sec)
        w.patch(at, "i", last_next if i == len(sections) - 1 else w.pos)
