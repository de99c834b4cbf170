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

from ..batch import companions as companions_beside
from ..gltf.container import pack, unpack
from ..records import record

__all__ = ["Job", "group_files", "load_to_glb", "names_a_format", "convert_glb", "IMPORT_EXTENSIONS",
           "EXPORT_EXTENSIONS", "encode_extras", "decode_extras", "JSON_MARK", "files_record",
           "FILES_PROPERTY", "encode_extras_value", "decode_extras_value", "snap_noise",
           "merge_mesh_joints"]

# role of each extension: main files in order of precedence, then companions
_MAIN_ORDER = ("xml", "msh", "cms", "phxbn", "vxl", "vox", "b3d", "abc", "solid", "glb", "gltf", "fzx",
               "skl", "obj", "anm", "ani")
# companion extension -> option name, per main extension
_COMPANIONS = {
    "msh": {"skl": "skeleton", "ani": "animations"},
    "skl": {"msh": "mesh", "ani": "animations"},
    "ani": {"skl": "skeleton", "msh": "mesh"},
    "phxbn": {"obj": "mesh", "anm": "animations"},
    "anm": {"phxbn": "skeleton", "obj": "mesh"},
    "vxl": {"hva": "hva"},
    "fzx": {"obj": "mesh"},
    "xml": {"anm": "animations"},       # an Overgrowth descriptor finds its own files
}
_LISTS = {"animations"}
# companions looked for beside the main file: option -> name patterns ({stem})
_BESIDE = {
    "msh": {"skeleton": ["{stem}.skl"], "animations": ["{stem}.ani", "{stem}_*.ani"]},
    "skl": {"mesh": ["{stem}.msh"], "animations": ["{stem}.ani", "{stem}_*.ani"]},
    "phxbn": {"mesh": ["{stem}.obj"], "animations": ["{stem}.anm", "{stem}_*.anm"]},
}

# picked with a model, these are read from beside it by the formats themselves (materials, images)
_PASSIVE = {"txt", "png", "jpg", "jpeg", "bmp", "tga", "dds", "pcx"}

IMPORT_EXTENSIONS = ("b3d", "solid", "phxbn", "anm", "obj", "fzx", "abc", "msh", "cms", "skl",
                     "ani", "vxl", "hva", "vox", "xml")
EXPORT_EXTENSIONS = ("b3d", "solid", "phxbn", "anm", "fzx", "abc", "msh", "vxl", "vox")


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
    import fnmatch
    want = pattern.format(stem=main.stem).lower()
    try:
        return sorted(p for p in main.parent.iterdir()
                      if p.is_file() and fnmatch.fnmatchcase(p.name.lower(), want) and p != main)
    except OSError:
        return []


def group_files(paths: Iterable[str | os.PathLike], *, find_beside: bool = True) -> list[Job]:
    """Split the picked files into conversions (see the module docstring)."""
    files = []
    for p in paths:
        p = Path(p)
        if p not in files:
            files.append(p)
    left = list(files)
    jobs: list[Job] = []
    for main_ext in _MAIN_ORDER:
        for main in [p for p in left if _ext(p) == main_ext]:
            if main not in left:
                continue
            left.remove(main)
            job = Job(main)
            roles = _COMPANIONS.get(main_ext, {})
            for comp in [p for p in left if _ext(p) in roles]:
                option = roles[_ext(comp)]
                if option in _LISTS:
                    job.options.setdefault(option, []).append(comp)
                elif option not in job.options or comp.stem.lower() == main.stem.lower():
                    if option in job.options:
                        left.append(job.options[option])
                    job.options[option] = comp
                else:
                    continue
                left.remove(comp)
            if find_beside:
                for option, patterns in _BESIDE.get(main_ext, {}).items():
                    if option in job.options:
                        continue
                    found = [f for pat in patterns for f in _beside(main, pat)]
                    if not found and option == "animations":
                        # animations of any name beside the only model of its folder (an
                        # exported walk.anm keeps its name), as convert and a folder find them
                        found = companions_beside(main).get("animations", [])
                    if found:
                        job.options[option] = found if option in _LISTS else found[0]
            jobs.append(job)
    lugaru, left = _lugaru_job(left)
    jobs += lugaru
    if jobs:
        left = [p for p in left if _ext(p) not in _PASSIVE]
    jobs += [Job(p) for p in left]     # anything else: let retromesh say what it is
    return jobs


def _lugaru_job(left: list[Path]) -> tuple[list[Job], list[Path]]:
    """Lugaru keeps skeletons and animations without an extension in ``Skeleton/`` and
    ``Animations/``: animations picked together are one character (its skeleton found by
    the format, or the picked skeleton)."""
    anims = [p for p in left if not p.suffix and p.parent.name.lower() == "animations"]
    if not anims:
        return [], left
    skels = [p for p in left if not p.suffix and p.parent.name.lower() == "skeleton"]
    main, rest = (skels[0], anims) if skels else (anims[0], anims[1:])
    job = Job(main, {"animations": rest} if rest else {})
    return [job], [p for p in left if p != main and p not in anims]


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


