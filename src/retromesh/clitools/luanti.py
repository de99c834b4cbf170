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

glTF — refused: ``extensionsRequired``, an interpolation other than STEP/LINEAR (CUBICSPLINE),
morph-target animation (``weights`` channels), 65535 or more vertices in a primitive (16-bit
indices). Ignored: images (the textures come from the mod's ``textures =``, by index), every
animation but the first before Luanti 5.17, every UV set but the first, negative weights. Only
triangle lists are drawn. Weights that do not sum to 1 are rescaled by Luanti; retromesh's
Scene normalises them on reading, so this check (which works on the JSON and the Scene)
does not see raw accessor values, and every GLB retromesh writes has them normalised.
"""
from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from ..errors import LossWarning
from ..findings import Finding, error, warning

__all__ = ["check_for_luanti", "convert_for_luanti", "prepare_scene", "strip_images"]

MAX_VERTICES = 65535
MAX_BRUSH_TEXTURES = 4


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
                        ids = np.unique(t.triangles.reshape(-1))
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
    if data[:4] == b"glTF":
        length = struct.unpack_from("<I", data, 12)[0]
        return json.loads(data[20:20 + length])
    return json.loads(data)


def _gltf_problems(gltf: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    if gltf.get("extensionsRequired"):
        out.append(error("luanti.extensions_required",
            f"extensionsRequired {gltf['extensionsRequired']} (Luanti supports "
                   "none)"))
    accessors = gltf.get("accessors", [])
    for mi, mesh in enumerate(gltf.get("meshes", [])):
        for pi, prim in enumerate(mesh.get("primitives", [])):
            where = f"mesh {mesh.get('name') or mi} primitive {pi}"
            if prim.get("mode", 4) != 4:
                out.append(error("luanti.mode", f"{where}: mode {prim['mode']} (only triangle lists)"))
            if prim.get("targets"):
                out.append(error("luanti.morph_targets", f"{where}: morph targets (not supported)"))
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
    if len(anims) > 1:
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


#: the format families Luanti's model loaders read
LUANTI_FAMILIES = ("Blitz3D", "glTF 2.0")


def luanti_reads(path: Path) -> bool:
    """Luanti's loaders read files of ``path``'s extension (B3D, glTF)."""
    return any(f.family in LUANTI_FAMILIES for f in registry.claiming(path.suffix))


def check_for_luanti(fmt: Any, doc: Any, data: bytes) -> list[Finding]:
    """What Luanti refuses or misreads (errors) and loads otherwise than meant (warnings)."""
    if fmt.family == "Blitz3D":
        return _b3d_problems(doc)
    if fmt.family == "glTF 2.0":
        try:
            return _gltf_problems(_gltf_json(bytes(data)))
        except (ValueError, struct.error) as exc:
            return [error("luanti.json", f"the glTF JSON does not parse ({exc})")]
    return [warning("luanti.format", f"Luanti loads .b3d, .glb/.gltf, .obj and .x, not "
                    f".{fmt.name}: convert it with --preset luanti")]


# -- convert --preset luanti ----------------------------------------------------------------

def prepare_scene(scene: Any) -> Any:
    """Bring a Scene within Luanti's glTF rules (warns with LossWarning for each change)."""
    if len(scene.animations) > 1:
        dropped = [a.name for a in scene.animations[1:]]
        warnings.warn(f"luanti: kept the first animation {scene.animations[0].name!r}, dropped "
                      f"{len(dropped)} ({', '.join(dropped[:3])}{'...' if len(dropped) > 3 else ''}):"
                      " Luanti before 5.17 plays only the first", LossWarning, stacklevel=2)
        del scene.animations[1:]
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


def strip_images(path: Path) -> None:
    """Remove the images of a written .glb/.gltf (Luanti takes textures from the mod; the
    texture indices stay, as Luanti maps them to the entity's ``textures``)."""
    from ..fileio import atomic_write, written_file
    data = written_file(path).read_bytes()
    binary = data[:4] == b"glTF"
    if binary:
        jlen = struct.unpack_from("<I", data, 12)[0]
        gltf = json.loads(data[20:20 + jlen])
        rest = data[20 + jlen:]
    else:
        gltf = json.loads(data)
    if not gltf.get("images"):
        return
    del gltf["images"]
    for t in gltf.get("textures", []):
        t.pop("source", None)
    text = json.dumps(gltf, separators=(",", ":")).encode("utf-8")
    if binary:
        text += b" " * (-len(text) % 4)
        body = struct.pack("<I4s", len(text), b"JSON") + text + rest
        out = struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body
    else:
        out = text
    atomic_write(path, out)


def convert_for_luanti(source: Path, target: Path, format: str | None,
                       load_options: dict[str, Any], save_options: dict[str, Any]) -> list[Path]:
    """``convert --preset luanti``: a .glb/.gltf within Luanti's rules (or a plain .b3d)."""
    import retromesh
    if not any(f.family == "glTF 2.0" for f in registry.claiming(target.suffix)):
        return retromesh.convert(source, target, format=format, save_options=save_options,
                                 **load_options)
    scene = prepare_scene(retromesh.load(source, format=format, **load_options))
    written = retromesh.save(scene, target, **save_options)
    strip_images(target)
    return written
