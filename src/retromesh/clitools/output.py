"""Writing to the terminal: plain lines wrapped to its width, file names never broken."""
from __future__ import annotations

import shutil
import textwrap

import typer

__all__ = ["width", "echo", "tagged", "error", "warn"]


def width() -> int:
    return max(shutil.get_terminal_size((80, 24)).columns, 40)


def echo(text: str = "", err: bool = False) -> None:
    typer.echo(text, err=err)


def tagged(tag: str, color: str, text: str, err: bool = True) -> None:
    """``tag text`` wrapped to the terminal, file names never broken."""
    first, *rest = text.split("\n")
    lines = textwrap.wrap(f"{tag} {first}", width=width(), subsequent_indent="    ",
                          break_long_words=False, break_on_hyphens=False) or [tag]
    lines[0] = typer.style(tag, fg=color, bold=color == "red") + lines[0][len(tag):]
    echo("\n".join(lines + rest), err=err)


def error(message: str) -> None:
    tagged("error:", "red", message)


def warn(message: str) -> None:
    tagged("warning:", "yellow", message)
