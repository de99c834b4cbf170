"""Chunks this reader does not interpret (:class:`.chunks.RawChunk`) carried through glTF.

to_scene records each parent's unknown chunks (the top level in ``scene.extras["b3d_raw"]``, a
NODE's in ``node.extras["b3d"]["raw"]``, its MESH's in ``node.extras["b3d"]["mesh"]["raw"]``)
as ``[after tag, after index, tag, base64 payload]``: the chunk follows the ``after index``-th
sibling chunk of tag ``after tag`` (``""``: first in its parent). from_scene puts them back
there (at the end when that sibling is gone), so B3D -> glTF (-> Blender) -> B3D keeps them
(h3dview ``cube``'s ``SEQS``, mobs_kitten's ``XXXX``).
"""
from __future__ import annotations

import base64
import binascii

from .chunks import AnimChunk, Bone, Brus, Keys, MeshChunk, NodeChunk, RawChunk, Texs, Tris, Vrts

__all__ = ["raw_record", "put_back"]

_TAGS = {Texs: "TEXS", Brus: "BRUS", NodeChunk: "NODE", MeshChunk: "MESH", Vrts: "VRTS",
         Tris: "TRIS", Bone: "BONE", Keys: "KEYS", AnimChunk: "ANIM"}


def _tag(c) -> str:
    return c.tag.decode("latin-1") if isinstance(c, RawChunk) else _TAGS.get(type(c), "")


def raw_record(children: list) -> list[list] | None:
    """The unknown chunks among ``children`` with their places (None when there are none)."""
    if not any(type(c) is RawChunk for c in children):
        return None
    out: list = []
    seen: dict[str, int] = {}
    prev = ("", 0)
    for c in children:
        tag = _tag(c)
        k = seen.get(tag, 0)
        seen[tag] = k + 1
        if isinstance(c, RawChunk):
            out.append([prev[0], prev[1], tag, base64.b64encode(c.payload).decode("ascii")])
        prev = (tag, k)
    return out or None


def _chunk(rec) -> tuple[str, int, RawChunk] | None:
    try:
        after, k, tag, data = rec
        raw = str(tag).encode("latin-1")
        if len(raw) != 4 or not isinstance(after, str):
            return None
        return after, int(k), RawChunk(raw, base64.b64decode(str(data), validate=True))
    except (TypeError, ValueError, UnicodeError, binascii.Error):
        return None


def put_back(children: list, records) -> None:
    """Insert the recorded unknown chunks into ``children`` where they were (in place)."""
    if not isinstance(records, list):
        return
    for rec in records:
        got = _chunk(rec)
        if got is None:
            continue
        after, k, chunk = got
        at = 0 if after == "" else len(children)
        if after:
            n = 0
            for i, c in enumerate(children):
                if _tag(c) == after:
                    if n == k:
                        at = i + 1
                        break
                    n += 1
        children.insert(at, chunk)
