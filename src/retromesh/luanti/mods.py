"""Finding mods as Luanti does, running their registration code, gathering their media.

- **The mod a model lies in**: the nearest folder above it with ``init.lua`` or ``mod.conf``
  (models live in ``models/``), :func:`mod_of`.
- **The mods under a folder the user named** (:func:`find_mods`): the folder itself when it is a
  mod (``init.lua``) or a modpack (``modpack.conf``/``modpack.txt``: its mods, modpacks nest); a
  game (``game.conf``): the mods of its ``mods/``; any other folder (a ``mods/`` tree, a folder of
  games): the mods found below it. A mod's name is ``mod.conf``'s ``name``, else its folder's;
  folders starting with ``.`` are skipped (``content/mods.cpp``).
- **Load order** (:func:`load_order`, ``content/mod_configuration.cpp``): mods sorted by name
  (case-insensitively), those from modpacks first; then Luanti's resolution: mods whose
  ``depends`` and present ``optional_depends`` are all loaded are taken last-first from that
  list, each one loaded releasing the mods that waited for it. A mod whose hard dependency is
  missing (``mobs_animal`` without ``mobs``: the stubs stand in for it) would not be loaded by
  Luanti; it runs here after the others, in the same order.
- **Media** (:func:`gather_media`, ``Server::fillMediaCache`` and
  ``ServerModManager::getModsMediaPaths``): a game's ``textures/`` first, then every mod in
  reverse load order: its ``textures``, ``sounds``, ``media``, ``models``, ``locale`` and
  ``fonts`` folders with their sub-folders (not those starting with ``_`` or ``.``); the first
  file of a name wins, so a mod loaded later overrides an earlier one. ``--texture-path``
  folders come after all of these. A file or folder whose real path leaves the folder it was
  found in (a link) is skipped: nothing outside the folders the user named is read.

:func:`read_mods` runs every mod's ``init.lua`` in one fenced child process
(:mod:`.sandbox`) and returns a :class:`~retromesh.luanti.model.ModWorld`;
:func:`world_for_model` does so for the mod a model lies in.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..records import record
from .forms import registrations
from .model import LuaProblem, ModWorld, Registration
from .sandbox import DEFAULT_MEMORY, DEFAULT_TIMEOUT, run_mods

__all__ = ["ModSpec", "find_mods", "load_order", "mod_of", "gather_media", "read_mods",
           "world_for_model", "clear_cache", "MEDIA_FOLDERS"]

#: a mod's media folders, in Luanti's order (getModsMediaPaths)
MEDIA_FOLDERS = ("textures", "sounds", "media", "models", "locale", "fonts")
MAX_DEPTH = 6           # folders below the one named, when looking for mods
MAX_CACHE = 8
MAX_CONF = 2**20        # mod.conf, depends.txt
MOD_NAME = re.compile(r"[a-z0-9_]+")       # content/mods.h MODNAME_ALLOWED_CHARS


@record(frozen=True)
class ModSpec:
    """One mod: its name, folder and dependencies (``mod.conf``, else ``depends.txt``)."""
    name: str
    path: Path
    depends: tuple[str, ...] = ()
    optional_depends: tuple[str, ...] = ()
    in_modpack: bool = False


def read_text(path: Path) -> str | None:
    """A small regular file inside its own folder (not a link out, a FIFO or a huge file)."""
    try:
        if not path.is_file() or not _inside(path, path.parent) or path.stat().st_size > MAX_CONF:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_conf(path: Path) -> dict[str, str]:
    """A Luanti settings file (``key = value``, ``#`` comments, ``\"\"\"`` multi-line values)."""
    out: dict[str, str] = {}
    text = read_text(path)
    if text is None:
        return out
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = (s.strip() for s in line.split("=", 1))
        if value.startswith('"""'):
            parts = [value[3:]]
            while i < len(lines) and not parts[-1].rstrip().endswith('"""'):
                parts.append(lines[i])
                i += 1
            value = "\n".join(parts).rstrip()[:-3] if parts[-1].rstrip().endswith('"""') else "\n".join(parts)
        out[key] = value
    return out


def _names(value: str) -> tuple[str, ...]:
    return tuple(n for n in "".join(value.split()).split(",") if n)


def mod_spec(folder: Path, in_modpack: bool = False) -> ModSpec | None:
    """The mod in ``folder`` (it has ``init.lua``), or None."""
    if not (folder / "init.lua").is_file():
        return None
    conf = read_conf(folder / "mod.conf")
    depends, optional = _names(conf.get("depends", "")), _names(conf.get("optional_depends", ""))
    if "depends" not in conf and "optional_depends" not in conf:
        depends, optional = _depends_txt(folder / "depends.txt")
    name = conf.get("name", "")
    if not MOD_NAME.fullmatch(name):        # Luanti refuses such a name: the folder's, made one
        name = re.sub(r"[^a-z0-9_]", "_", folder.name.lower())
    return ModSpec(name, folder, depends, optional, in_modpack)


def _depends_txt(path: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    hard: list[str] = []
    soft: list[str] = []
    text = read_text(path)
    if text is None:
        return (), ()
    for line in text.splitlines():
        name = line.strip()
        if name.endswith("?"):
            soft.append(name[:-1].strip())
        elif name:
            hard.append(name)
    return tuple(hard), tuple(soft)


def _is_modpack(folder: Path) -> bool:
    return (folder / "modpack.conf").is_file() or (folder / "modpack.txt").is_file()


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
                      key=lambda p: p.name)
    except OSError:
        return []


def _mods_in_path(folder: Path, in_modpack: bool, depth: int) -> list[ModSpec]:
    """Luanti's getModsInPath: the mods and modpacks directly in ``folder``."""
    out: list[ModSpec] = []
    for sub in _subfolders(folder):
        if _is_modpack(sub):
            if depth < MAX_DEPTH:
                out += _mods_in_path(sub, True, depth + 1)
        else:
            spec = mod_spec(sub, in_modpack)
            if spec is not None:
                out.append(spec)
    return out


def find_mods(folder: Path, games: list[Path] | None = None, depth: int = 0) -> list[ModSpec]:
    """The mods under a folder the user named (see the module's text); game folders found on the
    way are appended to ``games`` (their ``textures/`` is media)."""
    if (folder / "init.lua").is_file() and not _is_modpack(folder):
        spec = mod_spec(folder)
        return [spec] if spec is not None else []
    if _is_modpack(folder):
        return _mods_in_path(folder, True, depth)
    if (folder / "game.conf").is_file():
        if games is not None:
            games.append(folder)
        return _mods_in_path(folder / "mods", False, depth)
    out = _mods_in_path(folder, False, depth)
    if depth < MAX_DEPTH:
        for sub in _subfolders(folder):
            if not (sub / "init.lua").is_file() and not _is_modpack(sub):
                out += find_mods(sub, games, depth + 1)
    return out


def load_order(mods: Sequence[ModSpec]) -> list[ModSpec]:
    """Luanti's load order (see the module's text); a name found twice keeps its first mod."""
    by_name: dict[str, ModSpec] = {}
    for m in sorted(mods, key=lambda m: (not m.in_modpack, m.name.lower())):
        by_name.setdefault(m.name, m)
    pending = list(by_name.values())
    names = set(by_name)
    waits = {m.name: set(m.depends) | (set(m.optional_depends) & names) for m in pending}
    satisfied = [m for m in pending if not waits[m.name]]
    unsatisfied = [m for m in pending if waits[m.name]]
    order: list[ModSpec] = []
    while satisfied:
        mod = satisfied.pop()
        order.append(mod)
        still = []
        for other in unsatisfied:
            waits[other.name].discard(mod.name)
            if waits[other.name]:
                still.append(other)
            else:
                satisfied.append(other)
        unsatisfied = still
    return order + unsatisfied


def mod_of(model: Path, levels: int = 3) -> Path | None:
    """The folder of the mod ``model`` lies in (``init.lua`` or ``mod.conf``), or None."""
    folder = model.resolve().parent
    for _ in range(levels):
        if ((folder / "init.lua").is_file() or (folder / "mod.conf").is_file()) \
                and not _is_modpack(folder):
            return folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _recursive_dirs(top: Path) -> list[Path]:
    """Luanti's GetRecursiveDirs: ``top`` and its sub-folders (not ``_``/``.`` ones), staying
    inside ``top``."""
    if not top.is_dir():
        return []
    out = [top]
    i = 0
    while i < len(out) and len(out) < 10000:
        for sub in _subfolders(out[i]):
            if not sub.name.startswith("_") and _inside(sub, top):
                out.append(sub)
        i += 1
    return out


def gather_media(order: Sequence[ModSpec], games: Iterable[Path] = (),
                 texture_path: Iterable[Path] = ()) -> dict[str, Path]:
    """Media name -> file, as Luanti gathers it (see the module's text)."""
    roots: list[tuple[Path, Path]] = []      # (folder to list, the folder it must stay in)
    for game in games:
        roots += [(d, game) for d in _recursive_dirs(game / "textures")]
    for mod in reversed(order):
        for sub in MEDIA_FOLDERS:
            roots += [(d, mod.path) for d in _recursive_dirs(mod.path / sub)]
    for extra in texture_path:
        roots += [(d, extra) for d in _recursive_dirs(Path(extra))]
    media: dict[str, Path] = {}
    for folder, root in roots:
        try:
            entries = sorted(folder.iterdir(), key=lambda p: p.name)
        except OSError:
            continue
        for f in entries:
            if f.name not in media and f.is_file() and _inside(f, root):
                media[f.name] = f
    return media


def _fingerprint(mods: Sequence[ModSpec]) -> tuple[tuple[str, int, int], ...]:
    """What a cached world depends on: every mod's Lua and conf files (name, size, mtime)."""
    out = []
    for m in mods:
        for dirpath, dirnames, filenames in os.walk(m.path):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in MEDIA_FOLDERS]
            for name in filenames:
                if name.endswith((".lua", ".conf", ".txt")):
                    try:
                        st = os.stat(os.path.join(dirpath, name))
                    except OSError:
                        continue
                    out.append((os.path.join(dirpath, name), st.st_size, st.st_mtime_ns))
    return tuple(out)


