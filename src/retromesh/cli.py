"""The ``retromesh`` command: convert, info, dump, build, check, formats.

Every subcommand reports problems the same way — ``error: <file>: <message>`` on stderr —
and exits 0 when all went well, 1 when a file could not be read, converted or written (a batch
goes on past it), 2 when the command line itself is wrong (missing input, unknown option,
bad value). Output fits an 80-column terminal. ``-`` is standard input for a file argument and
standard output for ``-o`` (:mod:`retromesh.clitools.stdio`); ``-h`` is ``--help``; ``NO_COLOR``
turns colour off. The helpers live in :mod:`retromesh.clitools`.
"""

import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import typer

import retromesh

from . import batch as plan, registry
from .clitools.batch import Job, run as _run, run_all as _run_all, summary as _summary
from .clitools.messages import EXIT_FAILED, EXIT_USAGE, describe
from .clitools.options import (
    OptionError,
    check_options,
    companion_help,
    mods_option,
    parse_pairs,
    positive,
    read_options,
    write_options,
)
from .clitools.output import echo as _echo, error as _error, warn as _warn, width as _width
from .clitools.stdio import binary_to_terminal, copy_to_stdout, is_dash, stdin_file, temp_target
from .errors import RetromeshError, UnknownFormatError

app = typer.Typer(add_completion=False, no_args_is_help=False, rich_markup_mode="rich",
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Read, inspect and convert the 3D formats of classic games "
                       "(glTF 2.0 first).")

COMPANIONS = "Companion files"
OUTPUT = "Output"
ADVANCED = "Advanced"

# the companion options info and check take as convert does (typer reads these, never changes them)
_SKELETON = typer.Option(None, metavar="FILE", rich_help_panel=COMPANIONS, help="As for convert.",
                         show_default=False)
_MESH = typer.Option(None, metavar="FILE", rich_help_panel=COMPANIONS, help="As for convert.",
                     show_default=False)
_ANIMATION = typer.Option(None, "--animation", "-a", metavar="FILE", rich_help_panel=COMPANIONS,
                          help="As for convert.", show_default=False)
_HVA = typer.Option(None, metavar="FILE", rich_help_panel=COMPANIONS, help="As for convert.",
                    show_default=False)
_NO_COMPANIONS = typer.Option(False, "--no-companions", rich_help_panel=COMPANIONS,
                              help="As for convert.")
LUANTI = "Luanti mods"
# a model in a Luanti mod: the mod's Lua is run to find its textures and clips (info, check,
# convert alike)
_NO_LUA = typer.Option(False, "--no-lua", rich_help_panel=LUANTI,
                       help="Don't run the Lua of the mod a model lies in. By default it is "
                            "RUN (fenced: a child process with time and memory limits, no "
                            "io/os/require, files only inside the mod) to find the textures "
                            "and named clips the mod registers.")
_MOD_TEXTURES = typer.Option(None, "--texture-path", metavar="DIR", rich_help_panel=LUANTI,
                             show_default=False,
                             help="More texture folders (repeatable), after the mods' media.")


def _found_beside() -> str:
    """The extensions of the companions ``convert`` finds beside a file by name."""
    exts = [f".{e}" for f in registry.known() for c in f.companions
            if c.beside and not c.by_reader and not c.picked_only
            for e in registry.companion_extensions(c)[:1]]
    return "/".join(dict.fromkeys(exts))


# convert's companion options: the extensions come from the formats' declarations
_HELP = {
    "skeleton": f"{companion_help('skeleton')} skeleton.",
    "mesh": f"{companion_help('mesh')} mesh to skin.",
    "animations": f"{companion_help('animations')} animation (repeatable).",
    "hva": f"{companion_help('hva')} of a {companion_help('hva', owners=True)} "
           "(default: beside it).",
    "no_companions": f"Don't read same-name {_found_beside()}.",
}


def main() -> None:
    # what is loaded so far lives as long as the process: the collector need not walk it
    # (numpy's import makes young collections that free nothing), nor walk it again on every
    # full collection of a long batch; a file's objects die with it by reference count, so
    # young collections can be rare
    gc.disable()
    try:
        _load_numpy()
        gc.freeze()
        gc.set_threshold(_GC_YOUNG, 20, 20)
    finally:
        gc.enable()
    app()


