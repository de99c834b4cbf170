"""One error style for every subcommand: ``error: <file>: <message>``.

The library's messages name Python keywords (``pass skeleton=<.skl>``); on the command line
they name the flags instead (``--skeleton FILE``). A FormatError already starts with its file,
so the file is never printed twice; a read past the end says "truncated" first.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

__all__ = ["describe", "cli_hints", "short_paths", "EXIT_FAILED", "EXIT_USAGE"]

#: a file could not be read/converted/written (the batch went on)
EXIT_FAILED = 1
#: the command line itself is wrong (missing input, unknown option, bad value)
EXIT_USAGE = 2

_FLAGS = {"skeleton": "--skeleton FILE", "mesh": "--mesh FILE", "hva": "--hva FILE",
          "animations": "--animation FILE", "fps": "--fps N", "scale": "--scale N",
          "format": "--format NAME", "texture_path": "--texture-path DIR"}
_WRITE = {"animation", "animation_format", "version", "game", "rounding", "mesh_type",
          "resolution", "voxel_size", "clockwise", "write_mesh"}
_HINT = re.compile(r"\b([a-z_]+)=(<([^<>]*)>|\.\.\.|'([^']*)'|NAME\b|FILE\b)")


def _flag(match: re.Match) -> str:
    key, whole, inner, quoted = match.group(1), match.group(2), match.group(3), match.group(4)
    if key in _FLAGS:
        flag = _FLAGS[key]
        if quoted is not None:
            flag = flag.split()[0] + " " + quoted
        extra = inner.strip() if inner else ""
        if extra.startswith("the "):
            extra = extra[4:]
        return f"{flag} ({extra})" if extra and not extra.startswith(".") else flag
    value = "FILE" if inner is not None else (quoted if quoted is not None else whole)
    if value == "...":
        value = "VALUE"
    return f"{'-O' if key in _WRITE else '--set'} {key}={value}"


def cli_hints(text: str) -> str:
    """Turn the library's keyword hints into command-line flags."""
    return _HINT.sub(_flag, text)


def describe(exc: BaseException, path: str | Path | None = None) -> str:
    """``<file>: <message>`` for any error, the file named once, with the CLI's flags."""
    from ..batch import describe as plain
    return cli_hints(plain(exc, path))


@functools.lru_cache(maxsize=64)
def _roots(base: str | None, cwd: str | None) -> tuple[Path, ...]:
    """The folders :func:`short_paths` strips, resolved once (a batch says many messages)."""
    return tuple(Path(p).resolve() for p in (base, cwd) if p is not None)


def short_paths(text: str, base: Path | None = None) -> str:
    """Absolute paths in a message made relative: to the input folder ``base`` (as the batch
    summary names files) or to the current folder."""
    import os
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    for root in _roots(None if base is None else str(base), cwd):
        prefix = str(root).rstrip(os.sep) + os.sep
        if len(prefix) > 1:
            text = text.replace(prefix, "")
            text = text.replace(str(root) + ";", ".;").replace(str(root) + ")", ".)")
    return text
