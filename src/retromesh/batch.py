"""Converting many files: models grouped with their companions, one job per model, a result
per job, and a bad file never stopping the rest.

    import retromesh.batch as batch
    results = batch.convert_many(["mods/"], "out/")          # folders and/or files
    failed = [r for r in results if not r.ok]                 # r.message says why

:func:`convert_many` = :func:`plan` (which files a conversion reads together, the names it
writes) + :func:`run_jobs` (in this process, or ``workers`` processes). Jobs are plain picklable
data, so an existing engine can fan a big collection out across machines: plan once, hand
shards of jobs to :func:`run_jobs` (``examples/dask_batch.py`` does it with Dask). The CLI's
folder mode (``retromesh convert DIR -o OUT``) and ``retromesh gallery`` use this module.

Companions: a model is often several files: Lost Saga ``body.msh`` + ``body.skl`` +
``body_walk.ani``, Overgrowth ``man.phxbn`` + ``man.obj`` + ``man_run.anm``, Westwood
``tank.vxl`` + ``tank.hva``. A batch groups them as a person would: one output per model, the
companions read with it and not converted again on their own, and the output named after the
model (``tank.glb``). When two files of one folder would give the same name, a game model wins
over an exchange copy or side file (``tank.vxl`` -> tank.glb, ``tank.vox`` -> tank.vox.glb);
two game models of one name (``box.b3d``, ``box.solid``) both keep their extension.

Outputs are written atomically and flushed to disk once per batch (or shard) rather than once
per file (:func:`retromesh.fileio.durable_batch`).
"""
from __future__ import annotations

import fnmatch
import glob
import os
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from . import registry
from .errors import FormatError, LimitError, LossWarning, MissingTextureWarning, RetromeshError
from .records import record

__all__ = ["Job", "Result", "convert_many", "plan", "run", "run_jobs", "describe", "shards",
           "Group", "companions", "members", "scannable", "group_folder", "name_outputs",
           "auto_companions", "given_companions", "recognised", "matches"]

# Which file is a model's main file, which files go with it and under which names: each
# format's registration says it (``registry.Format.companions``, ``grouping``, ``yields_name``,
# ``shared_extension``); the rules below read it. A file follows the formats whose own (first)
# extension it has: ``.cms`` files are collision meshes, though the ``.msh`` reader claims the
# extension too.


def _home(ext: str) -> list[registry.Format]:
    """The formats whose own extension is ``ext`` (the rules its files follow)."""
    return [f for f in registry.known() if f.extensions[:1] == (ext,)] if ext else []


def _ext(path: Path) -> str:
    return path.suffix.lower().lstrip(".")


def _found_beside(ext: str) -> list[registry.Companion]:
    """The companions a file of ``ext`` is grouped with by name (not those its reader finds,
    nor those looked for only when it is picked in Blender)."""
    return [c for f in _home(ext) for c in f.companions
            if c.beside and not c.by_reader and not c.picked_only]


def _tier(ext: str) -> int:
    """The rank of ``ext``'s files in :data:`registry.GROUPING` (lower: claims companions first)."""
    return min((registry.GROUPING.index(f.grouping) for f in _home(ext)),
               default=len(registry.GROUPING))


def matches(path: Path, main: Path, pattern: str) -> bool:
    """``path``'s name fits a companion name ``pattern`` of ``main`` (``{stem}.skl``,
    ``{stem}_*.ani``), letter case ignored."""
    want = pattern.format(stem=glob.escape(main.stem)).lower()
    return path != main and fnmatch.fnmatchcase(path.name.lower(), want)


@record
class Group:
    """One model: the file converted and the companions read with it."""
    source: Path
    options: dict[str, Any] = field(default_factory=dict)
    members: list[Path] = field(default_factory=list)


def recognised(path: Path) -> bool:
    """False for a file of an extension many unrelated files share (``.xml``: only some are
    Overgrowth descriptors) whose first bytes no format claiming it recognises."""
    ext = path.suffix.lower().lstrip(".")
    if not any(f.shared_extension for f in registry.claiming(ext)):
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(registry.SNIFF_BYTES)
    except OSError:
        return False
    return any(f.sniff is not None and registry.sniffs(f, head) for f in registry.claiming(ext))


