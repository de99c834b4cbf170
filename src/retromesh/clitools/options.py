"""Reading (``--set``) and writing (``-O``) options: parsed, named and checked up front.

The options a format takes are read off its ``to_scene``/``from_scene`` signatures (and those
of the direct converters, VXL <-> VOX), plus the generic ones: ``scale`` for every reading,
``embed_images`` and ``texture_path`` for glTF output. A value is
converted by the parameter's annotation (``float``, ``int``, ``bool``); ``fps`` and ``scale``
follow one rule for every format: a finite number greater than 0.
"""
from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .. import registry

__all__ = ["OptionError", "parse_pairs", "read_options", "write_options", "check_options",
           "mods_option", "positive", "GENERIC_READ", "GENERIC_WRITE", "companion_help"]

GENERIC_READ = ("scale", "mods")
GENERIC_WRITE = ("embed_images", "texture_path")
_SKIP = {"doc", "scene", "source", "options", "kwargs"}
_POSITIVE = ("fps", "scale")
#: reading options that have a flag of their own
_FLAGS = {"skeleton": "--skeleton", "mesh": "--mesh", "animations": "--animation",
          "hva": "--hva", "fps": "--fps", "scale": "--scale"}
_WRITE_FLAGS = {"embed_images": "--embed-images/--no-embed-images",
                "texture_path": "--texture-path"}


class OptionError(ValueError):
    """A command-line option is unknown or its value is wrong (exit 2)."""


def parse_pairs(pairs: Iterable[str] | None, flag: str) -> dict[str, Any]:
    """``key=value`` pairs; values are JSON when they parse as JSON, else strings."""
    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or not key:
            raise OptionError(f"{flag} takes key=value, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def _params(fn: Callable[..., Any] | None) -> dict[str, inspect.Parameter]:
    if fn is None:
        return {}
    try:
        sig = registry.signature(fn)
    except (TypeError, ValueError):
        return {}
    out = {}
    for i, (name, p) in enumerate(sig.parameters.items()):
        if i == 0 or name in _SKIP or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        out[name] = p
    return out


def read_options(fmt: registry.Format) -> dict[str, inspect.Parameter | None]:
    """The reading options ``fmt`` takes, with their parameters (None: generic)."""
    out: dict[str, inspect.Parameter | None] = dict(_params(fmt.to_scene))
    for name in GENERIC_READ:
        out.setdefault(name, None)
    return out


def write_options(fmt: registry.Format) -> dict[str, inspect.Parameter | None]:
    """The writing options ``fmt`` takes (its ``from_scene``, direct converters to it)."""
    out: dict[str, inspect.Parameter | None] = dict(_params(fmt.from_scene))
    for src_name, conv in registry.converters_to(fmt.name).items():
        src = registry.get(src_name)
        for name, p in _params(conv).items():
            if name not in read_options(src):
                out.setdefault(name, p)
    for name in fmt.forwards:          # options from_scene hands on through **options
        out.setdefault(name, None)
    if fmt.from_scene is not None and fmt.family == "glTF 2.0":
        for name in GENERIC_WRITE:
            out.setdefault(name, None)
    return out


def positive(name: str, value: Any) -> float:
    """One rule for ``fps`` and ``scale`` whatever the format: the library's
    (:func:`retromesh.units.positive`), a finite number > 0, refused as an OptionError."""
    from ..errors import DocumentError
    from ..units import positive as rule
    try:
        number = rule(name, value)
    except DocumentError as exc:
        raise OptionError(str(exc)) from None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else number


def _coerce(name: str, value: Any, param: inspect.Parameter | None) -> Any:
    if name in _POSITIVE:
        return positive(name, value)
    if param is None:
        return value
    ann = param.annotation if isinstance(param.annotation, str) else getattr(
        param.annotation, "__name__", "")
    default = param.default
    kinds = set(ann.replace("|", " ").replace("Optional[", " ").replace("]", " ").split())
    if not kinds and default is not inspect.Parameter.empty and default is not None:
        kinds = {type(default).__name__}
    if "Any" in kinds or not kinds or "str" in kinds:
        return value
    if "bool" in kinds:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "yes", "on", "false", "no", "off"):
            return value.lower() in ("true", "yes", "on")
        if value in (0, 1):
            return bool(value)
        raise OptionError(f"{name}: must be true or false, got {value!r}")
    if "int" in kinds and "float" not in kinds:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise OptionError(f"{name}: must be a whole number, got {value!r}")
    if "float" in kinds:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return value
        raise OptionError(f"{name}: must be a number, got {value!r}")
    return value


def check_options(options: dict[str, Any], valid: dict[str, inspect.Parameter | None],
                  what: str, fmt_names: str, flag: str) -> dict[str, Any]:
    """Options converted to their types; an unknown one raises OptionError naming the valid."""
    out = {}
    for name, value in options.items():
        flags = _FLAGS if flag == "--set" else _WRITE_FLAGS
        label = flags.get(name, f"{flag} {name}")
        if name not in valid and name in GENERIC_WRITE and flag == "-O":
            raise OptionError(f"{label}: only for glTF output (.glb, .gltf), not {fmt_names}")
        if name not in valid:
            listed = ", ".join(sorted(valid)) or "none"
            raise OptionError(f"{label}: not a {what} option of {fmt_names} (valid: {listed})")
        try:
            out[name] = _coerce(name, value, valid[name])
        except OptionError as exc:
            raise OptionError(label + str(exc)[len(name):]) from None
    return out


def mods_option(no_lua: bool, texture_path: list[Path] | None) -> dict[str, Any]:
    """The ``mods=`` reading option of ``--no-lua`` / ``--texture-path`` (none with
    ``--no-lua``: the model as its file has it)."""
    if no_lua:
        return {}
    return {"mods": {"lua": True, "texture_path": [str(p) for p in texture_path or []]}}


def companion_help(role: str, owners: bool = False) -> str:
    """The extensions of the files read as ``role`` (``.skl / .phxbn`` for ``skeleton``; with
    ``owners``, those of the files that read them), from the formats' declarations (no family
    imported): the help of ``--skeleton``, ``--mesh``, ``--animation``, ``--hva``."""
    exts: list[str] = []
    for f in registry.known():
        for c in f.companions:
            if c.role != role:
                continue
            for e in (f.extensions[:1] if owners else registry.companion_extensions(c)[:1]):
                if "." + e not in exts:
                    exts.append("." + e)
    return " / ".join(exts)
