"""Values made into numpy arrays of a file's field types, or refused.

Writers and document builders hand their values to the binary layer as numpy arrays of the
file's own dtypes. numpy's ``astype`` wraps integers that do not fit (70000 becomes 4464 as a
uint16, 2**32 + 1 becomes 1 as a uint32) and truncates fractions, so a value too big for its
field would be written as a different number with no error. :func:`as_dtype` converts only when
every integer field receives exactly the numbers it was given, and otherwise raises a
:class:`~retromesh.errors.DocumentError` naming the field and the first value that does not fit.

The check costs one vectorised min/max per integer field, and nothing when the value already
has the dtype or its type holds only values the field can hold (an int16 going into an int32).
Float fields convert as numpy converts them. :func:`distinct` and :func:`isin` are ``np.unique``
and ``np.isin`` without their cost at start-up. This module knows no file format.
"""
from __future__ import annotations

import functools
import math
import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from .errors import DocumentError

if TYPE_CHECKING:                   # numpy.typing costs milliseconds of start-up at run time
    from numpy.typing import DTypeLike

__all__ = ["as_dtype", "distinct", "isin"]


def as_dtype(value: object, dtype: DTypeLike, what: str) -> np.ndarray:
    """``value`` (an array, nested lists, a structured array) as an array of ``dtype``.

    ``dtype`` may be plain or structured (nested and sub-array fields included). Every integer
    field must receive finite whole numbers within its range; otherwise DocumentError
    ``"BRUS.texture_id[3]: 4294967297 does not fit uint32 (0..4294967295)"``, whose path is
    ``what``, the record's index, the field's name and the index inside a sub-array field.
    A structured value must have the fields of ``dtype`` (same names, same order; their types
    may differ); a plain value given for a structured dtype fills every field, as numpy does.
    ``value`` itself is returned when it already is an array of ``dtype`` (no copy).
    """
    dt = np.dtype(dtype)
    if isinstance(value, np.ndarray) and value.dtype == dt:
        return value
    try:
        a = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise DocumentError(f"{what}: cannot be an array of {_shown(dt)}: {exc}") from None
    if a.dtype == dt:
        return a
    _same_fields(a.dtype, dt, what)
    if _has_ints(dt):
        for names, src, field in _leaves(a, dt, ()):
            _check(src, field, what, a.ndim, names)
    try:
        return a.astype(dt)
    except (TypeError, ValueError, OverflowError) as exc:
        raise DocumentError(f"{what}: {_shown(a.dtype)} cannot be made {_shown(dt)}: "
                            f"{exc}") from None


def _same_fields(src: np.dtype, dt: np.dtype, what: str) -> None:
    """numpy casts records field by field in order whatever their names: records of another
    layout (a version's keys given for another version's) would convert into nonsense."""
    if src.names is None or dt.names is None:
        return
    if src.names != dt.names:
        raise DocumentError(f"{what}: records with fields {', '.join(src.names)} given for "
                            f"{', '.join(dt.names)}")
    for name in dt.names:
        _same_fields(src[name].base, dt[name].base, f"{what}.{name}")


def _shown(dt: np.dtype) -> str:
    return dt.name if dt.names is None and dt.subdtype is None else str(dt)


@functools.lru_cache(maxsize=256)
def _has_ints(dt: np.dtype) -> bool:
    if dt.names is not None:
        return any(_has_ints(dt[n]) for n in dt.names)
    if dt.subdtype is not None:
        return _has_ints(dt.subdtype[0])
    return dt.kind in "iu"