#: objects allocated between two young collections in the command (Python's default: 700)
_GC_YOUNG = 50_000


def _load_numpy() -> None:
    """numpy with one BLAS thread, unless the user chose a number: the command's arrays go to
    BLAS as 4x4 matrices at most, and OpenBLAS's idle threads spin between calls, costing CPU
    time for nothing. Processes the command starts (Blender) get the environment as it was."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


# -- output ----------------------------------------------------------------------------------

def _usage(message: str) -> NoReturn:
    _error(message)
    raise typer.Exit(EXIT_USAGE)


def _version(value: bool) -> None:
    if value:
        _echo(f"retromesh {retromesh.__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    _STDIN.clear()
    if ctx.invoked_subcommand is None:
        _echo(ctx.get_help())
        raise typer.Exit()


# -- inputs ----------------------------------------------------------------------------------

def _readable(path: Path) -> bool:
    ext = path.suffix.lower().lstrip(".")
    if not ext:
        return any(f.read is not None for f in registry.keeping(path))
    return any(f.read is not None for f in registry.claiming(ext)) and plan.recognised(path)


#: standard input once read in this command (``-``); emptied as each command starts
_STDIN: list[Path] = []


def _stdin(format: str | None) -> Path:
    """Standard input as a temporary file (``-``), read once per command; unreadable or of an
    unknown format is exit 1."""
    if _STDIN:
        _usage("- (standard input) can be read once")
    try:
        _STDIN.append(stdin_file(format))
    except RetromeshError as exc:
        _error(describe(exc))
        raise typer.Exit(EXIT_FAILED) from None
    return _STDIN[-1]


def _expand(items: list[Path], keep=_readable, format: str | None = None
            ) -> list[tuple[Path, Path | None]]:
    """(file, the folder it was found in) for files, folders and ``-``; a missing one is exit 2."""
    out: list[tuple[Path, Path | None]] = []
    for item in items:
        if is_dash(item):
            out.append((_stdin(format), None))
        elif item.is_dir():
            out += [(p, item) for p in sorted(item.rglob("*")) if p.is_file() and keep(p)]
        elif item.is_file():
            out.append((item, None))
        else:
            _usage(f"{item}: no such file or folder")
    return out


def _companion_options(skeleton: Path | None, mesh: Path | None,
                       animation: list[Path] | None, hva: Path | None,
                       fps: float | None, scale: float | None,
                       set_: list[str] | None) -> dict[str, Any]:
    try:
        opts = parse_pairs(set_, "--set")
        for key, value in (("skeleton", skeleton), ("mesh", mesh), ("hva", hva)):
            if value is not None:
                if not value.is_file():
                    raise OptionError(f"{value}: no such file (--{key})")
                opts[key] = value
        for a in animation or []:
            if not a.is_file():
                raise OptionError(f"{a}: no such file (--animation)")
        if animation:
            opts["animations"] = list(animation)
        if fps is not None:
            opts["fps"] = positive("--fps", fps)
        if scale is not None:
            opts["scale"] = positive("--scale", scale)
    except OptionError as exc:
        _usage(str(exc))
    return opts


def _formats_for(path: Path, format: str | None) -> list[registry.Format]:
    """The formats that may read ``path`` and convert it (by --format or its extension)."""
    if format:
        return [registry.get(format)]
    claim = registry.claiming(path.suffix) if path.suffix else registry.keeping(path)
    return [f for f in claim if f.to_scene is not None]


def _load_options_for(fmts: list[registry.Format], opts: dict[str, Any]) -> dict[str, Any]:
    valid: dict[str, Any] = {}
    for f in fmts:
        for k, v in read_options(f).items():
            valid.setdefault(k, v)
    names = "/".join(f.name for f in fmts) or "this file"
    return check_options(opts, valid, "reading", names, "--set")


def _detect(path: Path, format: str | None) -> registry.Format:
    with path.open("rb") as fh:
        head = fh.read(registry.SNIFF_BYTES)
    return registry.detect(head, str(path), format)


# -- convert ---------------------------------------------------------------------------------

def _names_a_file(output: Path) -> bool:
    """An output with an extension, or in a folder where a format keeps extensionless files."""
    if output.suffix:
        return True
    try:
        registry.target_format(output)
    except UnknownFormatError:
        return False
    return True


def _plan_jobs(inputs: list[Path], output: Path | None, to: str, format: str | None,
               load_opts: dict[str, Any], save_opts: dict[str, Any], explicit: bool,
               companions: bool, preset: str | None) -> list[Job]:
    single = len(inputs) == 1 and inputs[0].is_file() and (
        output is None or (_names_a_file(output) and not output.is_dir()))
    if single:
        src = inputs[0]
        target = output if output is not None else Path.cwd() / f"{src.stem}.{to.lstrip('.')}"
        fmts = _formats_for(src, format)
        if not fmts:
            try:
                fmts = [_detect(src, format)]
            except RetromeshError as exc:
                _error(describe(exc, src))
                raise typer.Exit(EXIT_FAILED) from None
        opts = dict(load_opts)
        if companions and not explicit:
            found = {k: v for k, v in plan.companions(src).items()
                     if any(k in read_options(f) for f in fmts)}
            if found:
                names = [p.name for p in plan.members(found)]
                _echo(f"reading with it: {', '.join(names)} (--no-companions to leave them)",
                      err=True)
            opts.update(found)
        try:
            opts = _load_options_for(fmts, opts)
        except OptionError as exc:
            _usage(str(exc))
        return [Job(src, target, opts, dict(save_opts), format, preset)]
    if output is None:
        _usage("a folder or several files convert into a folder: give -o FOLDER")
    if output.is_file() or (output.suffix and not output.is_dir() and
                            any(output.suffix.lower().lstrip(".") in f.extensions
                                for f in registry.formats())):
        _usage(f"{output}: a folder or several files convert into a folder, not into one "
               f"file; give -o FOLDER (and --to {output.suffix.lstrip('.') or 'glb'})")
    ext = to.lower().lstrip(".")
    items = _expand(inputs, plan.scannable)
    groups: list[tuple[plan.Group, Path | None]] = []
    by_base: dict[Path | None, list[Path]] = {}
    for f, base in items:
        by_base.setdefault(base, []).append(f)
    for base, files in by_base.items():
        if base is None or not companions or explicit:
            groups += [(plan.Group(f), base) for f in files]
        else:
            groups += [(g, base) for g in plan.group_folder(files)]
    if not groups:
        _error("nothing to convert (no files of a known format found)")
        raise typer.Exit(EXIT_FAILED)
    jobs: list[Job] = []
    used: set[str] = set()
    for g, base in groups:
        fmts = _formats_for(g.source, format)
        accepted = {k: v for k, v in load_opts.items() if any(k in read_options(f) for f in fmts)}
        used.update(accepted)
        try:
            opts = _load_options_for(fmts, {**accepted, **g.options})
        except OptionError as exc:
            _usage(str(exc))
        if "mods" in opts and base is not None:     # (a mod's media and APIs: the whole tree)
            opts["mods"] = {**opts["mods"], "within": str(base)}
        rel = g.source.relative_to(base) if base is not None else Path(g.source.name)
        jobs.append(Job(g.source, output / rel.with_suffix("." + ext), opts, dict(save_opts),
                        format, preset, base, g.members))
    unused = sorted(set(load_opts) - used)
    if unused:
        _usage(f"--set {unused[0]}: no file of this conversion takes it")
    plan.name_outputs(jobs, ext)
    return jobs


@app.command()
def convert(
    inputs: list[Path] = typer.Argument(..., help="Files, folders or - (stdin).", show_default=False,
                                        metavar="INPUT"),
    output: Path | None = typer.Option(
        None, "-o", "--output", rich_help_panel=OUTPUT, show_default=False, metavar="PATH",
        help="File, folder or - (stdout); default ./NAME.glb"),
    to: str = typer.Option("glb", "--to", rich_help_panel=OUTPUT, metavar="EXT",
                           show_default=False, help="Output extension for folders (glb)."),
    no_embed: bool = typer.Option(False, "--no-embed-images", rich_help_panel=OUTPUT,
                                  help="Reference textures, don't embed them."),
    embed: bool = typer.Option(False, "--embed-images", hidden=True,
                               help="Put the textures in the GLB (the default)."),
    texture_path: list[Path] | None = typer.Option(
        None, "--texture-path", metavar="DIR", rich_help_panel=OUTPUT, show_default=False,
        help="More texture folders (repeatable)."),
    overwrite: bool = typer.Option(False, "--overwrite", rich_help_panel=OUTPUT,
                                   help="Allow an output to replace an input."),
    force: bool = typer.Option(False, "--force", rich_help_panel=OUTPUT,
                               help="Write a file the game would refuse (see check)."),
    preset: str | None = typer.Option(None, "--preset", rich_help_panel=OUTPUT,
                                         metavar="luanti", show_default=False,
                                         help="A GLB within Luanti's rules."),
    skeleton: Path | None = typer.Option(None, metavar="FILE", rich_help_panel=COMPANIONS,
                                            help=_HELP["skeleton"],
                                            show_default=False),
    mesh: Path | None = typer.Option(None, metavar="FILE", rich_help_panel=COMPANIONS,
                                        help=_HELP["mesh"],
                                        show_default=False),
    animation: list[Path] | None = typer.Option(
        None, "--animation", "-a", metavar="FILE", rich_help_panel=COMPANIONS,
        help=_HELP["animations"], show_default=False),
    hva: Path | None = typer.Option(None, metavar="FILE", rich_help_panel=COMPANIONS,
                                       help=_HELP["hva"],
                                       show_default=False),
    no_companions: bool = typer.Option(False, "--no-companions", rich_help_panel=COMPANIONS,
                                       help=_HELP["no_companions"]),
    fps: float | None = typer.Option(None, metavar="N", rich_help_panel=ADVANCED,
                                        help="Animation frame rate (> 0).", show_default=False),
    scale: float | None = typer.Option(None, metavar="N", rich_help_panel=ADVANCED,
                                          help="Uniform scale (> 0).", show_default=False),
    set_: list[str] | None = typer.Option(
        None, "--set", metavar="KEY=VALUE", rich_help_panel=ADVANCED, show_default=False,
        help="Reading option (retromesh formats)."),
    write_option: list[str] | None = typer.Option(
        None, "-O", "--write-option", metavar="KEY=VALUE", rich_help_panel=ADVANCED,
        show_default=False, help="Writing option: fps, version, game..."),
    format: str | None = typer.Option(None, "--format", "-f", rich_help_panel=ADVANCED,
                                         metavar="NAME", help="Force the input format.",
                                         show_default=False),
    jobs: int = typer.Option(1, "-j", "--jobs", min=1, rich_help_panel=ADVANCED, metavar="N",
                             help="Files converted in parallel.", show_default=False),
    no_lua: bool = typer.Option(False, "--no-lua", rich_help_panel=OUTPUT,
                                help="Don't run the Luanti mod's Lua."),
) -> None:
    """Convert models to glTF (or back): one file, or whole folders.

    `retromesh convert tank.vxl` writes tank.glb in the current folder.

    `retromesh convert mods/ -o out/` converts a whole folder.

    Models in a Luanti mod: its Lua is RUN (fenced) for textures and clips.

    Each format's --set and -O options: `retromesh formats`.
    """
    embed_images = False if no_embed else (True if embed else None)
    to_stdout = _check_convert_inputs(inputs, output, to, preset)
    inputs = [_stdin(format) if is_dash(i) else i for i in inputs]
    if to_stdout:
        output = temp_target(inputs[0].stem, to)
    load_opts = _companion_options(skeleton, mesh, animation, hva, fps, scale, set_)
    load_opts.update(mods_option(no_lua, texture_path))
    save_opts = _save_options(write_option, embed_images, texture_path, preset)
    jobs_list = _plan_jobs(inputs, output, to, format, load_opts, save_opts,
                           bool(skeleton or mesh or animation), not no_companions, preset)
    _check_writing(jobs_list, force, overwrite)
    start = time.monotonic()
    if len(jobs_list) == 1 and jobs_list[0].base is None:
        _convert_one(jobs_list[0], to_stdout)
        return
    results = _run_all(jobs_list, jobs)
    _summary(results, output, time.monotonic() - start)
    if any(not r.ok for r in results):
        raise typer.Exit(EXIT_FAILED)


def _check_convert_inputs(inputs: list[Path], output: Path | None, to: str,
                          preset: str | None) -> bool:
    """Usage errors of the inputs, ``-o`` and ``--preset`` (exit 2); whether the output goes
    to standard output."""
    if preset not in (None, "luanti"):
        _usage(f"--preset {preset}: unknown preset (valid: luanti)")
    for item in inputs:
        if not item.exists() and not is_dash(item):
            _usage(f"{item}: no such file or folder")
    if any(is_dash(i) for i in inputs) and output is None:
        _usage("reading standard input: give -o FILE (or -o - --to EXT for standard output)")
    to_stdout = is_dash(output)
    if to_stdout and (len(inputs) != 1 or inputs[0].is_dir()):
        _usage("-o - (standard output) takes one input file")
    if to_stdout and binary_to_terminal(to):
        _usage(f"-o -: .{to.lstrip('.')} is binary, not for a terminal (redirect: > FILE)")
    return to_stdout


def _save_options(write_option: list[str] | None, embed_images: bool | None,
                  texture_path: list[Path] | None, preset: str | None) -> dict[str, Any]:
    """The writing options of ``-O``, ``--(no-)embed-images``, ``--texture-path`` and
    ``--preset`` (a bad one is exit 2)."""
    try:
        save_opts = parse_pairs(write_option, "-O")
    except OptionError as exc:
        _usage(str(exc))
    if embed_images is not None:
        save_opts["embed_images"] = embed_images
    if texture_path:
        for d in texture_path:
            if not d.is_dir():
                _usage(f"{d}: no such folder (--texture-path)")
        save_opts["texture_path"] = list(texture_path)
    if preset == "luanti":
        save_opts.setdefault("embed_images", False)
    return save_opts


def _check_writing(jobs_list: list[Job], force: bool, overwrite: bool) -> None:
    """The target format can be written with the jobs' options, and no output replaces an
    input unless ``--overwrite`` (exit 2 otherwise); ``--force`` passed on to every job."""
    try:
        tfmt = registry.target_format(jobs_list[0].target)
    except UnknownFormatError:
        exts = sorted({"." + e for f in registry.formats() if f.from_scene is not None
                       for e in f.extensions})
        suffix = jobs_list[0].target.suffix or "(no extension)"
        _usage(f"{jobs_list[0].target}: cannot write {suffix} files (writable: {' '.join(exts)})")
    try:
        valid = write_options(tfmt)
        for j in jobs_list:
            j.save_options = check_options(j.save_options, valid, "writing", tfmt.name, "-O")
    except OptionError as exc:
        _usage(str(exc))
    for j in jobs_list:
        j.force = force
    sources = {s.resolve() for j in jobs_list for s in [j.source, *j.members]}
    for j in jobs_list:
        if not overwrite and j.target.resolve() in sources:
            _usage(f"{j.target}: would overwrite an input (use --overwrite)")


def _convert_one(job: Job, to_stdout: bool) -> None:
    """One file: its warnings, then ``wrote ...`` or the error (exit 1)."""
    r = _run(job)
    for note in r.warnings:
        _warn(note)
    if not r.ok:
        _error(r.message)
        raise typer.Exit(EXIT_FAILED)
    if to_stdout:
        reason = copy_to_stdout(r.written)
        if reason:
            _error(reason)
            raise typer.Exit(EXIT_FAILED)
    _echo(f"wrote {', '.join(r.written)}", err=True)


# -- info ------------------------------------------------------------------------------------

@app.command()
def info(
    files: list[Path] = typer.Argument(..., help="Files or folders to describe.",
                                       show_default=False, metavar="INPUT"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    skeleton: Path | None = _SKELETON,
    mesh: Path | None = _MESH,
    animation: list[Path] | None = _ANIMATION,
    hva: Path | None = _HVA,
    no_companions: bool = _NO_COMPANIONS,
    fps: float | None = typer.Option(None, metavar="N", rich_help_panel=ADVANCED,
                                        show_default=False, help="As for convert."),
    scale: float | None = typer.Option(None, metavar="N", rich_help_panel=ADVANCED,
                                          show_default=False, help="As for convert."),
    set_: list[str] | None = typer.Option(None, "--set", metavar="KEY=VALUE",
                                             rich_help_panel=ADVANCED, show_default=False,
                                             help="Reading option."),
    format: str | None = typer.Option(None, "--format", "-f", rich_help_panel=ADVANCED,
                                         metavar="NAME", show_default=False,
                                         help="Force the input format."),
    no_lua: bool = _NO_LUA,
    texture_path: list[Path] | None = _MOD_TEXTURES,
) -> None:
    """What a file holds, as convert sees it: counts, textures, clips.

    A model in a Luanti mod: the registrations using it (this RUNS the mod's Lua, fenced;
    --no-lua does not).
    """
    companions = not no_companions
    explicit = bool(skeleton or mesh or animation)
    base_opts = _companion_options(skeleton, mesh, animation, hva, fps, scale, set_)
    base_opts.update(mods_option(no_lua, texture_path))
    from .clitools.check import companion_options_for
    from .clitools.report import info_lines, native_info, scene_info
    from .readonce import reading_once
    report: dict[str, Any] = {}
    failed = False
    width = _width()
    for f, _ in _expand(files, format=format):
        with reading_once():     # the scene is loaded from the document read here
            try:
                data = f.read_bytes()
                fmt = registry.detect(data[:registry.SNIFF_BYTES], str(f), format)
                doc = registry.parse(fmt, data, str(f), f)
                entry = native_info(fmt, doc)
                del doc, data
                if fmt.to_scene is not None:
                    try:
                        opts = companion_options_for(f, fmt, base_opts, companions, explicit)
                    except OptionError as exc:
                        _usage(str(exc))
                    members = [p.name for p in plan.members(opts)]
                    members += [p.name for p in plan.auto_companions(f, opts)]
                    if members:
                        entry["companions"] = members
                    try:
                        entry["scene"] = scene_info(f, format, opts)
                    except RetromeshError as exc:
                        entry["scene"] = f"not convertible: {describe(exc, f)}"
                report[str(f)] = entry
            except (RetromeshError, OSError) as exc:
                report[str(f)] = {"error": describe(exc, f)}
                failed = True
    if as_json:
        _echo(json.dumps(report, indent=1, default=str))
    else:
        for name, entry in report.items():
            if "error" in entry:
                _error(entry["error"])
                continue
            _echo("\n".join(info_lines(name, entry, width)))
    if failed:
        raise typer.Exit(EXIT_FAILED)


# -- dump / build ----------------------------------------------------------------------------

@app.command()
def dump(file: Path = typer.Argument(..., show_default=False, help="A game file, or - (stdin)."),
         output: Path | None = typer.Option(None, "-o", "--output", show_default=False,
                                               help="Write the JSON here (default, -: stdout)."),
         format: str | None = typer.Option(None, "--format", "-f", show_default=False,
                                              help="Force the input format.")) -> None:
    """Lossless JSON of a native document (edit it, then `build` it)."""
    from . import jsoncodec
    if is_dash(file):
        file = _stdin(format)
    if is_dash(output):
        output = None
    if not file.is_file():
        _usage(describe(FileNotFoundError(2, "", str(file)) if not file.exists()
                        else IsADirectoryError(21, "", str(file))))
    try:
        fmt = _detect(file, format)
        if fmt.family == "glTF 2.0":
            _error(f"{file}: glTF is not a native game format: dump writes the native document "
                   "of a game file (a .gltf is JSON already; see `retromesh info`)")
            raise typer.Exit(EXIT_FAILED)
        doc = retromesh.read(file, format=format)
        text = jsoncodec.dumps(doc)
    except (RetromeshError, OSError) as exc:
        _error(describe(exc, file))
        raise typer.Exit(EXIT_FAILED) from None
    except TypeError as exc:
        _error(f"{file}: cannot be dumped as JSON ({exc})")
        raise typer.Exit(EXIT_FAILED) from None
    if output:
        from .fileio import atomic_write
        atomic_write(output, text.encode("utf-8"))
        _echo(f"wrote {output}", err=True)
    else:
        sys.stdout.write(text + "\n")


@app.command()
def build(source: Path = typer.Argument(..., help="JSON written by `retromesh dump`.",
                                        show_default=False),
          output: Path = typer.Option(..., "-o", "--output", show_default=False,
                                      help="The file to build."),
          overwrite: bool = typer.Option(False, help="Allow replacing the JSON file itself.")
          ) -> None:
    """A native file from the JSON of `dump` (identical when unedited).

    The document is checked before anything is written: every field present, and the bytes
    built read back as the format.
    """
    from .clitools.docs import build_checked
    from .fileio import atomic_write_many
    if not source.is_file():
        _usage(f"{source}: no such file")
    if output.exists() and output.resolve() == source.resolve() and not overwrite:
        _usage(f"{output}: the output is the input (use --overwrite)")
    try:
        files = build_checked(source.read_bytes(), output)
        written = atomic_write_many(files)
    except (RetromeshError, OSError) as exc:
        _error(describe(exc, source))
        raise typer.Exit(EXIT_FAILED) from None
    _echo(f"wrote {', '.join(map(str, written))}", err=True)


# -- check -----------------------------------------------------------------------------------

@app.command()
def check(files: list[Path] = typer.Argument(..., help="Files or folders to check.",
                                             show_default=False, metavar="INPUT"),
          as_json: bool = typer.Option(False, "--json", help="Print JSON: each finding with "
                                       "its rule id, severity and message."),
          skeleton: Path | None = _SKELETON,
          mesh: Path | None = _MESH,
          animation: list[Path] | None = _ANIMATION,
          hva: Path | None = _HVA,
          no_companions: bool = _NO_COMPANIONS,
          format: str | None = typer.Option(None, "--format", "-f", show_default=False,
                                               help="Force the input format."),
          scene: bool = typer.Option(True, help="Also convert to a scene and check it."),
          luanti: bool = typer.Option(False, "--luanti",
                                      help="Also flag what Luanti's loaders reject, and what "
                                           "the registrations of the model's mod get wrong."),
          no_lua: bool = _NO_LUA,
          texture_path: list[Path] | None = _MOD_TEXTURES) -> None:
    """Judge files as their game's engine would (rules: docs/check-rules.md).

    Errors (the engine refuses the file) exit 1; warnings (it loads the file but shows or
    animates it wrongly) do not. Companions are read as convert reads them.
    """
    from .clitools.check import FileReport, check_file, companion_options_for, report
    from .clitools.luanti import unreadable_note
    from .findings import error
    explicit = bool(skeleton or mesh or animation)
    base_opts = _companion_options(skeleton, mesh, animation, hva, None, None, None)
    if luanti:
        base_opts.update(mods_option(no_lua, texture_path))

    def options(f: Path, fmt: registry.Format) -> dict[str, Any]:
        try:
            return companion_options_for(f, fmt, base_opts, not no_companions, explicit)
        except OptionError as exc:
            _usage(str(exc))

    reports: list[FileReport] = []
    for f, base in _expand(files, format=format):
        label = str(f.relative_to(base)) if base is not None else str(f)
        try:
            fmt, companions, findings = check_file(f, format, scene=scene, luanti=luanti,
                                                   options=options)
            reports.append(FileReport(label, fmt.name, [c.name for c in companions], findings))
        except (RetromeshError, OSError) as exc:
            detail = describe(exc, f)
            detail = detail[len(str(f)) + 2:] if detail.startswith(str(f) + ": ") else detail
            note = unreadable_note(f) if luanti else None
            if note:
                detail += note
            reports.append(FileReport(label, unreadable=detail, findings=[
                error(f"{f.suffix.lower().lstrip('.') or 'file'}.read", detail)]))
    if report(reports, as_json):
        raise typer.Exit(EXIT_FAILED)


# -- formats ---------------------------------------------------------------------------------

@app.command()
def formats(as_json: bool = typer.Option(False, "--json", help="Print JSON."),
            markdown: bool = typer.Option(False, "--markdown",
                                          help="Print the Markdown table of docs/formats.md.")
            ) -> None:
    """Every format: extensions, abilities, --set and -O options."""
    from .clitools.report import format_blocks, format_entries, format_table
    if as_json:
        _echo(json.dumps(format_entries(), indent=1))
    elif markdown:
        _echo("\n".join(format_table()))
    else:
        _echo("\n".join(format_blocks(_width())))


from .ksy.cli import ksy as _ksy  # noqa: E402

app.command("ksy")(_ksy)

from .gallery.cli import gallery as _gallery, view as _view  # noqa: E402

app.command("gallery")(_gallery)
app.command("view")(_view)


from .blender.cli import app as _blender_app  # noqa: E402  (retromesh blender build)

app.add_typer(_blender_app, name="blender")


if __name__ == "__main__":  # pragma: no cover
    main()
