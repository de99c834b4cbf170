"""Each file parsed once within a job that reads it from several places.

``retromesh info`` reads a file's native counts and then loads its scene; ``retromesh check``
judges a model's companions together and then converts the model, whose format reads the same
companions again. Inside :func:`reading_once`, :func:`retromesh.registry.parse` keeps each
document it parses from a named file and gives the same object back when that file is parsed
as the same format again (the same name, format and size), so the second reader of a file gets
the first one's document instead of parsing it anew.

Outside the scope nothing is kept. The scope is a context variable: threads and tasks each see
their own. A document is shared only between the readers inside one scope, which read it
(a scene conversion may take it over: it is the last reader in both commands).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["reading_once", "recall", "remember"]

Key = tuple[str, str, int]
_KEPT: ContextVar[dict[Key, Any] | None] = ContextVar("retromesh_read_once", default=None)


@contextmanager
def reading_once() -> Iterator[None]:
    """Within this block, a file parsed again as the same format gives the first document."""
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def _key(format_name: str, file: str | None, size: int) -> Key | None:
    return None if file is None else (format_name, file, size)


def recall(format_name: str, file: str | None, size: int) -> Any:
    """The document kept for this file (None outside :func:`reading_once`, or if not kept)."""
    kept = _KEPT.get()
    key = _key(format_name, file, size)
    return None if kept is None or key is None else kept.get(key)


def remember(format_name: str, file: str | None, size: int, doc: Any) -> None:
    """Keep ``doc`` for the rest of the :func:`reading_once` block (nothing outside one)."""
    kept = _KEPT.get()
    key = _key(format_name, file, size)
    if kept is not None and key is not None:
        kept[key] = doc
