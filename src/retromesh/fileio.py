"""Getting bytes in and out: sources of every kind, atomic writes.

An output is written to a hidden temporary file beside it, flushed to disk and renamed into
place, so that a crash never leaves a half-written file under the final name. Inside
:func:`durable_batch` (a folder conversion) the flush is done once for many files: the
temporary files are written, then one ``syncfs`` (Linux; elsewhere an ``fsync`` per file)
flushes them all, then they are renamed and their folders flushed. Until then a crash leaves
only hidden ``.<name>.*.tmp`` files, never a partial output.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .errors import LimitError, RetromeshError

__all__ = ["Source", "read_source", "atomic_write", "atomic_write_many", "durable_batch",
           "written_file", "Batch", "Parts", "MAX_INPUT_BYTES"]

#: the largest file ``read_source`` reads (raise it for huge assets)
MAX_INPUT_BYTES = 2 << 30

Source = str | os.PathLike | bytes | bytearray | memoryview | IO[bytes]


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
        from .bigbytes import join
        return join(self.buffers)

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
    ``path`` and rename it into place (inside :func:`durable_batch`: at the batch's next
    commit)."""
    path = Path(path)
    try:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except FileNotFoundError:       # the folder is made when missing (no look first)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:   # name the file asked for, not the hidden temporary one
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    batch: Batch | None = getattr(_local, "batch", None)
    try:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        if _WRITEV is not None:         # straight to the file: no buffered writer to make
            try:
                _write_parts(fd, data.buffers if isinstance(data, Parts)
                             else [memoryview(data).cast("B")])
                if batch is None or batch.syncfs is None:
                    os.fsync(fd)
            finally:
                os.close(fd)
        else:
            with os.fdopen(fd, "wb") as fh:
                for buffer in (data.buffers if isinstance(data, Parts) else (data,)):
                    fh.write(buffer)
                if batch is None or batch.syncfs is None:
                    fh.flush()
                    os.fsync(fh.fileno())
        if batch is None:
            os.replace(tmp, path)
        else:
            batch._add(path, tmp)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.errno is not None:
            raise type(exc)(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


#: ``os.writev`` where there is one (POSIX), and the most buffers one call takes
_WRITEV = getattr(os, "writev", None)
try:
    _IOV_MAX = max(16, min(os.sysconf("SC_IOV_MAX"), 1024)) if _WRITEV is not None else 16
except (AttributeError, ValueError, OSError):
    _IOV_MAX = 16


def _write_parts(fd: int, buffers: list[memoryview]) -> None:
    """``buffers`` written one after another to ``fd``, a few system calls for all (a GLB
    is dozens of small buffers: one buffered ``write`` call each cost more than the data)."""
    assert _WRITEV is not None
    todo = [b for b in buffers if b.nbytes]
    while todo:
        batch = todo[:_IOV_MAX]
        n = _WRITEV(fd, batch)
        if n <= 0:
            raise OSError(errno.EIO, "no byte written")
        done = 0
        while done < len(batch) and n >= batch[done].nbytes:     # (a short write: go on)
            n -= batch[done].nbytes
            done += 1
        todo = todo[done:]
        if n:
            todo[0] = todo[0][n:]


_local = threading.local()


class Batch:
    """The outputs of a :func:`durable_batch` waiting for their flush and rename."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.syncfs = _syncfs()     # None: each file is flushed when written
        self.pending: dict[Path, str] = {}          # final path -> its temporary file
        #: outputs whose rename failed at a commit (they were not written), with the error
        self.failed: dict[Path, OSError] = {}

    def _add(self, path: Path, tmp: str) -> None:
        old = self.pending.pop(path, None)           # written twice: the last one counts
        if old is not None:
            _unlink(old)
        self.pending[path] = tmp
        if len(self.pending) >= self.limit:
            self.commit()

    def commit(self) -> None:
        """Flush the pending files to disk at once, then rename each into place."""
        items = list(self.pending.items())
        self.pending.clear()
        if not items:
            return
        if self.syncfs is not None:
            try:
                _flush(self.syncfs, [tmp for _, tmp in items])
            except OSError as exc:
                for path, tmp in items:
                    _unlink(tmp)
                    self.failed[path] = type(exc)(exc.errno, exc.strerror, str(path))
                return
        folders = set()
        for path, tmp in items:
            try:
                os.replace(tmp, path)
                folders.add(path.parent)
            except OSError as exc:
                _unlink(tmp)
                self.failed[path] = type(exc)(exc.errno, exc.strerror, str(path))
        for folder in folders:
            _fsync_folder(folder)


@contextmanager
def durable_batch(limit: int = 256) -> Iterator[Batch]:
    """Within: atomic writes of this thread are flushed to disk together, at the end or every
    ``limit`` files (see the module docstring). Renames that fail then are in ``failed``."""
    batch = Batch(limit)
    outer = getattr(_local, "batch", None)
    _local.batch = batch
    try:
        yield batch
    finally:
        _local.batch = outer
        batch.commit()      # the files written so far are complete: keep them


def written_file(path: str | os.PathLike) -> Path:
    """Where the bytes just written for ``path`` are: its temporary file while a
    :func:`durable_batch` has not renamed it yet, else ``path``."""
    batch: Batch | None = getattr(_local, "batch", None)
    tmp = batch.pending.get(Path(path)) if batch is not None else None
    return Path(tmp) if tmp is not None else Path(path)


def _unlink(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


_SYNCFS: list = []


def _syncfs():
    """libc's ``syncfs`` (Linux), else None."""
    if not _SYNCFS:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                fn = ctypes.CDLL(None, use_errno=True).syncfs
            except (OSError, AttributeError, ImportError):
                fn = None
        _SYNCFS.append(fn)
    return _SYNCFS[0]


def _flush(syncfs, names: list[str]) -> None:
    """Every file of ``names`` on disk: one ``syncfs`` per file system, or (when it fails) an
    ``fsync`` per file."""
    done: set[int] = set()
    for name in names:
        fd = os.open(name, os.O_RDONLY)
        try:
            dev = os.fstat(fd).st_dev
            if dev not in done:
                if syncfs(fd) != 0:
                    break
                done.add(dev)
        finally:
            os.close(fd)
    else:
        return
    for name in names:
        fd = os.open(name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """The renames in ``folder`` on disk (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_many(files: Mapping[Path, bytes | Parts]) -> list[Path]:
    """Write several files, each atomically (companions first, the main file last)."""
    items = list(files.items())
    out = []
    for path, data in items[1:] + items[:1]:
        out.append(atomic_write(path, data))
    return out
