"""``retromesh blender ...``: the Blender extension's commands (hooked into the main CLI)."""

from pathlib import Path

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="The Blender extension (File > Import/Export > Classic game model).")


@app.command()
def build(output: Path = typer.Option(Path("dist"), "-o", "--output",
                                      help="Folder the extension zips are written to."),
          platform: list[str] = typer.Option(
              None, "--platform", metavar="PLATFORM",
              help="One zip for this Blender platform only (repeatable; 'all' for one zip per "
                   "platform): linux-x64, macos-arm64, macos-x64, windows-arm64, windows-x64. "
                   "Default: one zip for every platform."),
          python: list[str] = typer.Option(
              None, "--python", metavar="X.Y",
              help="Carry wheels for this Blender Python only (repeatable): 3.11 is Blender "
                   "4.2-5.0, 3.13 is Blender 5.1 on. Default: both."),
          wheel_cache: Path = typer.Option(None, help="Folder of dependency wheels to reuse (and fill)."),
          wheel: Path = typer.Option(None, help="retromesh wheel to pack (default: the running "
                                                "installation, or the checkout it runs from).")) -> None:
    """Write retromesh-<version>.zip (or one zip per --platform), a Blender 4.2+ extension (Install
    from Disk); see docs/blender.md."""
    import warnings

    from .build import BLENDER_PYTHONS, PLATFORMS, build_extensions
    platforms = list(PLATFORMS) if platform and "all" in platform else platform or None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            paths = build_extensions(output, platforms=platforms,
                                     pythons=python or tuple(BLENDER_PYTHONS),
                                     wheel_cache=wheel_cache, wheel=wheel)
    except (RuntimeError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for w in caught:        # (an optional wheel PyPI lacks: lupa)
        typer.echo(f"warning: {w.message}", err=True)
    for path in paths:
        typer.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
