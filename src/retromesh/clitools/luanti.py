"""What Luanti (Minetest) loads: ``check --luanti`` and ``convert --preset luanti``.

Rules read from Luanti's loaders (``irr/src/CB3DMeshFileLoader.cpp`` and
``irr/src/CGLTFMeshFileLoader.cpp`` of luanti-org/luanti; Irrlicht 1.8 for older releases):

B3D — the loader trusts the file: a chunk size past its parent makes it read garbage, hang or
allocate gigabytes (retromesh refuses those files before this check runs), and it fails on
``tex_coord_sets >= 3`` or ``tex_coord_set_size >= 4`` ("too big"), a brush id or vertex id out
of range ("Illegal brush ID" / "Illegal vertex index"). It reads a chunk header out of the few
bytes left at the end of a parent (a misread); clamps key frames below 1 to 1; ignores weights
<= 0 (so a bone whose weights are all 0 does not deform), texture ids past the 4th of a brush,
and links a vertex used by two brushes to one of them only (breaks animation); Irrlicht 1.8
indexes a mesh buffer with 16 bits (at most 65535 vertices).

glTF — refused (``createMesh`` logs an error and returns no mesh: a clean refusal, no crash):
an empty or malformed file, ``extensionsRequired``, a buffer referred to by a URI other than a
base64 ``data:application/octet-stream`` / ``data:application/gltf-buffer`` one (tiniergltf
resolves no files), no ``buffers``/``bufferViews``/``accessors``/``nodes``, an interpolation
other than STEP/LINEAR (CUBICSPLINE), morph-target animation (``weights`` channels), 65535 or
more vertices in a primitive (16-bit indices). Ignored: images (the textures come from the
mod's ``textures =``, by texture index), morph targets themselves, every animation but the
first before Luanti 5.17, every UV set but the first, negative weights. A primitive that is not
a triangle list: 5.10-5.16 draw its indices as triangles, 5.17 skips it with a warning.
Weights that do not sum to 1 are rescaled by Luanti; retromesh's
Scene normalises them on reading, so this check (which works on the JSON and the Scene)
does not see raw accessor values, and every GLB retromesh writes has them normalised.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from ..arrays import distinct
from ..errors import FormatError, LossWarning
from ..findings import Finding, error, warning
from ..gltf.container import MAGIC, pack, unpack

__all__ = ["check_for_luanti", "convert_for_luanti", "prepare_scene", "strip_images", "mod_findings",
           "unreadable_note"]

MAX_VERTICES = 65535
#: the buffer URIs tiniergltf (Luanti's glTF parser) decodes; any other URI is refused
_BUFFER_DATA_URIS = ("data:application/octet-stream;base64,", "data:application/gltf-buffer;base64,")

MAX_BRUSH_TEXTURES = 4


_SEEN_MISSING: set[str] = set()     # (a registration's missing model: said once per run)


def mod_findings(path: Path, scene: Any, mods: dict[str, Any]) -> list[Finding]:
    """What the registrations of the mod ``path`` lies in get wrong (warnings): a model no mod
    ships, a texture not found, a clip beyond the model's frames; a failing Lua."""
    from ..luanti.scene import dress
    problems: list[tuple[str, str]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        dress(scene, path, problems=problems, **mods)
    out = []
    for rule, message in problems:
        if rule == "luanti.missing_model":
            if message in _SEEN_MISSING:
                continue
            _SEEN_MISSING.add(message)
        out.append(warning(rule, message))
    return out


def _b3d_problems(doc: Any) -> list[Finding]:
    from ..formats.b3d import Bone, Keys, MeshChunk
    out: list[Finding] = []
    if doc.tail:
        out.append(error("luanti.trailing_bytes",
            f"{len(doc.tail)} bytes at the end of BB3D too short for a chunk "
                   "(read as a chunk header: misread)"))
    for bi, b in enumerate(doc.brushes):
        if sum(t != -1 for t in b.texture_ids[MAX_BRUSH_TEXTURES:]):
            out.append(warning("luanti.brush_textures", f"brush {bi} uses more than {MAX_BRUSH_TEXTURES} "
                       "textures (the rest are ignored)"))
    zero: list[str] = []
    for node, _ in doc.walk():
        label = node.name.decode("latin-1")
        if node.tail:
            out.append(error("luanti.trailing_bytes",
                f"node {label!r}: {len(node.tail)} bytes too short for a chunk "
                       "at its end (misread)"))
        for c in node.children:
            if isinstance(c, MeshChunk):
                if c.tail:
                    out.append(error("luanti.trailing_bytes",
                        f"node {label!r}: MESH ends with {len(c.tail)} stray "
                               "bytes (misread)"))
                v = c.vrts
                if v is not None and not (0 <= v.tex_coord_sets < 3
                                          and 0 <= v.tex_coord_set_size < 4):
                    out.append(error("luanti.tex_coords", f"node {label!r}: VRTS tex_coord_sets "
                               f"{v.tex_coord_sets}, size {v.tex_coord_set_size} (Luanti "
                               "refuses >= 3 sets or size >= 4)"))
                if v is not None and len(v.vertices) > MAX_VERTICES:
                    out.append(warning("luanti.b3d_vertices", f"node {label!r}: {len(v.vertices)} vertices "
                               f"(Irrlicht 1.8 indexes at most {MAX_VERTICES} per buffer)"))
                if len(c.tris) > 1 and v is not None:
                    owner = np.full(len(v.vertices), -1)
                    shared = False
                    for ti, t in enumerate(c.tris):
                        ids = distinct(t.triangles.reshape(-1))
                        ids = ids[(ids >= 0) & (ids < len(owner))]
                        if np.any((owner[ids] != -1) & (owner[ids] != ti)):
                            shared = True
                        owner[ids] = ti
                    if shared and any(isinstance(x, Bone) for n, _ in doc.walk()
                                      for x in n.children):
                        out.append(warning("luanti.shared_vertices",
                            f"node {label!r}: vertices shared by two "
                                   "TRIS (brushes) follow one of them only when animated"))
            elif isinstance(c, Bone):
                w = c.weights["weight"]
                if len(w) and not np.any(w > 0):
                    zero.append(label)
            elif isinstance(c, Keys):
                if len(c.keys) and int(c.keys["frame"].min()) < 1:
                    out.append(warning("luanti.key_frames", f"node {label!r}: key frames below 1 "
                               "(clamped to 1)"))
    if zero:
        out.append(warning("luanti.zero_weights",
            f"{len(zero)} BONE(s) with weights all 0 ({', '.join(zero[:3])}"
                   f"{'...' if len(zero) > 3 else ''}): Luanti ignores weights <= 0, so they "
                   "deform nothing"))
    return out


def _gltf_json(data: bytes) -> dict[str, Any]:
    if data[:4] == MAGIC:
        return json.loads(unpack(data)[0])
    return json.loads(data)


def _gltf_problems(gltf: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    if gltf.get("extensionsRequired"):
        out.append(error("luanti.extensions_required",
            f"extensionsRequired {gltf['extensionsRequired']} (Luanti supports "
                   "none)"))
    missing = [k for k in ("buffers", "bufferViews", "accessors", "nodes") if k not in gltf]
    if missing:
        out.append(error("luanti.required_fields", f"no {', '.join(missing)} (Luanti refuses "
                         "a glTF without them)"))
    for bi, b in enumerate(gltf.get("buffers", [])):
        uri = b.get("uri") if isinstance(b, dict) else None
        if isinstance(uri, str) and not uri.startswith(_BUFFER_DATA_URIS):
            out.append(error("luanti.buffer_uri", f"buffer {bi} refers to {uri[:60]!r} (Luanti "
                             "reads no files a glTF refers to: embed the buffer as a base64 "
                             "data URI, or write a .glb)"))
    accessors = gltf.get("accessors", [])
    for mi, mesh in enumerate(gltf.get("meshes", [])):
        for pi, prim in enumerate(mesh.get("primitives", [])):
            where = f"mesh {mesh.get('name') or mi} primitive {pi}"
            if prim.get("mode", 4) != 4:
                out.append(warning("luanti.mode", f"{where}: mode {prim['mode']} is not a "
                                   "triangle list: Luanti 5.10-5.16 draw it as triangles, 5.17 "
                                   "skips it"))
            pos = prim.get("attributes", {}).get("POSITION")
            if pos is not None and pos < len(accessors) and \
                    accessors[pos].get("count", 0) >= MAX_VERTICES:
                out.append(error("luanti.vertices", f"{where}: {accessors[pos]['count']} vertices "
                           f"(Luanti refuses {MAX_VERTICES} or more)"))
            if "TEXCOORD_1" in prim.get("attributes", {}):
                out.append(warning("luanti.uv_sets", f"{where}: only the first UV set is used"))
    if gltf.get("images"):
        out.append(warning("luanti.images", "images are ignored (textures come from the mod, by "
                   "texture index)"))
    anims = gltf.get("animations", [])
    first_extras = anims[0].get("extras") if anims and isinstance(anims[0], dict) else None
    whole = isinstance(first_extras, dict) and "luanti_times" in first_extras
    if len(anims) > 1 and not whole:     # (--preset luanti: the first is the whole timeline)
        out.append(warning("luanti.animations", f"{len(anims)} animations; Luanti before 5.17 plays only "
                   "the first"))
    for ai, anim in enumerate(anims):
        samplers = anim.get("samplers", [])
        if any(s.get("interpolation", "LINEAR") not in ("LINEAR", "STEP") for s in samplers):
            out.append(error("luanti.interpolation",
                f"animation {anim.get('name') or ai}: CUBICSPLINE (only STEP "
                       "and LINEAR)"))
        if any(c.get("target", {}).get("path") == "weights" for c in anim.get("channels", [])):
            out.append(error("luanti.morph_weights", f"animation {anim.get('name') or ai}: morph weights "
                       "(not supported)"))
    return out


def unreadable_note(path: Path) -> str | None:
    """What Luanti does with a file of ``path``'s format that cannot be read: its B3D loader
    trusts the file, its glTF loader checks it."""
    families = {f.family for f in registry.claiming(path.suffix)}
    if "Blitz3D" in families:
        return " (Luanti's loader would misread it, hang or crash)"
    if "glTF 2.0" in families:
        return " (Luanti refuses it)"
    return None


def check_for_luanti(fmt: Any, doc: Any, data: bytes) -> list[Finding]:
    """What Luanti refuses or misreads (errors) and loads otherwise than meant (warnings)."""
    if fmt.family == "Blitz3D":
        return _b3d_problems(doc)
    if fmt.family == "glTF 2.0":
        try:
            return _gltf_problems(_gltf_json(bytes(data)))
        except (ValueError, FormatError) as exc:
            return [error("luanti.json", f"the glTF JSON does not parse ({exc}); Luanti "
                          "refuses it")]
    return [warning("luanti.format", f"Luanti loads .b3d, .glb/.gltf, .obj and .x, not "
                    f".{fmt.name}: convert it with --preset luanti")]


# -- convert --preset luanti ----------------------------------------------------------------

def prepare_scene(scene: Any) -> Any:
    """Bring a Scene within Luanti's glTF rules (warns with LossWarning for each change)."""
    _lua_frame_timeline(scene)
    _slot_textures(scene)
    for anim in scene.animations:
        for ch in anim.channels:
            if ch.interpolation == "CUBICSPLINE":
                ch.values = ch.key_values()
                ch.interpolation = "LINEAR"
    morph = 0
    for mesh in scene.meshes:
        keep = []
        for prim in mesh.primitives:
            if prim.mode != 4:
                continue
            if prim.targets:
                morph += 1
                prim.targets = []
            if prim.weights is not None:
                w = np.clip(np.asarray(prim.weights, np.float64), 0, None)
                total = w.sum(axis=1, keepdims=True)
                w = np.where(total > 0, w / np.where(total > 0, total, 1), w)
                prim.weights = w.astype(np.float32)
            if len(prim.positions) >= MAX_VERTICES:
                warnings.warn(f"luanti: mesh {mesh.name!r} has a primitive of "
                              f"{len(prim.positions)} vertices: Luanti refuses {MAX_VERTICES} "
                              "or more", LossWarning, stacklevel=2)
            keep.append(prim)
        if len(keep) != len(mesh.primitives):
            warnings.warn(f"luanti: mesh {mesh.name!r}: dropped {len(mesh.primitives) - len(keep)}"
                          " primitive(s) that are not triangle lists", LossWarning, stacklevel=2)
        mesh.primitives = keep
        mesh.weights = []
    for anim in scene.animations:
        anim.channels = [c for c in anim.channels if c.path != "weights"]
    if morph:
        warnings.warn(f"luanti: dropped the morph targets of {morph} primitive(s)", LossWarning,
                      stacklevel=2)
    return scene


def _lua_frame_timeline(scene: Any) -> None:
    """The whole timeline of a B3D (the first animation) keyed at its Lua frame numbers read
    as seconds, as Luanti reads a glTF's frames: a mod's ``set_animation({x = 35, y = 75},
    20)`` plays the same frames at the same speed after it switches its mesh to the GLB. The
    named clips after it are in real seconds (``play_animation(name)`` at speed 1, 5.17+)."""
    from ..luanti.scene import lua_frame_times
    if not scene.animations or "b3d_first_frame" not in scene.animations[0].extras:
        return
    timeline = scene.animations[0]
    zero, per_frame = lua_frame_times(timeline)
    for ch in timeline.channels:
        ch.times = ((ch.times.astype(np.float64) - zero) / per_frame).astype(np.float32)
    timeline.extras["luanti_times"] = "Lua frames"


def _slot_textures(scene: Any) -> None:
    """Texture ``k`` for mesh buffer ``k`` of a B3D (Luanti gives a glTF buffer the mod's
    texture its material's texture index names, a B3D buffer the one of its number): the mod's
    ``textures`` list keeps its meaning in the GLB. Buffers without a texture get a placeholder
    slot; material variants go (Luanti takes textures from the mod, not the file)."""
    import copy

    from ..luanti.scene import buffer_slots
    from ..scene import Texture, TextureRef
    if not any("b3d_tris" in m.extras for m in scene.meshes):
        return
    textures, materials = [], []
    slots = buffer_slots(scene)
    buffers = {(mi, pi) for mi, pi, _ in slots}
    for mesh_index, mesh in enumerate(scene.meshes):     # (primitives that are no mesh buffer)
        for prim_index, prim in enumerate(mesh.primitives):
            if (mesh_index, prim_index) not in buffers:
                prim.material = None
    for k, (mi, pi, _) in enumerate(slots):
        prim = scene.meshes[mi].primitives[pi]
        mat = scene.materials[prim.material] if prim.material is not None else None
        ref = mat.base_color_texture if mat is not None else None
        textures.append(copy.copy(scene.textures[ref.texture]) if ref is not None
                        else Texture(name=f"slot {k}"))
        if mat is not None:
            mat = copy.deepcopy(mat)
            if ref is not None:
                mat.base_color_texture = TextureRef(k, ref.texcoord, ref.offset, ref.scale,
                                                    ref.rotation)
            materials.append(mat)
            prim.material = len(materials) - 1
        prim.variants = []
    scene.textures, scene.materials, scene.variants = textures, materials, []


def strip_images(path: Path) -> None:
    """Remove the images of a written .glb/.gltf (Luanti takes textures from the mod; the
    texture indices stay, as Luanti maps them to the entity's ``textures``)."""
    from ..fileio import atomic_write, written_file
    data = written_file(path).read_bytes()
    binary = data[:4] == MAGIC
    if binary:
        json_text, bin_data = unpack(data, file=str(path))
        gltf = json.loads(json_text)
    else:
        gltf = json.loads(data)
    if not gltf.get("images"):
        return
    del gltf["images"]
    for t in gltf.get("textures", []):
        t.pop("source", None)
    text = json.dumps(gltf, separators=(",", ":")).encode("utf-8")
    atomic_write(path, pack(text, bin_data) if binary else text)


def convert_for_luanti(source: Path, target: Path, format: str | None,
                       load_options: dict[str, Any], save_options: dict[str, Any]) -> list[Path]:
    """``convert --preset luanti``: a .glb/.gltf within Luanti's rules (or a plain .b3d)."""
    import retromesh
    if not any(f.family == "glTF 2.0" for f in registry.claiming(target.suffix)):
        return retromesh.convert(source, target, format=format, save_options=save_options,
                                 **load_options)
    scene = prepare_scene(retromesh.load(source, format=format, **load_options))
    if target.suffix.lower() == ".gltf":        # Luanti reads no .bin (nor image files)
        save_options = {**save_options, "embed_buffer": True}
    written = retromesh.save(scene, target, **save_options)
    strip_images(target)
    return written