def scannable(path: Path) -> bool:
    """A file a folder conversion picks up: a known extension that converts to a scene, or
    a file without one in a folder where a format keeps such files (Lugaru's ``Skeleton/``)."""
    ext = path.suffix.lower().lstrip(".")
    if not ext:
        return any(f.to_scene is not None for f in registry.keeping(path))
    return any(f.to_scene is not None and f.family != "glTF 2.0"
               for f in registry.claiming(ext)) and recognised(path)


def companions(primary: Path, siblings: list[Path] | None = None) -> dict[str, Any]:
    """The reading options naming the companions found beside ``primary`` (by the name
    patterns of its format's companions: same stem; animations ``<stem>.ext`` or
    ``<stem>_<name>.ext``; without ``siblings``, when it is the only model of its folder and
    has none of those, the animations of any name beside it, as :func:`group_folder` adopts
    them). Empty when it has none."""
    rules = _found_beside(_ext(primary))
    if not rules:
        return {}
    alone = siblings is None
    if siblings is None:
        try:
            siblings = [p for p in primary.parent.iterdir() if p.is_file()]
        except OSError:
            return {}
    others = [s for s in siblings if s != primary]
    found: dict[str, Any] = {}
    for c in rules:
        hits = sorted(p for p in others if any(matches(p, primary, pat) for pat in c.beside))
        exts = registry.companion_extensions(c)
        if not hits and c.many and alone and _only_model(primary, c, others):
            hits = sorted(p for p in others if _ext(p) in exts)  # walk.anm: as a folder does
        if hits:
            found[c.role] = hits if c.many else hits[0]
    order = ("skeleton", "mesh", "animations")
    return dict(sorted(found.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order
                       else len(order)))


def _takers(c: registry.Companion) -> set[str]:
    """The extensions whose files take companions of ``c``'s role and format by name (the
    ``.ani`` of a ``.msh`` or a ``.skl``)."""
    return {f.extensions[0] for f in registry.known() if f.extensions and any(
        o.role == c.role and o.format == c.format and o.beside and not o.picked_only
        and not o.by_reader for o in f.companions)}


def _only_model(primary: Path, c: registry.Companion, others: list[Path]) -> bool:
    """No other model in ``primary``'s folder that companions of ``c``'s kind (animations of
    other names) could belong to (a ``.msh`` and its ``.skl`` are one model)."""
    kinds = _takers(c)
    return all(p.stem.lower() == primary.stem.lower() for p in others if _ext(p) in kinds)


def members(options: dict[str, Any]) -> list[Path]:
    """The companion files named by reading options (skeleton, mesh, animations)."""
    out = []
    for key in ("skeleton", "mesh"):
        if key in options:
            out.append(options[key])
    out += options.get("animations", [])
    return out


def _adopt_orphans(groups: list[Group], here: list[Path], taken: set[Path]) -> None:
    """Animations named after no model go with the folder's one skeleton, when there is one
    (Overgrowth's ``walk.anm`` beside ``man.phxbn``)."""
    kinds = {(c.role, c.format): c for f in registry.known() for c in f.companions
             if c.many and c.beside and not c.picked_only and not c.by_reader}
    for c in kinds.values():
        exts = registry.companion_extensions(c)
        takers = _takers(c)
        orphans = [f for f in here if f not in taken and _ext(f) in exts]
        owners = [g for g in groups if g.source.parent == here[0].parent
                  and _ext(g.source) in takers]
        if not orphans or len(owners) != 1:
            continue
        owner = owners[0]
        # a model whose skeleton is a companion needs it found (a .msh without its .skl)
        needs = any(o.role == "skeleton" for o in _found_beside(_ext(owner.source)))
        if needs and "skeleton" not in owner.options:
            continue
        owner.options[c.role] = sorted(owner.options.get(c.role, []) + orphans)
        owner.members += orphans
        taken.update(orphans)


