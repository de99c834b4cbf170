"""Small helpers shared by the Overgrowth file types."""
from __future__ import annotations

from typing import Any

from ...errors import DocumentError


def need(value: Any, present: bool, what: str, label: str) -> None:
    """A field that exists only in some versions: present exactly when the version has it.
    ``label`` names the file type and version in the message (``".anm version 7"``)."""
    if present and value is None:
        raise DocumentError(f"{label} needs {what}")
    if not present and value is not None:
        raise DocumentError(f"{label} has no {what} (set it to None)")
