"""``-`` on the command line: standard input as a file argument, standard output as ``-o``.

Standard input has no file name, so its format is told by its first bytes; a format without a
signature (``.solid``, ``.obj``, ``.hva``, ...) needs ``-f NAME``. Standard input is read once,
to at most :data:`retromesh.fileio.MAX_INPUT_BYTES`, into a private temporary folder (readers and
scene builders take a path), and messages name it ``<stdin>`` instead of that folder.

Standard output takes one file: a conversion is written into a temporary folder first and its
single file copied out; one that writes companions (``.gltf`` + ``.bin``, ``.msh`` + ``.skl``)
is refused, as is binary data for a terminal.
"""
from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = ["DASH", "STDIN_NAME", "is_dash", "read_stdin", "stdin_file", "shown", "temp_target",
           "copy_to_stdout", "binary_to_terminal"]

DASH = "-"
#: how messages name standard input
STDIN_NAME = "<stdin>"

#: temporary paths standing for standard input or output -> the name messages use
_ALIASES: dict[str, str] = {}


def is_dash(path: Path | str | None) -> bool:
    return path is not None and str(path) == DASH


def shown(text: str) -> str:
    """``text`` with the temporary stand-ins for standard input/output named as the user did."""
    for tmp, name in _ALIASES.items():
        text = text.replace(tmp, name)
    return text


def _private_folder(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def read_stdin(stream: BinaryIO | None = None) -> bytes:
    """All of standard input, refused past :data:`retromesh.fileio.MAX_INPUT_BYTES`."""
    from ..errors import LimitError
    from ..fileio import MAX_INPUT_BYTES
    stream = stream if stream is not None else sys.stdin.buffer
    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise LimitError(f"an input of at most {MAX_INPUT_BYTES} bytes "
                         "(retromesh.fileio.MAX_INPUT_BYTES)", file=STDIN_NAME, offset=0,
                         got="more")
    return data


def _unsigned_formats() -> list[str]:
    from .. import registry
    return sorted(f.name for f in registry.formats() if f.read is not None and not f.magic_certain)


def stdin_file(format: str | None) -> Path:
    """Standard input as a file named ``stdin.<ext>`` for its format (by ``format`` or magic)."""
    from .. import registry
    from ..errors import UnknownFormatError
    data = read_stdin()
    try:
        fmt = registry.detect(data[:registry.SNIFF_BYTES], None, format)
    except UnknownFormatError:
        if format:
            raise
        raise UnknownFormatError(
            "a format told by its first bytes (standard input has no file name); formats "
            f"without a signature need -f NAME ({', '.join(_unsigned_formats())})",
            file=STDIN_NAME, offset=0, got=repr(data[:16])) from None
    ext = fmt.extensions[0] if fmt.extensions else fmt.name
    path = _private_folder("retromesh-stdin-") / f"stdin.{ext}"
    path.write_bytes(data)
    _ALIASES[str(path)] = STDIN_NAME
    _ALIASES[str(path.parent)] = STDIN_NAME      # "texture not found in <stdin>"
    return path


def temp_target(stem: str, ext: str) -> Path:
    """Where a conversion bound for standard output is written first."""
    path = _private_folder("retromesh-stdout-") / f"{stem}.{ext.lstrip('.')}"
    _ALIASES[str(path)] = "<stdout>"
    return path


def copy_to_stdout(written: list[str] | list[Path]) -> str | None:
    """Copy the one file a conversion wrote to standard output; the reason when it cannot."""
    if len(written) != 1:
        names = ", ".join(Path(p).name for p in written)
        return (f"the conversion writes {len(written)} files ({names}), standard output takes "
                "one: give -o FILE, or a --to format that is one file (glb)")
    out = sys.stdout.buffer
    with open(written[0], "rb") as fh:
        shutil.copyfileobj(fh, out)
    out.flush()
    return None


def binary_to_terminal(ext: str) -> bool:
    """Binary output bound for a terminal (refused, as ``gzip`` does)."""
    return ext.lower().lstrip(".") not in ("gltf", "json") and sys.stdout.isatty()
