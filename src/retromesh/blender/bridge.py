"""What the Blender operators do besides calling Blender: group the files a user picked into
conversions (a main file and its companions), convert to a temporary GLB and back, collect the
LossWarnings for Blender's report. No bpy here, so all of it is tested without Blender.

Grouping: among the picked files, a mesh or model file is the main file of a group; skeletons,
animations and meshes picked with it become its companions (``.msh`` + ``.skl`` + ``.ani``;
``.phxbn`` + ``.obj`` + ``.anm``; ``.vxl`` + ``.hva``). Companions not picked but lying beside
the main file are found by name: ``<stem>.skl`` and ``<stem>[_*].ani`` for a ``.msh``,
``<stem>.obj`` and ``<stem>[_*].anm`` for a ``.phxbn``, ``<stem>.msh`` for a ``.skl``,
``<stem>.hva`` for a ``.vxl`` (the VXL reader itself looks there too). These are the names
retromesh's writers give companions named after the model; a companion of its own name
(``walk.anm``) is written back under that name (:mod:`retromesh.filenames`: the names ride in
scene, object and action custom properties). Animations of other names are found too when the
main file is the only model of its folder (as a folder conversion groups them).
"""
from __future__ import annotations

import json
import math
import os
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path
from typing import Any

from .. import registry, restore, restore_editor
from ..batch import companions as companions_beside, matches
from ..extras import BLENDER_MARK
from ..gltf.container import pack, unpack
from ..records import record
from .missing_images import MISSING_IMAGES, keep_missing_images, restore_missing_images

__all__ = ["Job", "group_files", "load_to_glb", "names_a_format", "convert_glb",
           "import_extensions", "export_extensions", "drop_extensions", "encode_extras",
           "decode_extras", "JSON_MARK", "files_record", "FILES_PROPERTY", "encode_extras_value",
           "decode_extras_value", "snap_noise", "merge_mesh_joints", "BLENDER_MARK", "SOURCE",
           "NODE_ORDER", "restore_node_order", "MISSING_IMAGES"]

# What is a main file, which picked files are its companions and under which option, what is
# looked for beside it, what Blender imports and exports: each format's registration says it
# (``registry.Format.companions``, ``grouping``, ``blender``); the functions below read it.


def _formats() -> list[registry.Format]:
    return registry.formats()


def _flags(f: registry.Format, formats: list[registry.Format]) -> tuple[str, ...]:
    """What Blender's importer does with ``f``'s files (``registry.Format.blender``)."""
    if f.blender is not None:
        return f.blender
    out: tuple[str, ...] = ()
    if f.to_scene is not None or any(c.format == f.name and c.role and o.to_scene is not None
                                     for o in formats for c in o.companions):
        out += ("import", "drop")
    if f.from_scene is not None:
        out += ("export",)
    return out


def import_extensions() -> tuple[str, ...]:
    """The extensions the import dialog offers (every extension of a format it imports)."""
    fs = _formats()
    return tuple(dict.fromkeys(e for f in fs if "import" in _flags(f, fs) for e in f.extensions))


def drop_extensions() -> tuple[str, ...]:
    """The extensions taken by drag and drop onto the viewport (``.obj`` stays Blender's)."""
    fs = _formats()
    return tuple(dict.fromkeys(e for f in fs if "drop" in _flags(f, fs) for e in f.extensions))


def export_extensions() -> tuple[str, ...]:
    """The extensions the export dialog offers (the own extension of each format it exports)."""
    fs = _formats()
    return tuple(dict.fromkeys(f.extensions[0] for f in fs
                               if "export" in _flags(f, fs) and f.extensions))


def _home(ext: str, formats: list[registry.Format]) -> list[registry.Format]:
    return [f for f in formats if f.extensions[:1] == (ext,)]


def _picked_roles(main_ext: str, formats: list[registry.Format]
                  ) -> dict[str, registry.Companion]:
    """Companion extension -> the companion a picked file of it is for a ``main_ext`` file
    (files of formats that claim no extension, a material script, are never picked up)."""
    out: dict[str, registry.Companion] = {}
    for f in _home(main_ext, formats):
        for c in f.companions:
            fmt = registry.lookup(c.format)
            if c.role and fmt is not None:
                for e in fmt.extensions:
                    out.setdefault(e, c)
    return out