_cache: dict[tuple[object, ...], ModWorld] = {}


def clear_cache() -> None:
    """Forget the worlds read so far (the next read_mods runs the Lua again)."""
    _cache.clear()


def read_mods(folders: Iterable[Path], *, texture_path: Iterable[Path] = (), lua: bool = True,
              timeout: float = DEFAULT_TIMEOUT, memory: int = DEFAULT_MEMORY) -> ModWorld:
    """Every mod under ``folders``: its registrations that name a model (``lua=False``: none,
    the Lua is not run), the problems, the media. Results are cached while the mods' Lua and
    conf files are unchanged."""
    games: list[Path] = []
    found: list[ModSpec] = []
    for folder in folders:
        found += find_mods(Path(folder), games)
    order = load_order(found)
    extra = tuple(Path(p) for p in texture_path)
    key = (tuple(m.path for m in order), tuple(games), extra, lua, timeout, memory,
           _fingerprint(order) if lua else ())
    cached = _cache.get(key)
    if cached is None:
        cached = _build(order, games, extra, lua, timeout, memory)
        if len(_cache) >= MAX_CACHE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = cached
    # a copy: callers may change their world without changing the next caller's
    return ModWorld(list(cached.registrations), list(cached.problems), dict(cached.media),
                    cached.mods)


