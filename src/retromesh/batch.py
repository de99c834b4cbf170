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
           "auto_companions", "recognised"]

#: primary extension -> (skeleton ext, mesh ext, animation ext): what is read beside it
_RULES = {
    "msh": ("skl", None, "ani"),
    "skl": (None, None, "ani"),
    "phxbn": (None, "obj", "anm"),
}
#: files that another one reads on its own (``.hva`` beside its ``.vxl``)
_AUTO = {"vxl": "hva"}
#: exchange copies or side files of a model: beside a game model of the same name they yield
#: the plain output name to it (``tank.vxl`` -> tank.glb, ``tank.vox`` -> tank.vox.glb)
_SECONDARY = {"vox", "obj", "fzx"}
#: extensions that files with no 3D content share: a folder scan sniffs them
_SNIFFED = {"xml"}


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
    if ext not in _SNIFFED:
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


def _by_ext(files: list[Path]) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for f in files:
        out.setdefault(f.suffix.lower().lstrip("."), []).append(f)
    return out


def _related(primary: Path, candidates: list[Path]) -> list[Path]:
    stem = primary.stem.lower()
    return sorted(c for c in candidates
                  if c.stem.lower() == stem or c.stem.lower().startswith(stem + "_"))


def companions(primary: Path, siblings: list[Path] | None = None) -> dict[str, Any]:
    """The reading options naming the companions found beside ``primary`` (same stem;
    animations ``<stem>.ext`` or ``<stem>_<name>.ext``; without ``siblings``, when it is the
    only model of its folder and has none of those, the animations of any name beside it, as
    :func:`group_folder` adopts them). Empty when it has none."""
    rule = _RULES.get(primary.suffix.lower().lstrip("."))
    if rule is None:
        return {}
    alone = siblings is None
    if siblings is None:
        try:
            siblings = [p for p in primary.parent.iterdir() if p.is_file()]
        except OSError:
            return {}
    by_ext = _by_ext([s for s in siblings if s != primary])
    skel, mesh, anim = rule
    out: dict[str, Any] = {}
    stem = primary.stem.lower()
    if skel:
        same = [p for p in by_ext.get(skel, []) if p.stem.lower() == stem]
        if same:
            out["skeleton"] = same[0]
    if mesh:
        same = [p for p in by_ext.get(mesh, []) if p.stem.lower() == stem]
        if same:
            out["mesh"] = same[0]
    if anim:
        found = _related(primary, by_ext.get(anim, []))
        if not found and alone and _only_model(primary, by_ext):
            found = sorted(by_ext.get(anim, []))      # walk.anm: as a folder conversion does
        if found:
            out["animations"] = found
    return out


def _only_model(primary: Path, by_ext: dict[str, list[Path]]) -> bool:
    """No other model in ``primary``'s folder that animations of other names could belong to
    (a ``.msh`` and its ``.skl`` are one model)."""
    kinds = ("phxbn",) if primary.suffix.lower() == ".phxbn" else ("msh", "skl")
    return all(p.stem.lower() == primary.stem.lower() for k in kinds for p in by_ext.get(k, []))


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
    for ext, kinds in (("anm", ("phxbn",)), ("ani", ("msh", "skl"))):
        orphans = [f for f in here if f not in taken and f.suffix.lower() == "." + ext]
        owners = [g for g in groups if g.source.parent == here[0].parent
                  and g.source.suffix.lower().lstrip(".") in kinds]
        if not orphans or len(owners) != 1:
            continue
        owner = owners[0]
        if owner.source.suffix.lower() != ".phxbn" and "skeleton" not in owner.options \
                and owner.source.suffix.lower() != ".skl":
            continue
        owner.options["animations"] = sorted(owner.options.get("animations", []) + orphans)
        owner.members += orphans
        taken.update(orphans)


def group_folder(files: list[Path]) -> list[Group]:
    """Group the files of a folder conversion into models (see the module docstring)."""
    groups: list[Group] = []
    taken: set[Path] = set()
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        by_dir.setdefault(f.parent, []).append(f)
    groups += _lugaru_characters(files, taken)
    for folder in sorted(by_dir):
        here = sorted(f for f in by_dir[folder] if f not in taken)
        if not here:
            continue
        order = {"msh": 0, "phxbn": 0, "skl": 1}
        primaries = sorted((f for f in here if f.suffix.lower().lstrip(".") in _RULES),
                           key=lambda f: (order[f.suffix.lower().lstrip(".")], f))
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


def _lugaru_characters(files: list[Path], taken: set[Path]) -> list[Group]:
    """Lugaru: a figure in ``Skeleton/`` takes the animations of ``../Animations/`` the game
    plays on it (``Wolf*`` on a wolf figure, the others on the rabbit's); the low-detail and
    clothes skeletons stay on their own, without animations."""
    skels = [f for f in files if not f.suffix and f.parent.name.lower() == "skeleton"]
    figures = [f for f in skels if not f.name.lower().endswith("low")
               and f.name.lower() != "rabbitbelt"]
    groups = []
    for fig in sorted(figures):
        wolf = "wolf" in fig.name.lower()
        anims = sorted(f for f in files if not f.suffix and f.parent.name.lower() == "animations"
                       and f.parent.parent == fig.parent.parent
                       and f.name.lower().startswith("wolf") == wolf)
        if not anims:
            continue
        taken.add(fig)
        taken.update(anims)
        groups.append(Group(fig, {"animations": anims}, anims))
    return groups


def auto_companions(source: Path) -> list[Path]:
    """Files the reader itself finds beside ``source`` (``tank.hva`` for ``tank.vxl``)."""
    ext = _AUTO.get(source.suffix.lower().lstrip("."))
    if not ext:
        return []
    return [c for c in (source.with_suffix("." + ext), source.with_suffix("." + ext.upper()))
            if c.is_file()][:1]


def name_outputs(jobs: list, ext: str) -> None:
    """Resolve output names that collide (see the module docstring); ``jobs`` have
    ``source`` and ``target``."""
    by_target: dict[Path, list] = {}
    for j in jobs:
        by_target.setdefault(j.target, []).append(j)
    for same in by_target.values():
        if len(same) < 2:
            continue
        main = [j for j in same if j.source.suffix.lower().lstrip(".") not in _SECONDARY]
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