def _passive(formats: list[registry.Format]) -> set[str]:
    """Picked with a model, these are read from beside it by the formats themselves: images,
    and companions of formats that claim no extension (Lost Saga's ``<mesh>.txt``)."""
    from ..imageformats import image_extensions
    out = set(image_extensions())
    for f in formats:
        for c in f.companions:
            fmt = registry.lookup(c.format)
            if fmt is not None and not fmt.extensions:
                out.update(registry.companion_extensions(c))
    return out


def _mains(files: list[Path], formats: list[registry.Format]) -> list[Path]:
    """The picked files that can be a main file (their format converts to a scene), in the
    order they claim companions (``registry.GROUPING``), else as picked."""
    def tier(p: Path) -> int:
        return min((registry.GROUPING.index(f.grouping) for f in _home(_ext(p), formats)
                    if f.to_scene is not None), default=-1)
    return sorted((p for p in files if tier(p) >= 0), key=tier)


@record
class Job:
    """One conversion: the main file and the reading options naming its companions."""
    main: Path
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def companions(self) -> list[Path]:
        out: list[Path] = []
        for value in self.options.values():
            out += [Path(v) for v in (value if isinstance(value, list) else [value])
                    if isinstance(v, (str, Path))]
        return out


def _ext(p: Path) -> str:
    return p.suffix.lower().lstrip(".")


def _beside(main: Path, pattern: str) -> list[Path]:
    """Files beside ``main`` matching ``pattern`` (``{stem}`` filled in), case-insensitively."""
    try:
        return sorted(p for p in main.parent.iterdir() if p.is_file() and matches(p, main, pattern))
    except OSError:
        return []


def _take_picked(job: Job, left: list[Path], roles: dict[str, registry.Companion]) -> None:
    """The picked files of the main file's companion extensions become its options."""
    main = job.main
    for comp in [p for p in left if _ext(p) in roles]:
        c = roles[_ext(comp)]
        if c.many:
            job.options.setdefault(c.role, []).append(comp)
        elif c.role not in job.options or comp.stem.lower() == main.stem.lower():
            if c.role in job.options:
                left.append(job.options[c.role])
            job.options[c.role] = comp
        else:
            continue
        left.remove(comp)


def _find_beside(job: Job, formats: list[registry.Format]) -> None:
    """Companions not picked: looked for beside the main file by their name patterns."""
    main = job.main
    for f in _home(_ext(main), formats):
        for c in f.companions:
            if not c.role or not c.beside or c.by_reader or c.role in job.options:
                continue
            found = [p for pat in c.beside for p in _beside(main, pat)]
            if not found and c.many:
                # companions of any name beside the only model of its folder (an exported
                # walk.anm keeps its name), as convert and a folder find them
                found = companions_beside(main).get(c.role, [])
            if found:
                job.options[c.role] = found if c.many else found[0]


def group_files(paths: Iterable[str | os.PathLike], *, find_beside: bool = True) -> list[Job]:
    """Split the picked files into conversions (see the module docstring)."""
    files = []
    for p in paths:
        p = Path(p)
        if p not in files:
            files.append(p)
    formats = _formats()
    left = list(files)
    jobs: list[Job] = []
    for main in _mains(files, formats):
        if main not in left:
            continue
        left.remove(main)
        job = Job(main)
        _take_picked(job, left, _picked_roles(_ext(main), formats))
        if find_beside:
            _find_beside(job, formats)
        jobs.append(job)
    for fmt in formats:                 # groups a format makes itself (Lugaru's characters)
        if fmt.group_picked is not None:
            for main, options, more in fmt.group_picked(left):
                jobs.append(Job(main, options))
                left = [p for p in left if p != main and p not in more]
    if jobs:
        passive = _passive(formats)
        left = [p for p in left if _ext(p) not in passive]
    jobs += [Job(p) for p in left]     # anything else: let retromesh say what it is
    return jobs


