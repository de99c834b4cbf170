"""The command line as tests call it: ``run("convert", src, "-o", out)`` (arguments made
strings, keywords passed to ``CliRunner.invoke``) and ``flat(res)``, its output with the
terminal's line wrapping undone."""
from __future__ import annotations

from typing import Any

# typer's own names: typer >= 0.28 no longer installs click
from typer.testing import CliRunner, Result

from retromesh.cli import app

__all__ = ["runner", "run", "flat"]

runner = CliRunner()


def run(*args: object, **kw: Any) -> Result:
    return runner.invoke(app, [str(a) for a in args], **kw)


def flat(res: Result) -> str:
    """The output with line wrapping undone (messages wrap at the terminal width)."""
    return " ".join(res.output.split())
