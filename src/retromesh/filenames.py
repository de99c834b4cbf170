"""The names companion files are written under.

A game model is often several files: Lost Saga ``column.msh`` + ``column.skl`` +
``column_wave.ani`` + ``column.txt``, Overgrowth ``stick.phxbn`` + ``stick.obj`` + ``walk.anm``,
Westwood ``tank.vxl`` + ``tank.hva``. Games find them by name (Overgrowth's character XML names
its ``.anm`` files, Lost Saga's scripts their ``.ani`` files), so a scene remembers the names of
the files it was read from and writers give each companion its name back.

Reading (:func:`record`, run by :func:`retromesh.registry.convert_to_scene` for every format but
glTF): the scene's extras get ``FILES`` = ``{"source": "column.msh", ".skl": "column.skl",
"animations": [["column_wave", "column_wave.ani"]]}`` (companions by extension; animations as
``[animation name, file name]`` pairs), and each animation read from a file gets
``extras[FILE] = "column_wave.ani"``. An animation is matched to the file it came from by name:
readers name an animation after its file's stem. Both records ride through glTF (scene extras on
the glTF scene, animation extras on the animation) and through Blender (scene custom properties;
the extension puts animation extras on the actions). The scene-level pairs are the fallback
when an animation's own extras are lost.

Writing (:func:`companion`, :func:`animation_keys`): the keys of the ``{key: doc}`` dict a
``from_scene`` returns (see :func:`retromesh._write_result`). The rule, the same for every
family (docs/companions.md):

1. A companion or animation read from a file of the extension being written gets that file's
   name back. A name that began with the model's stem followed by ``.`` or ``_``
   (``column.skl``, ``column_wave.ani`` beside ``column.msh``) follows the output's stem
   (``-o pillar.msh`` writes ``pillar.skl`` and ``pillar_wave.ani``); any other name
   (``walk.anm`` beside ``stick.phxbn``) is written as it was.
2. Any other animation: ``<stem>_<name>.<ext>``, ``<name>`` being the animation's name with
   every character but ASCII letters, digits, ``-`` and ``_`` replaced by ``_`` (``animation<i>``
   when empty).
3. Two animations that would get one name: the first keeps it, the next get ``_2``, ``_3``...
   (case-insensitively, as on Windows).

Every name is reduced to a plain base name (:func:`retromesh.safenames.safe_name`) in the
output's folder when written.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scene import Animation, Scene

__all__ = ["FILES", "FILE", "record", "companion", "animation_keys", "animation_label"]

#: scene extras key: the files the scene was read from
FILES = "retromesh_files"
#: animation extras key: the file the animation was read from
FILE = "retromesh_file"


def _file_name(value: object) -> str | None:
    if isinstance(value, (str, os.PathLike)):
        name = Path(os.fspath(value)).name
        return name or None
    return None


def _names(value: object) -> list[str]:
    values: Iterable[object] = value if isinstance(value, (list, tuple)) else [value]
    return [n for n in map(_file_name, values) if n]


def _ext(name: str) -> str:
    return Path(name).suffix.lower()


def record(scene: Scene, source: object, options: Mapping[str, Any],
           companion_type: bool = False) -> None:
    """Note in ``scene`` the names of the files it was read from: ``source`` (the main file)
    and the path-valued reading ``options`` (``skeleton``, ``mesh``, ``animations``, ``hva``,
    ``material``...). Documents passed in memory have no name and are not noted.
    ``companion_type``: the main file is of a type read beside others (an ``.ani`` or
    ``.anm`` read with its skeleton), so it may be one of the animations."""
    files: dict[str, Any] = {}
    main = _file_name(source)
    if main:
        files["source"] = main
        if _ext(main):
            files[_ext(main)] = main
    candidates: list[str] = []
    for key, value in options.items():
        if key == "source":
            continue
        names = _names(value)
        if key == "animations":
            candidates += names
        else:
            for name in names:
                if _ext(name):
                    files.setdefault(_ext(name), name)
    if main and companion_type:
        candidates.append(main)          # a file read as an animation (.ani, .anm) names one
    pairs = _match_animations(scene.animations, candidates)
    if pairs:
        files["animations"] = pairs
    if set(files) - {"source", _ext(main or "")}:       # read from one file: nothing to say
        scene.extras[FILES] = files


def _match_animations(animations: list[Animation], candidates: list[str]) -> list[list[str]]:
    pairs: list[list[str]] = []
    taken: set[int] = set()
    for name in candidates:
        stem = Path(name).stem
        for i, anim in enumerate(animations):
            if i in taken or anim.name != stem:
                continue
            taken.add(i)
            if not isinstance(anim.extras.get(FILE), str):
                anim.extras[FILE] = name
            pairs.append([anim.name, anim.extras[FILE]])
            break
    return pairs


def _files(scene: Scene) -> dict[str, Any]:
    files = scene.extras.get(FILES)
    return files if isinstance(files, dict) else {}


def _key(name: str, model_stem: str) -> str:
    """The output key of a recorded file name: a suffix of the output's stem when the name
    began with the model's stem, else the plain name behind ``/``."""
    cut = len(model_stem)
    if model_stem and name[:cut].lower() == model_stem.lower() and name[cut:cut + 1] in "._" \
            and len(name) > cut:
        return name[cut:]
    return "/" + name