# -- extras through Blender ----------------------------------------------------------------------
# Blender's glTF importer turns ``extras`` into custom properties, but a value a custom property
# cannot hold (None, a list of dicts, a mixed list, a 64-bit int...) comes back as Python's
# ``str()`` of it, and animations' extras are not imported at all (the exporter does write action
# custom properties back). So before Blender sees our GLB, every extras value that is not a plain
# string or number is stored as JSON text behind JSON_MARK (readable and editable in Blender's
# custom properties panel), the addon puts the animations' extras on their actions, and the GLB
# Blender writes is decoded again before retromesh converts it.

#: prefix of an extras string that holds a JSON value
JSON_MARK = "retromesh-json:"
_INT32 = 2 ** 31


def _plain(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return -_INT32 <= value < _INT32
    return isinstance(value, (str, float))


def encode_extras_value(extras: Any) -> Any:
    if not isinstance(extras, dict):
        return extras
    return {k: v if _plain(v) else JSON_MARK + json.dumps(v, separators=(",", ":"))
            for k, v in extras.items()}


def decode_extras_value(extras: Any) -> Any:
    if not isinstance(extras, dict):
        return extras
    out = {}
    for k, v in extras.items():
        if isinstance(v, str) and v.startswith(JSON_MARK):
            try:
                v = json.loads(v[len(JSON_MARK):])
            except ValueError:
                pass                     # edited into something that is no JSON: keep the text
        out[k] = v
    return out


def _walk_extras(node: Any, fn) -> None:
    if isinstance(node, dict):
        if "extras" in node:
            node["extras"] = fn(node["extras"])
        for k, v in node.items():
            if k != "extras":
                _walk_extras(v, fn)
    elif isinstance(node, list):
        for v in node:
            _walk_extras(v, fn)


def _read_glb(path: Path) -> tuple[dict, bytes | None]:
    """The JSON (parsed) and the BIN chunk of the GLB at ``path``; FormatError if it is none."""
    json_text, bin_data = unpack(Path(path).read_bytes(), file=str(path))
    return json.loads(json_text), bin_data


def _write_glb(path: Path, doc: dict, bin_data: bytes | None) -> None:
    Path(path).write_bytes(pack(json.dumps(doc, separators=(",", ":")).encode("utf-8"), bin_data))


# A node that is both a mesh and a joint (Blitz3D's skinned mesh is the root of its bones)
# becomes three in Blender: an armature object, the bone and a mesh object beside it. The bone
# carries MESH_JOINT in its extras; in the GLB Blender writes, the armature node and the mesh
# node fold back into that joint (only when neither moves on its own: identity transforms, no
# animation of their own).
MESH_JOINT = "retromesh_mesh_joint"


def _mark_mesh_joints(doc: dict) -> None:
    joints = {j for skin in doc.get("skins", []) for j in skin.get("joints", [])}
    for i, node in enumerate(doc.get("nodes", [])):
        if "mesh" in node and i in joints:
            node.setdefault("extras", {})[MESH_JOINT] = 1


def _identity(node: dict) -> bool:
    m = node.get("matrix")
    if m is not None and [round(v, 6) for v in m] != [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]:
        return False
    return ([round(v, 6) for v in node.get("translation", [0, 0, 0])] == [0, 0, 0]
            and [round(v, 6) for v in node.get("rotation", [0, 0, 0, 1])] in ([0, 0, 0, 1], [0, 0, 0, -1])
            and [round(v, 6) for v in node.get("scale", [1, 1, 1])] == [1, 1, 1])


def _remove_nodes(doc: dict, gone: set[int]) -> None:
    nodes = doc["nodes"]
    new: dict[int, int] = {}
    for i in range(len(nodes)):
        if i not in gone:
            new[i] = len(new)
    doc["nodes"] = [n for i, n in enumerate(nodes) if i not in gone]
    for n in doc["nodes"]:
        if "children" in n:
            n["children"] = [new[c] for c in n["children"] if c in new]
            if not n["children"]:
                del n["children"]
    for skin in doc.get("skins", []):
        skin["joints"] = [new[j] for j in skin.get("joints", [])]
        if "skeleton" in skin:
            if skin["skeleton"] in new:
                skin["skeleton"] = new[skin["skeleton"]]
            else:
                del skin["skeleton"]
    for scene in doc.get("scenes", []):
        scene["nodes"] = [new[n] for n in scene.get("nodes", []) if n in new]
    for anim in doc.get("animations", []):
        for ch in anim.get("channels", []):
            target = ch.get("target", {})
            if "node" in target:
                target["node"] = new[target["node"]]


def merge_mesh_joints(doc: dict) -> None:
    nodes = doc.get("nodes", [])
    parent = {c: i for i, n in enumerate(nodes) for c in n.get("children", [])}
    joints = {j for skin in doc.get("skins", []) for j in skin.get("joints", [])}
    animated = {ch.get("target", {}).get("node") for a in doc.get("animations", [])
                for ch in a.get("channels", [])}
    gone: set[int] = set()
    for b, bone in enumerate(nodes):
        extras = bone.get("extras")
        if not isinstance(extras, dict) or MESH_JOINT not in extras:
            continue
        del extras[MESH_JOINT]
        if not extras:
            del bone["extras"]
        a = parent.get(b)
        if a is None or a in gone or a in joints or a in animated or "mesh" in nodes[a] \
                or not _identity(nodes[a]) or "mesh" in bone:
            continue
        meshes = [m for m in nodes[a].get("children", []) if m != b and "mesh" in nodes[m]
                  and "skin" in nodes[m] and not nodes[m].get("children") and m not in joints
                  and m not in animated and _identity(nodes[m])
                  and b in doc["skins"][nodes[m]["skin"]].get("joints", [])]
        if len(meshes) != 1:
            continue
        m = meshes[0]
        bone["mesh"], bone["skin"] = nodes[m]["mesh"], nodes[m]["skin"]
        if isinstance(nodes[m].get("extras"), dict):
            bone["extras"] = {**nodes[m]["extras"], **bone.get("extras", {})}
        rest = [c for c in nodes[a].get("children", []) if c != m]
        up = parent.get(a)
        if up is None:
            for scene in doc.get("scenes", []):
                if a in scene.get("nodes", []):
                    i = scene["nodes"].index(a)
                    scene["nodes"][i:i + 1] = rest
        else:
            i = nodes[up]["children"].index(a)
            nodes[up]["children"][i:i + 1] = rest
        gone |= {a, m}
    if gone:
        _remove_nodes(doc, gone)


def snap_noise(doc: dict, eps: float = 1e-6) -> None:
    """Blender stores transforms as float32 matrices: an identity rotation comes back with
    components around 1e-8, a unit scale as 0.9999999. Snap those to the exact values (writers
    test for "no rotation" and would otherwise add nodes)."""
    for node in doc.get("nodes", []):
        q = node.get("rotation")
        if q is not None:
            q = [0.0 if abs(v) < eps else v for v in q]
            if sum(v != 0.0 for v in q) == 1:      # a unit quaternion: that one is +-1
                q = [math.copysign(1.0, v) if v else 0.0 for v in q]
            node["rotation"] = q
        sc = node.get("scale")
        if sc is not None:
            node["scale"] = [1.0 if abs(v - 1) < eps else v for v in sc]


# Blender keeps its objects (and the children of each) sorted by name, so the GLB it writes
# lists the nodes in another order than ours; writers that keep the file's order of parts by
# the order of nodes (the limbs of a .vxl) would write another file. Each node carries its
# index in the GLB we made (NODE_ORDER, in its extras: Blender keeps those on objects and
# bones); in the GLB Blender writes, nodes, children and scene roots go back to that order.
# Nodes Blender made (an armature object) go just before the first node they hold; nodes
# without a number (added in Blender) after all others, in Blender's order.
#: node extras key: the node's index in the GLB retromesh wrote for Blender
NODE_ORDER = "retromesh_node"


def _mark_node_order(doc: dict) -> None:
    for i, node in enumerate(doc.get("nodes", [])):
        extras = node.setdefault("extras", {})
        if isinstance(extras, dict):
            extras[NODE_ORDER] = i


def _node_ranks(nodes: list[dict]) -> list[float] | None:
    """Each node's place in the order to restore (see above), None when no node has one."""
    marks: list[float | None] = []
    for node in nodes:
        extras = node.get("extras")
        value = extras.pop(NODE_ORDER, None) if isinstance(extras, dict) else None
        if isinstance(extras, dict) and not extras:
            del node["extras"]
        mark = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else math.nan
        marks.append(mark if math.isfinite(mark) else None)
    if all(m is None for m in marks):
        return None
    ranks: list[float | None] = list(marks)

    def first_held(i: int, seen: set[int]) -> float | None:
        if marks[i] is not None:
            return marks[i]
        seen.add(i)
        held = [first_held(c, seen) for c in nodes[i].get("children", [])
                if isinstance(c, int) and 0 <= c < len(nodes) and c not in seen]
        known = [h for h in held if h is not None]
        return min(known) if known else None

    for i, m in enumerate(marks):
        if m is None:
            found = first_held(i, set())
            ranks[i] = found - 0.5 if found is not None else None
    last = max(r for r in ranks if r is not None)
    return [r if r is not None else last + 1 + i for i, r in enumerate(ranks)]


def restore_node_order(doc: dict) -> None:
    """Put the nodes of a GLB Blender wrote back in the order retromesh gave them (above)."""
    nodes = doc.get("nodes") or []
    ranks = _node_ranks(nodes)
    if ranks is None:
        return
    order = sorted(range(len(nodes)), key=lambda i: (ranks[i], i))
    new = {old: k for k, old in enumerate(order)}
    by_rank = lambda ids: sorted(ids, key=lambda i: (ranks[i], i) if i in new else (math.inf, 0))  # noqa: E731
    doc["nodes"] = [nodes[i] for i in order]
    for node in doc["nodes"]:
        if isinstance(node.get("children"), list):
            node["children"] = [new.get(c, c) for c in by_rank(node["children"])]
    for scene in doc.get("scenes", []):
        if isinstance(scene.get("nodes"), list):
            scene["nodes"] = [new.get(n, n) for n in by_rank(scene["nodes"])]
    for skin in doc.get("skins", []):
        skin["joints"] = [new.get(j, j) for j in skin.get("joints", [])]
        if "skeleton" in skin:
            skin["skeleton"] = new.get(skin["skeleton"], skin["skeleton"])
    for anim in doc.get("animations", []):
        for ch in anim.get("channels", []):
            target = ch.get("target", {})
            if "node" in target:
                target["node"] = new.get(target["node"], target["node"])


# The names of the files a model was read from (retromesh.filenames) ride in the scene's extras,
# which Blender keeps as custom properties of its scene: one per Blender scene, so a second model
# imported into it replaces the first one's. The extension also puts them on each imported root
# object (FILES_PROPERTY); in the GLB Blender writes, the record of the exported objects becomes
# the scene's again.
#: the custom property of an imported root object holding its files' names (JSON text)
FILES_PROPERTY = "retromesh_files"


def files_record(glb: str | os.PathLike) -> Any:
    """The record of file names in a GLB's scene extras (as :func:`encode_extras` left it: JSON
    text behind JSON_MARK), None when it has none."""
    from ..filenames import FILES
    doc, _ = _read_glb(Path(glb))
    scenes = doc.get("scenes") or [{}]
    extras = scenes[0].get("extras") if isinstance(scenes[0], dict) else None
    return extras.get(FILES) if isinstance(extras, dict) else None


def _lift_files_record(doc: dict) -> None:
    """The first record found on an exported object becomes the scene's (see above)."""
    from ..filenames import FILES
    found = None
    for node in doc.get("nodes", []):
        extras = node.get("extras")
        if isinstance(extras, dict) and FILES_PROPERTY in extras:
            value = extras.pop(FILES_PROPERTY)
            if not extras:
                del node["extras"]
            if found is None and isinstance(value, dict):
                found = value
    if found is not None and doc.get("scenes"):
        scene = doc["scenes"][doc.get("scene", 0) if isinstance(doc.get("scene"), int) else 0]
        scene.setdefault("extras", {})[FILES] = found


def encode_extras(glb: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Make the GLB's extras survive Blender (see above); returns each animation's encoded
    extras by animation name (for the caller to put on the actions Blender makes)."""
    doc, rest = _read_glb(Path(glb))
    keep_missing_images(doc)
    _mark_mesh_joints(doc)
    _mark_node_order(doc)
    _walk_extras(doc, encode_extras_value)
    _write_glb(Path(glb), doc, rest)
    return {a.get("name", f"animation_{i}"): a["extras"]
            for i, a in enumerate(doc.get("animations", [])) if isinstance(a.get("extras"), dict)}


def _mark_blender(doc: dict) -> None:
    """The scene's extras say which editor wrote the GLB (:data:`BLENDER_MARK`): writers then
    take a value within their stated tolerance of what retromesh wrote as unedited."""
    scenes = doc.get("scenes") or []
    # the scene a reader opens (Blender 4.5 writes an empty scene of its own first)
    at = doc.get("scene")
    at = at if isinstance(at, int) and 0 <= at < len(scenes) else 0
    if scenes and isinstance(scenes[at], dict):
        generator = doc.get("asset", {}).get("generator") if isinstance(doc.get("asset"), dict) \
            else None
        scenes[at].setdefault("extras", {})[BLENDER_MARK] = str(generator or "Blender")


def decode_extras(glb: str | os.PathLike) -> None:
    """Undo :func:`encode_extras` in a GLB Blender wrote."""
    doc, rest = _read_glb(Path(glb))
    _walk_extras(doc, decode_extras_value)
    _mark_blender(doc)
    _lift_files_record(doc)
    restore_missing_images(doc, rest)
    snap_noise(doc)
    merge_mesh_joints(doc)
    restore_node_order(doc)
    _write_glb(Path(glb), doc, rest)


def _warned(caught: list[warnings.WarningMessage]) -> list[str]:
    from ..errors import LossWarning
    seen: list[str] = []
    for w in caught:
        if issubclass(w.category, LossWarning) and str(w.message) not in seen:
            seen.append(str(w.message))
    return seen


def names_a_format(target: str | os.PathLike) -> bool:
    """A file name without extension that a format keeps in its folder
    (``Data/Skeleton/BasicFigure``: a Lugaru skeleton and ``../Animations``)."""
    from .. import registry
    from ..errors import UnknownFormatError
    try:
        registry.target_format(Path(target))
    except UnknownFormatError:
        return False
    return True


# Blender gives back what retromesh wrote a hair off (bone matrices through its own axes, UVs
# flipped twice, normals in 16 bits). For the families whose writers put back what
# retromesh.restore_editor.keep_written kept (their from_scene calls put_back_written), the GLB made
# for Blender keeps the values as written, and the writer finds them again within the
# tolerance (docs/lossless.md). Only here: a GLB converted on the plain path needs none of it.
#: family -> whether each vertex also carries its index (``put_back_written`` merges the
#: vertices Blender split and puts them back in their order, where the copies are the same again)
KEEP_WRITTEN = {"Lost Saga": True, "LithTech": True}


def load_to_glb(job: Job, glb: str | os.PathLike, **options: Any) -> list[str]:
    """Read ``job`` with retromesh and write it as ``glb``; returns the LossWarnings' texts.
    ``options`` the main file's format does not take (``fps`` for a B3D...) are left out."""
    import retromesh
    accepted = retromesh.detect(job.main).scene_options
    # (``mods``: a model in a Luanti mod dressed as the mod shows it; every format takes it)
    options = {k: v for k, v in options.items() if k in accepted or k == "mods"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with restore.editor_records():      # values Blender moves kept as read, not as roundings
            scene = retromesh.load(job.main, **{**job.options, **options})
        scene.extras[SOURCE] = _source_record(job.main)
        family = retromesh.detect(job.main).family
        if family in KEEP_WRITTEN:
            restore_editor.keep_written(scene, ids=KEEP_WRITTEN[family])
        # the GLB is temporary: the images must travel inside it
        retromesh.save(scene, glb, embed_images=True)
    return _warned(caught)


def convert_glb(glb: str | os.PathLike, target: str | os.PathLike,
                **save_options: Any) -> tuple[list[Path], list[str]]:
    """Convert the GLB Blender wrote to ``target`` (format from its extension) and its
    companions; returns (paths written, LossWarnings' texts)."""
    import retromesh
    decode_extras(glb)
    imported = _imported_from(glb)
    original = _original(imported, Path(target))
    if original is not None:
        save_options.setdefault("original", original)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = retromesh.convert(glb, target, save_options=save_options)
    if imported is not None:
        images_as_read(written, Path(imported["path"]).parent)
    return written, _warned(caught)


def images_as_read(written: list[Path], folder: Path) -> list[Path]:
    """Each image file in ``written`` whose pixels are those of the file of its name the model
    was read with (found from ``folder`` as when reading) given that file's bytes: Blender
    saves every image again its own way (another PNG encoding), so an unedited texture would
    otherwise come back changed. Returns the images put back."""
    from ..fileio import atomic_write
    from ..textures import TextureFinder, image_mime
    finder, out = TextureFinder(folder), []
    for path in written:
        try:
            now = path.read_bytes()
            if image_mime(now) is None:
                continue
            found = finder.find(path.name)
            was = found.read_bytes() if found is not None else None
        except OSError:
            continue
        if was is not None and was != now and _same_pixels(was, now):
            atomic_write(path, was)
            out.append(path)
    return out


def _same_pixels(a: bytes, b: bytes) -> bool:
    import io

    import numpy as np
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(io.BytesIO(a)) as ia, Image.open(io.BytesIO(b)) as ib:
            return ia.size == ib.size and np.array_equal(np.asarray(ia.convert("RGBA")),
                                                         np.asarray(ib.convert("RGBA")))
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError):
        return False


# Blender stores floats its own way (key frames in bone space, UVs flipped twice...), so what
# comes back is a hair off what retromesh wrote. The GLB made at import names the main file and
# its SHA-256 in the scene's extras (SOURCE); at export, when the target is of that file's
# format, the file is still there and unchanged, and the writer takes an ``original`` option,
# its bytes are passed on: the writer keeps the file's bits for every value within its stated
# tolerance (docs/lossless.md).
#: scene extras key: the file an imported model was read from, and its SHA-256
SOURCE = "retromesh_source_file"
#: files larger than this are not read again at export
_ORIGINAL_MAX = 256 << 20


def _source_record(path: Path) -> dict[str, str]:
    import hashlib
    p = Path(path).resolve()
    try:
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.stat().st_size <= _ORIGINAL_MAX \
            else ""
    except OSError:
        digest = ""
    return {"path": str(p), "sha256": digest}


def _original(rec: dict[str, Any] | None, target: Path) -> bytes | None:
    """The bytes of the imported file its :data:`SOURCE` record ``rec`` names (see above),
    or None."""
    if rec is None or not (isinstance(rec.get("sha256"), str) and rec["sha256"]):
        return None
    return _original_bytes(Path(rec["path"]), target, rec["sha256"])


def _imported_from(glb: str | os.PathLike) -> dict[str, Any] | None:
    """The :data:`SOURCE` record of the GLB's first scene (a path at least), or None."""
    from ..errors import RetromeshError
    try:
        doc, _ = _read_glb(Path(glb))
    except (OSError, ValueError, RetromeshError):
        return None
    scenes = doc.get("scenes") or [{}]
    extras = scenes[0].get("extras") if isinstance(scenes[0], dict) else None
    rec = extras.get(SOURCE) if isinstance(extras, dict) else None
    return rec if isinstance(rec, dict) and isinstance(rec.get("path"), str) and rec["path"] \
        else None


def _original_bytes(path: Path, target: Path, sha256: str) -> bytes | None:
    import hashlib
    from inspect import signature

    from .. import registry
    from ..errors import RetromeshError
    try:
        fmt = registry.target_format(target)
        if fmt.from_scene is None or "original" not in signature(fmt.from_scene).parameters \
                or registry.target_format(path).name != fmt.name:
            return None
        if not path.is_file() or path.stat().st_size > _ORIGINAL_MAX:
            return None
        data = path.read_bytes()
    except (OSError, RetromeshError, ValueError):
        return None
    return data if hashlib.sha256(data).hexdigest() == sha256 else None


def temp_glb(prefix: str = "retromesh-") -> tuple[tempfile.TemporaryDirectory, Path]:
    """A temporary folder and the GLB path inside it (clean the folder up when done)."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    return tmp, Path(tmp.name) / "scene.glb"
