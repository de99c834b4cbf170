"""Build the Blender extension: ``retromesh-<version>.zip``, or one
``retromesh-<version>-<platform>.zip`` per platform (Blender's own ``--split-platforms`` naming).

Layout of a zip (Blender extension, manifest schema 1.0.0)::

    blender_manifest.toml     id "retromesh", type add-on, the Blender versions and platforms the
                              wheels below allow, licence, maintainer, website, the wheels
    __init__.py               register()/unregister() delegating to retromesh.blender.addon
    LICENSE                   retromesh's licence
    wheels/retromesh-*.whl    this package (see :mod:`.wheels` for where it comes from)
    wheels/*.whl              retromesh's runtime dependencies Blender lacks, for each of
                              Blender's Pythons and each platform of the zip

Version, licence, authors, website and dependencies come from retromesh's own wheel metadata,
that is the installed distribution's (``importlib.metadata``) or the checkout's.

Blender's Python: 3.11 from Blender 4.2 to 5.0, 3.13 from 5.1 (the extension manuals of each
release download wheels with that ``--python-version``). Wheels built for one CPython (Pillow's)
run only there, so the manifest's ``blender_version_min``/``max`` span exactly the Blender
releases whose Python the zip has wheels for; with the newest Python known, the range stays
open-ended. numpy is not packed: Blender ships it. typer and rich are only used by the command
line, which the add-on never imports, and packaging only by this builder. lupa (the Lua runtime
that runs a Luanti mod's registration code) is packed like Pillow, for each Python and platform;
it is the one dependency the add-on can do without (:data:`OPTIONAL`): a (Python, platform)
PyPI has no lupa wheel for is built anyway, with a warning, and on it the import reports that
the mod's Lua was not run and reads the model as ``--no-lua`` does. Nothing here imports bpy.
"""
from __future__ import annotations

import importlib.metadata as metadata
import re
import tempfile
import warnings
import zipfile
from collections.abc import Sequence
from email.message import Message
from pathlib import Path
from typing import Any

from packaging.markers import Marker

from .wheels import PLATFORMS, WheelName, fetch_wheels, norm, retromesh_wheel, wheel_file_text, wheel_metadata

__all__ = ["build_extension", "build_extensions", "runtime_dependencies", "manifest_text",
           "BLENDER_SHIPS", "CLI_ONLY", "OPTIONAL", "BLENDER_PYTHONS", "PLATFORMS"]

#: packages Blender's own Python already has (packing them would shadow Blender's copies)
BLENDER_SHIPS = frozenset({"numpy", "requests", "certifi", "idna", "urllib3", "charset-normalizer",
                           "zstandard", "cython"})
#: packages only the command line imports (packaging: only this zip builder)
CLI_ONLY = frozenset({"typer", "rich", "packaging"})
#: packages the add-on works without, with what is lost (a missing wheel is a warning)
OPTIONAL = {"lupa": "a Luanti mod's Lua is not run there (the import reads the model as "
                    "--no-lua does, and says so)"}
#: Blender's Python -> (first Blender release with it, first release after it or None: unknown)
BLENDER_PYTHONS: dict[str, tuple[str, str | None]] = {
    "3.11": ("4.2.0", "5.1.0"),
    "3.13": ("5.1.0", None),
}
TAGLINE = "Import and export classic game models (B3D, Lugaru, ABC, VXL)"

_ROOT_INIT = '''"""retromesh for Blender: File > Import/Export > Classic game model (retromesh).

The add-on itself lives in the retromesh wheel (retromesh.blender.addon)."""


def register():
    from retromesh.blender import addon
    addon.register()


def unregister():
    from retromesh.blender import addon
    addon.unregister()
'''


def _marker_ok(req: str, python: str) -> bool:
    """False for requirements that only apply to extras or to other Pythons than ``python``."""
    if ";" not in req:
        return True
    marker = req.split(";", 1)[1]
    if "extra" in marker:
        return False
    return Marker(marker).evaluate({"python_version": python, "python_full_version": python + ".0",
                                    "extra": ""})