def _leaves(src: np.ndarray, dt: np.dtype,
            names: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], np.ndarray, np.dtype]]:
    """(field path, the source values going into it, its integer dtype) for every integer
    field of ``dt`` (records have the same field names: :func:`_same_fields`)."""
    if not _has_ints(dt):
        return
    if dt.names is not None:
        if src.dtype.names is None:
            for name in dt.names:
                yield from _leaves(src, dt[name], names + (name,))
        elif len(src.dtype.names) == len(dt.names):      # otherwise the cast refuses
            for name, sname in zip(dt.names, src.dtype.names):
                yield from _leaves(src[sname], dt[name], names + (name,))
    elif dt.subdtype is not None:
        yield from _leaves(src, dt.subdtype[0], names)    # a sub-array is checked whole
    elif src.dtype.names is not None:
        if len(src.dtype.names) == 1:                     # a one-field record into a scalar
            yield from _leaves(src[src.dtype.names[0]], dt, names)
    else:
        yield names, src, dt


def _check(src: np.ndarray, dt: np.dtype, what: str, nrec: int, names: tuple[str, ...]) -> None:
    """Raise DocumentError unless every value of ``src`` is a whole number ``dt`` holds."""
    if src.size == 0 or src.dtype.kind == "b" or np.can_cast(src.dtype, dt):
        return
    info = np.iinfo(dt)
    kind = src.dtype.kind
    if kind in "iu":
        have = np.iinfo(src.dtype)      # scan only for the bound the source type can pass
        if ((have.min >= info.min or int(src.min()) >= info.min)
                and (have.max <= info.max or int(src.max()) <= info.max)):
            return
        bad = np.flatnonzero(((src < info.min) | (src > info.max)).reshape(-1))
    elif kind == "f":
        # the limits as exact powers of two: info.max itself may not be a float
        lo, top = info.min, info.max + 1
        with np.errstate(invalid="ignore", over="ignore"):
            if src.min() >= lo and src.max() < top and not np.any(src != np.trunc(src)):
                return
            flat = src.reshape(-1)
            bad = np.flatnonzero(~((flat >= lo) & (flat < top)) | (flat != np.trunc(flat)))
    else:
        # objects (Python ints past 64 bits), strings, complex: element by element, which
        # only values no numeric array type could hold come to
        bad = np.asarray([i for i, v in enumerate(src.reshape(-1).tolist())
                          if not _fits(v, info)], np.intp)
        if not len(bad):
            return
    k = int(bad[0])
    value = src.reshape(-1)[k]
    shown = value.item() if isinstance(value, np.generic) else value
    idx = np.unravel_index(k, src.shape)
    path = (what + "".join(f"[{i}]" for i in idx[:nrec]) + "".join(f".{n}" for n in names)
            + "".join(f"[{i}]" for i in idx[nrec:]))
    problem = "does not fit" if _whole(shown) is not None else "is not a whole number for"
    raise DocumentError(f"{path}: {shown!r} {problem} {dt.name} ({info.min}..{info.max})")


def _whole(v: object) -> int | None:
    """``v`` as an int when it is a whole number (an int, or a float or numeric string with
    no fraction), else None."""
    try:
        return operator.index(v)        # type: ignore[arg-type]
    except TypeError:
        pass
    try:
        f = float(v)                    # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return math.trunc(f) if math.isfinite(f) and f == math.trunc(f) else None


def _fits(v: object, info: np.iinfo) -> bool:
    n = _whole(v)
    return n is not None and info.min <= n <= info.max


def distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a`` (flattened): ``np.unique(a)``, the same values and
    dtype; of values equal under ``==`` (0.0 and -0.0) the first in ``a``'s order is kept
    (``np.unique``'s own sort keeps either). ``np.unique`` without an index output imports
    ``numpy.ma``, a share of a command's start-up that a conversion would notice; with one it
    does not."""
    return np.unique(a, return_index=True)[0]


def isin(a: np.ndarray | list, b: np.ndarray | list) -> np.ndarray:
    """``np.isin(a, b)``: for each value of ``a``, whether ``b`` holds it (``==``: NaN is in
    nothing). ``np.isin`` calls ``np.unique`` in the way that imports ``numpy.ma``."""
    a, b = np.asarray(a), distinct(np.asarray(b))
    if not b.size:
        return np.zeros(a.shape, bool)
    at = np.minimum(np.searchsorted(b, a), len(b) - 1)
    return b[at] == a
