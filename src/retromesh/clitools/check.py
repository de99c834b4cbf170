"""``retromesh check``: each file judged as its game's engine would judge it.

A file is read, written back (the bytes must be the same), judged by its format's rules and,
with the companions ``convert`` would read with it (the ``.obj`` beside a ``.phxbn``,
``--mesh``, ``--skeleton``, ``--animation``, ``--hva``), by the rules that span files; then
converted to a scene with them. Every problem is a :class:`~retromesh.findings.Finding` with
a rule id (``docs/check-rules.md``): an ``error`` (the engine refuses the file) fails the
check, a ``warning`` (it loads it but shows or animates it wrongly) does not.
"""
from __future__ import annotations

import json
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import batch as plan, registry
from ..checking import check_document, check_together
from ..errors import LossWarning, MissingCompanionError, NoSceneError, RetromeshError
from ..findings import Finding, error, warning
from ..readonce import reading_once
from .messages import describe
from .options import check_options, read_options
from .output import echo, tagged, width

__all__ = ["FileReport", "check_file", "companion_options_for", "report"]


class FileReport:
    """What ``check`` found in one file: its format, the companions read with it, the
    findings; ``failed`` when one of them is an error or the file could not be read."""

    def __init__(self, label: str, format: str = "", companions: list[str] | None = None,
                 findings: list[Finding] | None = None, unreadable: str = "") -> None:
        self.label = label
        self.format = format
        self.companions = companions or []
        self.findings = findings or []
        self.unreadable = unreadable

    @property
    def failed(self) -> bool:
        return bool(self.unreadable) or any(f.is_error for f in self.findings)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.label, "format": self.format or None,
                               "ok": not self.failed}
        if self.companions:
            out["companions"] = self.companions
        if self.unreadable:
            out["error"] = self.unreadable
        out["findings"] = [f.as_dict() for f in self.findings]
        return out


def companion_options_for(f: Path, fmt: registry.Format, base: dict[str, Any],
                          companions: bool, explicit: bool) -> dict[str, Any]:
    """The reading options ``convert`` would use for ``f``: the companions given on the command
    line, else those found beside it (as ``convert`` and ``info`` find them). OptionError when
    an option does not apply to the format."""
    opts = dict(base)
    if companions and not explicit:
        opts.update({k: v for k, v in plan.companions(f).items() if k in read_options(fmt)})
    return check_options(opts, read_options(fmt), "reading", fmt.name, "--set")


def _companion_files(f: Path, opts: dict[str, Any]) -> list[Path]:
    # and the files its reader finds beside it (a .vxl's .hva), or those the options name
    return [*plan.members(opts), *plan.given_companions(opts), *plan.auto_companions(f, opts)]


def _parse(path: Path, format: str | None = None) -> tuple[registry.Format, Any, bytes]:
    data = path.read_bytes()
    fmt = registry.detect(data[:registry.SNIFF_BYTES], str(path), format)
    return fmt, registry.parse(fmt, data, str(path), path), data


@reading_once()      # the companions judged together are the documents the scene is made of
def check_file(f: Path, format: str | None, *, scene: bool, luanti: bool,
               options: Callable[[Path, registry.Format], dict[str, Any]]) -> tuple[
                   registry.Format, list[Path], list[Finding]]:
    """(format, companions read, findings) of one file; ``options(f, fmt)`` gives its reading
    options (companions included). Raises RetromeshError/OSError when it cannot be read."""
    fmt, doc, data = _parse(f, format)
    findings: list[Finding] = []
    gltf = fmt.family == "glTF 2.0"
    if not gltf and fmt.write is not None and fmt.write(doc) != data:
        findings.append(error(f"{fmt.name}.round_trip", "byte round trip differs (retromesh "
                              "would not write this file back as it is)"))
    findings += check_document(doc, fmt)
    opts = options(f, fmt) if fmt.to_scene is not None else {}
    companions = _companion_files(f, opts) if fmt.to_scene is not None else []
    together = [(fmt, doc)]
    for c in companions:
        cfmt, cdoc, _ = _parse(c)
        together.append((cfmt, cdoc))
    findings += [x for _, x in check_together(together)]
    del together
    mods = opts.pop("mods", None)
    built = None
    if (scene or gltf or luanti) and fmt.to_scene is not None and \
            not any(x.is_error for x in findings):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LossWarning)
            try:
                kwargs = dict(opts)
                if "source" in fmt.scene_options:
                    kwargs["source"] = f
                built = registry.convert_to_scene(fmt, doc, str(f), **kwargs)
            except NoSceneError:
                pass                                # sound, and nothing to convert
            except RetromeshError as exc:
                missing = exc if isinstance(exc, MissingCompanionError) else exc.__cause__
                if isinstance(missing, MissingCompanionError):   # judged alone above
                    findings.append(warning(f"{fmt.name}.unchecked",
                                            f"judged alone; not checked: {missing.unchecked} "
                                            f"({missing})"))
                else:
                    findings.append(error(f"{fmt.name}.scene",
                                          f"does not convert: {describe(exc, f)}"))
    if luanti:
        from .luanti import check_for_luanti, mod_findings
        findings += check_for_luanti(fmt, doc, data)
        if built is not None and mods:
            findings += mod_findings(f, built, mods)
    return fmt, companions, findings


def _line(f: Finding) -> str:
    return f"{f.severity}: {f.message} [{f.rule}]"


def report(reports: list[FileReport], as_json: bool) -> int:
    """Print the reports; returns how many failed."""
    failures = sum(r.failed for r in reports)
    if as_json:
        echo(json.dumps({"files": [r.as_dict() for r in reports],
                         "ok": len(reports) - failures, "failed": failures}, indent=1))
        return failures
    for r in reports:
        if r.unreadable:
            tagged("failed:", "red", f"{r.label}: {r.unreadable}", err=False)
            continue
        head = f"{r.label} ({r.format})"
        if r.companions:
            head += f" with {', '.join(r.companions)}"
        if r.failed:
            tagged("failed:", "red", head, err=False)
        elif r.findings:
            tagged("ok:", "yellow", head, err=False)
        else:
            tagged("ok:", "green", head + ": " + ("glTF structure reads back"
                                                   if r.format in ("glb", "gltf")
                                                   else "round trip identical, no findings"),
                   err=False)
        for x in r.findings:
            echo(textwrap.fill(_line(x), width(), initial_indent="  ", subsequent_indent="    ",
                               break_on_hyphens=False))
    echo(f"{len(reports) - failures} ok, {failures} failed")
    return failures
