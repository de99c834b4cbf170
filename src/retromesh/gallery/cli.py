"""``retromesh gallery`` and ``retromesh view``."""

import tempfile
from pathlib import Path

import typer

from ..clitools.messages import EXIT_FAILED
from ..clitools.output import error as _error

gallery_app = typer.Typer(add_completion=False)


def gallery(
    folders: list[Path] = typer.Argument(..., help="Folders (or files) of models."),
    output: Path = typer.Option(..., "-o", "--output", help="Folder the site is written into."),
    jobs: int = typer.Option(1, "-j", "--jobs", min=1, help="Models converted in parallel."),
    thumbnails: bool = typer.Option(True, help="Render a thumbnail per model (needs Chromium)."),
    title: str = typer.Option("retromesh gallery", help="Title of the index page."),
    no_lua: bool = typer.Option(False, "--no-lua",
                                help="Don't run the Lua of the Luanti mod a model lies in. By "
                                     "default it is RUN (fenced: a child process with time and "
                                     "memory limits, no io/os) for the mod's textures and clips."),
) -> None:
    """Write a static site (works offline, from file://) with a card and a 3D page per model."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ..errors import RetromeshError
    from .build import build_gallery, find_models

    console = Console(stderr=True)
    for f in folders:
        if not f.exists():
            console.print(f"error: {f}: no such file or folder")
            raise typer.Exit(2)
    total = len(find_models(folders))
    if not total:
        console.print("nothing to show (no files of a known format found)")
        raise typer.Exit(1)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console, transient=True) as bar:
        task = bar.add_task("gallery", total=total)

        def step(card: dict) -> None:
            bar.update(task, advance=1, description=card["name"][:30])
        try:
            cards = build_gallery(folders, output, jobs=jobs, thumbnails=thumbnails, title=title,
                                  progress=step, lua=not no_lua)
        except RetromeshError as exc:       # e.g. npm missing: what to install, exit 1
            _error(str(exc))
            raise typer.Exit(EXIT_FAILED) from None
    failed = [c for c in cards if not c["ok"]]
    for c in failed:
        console.print(f"failed: {c['folder']}/{c['name']}: {c['error']}")
    console.print(f"{len(cards)} models, {len(failed)} failed: {output / 'index.html'}")
    raise typer.Exit(1 if failed else 0)


def view(
    model: Path = typer.Argument(..., help="A model file (companions beside it are found)."),
    open_browser: bool = typer.Option(True, "--open/--no-open", help="Open the page in a browser."),
) -> None:
    """Show one model in the browser (writes its page to a temporary folder)."""
    from ..errors import RetromeshError
    from .build import build_gallery

    if not model.is_file():
        typer.echo(f"error: {model}: no such file", err=True)
        raise typer.Exit(2)
    site = Path(tempfile.mkdtemp(prefix="retromesh-view-"))
    try:
        cards = build_gallery([model], site, thumbnails=False, title=model.name)
    except RetromeshError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_FAILED) from None
    card = cards[0] if cards else {"ok": False, "error": "not a model retromesh reads"}
    if not card["ok"]:
        typer.echo(f"error: {model}: {card['error']}", err=True)
        raise typer.Exit(1)
    page = site / str(card["page"])
    typer.echo(str(page))
    import webbrowser
    if open_browser and not webbrowser.open(page.as_uri()):
        typer.echo("no browser found: open the page above in one", err=True)


gallery_app.command("gallery")(gallery)
gallery_app.command("view")(view)