def group_folder(files: list[Path]) -> list[Group]:
    """Group the files of a folder conversion into models (see the module docstring)."""
    groups: list[Group] = []
    taken: set[Path] = set()
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        by_dir.setdefault(f.parent, []).append(f)
    # groups a format makes itself (Lugaru's extensionless characters): the formats keeping
    # files without an extension are loaded when there are such files
    loaded = registry.formats() if any(not f.suffix for f in files) else registry.formats_loaded()
    for fmt in loaded:
        if fmt.group_folder is not None:
            for main, options, more in fmt.group_folder([f for f in files if f not in taken]):
                taken.add(main)
                taken.update(more)
                groups.append(Group(main, options, list(more)))
    for folder in sorted(by_dir):
        here = sorted(f for f in by_dir[folder] if f not in taken)
        if not here:
            continue
        primaries = sorted((f for f in here if _found_beside(_ext(f))),
                           key=lambda f: (_tier(_ext(f)), f))
        for p in primaries:
            if p in taken:
                continue
            opts = companions(p, [s for s in here if s not in taken])
            found = members(opts)
            taken.add(p)
            taken.update(found)
            groups.append(Group(p, opts, found))
        _adopt_orphans(groups, here, taken)
        for f in here:
            if f not in taken:
                taken.add(f)
                groups.append(Group(f))
    return sorted(groups, key=lambda g: g.source)


def _read_alone(c: registry.Companion) -> bool:
    """A companion its main file's reader finds by itself that is a file of its own format
    (``.hva``), not one read only with it (Lost Saga's material script)."""
    fmt = registry.lookup(c.format)
    return c.by_reader and bool(c.role) and fmt is not None and bool(fmt.extensions)


def auto_companions(source: Path, options: dict[str, Any] | None = None) -> list[Path]:
    """Files the reader itself finds beside ``source`` (``tank.hva`` for ``tank.vxl``, as
    ``tank.hva`` or ``tank.HVA``) and reads on its own, unless ``options`` name them."""
    out: list[Path] = []
    for f in _home(_ext(source)):
        for c in f.companions:
            if not _read_alone(c) or (options and c.role in options):
                continue
            for pat in c.beside:
                name = Path(pat.format(stem=source.stem))
                cands = [source.with_name(name.name),
                         source.with_name(name.stem + name.suffix.upper())]
                out += [p for p in cands if p.is_file()][:1]
    return out


def given_companions(options: dict[str, Any]) -> list[Path]:
    """The files ``options`` name for companions a reader would otherwise find itself
    (``hva=``)."""
    roles = dict.fromkeys(c.role for f in registry.known() for c in f.companions
                          if _read_alone(c))
    return [Path(options[r]) for r in roles if r in options]


def name_outputs(jobs: list, ext: str) -> None:
    """Resolve output names that collide (see the module docstring); ``jobs`` have
    ``source`` and ``target``."""
    by_target: dict[Path, list] = {}
    for j in jobs:
        by_target.setdefault(j.target, []).append(j)
    for same in by_target.values():
        if len(same) < 2:
            continue
        main = [j for j in same if not any(f.yields_name for f in _home(_ext(j.source)))]
        keep = main[0] if len(main) == 1 else None
        for j in same:
            if j is not keep:
                j.target = j.target.with_name(f"{j.source.name}.{ext}")


# -- jobs and results -------------------------------------------------------------------------

@record
class Job:
    """One model to convert: the file read, the output, the options, the companions."""
    source: Path
    target: Path
    load_options: dict[str, Any] = field(default_factory=dict)
    save_options: dict[str, Any] = field(default_factory=dict)
    format: str | None = None
    preset: str | None = None      # "luanti": a GLB within Luanti's rules
    base: Path | None = None       # the input folder it was found in
    members: list[Path] = field(default_factory=list)
    force: bool = False            # write what the game's engine would refuse (check's rules)

    @property
    def label(self) -> str:
        """The source relative to the folder it was found in."""
        if self.base is not None:
            try:
                return str(self.source.relative_to(self.base))
            except ValueError:
                pass
        return str(self.source)


@record
class Result:
    """What became of a job: ``ok`` and the paths ``written``, or the ``message`` saying why
    not; the distinct ``warnings`` (LossWarning texts) and how many textures were missing."""
    job: Job
    ok: bool
    written: list[str] = field(default_factory=list)
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    missing_textures: int = 0

    @property
    def source(self) -> Path:
        return self.job.source


def _truncated(exc: FormatError) -> bool:
    said = f"{exc.expected} {exc.got}"
    return isinstance(exc, LimitError) and "bytes left" in said and "left over" not in said