def _model_stem(files: Mapping[str, Any], main: str) -> str:
    """The stem of the model file being written: the recorded file of the writer's main
    extension (``stick.phxbn`` for a scene read from ``walk.anm`` with its skeleton), else the
    file the scene was read from."""
    for key in (main.lower(), "source"):
        name = files.get(key)
        if isinstance(name, str):
            return Path(name).stem
    return ""


def companion(scene: Scene, suffix: str, main: str) -> str:
    """The key under which a writer of ``main`` files (``".msh"``) files its companion of
    extension ``suffix`` (``".skl"``, ``".obj"``, ``".hva"``, ``".txt"``): the recorded
    file's name, else ``suffix`` (the output's stem + ``suffix``)."""
    files = _files(scene)
    name = files.get(suffix.lower())
    if isinstance(name, str) and _ext(name) == suffix.lower():
        return _key(name, _model_stem(files, main))
    return suffix


def animation_label(name: str, index: int) -> str:
    """An animation's name as it goes into a new file name (rule 2)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or f"animation{index}"


def _recorded(scene: Scene, files: Mapping[str, Any]) -> list[str | None]:
    """The file each animation was read from (its extras, else the scene's pairs by name)."""
    pairs = [p for p in files.get("animations", []) if isinstance(p, list) and len(p) == 2
             and all(isinstance(v, str) for v in p)]
    used = [False] * len(pairs)
    out: list[str | None] = []
    for anim in scene.animations:
        name = anim.extras.get(FILE)
        if not isinstance(name, str):
            name = None
            for k, (aname, fname) in enumerate(pairs):
                if not used[k] and aname == anim.name:
                    used[k], name = True, fname
                    break
        out.append(name)
    return out


def _unique(key: str, taken: set[str]) -> str:
    stem, ext = os.path.splitext(key)
    k = 2
    while key.lower() in taken:
        key, k = f"{stem}_{k}{ext}", k + 1
    taken.add(key.lower())
    return key


def animation_keys(scene: Scene, ext: str, main: str) -> list[str]:
    """One output key per animation of ``scene`` (in order) for animation files of extension
    ``ext`` (``".ani"``, ``".anm"``) beside a main file of extension ``main``; see the module
    docstring for the rule."""
    files = _files(scene)
    stem = _model_stem(files, main)
    recorded = _recorded(scene, files)
    keys: list[str | None] = [None] * len(scene.animations)
    taken: set[str] = set()
    for i, name in enumerate(recorded):          # names read from files first: they win
        if name and _ext(name) == ext.lower():
            key = _key(name, stem)
            if key.lower() not in taken:
                taken.add(key.lower())
                keys[i] = key
    for i, anim in enumerate(scene.animations):
        if keys[i] is None:
            keys[i] = _unique(f"_{animation_label(anim.name, i)}{ext}", taken)
    return [k for k in keys if k is not None]
