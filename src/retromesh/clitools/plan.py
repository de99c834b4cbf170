"""Which files a conversion reads together, and the names it writes.

A model is often several files: Lost Saga ``body.msh`` + ``body.skl`` + ``body_walk.ani``,
Overgrowth ``man.phxbn`` + ``man.obj`` + ``man_run.anm``, Westwood ``tank.vxl`` + ``tank.hva``.
A folder conversion groups them as a person would — one output per model, the companions read
with it and not converted again on their own — and names the output after the model
(``tank.glb``). When two files of one folder would give the same name, a game model wins
over an exchange copy or side file (``tank.vxl`` -> tank.glb, ``tank.vox`` -> tank.vox.glb);
two game models of one name (``box.b3d``, ``box.solid``) both keep their extension.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import registry

__all__ = ["Group", "companions", "members", "scannable", "group_folder", "name_outputs",
           "auto_companions"]

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


@dataclass
class Group:
    """One model: the file converted and the companions read with it."""
    source: Path
    options: dict[str, Any] = field(default_factory=dict)
    members: list[Path] = field(default_factory=list)


def scannable(path: Path) -> bool:
    """A file a folder conversion picks up: a known extension that converts to a scene."""
    ext = path.suffix.lower().lstrip(".")
    return bool(ext) and any(f.to_scene is not None and f.family != "glTF 2.0"
                             for f in registry.claiming(ext))


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
    animations ``<stem>.ext`` or ``<stem>_<name>.ext``). Empty when it has none."""
    rule = _RULES.get(primary.suffix.lower().lstrip("."))
    if rule is None:
        return {}
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
        if found:
            out["animations"] = found
    return out


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
    for folder in sorted(by_dir):
        here = sorted(by_dir[folder])
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
