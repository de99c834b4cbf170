"""The command line's side of a batch (:mod:`retromesh.batch` runs it): a progress line, the
summary at the end, and the library's messages said with the CLI's flags.

A job's failure is a :class:`~retromesh.batch.Result` with the message (the batch goes on);
warnings are collected per job (``MissingTextureWarning`` counted apart); the summary lists
failures and warnings only — a warning many files share is said once — then one line of totals.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from .. import batch as _batch
from ..batch import Job, Result
from .messages import cli_hints, short_paths
from .output import tagged, width

__all__ = ["Job", "Result", "run", "run_all", "summary"]


def _for_cli(res: Result) -> Result:
    """The library's keyword hints as flags, paths relative to the input folder."""
    return dataclasses.replace(
        res, message=cli_hints(res.message),
        warnings=sorted({short_paths(cli_hints(w), res.job.base) for w in res.warnings}))


def run(job: Job) -> Result:
    return _for_cli(_batch.run(job))


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


def run_all(jobs: list[Job], workers: int) -> list[Result]:
    """Run the jobs (:func:`retromesh.batch.run_jobs`), with a progress line on a terminal."""
    import sys
    if not sys.stderr.isatty() and "FORCE_COLOR" not in os.environ:   # rich only for a bar
        results = _batch.run_jobs(jobs, workers)
    else:
        results = _with_progress(jobs, workers)
    return sorted((_for_cli(r) for r in results), key=lambda r: str(r.job.source))


def _with_progress(jobs: list[Job], workers: int) -> list[Result]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    columns = width()
    name_width = max(columns - 46, 12)
    console = Console(stderr=True, width=columns)
    with Progress(TextColumn("converting"), BarColumn(bar_width=12), MofNCompleteColumn(),
                  TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[current]}"),
                  console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task("converting", total=len(jobs),
                                 current=_short(jobs[0].label, name_width))
        return _batch.run_jobs(jobs, workers, on_result=lambda r: progress.update(
            task, advance=1, current=_short(r.job.label, name_width)))


def summary(results: list[Result], output: Path | None, seconds: float) -> None:
    failed = [r for r in results if not r.ok]
    warned = [r for r in results if r.ok and r.warnings]
    for r in failed:
        detail = r.message
        src = str(r.job.source)
        if detail.startswith(src + ": "):
            detail = detail[len(src) + 2:]
        tagged("failed:", "red", f"{r.job.label}: {detail}")
    by_note: dict[str, list[str]] = {}      # one warning shared by many files: said once
    for r in warned:
        for note in r.warnings:
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
