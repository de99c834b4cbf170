"""``retromesh blender ...``: the Blender extension's commands (hooked into the main CLI)."""

from pathlib import Path

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="The Blender extension (File > Import/Export > Classic game model).")


@app.command()
def build(output: Path = typer.Option(Path("dist"), "-o", "--output",
                                      help="Folder the extension zip is written to."),
          wheel_cache: Path = typer.Option(None, help="Folder of dependency wheels to reuse.")) -> None:
    """Write retromesh-<version>.zip, a Blender 4.2+ extension (Install from Disk)."""
    from .build import build_extension
    try:
        path = build_extension(output, wheel_cache=wheel_cache)
    except (RuntimeError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {path}")
