"""Kaitai Struct descriptions (``.ksy``) of every format retromesh reads.

Each ``.ksy`` here describes one file type field by field, with the same facts as the format
module's docstring (corrections to the spec text included). They open in the Kaitai Web IDE
(https://ide.kaitai.io: drop the ``.ksy`` and a file) or in ``ksv FILE DESCRIPTION.ksy``, and the
Kaitai compiler turns them into parsers for a dozen languages. The test suite compiles them to
Python and checks each against retromesh's own readers on every example and corpus file.
"""
from __future__ import annotations

from importlib import resources

__all__ = ["descriptions", "text", "find"]


def descriptions() -> dict[str, str]:
    """``{id: file name}`` of every shipped description, e.g. ``{"blitz3d_b3d": "blitz3d_b3d.ksy"}``."""
    folder = resources.files(__name__)
    return {p.name[:-4]: p.name for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".ksy")}


def text(name: str) -> str:
    """The YAML text of one description, by id (``blitz3d_b3d``) or file name."""
    return resources.files(__name__).joinpath(find(name)).read_text(encoding="utf-8")


def find(name: str) -> str:
    """The file name of the description for an id, a file name or a file extension (``b3d``)."""
    known = descriptions()
    key = name.lower().lstrip(".")
    if key.endswith(".ksy"):
        key = key[:-4]
    if key in known:
        return known[key]
    for fname in known.values():
        ext = _extensions(fname)
        if key in ext:
            return fname
    raise KeyError(f"no Kaitai description for {name!r}; known: {', '.join(known)}")


def _extensions(fname: str) -> list[str]:
    """``meta.file-extension`` of a description (read without a YAML parser)."""
    body = resources.files(__name__).joinpath(fname).read_text(encoding="utf-8")
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("file-extension:"):
            value = s.split(":", 1)[1].strip()
            return [v.strip(" '\"") for v in value.strip("[]").split(",") if v.strip()]
        if not line.startswith(" ") and s and not s.startswith("meta"):
            break
    return []
