"""Bounds-checked binary reading and writing.

:class:`Reader` walks a bytes-like buffer. Every read checks the bytes left inside the
current *limit* (the file, or the chunk being read), so a count or length in a corrupt file
can never make it read past its parent or allocate more than the data could hold. A stack of
field names is kept so that errors say *where* in the document they happened.

:class:`Writer` mirrors it and back-patches chunk lengths.
"""
from __future__ import annotations

import bisect
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

from . import bigbytes
from .arrays import as_dtype
from .errors import DocumentError, FormatError, LimitError

__all__ = ["Reader", "Writer", "MAX_DEPTH"]

#: deepest nesting any reader may follow (chunks in chunks, nodes in nodes)
MAX_DEPTH = 256

_STRUCTS: dict[str, struct.Struct] = {}


def _struct(fmt: str) -> struct.Struct:
    s = _STRUCTS.get(fmt)
    if s is None:
        s = _STRUCTS[fmt] = struct.Struct(fmt)
    return s


class Reader:
    """A cursor over ``data`` with little- (``"<"``) or big-endian (``">"``) scalars."""

    def __init__(self, data: bytes | bytearray | memoryview, *, file: str | None = None,
                 endian: str = "<") -> None:
        self.data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self.file = file
        self.endian = endian
        self.pos = 0
        self.end = len(data)
        self._path: list[str] = []
        self._depth = 0

    # -- errors and paths -------------------------------------------------------------
    @property
    def path(self) -> str:
        out = ""
        for part in self._path:
            if part.startswith("[") or not out:
                out += part
            else:
                out += "." + part
        return out

    def fail(self, expected: str, got: object = None, *, offset: int | None = None,
             field: str | None = None, error: type[FormatError] = FormatError) -> FormatError:
        """Build (not raise) a FormatError at the cursor, naming the current field path."""
        path = self.path
        if field:
            path = f"{path}.{field}" if path else field
        return error(expected, file=self.file, offset=self.pos if offset is None else offset,
                     path=path, got=got)

    @contextmanager
    def at(self, name: str) -> Iterator[None]:
        """Push ``name`` on the field path (``"nodes[3]"``, ``"keys"``, ``"[12]"``)."""
        self._path.append(name)
        try:
            yield
        finally:
            self._path.pop()

    def push(self, name: str) -> None:
        self._path.append(name)

    def pop(self) -> None:
        self._path.pop()

    # -- limits -----------------------------------------------------------------------
    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def eof(self) -> bool:
        return self.pos >= self.end

    def need(self, n: int, what: str = "data") -> None:
        if n < 0 or n > self.end - self.pos:
            raise self.fail(f"{n} bytes of {what}", f"{max(self.end - self.pos, 0)} bytes left",
                            error=LimitError)

    def check_count(self, n: int, itemsize: int, name: str, *, minimum: int = 0) -> int:
        """Check that ``n`` items of at least ``itemsize`` bytes fit in what is left."""
        if n < minimum:
            raise self.fail(f"{name} >= {minimum}", n, field=name, error=LimitError)
        if itemsize and n * itemsize > self.end - self.pos:
            raise self.fail(f"{name} items of {itemsize} bytes to fit in the "
                            f"{self.end - self.pos} bytes left", n, field=name, error=LimitError)
        return n

    def count(self, name: str, itemsize: int, fmt: str = "i") -> int:
        """Read a count field and check it: not negative, and ``count`` items of at least
        ``itemsize`` bytes fit in what is left. Errors point at the count field itself (its
        offset, and its name at the end of the field path)."""
        start = self.pos
        n = self._one(fmt, name)
        if n < 0:
            raise self.fail(f"{name} >= 0", n, offset=start, field=name, error=LimitError)
        if itemsize and n * itemsize > self.end - self.pos:
            raise self.fail(f"{name} items of {itemsize} bytes to fit in the "
                            f"{self.end - self.pos} bytes left", n, offset=start, field=name,
                            error=LimitError)
        return n

    def chunk(self, length: int, name: str | None = None, *, skip_rest: bool = True) -> _Chunk:
        """Read inside ``length`` bytes from the cursor; the length must fit in the parent.

        Yields the chunk's end offset. On exit the cursor moves to that end (unless
        ``skip_rest`` is false, in which case the body must have been consumed exactly).
        """
        return _Chunk(self, length, name, skip_rest)

    @contextmanager
    def nested(self, name: str | None = None) -> Iterator[None]:
        """Count one level of recursion (for formats whose nesting is not chunked)."""
        self._depth += 1
        if name is not None:
            self._path.append(name)
        try:
            if self._depth > MAX_DEPTH:
                raise self.fail(f"nesting at most {MAX_DEPTH} deep", self._depth, error=LimitError)
            yield
        finally:
            self._depth -= 1
            if name is not None:
                self._path.pop()

    def seek(self, pos: int, what: str = "offset") -> None:
        if pos < 0 or pos > self.end:
            raise self.fail(f"{what} within 0..{self.end}", pos, error=LimitError)
        self.pos = pos

    # -- scalars ----------------------------------------------------------------------
    def unpack(self, fmt: str, what: str = "value") -> tuple:
        s = _struct(self.endian + fmt)
        if s.size > self.end - self.pos:
            raise self.fail(f"{s.size} bytes of {what}", f"{max(self.end - self.pos, 0)} bytes left")
        out = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return out

    def _one(self, fmt: str, what: str):
        return self.unpack(fmt, what)[0]

    def u8(self, what: str = "uint8") -> int:
        return self._one("B", what)

    def i8(self, what: str = "int8") -> int:
        return self._one("b", what)

    def u16(self, what: str = "uint16") -> int:
        return self._one("H", what)

    def i16(self, what: str = "int16") -> int:
        return self._one("h", what)

    def u32(self, what: str = "uint32") -> int:
        return self._one("I", what)

    def i32(self, what: str = "int32") -> int:
        return self._one("i", what)

    def u64(self, what: str = "uint64") -> int:
        return self._one("Q", what)

    def f32(self, what: str = "float32") -> float:
        return self._one("f", what)

    def f64(self, what: str = "float64") -> float:
        return self._one("d", what)

    def bool8(self, what: str = "bool") -> bool:
        return self._one("B", what) != 0

    def floats(self, n: int, what: str = "floats") -> tuple[float, ...]:
        return self.unpack(f"{n}f", what)

    def ints(self, n: int, what: str = "ints") -> tuple[int, ...]:
        return self.unpack(f"{n}i", what)

    # -- bytes and strings ------------------------------------------------------------
    def raw(self, n: int, what: str = "bytes") -> bytes:
        self.need(n, what)
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def rest(self) -> bytes:
        return self.raw(self.end - self.pos, "rest")

    def peek(self, n: int) -> bytes:
        return bytes(self.data[self.pos:min(self.pos + n, self.end)])

    def cstring(self, what: str = "string") -> bytes:
        """A NUL-terminated string inside the current limit (the NUL is consumed, not returned)."""
        if isinstance(self.data, bytes):
            nul = self.data.find(b"\0", self.pos, self.end)
        else:
            nul = bytes(self.data[self.pos:self.end]).find(b"\0")
            nul = -1 if nul < 0 else self.pos + nul
        if nul < 0:
            raise self.fail(f"a NUL-terminated {what}", "no NUL before the end of the data")
        out = bytes(self.data[self.pos:nul])
        self.pos = nul + 1
        return out

    def pstring(self, len_fmt: str = "i", what: str = "string") -> bytes:
        """A length-prefixed string; the length must fit in what is left."""
        start = self.pos
        n = self._one(len_fmt, f"{what} length")
        if n < 0 or n > self.end - self.pos:
            raise self.fail(f"a {what} length within the {self.end - self.pos} bytes left", n,
                            offset=start, error=LimitError)
        return self.raw(n, what)

    def fixed(self, n: int, what: str = "string") -> bytes:
        """A fixed-width raw field (kept whole, padding and garbage included)."""
        return self.raw(n, what)

    # -- bulk records -----------------------------------------------------------------
    def records(self, dtype: DTypeLike, n: int, name: str) -> np.ndarray:
        """``n`` records of ``dtype`` as a writable numpy array (checked before allocating)."""
        dt = np.dtype(dtype)
        if n < 0:
            raise self.fail(f"a count >= 0 for {name}", n, field=name, error=LimitError)
        size = n * dt.itemsize
        if size > self.end - self.pos:
            raise self.fail(f"{n} {name} of {dt.itemsize} bytes ({size} bytes)",
                            f"{self.end - self.pos} bytes left", field=name, error=LimitError)
        arr = np.frombuffer(self.data, dtype=dt, count=n, offset=self.pos).copy()
        self.pos += size
        return arr