# Blender's exporter leaves out every texture whose image it could not load, so a texture that
# was not found beside the model would vanish from the file written back. Each material keeps
# the references to such images in its extras (key MISSING_IMAGES) and they are put back into
# the GLB Blender writes, unless the slot holds a texture by then (one assigned in Blender).
MISSING_IMAGES = "retromesh_missing_images"
_SLOTS = (("pbrMetallicRoughness", "baseColorTexture"), ("pbrMetallicRoughness",
          "metallicRoughnessTexture"), (None, "normalTexture"), (None, "occlusionTexture"),
          (None, "emissiveTexture"))


def _slot(material: dict, group: str | None, name: str, create: bool = False) -> dict:
    holder = material
    if group:
        if group not in material and create:
            material[group] = {}
        holder = material.get(group, {})
    return holder


def _keep_missing_images(doc: dict) -> None:
    textures, images = doc.get("textures", []), doc.get("images", [])
    samplers = doc.get("samplers", [])
    for mat in doc.get("materials", []):
        kept = {}
        for group, name in _SLOTS:
            info = _slot(mat, group, name).get(name)
            if not isinstance(info, dict) or not 0 <= info.get("index", -1) < len(textures):
                continue
            tex = textures[info["index"]]
            src = tex.get("source")
            if not isinstance(src, int) or not 0 <= src < len(images) or "uri" not in images[src]:
                continue                 # an image inside the GLB: Blender keeps it
            sampler = tex.get("sampler")
            kept[f"{group or ''}/{name}"] = {
                "info": {k: v for k, v in info.items() if k != "index"},
                "texture": {k: v for k, v in tex.items() if k not in ("source", "sampler")},
                "image": images[src],
                "sampler": samplers[sampler] if isinstance(sampler, int)
                and 0 <= sampler < len(samplers) else None}
        if kept:
            mat.setdefault("extras", {})[MISSING_IMAGES] = kept


def _restore_missing_images(doc: dict) -> None:
    for mat in doc.get("materials", []):
        extras = mat.get("extras")
        if not isinstance(extras, dict) or not isinstance(extras.get(MISSING_IMAGES), dict):
            continue
        kept = extras.pop(MISSING_IMAGES)
        if not extras:
            del mat["extras"]
        for key, entry in kept.items():
            group, _, name = key.partition("/")
            holder = _slot(mat, group or None, name, create=True)
            if name in holder or not isinstance(entry, dict) or "image" not in entry:
                continue
            doc.setdefault("images", []).append(entry["image"])
            tex = dict(entry.get("texture") or {}, source=len(doc["images"]) - 1)
            if entry.get("sampler") is not None:
                doc.setdefault("samplers", []).append(entry["sampler"])
                tex["sampler"] = len(doc["samplers"]) - 1
            doc.setdefault("textures", []).append(tex)
            holder[name] = dict(entry.get("info") or {}, index=len(doc["textures"]) - 1)


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
    _keep_missing_images(doc)
    _mark_mesh_joints(doc)
    _walk_extras(doc, encode_extras_value)
    _write_glb(Path(glb), doc, rest)
    return {a.get("name", f"animation_{i}"): a["extras"]
            for i, a in enumerate(doc.get("animations", [])) if isinstance(a.get("extras"), dict)}


def decode_extras(glb: str | os.PathLike) -> None:
    """Undo :func:`encode_extras` in a GLB Blender wrote."""
    doc, rest = _read_glb(Path(glb))
    _walk_extras(doc, decode_extras_value)
    _lift_files_record(doc)
    _restore_missing_images(doc)
    snap_noise(doc)
    merge_mesh_joints(doc)
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


def load_to_glb(job: Job, glb: str | os.PathLike, **options: Any) -> list[str]:
    """Read ``job`` with retromesh and write it as ``glb``; returns the LossWarnings' texts.
    ``options`` the main file's format does not take (``fps`` for a B3D...) are left out."""
    import retromesh
    accepted = retromesh.detect(job.main).scene_options
    # (``mods``: a model in a Luanti mod dressed as the mod shows it; every format takes it)
    options = {k: v for k, v in options.items() if k in accepted or k == "mods"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scene = retromesh.load(job.main, **{**job.options, **options})
        # the GLB is temporary: the images must travel inside it
        retromesh.save(scene, glb, embed_images=True)
    return _warned(caught)


def convert_glb(glb: str | os.PathLike, target: str | os.PathLike,
                **save_options: Any) -> tuple[list[Path], list[str]]:
    """Convert the GLB Blender wrote to ``target`` (format from its extension) and its
    companions; returns (paths written, LossWarnings' texts)."""
    import retromesh
    decode_extras(glb)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = retromesh.convert(glb, target, save_options=save_options)
    return written, _warned(caught)


def temp_glb(prefix: str = "retromesh-") -> tuple[tempfile.TemporaryDirectory, Path]:
    """A temporary folder and the GLB path inside it (clean the folder up when done)."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    return tmp, Path(tmp.name) / "scene.glb"
