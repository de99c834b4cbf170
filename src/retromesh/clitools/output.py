"""Writing to the terminal: plain lines wrapped to its width, file names never broken.

Colour follows https://no-color.org: ``NO_COLOR`` set to any non-empty value means none, and
output that is not a terminal gets none either (click strips the codes; rich, used for the
progress line and help, honours both itself).
"""
from __future__ import annotations

import os
import shutil
import textwrap

import typer

from .stdio import shown

__all__ = ["width", "echo", "tagged", "error", "warn", "colour"]


def width() -> int:
    return max(shutil.get_terminal_size((80, 24)).columns, 40)


def colour() -> bool:
    """False when the user asked for no colour (``NO_COLOR``)."""
    return not os.environ.get("NO_COLOR")


def echo(text: str = "", err: bool = False) -> None:
    typer.echo(shown(text), err=err)


def tagged(tag: str, color: str, text: str, err: bool = True) -> None:
    """``tag text`` wrapped to the terminal, file names never broken."""
    first, *rest = shown(text).split("\n")
    lines = textwrap.wrap(f"{tag} {first}", width=width(), subsequent_indent="    ",
                          break_long_words=False, break_on_hyphens=False) or [tag]
    if colour():
        lines[0] = typer.style(tag, fg=color, bold=color == "red") + lines[0][len(tag):]
    echo("\n".join(lines + rest), err=err)


def error(message: str) -> None:
    tagged("error:", "red", message)


def warn(message: str) -> None:
    tagged("warning:", "yellow", message)
