"""Shared malformed-input checks: whatever is done to a valid file, reading it may only raise
retromesh.FormatError (with file, offset and path filled in) — never a raw Python error, and
never hang or allocate wildly.
"""
from __future__ import annotations

import random
import struct

import retromesh
from retromesh import FormatError


def read_or_format_error(data: bytes, name: str, format: str | None = None, scene: bool = False):
    """Read ``data`` (as file ``name``); return the document, or None after a proper FormatError.

    With ``scene=True`` the document is also converted to a Scene (to_scene must also raise
    only FormatError on nonsense content).
    """
    try:
        doc = retromesh.read(data, format=format or name.rsplit(".", 1)[-1])
        if scene:
            from retromesh import registry
            fmt = registry.format_of(doc)
            if fmt.to_scene is not None:
                registry.convert_to_scene(fmt, doc, name)
        return doc
    except FormatError as exc:
        assert exc.offset is not None or exc.path, f"FormatError without offset or path: {exc}"
        assert str(exc)
        return None
    except retromesh.UnsupportedError:
        return None


def truncations(data: bytes, limit: int = 400, seed: int = 0) -> list[int]:
    """Cut points: every offset for small files, else the first/last 64 and a random sample."""
    n = len(data)
    if n <= limit:
        return list(range(n))
    rng = random.Random(seed)
    pts = set(range(64)) | set(range(n - 64, n)) | {rng.randrange(n) for _ in range(limit - 128)}
    return sorted(pts)


def huge_count_variants(data: bytes, limit: int = 300, seed: int = 0, endian: str = "<"):
    """Copies of ``data`` with one aligned 32-bit field set to a huge or negative value."""
    rng = random.Random(seed)
    offsets = list(range(0, max(len(data) - 3, 0), 4))
    if len(offsets) > limit:
        offsets = sorted(rng.sample(offsets, limit))
    values = (0x7FFFFFFF, 0xFFFFFFFF, 0x10000000)
    for off in offsets:
        for v in values:
            b = bytearray(data)
            struct.pack_into(endian + "I", b, off, v)
            yield off, bytes(b)


def assert_malformed_safe(data: bytes, name: str, format: str | None = None,
                          scene: bool = False, endian: str = "<") -> None:
    for cut in truncations(data):
        read_or_format_error(data[:cut], name, format, scene)
    for _, variant in huge_count_variants(data, endian=endian):
        read_or_format_error(variant, name, format, scene)


def byte_flips(data: bytes, count: int = 200, seed: int = 0):
    """Copies of ``data`` with one to four random bytes set to random values."""
    rng = random.Random(seed)
    if not data:
        return
    for _ in range(count):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        yield bytes(b)
