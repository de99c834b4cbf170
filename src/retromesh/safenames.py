"""File names taken from untrusted input, made safe before they touch the disk.

Two directions:

- **reading**: :func:`contained_file` resolves a relative reference (a glTF buffer URI, a texture
  name) inside one folder. ``..`` segments, absolute paths, drive letters, URL schemes, NUL bytes
  and symbolic links leading out of the folder are refused; only regular files are opened (never
  ``/dev/zero`` or a FIFO) and their size is checked before they are read.
- **writing**: :func:`safe_name` turns a name from a file (a companion, an image, a buffer) into
  a plain base name of safe characters that is not a reserved device name, so that whatever a
  file says, output lands in the folder the user named. A changed name is reported with a
  :class:`~retromesh.LossWarning` by the callers.
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import unquote

__all__ = ["safe_name", "contained_file", "relative_reference", "UnsafePath"]

_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9._ +\-()\[\]]")
_RESERVED = {"con", "prn", "aux", "nul", "clock$", "conin$", "conout$",
             *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
MAX_NAME = 120


class UnsafePath(ValueError):
    """A reference that would leave its folder (the message says why)."""


def safe_name(name: str, default: str = "file") -> str:
    """A base name of safe characters (``"../../etc/passwd"`` -> ``"passwd"``).

    Keeps the last path component (``/`` or ``\\``), replaces other characters than letters,
    digits, ``. _ - + ( ) [ ]`` and space by ``_``, strips leading dots and spaces and trailing
    dots and spaces (Windows drops them), prefixes reserved device names (``CON``, ``nul.png``)
    with ``_`` and shortens long names keeping the extension. A ``data:`` URI never becomes a
    name: ``default`` is used instead.
    """
    if not isinstance(name, str) or name.startswith("data:"):
        return default
    base = re.split(r"[\\/]", name.replace("\0", ""))[-1]
    base = _UNSAFE_CHARS.sub("_", base).strip(" .")
    if not base:
        return default
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = base, ""
    if stem.lower().split(".")[0] in _RESERVED:
        base = "_" + base
    if len(base) > MAX_NAME:
        ext = ("." + ext[:16]) if dot else ""
        base = base[:MAX_NAME - len(ext)] + ext
    return base


def relative_reference(uri: str) -> str:
    """The relative path a (percent-encoded) URI names, or UnsafePath when it is not a plain
    relative reference inside its folder."""
    if _SCHEME.match(uri) or uri.startswith("//"):
        raise UnsafePath("a URL scheme or network location")
    path = unquote(uri.split("#", 1)[0].split("?", 1)[0])
    if "\0" in path:
        raise UnsafePath("a NUL byte")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path):
        raise UnsafePath("an absolute path")
    parts = [p for p in re.split(r"[\\/]", path) if p not in ("", ".")]
    if not parts:
        raise UnsafePath("no file name")
    if ".." in parts:
        raise UnsafePath("'..' (a parent folder)")
    return "/".join(parts)


def contained_file(folder: Path, uri: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``uri`` refers to inside ``folder``.

    Raises UnsafePath when the reference leaves the folder (also through a symlink), is not a
    regular file or is larger than ``max_bytes``; OSError when it cannot be read.
    """
    rel = relative_reference(uri)
    root = Path(folder).resolve()
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise UnsafePath("a link leading out of the folder")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath("not a regular file")
        if st.st_size > max_bytes:
            raise UnsafePath(f"{st.st_size} bytes, more than the limit of {max_bytes}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(st.st_size + 1)     # read(n) allocates n bytes up front
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise UnsafePath(f"more than the limit of {max_bytes} bytes")
    return data