class _Chunk:
    """:meth:`Reader.chunk` (a class, not a generator: files of thousands of small chunks)."""
    __slots__ = ("r", "length", "name", "skip_rest", "saved_end", "chunk_end")

    def __init__(self, r: Reader, length: int, name: str | None, skip_rest: bool) -> None:
        self.r, self.length, self.name, self.skip_rest = r, length, name, skip_rest

    def __enter__(self) -> int:
        r = self.r
        if self.name is not None:
            r._path.append(self.name)
        try:
            if self.length < 0 or self.length > r.end - r.pos:
                raise r.fail(f"a chunk length within the {r.end - r.pos} bytes left "
                             f"in the parent", self.length, error=LimitError)
            if r._depth + 1 > MAX_DEPTH:
                raise r.fail(f"nesting at most {MAX_DEPTH} deep", r._depth + 1, error=LimitError)
        except BaseException:
            if self.name is not None:
                r._path.pop()
            raise
        r._depth += 1
        self.saved_end = r.end
        self.chunk_end = r.end = r.pos + self.length
        return self.chunk_end

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        r = self.r
        try:
            if exc_type is None and not self.skip_rest and r.pos != self.chunk_end:
                raise r.fail(f"the chunk to end at byte {self.chunk_end}",
                             f"{self.chunk_end - r.pos} bytes left over")
        finally:
            r.end = self.saved_end
            r._depth -= 1
            if self.name is not None:
                r._path.pop()
        if exc_type is None:
            r.pos = self.chunk_end
        return False