def _build(order: list[ModSpec], games: list[Path], texture_path: tuple[Path, ...], lua: bool,
           timeout: float, memory: int) -> ModWorld:
    regs: list[Registration] = []
    problems: list[LuaProblem] = []
    if lua and order:
        names = {m.name for m in order}
        missing = sorted({d for m in order for d in m.depends} - names)
        lenient = [m.name for m in order if set(m.depends) - names]
        run = run_mods([(m.name, m.path) for m in order], stand_ins=missing, lenient=lenient,
                       timeout=timeout, memory=memory)
        problems = run.problems
        for raw in run.registrations:
            regs += registrations(raw)
    media = gather_media(order, games, texture_path)
    return ModWorld(regs, problems, media, tuple(m.name for m in order))


def world_for_model(model: Path, *, within: Path | None = None,
                    texture_path: Iterable[Path] = (), lua: bool = True,
                    timeout: float = DEFAULT_TIMEOUT,
                    memory: int = DEFAULT_MEMORY) -> ModWorld | None:
    """The world of the mod ``model`` lies in, or None when it lies in none. With ``within`` (a
    folder the user named that holds the model), every mod under it is read (their APIs and
    media too); else the model's own mod only."""
    mod = mod_of(model)
    if mod is None:
        return None
    if within is not None and _inside(mod, within):
        return read_mods([within], texture_path=texture_path, lua=lua, timeout=timeout,
                         memory=memory)
    return read_mods([mod], texture_path=texture_path, lua=lua, timeout=timeout, memory=memory)