def describe(exc: BaseException, path: str | Path | None = None) -> str:
    """``<file>: <message>`` for any error, the file named once."""
    name = str(path) if path is not None else None
    if isinstance(exc, FormatError):
        file = exc.file or name
        where = []
        if exc.offset is not None:
            where.append(f"byte {exc.offset} (0x{exc.offset:x})")
        if exc.path:
            where.append(exc.path)
        text = f"expected {exc.expected}" + (f", got {exc.got}" if exc.got is not None else "")
        if where:
            text = ": ".join(where) + ": " + text
        if _truncated(exc):
            text = "truncated: " + text
        elif exc.got == repr(b"") and exc.offset == 0:
            text = "empty file"
        return f"{file or '<data>'}: {text}"
    if isinstance(exc, OSError):
        file = exc.filename if exc.filename is not None else name
        reason = exc.strerror or str(exc)
        if isinstance(exc, FileNotFoundError):
            reason = "no such file or folder"
        elif isinstance(exc, IsADirectoryError):
            reason = "is a folder, not a file"
        return f"{file}: {reason}" if file else reason
    text = str(exc)
    if name and not text.startswith(name):
        return f"{name}: {text}"
    return text


def _convert_one(job: Job) -> list[Path]:
    import retromesh
    if job.preset == "luanti":
        from .clitools.luanti import convert_for_luanti
        return convert_for_luanti(job.source, job.target, job.format, job.load_options,
                                  job.save_options)
    return retromesh.convert(job.source, job.target, format=job.format,
                             save_options=job.save_options, force=job.force, **job.load_options)


def run(job: Job) -> Result:
    """Convert one job; every error becomes a failed Result (a bug too, with its traceback)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LossWarning)
        try:
            res = Result(job, True, [str(p) for p in _convert_one(job)])
        except (RetromeshError, OSError) as exc:
            res = Result(job, False, message=describe(exc, job.source))
        except Exception as exc:  # a bug: report it, keep the batch going
            res = Result(job, False, message=f"{job.source}: internal error "
                         f"{type(exc).__name__}: {exc}\n" + traceback.format_exc(limit=4))
    losses = [w for w in caught if issubclass(w.category, LossWarning)]
    res.warnings = sorted({str(w.message) for w in losses})
    res.missing_textures = len({str(w.message) for w in losses
                                if issubclass(w.category, MissingTextureWarning)})
    return res


def _apply_failures(results: list[Result], failed: dict[Path, OSError]) -> None:
    """Results whose output could not be renamed into place at the batch's commit fail."""
    if not failed:
        return
    for r in results:
        errors = [failed[Path(w)] for w in r.written if Path(w) in failed]
        if r.ok and errors:
            r.ok = False
            r.message = describe(errors[0], r.job.source)


def _run_here(jobs: Sequence[Job], on_result: Callable[[Result], Any] | None) -> list[Result]:
    from .fileio import durable_batch
    results: list[Result] = []
    with durable_batch() as durable:
        for job in jobs:
            res = run(job)
            results.append(res)
            if on_result is not None:
                on_result(res)
    _apply_failures(results, durable.failed)
    return results


def _run_shard(jobs: Sequence[Job]) -> list[Result]:
    return _run_here(jobs, None)


def shards(jobs: Sequence[Job], size: int) -> list[list[Job]]:
    """``jobs`` cut into consecutive lists of at most ``size``."""
    size = max(1, size)
    return [list(jobs[i:i + size]) for i in range(0, len(jobs), size)]


