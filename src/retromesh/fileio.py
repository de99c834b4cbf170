"""Getting bytes in and out: sources of every kind, atomic writes."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Union

from .errors import LimitError, RetromeshError

__all__ = ["Source", "read_source", "atomic_write", "atomic_write_many", "Parts",
           "MAX_INPUT_BYTES"]

#: the largest file ``read_source`` reads (raise it for huge assets)
MAX_INPUT_BYTES = 2 << 30

Source = Union[str, os.PathLike, bytes, bytearray, memoryview, IO[bytes]]


def read_source(source: Source) -> tuple[bytes, str | None, Path | None]:
    """Return (data, display name, path) for a path, bytes or a binary file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None, None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            st = path.stat()
        except IsADirectoryError:
            raise RetromeshError(f"{path}: is a folder, not a file") from None
        if stat.S_ISDIR(st.st_mode):
            raise RetromeshError(f"{path}: is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise RetromeshError(f"{path}: is not a regular file (a device or pipe)")
        if st.st_size > MAX_INPUT_BYTES:
            raise LimitError(f"an input of at most {MAX_INPUT_BYTES} bytes "
                             "(retromesh.fileio.MAX_INPUT_BYTES)", file=str(path), offset=0,
                             got=st.st_size)
        return path.read_bytes(), str(path), path
    read = getattr(source, "read", None)
    if read is None:
        raise TypeError(f"cannot read from {type(source).__name__}: give a path, bytes or a "
                        "binary file object")
    data = read()
    if isinstance(data, str):
        raise TypeError("the file object must be opened in binary mode")
    name = getattr(source, "name", None)
    name = name if isinstance(name, str) else None
    return bytes(data), name, Path(name) if name else None


class Parts:
    """File content given as buffers (bytes, C-contiguous numpy arrays...) written one after
    another: a big output is never joined into one more copy of itself in memory.
    ``bytes(parts)`` joins them when a caller needs the whole."""

    __slots__ = ("buffers", "nbytes")

    def __init__(self, buffers: Iterable[Any]) -> None:
        self.buffers = [memoryview(b).cast("B") for b in buffers]
        self.nbytes = sum(b.nbytes for b in self.buffers)

    def __len__(self) -> int:
        return self.nbytes

    def __bytes__(self) -> bytes:
        return b"".join(self.buffers)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Parts):
            other = bytes(other)
        if isinstance(other, (bytes, bytearray, memoryview)):
            return len(other) == self.nbytes and bytes(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Parts({len(self.buffers)} buffers, {self.nbytes} bytes)"


def atomic_write(path: str | os.PathLike, data: bytes | bytearray | memoryview | Parts) -> Path:
    """Write ``data`` (bytes, or :class:`Parts` written in order) to a temporary file beside
    ``path`` and rename it into place."""
    path = Path(path)
    try:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:   # name the file asked for, not the hidden temporary one
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            for buffer in (data.buffers if isinstance(data, Parts) else (data,)):
                fh.write(buffer)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno is not None:
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def atomic_write_many(files: dict[Path, bytes | Parts]) -> list[Path]:
    """Write several files, each atomically (companions first, the main file last)."""
    items = list(files.items())
    out = []
    for path, data in items[1:] + items[:1]:
        out.append(atomic_write(path, data))
    return out