class Writer:
    """Builds bytes; mirrors :class:`Reader`.

    Small fields go into a bytearray; arrays of at least :attr:`BIG` bytes given to
    :meth:`records` are kept as they are and copied once, by :meth:`getvalue` (so writing bulk
    data costs one memory copy)."""

    #: arrays of this many bytes or more are joined by getvalue instead of appended
    BIG = 1 << 16

    def __init__(self, endian: str = "<") -> None:
        self.endian = endian
        self.buf = bytearray()
        self._parts: list[Any] = []      # written before ``buf``: bytearrays and big arrays
        self._starts: list[int] = []     # offset of each part
        self._sealed = 0                 # bytes in ``_parts``

    def getvalue(self) -> bytes:
        if not self._parts and len(self.buf) < bigbytes.MIN_BYTES:
            return bytes(self.buf)
        return bigbytes.join([*self._parts, self.buf])

    @property
    def pos(self) -> int:
        return self._sealed + len(self.buf)

    def pack(self, fmt: str, *values) -> None:
        try:
            self.buf += _struct(self.endian + fmt).pack(*values)
        except (struct.error, OverflowError, TypeError) as exc:
            shown = ", ".join(repr(v) for v in values[:8]) + (", ..." if len(values) > 8 else "")
            raise DocumentError(f"value(s) {shown} do not fit the {fmt!r} field at byte "
                                f"{len(self.buf)}: {exc}") from None

    def u8(self, v: int) -> None:
        self.pack("B", v)

    def i8(self, v: int) -> None:
        self.pack("b", v)

    def u16(self, v: int) -> None:
        self.pack("H", v)

    def i16(self, v: int) -> None:
        self.pack("h", v)

    def u32(self, v: int) -> None:
        self.pack("I", v)

    def i32(self, v: int) -> None:
        self.pack("i", v)

    def u64(self, v: int) -> None:
        self.pack("Q", v)

    def f32(self, v: float) -> None:
        self.pack("f", v)

    def f64(self, v: float) -> None:
        self.pack("d", v)

    def bool8(self, v: bool) -> None:
        self.pack("B", 1 if v else 0)

    def floats(self, values) -> None:
        values = list(values)
        self.pack(f"{len(values)}f", *values)

    def ints(self, values) -> None:
        values = list(values)
        self.pack(f"{len(values)}i", *values)

    def raw(self, b: bytes) -> None:
        self.buf += b

    def cstring(self, b: bytes) -> None:
        self.buf += b
        self.buf += b"\0"

    def pstring(self, b: bytes, len_fmt: str = "i") -> None:
        self.pack(len_fmt, len(b))
        self.buf += b

    def fixed(self, b: bytes, n: int) -> None:
        if len(b) > n:
            raise DocumentError(f"fixed field of {n} bytes cannot hold {len(b)} bytes")
        self.buf += b + b"\0" * (n - len(b))

    def records(self, arr: np.ndarray, dtype: DTypeLike | None = None) -> None:
        """Append ``arr`` (as ``dtype`` when given: :func:`~retromesh.arrays.as_dtype`, so an
        integer that does not fit is refused, not wrapped)."""
        if dtype is not None:
            arr = as_dtype(arr, dtype, f"records at byte {self.pos}")
        arr = np.ascontiguousarray(arr)
        if arr.nbytes < self.BIG:
            # ndarrays are buffers: numpy's stubs say so only for Python 3.12+
            self.buf += memoryview(arr.reshape(-1).view(np.uint8))  # type: ignore[arg-type]
            return
        for part in (self.buf, arr):
            self._parts.append(part)
            self._starts.append(self._sealed)
            self._sealed += part.nbytes if isinstance(part, np.ndarray) else len(part)
        self.buf = bytearray()

    def patch(self, offset: int, fmt: str, *values) -> None:
        try:
            if offset >= self._sealed:
                _struct(self.endian + fmt).pack_into(self.buf, offset - self._sealed, *values)
                return
            i = bisect.bisect_right(self._starts, offset) - 1   # a field packed into a bytearray part
            _struct(self.endian + fmt).pack_into(self._parts[i], offset - self._starts[i], *values)
        except (struct.error, OverflowError, TypeError) as exc:
            raise DocumentError(f"value(s) {values!r} do not fit the {fmt!r} field at byte "
                                f"{offset}: {exc}") from None

    @contextmanager
    def chunk(self, tag: bytes | None = None, len_fmt: str = "i") -> Iterator[None]:
        """Write ``tag`` (if any) and a length placeholder, back-patched on exit with the
        number of bytes written inside (the header excluded)."""
        if tag is not None:
            self.buf += tag
        at = self.pos
        self.pack(len_fmt, 0)
        start = self.pos
        yield
        self.patch(at, len_fmt, self.pos - start)