def _req_name(req: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    if m is None:
        raise RuntimeError(f"cannot read the requirement {req!r}")
    return norm(m.group(1))


def runtime_dependencies(requires: Sequence[str] | None = None,
                         pythons: Sequence[str] = ("3.11",)) -> list[str]:
    """Requirement pins (``name==version``) of every package the add-on needs that Blender
    lacks: ``requires`` (default: the installed retromesh's) minus what Blender ships and the
    CLI-only packages, followed transitively through the installed distributions, for any of
    ``pythons``. A requirement not installed here stays as written."""
    if requires is None:
        requires = metadata.requires("retromesh") or []
    skip = BLENDER_SHIPS | CLI_ONLY
    todo = [r for r in requires if any(_marker_ok(r, py) for py in pythons)]
    pins: dict[str, str] = {}
    while todo:
        req = todo.pop()
        name = _req_name(req)
        if name in skip or name in pins:
            continue
        try:
            pins[name] = f"{name}=={metadata.version(name)}"
            todo += [r for r in (metadata.requires(name) or [])
                     if any(_marker_ok(r, py) for py in pythons)]
        except metadata.PackageNotFoundError:
            pins[name] = req.split(";", 1)[0].strip().replace(" ", "")
    return sorted(pins.values())


def blender_versions(pythons: Sequence[str]) -> tuple[str, str | None]:
    """(``blender_version_min``, ``blender_version_max`` or None) of a zip with wheels for
    ``pythons``, which must follow each other in :data:`BLENDER_PYTHONS`."""
    known = list(BLENDER_PYTHONS)
    unknown = [p for p in pythons if p not in BLENDER_PYTHONS]
    if unknown or not pythons:
        raise RuntimeError(f"no Blender release is known to use Python {', '.join(unknown)} "
                           f"(known: {', '.join(known)})")
    picked = sorted(pythons, key=known.index)
    first, last = known.index(picked[0]), known.index(picked[-1])
    if last - first + 1 != len(picked):
        raise RuntimeError(f"Pythons {', '.join(picked)} leave a gap in Blender's releases")
    return BLENDER_PYTHONS[picked[0]][0], BLENDER_PYTHONS[picked[-1]][1]


def _toml(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _urls(meta: Message) -> dict[str, str]:
    return {label.strip().lower(): url.strip()
            for label, _, url in (u.partition(",") for u in meta.get_all("Project-URL") or [])}


def _maintainer(meta: Message) -> str:
    """``Name <contact>``: the authors, with their e-mail or else the issue tracker."""
    name = meta.get("Author") or "retromesh contributors"
    email = meta.get("Author-email")
    contact = email or _urls(meta).get("issues") or _urls(meta).get("homepage")
    return f"{name} <{contact}>" if contact and "<" not in name else name


def _copyright(licence: str | None) -> list[str]:
    m = re.search(r"Copyright \(c\) (\d{4}(?:-\d{4})?) (.+)", licence or "")
    return [f"{m.group(1)} {m.group(2).strip()}"] if m else []


def manifest_text(version: str, wheels: list[str], platforms: list[str] | None = None, *,
                  meta: Message | None = None, licence: str | None = None,
                  pythons: Sequence[str] = ("3.11",)) -> str:
    """``blender_manifest.toml`` (schema 1.0.0) for the given wheel file names; ``meta`` is
    retromesh's core metadata (for licence, maintainer, website), ``licence`` its LICENSE."""
    meta = meta if meta is not None else Message()
    binary = any(not WheelName.parse(w).pure for w in wheels)
    vmin, vmax = blender_versions(pythons) if binary else (BLENDER_PYTHONS["3.11"][0], None)
    spdx = meta.get("License-Expression") or "MIT"
    lines = [
        'schema_version = "1.0.0"',
        'id = "retromesh"',
        f"version = {_toml(version)}",
        'name = "retromesh"',
        f"tagline = {_toml(TAGLINE)}",
        f"maintainer = {_toml(_maintainer(meta))}",
        'type = "add-on"',
        'tags = ["Import-Export"]',
        f'blender_version_min = "{vmin}"',
        *([f'blender_version_max = "{vmax}"'] if vmax else []),
        f"license = [{_toml('SPDX:' + spdx)}]",
        *([f"website = {_toml(url)}"] if (url := _urls(meta).get("homepage")) else []),
        *([f"copyright = [{', '.join(_toml(c) for c in _copyright(licence))}]"]
          if _copyright(licence) else []),
        "wheels = [",
        *[f'  "./wheels/{w}",' for w in wheels],
        "]",
    ]
    if platforms:
        lines.append("platforms = [" + ", ".join(_toml(p) for p in platforms) + "]")
    lines += ["", "[permissions]", 'files = "Read and write the model files you import and export"']
    return "\n".join(lines) + "\n"


def build_extensions(out_dir: str | Path, *, platforms: Sequence[str] | None = None,
                     pythons: Sequence[str] = tuple(BLENDER_PYTHONS),
                     wheel_cache: str | Path | None = None,
                     wheel: str | Path | None = None) -> list[Path]:
    """Write the extension zips into ``out_dir``; returns their paths.

    ``platforms``: None for one zip that installs on every platform of :data:`PLATFORMS`, else
    one zip per platform named. ``pythons``: the Blender Pythons to carry wheels for (see the
    module's docstring). ``wheel_cache``: a folder of dependency wheels to reuse (and fill).
    ``wheel``: retromesh's own wheel to pack (default: from this installation)."""
    unknown = [p for p in platforms or () if p not in PLATFORMS]
    if unknown:
        raise RuntimeError(f"unknown platform {', '.join(unknown)} (known: {', '.join(PLATFORMS)})")
    blender_versions(pythons)
    wanted = list(dict.fromkeys(platforms)) if platforms else list(PLATFORMS)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="retromesh-ext-") as tmp:
        pool = Path(tmp) / "wheels"
        own = retromesh_wheel(pool, wheel)
        meta = wheel_metadata(own)
        licence = wheel_file_text(own, "licenses/LICENSE")
        pins = runtime_dependencies(meta.get_all("Requires-Dist") or [], pythons)
        missing = fetch_wheels(pins, list(pythons), wanted, pool,
                               Path(wheel_cache) if wheel_cache else None)
        _warn_optional([m for m in missing if _req_name(m) in OPTIONAL])
        missing = [m for m in missing if _req_name(m) not in OPTIONAL]
        if missing:
            raise RuntimeError("no wheel for Blender of:\n  " + "\n  ".join(missing))
        zips = [(None, wanted)] if not platforms else [(p, [p]) for p in wanted]
        return [_write_zip(out_dir, meta, licence, pool, suffix, plats, pythons)
                for suffix, plats in zips]


def _warn_optional(missing: list[str]) -> None:
    """One warning per optional package some of whose wheels PyPI does not have."""
    by_name: dict[str, list[str]] = {}
    for m in missing:
        by_name.setdefault(_req_name(m), []).append(m.split(" ", 1)[1].strip("()"))
    for name, where in by_name.items():
        warnings.warn(f"no {name} wheel for {'; '.join(where)}: built without it, so "
                      f"{OPTIONAL[name]}", UserWarning, stacklevel=3)


def build_extension(out_dir: str | Path, *, platform: str | None = None, **options: Any) -> Path:
    """Write one extension zip into ``out_dir`` (every platform's wheels, or ``platform``'s
    only); returns its path. Options as :func:`build_extensions`."""
    return build_extensions(out_dir, platforms=[platform] if platform else None, **options)[0]


def _write_zip(out_dir: Path, meta: Message, licence: str | None, pool: Path,
               suffix: str | None, platforms: list[str], pythons: Sequence[str]) -> Path:
    names = sorted(w.name for w in pool.glob("*.whl")
                   if any(WheelName.parse(w.name).runs_on(p) for p in platforms))
    version = meta["Version"]
    target = out_dir / (f"retromesh-{version}.zip" if suffix is None
                        else f"retromesh-{version}-{suffix.replace('-', '_')}.zip")
    pure = all(WheelName.parse(n).pure for n in names)
    partial = target.with_name(target.name + ".part")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("blender_manifest.toml",
                   manifest_text(version, names, None if pure and suffix is None else platforms,
                                 meta=meta, licence=licence, pythons=pythons))
        z.writestr("__init__.py", _ROOT_INIT)
        if licence is not None:
            z.writestr("LICENSE", licence)
        for n in names:
            z.write(pool / n, f"wheels/{n}", compress_type=zipfile.ZIP_STORED)
    partial.replace(target)
    return target