def run_jobs(jobs: Sequence[Job], workers: int = 1,
             on_result: Callable[[Result], Any] | None = None) -> list[Result]:
    """Run ``jobs`` (in this process, or in ``workers`` processes started once, each taking
    shards of jobs); the results in the order of ``jobs``. ``on_result`` is called (in this
    process) as results arrive. A failed job never stops the others."""
    jobs = list(jobs)
    workers = max(1, min(workers, os.cpu_count() or 1, len(jobs)))
    if workers == 1:
        return _run_here(jobs, on_result)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    # forked workers start with everything imported; small shards balance the load, and
    # each shard is flushed to disk once
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    parts = shards(jobs, min(16, max(1, len(jobs) // (4 * workers))))
    done: dict[int, list[Result]] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(_run_shard, part): i for i, part in enumerate(parts)}
        for future in as_completed(futures):
            i = futures[future]
            try:
                done[i] = future.result()
            except Exception as exc:        # a worker died (killed, out of memory)
                done[i] = [Result(j, False, message=f"{j.source}: worker failed: "
                                  f"{type(exc).__name__}: {exc}") for j in parts[i]]
            if on_result is not None:
                for res in done[i]:
                    on_result(res)
    return [r for i in range(len(parts)) for r in done[i]]


# -- planning ---------------------------------------------------------------------------------

def _takes(fmt: registry.Format, key: str) -> bool:
    if key == "scale":
        return True
    if fmt.to_scene is None:
        return False
    params = registry.signature(fmt.to_scene).parameters
    return key in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def plan(inputs: Iterable[str | os.PathLike], out_dir: str | os.PathLike, *, to: str = "glb",
         base: str | os.PathLike | None = None, companions: bool = True,
         load_options: dict[str, Any] | None = None,
         save_options: dict[str, Any] | None = None, format: str | None = None,
         force: bool = False) -> list[Job]:
    """The jobs that convert ``inputs`` (files, and folders searched recursively for the
    formats that convert) into ``out_dir`` as ``.to`` files, the folder layout kept.

    Files are grouped with their companions (``companions=False``: each file alone). Outputs
    are named relative to the folder named in ``inputs``, or for files to ``base`` (default:
    their common folder). ``load_options`` go to each file whose format takes them
    (``scale=`` to all), ``save_options`` to the writer. ``force``: write files the game's
    engine would refuse (``retromesh check``'s rules) instead of failing those jobs."""
    out = Path(out_dir)
    ext = to.lower().lstrip(".")
    loose: list[Path] = []
    groups: list[tuple[Group, Path | None]] = []
    for item in map(Path, inputs):
        if item.is_dir():
            files = sorted(p for p in item.rglob("*") if p.is_file() and scannable(p))
            groups += [(g, item) for g in (group_folder(files) if companions
                                           else [Group(f) for f in files])]
        else:
            loose.append(item)
    if loose:
        root: Path | None = Path(base) if base is not None else Path(os.path.commonpath(
            [os.path.abspath(p.parent) for p in loose]))
        if base is None:
            loose = [Path(os.path.abspath(p)) for p in loose]
        groups += [(g, root) for g in (group_folder(loose) if companions
                                       else [Group(f) for f in loose])]
    jobs = []
    for g, root in groups:
        try:
            rel = g.source.relative_to(root) if root is not None else Path(g.source.name)
        except ValueError:
            rel = Path(g.source.name)
        opts = {}
        if load_options:
            fmts = ([registry.get(format)] if format else
                    [f for f in registry.claiming(g.source.suffix) if f.to_scene is not None])
            opts = {k: v for k, v in load_options.items() if any(_takes(f, k) for f in fmts)}
        opts.update(g.options)
        jobs.append(Job(g.source, out / rel.with_suffix("." + ext), opts,
                        dict(save_options or {}), format, None, root, list(g.members), force))
    name_outputs(jobs, ext)
    return jobs


def convert_many(inputs: Iterable[str | os.PathLike], out_dir: str | os.PathLike, *,
                 workers: int = 1, overwrite: bool = False,
                 on_result: Callable[[Result], Any] | None = None,
                 **plan_options: Any) -> list[Result]:
    """Convert files and folders into ``out_dir`` (see :func:`plan` for ``to=``, ``base=``,
    ``companions=``, ``load_options=``, ``save_options=``, ``format=``, ``force=``): one :class:`Result`
    per model, in source order; a file that fails is a failed Result and the batch goes on.
    An output that would replace an input fails unless ``overwrite``."""
    jobs = plan(inputs, out_dir, **plan_options)
    refused: dict[int, Result] = {}
    if not overwrite:
        sources = {s.resolve() for j in jobs for s in [j.source, *j.members]}
        for i, j in enumerate(jobs):
            if j.target.resolve() in sources:
                refused[i] = Result(j, False, message=f"{j.target}: would overwrite an input "
                                    "(overwrite=True allows it)")
    ran = iter(run_jobs([j for i, j in enumerate(jobs) if i not in refused], workers,
                        on_result))
    return [refused[i] if i in refused else next(ran) for i in range(len(jobs))]
