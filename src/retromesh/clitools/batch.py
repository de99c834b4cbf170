"""Running conversions: one job per model, in parallel or not, and the summary at the end.

A job's failure is a :class:`Result` with the message (the batch goes on); warnings are
collected per job (``MissingTextureWarning`` counted apart); the summary lists failures and
warnings only — a warning many files share is said once — then one line of totals.
"""
from __future__ import annotations

import multiprocessing
import os
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import retromesh
from ..errors import LossWarning, MissingTextureWarning, RetromeshError
from .messages import cli_hints, describe, short_paths
from .output import tagged, width

__all__ = ["Job", "Result", "run", "run_all", "summary"]


@dataclass
class Job:
    source: Path
    target: Path
    load_options: dict[str, Any] = field(default_factory=dict)
    save_options: dict[str, Any] = field(default_factory=dict)
    format: str | None = None
    preset: str | None = None
    base: Path | None = None       # the input folder it was found in
    members: list[Path] = field(default_factory=list)

    @property
    def label(self) -> str:
        if self.base is not None:
            try:
                return str(self.source.relative_to(self.base))
            except ValueError:
                pass
        return str(self.source)


@dataclass
class Result:
    job: Job
    ok: bool
    written: list[str] = field(default_factory=list)
    message: str = ""
    notes: list[str] = field(default_factory=list)
    missing_textures: int = 0


def _convert_one(job: Job) -> list[Path]:
    if job.preset == "luanti":
        from .luanti import convert_for_luanti
        return convert_for_luanti(job.source, job.target, job.format, job.load_options,
                                  job.save_options)
    return retromesh.convert(job.source, job.target, format=job.format,
                             save_options=job.save_options, **job.load_options)


def run(job: Job) -> Result:
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
    res.notes = sorted({short_paths(cli_hints(str(w.message)), job.base) for w in losses})
    res.missing_textures = len({str(w.message) for w in losses
                                if issubclass(w.category, MissingTextureWarning)})
    return res


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


def run_all(jobs: list[Job], workers: int) -> list[Result]:
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeRemainingColumn)
    results: list[Result] = []
    columns = width()
    name_width = max(columns - 46, 12)
    console = Console(stderr=True, width=columns)
    with Progress(TextColumn("converting"), BarColumn(bar_width=12), MofNCompleteColumn(),
                  TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[current]}"),
                  console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("converting", total=len(jobs),
                                 current=_short(jobs[0].label, name_width))
        workers = min(workers, os.cpu_count() or 1, len(jobs))
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor
            # forked workers start with everything imported; chunks keep the parent's share small
            context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
            chunk = max(1, len(jobs) // (8 * workers))
            with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
                for job, res in zip(jobs, pool.map(run, jobs, chunksize=chunk)):
                    results.append(res)
                    progress.update(task, advance=1, current=_short(job.label, name_width))
        else:
            for j in jobs:
                progress.update(task, current=_short(j.label, name_width))
                results.append(run(j))
                progress.advance(task)
    return sorted(results, key=lambda r: str(r.job.source))


def summary(results: list[Result], output: Path | None, seconds: float) -> None:
    failed = [r for r in results if not r.ok]
    warned = [r for r in results if r.ok and r.notes]
    for r in failed:
        detail = r.message
        src = str(r.job.source)
        if detail.startswith(src + ": "):
            detail = detail[len(src) + 2:]
        tagged("failed:", "red", f"{r.job.label}: {detail}")
    by_note: dict[str, list[str]] = {}      # one warning shared by many files: said once
    for r in warned:
        for note in r.notes:
            by_note.setdefault(note, []).append(r.job.label)
    for note, labels in sorted(by_note.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
        if len(labels) == 1:
            tagged("warning:", "yellow", f"{labels[0]}: {note}")
        else:
            more = f" and {len(labels) - 3} more" if len(labels) > 3 else ""
            tagged("warning:", "yellow", f"{note} ({len(labels)} files: "
                    f"{', '.join(labels[:3])}{more})")
    missing = sum(r.missing_textures for r in results)
    done = len(results) - len(failed)
    tagged(f"{done} converted,", "green" if not failed else "red",
            f"{len(failed)} failed ({len(warned)} with warnings, {missing} missing textures, "
            f"{seconds:.1f} s)")
