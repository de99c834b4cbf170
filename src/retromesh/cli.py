"""The ``retromesh`` command: convert, info, dump, build, check, formats."""
from __future__ import annotations

import json
import sys
import traceback
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import retromesh
from . import jsoncodec, registry
from .errors import LossWarning, RetromeshError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Read, inspect and convert the 3D formats of classic games (glTF 2.0 first).")
console = Console(stderr=True)
out = Console()


def main() -> None:
    app()


# -- helpers -------------------------------------------------------------------------------

def _parse_pairs(pairs: list[str] | None, what: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise typer.BadParameter(f"{what} takes key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            options[key.strip().replace("-", "_")] = json.loads(value)
        except ValueError:
            options[key.strip().replace("-", "_")] = value
    return options


def _scannable(path: Path) -> bool:
    """A file a folder conversion picks up: a known extension whose format converts to a scene."""
    ext = path.suffix.lower().lstrip(".")
    return any(ext in f.extensions and f.to_scene is not None and f.family != "glTF 2.0"
               for f in registry.formats())


@dataclass
class Job:
    source: Path
    target: Path
    load_options: dict[str, Any] = field(default_factory=dict)
    save_options: dict[str, Any] = field(default_factory=dict)
    format: str | None = None


@dataclass
class Result:
    job: Job
    ok: bool
    written: list[str] = field(default_factory=list)
    message: str = ""
    notes: list[str] = field(default_factory=list)


def _run(job: Job) -> Result:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LossWarning)
        try:
            written = retromesh.convert(job.source, job.target, format=job.format,
                                        save_options=job.save_options, **job.load_options)
            res = Result(job, True, [str(p) for p in written])
        except RetromeshError as exc:
            res = Result(job, False, message=str(exc))
        except OSError as exc:
            res = Result(job, False, message=f"{exc.filename or job.source}: {exc.strerror or exc}")
        except Exception as exc:  # a bug: report it, keep the batch going
            res = Result(job, False, message=f"internal error {type(exc).__name__}: {exc}\n"
                                             + traceback.format_exc(limit=4))
    res.notes = sorted({str(w.message) for w in caught if issubclass(w.category, LossWarning)})
    return res


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# -- commands ------------------------------------------------------------------------------

@app.command()
def convert(
    inputs: list[Path] = typer.Argument(..., help="Files or folders to convert."),
    output: Path = typer.Option(..., "-o", "--output",
                                help="Output file (one input) or folder (several inputs or a folder)."),
    to: str = typer.Option("glb", "--to", help="Output format for folder conversions (extension)."),
    jobs: int = typer.Option(1, "-j", "--jobs", min=1, help="Files converted in parallel."),
    format: Optional[str] = typer.Option(None, "--format", "-f", help="Force the input format."),
    skeleton: Optional[Path] = typer.Option(None, help="Skeleton file (.phxbn, .skl, ...)."),
    mesh: Optional[Path] = typer.Option(None, help="Mesh file to skin (e.g. an OBJ for .phxbn)."),
    animation: Optional[list[Path]] = typer.Option(None, "--animation", "-a",
                                                   help="Animation file(s); repeat for several."),
    hva: Optional[Path] = typer.Option(None, help="HVA animation for a .vxl (default: found beside it)."),
    fps: Optional[float] = typer.Option(None, help="Frame rate for animation conversion."),
    embed_images: bool = typer.Option(False, help="Put textures found beside the source into the GLB."),
    set_: Optional[list[str]] = typer.Option(None, "--set", help="Reading option key=value."),
    write_option: Optional[list[str]] = typer.Option(None, "-O", "--write-option",
                                                     help="Writing option key=value."),
    overwrite: bool = typer.Option(False, help="Allow an output to replace an input file."),
) -> None:
    """Convert models to glTF (or any format that can be written), one file or whole folders."""
    load_opts = _parse_pairs(set_, "--set")
    for key, value in (("skeleton", skeleton), ("mesh", mesh), ("hva", hva), ("fps", fps)):
        if value is not None:
            load_opts[key] = value
    if animation:
        load_opts["animations"] = list(animation)
    save_opts = _parse_pairs(write_option, "-O")
    if embed_images:
        save_opts["embed_images"] = True

    single = len(inputs) == 1 and inputs[0].is_file() and output.suffix and not output.is_dir()
    jobs_list: list[Job] = []
    if single:
        jobs_list.append(Job(inputs[0], output, load_opts, save_opts, format))
    else:
        ext = to.lower().lstrip(".")
        for item in inputs:
            if item.is_dir():
                files = sorted(p for p in item.rglob("*") if p.is_file() and _scannable(p))
                for f in files:
                    rel = f.relative_to(item)
                    jobs_list.append(Job(f, output / rel.with_suffix("." + ext), dict(load_opts),
                                         save_opts, format))
            elif item.is_file():
                jobs_list.append(Job(item, output / (item.stem + "." + ext), dict(load_opts),
                                     save_opts, format))
            else:
                console.print(f"[red]error[/]: {item}: no such file or folder")
                raise typer.Exit(2)
        if not jobs_list:
            console.print("[yellow]nothing to convert[/] (no files of a known format found)")
            raise typer.Exit(1)
        # body.msh and body.skl would both become body.glb: keep the source extension then
        seen: dict[Path, int] = {}
        for j in jobs_list:
            seen[j.target] = seen.get(j.target, 0) + 1
        for j in jobs_list:
            if seen[j.target] > 1:
                j.target = j.target.with_name(f"{j.source.name}.{ext}")
    sources = {j.source.resolve() for j in jobs_list}
    for j in jobs_list:
        if not overwrite and j.target.resolve() in sources:
            console.print(f"[red]error[/]: {j.target} would overwrite an input (use --overwrite)")
            raise typer.Exit(2)

    results: list[Result] = []
    if len(jobs_list) == 1:
        results.append(_run(jobs_list[0]))
    else:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=False) as progress:
            task = progress.add_task("converting", total=len(jobs_list))
            if jobs > 1:
                with ProcessPoolExecutor(max_workers=jobs) as pool:
                    futures = [pool.submit(_run, j) for j in jobs_list]
                    for fut in as_completed(futures):
                        results.append(fut.result())
                        progress.advance(task)
            else:
                for j in jobs_list:
                    results.append(_run(j))
                    progress.advance(task)
        results.sort(key=lambda r: str(r.job.source))

    failed = [r for r in results if not r.ok]
    if len(results) == 1:
        r = results[0]
        for note in r.notes:
            console.print(f"[yellow]note[/]: {note}")
        if r.ok:
            console.print(f"[green]wrote[/] {', '.join(r.written)}")
        else:
            console.print(f"[red]failed[/]: {r.message}")
    else:
        table = Table(title="conversion summary")
        table.add_column("file")
        table.add_column("result")
        table.add_column("details", overflow="fold")
        for r in results:
            if r.ok:
                table.add_row(str(r.job.source), "[green]ok[/]",
                              "; ".join(r.notes)[:300] if r.notes else r.written[-1])
            else:
                table.add_row(str(r.job.source), "[red]failed[/]", r.message)
        console.print(table)
        console.print(f"{len(results) - len(failed)} converted, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)


@app.command()
def info(files: list[Path] = typer.Argument(..., help="Files to describe."),
         format: Optional[str] = typer.Option(None, "--format", "-f"),
         as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """Counts of what a file holds: nodes, meshes, vertices, triangles, bones, keys, animations..."""
    report: dict[str, Any] = {}
    failed = False
    for f in files:
        try:
            data, name, path = f.read_bytes(), str(f), f
            fmt = registry.detect(data[:registry.SNIFF_BYTES], name, format)
            doc = registry.parse(fmt, data, name, path)
            entry: dict[str, Any] = {"format": fmt.name}
            if fmt.info:
                entry.update(fmt.info(doc))
            if fmt.to_scene is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", LossWarning)
                    try:
                        scene = registry.convert_to_scene(fmt, doc, name, source=path) \
                            if "source" in fmt.scene_options else registry.convert_to_scene(fmt, doc, name)
                        counts = scene.counts()
                        counts["keys"] = sum(len(c.times) for a in scene.animations for c in a.channels)
                        entry["scene"] = counts
                    except RetromeshError as exc:
                        entry["scene"] = f"not convertible: {exc}"
            report[str(f)] = entry
        except (RetromeshError, OSError) as exc:
            report[str(f)] = {"error": str(exc)}
            failed = True
    if as_json:
        out.print_json(json.dumps(report, default=str))
    else:
        for f, entry in report.items():
            table = Table(title=f"{f}")
            table.add_column("what")
            table.add_column("native", justify="right")
            table.add_column("scene (glTF)", justify="right")
            if "error" in entry:
                console.print(f"[red]{f}[/]: {entry['error']}")
                continue
            scene = entry.get("scene") if isinstance(entry.get("scene"), dict) else {}
            keys = [k for k in entry if k != "scene"] + [k for k in scene if k not in entry]
            for k in keys:
                table.add_row(k, str(entry.get(k, "")), str(scene.get(k, "")))
            out.print(table)
            if isinstance(entry.get("scene"), str):
                console.print(f"[yellow]{entry['scene']}[/]")
    if failed:
        raise typer.Exit(1)


@app.command()
def dump(file: Path = typer.Argument(...),
         as_json: bool = typer.Option(True, "--json/--no-json", help="Lossless JSON (default)."),
         output: Optional[Path] = typer.Option(None, "-o", "--output"),
         format: Optional[str] = typer.Option(None, "--format", "-f")) -> None:
    """Lossless JSON of the native document (edit it, then `retromesh build`)."""
    try:
        doc = retromesh.read(file, format=format)
    except (RetromeshError, OSError) as exc:
        console.print(f"[red]error[/]: {exc}")
        raise typer.Exit(1)
    text = jsoncodec.dumps(doc)
    if output:
        from .fileio import atomic_write
        atomic_write(output, text.encode("utf-8"))
    else:
        sys.stdout.write(text + "\n")


@app.command()
def build(source: Path = typer.Argument(..., help="JSON written by `retromesh dump --json`."),
          output: Path = typer.Option(..., "-o", "--output"),
          overwrite: bool = typer.Option(False, help="Allow replacing the JSON file itself.")) -> None:
    """Build a native file from the JSON of `retromesh dump` (byte-identical when unedited)."""
    if _same_file(source, output) and not overwrite:
        console.print("[red]error[/]: the output is the input")
        raise typer.Exit(2)
    try:
        doc = jsoncodec.loads(source.read_bytes())
        written = retromesh.write(doc, output)
    except (RetromeshError, OSError, TypeError) as exc:
        console.print(f"[red]error[/]: {source}: {exc}")
        raise typer.Exit(1)
    console.print(f"[green]wrote[/] {', '.join(map(str, written))}")


@app.command()
def check(files: list[Path] = typer.Argument(...),
          format: Optional[str] = typer.Option(None, "--format", "-f"),
          scene: bool = typer.Option(True, help="Also convert to a scene and check it.")) -> None:
    """Parse, byte round trip and structural checks; exit 1 on any failure."""
    table = Table(title="check")
    table.add_column("file")
    table.add_column("format")
    table.add_column("result")
    table.add_column("details", overflow="fold")
    failures = 0
    for f in files:
        try:
            data = f.read_bytes()
            fmt = registry.detect(data[:registry.SNIFF_BYTES], str(f), format)
            doc = registry.parse(fmt, data, str(f), f)
            problems: list[str] = []
            if fmt.write is not None and fmt.write(doc) != data:
                problems.append("byte round trip differs")
            if fmt.check is not None:
                problems += fmt.check(doc)
            if scene and fmt.to_scene is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", LossWarning)
                    try:
                        kwargs = {"source": f} if "source" in fmt.scene_options else {}
                        registry.convert_to_scene(fmt, doc, str(f), **kwargs)
                    except RetromeshError as exc:
                        problems.append(f"scene: {exc}")
            errors = [p for p in problems if not p.startswith("warning:")]
            if errors:
                failures += 1
                table.add_row(str(f), fmt.name, "[red]problems[/]", "; ".join(problems))
            elif problems:
                table.add_row(str(f), fmt.name, "[yellow]ok[/]", "; ".join(problems))
            else:
                table.add_row(str(f), fmt.name, "[green]ok[/]", "round trip identical")
        except (RetromeshError, OSError) as exc:
            failures += 1
            table.add_row(str(f), "?", "[red]failed[/]", str(exc))
    out.print(table)
    if failures:
        raise typer.Exit(1)


@app.command()
def formats() -> None:
    """The registered formats and what each supports."""
    table = Table(title="retromesh formats")
    for col in ("name", "family", "extensions", "read", "write", "to glTF", "from glTF",
                "options", "description"):
        table.add_column(col)
    yes = "[green]yes[/]"
    for f in registry.formats():
        s = f.supports()
        table.add_row(f.name, f.family, " ".join("." + e for e in f.extensions),
                      yes if s["read"] else "-", yes if s["write"] else "-",
                      yes if s["to_scene"] else "-", yes if s["from_scene"] else "-",
                      ", ".join(o for o in f.scene_options if o != "source"), f.description)
    out.print(table)


if __name__ == "__main__":  # pragma: no cover
    main()

from .blender.cli import app as _blender_app  # noqa: E402  (retromesh blender build)
app.add_typer(_blender_app, name="blender")
