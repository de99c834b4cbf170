"""``retromesh ksy``: print or write the shipped Kaitai Struct descriptions."""

from pathlib import Path

import typer

from . import descriptions, find, text


def ksy(
    format: str | None = typer.Argument(None, help="Extension or id (b3d, vxl, lithtech_abc); "
                                        "all when omitted."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Folder to write the .ksy files into."),
) -> None:
    """Print or write the Kaitai Struct (.ksy) descriptions of the formats."""
    try:
        names = [find(format)] if format else list(descriptions().values())
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(2) from None
    if output is None:
        if format:
            typer.echo(text(names[0]), nl=False)
        else:
            for name in names:
                typer.echo(name)
        return
    output.mkdir(parents=True, exist_ok=True)
    for name in names:
        (output / name).write_text(text(name), encoding="utf-8")
        typer.echo(str(output / name))
